//! A small results table under snapshot (smoltcp's tests/netsim.rs habit, STYLE.md): any change
//! of behaviour, intended or not, shows up as a readable diff of
//! `tests/snapshots/results.txt`. After an intended change, regenerate it with
//! `SATTCP_UPDATE_SNAPSHOTS=1 cargo test -p sattcp-core --test snapshot` and commit the diff
//! with the change that caused it.

mod common;

use std::fmt::Write;

/// (label, scenario text, overrides)
type Case = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

const CASES: &[Case] = &[
    ("geo-bulk reno", include_str!("../../../scenarios/geo-bulk.toml"), &[("run.duration", "\"30s\"")]),
    ("geo-dumbbell vanilla", include_str!("../../../scenarios/geo-dumbbell-droptail.toml"), &[("tcp.flavor", "vanilla"), ("run.duration", "\"30s\"")]),
    ("geo-dumbbell sack", include_str!("../../../scenarios/geo-dumbbell-droptail.toml"), &[("tcp.flavor", "sack"), ("run.duration", "\"30s\"")]),
    ("geo-three-losses newreno", include_str!("../../../scenarios/geo-three-losses.toml"), &[("tcp.flavor", "newreno")]),
    ("kota-wan reno epd 20 pairs", include_str!("../../../scenarios/kota-wan.toml"), &[("tcp.flavor", "reno"), ("topology.pairs", "20"), ("run.duration", "\"20s\"")]),
    ("kota-geo sack sd 20 pairs", include_str!("../../../scenarios/kota-geo.toml"), &[("tcp.flavor", "sack"), ("switch.policy", "sd"), ("topology.pairs", "20"), ("run.duration", "\"20s\"")]),
];

fn table() -> String {
    let mut t = String::from("case | events | digest | goodput Mbps | efficiency | timeouts | fast retransmits | queue drops\n");
    for (name, text, sets) in CASES {
        let r = common::run(text, sets);
        let s = &r.summary;
        writeln!(t, "{name} | {} | {} | {:.3} | {:.4} | {} | {} | {}", r.events, r.digest, s.total_throughput_bps / 1e6, s.efficiency, s.timeouts, s.fast_retransmits, s.drops_queue_full).unwrap();
    }
    t
}

#[test]
fn results_table_matches_snapshot() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/results.txt");
    let got = table();
    if std::env::var_os("SATTCP_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(path).unwrap_or_else(|_| panic!("{path} missing: run with SATTCP_UPDATE_SNAPSHOTS=1"));
    if got != want {
        let diff: Vec<String> = want.lines().zip(got.lines()).filter(|(a, b)| a != b).map(|(a, b)| format!("- {a}\n+ {b}")).collect();
        panic!("behaviour changed (update the snapshot if intended):\n{}", diff.join("\n"));
    }
}
