//! Measures the simulator on whole scenarios and prints figures (not a timed test).
//!
//!     cargo run --release -p sattcp-core --example bench -- [SCENARIO.toml ...] [--repeat N] [--set k=v ...]
//!
//! For each scenario: wall time (best of N), events, events per second, packets (and, for
//! ATM, cells) crossing the bottleneck per second of wall time, and wall time per bottleneck
//! packet. Without arguments it runs the issue benchmarks: the 100-flow GEO drop-tail dumbbell
//! and the 100-pair GEO ATM study scenario, 100 s simulated each.

use sattcp_core::scenario::{load, parse_override_value};
use sattcp_core::Simulation;
use std::time::Instant;

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
    if files.is_empty() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/");
        files = vec![format!("{root}geo-dumbbell-droptail.toml"), format!("{root}kota-geo.toml")];
    }
    println!("{:<28} {:>9} {:>11} {:>10} {:>12} {:>12} {:>10}", "scenario", "wall s", "events", "Mev/s", "bn pkt/s", "bn cells/s", "us/bn pkt");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let (sc, _) = load(&text, &sets, None).unwrap_or_else(|e| panic!("{f}: {e}"));
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
        let name = std::path::Path::new(f).file_name().unwrap().to_string_lossy();
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
