//! PyO3 bindings of sattcp-core: conversion and error mapping only, no model logic.
//!
//! Every failure reaches Python as one of sattcp's own exceptions (python/sattcp/errors.py):
//! an invalid scenario as `ScenarioError` carrying `{path, rule, got}` for every problem, a
//! Rust panic as `InternalError` naming the scenario and seed. The GIL is released while the
//! simulation runs.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sattcp_core::scenario::{self, Problem};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Events run between two checks for signals (Ctrl-C): about 10-100 ms of work.
const EVENTS_PER_SLICE: u64 = 1_000_000;

/// (path, value as typed) overrides as the core takes them.
fn overrides(raw: &[(String, String)]) -> Vec<(String, toml::Value)> {
    raw.iter().map(|(k, v)| (k.clone(), scenario::parse_override_value(v))).collect()
}

fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("sattcp.errors")?.getattr(name)
}

fn scenario_error(py: Python<'_>, problems: &[Problem]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let list = problems
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("path", &p.path)?;
                d.set_item("rule", &p.rule)?;
                d.set_item("got", &p.got)?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let cls = error_class(py, "ScenarioError")?;
        Ok(PyErr::from_value(cls.call1((list,))?))
    };
    build().unwrap_or_else(|e| e)
}

fn internal_error(py: Python<'_>, what: String) -> PyErr {
    match error_class(py, "InternalError").and_then(|c| c.call1((what,))) {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// One simulation run, advanced by `run_until` so that Python can show progress and notice
/// Ctrl-C between steps.
#[pyclass(module = "sattcp._core")]
struct Simulation {
    sim: Option<sattcp_core::Simulation>,
    name: String,
    seed: u64,
    scenario_json: String,
    config_json: String,
    /// The packet trace, kept after `finish` for `packet_columns` and `write_pcapng`.
    packets: Option<sattcp_core::trace::PacketLog>,
    /// A ping-pong run's schedule: (round trips, bytes each way), for its work estimate.
    pingpong_work: Option<(u64, u64)>,
    /// The time series, kept after `finish` for `take_traces` (out of its JSON: parsing
    /// millions of numbers from JSON took 2.5 s of a 3.6 s run of a packaged LEO scenario).
    traces: std::collections::BTreeMap<String, sattcp_core::metrics::result::Trace>,
}

impl Simulation {
    fn label(&self) -> String {
        format!("scenario {:?}, seed {}", self.name, self.seed)
    }
}

#[pymethods]
impl Simulation {
    /// `text`: TOML scenario; `overrides`: (dotted path, value as typed: a TOML literal or a
    /// plain string); `seed`: replaces run.seed when given; `packet_log_memory`: bytes the
    /// packet log counts as available instead of the machine's memory (tests; not a scenario
    /// key, sattcp_core::trace::memory).
    #[new]
    #[pyo3(signature = (text, overrides=Vec::new(), seed=None, *, packet_log_memory=None))]
    fn new(py: Python<'_>, text: &str, overrides: Vec<(String, String)>, seed: Option<u64>, packet_log_memory: Option<u64>) -> PyResult<Self> {
        let ov = self::overrides(&overrides);
        let loaded = catch_unwind(AssertUnwindSafe(|| scenario::resolve::resolve(text, &ov, seed)));
        let r = match loaded {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => return Err(scenario_error(py, &e.problems)),
            Err(p) => return Err(internal_error(py, format!("panic while loading the scenario: {}", panic_message(p)))),
        };
        let scenario_json = serde_json::to_string(&r.tree).map_err(|e| internal_error(py, e.to_string()))?;
        let config_json = serde_json::to_string(&r.to_json()).map_err(|e| internal_error(py, e.to_string()))?;
        let mut sc = r.scenario;
        let pingpong_work = sc.pingpong_work();
        if let Some(bytes) = packet_log_memory {
            sc.trace.packet_memory = sattcp_core::trace::memory::MemorySource::Fixed(bytes);
        }
        let built = catch_unwind(AssertUnwindSafe(|| sattcp_core::Simulation::new(&sc)));
        match built {
            Ok(sim) => Ok(Simulation { sim: Some(sim), name: sc.name.clone(), seed: sc.seed, scenario_json, config_json, packets: None, pingpong_work, traces: Default::default() }),
            Err(p) => Err(internal_error(py, format!("panic while building scenario {:?}, seed {}: {}", sc.name, sc.seed, panic_message(p)))),
        }
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.as_ref().map(|s| s.now().as_nanos()).unwrap_or(0)
    }

    #[getter]
    fn duration_ns(&self) -> u64 {
        self.sim.as_ref().map(|s| s.duration().as_nanos()).unwrap_or(0)
    }

    #[getter]
    fn events(&self) -> u64 {
        self.sim.as_ref().map(|s| s.events()).unwrap_or(0)
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The scenario that runs (file plus overrides), as JSON.
    #[getter]
    fn scenario_json(&self) -> String {
        self.scenario_json.clone()
    }

    /// The resolved scenario (every key with its effective value, defaults included), as JSON.
    #[getter]
    fn config_json(&self) -> String {
        self.config_json.clone()
    }

    /// A ping-pong run's (`app.kind = "pingpong"`) round trips and the bytes they carry each
    /// way, warm-up included, at most (`PingPongSpec::work`; retransmissions aside): the run
    /// ends when its schedule is done, so this bounds its work where `run.duration` does not.
    /// None for other applications.
    #[getter]
    fn pingpong_work(&self) -> Option<(u64, u64)> {
        self.pingpong_work
    }

    /// Runs every event due at or before `t_ns` (never past the end), without the GIL, in
    /// slices of events between which pending signals are checked: Ctrl-C raises
    /// KeyboardInterrupt within a fraction of a second, and the run can go on afterwards.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let label = self.label();
        let sim = self.sim.as_mut().ok_or_else(|| internal_error(py, "run_until after finish".into()))?;
        loop {
            let r = py.detach(|| catch_unwind(AssertUnwindSafe(|| sim.run_until_bounded(sattcp_core::SimTime(t_ns), EVENTS_PER_SLICE))));
            match r {
                Ok(true) => return Ok(()),
                Ok(false) => py.check_signals()?,
                Err(p) => {
                    self.sim = None;
                    return Err(internal_error(py, format!("panic in {label}: {}", panic_message(p))));
                }
            }
        }
    }

    /// The run's time series, once, after `finish` (whose JSON has `"traces": {}`): a list of
    /// (name, times, values), each of times and values the native-endian bytes of an array of
    /// f64 (Python: `array("d", b)`), in name order as in the JSON.
    fn take_traces<'py>(&mut self, py: Python<'py>) -> Vec<(String, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let bytes = |xs: &[f64]| {
            let mut b = Vec::with_capacity(xs.len() * 8);
            for x in xs {
                b.extend_from_slice(&x.to_ne_bytes());
            }
            b
        };
        std::mem::take(&mut self.traces).into_iter().map(|(name, tr)| (name, PyBytes::new(py, &bytes(&tr.t)), PyBytes::new(py, &bytes(&tr.v)))).collect()
    }

    /// The packet trace as columns, after `finish` (None if packets were not traced): a list
    /// of (name, numpy dtype, little-endian bytes), the link names, event names and drop reason
    /// names that the link, event and reason codes index. One buffer per column: no Python
    /// object per event.
    #[allow(clippy::type_complexity)]
    fn packet_columns<'py>(&self, py: Python<'py>) -> Option<(Vec<(&'static str, &'static str, Bound<'py, PyBytes>)>, Vec<String>, Vec<&'static str>, Vec<&'static str>)> {
        use sattcp_core::trace::{DropReason, EventKind};
        let log = self.packets.as_ref()?;
        let cols = log.columns().into_iter().map(|(n, t, b)| (n, t, PyBytes::new(py, &b))).collect();
        let links = log.links.iter().map(|l| l.name.clone()).collect();
        Some((cols, links, EventKind::ALL.iter().map(|k| k.name()).collect(), DropReason::ALL.iter().map(|r| r.name()).collect()))
    }

    /// Whether a packet trace was recorded (after `finish`).
    #[getter]
    fn has_packets(&self) -> bool {
        self.packets.is_some()
    }

    /// Writes the packet trace as a pcapng file; returns (packets on links, drops). Raises
    /// InternalError if packets were not traced, OSError if the file cannot be written.
    fn write_pcapng(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<(u64, u64)> {
        let log = self.packets.as_ref().ok_or_else(|| internal_error(py, "no packet trace: set trace.packets".into()))?;
        // A system error (a full disk, no permission) is an OSError with its errno and text, as
        // Python's own writes raise (`sattcp.paths.writing` names the file); anything else is ours.
        let w = py.detach(|| sattcp_core::trace::pcapng::write_file(log, &path)).map_err(|e| match e.raw_os_error() {
            Some(errno) => {
                let text = e.to_string();
                let text = text.split(" (os error").next().unwrap_or(&text).to_string();
                pyo3::exceptions::PyOSError::new_err((errno, text))
            }
            None => internal_error(py, format!("{}: {e}", path.display())),
        })?;
        Ok((w.wire, w.drops))
    }

    /// Closes the run and returns the result as a JSON document.
    fn finish(&mut self, py: Python<'_>) -> PyResult<String> {
        let label = self.label();
        let sim = self.sim.take().ok_or_else(|| internal_error(py, "finish called twice".into()))?;
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut res = sim.finish();
            let packets = res.packets.take();
            let traces = std::mem::take(&mut res.traces);
            serde_json::to_string(&res).map(|s| (s, packets, traces))
        }));
        match r {
            Ok(Ok((s, packets, traces))) => {
                self.packets = packets;
                self.traces = traces;
                Ok(s)
            }
            Ok(Err(e)) => Err(internal_error(py, format!("{label}: {e}"))),
            Err(p) => Err(internal_error(py, format!("panic in {label}: {}", panic_message(p)))),
        }
    }
}

/// Validates a scenario without running it; raises ScenarioError listing every problem.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new()))]
fn validate(py: Python<'_>, text: &str, overrides: Vec<(String, String)>) -> PyResult<()> {
    let ov = self::overrides(&overrides);
    match catch_unwind(AssertUnwindSafe(|| scenario::load(text, &ov, None))) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(scenario_error(py, &e.problems)),
        Err(p) => Err(internal_error(py, format!("panic while validating the scenario: {}", panic_message(p)))),
    }
}

/// The resolved scenario (every key with its effective value, defaults included) as JSON
/// (`format="json"`) or TOML text (`format="toml"`); raises ScenarioError like `validate`.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), seed=None, format="json"))]
fn resolve(py: Python<'_>, text: &str, overrides: Vec<(String, String)>, seed: Option<u64>, format: &str) -> PyResult<String> {
    let ov = self::overrides(&overrides);
    let r = match catch_unwind(AssertUnwindSafe(|| scenario::resolve::resolve(text, &ov, seed))) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(scenario_error(py, &e.problems)),
        Err(p) => return Err(internal_error(py, format!("panic while resolving the scenario: {}", panic_message(p)))),
    };
    match format {
        "json" => serde_json::to_string(&r.to_json()).map_err(|e| internal_error(py, e.to_string())),
        "toml" => Ok(r.to_toml()),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!("format must be \"json\" or \"toml\", got {other:?}"))),
    }
}

/// A ping-pong scenario's (`app.kind = "pingpong"`) round trips and the bytes they carry each
/// way at most, as `Simulation.pingpong_work` (for the work estimate of a run not built yet: a
/// sweep's check before its runs); None for other applications. Raises ScenarioError like
/// `validate`.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new()))]
fn pingpong_work(py: Python<'_>, text: &str, overrides: Vec<(String, String)>) -> PyResult<Option<(u64, u64)>> {
    let ov = self::overrides(&overrides);
    match catch_unwind(AssertUnwindSafe(|| scenario::load(text, &ov, None))) {
        Ok(Ok((sc, _))) => Ok(sc.pingpong_work()),
        Ok(Err(e)) => Err(scenario_error(py, &e.problems)),
        Err(p) => Err(internal_error(py, format!("panic while validating the scenario: {}", panic_message(p)))),
    }
}

/// The scenario's keys (crates/sattcp-core/src/scenario/schema.rs) as a JSON list of
/// {key, ty, unit, default: {kind, value}, allowed, when, meaning}, with the link tables.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<String> {
    let doc = serde_json::json!({"keys": scenario::schema::KEYS, "link_tables": scenario::schema::LINK_TABLES});
    serde_json::to_string(&doc).map_err(|e| internal_error(py, e.to_string()))
}

/// The names in `names` the user most likely meant by `typed` (at most two, none if none is
/// close): the rule of the scenario's unknown keys (`scenario::schema::closest`), so that a
/// study file's own keys (python/sattcp/sweep.py) get the same suggestions.
#[pyfunction]
fn closest(typed: &str, names: Vec<String>) -> Vec<String> {
    scenario::schema::closest(typed, &names).into_iter().map(str::to_string).collect()
}

/// The rule for an integer beyond TOML's (-2^63 to 2^63 - 1) at `path`, with the key's allowed
/// values (`scenario::beyond_toml_integers_rule`): the words an override gets, for the Python
/// API's dict scenarios, whose TOML text cannot hold such an integer.
#[pyfunction]
fn beyond_toml_integers_rule(path: &str) -> String {
    scenario::beyond_toml_integers_rule(path)
}

/// The memory this process may use, as the packet log reads it before each growth
/// (`trace::memory`): `(available, total, cgroup)` in bytes, where `total` is the machine's
/// memory or a lower cgroup limit (`cgroup` true) and `available` what is left under both; None
/// where neither can be read (not Linux).
#[pyfunction]
fn memory() -> Option<(u64, u64, bool)> {
    sattcp_core::trace::memory::MemorySource::System.read(0).map(|m| (m.available, m.total, m.cgroup))
}

/// How this module was compiled: "profile-guided" (`make build-pgo`: a profile taken from the
/// current sources), "profile-guided, stored profile of REV" (`make build` with the profile stored
/// in crates/sattcp-py/pgo, taken at REV), "release" or "debug". scripts/pgo.sh sets
/// SATTCP_BUILD_PROFILE for the builds that use a profile. Speed only: every build gives the same
/// results.
#[pyfunction]
fn build_profile() -> &'static str {
    match option_env!("SATTCP_BUILD_PROFILE") {
        Some(p) if p.starts_with("profile-guided") => p,
        _ if cfg!(debug_assertions) => "debug",
        _ => "release",
    }
}

/// Raises a Rust panic inside a guarded call, for tests of the panic -> InternalError mapping.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    match catch_unwind(|| panic!("deliberate test panic")) {
        Ok(()) => Ok(()),
        Err(p) => Err(internal_error(py, format!("panic: {}", panic_message(p)))),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Every panic is caught and becomes InternalError with its message; the default hook would
    // also print "thread panicked at ..." and a backtrace on stderr.
    std::panic::set_hook(Box::new(|_| {}));
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(closest, m)?)?;
    m.add_function(wrap_pyfunction!(beyond_toml_integers_rule, m)?)?;
    m.add_function(wrap_pyfunction!(memory, m)?)?;
    m.add_function(wrap_pyfunction!(pingpong_work, m)?)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
