//! Validation of moving links (docs/leo.md): `links.*.schedule` tables and the
//! `[constellation]` section, which computes the schedule of one `links.path` hop from the
//! geometry of a Walker shell or a TLE set.

use super::{Ctx, Keyword, LinkSpec, Topology};
use crate::net::schedule::{Change, Schedule};
use crate::orbit::route::{Attach, Mode, PiecewisePath, Route, Router};
use crate::orbit::tle::{TleSet, Utc};
use crate::orbit::walker::WalkerShell;
use crate::orbit::{Constellation, GroundStation};
use crate::scenario::raw::{RawConstellation, RawElevationRate, RawScheduleEntry, RawStation};
use crate::time::{Rate, SimTime};

/// Starlink's reconfiguration interval: satellites are reassigned to users every 15 s
/// (SpaceX, as measured by Tanveer et al., "Making Sense of Constellations", IMC 2023).
pub const DEFAULT_STEP: SimTime = SimTime::from_secs(15);
/// Starlink shell 1's minimum elevation, degrees (FCC filing SAT-MOD-20190830-00087).
pub const DEFAULT_MIN_ELEVATION_DEG: f64 = 25.0;
/// Most reconfiguration steps in one run (each costs one geometry sample and one Dijkstra).
pub const MAX_STEPS: u64 = 200_000;
/// Most satellites x steps in one run: the routes are computed while the scenario is
/// validated (by `sattcp run`, `--print-config`, `resolve` and every run of a sweep), at about
/// 0.2 us per satellite and step (Starlink shell 1, 1584 satellites: 0.3 ms a step), so this
/// bounds that to about a minute. Before it, a 100,000-satellite shell over 10^6 s at 15 s steps
/// was accepted and took half an hour to validate, without a word.
pub const MAX_SATELLITE_STEPS: u64 = 400_000_000;
/// Days from a TLE's epoch beyond which the run warns: two-line elements are fit to a few days
/// of tracking and are meant for propagation over days to weeks from their epoch (CelesTrak
/// replaces them daily); SGP4 gives a position for decades without an error, ever further off
/// (the ISS TLE of 2008 placed in 2024 differs by about 380 km between two SGP4 codes).
pub const STALE_TLE_DAYS: f64 = 30.0;

/// A constellation path as computed for a run: which hop it drives, the route of every
/// interval, and the ground stations' names (source, destination, relays).
#[derive(Clone, Debug)]
pub struct ConstellationRun {
    pub hop: usize,
    pub path: PiecewisePath,
    pub stations: Vec<String>,
    /// As validated, for the resolved scenario.
    pub phasing: Option<u32>,
    pub min_elevation_deg: f64,
    pub routing: &'static str,
    /// `constellation.attach`.
    pub attach: &'static str,
    pub offset: SimTime,
    /// `constellation.handover_outage`.
    pub handover_outage: SimTime,
    /// `constellation.rate_by_elevation`, if given.
    pub rates: Option<RateByElevation>,
    /// `constellation.handover_ber`, if given: the interval is lossy, not down.
    pub handover_ber: Option<f64>,
}

/// `constellation.rate_by_elevation`: (lowest elevation from which it applies, micro-degrees;
/// rate), in increasing elevation; the first entry at most the minimum elevation.
#[derive(Clone, Debug, PartialEq)]
pub struct RateByElevation(Vec<(u32, Rate)>);

impl RateByElevation {
    /// The rate of `route`: the last entry at or below its lowest leg's elevation. A leg at
    /// the minimum elevation may come out a micro-degree under it (radians to degrees, rounded
    /// down): it takes the first entry, which starts at or below the minimum.
    pub fn rate(&self, route: &Route) -> Rate {
        let i = self.0.partition_point(|&(from, _)| from <= route.lowest_elevation_udeg);
        self.0[i.saturating_sub(1)].1
    }
}

/// The resolved `[constellation]`: every key left out set to the value the run used.
pub fn fill_constellation(c: &mut RawConstellation, run: &ConstellationRun) {
    use crate::scenario::raw::Val;
    c.hop.get_or_insert(run.hop as i64);
    if let (Some(s), Some(f)) = (&mut c.shell, run.phasing) {
        s.phasing.get_or_insert(f as i64);
    }
    let names = &run.stations;
    let stations = [&mut c.from, &mut c.to].into_iter().flatten().chain(c.relays.iter_mut().flatten());
    for (s, name) in stations.zip(names) {
        s.name.get_or_insert_with(|| name.clone());
        s.alt_km.get_or_insert(0.0);
    }
    c.min_elevation_deg.get_or_insert(run.min_elevation_deg);
    c.step.get_or_insert_with(|| Val::Str(run.path.step.to_string()));
    c.routing.get_or_insert_with(|| run.routing.to_string());
    c.attach.get_or_insert_with(|| run.attach.to_string());
    c.offset.get_or_insert_with(|| Val::Str(run.offset.to_string()));
    c.handover_outage.get_or_insert_with(|| Val::Str(run.handover_outage.to_string()));
}

impl Ctx {
    /// `constellation.rate_by_elevation`, or None after reporting its problems.
    fn rate_by_elevation(&mut self, entries: &[RawElevationRate], min_elevation_deg: f64) -> Option<RateByElevation> {
        const KEY: &str = "constellation.rate_by_elevation";
        if entries.is_empty() {
            self.err(KEY, "must have at least one entry (or be left out for the hop's own rate)", "[]");
            return None;
        }
        let before = self.problems.len();
        let mut table: Vec<(u32, Rate)> = Vec::with_capacity(entries.len());
        let mut last: Option<f64> = None;
        for (i, e) in entries.iter().enumerate() {
            let p = format!("{KEY}.{i}");
            let rate = self.rate(&format!("{p}.rate"), e.rate.as_ref());
            let Some(el) = self.required(&format!("{p}.elevation_deg"), e.elevation_deg, 0.0, 90.0, " degrees") else { continue };
            match last {
                None if el > min_elevation_deg => {
                    self.err(
                        &format!("{p}.elevation_deg"),
                        format!("must be at most constellation.min_elevation_deg ({min_elevation_deg}): a route whose lowest leg is below it would have no rate"),
                        el.to_string(),
                    );
                }
                Some(prev) if el <= prev => {
                    self.err(&format!("{p}.elevation_deg"), format!("must be greater than the previous entry's ({prev})"), el.to_string());
                }
                _ => {}
            }
            last = Some(el);
            table.push(((el * 1e6).round() as u32, rate));
        }
        (self.problems.len() == before).then_some(RateByElevation(table))
    }

    /// A link's `schedule` list, or None after reporting its problems.
    pub(super) fn schedule(&mut self, path: &str, entries: &[RawScheduleEntry]) -> Option<Schedule> {
        let before = self.problems.len();
        let mut changes = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let p = format!("{path}.{i}");
            let at = match &e.at {
                Some(v) => self.duration(&format!("{p}.at"), Some(v), SimTime::ZERO),
                None => {
                    self.err(&format!("{p}.at"), "is required (the instant this entry starts, e.g. \"15s\")", "");
                    SimTime::ZERO
                }
            };
            let up = e.up.unwrap_or(true);
            let delay = match (&e.delay, up) {
                (Some(v), true) => Some(self.duration(&format!("{p}.delay"), Some(v), SimTime::ZERO)),
                (None, true) => {
                    self.err(&format!("{p}.delay"), "is required (or up = false for no path)", "");
                    None
                }
                (Some(v), false) => {
                    self.err(&format!("{p}.delay"), "must be absent when up = false", v.to_string());
                    None
                }
                (None, false) => None,
            };
            let rate = e.rate.as_ref().map(|v| self.rate(&format!("{p}.rate"), Some(v)));
            let ber = e.ber.as_ref().map(|v| self.float(&format!("{p}.ber"), Some(v), 0.0, 0.0, 1.0));
            changes.push(Change { at, delay, rate, ber });
        }
        if self.problems.len() > before || self.bad(path) {
            return None;
        }
        match Schedule::new(changes) {
            Ok(s) => Some(s),
            Err(rule) => {
                self.err(path, rule, "");
                None
            }
        }
    }

    fn station(&mut self, path: &str, s: Option<&RawStation>, default_name: &str) -> Option<GroundStation> {
        let Some(s) = s else {
            self.err(path, "is required (a table with lat and lon in degrees)", "");
            return None;
        };
        let lat = self.required(&format!("{path}.lat"), s.lat, -90.0, 90.0, " degrees");
        let lon = self.required(&format!("{path}.lon"), s.lon, -180.0, 180.0, " degrees");
        let alt = s.alt_km.unwrap_or(0.0);
        self.within(&format!("{path}.alt_km"), alt, 0.0, 100.0, " km");
        let name = s.name.clone().unwrap_or_else(|| default_name.to_string());
        Some(GroundStation { name, lat_deg: lat?, lon_deg: lon?, alt_km: alt })
    }

    fn shell(&mut self, r: &crate::scenario::raw::RawShell) -> Option<WalkerShell> {
        let before = self.problems.len();
        let altitude_km = self.required("constellation.shell.altitude_km", r.altitude_km, 100.0, 100_000.0, " km");
        let inclination_deg = self.required("constellation.shell.inclination_deg", r.inclination_deg, 0.0, 180.0, " degrees");
        let planes = self.required("constellation.shell.planes", r.planes, 1, 10_000, "").map(|n| n as u32);
        let per_plane = self.required("constellation.shell.per_plane", r.per_plane, 1, 10_000, "").map(|n| n as u32);
        // Judged against a valid number of planes only (else the default would be blamed).
        let phasing = match (r.phasing, planes) {
            (None, Some(planes)) => 1 % planes,
            (Some(f), Some(planes)) => {
                if !(0..planes as i64).contains(&f) {
                    self.err("constellation.shell.phasing", format!("must be between 0 and planes - 1 = {}", planes - 1), f.to_string());
                }
                f as u32
            }
            (_, None) => 0,
        };
        if let (Some(planes), Some(per_plane)) = (planes, per_plane) {
            if planes as u64 * per_plane as u64 > 100_000 {
                self.err("constellation.shell", "at most 100000 satellites", format!("{planes} x {per_plane}"));
            }
        }
        if self.problems.len() > before {
            return None;
        }
        Some(WalkerShell { altitude_km: altitude_km?, inclination_deg: inclination_deg?, planes: planes?, per_plane: per_plane?, phasing })
    }
}

/// Validates `[constellation]` and sets the schedule (and initial delay) of the hop it
/// drives, in both directions. Returns the path for the run's traces.
pub(super) fn constellation(c: &mut Ctx, raw: Option<&RawConstellation>, raw_hops: Option<&Vec<crate::scenario::raw::RawLink>>, topology: &mut Topology, duration: SimTime) -> Option<ConstellationRun> {
    let r = raw?;
    if c.bad("constellation") {
        return None;
    }
    let Topology::Path { hops } = topology else {
        c.err("constellation", "needs topology.kind = \"path\" (the constellation drives one hop of the path)", "");
        return None;
    };
    if hops.is_empty() {
        return None;
    }
    let hop = match r.hop {
        Some(h) if h >= 0 && (h as usize) < hops.len() => h as usize,
        Some(h) => {
            c.err("constellation.hop", format!("must name a hop of links.path, 0 to {}", hops.len() - 1), h.to_string());
            return None;
        }
        None if hops.len() == 1 => 0,
        None => {
            c.err("constellation.hop", "is required when links.path has several hops (the index of the hop through the constellation)", "");
            return None;
        }
    };
    if let Some(l) = raw_hops.and_then(|h| h.get(hop)) {
        if l.delay.is_some() {
            c.err(&format!("links.path.{hop}.delay"), "is set by [constellation]; remove it", l.delay.as_ref().map(|v| v.to_string()).unwrap_or_default());
        }
        if l.schedule.is_some() {
            c.err(&format!("links.path.{hop}.schedule"), "is set by [constellation]; remove it", "");
        }
    }
    let constellation = match (&r.shell, &r.tle) {
        (Some(s), None) => {
            for (key, present) in [("constellation.satellites", r.satellites.is_some()), ("constellation.start", r.start.is_some())] {
                if present {
                    c.err(key, "applies to TLE sets (constellation.tle)", "");
                }
            }
            Constellation::Walker(c.shell(s)?)
        }
        (None, Some(text)) => {
            let start = match r.start.as_deref().map(Utc::parse) {
                None => None,
                Some(Ok(t)) => Some(t),
                Some(Err(rule)) => {
                    c.err("constellation.start", rule, "");
                    return None;
                }
            };
            let mut set = match TleSet::parse(text, start) {
                Ok(s) => s,
                Err(rule) => {
                    c.err("constellation.tle", rule, "");
                    return None;
                }
            };
            if let Some(names) = &r.satellites {
                if names.is_empty() {
                    c.err("constellation.satellites", "must name at least one satellite of the TLE set (or be left out for all of them)", "[]");
                    return None;
                }
                if let Err(rule) = set.select(names) {
                    c.err("constellation.satellites", rule, "");
                    return None;
                }
            }
            Constellation::Tle(set)
        }
        (Some(_), Some(_)) => {
            c.err("constellation", "give either shell (a Walker shell) or tle (a TLE set), not both", "");
            return None;
        }
        (None, None) => {
            c.err("constellation", "needs shell (a Walker shell) or tle (a TLE set)", "");
            return None;
        }
    };
    let from = c.station("constellation.from", r.from.as_ref(), "from");
    let to = c.station("constellation.to", r.to.as_ref(), "to");
    let relays: Vec<Option<GroundStation>> = r.relays.iter().flatten().enumerate().map(|(i, s)| c.station(&format!("constellation.relays.{i}"), Some(s), &format!("relay{i}"))).collect();
    let min_el = r.min_elevation_deg.unwrap_or(DEFAULT_MIN_ELEVATION_DEG);
    if !(0.0..90.0).contains(&min_el) {
        c.err("constellation.min_elevation_deg", "must be in [0, 90) degrees", min_el.to_string());
    }
    let step = c.positive_duration("constellation.step", r.step.as_ref(), DEFAULT_STEP);
    if !c.bad("constellation.step") && duration.0 / step.0 >= MAX_STEPS && !c.bad("run.duration") {
        c.err("constellation.step", format!("too small for run.duration (at most {MAX_STEPS} steps)"), r.step.as_ref().map(|v| v.to_string()).unwrap_or_default());
    }
    let satellite_steps = (duration.0 / step.0 + 1).saturating_mul(constellation.len() as u64);
    if !c.bad("constellation.step") && !c.bad("run.duration") && duration.0 / step.0 < MAX_STEPS && satellite_steps > MAX_SATELLITE_STEPS {
        c.err(
            "constellation.step",
            format!("too small for run.duration with {} satellites: at most {MAX_SATELLITE_STEPS} satellites x steps (each step places every satellite and searches a route), got {satellite_steps}", constellation.len()),
            r.step.as_ref().map(|v| v.to_string()).unwrap_or_default(),
        );
    }
    let offset = c.duration("constellation.offset", r.offset.as_ref(), SimTime::ZERO);
    let outage = c.duration("constellation.handover_outage", r.handover_outage.as_ref(), SimTime::ZERO);
    if !c.bad("constellation.step") && !c.bad("constellation.handover_outage") && outage >= step {
        c.err(
            "constellation.handover_outage",
            format!("must be shorter than constellation.step ({step}): the link would never come up between handovers"),
            r.handover_outage.as_ref().map(|v| v.to_string()).unwrap_or_default(),
        );
    }
    let rates = match r.rate_by_elevation.as_deref() {
        Some(entries) if (0.0..90.0).contains(&min_el) => c.rate_by_elevation(entries, min_el),
        _ => None,
    };
    let handover_ber = r.handover_ber.as_ref().map(|v| c.float("constellation.handover_ber", Some(v), 0.0, 0.0, 1.0));
    if handover_ber.is_some() && outage == SimTime::ZERO && !c.bad("constellation.handover_outage") && !c.bad("constellation.handover_ber") {
        c.err("constellation.handover_ber", "has no effect without constellation.handover_outage > 0 (the interval it applies to)", r.handover_ber.as_ref().map(|v| v.to_string()).unwrap_or_default());
    }
    let default_mode = if matches!(constellation, Constellation::Walker(_)) { Mode::Isl } else { Mode::BentPipe };
    let mode = c.keyword("constellation.routing", r.routing.as_deref(), default_mode)?;
    let attach = c.keyword("constellation.attach", r.attach.as_deref(), Attach::LeastDelay)?;
    if c.bad("constellation") || c.bad(&format!("links.path.{hop}")) {
        return None;
    }
    // The route over the default of a run.duration already reported invalid: the hop's delay
    // would be a guess (and the problems found on that route, ones the user did not write).
    if c.bad("run.duration") {
        c.poison("constellation");
        return None;
    }
    let (from, to) = (from?, to?);
    let relays: Vec<GroundStation> = relays.into_iter().collect::<Option<_>>()?;
    let mut router = match Router::new(&constellation, &from, &to, &relays, min_el, mode) {
        Ok(r) => r.with_attach(attach),
        Err(rule) => {
            c.err("constellation.routing", rule, "\"isl\"");
            return None;
        }
    };
    let path = router.piecewise(step, duration, offset.as_secs_f64());
    // A satellite SGP4 cannot propagate (decayed, or decades from its TLE's epoch) would be
    // silently out of sight: say which, when, and why, at the key that chose the instant.
    if let Constellation::Tle(set) = &constellation {
        // The key that chose the instants the set is placed at.
        let key = if r.start.is_some() { "constellation.start" } else { "constellation.tle" };
        if let Some(f) = set.first_failure() {
            c.err(
                key,
                format!(
                    "SGP4 cannot propagate satellite {:?} {:.1} days from its TLE's epoch ({}; at {} s of the run's constellation time): choose a start near the TLEs' epochs, or leave the satellite out with constellation.satellites",
                    f.name, f.days_from_epoch, f.reason, f.t_s
                ),
                r.start.clone().unwrap_or_default(),
            );
            return None;
        }
        let first = offset.as_secs_f64();
        if let Some((name, days)) = set.farthest_from_epoch(first, first + duration.as_secs_f64()) {
            if days.abs() > STALE_TLE_DAYS {
                c.note(
                    key,
                    &format!(
                        "satellite {name:?} is placed {days:.1} days from its TLE's epoch: SGP4 places it without an error, but its positions drift from the real orbit as the time from the epoch grows (of the order of kilometres a day in LEO); use elements from within {STALE_TLE_DAYS} days of the run"
                    ),
                );
            }
        }
    }
    if path.segments.iter().all(|s| s.route.is_none()) {
        c.err("constellation", format!("{} and {} are never connected during the run (no satellite path above {min_el} degrees at any step)", from.name, to.name), "");
        return None;
    }
    if r.rate_by_elevation.is_some() && rates.is_none() {
        return None;
    }
    let handover = Handover { outage, ber: handover_ber.map(|b| (b, hops[hop].ber)) };
    let schedule = Schedule::new(schedule_changes(&path, handover, rates.as_ref())).expect("steps start at 0 and increase");
    debug_assert!(rates.is_none() || schedule.varies_rate_or_ber());
    let spec: &mut LinkSpec = &mut hops[hop];
    spec.delay = schedule.initial_delay();
    spec.schedule = Some(schedule);
    let stations = [from, to].into_iter().chain(relays).map(|s| s.name).collect();
    let phasing = match &constellation {
        Constellation::Walker(w) => Some(w.phasing),
        Constellation::Tle(_) => None,
    };
    let routing = mode.name();
    let attach = attach.name();
    Some(ConstellationRun { hop, path, stations, phasing, min_elevation_deg: min_el, routing, attach, offset, handover_outage: outage, rates, handover_ber })
}

/// What a handover costs: `outage` from each route change (`constellation.handover_outage`)
/// without a path, or, with `ber` = (`constellation.handover_ber`, the hop's own BER), on the
/// new route at that bit error rate and the hop's own after.
#[derive(Copy, Clone, Debug)]
struct Handover {
    outage: SimTime,
    ber: Option<(f64, f64)>,
}

/// The moving hop's schedule: each step's one-way delay (None: no path) and, with
/// `constellation.rate_by_elevation`, the rate of its route; after each handover
/// (`PiecewisePath::changes` between two connected steps: a route that comes back after a step
/// without one is no handover, the link was down already) the handover's interval first:
/// without a path, or lossy (shorter than a step).
fn schedule_changes(path: &PiecewisePath, handover: Handover, rates: Option<&RateByElevation>) -> Vec<Change> {
    let Handover { outage, ber } = handover;
    let handovers: Vec<SimTime> = if outage > SimTime::ZERO { path.changes().filter(|(_, old, new)| old.is_some() && new.is_some()).map(|(t, _, _)| t).collect() } else { Vec::new() };
    let mut changes = Vec::with_capacity(path.segments.len() + handovers.len());
    for s in &path.segments {
        let delay = s.route.as_ref().map(|r| r.one_way());
        let rate = rates.zip(s.route.as_ref()).map(|(t, r)| t.rate(r));
        if handovers.binary_search(&s.start).is_ok() {
            match ber {
                None => {
                    changes.push(Change { at: s.start, delay: None, rate, ber: None });
                    changes.push(Change { at: s.start + outage, delay, rate: None, ber: None });
                }
                Some((during, after)) => {
                    changes.push(Change { at: s.start, delay, rate, ber: Some(during) });
                    changes.push(Change { at: s.start + outage, delay, rate: None, ber: Some(after) });
                }
            }
        } else {
            changes.push(Change { at: s.start, delay, rate, ber: None });
        }
    }
    changes
}
