//! Helpers shared by the integration tests.

use sattcp_core::metrics::result::RunResult;
use sattcp_core::scenario::{load, parse_override_value};
use sattcp_core::{Scenario, Simulation};

/// Loads scenario text with `--set` style overrides; panics with every problem if invalid.
#[track_caller]
pub fn scenario(text: &str, sets: &[(&str, &str)]) -> Scenario {
    let ov: Vec<_> = sets.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect();
    load(text, &ov, None).unwrap_or_else(|e| panic!("{e}")).0
}

/// Runs a scenario to the end.
#[track_caller]
#[allow(dead_code)] // not every test binary uses it
pub fn run(text: &str, sets: &[(&str, &str)]) -> RunResult {
    let mut sim = Simulation::new(&scenario(text, sets));
    sim.run();
    sim.finish()
}
