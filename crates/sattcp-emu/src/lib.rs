//! sattcp-emu: a link emulator that joins two network namespaces through two TUN devices and
//! forwards IP packets both ways with the simulator's link model (`sattcp_core::net::link`).
//!
//! - [`config`]: what to emulate (an `[emulate]` section or a simulator scenario's bottleneck),
//!   validated with field paths.
//! - [`model`]: the forwarding model, passive (time is an argument), tested with a fake clock.
//! - [`tun`] and the binary (`src/main.rs`): the devices and the single-threaded I/O loop.
//!
//! `sattcp emulate` (python/sattcp/emulate.py) creates the namespaces, starts this program,
//! moves its devices into them and tears everything down. See docs/emulate.md.

pub mod config;
pub mod model;
pub mod tun;
