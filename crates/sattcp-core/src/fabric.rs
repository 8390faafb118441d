//! The ATM fabric of the seeds' dumbbell: two switches whose output ports toward the
//! bottleneck are simulated cell by cell (seed 000 Figure 2, §3-4).
//!
//! Port 0 is switch 1's port onto the bottleneck (sources -> sinks), port 1 switch 2's port onto
//! the reverse bottleneck (sinks -> sources). Each has one input per host access link, carrying
//! that host's VC (VC i for pair i, both ways). A host's IP packet becomes an AAL5 frame sent
//! back to back on its access link at the cell rate; the port sees each cell arrive at the
//! access rate, applies its UBR+ policy, and sends accepted cells at the bottleneck's cell rate.
//! At the far switch, cells are forwarded onto the destination's access link, which is faster
//! than the bottleneck and carries one VC, so no queue forms there: a frame is complete at the
//! destination one egress cell time plus the access delay after its last cell crossed the
//! bottleneck. The destination reassembles per VC (AAL5): a frame missing a cell or with a
//! corrupted cell is discarded and never delivered.

use crate::atm::{cell_time, AtmPort, Cell, DropPolicy, DropReason, Reassembled, Reassembler, SwitchPort};
use crate::engine::queue::TimerSlot;
use crate::engine::rng::Rng;
use crate::time::{Rate, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// One direction of the fabric.
pub struct Direction {
    pub port: SwitchPort,
    pub reasm: Reassembler,
    pub slot: TimerSlot,
    /// Per VC, the packet ids offered and not yet reassembled or discarded, in order. A frame
    /// dropped whole by the port never reaches reassembly; its id is released when a later
    /// frame of the same VC completes.
    outstanding: Vec<VecDeque<u32>>,
    /// Bit errors on the bottleneck, per cell.
    errors: Rng,
    p_cell_error: f64,
    pub cells_corrupted: u64,
}

/// What became of one frame at the far end.
pub enum FrameFate {
    /// Delivered at this time.
    Delivered { pkt: u32, at: SimTime },
    /// Lost: release the packet.
    Lost { pkt: u32 },
}

pub struct AtmFabric {
    pub dirs: [Direction; 2],
    /// Bottleneck delay + one egress cell time + access delay.
    pub egress_delay: SimTime,
    /// Cell time on the access links (for their statistics).
    pub access_cell: SimTime,
    pub cell_rate: Rate,
    cells: Vec<(SimTime, Cell)>,
}

impl AtmFabric {
    /// A fabric for `pairs` VCs: capacity in cells, policy, access and bottleneck cell rates,
    /// delays and the bottleneck's bit error rate.
    #[allow(clippy::too_many_arguments)]
    pub fn new(pairs: u32, capacity: u32, policy: DropPolicy, access_rate: Rate, access_delay: SimTime, bottleneck_rate: Rate, bottleneck_delay: SimTime, ber: f64, errors: [Rng; 2]) -> Result<Self, String> {
        // P(cell corrupted) = 1 - (1 - BER)^424.
        let p_cell_error = if ber > 0.0 { -libm::expm1(424.0 * libm::log1p(-ber)) } else { 0.0 };
        let [e0, e1] = errors;
        let mk = |errors: Rng| -> Result<Direction, String> {
            let mut port = SwitchPort::new(AtmPort::new(capacity, policy)?, bottleneck_rate);
            for _ in 0..pairs {
                port.add_input(access_rate);
            }
            Ok(Direction { port, reasm: Reassembler::new(), slot: TimerSlot::default(), outstanding: vec![VecDeque::new(); pairs as usize], errors, p_cell_error, cells_corrupted: 0 })
        };
        let dirs = [mk(e0)?, mk(e1)?];
        Ok(AtmFabric { dirs, egress_delay: bottleneck_delay + cell_time(access_rate) + access_delay, access_cell: cell_time(access_rate), cell_rate: bottleneck_rate, cells: Vec::with_capacity(256) })
    }

    /// A frame of `n_cells` for packet `pkt` on VC `vc` starts reaching port `dir` at
    /// `first_bit_at`. Returns the time at which the port must next be advanced, if a new
    /// wake-up is needed.
    pub fn offer(&mut self, dir: usize, vc: u32, first_bit_at: SimTime, pkt: u32, n_cells: u32) -> Option<SimTime> {
        let d = &mut self.dirs[dir];
        d.port.offer(vc, first_bit_at, vc, pkt as u64, n_cells);
        d.outstanding[vc as usize].push_back(pkt);
        d.slot.arm(d.port.poll_at())
    }

    /// Advances port `dir` to `now` if the wake-up is live; reports each frame's fate to `fate`.
    /// Returns the next wake-up to schedule, if any.
    pub fn wake(&mut self, dir: usize, now: SimTime, mut fate: impl FnMut(FrameFate)) -> Option<SimTime> {
        let egress = self.egress_delay;
        let d = &mut self.dirs[dir];
        if !d.slot.fire(now) {
            return None;
        }
        let cells = &mut self.cells;
        cells.clear();
        d.port.advance(now, |t, c| cells.push((t, c)));
        for &(t, mut cell) in cells.iter() {
            if d.p_cell_error > 0.0 && d.errors.bernoulli(d.p_cell_error) {
                cell.corrupt();
                d.cells_corrupted += 1;
            }
            let (last, delivered) = match d.reasm.receive(cell) {
                Reassembled::Pending => continue,
                Reassembled::Frame { frame, .. } => (frame as u32, true),
                Reassembled::Discarded { frame, .. } => (frame as u32, false),
            };
            // Frames of this VC before `last` that never completed were dropped whole.
            let q = &mut d.outstanding[cell.vc as usize];
            while let Some(id) = q.pop_front() {
                if id == last {
                    break;
                }
                fate(FrameFate::Lost { pkt: id });
            }
            fate(if delivered { FrameFate::Delivered { pkt: last, at: t + egress } } else { FrameFate::Lost { pkt: last } });
        }
        d.slot.arm(d.port.poll_at().map(|t| t.max(now)))
    }

    /// Brings both ports' statistics up to `end` (cells that left after the last wake-up are
    /// counted; their frames are not delivered, the run being over).
    pub fn close(&mut self, end: SimTime) {
        for d in &mut self.dirs {
            if d.port.now() < end {
                d.port.advance(end, |_, _| {});
            }
        }
    }

    /// Cells dropped by the port of `dir`, by reason ("cells_epd", "cells_ppd", ...).
    pub fn drops_by_reason(&self, dir: usize) -> BTreeMap<String, u64> {
        let st = self.dirs[dir].port.port().stats();
        DropReason::ALL.iter().map(|&r| (format!("cells_{}", r.name()), st.dropped_for(r))).filter(|(_, n)| *n > 0).collect()
    }
}
