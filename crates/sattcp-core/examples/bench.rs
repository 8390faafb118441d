//! Measures the simulator on whole scenarios and prints figures (not a timed test).
//!
//!     cargo run --release -p sattcp-core --example bench -- [SCENARIO.toml ...] [--repeat N] [--set k=v ...]
//!
//! For each scenario: wall time (best of N), events, events per second, packets (and, for
//! ATM, cells) crossing the bottleneck per second of wall time, and wall time per bottleneck
//! packet. Without scenario arguments it runs the standing benchmarks, 100 s simulated each:
//! the 100-flow GEO drop-tail dumbbell (MSS 9180 and 1024), the 100-flow GEO ATM dumbbell with
//! bulk sources (a saturated T3: about 106,000 cells per simulated second), and the seeds'
//! 100-pair GEO WWW study scenario.

use sattcp_core::scenario::{load, parse_override_value};
use sattcp_core::Simulation;
use std::time::Instant;

fn short(f: &str) -> String {
    std::path::Path::new(f).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| f.to_string())
}

fn main() {
    let mut files = Vec::new();
    let mut sets = Vec::new();
    let mut repeat = 3;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = args.next().and_then(|v| v.parse().ok()).expect("--repeat N"),
            "--set" => {
                let kv = args.next().expect("--set k=v");
                let (k, v) = kv.split_once('=').expect("--set k=v");
                sets.push((k.to_string(), parse_override_value(v)));
            }
            _ => files.push(a),
        }
    }
    // (label, file, overrides)
    type Case = (String, String, Vec<(String, toml::Value)>);
    let mut cases: Vec<Case> = files.iter().map(|f| (short(f), f.clone(), sets.clone())).collect();
    if cases.is_empty() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/");
        let ov = |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect::<Vec<_>>();
        cases = vec![
            ("droptail GEO, MSS 9180".into(), format!("{root}geo-dumbbell-droptail.toml"), vec![]),
            ("droptail GEO, MSS 1024".into(), format!("{root}geo-dumbbell-droptail.toml"), ov(&[("tcp.mss", "1024")])),
            ("ATM GEO bulk, EPD".into(), format!("{root}kota-geo.toml"), ov(&[("app.kind", "bulk"), ("switch.policy", "epd")])),
            ("ATM GEO WWW (kota-geo)".into(), format!("{root}kota-geo.toml"), vec![]),
        ];
    }
    println!("{:<28} {:>9} {:>11} {:>10} {:>12} {:>12} {:>10}", "scenario", "wall s", "events", "Mev/s", "bn pkt/s", "bn cells/s", "us/bn pkt");
    for (name, f, sets) in &cases {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let (sc, _) = load(&text, sets, None).unwrap_or_else(|e| panic!("{f}: {e}"));
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..repeat {
            let t0 = Instant::now();
            let mut sim = Simulation::new(&sc);
            sim.run();
            let r = sim.finish();
            best = best.min(t0.elapsed().as_secs_f64());
            last = Some(r);
        }
        let r = last.expect("at least one run");
        let bn = r.links.iter().find(|l| l.link == "bottleneck" || l.link == "hop0").expect("a bottleneck");
        let cells = bn.cells.map(|c| format!("{:.0}", c as f64 / best)).unwrap_or_else(|| "-".into());
        println!(
            "{:<28} {:>9.3} {:>11} {:>10.2} {:>12.0} {:>12} {:>10.2}",
            name,
            best,
            r.events,
            r.events as f64 / best / 1e6,
            bn.packets as f64 / best,
            cells,
            best * 1e6 / bn.packets.max(1) as f64
        );
    }
}
