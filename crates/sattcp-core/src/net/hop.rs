//! Hops: the places where a packet leaving a node is queued, may be dropped, and is carried to
//! the next node. A node's route names a [`Via`]: a hop and, for hops fed by several inputs (an
//! ATM port's VCs), which input.
//!
//! Kinds (enum dispatch, no allocation or virtual call per packet):
//! - [`Hop::Link`]: a one-way IP link with its FIFO drop-tail queue (`net::link`). Its packets
//!   in flight wait in a FIFO and only the head is in the event queue.
//! - [`Hop::Atm`]: an ATM switch port fed by host access links and followed by the output link
//!   and the far hosts' reassembly (`net::atm_hop`), advanced by wake-ups about twice a frame.
//! - [`Hop::Moving`]: an IP link whose delay (rate, BER) changes over time (`net::schedule`).
//! - [`Hop::Custom`]: any other kind, defined outside this crate's hop code by implementing
//!   [`HopModel`] (a test's toy, an experiment's middlebox). One virtual call per packet event
//!   for that kind only: the built-in kinds above keep their static dispatch.
//!
//! Each kind answers the same questions: offer a packet ([`Hop::offer`]), what its scheduled
//! event does ([`Hop::arrive`] for links, [`Hop::wake`] for ports), its maximum TCP goodput C
//! ([`Hop::capacity_bps`], the one place C is computed), and its results.
//!
//! Adding a kind: for one that the crate's scenarios select, a variant here, its `offer`, its
//! event (`arrive` or `wake`), `capacity_bps` and `report`; for any other, a type implementing
//! [`HopModel`] put into the network as `Hop::Custom` (`Simulation::with_parts`). The world
//! calls only these; it never names a hop kind (`tests/nodes.rs` adds one without touching it).

use super::atm_hop::{AtmHop, FrameFate};
use super::link::{Admit, Link};
use super::packet::{NodeId, Packet, IP_HEADER, TCP_HEADER};
use super::schedule::MovingHop;
use crate::atm::max_goodput_bps;
use crate::metrics::result::LinkResult;
use crate::time::SimTime;
use std::collections::VecDeque;

pub use super::atm_hop::LinkId;

/// Index of a hop in the world.
pub type HopId = u32;

/// No packet (a packet index that is never used).
pub const NO_PACKET: u32 = u32::MAX;

/// Where a node sends a packet: a hop and the hop's input (0 for single-input hops).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Via {
    pub hop: HopId,
    pub input: u32,
}

impl Via {
    pub const NONE: Via = Via { hop: u32::MAX, input: 0 };
    pub const fn hop(hop: HopId) -> Via {
        Via { hop, input: 0 }
    }
}

/// The packets in flight on a link hop: a FIFO whose head is kept inline, so that a link with
/// at most one packet in flight (most access links) never reads a second cache line: with
/// 10,000+ flows each such line is a likely cache miss (issue 15, bench/README.md).
struct Flight {
    head_at: SimTime,
    /// `NO_PACKET`: nothing in flight.
    head: u32,
    /// The packets after the head, in order.
    rest: VecDeque<(SimTime, u32)>,
}

impl Flight {
    fn new() -> Self {
        Flight { head_at: SimTime::ZERO, head: NO_PACKET, rest: VecDeque::new() }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.head == NO_PACKET
    }

    #[inline]
    fn front(&self) -> Option<(SimTime, u32)> {
        (!self.is_empty()).then_some((self.head_at, self.head))
    }

    /// The packet `k` places behind the head (`k` >= 1), if that many are in flight.
    #[inline]
    fn behind_head(&self, k: usize) -> Option<u32> {
        self.rest.get(k - 1).map(|&(_, p)| p)
    }

    /// Where the entry `k` places behind the head is kept (`k` >= 1), if that many are in
    /// flight: for prefetching the FIFO itself (its address only; nothing is read).
    #[inline]
    fn entry_behind_head(&self, k: usize) -> Option<*const u8> {
        self.rest.get(k - 1).map(|e| e as *const (SimTime, u32) as *const u8)
    }

    fn last_arrival(&self) -> Option<SimTime> {
        self.rest.back().map(|&(t, _)| t).or(self.front().map(|(t, _)| t))
    }

    #[inline]
    fn push_back(&mut self, at: SimTime, pkt: u32) {
        if self.is_empty() {
            (self.head_at, self.head) = (at, pkt);
        } else {
            self.rest.push_back((at, pkt));
        }
    }

    #[inline]
    fn pop_front(&mut self) -> Option<(SimTime, u32)> {
        let front = self.front()?;
        (self.head_at, self.head) = self.rest.pop_front().unwrap_or((SimTime::ZERO, NO_PACKET));
        Some(front)
    }
}

/// A drop-tail IP link as a hop.
pub struct LinkHop {
    pub link: LinkId,
    /// The link's far node (a copy of `Link::to`: an arrival reads only the hop's line).
    to: NodeId,
    /// The packets in flight (arrival time at the far node, packet), in arrival order: a link
    /// delivers in the order it sends (one rate, one delay).
    in_flight: Flight,
}

impl LinkHop {
    /// The link's decision on `p` at `now` (drop-tail queue, bit errors: `p.corrupted`),
    /// without putting it in flight: [`keep`](Self::keep) does that, or the world carries the
    /// packet on through the next hop at its arrival time (hop chaining, `world`).
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, p: &mut Packet, links: &mut [Link]) -> Admit {
        let admit = links[self.link as usize].enqueue(now, p.bytes);
        if let Admit::Sent { corrupted, .. } = admit {
            p.corrupted = corrupted;
        }
        admit
    }

    /// The link's far node.
    #[inline]
    pub fn to(&self) -> NodeId {
        self.to
    }

    /// Puts packet `pkt`, which arrives at `arrival`, in flight: an arrival event to schedule
    /// if it is the head. (Hop chaining keeps the instant each packet entered beside the hop,
    /// `world`.)
    #[inline]
    pub fn keep(&mut self, arrival: SimTime, pkt: u32) -> Next {
        debug_assert!(self.in_flight.last_arrival().is_none_or(|t| t < arrival), "a link delivers in order");
        let next = if self.in_flight.is_empty() { Next::Arrive(arrival) } else { Next::Nothing };
        self.in_flight.push_back(arrival, pkt);
        next
    }
}

/// One cache line each (`repr(align(64))`: a `Vec<Hop>` puts no hop across two lines; with
/// 10,000 flows there are 40,000 access-link hops and each packet's hop is a likely cache
/// miss; issue 15, bench/README.md).
#[repr(align(64))]
pub enum Hop {
    Link(LinkHop),
    Atm(Box<AtmHop>),
    /// An IP link whose delay (rate, BER) changes over time and may reorder (net::schedule).
    Moving(Box<MovingHop>),
    /// A kind defined elsewhere ([`HopModel`]), dispatched by a virtual call.
    Custom(Box<dyn HopModel>),
}

/// A hop kind defined outside this file: the questions every hop answers (see [`Hop`]'s
/// methods of the same names), through a virtual call. A custom hop carries packets as a link
/// does (its [`arrive`](HopModel::arrive) events deliver its packets in the order it returns
/// them, the head's time each) or as a port does (its [`wake`](HopModel::wake) hands each
/// packet's fate to the world); it usually serialises onto one of the world's `links`, whose
/// statistics become its results. It drops a packet by returning [`Admit::Dropped`] from
/// `offer` (counted by whoever decided it: `Link::enqueue` counts its own; a hop's own policy
/// counts in its link's `stats`) or [`FrameFate::Lost`] from `wake`. (`Send + Sync`: a
/// simulation moves between threads in the Python bindings.)
pub trait HopModel: Send + Sync {
    /// Offers packet `pkt` (`p`) at `now` on `input`: accept or drop it, and say what the world
    /// must schedule (`Next::Arrive` for the head of a FIFO, `Next::Wake` for internal work).
    fn offer(&mut self, now: SimTime, input: u32, pkt: u32, p: &mut Packet, links: &mut [Link]) -> Offered;

    /// Its head packet reached the far node at `now` (after a `Next::Arrive`): the packet, the
    /// node, and the next arrival to schedule. `None`: a stale event, nothing arrives.
    fn arrive(&mut self, now: SimTime, links: &[Link]) -> Option<(u32, NodeId, Option<SimTime>)> {
        let _ = (now, links);
        None
    }

    /// A wake-up it asked for (`Next::Wake`) at `now`: report each packet's fate, return the
    /// next wake-up.
    fn wake(&mut self, now: SimTime, links: &mut [Link], fate: &mut dyn FnMut(FrameFate)) -> Option<SimTime> {
        let _ = (now, links, fate);
        None
    }

    /// C for segments of `mss` bytes; by default that of an IP link at its output link's rate.
    fn capacity_bps(&self, links: &[Link], mss: u32) -> f64 {
        ip_goodput_bps(links[self.out_link() as usize].rate.as_bps() as f64, mss)
    }

    /// The link whose figures this hop gives.
    fn out_link(&self) -> LinkId;

    /// The link a packet entering through `input` is serialised on first.
    fn first_link(&self, input: u32) -> LinkId {
        let _ = input;
        self.out_link()
    }

    /// Closes its statistics at the end of the run.
    fn close(&mut self, end: SimTime) {
        let _ = end;
    }

    /// Writes what it knows into its output link's result.
    fn report(&self, lr: &mut LinkResult, end: SimTime) {
        let _ = (lr, end);
    }
}

/// C of an IP link: rate x MSS / (MSS + 40), the rate left after TCP/IP headers.
fn ip_goodput_bps(rate_bps: f64, mss: u32) -> f64 {
    let mss = mss as f64;
    rate_bps * mss / (mss + (IP_HEADER + TCP_HEADER) as f64)
}

/// What the world must schedule after a hop accepted a packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing new.
    Nothing,
    /// A [`Hop::arrive`] event at this time (the packet became the head of a link's flight).
    Arrive(SimTime),
    /// A [`Hop::wake`] event at this time.
    Wake(SimTime),
}

/// What offering a packet to a hop decided.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Offered {
    /// The decision of the link that serialises the packet (drop-tail queue, bit errors).
    pub admit: Admit,
    pub next: Next,
}

impl Hop {
    /// A link hop on link `link`, whose far node is `to`.
    pub fn link(link: LinkId, to: NodeId) -> Hop {
        Hop::Link(LinkHop { link, to, in_flight: Flight::new() })
    }

    /// Offers packet `pkt` (`p`) at `now` on `input`. Drop decisions: the link's drop-tail
    /// queue and bit errors (`Link::enqueue`); for ATM also the port's policy later, per cell.
    #[inline]
    pub fn offer(&mut self, now: SimTime, input: u32, pkt: u32, p: &mut Packet, links: &mut [Link]) -> Offered {
        match self {
            Hop::Link(h) => {
                let admit = h.enqueue(now, p, links);
                let mut next = Next::Nothing;
                if let Admit::Sent { arrival, .. } = admit {
                    next = h.keep(arrival, pkt);
                }
                Offered { admit, next }
            }
            Hop::Atm(a) => {
                let (admit, wake) = a.offer(now, input, pkt, p, links);
                Offered { admit, next: wake.map_or(Next::Nothing, |t| Next::Wake(t.max(now))) }
            }
            Hop::Moving(m) => {
                let (admit, next) = m.offer(now, pkt, p.bytes, &mut links[m.link as usize]);
                if let Admit::Sent { corrupted, .. } = admit {
                    p.corrupted = corrupted;
                }
                Offered { admit, next: next.map_or(Next::Nothing, Next::Arrive) }
            }
            Hop::Custom(c) => c.offer(now, input, pkt, p, links),
        }
    }

    /// A link's head packet reached the far node at `now`: returns it, the node, and the next
    /// arrival to schedule (None: a moving link's stale event, nothing arrives).
    #[inline]
    pub fn arrive(&mut self, now: SimTime, links: &[Link]) -> Option<(u32, u32, Option<SimTime>)> {
        match self {
            Hop::Link(h) => {
                let (t, pkt) = h.in_flight.pop_front().expect("a packet in flight");
                debug_assert_eq!(t, now);
                Some((pkt, h.to, h.in_flight.front().map(|(t, _)| t)))
            }
            Hop::Moving(m) => m.flight.arrive(now).map(|(pkt, next)| (pkt, links[m.link as usize].to, next)),
            Hop::Atm(_) => unreachable!("ATM hops deliver through wake"),
            Hop::Custom(c) => c.arrive(now, links),
        }
    }

    /// Wakes at the hop's own times, without slack (ATM ports: `AtmHop::set_eager`), for a run
    /// whose taps or traces watch its wake-ups.
    pub fn set_eager(&mut self) {
        if let Hop::Atm(a) = self {
            a.set_eager();
        }
    }

    /// A wake-up of a hop that moves packets internally (ATM port) at `now`. Reports each
    /// frame's fate; returns the next wake-up.
    pub fn wake(&mut self, now: SimTime, links: &mut [Link], mut fate: impl FnMut(FrameFate)) -> Option<SimTime> {
        match self {
            Hop::Link(_) | Hop::Moving(_) => None,
            Hop::Atm(a) => a.wake(now, links, fate),
            Hop::Custom(c) => c.wake(now, links, &mut fate),
        }
    }

    /// C, the maximum TCP goodput of this hop for segments of `mss` bytes: the rate left after
    /// TCP/IP headers on an IP link (rate x MSS / (MSS + 40)), after TCP/IP/LLC/AAL5/cell
    /// overheads on an ATM port (seed 000 §4.3, `atm::max_goodput_bps`); on a moving link, of
    /// its rate averaged over the run (`[0, end)`, `MovingHop::mean_rate_bps`).
    pub fn capacity_bps(&self, links: &[Link], mss: u32, end: SimTime) -> f64 {
        match self {
            Hop::Link(_) => ip_goodput_bps(links[self.out_link() as usize].rate.as_bps() as f64, mss),
            Hop::Moving(m) => ip_goodput_bps(m.mean_rate_bps(end), mss),
            Hop::Atm(a) => max_goodput_bps(a.cell_rate, mss as u64),
            Hop::Custom(c) => c.capacity_bps(links, mss),
        }
    }

    /// The link whose figures this hop gives (its output link).
    pub fn out_link(&self) -> LinkId {
        match self {
            Hop::Link(h) => h.link,
            Hop::Atm(a) => a.out_link,
            Hop::Moving(m) => m.link,
            Hop::Custom(c) => c.out_link(),
        }
    }

    /// The link a packet entering through `input` is serialised on first (where a scripted
    /// loss at the sender is counted).
    pub fn first_link(&self, input: u32) -> LinkId {
        match self {
            Hop::Link(h) => h.link,
            Hop::Atm(a) => a.ingress(input),
            Hop::Moving(m) => m.link,
            Hop::Custom(c) => c.first_link(input),
        }
    }

    /// The packet `k` places behind the head of a link hop's FIFO (`k` >= 1), if that many are
    /// in flight (other kinds: none): for prefetching along a long link's arrivals (world).
    #[inline]
    pub fn behind_head(&self, k: usize) -> Option<(u32, NodeId)> {
        match self {
            Hop::Link(h) => h.in_flight.behind_head(k).map(|p| (p, h.to)),
            _ => None,
        }
    }

    /// Where a link hop's FIFO keeps the entry `k` places behind its head, if that many are in
    /// flight (other kinds: none): for prefetching the FIFO ahead of its reads (world).
    #[inline]
    pub fn entry_behind_head(&self, k: usize) -> Option<*const u8> {
        match self {
            Hop::Link(h) => h.in_flight.entry_behind_head(k),
            _ => None,
        }
    }

    /// The packet at the head of a link hop's FIFO (`NO_PACKET` for other kinds or when none is
    /// in flight): a prefetch hint for its arrival event (world).
    #[inline]
    pub fn head_packet(&self) -> u32 {
        match self {
            Hop::Link(h) => h.in_flight.front().map_or(NO_PACKET, |(_, p)| p),
            _ => NO_PACKET,
        }
    }

    /// Cells buffered by a port (for traces), `None` for links.
    pub fn queue_cells(&self) -> Option<f64> {
        match self {
            Hop::Link(_) | Hop::Moving(_) | Hop::Custom(_) => None,
            Hop::Atm(a) => Some(a.occupancy() as f64),
        }
    }

    /// Closes the statistics at the end of the run (before the links' results are read: an
    /// ATM port counts its last frames on the egress links).
    pub fn close(&mut self, end: SimTime, links: &mut [Link]) {
        match self {
            Hop::Atm(a) => a.close(end, links),
            Hop::Custom(c) => c.close(end),
            Hop::Link(_) | Hop::Moving(_) => {}
        }
    }

    /// Writes what this hop knows into its output link's result (ATM ports: the figures in
    /// cells); IP links' results come from the link itself.
    pub fn report(&self, lr: &mut LinkResult, end: SimTime) {
        match self {
            Hop::Atm(a) => a.report(lr, end),
            Hop::Moving(m) => {
                lr.reordered = Some(m.flight.stats.reordered);
                if m.flight.stats.drops_no_route > 0 {
                    lr.drops_by_reason.insert("no_route".into(), m.flight.stats.drops_no_route);
                }
            }
            Hop::Custom(c) => c.report(lr, end),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_is_one_cache_line() {
        // issue 15: a `Vec<Hop>` puts each hop in exactly one line.
        assert_eq!((std::mem::size_of::<Hop>(), std::mem::align_of::<Hop>()), (64, 64));
    }

    /// A 1000-byte data packet from node 0 to node 1.
    fn data_packet() -> Packet {
        Packet { uid: 0, flow: 0, src: 0, dst: 1, bytes: 1000, seg: Default::default(), dir: super::super::packet::Dir::Data, corrupted: false, sack_at: 0 }
    }

    /// Links 0, 1, 2 at 8, 16, 24 Mbps, 10 ms.
    fn links() -> Vec<Link> {
        use crate::engine::rng::RngFactory;
        use crate::net::link::QueueLimit;
        use crate::time::Rate;
        (0..3).map(|i| Link::new(format!("l{i}"), i, i + 1, Rate::mbps(8 * (i as u64 + 1)), SimTime::from_millis(10), 0.0, QueueLimit::Packets(10), RngFactory::new(1).stream("x"))).collect()
    }

    #[test]
    fn a_links_flight_is_a_fifo_whose_places_behind_the_head_count_from_one() {
        let t = SimTime::from_millis;
        let mut f = Flight::new();
        assert_eq!((f.front(), f.last_arrival(), f.behind_head(1)), (None, None, None));
        f.push_back(t(10), 7);
        // One packet: the head alone, kept inline, is the last arrival.
        assert_eq!((f.front(), f.last_arrival(), f.behind_head(1), f.entry_behind_head(1)), (Some((t(10), 7)), Some(t(10)), None, None));
        f.push_back(t(20), 8);
        f.push_back(t(30), 9);
        assert_eq!(f.last_arrival(), Some(t(30)));
        assert_eq!((f.behind_head(1), f.behind_head(2), f.behind_head(3)), (Some(8), Some(9), None));
        // The prefetch addresses are those of the entries behind the head, in order.
        let at = |i: usize| &f.rest[i] as *const (SimTime, u32) as *const u8;
        assert_eq!((f.entry_behind_head(1), f.entry_behind_head(2), f.entry_behind_head(3)), (Some(at(0)), Some(at(1)), None));
        assert_eq!((f.pop_front(), f.pop_front()), (Some((t(10), 7)), Some((t(20), 8))));
        assert_eq!((f.front(), f.last_arrival(), f.behind_head(1)), (Some((t(30), 9)), Some(t(30)), None));
        assert_eq!((f.pop_front(), f.pop_front(), f.last_arrival()), (Some((t(30), 9)), None, None));
    }

    #[test]
    fn a_link_hop_names_its_head_and_the_packets_behind_it_for_prefetching() {
        let mut links = links();
        let mut h = Hop::link(0, 1);
        let mut p = data_packet();
        assert_eq!((h.head_packet(), h.behind_head(1), h.entry_behind_head(1)), (NO_PACKET, None, None));
        // 1000 bytes at 8 Mbps: 1 ms each, then 10 ms.
        let nexts: Vec<Next> = [7, 8, 9].iter().map(|&pkt| h.offer(SimTime::ZERO, 0, pkt, &mut p, &mut links).next).collect();
        assert_eq!(nexts, [Next::Arrive(SimTime::from_millis(11)), Next::Nothing, Next::Nothing]);
        assert_eq!((h.head_packet(), h.behind_head(1), h.behind_head(2), h.behind_head(3)), (7, Some((8, 1)), Some((9, 1)), None));
        let Hop::Link(l) = &h else { unreachable!() };
        assert_eq!(h.entry_behind_head(2), l.in_flight.entry_behind_head(2));
        assert!(h.entry_behind_head(2).is_some() && h.entry_behind_head(3).is_none());
        assert_eq!(h.arrive(SimTime::from_millis(11), &links), Some((7, 1, Some(SimTime::from_millis(12)))));
        assert_eq!((h.head_packet(), h.behind_head(1)), (8, Some((9, 1))));
    }

    /// A custom hop that keeps every default of [`HopModel`]: it only offers (drops all) and
    /// names its link.
    struct Minimal {
        link: LinkId,
    }

    impl HopModel for Minimal {
        fn offer(&mut self, _now: SimTime, _input: u32, _pkt: u32, _p: &mut Packet, _links: &mut [Link]) -> Offered {
            Offered { admit: Admit::Dropped(crate::net::link::DropReason::Scripted), next: Next::Nothing }
        }
        fn out_link(&self) -> LinkId {
            self.link
        }
    }

    #[test]
    fn a_custom_hops_defaults_use_its_own_link_and_deliver_nothing_unasked() {
        let mut links = links();
        let mut h = Hop::Custom(Box::new(Minimal { link: 2 }));
        // Its first link on any input is its output link, link 2, not link 0.
        assert_eq!((h.out_link(), h.first_link(0), h.first_link(1)), (2, 2, 2));
        // C: an IP link's at link 2's 24 Mbps, 24e6 x 960 / 1000.
        assert_eq!(h.capacity_bps(&links, 960, SimTime::from_secs(1)), 23_040_000.0);
        // An arrival or a wake-up it never asked for delivers nothing.
        assert_eq!(h.arrive(SimTime::from_millis(5), &links), None);
        let mut fates = 0;
        assert_eq!(h.wake(SimTime::from_millis(5), &mut links, |_| fates += 1), None);
        assert_eq!(fates, 0);
    }

    /// A custom hop that closes and reports: its report says when it was closed.
    struct Closing {
        closed: Option<SimTime>,
    }

    impl HopModel for Closing {
        fn offer(&mut self, _now: SimTime, _input: u32, _pkt: u32, _p: &mut Packet, _links: &mut [Link]) -> Offered {
            Offered { admit: Admit::Dropped(crate::net::link::DropReason::Scripted), next: Next::Nothing }
        }
        fn out_link(&self) -> LinkId {
            0
        }
        fn close(&mut self, end: SimTime) {
            self.closed = Some(end);
        }
        fn report(&self, lr: &mut LinkResult, _end: SimTime) {
            if let Some(t) = self.closed {
                lr.drops_by_reason.insert("closed_ms".into(), t.0 / 1_000_000);
            }
        }
    }

    #[test]
    fn a_custom_hop_is_closed_and_reports_through_hop() {
        let (mut links, end) = (links(), SimTime::from_millis(700));
        let mut h = Hop::Custom(Box::new(Closing { closed: None }));
        h.close(end, &mut links);
        let mut lr = crate::world::link_result(&links[0], end);
        h.report(&mut lr, end);
        assert_eq!(lr.drops_by_reason, [("closed_ms".to_string(), 700)].into());
    }

    #[test]
    fn closing_a_port_counts_the_cells_that_left_after_its_last_wake_up() {
        use super::super::atm_hop::AtmHopSpec;
        use crate::atm::port::DropPolicy;
        use crate::engine::rng::RngFactory;
        use crate::time::Rate;
        // VC 0: access link 0 into the port, output link 1, egress link 2.
        let mut links = links();
        let spec = AtmHopSpec { capacity: 100, policy: DropPolicy::TailDrop, partial_discard: false, out_rate: Rate::mbps(1), out_delay: SimTime::from_millis(10), out_ber: 0.0, out_link: 1, egress_rate: Rate::mbps(24), egress_delay: SimTime::from_millis(10), vcs: vec![(0, Rate::mbps(8), 2)] };
        let mut h = Hop::Atm(Box::new(AtmHop::new(spec, RngFactory::new(1).stream("e")).unwrap()));
        let mut p = data_packet();
        let o = h.offer(SimTime::ZERO, 0, 5, &mut p, &mut links);
        assert!(matches!((o.admit, o.next), (Admit::Sent { .. }, Next::Wake(_))));
        // No wake-up runs; the run ends at 1 s, long after the frame's 22 cells (1000 + 16
        // bytes of LLC and AAL5 trailer in 48-byte payloads) left at 1 Mbps.
        let end = SimTime::from_millis(1000);
        h.close(end, &mut links);
        let mut lr = crate::world::link_result(&links[1], end);
        h.report(&mut lr, end);
        assert_eq!((lr.cells_arrived, lr.cells, lr.cells_buffered, lr.bytes), (Some(22), Some(22), Some(0), 22 * 53));
        // Its frame was reassembled (not delivered: the run is over) and counted, on the
        // egress link too, as a wake-up at the end would have.
        assert_eq!((lr.packets, lr.frames_discarded), (1, Some(0)));
        assert_eq!((links[2].stats.packets, links[2].stats.bytes), (1, 22 * 53));
    }

    #[test]
    fn a_moving_hop_reports_no_route_drops_only_when_there_are_some() {
        use super::super::schedule::{Change, MovingFlight, Schedule};
        let (links, end) = (links(), SimTime::from_millis(1000));
        let schedule = Schedule::new(vec![Change { at: SimTime::ZERO, delay: Some(SimTime::from_millis(10)), rate: None, ber: None }]).unwrap();
        let mut h = Hop::Moving(Box::new(MovingHop { link: 0, flight: MovingFlight::new(schedule), base_rate: links[0].rate }));
        let mut lr = crate::world::link_result(&links[0], end);
        h.report(&mut lr, end);
        assert!(lr.drops_by_reason.is_empty(), "no \"no_route\": 0 entry");
        let Hop::Moving(m) = &mut h else { unreachable!() };
        m.flight.stats.drops_no_route = 2;
        h.report(&mut lr, end);
        assert_eq!(lr.drops_by_reason, [("no_route".to_string(), 2)].into());
    }
}
