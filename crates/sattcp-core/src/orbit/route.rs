//! The path between two ground stations through a constellation, recomputed at each
//! reconfiguration step.
//!
//! At each step instant t_k = k x step the geometry is sampled once: a ground station can use
//! the satellites it sees at or above the minimum elevation, and the route is the path of
//! least propagation delay (Dijkstra, weights in integer nanoseconds, ties broken by the lower
//! node index, so the same inputs give the same route on every machine). The route and its
//! per-hop delays then hold until t_{k+1}: like Starlink, which reassigns satellites to users
//! every 15 s, the path and its delay are piecewise constant, with jumps at reconfigurations.
//! (Satellites move 7.6 km/s, so within a 15 s step the true slant ranges drift by up to
//! about 100 km, 0.3 ms one way; the model holds the value sampled at the step's start.)
//!
//! - Bent-pipe: ground -> one satellite -> ground, the satellite seen by both stations that
//!   minimises the sum of the two slant ranges; no path when none is seen by both.
//! - ISL: ground -> satellite -> inter-satellite links of the +Grid -> satellite -> ground,
//!   any satellite each station sees as first and last hop (a bent-pipe path is the special
//!   case with no ISL hop, and is taken when it is the shortest).
//!
//! Ground stations other than the two ends are relays only when given as such (`relays`, Handley
//! 2019): a relay takes a satellite hop down and sends it up again, in either mode.

use super::{deg, delay_ns, elevation, rad, Constellation, GroundStation, Vec3};
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What carries traffic between satellites.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No inter-satellite links: every satellite hop goes up from a ground station and
    /// straight back down to another (the end station or a relay).
    BentPipe,
    /// Inter-satellite links of the +Grid.
    Isl,
}

/// Which of the satellites a ground station sees it may use.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// Any at or above the minimum elevation: the route minimises the delay end to end.
    LeastDelay,
    /// Only the one highest in its sky (ties: the lower index), the shortest and least
    /// attenuated slant; the route minimises the delay between those satellites.
    HighestElevation,
}

/// A node of a route.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hop {
    /// Ground station: 0 the source, 1 the destination, 2.. the relays in the order given.
    Ground(u32),
    /// Satellite index in the constellation.
    Sat(u32),
}

/// One route: its nodes from ground station 0 to ground station 1, the one-way
/// propagation delay of each hop (one fewer than the nodes), and the lowest elevation at
/// which a ground station on it sees its satellite (up or down), in micro-degrees: the leg
/// with the longest slant for its height, which `constellation.rate_by_elevation` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub nodes: Vec<Hop>,
    pub hop_delays: Vec<SimTime>,
    pub lowest_elevation_udeg: u32,
}

impl Route {
    /// One-way propagation delay, ground to ground.
    pub fn one_way(&self) -> SimTime {
        SimTime(self.hop_delays.iter().map(|d| d.0).sum())
    }
    /// Round-trip propagation delay (the reverse path is the same route at the same instant).
    pub fn rtt(&self) -> SimTime {
        SimTime(2 * self.one_way().0)
    }
    /// The lowest elevation of the route's ground-satellite legs, degrees.
    pub fn lowest_elevation_deg(&self) -> f64 {
        self.lowest_elevation_udeg as f64 / 1e6
    }
    /// The satellites used, in order.
    pub fn satellites(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes.iter().filter_map(|h| match h {
            Hop::Sat(s) => Some(*s),
            Hop::Ground(_) => None,
        })
    }
}

/// The route in force from `start` until the next segment's start (None: no path, the
/// stations are cut off).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSegment {
    pub start: SimTime,
    pub route: Option<Route>,
}

/// A route per reconfiguration interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PiecewisePath {
    pub step: SimTime,
    pub segments: Vec<PathSegment>,
}

impl PiecewisePath {
    /// The segment in force at `t`.
    pub fn at(&self, t: SimTime) -> &PathSegment {
        let k = (t.0 / self.step.0.max(1)) as usize;
        &self.segments[k.min(self.segments.len() - 1)]
    }
    /// Instants at which the route (its nodes) changes, with the old and new routes.
    pub fn changes(&self) -> impl Iterator<Item = (SimTime, Option<&Route>, Option<&Route>)> + '_ {
        self.segments.windows(2).filter(|w| w[0].route.as_ref().map(|r| &r.nodes) != w[1].route.as_ref().map(|r| &r.nodes)).map(|w| (w[1].start, w[0].route.as_ref(), w[1].route.as_ref()))
    }
}

/// Routes between two ground stations through a constellation.
pub struct Router<'a> {
    constellation: &'a Constellation,
    /// Source, destination, then relays (ECEF).
    stations: Vec<Vec3>,
    min_elevation: f64,
    /// +Grid adjacency (ISL mode), compressed: neighbours of satellite i are
    /// `adj[adj_start[i]..adj_start[i + 1]]`, in increasing index order.
    adj_start: Vec<u32>,
    adj: Vec<u32>,
    positions: Vec<Vec3>,
    attach: Attach,
}

impl<'a> Router<'a> {
    /// The same router with ground stations attached by `attach` (`Attach::LeastDelay` unless
    /// set).
    pub fn with_attach(mut self, attach: Attach) -> Self {
        self.attach = attach;
        self
    }

    /// Routes from `a` to `b`, through ground `relays` (Handley 2019, "Using ground relays
    /// for low-latency wide-area routing in megaconstellations", HotNets) if any. Fails when
    /// ISL routing is asked of a constellation without a +Grid (a TLE set).
    pub fn new(constellation: &'a Constellation, a: &GroundStation, b: &GroundStation, relays: &[GroundStation], min_elevation_deg: f64, mode: Mode) -> Result<Self, String> {
        let n = constellation.len();
        let (mut adj_start, mut adj) = (vec![0u32; n + 1], Vec::new());
        if mode == Mode::Isl {
            let grid = constellation.grid().ok_or("ISL routing needs a +Grid, i.e. a Walker shell (a TLE set has no planes and slots)")?;
            let mut lists = vec![Vec::new(); n];
            for (x, y) in grid {
                lists[x as usize].push(y);
                lists[y as usize].push(x);
            }
            for (i, l) in lists.iter_mut().enumerate() {
                l.sort_unstable();
                l.dedup();
                adj_start[i + 1] = adj_start[i] + l.len() as u32;
                adj.extend_from_slice(l);
            }
        }
        let stations = [a, b].into_iter().chain(relays).map(GroundStation::ecef).collect();
        Ok(Router { constellation, stations, min_elevation: rad(min_elevation_deg), adj_start, adj, positions: Vec::with_capacity(n), attach: Attach::LeastDelay })
    }

    /// Satellites station `g` sees at or above the minimum elevation, with their slant-range
    /// delays, in satellite order.
    fn visible(&self, g: usize) -> Vec<(u32, u64)> {
        let gs = self.stations[g];
        self.positions
            .iter()
            .enumerate()
            .filter(|(_, p)| elevation(gs, **p) >= self.min_elevation)
            .map(|(i, p)| (i as u32, delay_ns(gs.dist(*p))))
            .collect()
    }

    /// The satellites station `g` may use under `attach`: every visible one, or the highest.
    fn usable(&self, g: usize) -> Vec<(u32, u64)> {
        let v = self.visible(g);
        match self.attach {
            Attach::LeastDelay => v,
            Attach::HighestElevation => {
                let gs = self.stations[g];
                let el = |s: u32| elevation(gs, self.positions[s as usize]);
                // The first of the highest: `max_by` keeps the last of equals, so compare reversed.
                v.iter().copied().min_by(|a, b| el(b.0).total_cmp(&el(a.0))).into_iter().collect()
            }
        }
    }

    /// Number of satellites station `g` sees at or above the minimum elevation at `t_s`.
    pub fn visible_count(&mut self, g: usize, t_s: f64) -> usize {
        self.constellation.positions_ecef(t_s, &mut self.positions);
        self.visible(g).len()
    }

    /// The least-delay route at `t_s` seconds after the constellation's epoch (Dijkstra).
    /// Graph nodes: satellites 0..n, then the stations (n: source, n + 1: destination,
    /// n + 2..: relays). Edges: station -- satellite when the station sees it at or above the
    /// minimum elevation (none into the source, none out of the destination), and the +Grid
    /// in ISL mode. Weights are integer nanoseconds; the heap pops (distance, node), so
    /// equal distances settle the lower index first, and a node keeps the first predecessor
    /// that reached its final distance: the same route on every machine.
    pub fn route_at(&mut self, t_s: f64) -> Option<Route> {
        self.constellation.positions_ecef(t_s, &mut self.positions);
        let n = self.positions.len();
        let k = self.stations.len();
        // (satellite, station, delay), sorted by satellite: who each satellite can go down to.
        let mut ups: Vec<Vec<(u32, u64)>> = Vec::with_capacity(k);
        let mut downs: Vec<(u32, u32, u64)> = Vec::new();
        for g in 0..k {
            let v = self.usable(g);
            if g != 0 {
                downs.extend(v.iter().map(|&(s, d)| (s, (n + g) as u32, d)));
            }
            ups.push(if g != 1 { v } else { Vec::new() });
        }
        downs.sort_unstable();
        let mut down_start = vec![0u32; n + 1];
        for &(s, _, _) in &downs {
            down_start[s as usize + 1] += 1;
        }
        for i in 0..n {
            down_start[i + 1] += down_start[i];
        }
        let (src, dst) = (n as u32, n as u32 + 1);
        let mut dist = vec![u64::MAX; n + k];
        let mut prev = vec![u32::MAX; n + k];
        let mut done = vec![false; n + k];
        let mut heap = BinaryHeap::new();
        dist[src as usize] = 0;
        heap.push(Reverse((0u64, src)));
        while let Some(Reverse((d, u))) = heap.pop() {
            let ui = u as usize;
            if done[ui] {
                continue;
            }
            done[ui] = true;
            if u == dst {
                break;
            }
            let mut relax = |v: u32, w: u64| {
                let nd = d + w;
                if nd < dist[v as usize] {
                    dist[v as usize] = nd;
                    prev[v as usize] = u;
                    heap.push(Reverse((nd, v)));
                }
            };
            if ui >= n {
                for &(s, w) in &ups[ui - n] {
                    relax(s, w);
                }
                continue;
            }
            for &v in &self.adj[self.adj_start[ui] as usize..self.adj_start[ui + 1] as usize] {
                relax(v, delay_ns(self.positions[ui].dist(self.positions[v as usize])));
            }
            for &(_, g, w) in &downs[down_start[ui] as usize..down_start[ui + 1] as usize] {
                relax(g, w);
            }
        }
        if dist[dst as usize] == u64::MAX {
            return None;
        }
        let mut rev = vec![dst];
        while *rev.last().expect("non-empty") != src {
            rev.push(prev[*rev.last().expect("non-empty") as usize]);
        }
        rev.reverse();
        let hop = |x: u32| if x >= n as u32 { Hop::Ground(x - n as u32) } else { Hop::Sat(x) };
        let hop_delays = rev.windows(2).map(|w| SimTime(dist[w[1] as usize] - dist[w[0] as usize])).collect();
        // Every route has a ground leg at each end; a leg's elevation is at least the minimum
        // (the station saw the satellite), micro-degrees rounded down.
        let lowest = rev
            .windows(2)
            .filter_map(|w| {
                let (g, s) = if w[0] >= n as u32 { (w[0], w[1]) } else { (w[1], w[0]) };
                (g >= n as u32 && s < n as u32).then(|| elevation(self.stations[g as usize - n], self.positions[s as usize]))
            })
            .fold(f64::INFINITY, f64::min);
        let lowest_elevation_udeg = (deg(lowest) * 1e6).floor().clamp(0.0, 90e6) as u32;
        Some(Route { nodes: rev.into_iter().map(hop).collect(), hop_delays, lowest_elevation_udeg })
    }

    /// The route of every reconfiguration interval [k step, (k+1) step) covering
    /// [0, duration], the geometry sampled at each interval's start; `offset_s` is the
    /// constellation time (seconds after its epoch) at simulated time 0.
    pub fn piecewise(&mut self, step: SimTime, duration: SimTime, offset_s: f64) -> PiecewisePath {
        assert!(step.0 > 0, "the reconfiguration step must be positive");
        let count = duration.0 / step.0 + 1;
        let segments = (0..count)
            .map(|k| {
                let start = SimTime(k * step.0);
                PathSegment { start, route: self.route_at(offset_s + start.as_secs_f64()) }
            })
            .collect();
        PiecewisePath { step, segments }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orbit::walker::WalkerShell;
    use crate::orbit::{slant_range_km, C_KM_S, EARTH_RADIUS_KM};

    const STARLINK_MIN_ELEVATION: f64 = 25.0; // FCC filing SAT-MOD-20190830-00087

    fn paris() -> GroundStation {
        GroundStation::new("Paris", 48.8566, 2.3522)
    }
    fn moscow() -> GroundStation {
        GroundStation::new("Moscow", 55.7558, 37.6173)
    }
    fn new_york() -> GroundStation {
        GroundStation::new("New York", 40.7128, -74.0060)
    }
    fn london() -> GroundStation {
        GroundStation::new("London", 51.5074, -0.1278)
    }

    /// Gateways between Paris and Moscow, roughly 400-600 km apart: Frankfurt, Berlin, Warsaw,
    /// Minsk, Smolensk.
    fn europe_relays() -> Vec<GroundStation> {
        vec![
            GroundStation::new("Frankfurt", 50.1109, 8.6821),
            GroundStation::new("Berlin", 52.5200, 13.4050),
            GroundStation::new("Warsaw", 52.2297, 21.0122),
            GroundStation::new("Minsk", 53.9006, 27.5590),
            GroundStation::new("Smolensk", 54.7818, 32.0401),
        ]
    }

    /// A one-satellite "constellation": a single equatorial plane with one satellite at
    /// longitude 0 at t = 0 (a Walker 0:1/1/0 shell).
    fn lone_satellite(alt_km: f64) -> Constellation {
        Constellation::Walker(WalkerShell { altitude_km: alt_km, inclination_deg: 0.0, planes: 1, per_plane: 1, phasing: 0 })
    }

    #[test]
    fn bent_pipe_rtt_at_zenith_is_4h_over_c() {
        // Both stations under the satellite (at the same point): RTT = 4 h / c = 7.3384 ms (2200 km / c).
        let c = lone_satellite(550.0);
        let g = GroundStation::new("g", 0.0, 0.0);
        let mut r = Router::new(&c, &g, &g, &[], STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
        let route = r.route_at(0.0).expect("overhead");
        assert_eq!(route.nodes, vec![Hop::Ground(0), Hop::Sat(0), Hop::Ground(1)]);
        let expect_ns = 4.0 * 550.0 / C_KM_S * 1e9;
        assert!((route.rtt().0 as f64 - expect_ns).abs() <= 4.0, "{:?}", route.rtt());
        assert_eq!(format!("{:.2}", route.rtt().as_secs_f64() * 1e3), "7.34");
    }

    #[test]
    fn bent_pipe_rtt_at_25_degrees_is_15_ms() {
        // Two stations on the equator, each seeing the satellite at exactly 25 degrees: their
        // Earth central angle to the sub-satellite point is lambda = 90 - 25 - asin(R cos 25 /
        // (R + h)) = 8.46 degrees. RTT = 4 d / c with d = slant_range(550 km, 25 deg) = 1123.4 km:
        // 14.99 ms.
        let (r_e, h, e) = (EARTH_RADIUS_KM, 550.0, rad(25.0));
        let lambda = crate::orbit::deg(std::f64::consts::FRAC_PI_2 - e - libm::asin(r_e * libm::cos(e) / (r_e + h)));
        let c = lone_satellite(h);
        let (a, b) = (GroundStation::new("w", 0.0, -lambda), GroundStation::new("e", 0.0, lambda));
        // A hair below 25 degrees so that rounding cannot hide the satellite.
        let mut r = Router::new(&c, &a, &b, &[], 25.0 - 1e-6, Mode::BentPipe).unwrap();
        let route = r.route_at(0.0).expect("both see it at 25 degrees");
        let d = slant_range_km(h, e);
        let expect_ms = 4.0 * d / C_KM_S * 1e3;
        let got_ms = route.rtt().as_secs_f64() * 1e3;
        assert!((got_ms - expect_ms).abs() < 1e-5, "{got_ms} vs {expect_ms}");
        assert!((got_ms - 15.0).abs() < 0.05, "{got_ms}");
        // One degree further apart and the satellite is below 25 degrees for both: no path.
        let (a, b) = (GroundStation::new("w", 0.0, -lambda - 1.0), GroundStation::new("e", 0.0, lambda + 1.0));
        let mut r = Router::new(&c, &a, &b, &[], 25.0, Mode::BentPipe).unwrap();
        assert_eq!(r.route_at(0.0), None);
    }

    #[test]
    fn visible_satellites_from_mid_latitudes() {
        // Starlink shell 1 alone (1584 satellites) above 25 degrees, averaged over one orbital
        // period sampled each 15 s, from 40, 45 and 50 N (one longitude: a 360/72 degree turn
        // of the shell is the same shell, so the longitude hardly matters; eight longitudes
        // gave the same means to 0.1). Measured (cargo test -p sattcp-core --lib
        // visible_satellites -- --nocapture): means 12.0, 18.2, 19.3; min 9, 16, 17; max 14,
        // 21, 21.
        // The published 30-50 is for the whole constellation (several shells); shell 1's
        // density peaks near its 53 degree inclination, so the count rises with latitude.
        let c = Constellation::Walker(WalkerShell::starlink_shell1());
        let period = WalkerShell::starlink_shell1().period_s();
        let steps = (period / 15.0) as usize;
        let mut means = Vec::new();
        for lat in [40.0, 45.0, 50.0] {
            let (mut sum, mut count, mut lo, mut hi) = (0usize, 0usize, usize::MAX, 0usize);
            for lon in [1.0] {
                let g = GroundStation::new("g", lat, lon);
                let mut r = Router::new(&c, &g, &g, &[], STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
                for k in 0..steps {
                    let n = r.visible_count(0, k as f64 * 15.0);
                    sum += n;
                    count += 1;
                    lo = lo.min(n);
                    hi = hi.max(n);
                }
            }
            let mean = sum as f64 / count as f64;
            println!("lat {lat}: mean {mean:.1}, min {lo}, max {hi}");
            assert!(lo >= 1, "always covered at {lat} N");
            means.push(mean);
        }
        assert!(means[0] < means[1] && means[1] < means[2], "{means:?}");
        assert!((10.0..=14.0).contains(&means[0]), "{means:?}");
        assert!((16.0..=20.5).contains(&means[1]), "{means:?}");
        assert!((17.0..=22.0).contains(&means[2]), "{means:?}");
    }

    #[test]
    fn paris_moscow_share_no_satellite_but_relays_connect_them() {
        // A satellite at 550 km is above 25 degrees within 8.46 degrees of Earth central angle
        // (940 km of ground) of its sub-satellite point, so two stations can share one only
        // if they are less than 1880 km apart. Paris-Moscow is 2486 km: a single bent pipe
        // never exists; ground relays (Handley 2019) connect them.
        let c = Constellation::Walker(WalkerShell::starlink_shell1());
        let mut alone = Router::new(&c, &paris(), &moscow(), &[], STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
        let mut relayed = Router::new(&c, &paris(), &moscow(), &europe_relays(), STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
        for k in 0..40 {
            let t = k as f64 * 15.0;
            assert_eq!(alone.route_at(t), None);
            let r = relayed.route_at(t).expect("relays connect Paris and Moscow");
            // Ground and satellites alternate: every satellite hop goes up and straight down.
            for (i, h) in r.nodes.iter().enumerate() {
                assert_eq!(matches!(h, Hop::Ground(_)), i % 2 == 0, "{r:?}");
            }
            assert!(r.satellites().count() >= 2);
        }
    }

    #[test]
    fn new_york_london_has_no_bent_pipe_even_with_north_atlantic_relays() {
        // Shell 1 covers latitudes up to 53 + 8.46 = 61.5 degrees at 25 degrees elevation; the
        // Atlantic leaves no relay site within 1880 km of the next: St John's to Galway is
        // 3200 km, and Reykjavik (64.1 N) is outside the shell's coverage.
        let c = Constellation::Walker(WalkerShell::starlink_shell1());
        let relays = [GroundStation::new("Halifax", 44.6488, -63.5752), GroundStation::new("St John's", 47.5615, -52.7126), GroundStation::new("Qaqortoq", 60.7184, -46.0356), GroundStation::new("Reykjavik", 64.1466, -21.9426), GroundStation::new("Galway", 53.2707, -9.0568)];
        let mut r = Router::new(&c, &new_york(), &london(), &relays, STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
        for k in 0..40 {
            assert_eq!(r.route_at(k as f64 * 15.0), None);
        }
    }

    #[test]
    fn rtt_is_piecewise_constant_with_jumps_at_reconfigurations() {
        let c = Constellation::Walker(WalkerShell::starlink_shell1());
        for (mode, relays) in [(Mode::BentPipe, europe_relays()), (Mode::Isl, vec![])] {
            let mut r = Router::new(&c, &paris(), &moscow(), &relays, STARLINK_MIN_ELEVATION, mode).unwrap();
            let step = SimTime::from_secs(15);
            let p = r.piecewise(step, SimTime::from_secs(300), 0.0);
            assert_eq!(p.segments.len(), 21);
            // Constant within a step: the segment at any instant of [15 s, 30 s) is the one
            // sampled at 15 s.
            for ms in [15_000, 15_001, 22_500, 29_999] {
                assert_eq!(p.at(SimTime::from_millis(ms)).start, step);
            }
            assert_eq!(p.at(SimTime::from_millis(30_000)).start, SimTime::from_secs(30));
            // The RTT jumps: consecutive segments differ, and the satellites change.
            let rtts: Vec<SimTime> = p.segments.iter().map(|s| s.route.as_ref().expect("Paris-Moscow connected").rtt()).collect();
            let jumps = rtts.windows(2).filter(|w| w[0] != w[1]).count();
            assert!(jumps >= 15, "{mode:?}: {jumps} jumps in 20 reconfigurations");
            assert!(p.changes().count() >= 3, "{mode:?}: the satellites change within 5 minutes");
            println!("{mode:?}: RTT ms {:?}", rtts.iter().map(|t| format!("{:.2}", t.as_secs_f64() * 1e3)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn isl_paths_are_at_least_the_great_circle_and_no_longer_than_bent_pipe() {
        // New York - London (5570 km) has no common satellite: bent-pipe is cut off, ISLs
        // connect. The ISL path can never beat light along the great circle at 550 km.
        let c = Constellation::Walker(WalkerShell::starlink_shell1());
        let mut bp = Router::new(&c, &new_york(), &london(), &[], STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
        let mut isl = Router::new(&c, &new_york(), &london(), &[], STARLINK_MIN_ELEVATION, Mode::Isl).unwrap();
        let gc_km = new_york().ecef().dist(london().ecef());
        for k in 0..20 {
            let t = k as f64 * 15.0;
            assert_eq!(bp.route_at(t), None);
            let r = isl.route_at(t).expect("ISLs connect New York and London");
            assert!(r.one_way().as_secs_f64() * C_KM_S > gc_km, "{r:?}");
            assert!(r.satellites().count() >= 3);
            // Hops: ground, satellites..., ground; delays positive.
            assert_eq!(r.nodes.first(), Some(&Hop::Ground(0)));
            assert_eq!(r.nodes.last(), Some(&Hop::Ground(1)));
            assert!(r.hop_delays.iter().all(|d| d.0 > 0));
        }
        // With the same relays, adding ISLs can only shorten the path.
        let mut bp = Router::new(&c, &paris(), &moscow(), &europe_relays(), STARLINK_MIN_ELEVATION, Mode::BentPipe).unwrap();
        let mut isl = Router::new(&c, &paris(), &moscow(), &europe_relays(), STARLINK_MIN_ELEVATION, Mode::Isl).unwrap();
        for k in 0..20 {
            let t = k as f64 * 15.0;
            assert!(isl.route_at(t).expect("connected").one_way() <= bp.route_at(t).expect("connected").one_way());
        }
    }

    #[test]
    fn routes_are_deterministic() {
        let c = Constellation::Walker(WalkerShell::starlink_shell1());
        let run = || Router::new(&c, &paris(), &moscow(), &[], STARLINK_MIN_ELEVATION, Mode::Isl).unwrap().piecewise(SimTime::from_secs(15), SimTime::from_secs(120), 0.0);
        assert_eq!(run(), run());
    }

    #[test]
    fn isl_needs_a_grid() {
        let text = include_str!("../../../../scenarios/tle/fixture.tle");
        let c = Constellation::Tle(crate::orbit::tle::TleSet::parse(text, None).unwrap());
        assert!(Router::new(&c, &paris(), &moscow(), &[], 25.0, Mode::Isl).is_err());
        assert!(Router::new(&c, &paris(), &moscow(), &[], 25.0, Mode::BentPipe).is_ok());
    }

    #[test]
    fn geo_bent_pipe_paris_moscow() {
        // The fixture's GEO-36E seen from Paris and Moscow: RTT = 2 x (38,600 + 39,000 km) / c,
        // about 0.518 s, and constant (the satellite is fixed in the sky).
        let text = include_str!("../../../../scenarios/tle/fixture.tle");
        let mut set = crate::orbit::tle::TleSet::parse(text, None).unwrap();
        set.select(&["GEO-36E".to_string()]).unwrap();
        let c = Constellation::Tle(set);
        let mut r = Router::new(&c, &paris(), &moscow(), &[], 10.0, Mode::BentPipe).unwrap();
        let p = r.piecewise(SimTime::from_secs(60), SimTime::from_secs(600), 0.0);
        let rtts: Vec<f64> = p.segments.iter().map(|s| s.route.as_ref().expect("GEO visible").rtt().as_secs_f64()).collect();
        assert!(rtts.iter().all(|&x| (0.50..0.53).contains(&x)), "{rtts:?}");
        let spread = rtts.iter().cloned().fold(f64::MIN, f64::max) - rtts.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 1e-4, "{spread}");
    }
}
