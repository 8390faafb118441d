//! sattcp-core: a packet- and cell-level simulator of TCP/IP over satellite networks.
//!
//! See DESIGN.md in the repository root's `docs/` and the README for the map of modules.

pub mod atm;
pub mod engine;
pub mod net;
pub mod tcp;
pub mod time;

pub use time::{Rate, SimTime};
