//! Per-flow and per-link counters, traces and run results.

pub mod result;
