//! Moving links end to end: a path whose delay follows a schedule, and one whose delay follows
//! a constellation (docs/leo.md).

mod common;
use common::{run, scenario};
use sattcp_core::metrics::result::RunResult;
use sattcp_core::{SimTime, Simulation};

/// One 10 Mbps hop: 100 ms one way, 20 ms from 5 s, no path from 10 s to 11 s, 60 ms after.
/// Both directions follow the schedule. A 30 KB window stays under the bandwidth-delay
/// product (50 KB at 40 ms), so no queue builds and the RTT samples show the propagation.
const SCHEDULED: &str = r#"
    [run]
    duration = "30s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "10Mbps"
    queue = "200pkt"
    schedule = [
        { at = "0s", delay = "100ms" },
        { at = "5s", delay = "20ms" },
        { at = "10s", up = false },
        { at = "11s", delay = "60ms" },
    ]
    [switch]
    buffer = "200pkt"
    [tcp]
    flavor = "sack"
    mss = 1000
    window = 30000
    window_scale = 0
    [app]
    kind = "transfer"
    bytes = 5000000
    [trace]
    flows = [0]
    links = ["hop0"]
"#;

/// The smallest traced RTT sample taken in [from, to) seconds.
fn min_rtt(r: &RunResult, from: f64, to: f64) -> f64 {
    let tr = &r.traces["flow/0/rtt"];
    tr.t.iter().zip(&tr.v).filter(|(t, _)| (from..to).contains(*t)).map(|(_, v)| *v).fold(f64::INFINITY, f64::min)
}

#[test]
fn rtt_follows_the_schedule() {
    let r = run(SCHEDULED, &[]);
    // Propagation both ways plus one 1040-byte packet at 10 Mbps (0.832 ms) and a 40-byte
    // ACK (0.032 ms): the floor of the RTT samples in each interval.
    let tx = 0.000_832 + 0.000_032;
    for (from, to, prop) in [(0.0, 5.0, 0.200), (5.5, 10.0, 0.040), (12.0, 30.0, 0.120)] {
        let m = min_rtt(&r, from, to);
        assert!(m >= prop + tx - 1e-9 && m < prop + 0.005, "[{from}, {to}) s: min RTT {m}, propagation {prop}");
    }
    // The delay trace has the schedule's values; `up` shows the outage.
    let d = &r.traces["link/hop0/delay"].v;
    assert_eq!(d.len(), 3);
    assert!(d.iter().zip([0.1, 0.02, 0.06]).all(|(a, b)| (a - b).abs() < 1e-12), "{d:?}");
    assert_eq!(r.traces["link/hop0/up"].t, vec![0.0, 10.0, 11.0]);
    assert_eq!(r.traces["link/hop0/up"].v, vec![1.0, 0.0, 1.0]);
}

#[test]
fn a_delay_drop_reorders_and_an_outage_drops_yet_every_byte_arrives_once() {
    // A 1 MB window: the sender keeps the link busy, so packets leave just before and just
    // after the delay falls at 5 s.
    let sc = scenario(SCHEDULED, &[("tcp.window", "65535"), ("tcp.window_scale", "4"), ("app.bytes", "12000000")]);
    let mut sim = Simulation::new(&sc);
    sim.run();
    let fwd = sim.moving_stats(0).expect("hop0 moves").clone();
    // At 5 s the delay falls by 80 ms while a window is in flight: later packets overtake.
    assert!(fwd.reordered > 0, "{fwd:?}");
    // From 10 s to 11 s there is no path: what is sent then is lost.
    assert!(fwd.drops_no_route > 0, "{fwd:?}");
    let rev = sim.moving_stats(1).expect("hop0-rev moves").clone();
    assert!(rev.drops_no_route > 0);
    // TCP repairs both: the 12 MB transfer completes after the outage, in order.
    let r = sim.finish();
    let f = &r.flows[0];
    assert_eq!(f.delivered_bytes, 12_000_000);
    assert!(f.completed_at_s.is_some_and(|t| t > 11.0 && t < 30.0), "{:?}", f.completed_at_s);
    assert_eq!(r.links[0].drops_by_reason.get("no_route"), Some(&fwd.drops_no_route));
    // The result's link table carries the moving links' reordering (None on fixed links).
    assert_eq!(r.links[0].reordered, Some(fwd.reordered));
    assert_eq!(r.links[1].reordered, Some(rev.reordered));
}

#[test]
fn a_fixed_schedule_equals_a_fixed_link() {
    // One entry at 0 s: the same run as the plain link with that delay, packet for packet
    // (the digest covers every event's time and kind).
    let start = SCHEDULED.find("schedule = [").unwrap();
    let end = SCHEDULED.find("    [switch]").unwrap();
    let fixed = run(&format!("{}schedule = [{{ at = \"0s\", delay = \"100ms\" }}]\n{}", &SCHEDULED[..start], &SCHEDULED[end..]), &[]);
    let plain = run(&format!("{}delay = \"100ms\"\n{}", &SCHEDULED[..start], &SCHEDULED[end..]), &[]);
    assert!(plain.flows[0].delivered_bytes > 1_000_000);
    assert_eq!(fixed.flows[0].delivered_bytes, plain.flows[0].delivered_bytes);
    assert_eq!(fixed.digest, plain.digest);
    assert_eq!(fixed.events, plain.events);
    // A schedule of one delay never reorders; a fixed link has no such count.
    assert_eq!((fixed.links[0].reordered, plain.links[0].reordered), (Some(0), None));
}

#[test]
fn schedule_errors_name_their_field() {
    let bad = SCHEDULED.replace("{ at = \"5s\", delay = \"20ms\" }", "{ at = \"5s\" }").replace("{ at = \"0s\", delay = \"100ms\" }", "{ at = \"1s\", delay = \"100ms\" }");
    let e = sattcp_core::scenario::load(&bad, &[], None).unwrap_err();
    let paths: Vec<&str> = e.problems.iter().map(|p| p.path.as_str()).collect();
    assert!(paths.contains(&"links.path.0.schedule.1.delay"), "{e}");
    let e = sattcp_core::scenario::load(&SCHEDULED.replace("{ at = \"5s\", delay = \"20ms\" }", "{ at = \"5s\", delay = \"20ms\", up = false }"), &[], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "links.path.0.schedule.1.delay"), "{e}");
    let e = sattcp_core::scenario::load(&SCHEDULED.replace("{ at = \"0s\", delay = \"100ms\" }", "{ at = \"2s\", delay = \"100ms\" }"), &[], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "links.path.0.schedule" && p.rule.contains("first entry")), "{e}");
    let e = sattcp_core::scenario::load(&SCHEDULED.replace("rate = \"10Mbps\"", "rate = \"10Mbps\"\n    delay = \"5ms\""), &[], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "links.path.0.delay"), "{e}");
}

/// Starlink shell 1, Paris to Moscow over ISLs, a 5-minute bulk transfer.
const LEO: &str = r#"
    [run]
    duration = "100s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "50Mbps"
    queue = "1bdp"
    [constellation]
    shell = { altitude_km = 550, inclination_deg = 53, planes = 72, per_plane = 22, phasing = 1 }
    from = { name = "Paris", lat = 48.8566, lon = 2.3522 }
    to = { name = "Moscow", lat = 55.7558, lon = 37.6173 }
    min_elevation_deg = 25
    step = "15s"
    routing = "isl"
    [tcp]
    flavor = "sack"
    mss = 1460
    window = 65535
    window_scale = 6
    [trace]
    flows = [0]
    links = ["hop0"]
"#;

#[test]
fn constellation_rtt_is_piecewise_with_jumps_at_reconfigurations() {
    let sc = scenario(LEO, &[]);
    let cr = sc.constellation.clone().expect("constellation");
    assert_eq!(cr.path.segments.len(), 7); // 0, 15, ..., 90 s
    let r = run(LEO, &[]);
    let delay = &r.traces["link/hop0/delay"];
    assert_eq!(delay.t.len(), 7);
    for (k, t) in delay.t.iter().enumerate() {
        assert!((t - 15.0 * k as f64).abs() < 1e-9, "{:?}", delay.t);
    }
    // The delays are the routes' one-way delays, 9-13 ms for Paris-Moscow over ISLs.
    for (v, seg) in delay.v.iter().zip(&cr.path.segments) {
        assert_eq!(*v, seg.route.as_ref().unwrap().one_way().as_secs_f64());
        assert!((0.009..0.013).contains(v), "{v}");
    }
    assert!(delay.v.windows(2).filter(|w| w[0] != w[1]).count() >= 4, "{:?}", delay.v);
    // In each interval the RTT floor is twice that interval's delay (plus a packet time).
    for (k, d) in delay.v.iter().enumerate() {
        let (from, to) = (15.0 * k as f64 + 1.0, 15.0 * (k + 1) as f64);
        let tr = &r.traces["flow/0/rtt"];
        let m = tr.t.iter().zip(&tr.v).filter(|(t, _)| (from..to).contains(*t)).map(|(_, v)| *v).fold(f64::INFINITY, f64::min);
        assert!(m >= 2.0 * d && m < 2.0 * d + 0.001, "interval {k}: min RTT {m}, one way {d}");
    }
    // Handovers are traced.
    assert!(!r.traces["link/hop0/handover"].t.is_empty());
    assert!(r.flows[0].throughput_bps > 20e6, "{}", r.flows[0].throughput_bps);
}

#[test]
fn constellation_errors_name_their_field() {
    let e = sattcp_core::scenario::load(&LEO.replace("routing = \"isl\"", "routing = \"laser\"").replace("lat = 55.7558", "lat = 95.0"), &[], None).unwrap_err();
    let paths: Vec<&str> = e.problems.iter().map(|p| p.path.as_str()).collect();
    assert!(paths.contains(&"constellation.routing"), "{e}");
    assert!(paths.contains(&"constellation.to.lat"), "{e}");
    let e = sattcp_core::scenario::load(&LEO.replace("rate = \"50Mbps\"", "rate = \"50Mbps\"\n    delay = \"5ms\""), &[], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "links.path.0.delay"), "{e}");
    let e = sattcp_core::scenario::load(&LEO.replace("[constellation]", "[constellation]\n    bogus = 1"), &[], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "constellation.bogus" && p.rule == "unknown key"), "{e}");
    // Bent pipe cannot join Paris and Moscow without relays (2486 km > 2 x 940 km).
    let e = sattcp_core::scenario::load(&LEO.replace("routing = \"isl\"", "routing = \"bentpipe\""), &[], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "constellation" && p.rule.contains("never connected")), "{e}");
    let _ = SimTime::ZERO;
}

/// The ISS TLE of 2008 (the `sgp4` crate's documentation) over a one-minute path between two
/// stations near its ground track at 12:30 UTC on its epoch's day (45.5 N, 173.6 W).
fn iss_path(start: &str, satellites: &str) -> String {
    format!(
        r#"
    [run]
    duration = "60s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "10Mbps"
    queue = "100pkt"
    [constellation]
    tle = """
ISS (ZARYA)
1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927
2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537
"""
    {start}
    {satellites}
    from = {{ lat = 44, lon = -175 }}
    to = {{ lat = 47, lon = -172 }}
    min_elevation_deg = 0
"#
    )
}

/// A satellite SGP4 cannot place (here 58 years before its TLE's epoch SGP4 reports no error
/// but puts the ISS 1789 km under the ground) is refused at the key that chose the instant,
/// naming it, where it used to be silently out of sight ("never connected").
#[test]
fn a_satellite_sgp4_cannot_place_is_refused_at_constellation_start() {
    let e = sattcp_core::scenario::load(&iss_path("start = \"1950-01-01T00:00:00Z\"", ""), &[], None).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert_eq!(p.path, "constellation.start", "{e}");
    assert!(p.rule.starts_with("SGP4 cannot propagate satellite \"ISS (ZARYA)\" -21447.5 days from its TLE's epoch (SGP4 puts it at -1789 km of altitude, below 100 km;"), "{}", p.rule);
    assert_eq!(p.got, "1950-01-01T00:00:00Z");
    // At its epoch the same scenario is valid.
    assert!(sattcp_core::scenario::load(&iss_path("start = \"2008-09-20T12:30:00Z\"", ""), &[], None).is_ok());
}

/// A TLE set placed months from its epoch runs (SGP4 gives positions) but drifts from the real
/// orbit: the run warns, naming the satellite and the days, at the key that chose the instant.
#[test]
fn a_tle_set_far_from_its_epoch_is_warned_of() {
    // A day, so that the ISS passes over the two stations at some step.
    let text = iss_path("start = \"2008-11-20T12:30:00Z\"", "").replace("duration = \"60s\"", "duration = \"86400s\"");
    let (sc, _) = sattcp_core::scenario::load(&text, &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.notes.len(), 1, "{:?}", sc.notes);
    assert!(sc.notes[0].starts_with("constellation.start: satellite \"ISS (ZARYA)\" is placed 62."), "{}", sc.notes[0]);
    let over = [("app.kind".to_string(), toml::Value::from("transfer")), ("app.bytes".to_string(), toml::Value::from(10_000))];
    let r = sattcp_core::run_toml(&text, &over, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.warnings.iter().any(|w| w == &sc.notes[0]), "the run repeats it: {:?}", r.warnings);
    // Within 30 days of the epoch, nothing.
    let near = text.replace("2008-11-20", "2008-10-10");
    let (sc, _) = sattcp_core::scenario::load(&near, &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert!(sc.notes.is_empty(), "{:?}", sc.notes);
}

/// `constellation.satellites = []` selected nothing and was reported as "never connected".
#[test]
fn an_empty_satellite_list_is_refused_naming_it() {
    let e = sattcp_core::scenario::load(&iss_path("start = \"2008-09-20T12:30:00Z\"", "satellites = []"), &[], None).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    assert_eq!(e.problems[0].path, "constellation.satellites", "{e}");
    assert!(e.problems[0].rule.starts_with("must name at least one satellite"), "{e}");
}

/// A 100,000-satellite shell over 10^6 s at 15 s steps (66,667 steps) used to be accepted and
/// took about half an hour to validate (9.4 ms a step); it is refused at once, naming
/// constellation.step (Starlink shell 1 over the same run, 1.1 x 10^8 satellite-steps, about
/// 20 s of routes, stays within the bound).
#[test]
fn a_constellation_too_costly_to_route_is_refused_naming_the_step() {
    let text = |planes: u32, per_plane: u32| {
        LEO.replace("duration = \"100s\"", "duration = \"1000000s\"")
            .replace("planes = 72, per_plane = 22", &format!("planes = {planes}, per_plane = {per_plane}"))
    };
    let t = std::time::Instant::now();
    let e = sattcp_core::scenario::load(&text(400, 250), &[], None).unwrap_err();
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    assert_eq!(e.problems.len(), 1, "{e}");
    assert_eq!(e.problems[0].path, "constellation.step", "{e}");
    assert_eq!(e.problems[0].rule, "too small for run.duration with 100000 satellites: at most 400000000 satellites x steps (each step places every satellite and searches a route), got 6666700000");
}

#[test]
fn a_handover_outage_takes_the_link_down_at_each_route_change_and_tcp_repairs_it() {
    // `constellation.handover_outage`: at each handover (the route's nodes change between two
    // connected steps) no path for that long, in both directions; the other steps as before.
    let transfer = [("app.kind", "transfer"), ("app.bytes", "150000000")];
    let with = |outage: &'static str| [&transfer[..], &[("constellation.handover_outage", outage)]].concat();
    let sc = scenario(LEO, &with("50ms"));
    let cr = sc.constellation.clone().expect("constellation");
    let handovers: Vec<f64> = cr.path.changes().filter(|(_, a, b)| a.is_some() && b.is_some()).map(|(t, _, _)| t.as_secs_f64()).collect();
    assert!(handovers.len() >= 4, "{handovers:?}");
    let mut sim = Simulation::new(&sc);
    sim.run();
    let (fwd, rev) = (sim.moving_stats(0).expect("hop0 moves").clone(), sim.moving_stats(1).expect("hop0-rev moves").clone());
    let r = sim.finish();
    // The link goes down at each handover and up 50 ms later, nowhere else.
    let up = &r.traces["link/hop0/up"];
    let downs: Vec<f64> = up.t.iter().zip(&up.v).filter(|(_, v)| **v == 0.0).map(|(t, _)| *t).collect();
    let ups: Vec<f64> = up.t.iter().zip(&up.v).skip(1).filter(|(_, v)| **v == 1.0).map(|(t, _)| *t).collect();
    assert_eq!(downs, handovers, "{up:?}");
    assert_eq!(ups.len(), handovers.len(), "{up:?}");
    assert!(ups.iter().zip(&handovers).all(|(u, h)| (u - h - 0.05).abs() < 1e-9), "{ups:?} {handovers:?}");
    // Segments leaving in a gap are lost; TCP resends them and the transfer completes, in order.
    assert!(fwd.drops_no_route > 0 && rev.drops_no_route > 0, "{fwd:?} {rev:?}");
    assert_eq!(r.links[0].drops_by_reason.get("no_route"), Some(&fwd.drops_no_route));
    let f = &r.flows[0];
    assert_eq!(f.delivered_bytes, 150_000_000);
    assert!(f.segments_retransmitted > 0 && f.completed_at_s.is_some(), "{f:?}");
    // Without gaps: no loss at all on these links, and 0 s is the run without the key.
    let plain = run(LEO, &transfer);
    assert_eq!(run(LEO, &with("0s")).digest, plain.digest);
    assert_eq!(plain.links[0].drops_by_reason.get("no_route"), None);
    assert!(plain.flows[0].completed_at_s < f.completed_at_s, "{:?} {:?}", plain.flows[0].completed_at_s, f.completed_at_s);
    // A gap as long as a step would never let the link up.
    let e = sattcp_core::scenario::load(LEO, &[("constellation.handover_outage".into(), toml::Value::String("15s".into()))], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "constellation.handover_outage" && p.rule.contains("shorter than constellation.step (15s)")), "{e}");
}

#[test]
fn a_lossy_handover_interval_corrupts_instead_of_cutting_the_path() {
    // `constellation.handover_ber`: in each handover interval the link keeps the new route and
    // corrupts bits at that rate (at 1e-3 nearly every 1500-byte packet), then has the hop's
    // own BER (0) again; none is dropped for want of a route, and TCP repairs the losses.
    let sets = |ber: &'static str| [("app.kind", "transfer"), ("app.bytes", "150000000"), ("constellation.handover_outage", "50ms"), ("constellation.handover_ber", ber)];
    let sc = scenario(LEO, &sets("1e-3"));
    let cr = sc.constellation.clone().expect("constellation");
    assert_eq!(cr.handover_ber, Some(1e-3));
    let handovers: Vec<f64> = cr.path.changes().filter(|(_, a, b)| a.is_some() && b.is_some()).map(|(t, _, _)| t.as_secs_f64()).collect();
    let mut sim = Simulation::new(&sc);
    sim.run();
    let fwd = sim.moving_stats(0).expect("hop0 moves").clone();
    let r = sim.finish();
    assert_eq!(fwd.drops_no_route, 0);
    assert!(r.traces["link/hop0/up"].v.iter().all(|v| *v == 1.0), "{:?}", r.traces["link/hop0/up"]);
    let corrupted = r.links[0].drops_by_reason.get("corrupted").copied().unwrap_or(0);
    // Each 50 ms interval at 50 Mbps offers at most about 210 packets of 1500 bytes.
    assert!(corrupted > 0 && corrupted <= 210 * handovers.len() as u64, "{corrupted} corrupted over {} handovers", handovers.len());
    let f = &r.flows[0];
    assert_eq!(f.delivered_bytes, 150_000_000);
    assert!(f.segments_retransmitted > 0 && f.completed_at_s.is_some(), "{f:?}");
    // A bit error rate of 0 in the interval is the run without handover costs, event for event.
    let plain = run(LEO, &sets("0")[..2]);
    assert_eq!(run(LEO, &sets("0")).digest, plain.digest);
    // Errors name the key: no interval to apply to, a rate out of range.
    let load = |sets: &[(&str, &str)]| {
        let ov: Vec<_> = sets.iter().map(|(k, v)| (k.to_string(), sattcp_core::scenario::parse_override_value(v))).collect();
        sattcp_core::scenario::load(LEO, &ov, None).unwrap_err()
    };
    let e = load(&[("constellation.handover_ber", "1e-5")]);
    assert!(e.problems.iter().any(|p| p.path == "constellation.handover_ber" && p.rule.contains("handover_outage > 0")), "{e}");
    let e = load(&[("constellation.handover_outage", "50ms"), ("constellation.handover_ber", "2")]);
    assert!(e.problems.iter().any(|p| p.path == "constellation.handover_ber"), "{e}");
}

#[test]
fn attaching_to_the_highest_satellite_trades_delay_for_elevation() {
    use sattcp_core::orbit::{elevation, walker::WalkerShell, Constellation, GroundStation};
    // `constellation.attach = "highest_elevation"`: each end uses only the satellite highest in
    // its sky (found here from the geometry); the route joins them over ISLs. Against the
    // least-delay routes of the same steps: never less delay (those are the least), never a
    // lower lowest leg (each end's leg is its highest), and here strictly both at some step.
    let least = scenario(LEO, &[]).constellation.expect("constellation");
    let high = scenario(LEO, &[("constellation.attach", "highest_elevation")]).constellation.expect("constellation");
    assert_eq!((least.attach, high.attach), ("least_delay", "highest_elevation"));
    let shell = Constellation::Walker(WalkerShell { altitude_km: 550.0, inclination_deg: 53.0, planes: 72, per_plane: 22, phasing: 1 });
    let ends = [GroundStation::new("Paris", 48.8566, 2.3522).ecef(), GroundStation::new("Moscow", 55.7558, 37.6173).ecef()];
    let mut pos = Vec::new();
    let (mut slower, mut higher) = (0, 0);
    for (l, h) in least.path.segments.iter().zip(&high.path.segments) {
        shell.positions_ecef(h.start.as_secs_f64(), &mut pos);
        let (l, h) = (l.route.as_ref().expect("connected"), h.route.as_ref().expect("connected"));
        let highest = |gs| (0..pos.len()).max_by(|&a, &b| elevation(gs, pos[a]).total_cmp(&elevation(gs, pos[b])).then(b.cmp(&a))).unwrap() as u32;
        let sats: Vec<u32> = h.satellites().collect();
        assert_eq!((sats[0], *sats.last().unwrap()), (highest(ends[0]), highest(ends[1])));
        assert!(h.one_way() >= l.one_way(), "{:?} < {:?}", h.one_way(), l.one_way());
        assert!(h.lowest_elevation_udeg >= l.lowest_elevation_udeg);
        slower += (h.one_way() > l.one_way()) as u32;
        higher += (h.lowest_elevation_udeg > l.lowest_elevation_udeg) as u32;
    }
    assert!(slower > 0 && higher > 0, "{slower} {higher}");
    // A run over such routes delivers as any other.
    let r = run(LEO, &[("constellation.attach", "highest_elevation"), ("app.kind", "transfer"), ("app.bytes", "50000000")]);
    assert_eq!(r.flows[0].delivered_bytes, 50_000_000);
    let e = sattcp_core::scenario::load(LEO, &[("constellation.attach".into(), toml::Value::String("nearest".into()))], None).unwrap_err();
    assert!(e.problems.iter().any(|p| p.path == "constellation.attach"), "{e}");
}

/// `LEO` with `constellation.rate_by_elevation` set to `table`.
fn leo_with_rates(table: &str) -> String {
    LEO.replace("[constellation]", &format!("[constellation]\n    rate_by_elevation = {table}"))
}

#[test]
fn a_rate_by_elevation_gives_each_step_the_rate_of_its_lowest_leg_and_the_run_follows_it() {
    use sattcp_core::orbit::{elevation, walker::WalkerShell, Constellation, GroundStation};
    // Bands of the route's lowest ground-satellite leg: 25-28 degrees 10 Mbps, 28-30 20 Mbps,
    // 30 and up 40 Mbps. Least-delay routes over ISLs take low satellites: Paris-Moscow's
    // lowest legs are 25.4-30.7 degrees in these 100 s, so its steps fall in all three bands.
    let table = r#"[{ elevation_deg = 25, rate = "10Mbps" }, { elevation_deg = 28, rate = "20Mbps" }, { elevation_deg = 30, rate = "40Mbps" }]"#;
    let transfer = [("app.kind", "bulk")];
    let text = leo_with_rates(table);
    let sc = scenario(&text, &transfer);
    let cr = sc.constellation.clone().expect("constellation");
    // Each route's lowest elevation, recomputed here from the geometry: the source's leg up to
    // the route's first satellite and the destination's down from its last.
    let shell = Constellation::Walker(WalkerShell { altitude_km: 550.0, inclination_deg: 53.0, planes: 72, per_plane: 22, phasing: 1 });
    let (paris, moscow) = (GroundStation::new("Paris", 48.8566, 2.3522).ecef(), GroundStation::new("Moscow", 55.7558, 37.6173).ecef());
    let mut pos = Vec::new();
    let mut expected = Vec::new();
    for seg in &cr.path.segments {
        let route = seg.route.as_ref().expect("Paris-Moscow is always connected over ISLs");
        shell.positions_ecef(seg.start.as_secs_f64(), &mut pos);
        let sats: Vec<u32> = route.satellites().collect();
        let (first, last) = (pos[sats[0] as usize], pos[*sats.last().unwrap() as usize]);
        let lowest = elevation(paris, first).min(elevation(moscow, last)).to_degrees();
        assert!((route.lowest_elevation_deg() - lowest).abs() < 2e-6, "{} against {lowest}", route.lowest_elevation_deg());
        assert!(lowest >= 25.0 - 1e-9, "{lowest}");
        expected.push(if lowest >= 30.0 { 40e6 } else if lowest >= 28.0 { 20e6 } else { 10e6 });
    }
    for band in [10e6, 20e6, 40e6] {
        assert!(expected.contains(&band), "no step at {band} bps: {expected:?}");
    }
    // The schedule of both directions sets each step's rate.
    let mut sim = Simulation::new(&sc);
    sim.run();
    let r = sim.finish();
    let starts: Vec<f64> = cr.path.segments.iter().map(|s| s.start.as_secs_f64()).collect();
    let rate = &r.traces["link/hop0/rate"];
    let mut steps = starts.iter().zip(&expected).map(|(t, v)| (*t, *v)).collect::<Vec<_>>();
    steps.dedup_by(|b, a| a.1 == b.1);
    assert_eq!(rate.t.iter().copied().zip(rate.v.iter().copied()).collect::<Vec<_>>(), steps);
    let el = &r.traces["link/hop0/elevation"];
    assert_eq!(el.t, starts);
    // The capacity over the run (the efficiency's denominator: the goodput a full link gives,
    // MSS of MSS + 40 bytes) is that of the rates' time mean.
    let mean: f64 = expected.iter().enumerate().map(|(k, v)| v * (100.0f64.min(15.0 * (k + 1) as f64) - 15.0 * k as f64)).sum::<f64>() / 100.0;
    assert!((r.summary.capacity_bps - mean * 1460.0 / 1500.0).abs() < 1.0, "{} against {mean}", r.summary.capacity_bps);
    // In each step the flow delivers at most the step's rate (payload: MSS over the IP packet)
    // and, once past slow start, most of it: its bytes acknowledged follow the bands.
    let acked = &r.traces["flow/0/acked"];
    let at = |t: f64| acked.t.iter().zip(&acked.v).take_while(|(x, _)| **x <= t).last().map_or(0.0, |(_, v)| *v);
    for (k, band) in expected.iter().enumerate().skip(1) {
        let (from, to) = (15.0 * k as f64 + 2.0, (15.0 * (k + 1) as f64).min(100.0));
        let bps = (at(to) - at(from)) * 8.0 / (to - from);
        assert!(bps <= band * 1460.0 / 1500.0 * 1.001 && bps > 0.8 * band * 1460.0 / 1500.0, "step {k}: {bps} bps in the {band} band");
    }
}

#[test]
fn rate_by_elevation_errors_name_their_entry() {
    let load = |table: &str| sattcp_core::scenario::load(&leo_with_rates(table), &[], None).unwrap_err();
    let has = |e: &sattcp_core::ScenarioError, path: &str, rule: &str| e.problems.iter().any(|p| p.path == path && p.rule.contains(rule));
    let e = load(r#"[{ elevation_deg = 30, rate = "10Mbps" }]"#);
    assert!(has(&e, "constellation.rate_by_elevation.0.elevation_deg", "at most constellation.min_elevation_deg (25)"), "{e}");
    let e = load(r#"[{ elevation_deg = 25, rate = "10Mbps" }, { elevation_deg = 25, rate = "20Mbps" }]"#);
    assert!(has(&e, "constellation.rate_by_elevation.1.elevation_deg", "greater than the previous entry's (25)"), "{e}");
    let e = load(r#"[{ elevation_deg = 20 }, { rate = "20Mbps" }, { elevation_deg = 95, rate = "1Mbps" }]"#);
    assert!(has(&e, "constellation.rate_by_elevation.0.rate", "is required"), "{e}");
    assert!(has(&e, "constellation.rate_by_elevation.1.elevation_deg", "is required"), "{e}");
    assert!(has(&e, "constellation.rate_by_elevation.2.elevation_deg", "between 0 and 90"), "{e}");
    let e = load("[]");
    assert!(has(&e, "constellation.rate_by_elevation", "at least one entry"), "{e}");
    let e = load(r#"[{ elevation_deg = 0, rate = "fast" }]"#);
    assert!(has(&e, "constellation.rate_by_elevation.0.rate", ""), "{e}");
    let e = load(r#"[{ elevation_deg = 0, rate = "1Mbps", colour = "red" }]"#);
    assert!(has(&e, "constellation.rate_by_elevation.0.colour", "unknown key"), "{e}");
}
