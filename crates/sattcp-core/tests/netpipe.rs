//! NetPIPE's ping-pong (`[app] kind = "pingpong"`, seed 003) end to end through the scenario
//! keys, on seed 003's path (`scenarios/netpipe-e1.toml`): the schedule runs whole, the run
//! ends with it, and the result's `netpipe` section holds one row per block size.

mod common;

use common::run;
use sattcp_core::app::pingpong::{netpipe_sizes, NETPIPE_PERTURBATION};

const E1: &str = include_str!("../../../scenarios/netpipe-e1.toml");

fn rows(r: &sattcp_core::metrics::result::RunResult) -> Vec<serde_json::Value> {
    r.sections["netpipe"].as_array().expect("a netpipe section").clone()
}

#[test]
fn the_schedule_runs_whole_and_the_run_ends_with_it() {
    let r = run(E1, &[("app.last_block", "4096"), ("app.repeats", "2")]);
    let rows = rows(&r);
    let sizes: Vec<u64> = rows.iter().map(|x| x["bytes"].as_u64().unwrap()).collect();
    assert_eq!(sizes, netpipe_sizes(1, 4096, NETPIPE_PERTURBATION));
    assert!(rows.iter().all(|x| x["repeats"] == 2));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // The run ended when the last echo was back, long before run.duration (20000 s).
    assert!(r.summary.sim_time_s < 100.0, "{}", r.summary.sim_time_s);
    for x in &rows {
        let t = x["time_s"].as_f64().unwrap();
        assert!(x["min_s"].as_f64().unwrap() <= t);
        let bps = x["throughput_bps"].as_f64().unwrap();
        assert!((bps - x["bytes"].as_f64().unwrap() * 8.0 / t).abs() < 1e-9 * bps);
    }
}

#[test]
fn a_run_cut_short_by_its_duration_says_so_and_keeps_what_finished() {
    // 1-byte round trips take ~0.4 s: 3 s hold the warm-up and a few of them.
    let r = run(E1, &[("run.duration", "3s"), ("app.blocks", "[1, 2]"), ("app.repeats", "7")]);
    let rows = rows(&r);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["bytes"], 1);
    let done = rows[0]["repeats"].as_u64().unwrap();
    assert!((1..7).contains(&done), "{done}");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("run.duration (3s) ended the run before the ping-pong schedule: 0 of 2 block sizes done"), "{}", r.warnings[0]);
    assert_eq!(r.summary.sim_time_s, 3.0);
}
