//! ATM at the cell level: AAL5 framing with LLC/SNAP, cells, switch output ports with UBR+ drop
//! policies (tail drop, PPD, EPD, Selective Drop, FBA), AAL5 reassembly, and the buffer sizes of
//! seed 000 Table 3.
//!
//! These parts are pure and engine-independent; the engine drives them:
//!
//! ```text
//! IP packet (b bytes) --aal5::cells_for_ip--> n cells, times aal5::segment_times(start, rate, b)
//!   --(access link)--> AtmPort::arrive(now, cell) -> Verdict
//!   output link ready: AtmPort::depart(now) -> Option<Cell>, one cell per aal5::cell_time(rate)
//!   --(bottleneck)--> Reassembler::receive(cell) -> Reassembled::Frame { frame = packet uid }
//! ```
//!
//! or, with about two engine wake-ups per frame instead of two events per cell, through
//! [`SwitchPort`] (`offer` a frame when its first bit reaches the switch, `advance` at
//! `poll_at()`), which gives exactly the same cells, times and drops.
//!
//! See docs/atm.md for the model, the formulas and the choices made where the seeds are silent.

pub mod aal5;
pub mod buffer;
pub mod cell;
pub mod port;
pub mod reassembly;
#[cfg(test)]
mod sim;
pub mod switch;

pub use aal5::{cell_end_time, CellClock, cell_time, cells_for_ip, cells_for_tcp_payload, max_goodput_bps, segment_times, wire_bytes_for_ip, CELL_BYTES};
pub use buffer::{bdp_cells, buffer_cells};
pub use cell::{frame_cells, Cell, CellSpan, VcId};
pub use port::{AtmPort, BodyMode, DropPolicy, DropReason, PortStats, VcCounters, Verdict, SEED_R, SEED_Z};
pub use reassembly::{DiscardReason, Reassembled, Reassembler, ReassemblyStats};
pub use switch::{InputId, SwitchPort};
