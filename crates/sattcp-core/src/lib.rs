//! sattcp-core: a packet- and cell-level simulator of TCP/IP over satellite networks.
//!
//! Data flows one way (DESIGN.md): scenario text -> validated [`scenario::Scenario`] ->
//! [`world::Simulation`] -> event loop -> [`metrics::result::RunResult`].

pub mod app;
pub mod atm;
pub mod engine;
pub mod metrics;
pub mod net;
pub mod orbit;
pub mod pep;
pub mod scenario;
pub mod tcp;
pub mod time;
pub mod trace;
pub mod world;

pub use scenario::{Scenario, ScenarioError};
pub use time::{Rate, SimTime};
pub use world::Simulation;

/// Loads a scenario from TOML text with overrides, runs it to the end and returns its result.
pub fn run_toml(text: &str, overrides: &[(String, toml::Value)], seed: Option<u64>) -> Result<metrics::result::RunResult, ScenarioError> {
    let (sc, _) = scenario::load(text, overrides, seed)?;
    let mut sim = Simulation::new(&sc);
    sim.run();
    Ok(sim.finish())
}
