//! The packet log as the world's packet tap (`net::tap`): turns the world's packet events,
//! which name hops, into the log's events, which name links and nodes.
//!
//! | tap event | log events |
//! |---|---|
//! | `Sent` | `sent` at the source host (no link) |
//! | `Queued { hop, depart }` | `queued` now on the link that serialises the packet; `dequeued` when its transmission starts (`depart` less the transmission time) |
//! | `Dropped { hop: Some, .. }` | `dropped` on that link (an ATM frame's: on the port's out link) |
//! | `Dropped { hop: None, Scripted }` | `sent`, then `dropped`, at the sending host (no link) |
//! | `Dropped { hop: None, Corrupted }` | `dropped` on the link that last carried the packet, at its far end |
//! | `Received` | `received` at the destination host (no link) |

use super::memory::MemorySource;
use super::{DropReason, EventKind, FlowEnds, LinkInfo, PacketFilter, PacketLog, NO_LINK};
use crate::atm::{cells_for_ip, CELL_BYTES};
use crate::net::packet::{Dir, FlowId, Packet, Segment};
use crate::net::tap::{PacketEvent, PacketTap, TapDrop};
use crate::time::{Rate, SimTime};
use rustc_hash::FxHashMap;

/// How the recorder finds the link of a hop's event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HopLinks {
    /// An IP link hop: its link.
    Link(u32),
    /// An ATM port: packets are queued on their host's access link (the flow's first link in
    /// their direction) as cells; frames are lost at the port, on `out`.
    Atm { out: u32 },
}

/// A [`PacketLog`] recording a world's packet events.
pub struct PacketRecorder {
    log: PacketLog,
    hops: Vec<HopLinks>,
    /// Per flow, the first link of its data and of its ACKs (where an ATM hop queues them).
    first_links: Vec<[u32; 2]>,
    rates: Vec<Rate>,
    /// The link that last accepted each packet in flight (uid), for drops at the far end: only
    /// looked up, never iterated, so its order cannot reach a result. Fx hashing (rustc-hash):
    /// the keys are our own sequential uids, so the default SipHash's defence against chosen
    /// keys buys nothing here. `valgrind --tool=callgrind target/release/examples/bench --kv
    /// scenarios/geo-dumbbell-droptail.toml --set trace.packets=all --set run.duration=30s`
    /// (the whole process, same digest): 310.2 M instructions with SipHash, 289.9 M with Fx.
    last_link: FxHashMap<u64, u32>,
}

impl PacketRecorder {
    /// A recorder for a world: its flows, links (with their rates), hops and, per flow, the
    /// first link of data and of ACKs; its log's bound and where it reads the memory available.
    pub fn new(flows: Vec<FlowEnds>, links: Vec<LinkInfo>, hops: Vec<HopLinks>, first_links: Vec<[u32; 2]>, filter: &PacketFilter, max_events: u64, memory: MemorySource) -> Self {
        let rates = links.iter().map(|l| Rate(l.rate_bps.max(1))).collect();
        PacketRecorder { log: PacketLog::new(flows, links, filter, max_events).with_memory(memory), hops, first_links, rates, last_link: FxHashMap::default() }
    }

    fn link_of(&self, hop: u32, flow: FlowId, dir: Dir) -> u32 {
        match self.hops.get(hop as usize) {
            Some(HopLinks::Link(l)) => *l,
            Some(HopLinks::Atm { .. }) => self.first_links.get(flow as usize).map_or(NO_LINK, |f| f[(dir == Dir::Ack) as usize]),
            None => NO_LINK,
        }
    }

    fn ends_of(&self, link: u32) -> (u32, u32) {
        self.log.links.get(link as usize).map_or((u32::MAX, u32::MAX), |l| (l.from, l.to))
    }

    pub fn log(&self) -> &PacketLog {
        &self.log
    }
}

impl PacketTap for PacketRecorder {
    fn event(&mut self, now: SimTime, ev: PacketEvent, p: &Packet, seg: &Segment) {
        let rec = |log: &mut PacketLog, at: SimTime, kind: EventKind, reason: DropReason, link: u32, node: u32| log.record(now, at, kind, reason, link, node, p.uid, p.flow, p.dir, seg);
        match ev {
            PacketEvent::Sent => rec(&mut self.log, now, EventKind::Sent, DropReason::None, NO_LINK, p.src),
            PacketEvent::Received => {
                self.last_link.remove(&p.uid);
                rec(&mut self.log, now, EventKind::Received, DropReason::None, NO_LINK, p.dst)
            }
            PacketEvent::Queued { hop, depart } => {
                let link = self.link_of(hop, p.flow, p.dir);
                let from = self.ends_of(link).0;
                self.last_link.insert(p.uid, link);
                rec(&mut self.log, now, EventKind::Queued, DropReason::None, link, from);
                if let (Some(depart), Some(rate)) = (depart, self.rates.get(link as usize)) {
                    // An ATM hop's access link carries the frame as cells.
                    let wire = match self.hops.get(hop as usize) {
                        Some(HopLinks::Atm { .. }) => cells_for_ip(p.bytes as u64) * CELL_BYTES,
                        _ => p.bytes as u64,
                    };
                    let start = depart.saturating_sub(rate.tx_time(wire)).max(now);
                    rec(&mut self.log, start, EventKind::Dequeued, DropReason::None, link, from);
                }
            }
            PacketEvent::Dropped { hop, reason } => {
                let why = match reason {
                    TapDrop::Scripted => DropReason::Scripted,
                    TapDrop::QueueFull => DropReason::QueueFull,
                    TapDrop::Corrupted => DropReason::Corrupted,
                    TapDrop::Frame => DropReason::AtmFrame,
                    TapDrop::NoRoute => DropReason::NoRoute,
                };
                let last = self.last_link.remove(&p.uid);
                let (link, node) = match (hop, reason) {
                    (Some(h), TapDrop::Frame) => {
                        let out = match self.hops.get(h as usize) {
                            Some(HopLinks::Atm { out }) | Some(HopLinks::Link(out)) => *out,
                            None => NO_LINK,
                        };
                        (out, self.ends_of(out).0)
                    }
                    (Some(h), _) => {
                        let link = self.link_of(h, p.flow, p.dir);
                        (link, self.ends_of(link).0)
                    }
                    (None, TapDrop::Corrupted) => {
                        let link = last.unwrap_or(NO_LINK);
                        (link, if link == NO_LINK { p.dst } else { self.ends_of(link).1 })
                    }
                    (None, _) => {
                        // A scripted loss at the sender: its TCP did send the segment.
                        rec(&mut self.log, now, EventKind::Sent, DropReason::None, NO_LINK, p.src);
                        (NO_LINK, p.src)
                    }
                };
                rec(&mut self.log, now, EventKind::Dropped, why, link, node);
            }
        }
    }

    fn into_packet_log(self: Box<Self>) -> Option<PacketLog> {
        Some(self.log)
    }
}
