//! An ATM switch output port as a hop (seed 000 Figure 2, §3-4): the hosts' access links feed
//! it cell by cell, it applies its UBR+ policy, and the bottleneck link behind it carries the
//! accepted cells to the far switch and on to the destination hosts, which reassemble frames.
//!
//! The seeds' dumbbell has two of these hops: switch 1's port onto the bottleneck (sources ->
//! sinks) and switch 2's port onto the reverse bottleneck (sinks -> sources). Each has one
//! input per host access link, carrying that host's VC (VC i for pair i, both ways). A host's
//! IP packet becomes an AAL5 frame sent back to back on its access link at the cell rate; the
//! port sees each cell arrive at the access rate, applies its policy, and sends accepted cells
//! at the bottleneck's cell rate. At the far switch, cells are forwarded onto the destination's
//! access link, which is faster than the bottleneck and carries one VC, so no queue forms
//! there: a frame is complete at the destination one egress cell time plus the access delay
//! after its last cell crossed the bottleneck. The destination reassembles per VC (AAL5): a
//! frame missing a cell or with a corrupted cell is discarded and never delivered.
//!
//! Drop decisions made here: the port's policy (`atm::port`, per cell: tail drop, PPD, EPD, SD,
//! FBA) and the reassembly of frames that lost or corrupted a cell ([`AtmHop::wake`]).

use crate::atm::{cell_time, cells_for_ip, AtmPort, DropPolicy, DropReason, Reassembled, Reassembler, SwitchPort, CELL_BYTES};
use crate::engine::queue::TimerSlot;
use crate::engine::rng::Rng;
use crate::metrics::result::LinkResult;
use crate::net::link::{Admit, Link};
use crate::net::packet::Packet;
use crate::time::{Rate, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// Index of a link in the world's table of one-way links.
pub type LinkId = u32;

/// What became of one frame at the far end.
pub enum FrameFate {
    /// Delivered to its destination host at this time.
    Delivered { pkt: u32, at: SimTime },
    /// Lost (dropped by the port's policy or discarded by reassembly): release the packet.
    Lost { pkt: u32 },
}

/// One ATM switch port with its inputs (host access links, one VC each), its output link and
/// the egress links into the far hosts.
pub struct AtmHop {
    pub port: SwitchPort,
    pub reasm: Reassembler,
    slot: TimerSlot,
    /// Per VC, the access link that feeds the port (cells are framed and serialised on it).
    ingress: Vec<LinkId>,
    /// Per VC, the link from the far switch into the destination host, where delivered frames
    /// are counted.
    egress: Vec<LinkId>,
    /// The one-way link behind the port (the bottleneck), whose results the port's figures give.
    pub out_link: LinkId,
    /// Per VC, the packet ids offered and not yet reassembled or discarded, in order. A frame
    /// dropped whole by the port never reaches reassembly; its id is released when a later
    /// frame of the same VC completes.
    /// Each with its frame's length in cells.
    outstanding: Vec<VecDeque<(u32, u32)>>,
    /// Bit errors on the output link, per cell.
    errors: Rng,
    p_cell_error: f64,
    pub cells_corrupted: u64,
    /// Output link delay + one egress cell time + egress delay.
    egress_delay: SimTime,
    /// How late the port may be advanced: the egress delay, unless its wake-ups are watched
    /// (`set_eager`). A frame whose last cell leaves at t reaches its host at t + egress delay,
    /// so a wake-up up to that much after the port's `poll_at` still schedules every delivery
    /// at its own time, and one wake-up then serves every frame that left in between: the
    /// study's WAN run has 3.2 times fewer events (issue 15, bench/README.md "The ATM ports
    /// woken late"). The port's cells, times and drops do not depend on when it is advanced
    /// (`switch::tests::driving_late_equals_per_cell_events`).
    slack: SimTime,
    /// Cell time on the egress links (for their statistics).
    egress_cell: SimTime,
    /// The output link's cell rate.
    pub cell_rate: Rate,
}

/// How to build an [`AtmHop`].
pub struct AtmHopSpec {
    /// Buffer in cells.
    pub capacity: u32,
    pub policy: DropPolicy,
    /// Partial packet discard for frame-aware policies (`switch.partial_packet_discard`).
    pub partial_discard: bool,
    /// Cell rate of the output link and its delay and bit error rate.
    pub out_rate: Rate,
    pub out_delay: SimTime,
    pub out_ber: f64,
    pub out_link: LinkId,
    /// Cell rate and delay of the egress links into the far hosts.
    pub egress_rate: Rate,
    pub egress_delay: SimTime,
    /// Per VC: (access link feeding the port, its cell rate, egress link into the far host).
    pub vcs: Vec<(LinkId, Rate, LinkId)>,
}

impl AtmHop {
    pub fn new(spec: AtmHopSpec, errors: Rng) -> Result<Self, String> {
        // P(cell corrupted) = 1 - (1 - BER)^424.
        let ber = spec.out_ber;
        let p_cell_error = if ber > 0.0 { -libm::expm1(424.0 * libm::log1p(-ber)) } else { 0.0 };
        let egress_delay = spec.out_delay + cell_time(spec.egress_rate) + spec.egress_delay;
        let mut port = SwitchPort::new(AtmPort::new(spec.capacity, spec.policy)?.with_partial_packet_discard(spec.partial_discard), spec.out_rate);
        for &(_, rate, _) in &spec.vcs {
            port.add_input(rate);
        }
        Ok(AtmHop {
            port,
            reasm: Reassembler::new(),
            slot: TimerSlot::default(),
            ingress: spec.vcs.iter().map(|v| v.0).collect(),
            egress: spec.vcs.iter().map(|v| v.2).collect(),
            out_link: spec.out_link,
            outstanding: vec![VecDeque::new(); spec.vcs.len()],
            errors,
            p_cell_error,
            cells_corrupted: 0,
            egress_delay,
            slack: egress_delay,
            egress_cell: cell_time(spec.egress_rate),
            cell_rate: spec.out_rate,
        })
    }

    /// Sends packet `pkt` as an AAL5 frame on VC `vc`'s access link into the port. Returns
    /// whether the access link accepted it and the time at which the port must next be
    /// advanced, if a new wake-up is needed.
    #[inline]
    pub fn offer(&mut self, now: SimTime, vc: u32, pkt: u32, p: &mut Packet, links: &mut [Link]) -> (Admit, Option<SimTime>) {
        let cells = cells_for_ip(p.bytes as u64);
        let wire = cells * CELL_BYTES;
        let l = &mut links[self.ingress[vc as usize] as usize];
        let admit = l.enqueue(now, wire as u32);
        let Admit::Sent { arrival, corrupted } = admit else { return (admit, None) };
        p.corrupted = corrupted;
        let first_bit_at = arrival - l.rate.tx_time(wire);
        self.port.offer(vc, first_bit_at, vc, pkt as u64, cells as u32);
        self.outstanding[vc as usize].push_back((pkt, cells as u32));
        (admit, self.slot.arm(self.port.poll_at().map(|t| t + self.slack)))
    }

    /// Wakes the port at its own `poll_at` times, without slack: for runs that watch its
    /// wake-ups (a packet tap records a lost frame at the wake-up that finds it; a queue trace
    /// samples the buffer at each). Call before the run.
    pub fn set_eager(&mut self) {
        self.slack = SimTime::ZERO;
    }

    /// Advances the port to `now` if the wake-up is live; reports each frame's fate to `fate`
    /// (delivered frames are counted on their egress link). Returns the next wake-up to
    /// schedule, if any.
    pub fn wake(&mut self, now: SimTime, links: &mut [Link], mut fate: impl FnMut(FrameFate)) -> Option<SimTime> {
        if !self.slot.fire(now) {
            return None;
        }
        self.advance(now, links, &mut fate);
        self.slot.arm(self.port.poll_at().map(|t| (t + self.slack).max(now)))
    }

    /// Advances the port to `until`, reassembling the cells that left by then.
    fn advance(&mut self, until: SimTime, links: &mut [Link], fate: &mut impl FnMut(FrameFate)) {
        // Cells are reassembled as the port reports them, a run of one frame's cells at a time
        // (no buffer of the cells in between: the port's cell path does not depend on what
        // happens to the cells after they leave).
        self.port.advance(until, |sent| {
            let mut cells = sent.cells;
            if self.p_cell_error > 0.0 {
                // One draw per cell, in the order the cells left (the stream's order is the
                // same as when each cell was handed over on its own).
                for _ in 0..cells.count {
                    if self.errors.bernoulli(self.p_cell_error) {
                        cells.corrupt();
                        self.cells_corrupted += 1;
                    }
                }
            }
            let (last, delivered) = match self.reasm.receive_span(cells) {
                Reassembled::Pending => return,
                Reassembled::Frame { frame, .. } => (frame as u32, true),
                Reassembled::Discarded { frame, .. } => (frame as u32, false),
            };
            // Frames of this VC before `last` that never completed were dropped whole.
            let q = &mut self.outstanding[cells.vc as usize];
            let mut n = 0;
            while let Some((id, cells)) = q.pop_front() {
                if id == last {
                    n = cells as u64;
                    break;
                }
                fate(FrameFate::Lost { pkt: id });
            }
            if delivered {
                // Account the frame on the destination's access link.
                let st = &mut links[self.egress[cells.vc as usize] as usize].stats;
                st.packets += 1;
                st.bytes += n * CELL_BYTES;
                st.busy_ns += self.egress_cell.0 * n;
                fate(FrameFate::Delivered { pkt: last, at: sent.end() + self.egress_delay });
            } else {
                fate(FrameFate::Lost { pkt: last });
            }
        });
    }

    /// The access link that VC `vc` feeds the port through.
    pub fn ingress(&self, vc: u32) -> LinkId {
        self.ingress[vc as usize]
    }

    /// Cells buffered (for traces).
    pub fn occupancy(&self) -> u32 {
        self.port.port().occupancy()
    }

    /// Brings the port's figures up to `end`: the cells that left after the last wake-up are
    /// counted, and reassembled as a wake-up at `end` would (frames complete by then are
    /// counted delivered or discarded, on the egress links too; none reaches its host, the run
    /// being over). The same figures whatever the slack.
    pub fn close(&mut self, end: SimTime, links: &mut [Link]) {
        if self.port.now() < end {
            self.advance(end, links, &mut |_| {});
        }
    }

    /// Cells dropped by the port, by reason ("cells_epd", "cells_ppd", ...).
    pub fn drops_by_reason(&self) -> BTreeMap<String, u64> {
        let st = self.port.port().stats();
        DropReason::ALL.iter().map(|&r| (format!("cells_{}", r.name()), st.dropped_for(r))).filter(|(_, n)| *n > 0).collect()
    }

    /// The output link's result, from the port's figures in cells: packet fields count frames
    /// (IP packets), as on IP links; cell figures have their own fields.
    pub fn report(&self, lr: &mut LinkResult, end: SimTime) {
        let st = self.port.port().stats();
        let rs = self.reasm.stats();
        let cell = cell_time(self.cell_rate);
        lr.packets = rs.frames_delivered + rs.discarded();
        lr.drops_queue_full = st.frames_dropped_whole + st.frames_truncated;
        lr.drops_corrupted = rs.discarded_corrupted;
        lr.bytes = st.departed * CELL_BYTES;
        lr.utilization = (st.departed * cell.0).min(end.0) as f64 / end.0.max(1) as f64;
        lr.cells = Some(st.departed);
        lr.cells_arrived = Some(st.arrived);
        lr.cells_dropped = Some(st.dropped());
        lr.cells_corrupted = Some(self.cells_corrupted);
        lr.cells_buffered = Some(self.occupancy() as u64);
        lr.peak_queue_packets = None;
        lr.peak_queue_cells = Some(st.peak_occupancy as u64);
        lr.peak_queue_bytes = st.peak_occupancy as u64 * CELL_BYTES;
        let mean_cells = self.port.port().mean_occupancy(end);
        lr.mean_queue_cells = Some(mean_cells);
        lr.mean_queue_bytes = mean_cells * CELL_BYTES as f64;
        lr.frames_discarded = Some(rs.discarded());
        lr.drops_by_reason = self.drops_by_reason();
        if self.cells_corrupted > 0 {
            lr.drops_by_reason.insert("cells_corrupted".into(), self.cells_corrupted);
        }
    }
}
