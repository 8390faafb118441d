//! The discrete-event engine: event queue, scheduler and random streams.

pub mod queue;
pub mod rng;
