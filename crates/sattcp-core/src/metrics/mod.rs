//! Per-flow and per-link counters, traces, run results, and the study metrics.

pub mod fairness;
pub mod result;
