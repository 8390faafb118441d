//! Packet taps: the single points where a packet's life events happen, for packet traces.
//!
//! The world calls [`Tap::event`] at each of them (`world::World::send`, `forward`, `arrive`,
//! the ATM hop's fates); with no tap installed the call is one predictable branch. The
//! events and where they happen:
//!
//! | event | where |
//! |---|---|
//! | `Sent` | a host puts a TCP segment on the wire (`World::send`) |
//! | `Dropped { reason: Scripted }` | a scripted loss matched (`World::send` at the sender, `World::forward` at a link) |
//! | `Queued` | a hop accepted the packet (`World::forward`); `depart` is when its last bit leaves (IP links) |
//! | `Dropped { reason: QueueFull }` | the hop's drop-tail queue refused it (`World::forward`) |
//! | `Dropped { reason: Corrupted }` | the far node discards a packet a bit error corrupted (`World::arrive`) |
//! | `Dropped { reason: Frame }` | an ATM frame lost a cell or was discarded at reassembly (`World::hop_wake`) |
//! | `Received` | the destination host's TCP takes the segment (`World::arrive`) |

use super::hop::HopId;
use super::packet::{Packet, SackPool, Segment};
use crate::time::SimTime;

/// Why a packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TapDrop {
    Scripted,
    QueueFull,
    Corrupted,
    /// An ATM frame that lost or corrupted a cell (the cell-level reason is in the port's counters).
    Frame,
    /// A moving link had no path (net::schedule).
    NoRoute,
}

/// One event in a packet's life.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    Sent,
    /// Accepted by `hop`; `depart` is when it finishes transmission (IP links), if known.
    Queued { hop: HopId, depart: Option<SimTime> },
    /// Dropped at `hop` (`None`: at the sending host, before any hop).
    Dropped { hop: Option<HopId>, reason: TapDrop },
    Received,
}

/// A recorder of packet events.
pub trait PacketTap: Send + Sync {
    /// `p` with `seg`, its whole segment (the header `p.seg` with its SACK blocks, which the
    /// world keeps beside the packet).
    fn event(&mut self, now: SimTime, ev: PacketEvent, p: &Packet, seg: &Segment);
    /// The packet log this tap kept, at the end of the run (`trace::recorder`).
    fn into_packet_log(self: Box<Self>) -> Option<crate::trace::PacketLog> {
        None
    }
}

/// An optional tap.
#[derive(Default)]
pub struct Tap(Option<Box<dyn PacketTap>>);

impl Tap {
    pub fn new(tap: Box<dyn PacketTap>) -> Self {
        Tap(Some(tap))
    }

    /// `sacks`: where `p`'s SACK blocks are (looked at only with a tap installed).
    #[inline(always)]
    pub fn event(&mut self, now: SimTime, ev: PacketEvent, p: &Packet, sacks: &SackPool) {
        if let Some(t) = &mut self.0 {
            t.event(now, ev, p, &sacks.segment(p));
        }
    }

    /// [`event`](Self::event) for a packet not yet in the world's slab, with its segment.
    #[inline(always)]
    pub fn event_segment(&mut self, now: SimTime, ev: PacketEvent, p: &Packet, seg: &Segment) {
        if let Some(t) = &mut self.0 {
            t.event(now, ev, p, seg);
        }
    }

    #[inline(always)]
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Removes the tap (at the end of the run).
    pub fn take(&mut self) -> Option<Box<dyn PacketTap>> {
        self.0.take()
    }
}
