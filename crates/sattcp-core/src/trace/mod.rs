//! Packet traces: every packet event of a run (sent by a host, queued at a link, dropped with
//! its reason, dequeued = its transmission starts, received by a node), kept in memory as
//! compact rows and written out as a pcapng file ([`pcapng`]) or as columns for Python
//! (`RunResult.packets`, docs/traces.md).
//!
//! Memory is bounded: past `max_events` events, or when doubling its storage would take more
//! than its share of the memory available ([`memory`]), the log stops recording, remembers the
//! simulated time at which it stopped and how many events it missed, and the run says so in its
//! warnings. The log is then cut at that instant, so what it holds is every selected event
//! before it (a dequeue is recorded when its packet is queued, ahead of its time).
//!
//! The world records through `Option<PacketLog>`: with tracing off the cost is one
//! predictable branch per packet event.

pub mod memory;
pub mod pcapng;
pub mod recorder;
pub mod spec;

use crate::net::packet::{Dir, FlowId, NodeId, SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::time::SimTime;
use memory::{size, Memory, MemorySource, LOG_SHARE};

/// Default bound on the events a log holds: 5 million rows of [`PacketEvent`] (64 bytes
/// each, `packet_event_is_64_bytes` below) is 320 MB, plus 16 bytes per SACK block.
pub const DEFAULT_MAX_EVENTS: u64 = 5_000_000;

/// The log's first storage, in events (64 KiB) and SACK blocks (16 KiB): each growth reads the
/// memory available (`/proc/meminfo`), and starting where `Vec` does (4) would cost every
/// traced run eight growths and reads for its first kilobytes.
const FIRST_EVENTS: u64 = 1024;
const FIRST_SACKS: usize = 1024;

/// What happened to a packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventKind {
    /// Its TCP handed it to the network at its source host.
    Sent,
    /// Accepted into a link's queue (it may start transmission at once).
    Queued,
    /// Lost, for [`DropReason`].
    Dropped,
    /// Its transmission on a link starts: what a capture on that link's wire sees.
    Dequeued,
    /// It arrived at a node (router or destination) at the far end of a link.
    Received,
}

impl EventKind {
    pub const ALL: [EventKind; 5] = [EventKind::Sent, EventKind::Queued, EventKind::Dropped, EventKind::Dequeued, EventKind::Received];
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Sent => "sent",
            EventKind::Queued => "queued",
            EventKind::Dropped => "dropped",
            EventKind::Dequeued => "dequeued",
            EventKind::Received => "received",
        }
    }
}

/// Why a packet was dropped (`None` for every other event).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum DropReason {
    None,
    /// A drop-tail queue was full when the packet arrived.
    QueueFull,
    /// A bit error corrupted it; the receiving node discarded it.
    Corrupted,
    /// A scripted loss (`[[loss]]`) at its source.
    Scripted,
    /// Its AAL5 frame lost cells at an ATM switch port (buffer full, PPD, EPD, SD, FBA: the
    /// cell-level reasons are in the link's `drops_by_reason`) or carried a corrupted cell, so
    /// it was never reassembled.
    AtmFrame,
    /// A moving link had no path when its transmission ended (net::schedule).
    NoRoute,
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [DropReason::None, DropReason::QueueFull, DropReason::Corrupted, DropReason::Scripted, DropReason::AtmFrame, DropReason::NoRoute];
    pub fn name(self) -> &'static str {
        match self {
            DropReason::None => "",
            DropReason::QueueFull => "queue_full",
            DropReason::Corrupted => "corrupted",
            DropReason::Scripted => "scripted",
            DropReason::AtmFrame => "atm_frame",
            DropReason::NoRoute => "no_route",
        }
    }
}

/// `PacketEvent::wscale` when the segment carries no window-scale option.
pub const NO_WSCALE: u8 = u8::MAX;
/// `PacketEvent::link` of events at a host (sent, received, a scripted drop at the sender).
pub const NO_LINK: u32 = u32::MAX;
/// `PacketEvent::sack_at` when the segment carries no SACK block.
pub const NO_SACK: u32 = u32::MAX;

/// One packet event: the segment's header fields as sent, where and when.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PacketEvent {
    pub t: SimTime,
    /// The packet's unique id in the run (its events on every hop share it).
    pub uid: u64,
    pub seq: u64,
    pub ack: u64,
    pub flow: FlowId,
    /// Index of the link (in the world's order, as in `RunResult.links`), or [`NO_LINK`].
    pub link: u32,
    /// The node where it happened: the sending host, the link's near end (queued, dequeued,
    /// dropped there), its far end (corrupted packets are discarded there), the receiving host.
    pub node: NodeId,
    /// Payload bytes.
    pub len: u32,
    /// Index of the first of `n_sack` blocks in the log's SACK table, or [`NO_SACK`].
    pub sack_at: u32,
    pub window: u16,
    /// Which transmission of these bytes (0 = first).
    pub tx_count: u16,
    pub kind: EventKind,
    pub reason: DropReason,
    pub dir: Dir,
    /// `net::packet::flags` bits.
    pub flags: u8,
    pub n_sack: u8,
    /// Window-scale option (SYN only), or [`NO_WSCALE`].
    pub wscale: u8,
    pub sack_permitted: bool,
}

/// Which packet events are recorded: those of the chosen flows (all if `None`) on the chosen
/// links (all if `None`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PacketFilter {
    pub flows: Option<Vec<FlowId>>,
    pub links: Option<Vec<String>>,
}

/// A flow's endpoints, as the pcap needs them (addresses, MSS option on SYNs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowEnds {
    /// The data sender's node and the receiver's.
    pub src: NodeId,
    pub dst: NodeId,
    /// The MSS announced on SYNs.
    pub mss: u16,
}

/// A link as the pcap describes it (one interface per link).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
}

/// Why a log stopped recording before `max_events`: its storage could not grow.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemoryStop {
    /// Grown to `wanted` bytes from `held`, the log would have taken more than its share
    /// ([`LOG_SHARE`]) of `held` and the `memory` available beside it.
    Share { events: u64, held: u64, wanted: u64, memory: Memory },
    /// The allocator refused the growth (`Vec::try_reserve_exact`).
    Refused { events: u64, held: u64, wanted: u64 },
}

impl MemoryStop {
    /// Why, with the numbers, as the run's warning says it.
    pub fn reason(&self) -> String {
        match *self {
            MemoryStop::Share { events, held, wanted, memory } => format!(
                "the log ({events} events, {}) would outgrow the memory available ({}): grown to {}, it would exceed its share, {} (1/{LOG_SHARE} of the memory available and of what it holds, to leave room for its table in Python)",
                size(held),
                memory.describe(),
                size(wanted),
                size(held.saturating_add(memory.available) / LOG_SHARE)
            ),
            MemoryStop::Refused { events, held, wanted } => format!("the log ({events} events, {}) could not grow to {}: the allocator refused the memory", size(held), size(wanted)),
        }
    }
}

/// The recorded events of one run, bounded in number and by the memory available.
#[derive(Clone, Debug)]
pub struct PacketLog {
    pub flows: Vec<FlowEnds>,
    pub links: Vec<LinkInfo>,
    events: Vec<PacketEvent>,
    sacks: Vec<SackBlock>,
    /// Per flow / per link: recorded or not (empty: all).
    flow_on: Vec<bool>,
    link_on: Vec<bool>,
    max_events: u64,
    /// Events the log holds before [`record`](Self::record) must grow it or stop:
    /// `events.capacity()` (never above `max_events`), so that the one comparison per event
    /// covers both bounds.
    room: u64,
    /// Where growths read the memory available.
    memory: MemorySource,
    /// When recording stopped (the log is full), and the selected events missed since.
    stopped_at: Option<SimTime>,
    missed: u64,
    /// Why, if it stopped before `max_events`.
    memory_stop: Option<MemoryStop>,
    sorted: bool,
}

impl PacketLog {
    /// A log for a world with these flows and links, recording what `filter` selects, at most
    /// `max_events` events. Names in `filter.links` that are not links select nothing
    /// (validation rejects them before).
    pub fn new(flows: Vec<FlowEnds>, links: Vec<LinkInfo>, filter: &PacketFilter, max_events: u64) -> Self {
        let flow_on = match &filter.flows {
            None => Vec::new(),
            Some(sel) => (0..flows.len() as u32).map(|f| sel.contains(&f)).collect(),
        };
        let link_on = match &filter.links {
            None => Vec::new(),
            Some(sel) => links.iter().map(|l| sel.contains(&l.name)).collect(),
        };
        PacketLog { flows, links, events: Vec::new(), sacks: Vec::new(), flow_on, link_on, max_events, room: 0, memory: MemorySource::System, stopped_at: None, missed: 0, memory_stop: None, sorted: true }
    }

    /// This log, reading the memory available from `memory` (the machine's by default).
    pub fn with_memory(mut self, memory: MemorySource) -> Self {
        self.memory = memory;
        self
    }

    /// Records an event happening `at` (`at >= now`: a dequeue is known when its packet is
    /// queued) to a packet of `flow` going `dir` on `link`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn record(&mut self, now: SimTime, at: SimTime, kind: EventKind, reason: DropReason, link: u32, node: NodeId, uid: u64, flow: FlowId, dir: Dir, seg: &Segment) {
        // A links selection keeps only the events on those links (not those at hosts).
        if (!self.flow_on.is_empty() && !self.flow_on.get(flow as usize).copied().unwrap_or(false)) || (!self.link_on.is_empty() && !self.link_on.get(link as usize).copied().unwrap_or(false)) {
            return;
        }
        if self.events.len() as u64 >= self.room && !self.make_room(now, 0) {
            return;
        }
        let sack_at = if seg.n_sack > 0 {
            if self.sacks.capacity() - self.sacks.len() < seg.n_sack as usize && !self.make_room(now, seg.n_sack as usize) {
                return;
            }
            let at = self.sacks.len() as u32;
            self.sacks.extend_from_slice(seg.sack_blocks());
            at
        } else {
            NO_SACK
        };
        if self.events.last().is_some_and(|e| e.t > at) {
            self.sorted = false;
        }
        self.events.push(PacketEvent {
            t: at,
            uid,
            seq: seg.seq,
            ack: seg.ack,
            flow,
            link,
            node,
            len: seg.len,
            sack_at,
            window: seg.window,
            tx_count: seg.tx_count,
            kind,
            reason,
            dir,
            flags: seg.flags,
            n_sack: seg.n_sack,
            wscale: seg.wscale.unwrap_or(NO_WSCALE),
            sack_permitted: seg.sack_permitted,
        });
    }

    /// [`record`](Self::record)'s slow path, when the log holds `room` events or its SACK table
    /// has no room for `n` more blocks: doubles what is full (events up to `max_events`) if
    /// memory allows, or stops recording, counts the event as missed and returns false.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, now: SimTime, n: usize) -> bool {
        let (len, sacks_len) = (self.events.len() as u64, self.sacks.len());
        let events_full = len >= self.room;
        if self.stopped_at.is_none() && !(events_full && len >= self.max_events) {
            let events = if events_full { (self.events.capacity() as u64).saturating_mul(2).max(FIRST_EVENTS).min(self.max_events) as usize } else { self.events.capacity() };
            let sacks = if self.sacks.capacity() - sacks_len < n { (2 * self.sacks.capacity()).max(sacks_len + n).max(FIRST_SACKS) } else { self.sacks.capacity() };
            if self.grow(events, sacks) {
                self.room = (self.events.capacity() as u64).min(self.max_events);
                return true;
            }
        }
        self.stopped_at.get_or_insert(now);
        self.room = len;
        self.missed += 1;
        false
    }

    /// Grows the storage to `events` events and `sacks` SACK blocks if that takes at most
    /// 1/[`LOG_SHARE`] of what the log holds and the memory available beside it, and the
    /// allocator gives it; otherwise keeps why in `memory_stop` and returns false.
    fn grow(&mut self, events: usize, sacks: usize) -> bool {
        let bytes = |events: usize, sacks: usize| (events as u64).saturating_mul(std::mem::size_of::<PacketEvent>() as u64).saturating_add((sacks as u64).saturating_mul(std::mem::size_of::<SackBlock>() as u64));
        let held = bytes(self.events.capacity(), self.sacks.capacity());
        let wanted = bytes(events, sacks);
        let n = self.events.len() as u64;
        if let Some(memory) = self.memory.read(held) {
            if wanted > held.saturating_add(memory.available) / LOG_SHARE {
                self.memory_stop = Some(MemoryStop::Share { events: n, held, wanted, memory });
                return false;
            }
        }
        let len = (self.events.len(), self.sacks.len());
        if self.events.try_reserve_exact(events - len.0).is_err() || self.sacks.try_reserve_exact(sacks - len.1).is_err() {
            self.memory_stop = Some(MemoryStop::Refused { events: n, held, wanted });
            return false;
        }
        true
    }

    /// Closes the log at the end of the run: sorts the events by time (stable: events at one
    /// instant keep the order in which they happened) and cuts those at or after `end` or after
    /// recording stopped.
    pub fn finish(&mut self, end: SimTime) {
        if !self.sorted {
            self.events.sort_by_key(|e| e.t);
            self.sorted = true;
        }
        let cut = self.stopped_at.map_or(end, |s| s.min(end));
        // Events exactly at the end of the run are kept (the world runs events due at `end`);
        // after a stop, events at the stop instant may be incomplete and are cut.
        let keep = if self.stopped_at.is_some_and(|s| s <= end) { self.events.partition_point(|e| e.t < cut) } else { self.events.partition_point(|e| e.t <= cut) };
        self.events.truncate(keep);
    }

    pub fn events(&self) -> &[PacketEvent] {
        &self.events
    }

    /// The SACK blocks an event carries.
    pub fn sack_blocks(&self, e: &PacketEvent) -> &[SackBlock] {
        if e.sack_at == NO_SACK {
            &[]
        } else {
            &self.sacks[e.sack_at as usize..e.sack_at as usize + e.n_sack as usize]
        }
    }

    /// When recording stopped because the log was full or memory was short, if it did.
    pub fn stopped_at(&self) -> Option<SimTime> {
        self.stopped_at
    }

    /// Selected events not recorded because the log was full.
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// Why the log stopped before `max_events`, if it did.
    pub fn memory_stop(&self) -> Option<MemoryStop> {
        self.memory_stop
    }

    /// The run's warning when the log filled up.
    pub fn warning(&self) -> Option<String> {
        let t = self.stopped_at?.as_secs_f64();
        let why = match &self.memory_stop {
            None => format!("it reached trace.max_packet_events = {} events", self.max_events),
            Some(m) => m.reason(),
        };
        Some(format!("packet trace stopped at {t:.6} s: {why}; {} later events were not recorded and events from that instant on are left out", self.missed))
    }

    /// Bytes of memory the log holds (rows and SACK blocks).
    pub fn memory_bytes(&self) -> usize {
        self.events.capacity() * std::mem::size_of::<PacketEvent>() + self.sacks.capacity() * std::mem::size_of::<SackBlock>()
    }

    /// The events as columns, little-endian bytes with a numpy dtype each, for a zero-copy
    /// transfer to Python (one buffer per column, no object per row). Columns: t_ns, event
    /// (code into [`EventKind::ALL`]), reason (code into [`DropReason::ALL`]), link (index, -1
    /// at hosts), node, flow, dir (0 data, 1 ack), src, dst (nodes of the packet), uid, seq, ack, len (payload),
    /// bytes (IP datagram), flags (bits of `net::packet::flags`), window, wscale (-1 if
    /// absent), sack_permitted, tx_count, n_sack, and sack{1,2,3}_{start,end} (0 where absent).
    pub fn columns(&self) -> Vec<(&'static str, &'static str, Vec<u8>)> {
        fn col<T: Copy, const N: usize>(ev: &[PacketEvent], f: impl Fn(&PacketEvent) -> T, bytes: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(ev.len() * N);
            for e in ev {
                out.extend_from_slice(&bytes(f(e)));
            }
            out
        }
        let ev = &self.events;
        let ends = |e: &PacketEvent| {
            let f = &self.flows[e.flow as usize];
            match e.dir {
                Dir::Data => (f.src, f.dst),
                Dir::Ack => (f.dst, f.src),
            }
        };
        let mut cols = vec![
            ("t_ns", "<u8", col(ev, |e| e.t.0, u64::to_le_bytes)),
            ("event", "u1", col(ev, |e| e.kind as u8, |v| [v])),
            ("reason", "u1", col(ev, |e| e.reason as u8, |v| [v])),
            ("link", "<i4", col(ev, |e| if e.link == NO_LINK { -1 } else { e.link as i32 }, i32::to_le_bytes)),
            ("node", "<u4", col(ev, |e| e.node, u32::to_le_bytes)),
            ("flow", "<u4", col(ev, |e| e.flow, u32::to_le_bytes)),
            ("dir", "u1", col(ev, |e| (e.dir == Dir::Ack) as u8, |v| [v])),
            ("src", "<u4", col(ev, |e| ends(e).0, u32::to_le_bytes)),
            ("dst", "<u4", col(ev, |e| ends(e).1, u32::to_le_bytes)),
            ("uid", "<u8", col(ev, |e| e.uid, u64::to_le_bytes)),
            ("seq", "<u8", col(ev, |e| e.seq, u64::to_le_bytes)),
            ("ack", "<u8", col(ev, |e| e.ack, u64::to_le_bytes)),
            ("len", "<u4", col(ev, |e| e.len, u32::to_le_bytes)),
            ("bytes", "<u4", col(ev, |e| e.len + crate::net::packet::IP_HEADER + crate::net::packet::TCP_HEADER, u32::to_le_bytes)),
            ("flags", "u1", col(ev, |e| e.flags, |v| [v])),
            ("window", "<u2", col(ev, |e| e.window, u16::to_le_bytes)),
            ("wscale", "i1", col(ev, |e| if e.wscale == NO_WSCALE { -1 } else { e.wscale as i8 }, i8::to_le_bytes)),
            ("sack_permitted", "?", col(ev, |e| e.sack_permitted as u8, |v| [v])),
            ("tx_count", "<u2", col(ev, |e| e.tx_count, u16::to_le_bytes)),
            ("n_sack", "u1", col(ev, |e| e.n_sack, |v| [v])),
        ];
        const EDGE: [&str; 6] = ["sack1_start", "sack1_end", "sack2_start", "sack2_end", "sack3_start", "sack3_end"];
        for k in 0..MAX_SACK_BLOCKS {
            let block = |e: &PacketEvent| self.sack_blocks(e).get(k).copied().unwrap_or_default();
            cols.push((EDGE[2 * k], "<u8", col(ev, |e| block(e).start, u64::to_le_bytes)));
            cols.push((EDGE[2 * k + 1], "<u8", col(ev, |e| block(e).end, u64::to_le_bytes)));
        }
        cols
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::flags;

    fn log(filter: PacketFilter, max: u64) -> PacketLog {
        let flows = vec![FlowEnds { src: 0, dst: 3, mss: 1000 }, FlowEnds { src: 1, dst: 4, mss: 1000 }];
        let links = ["up", "bottleneck", "down"].iter().enumerate().map(|(i, n)| LinkInfo { name: n.to_string(), from: i as u32, to: i as u32 + 1, rate_bps: 1_000_000 }).collect();
        PacketLog::new(flows, links, &filter, max)
    }

    fn data(seq: u64) -> Segment {
        Segment { seq, len: 1000, flags: flags::ACK, ack: 1, window: 100, ..Default::default() }
    }

    fn ms(n: u64) -> SimTime {
        SimTime::from_millis(n)
    }

    #[test]
    fn packet_event_is_64_bytes() {
        // DEFAULT_MAX_EVENTS's memory figure.
        assert_eq!(std::mem::size_of::<PacketEvent>(), 64);
    }

    #[test]
    fn a_packet_crossing_one_link_then_sorted_by_time() {
        let mut l = log(PacketFilter::default(), 100);
        let s = data(1);
        l.record(ms(0), ms(0), EventKind::Sent, DropReason::None, 0, 0, 7, 0, Dir::Data, &s);
        l.record(ms(0), ms(0), EventKind::Queued, DropReason::None, 0, 0, 7, 0, Dir::Data, &s);
        // The dequeue is known at once but happens at 5 ms; another packet is sent at 1 ms.
        l.record(ms(0), ms(5), EventKind::Dequeued, DropReason::None, 0, 0, 7, 0, Dir::Data, &s);
        l.record(ms(1), ms(1), EventKind::Sent, DropReason::None, 0, 0, 8, 1, Dir::Data, &data(1001));
        l.record(ms(9), ms(9), EventKind::Received, DropReason::None, 0, 0, 7, 0, Dir::Data, &s);
        l.finish(ms(100));
        let kinds: Vec<(u64, EventKind)> = l.events().iter().map(|e| (e.uid, e.kind)).collect();
        assert_eq!(kinds, [(7, EventKind::Sent), (7, EventKind::Queued), (8, EventKind::Sent), (7, EventKind::Dequeued), (7, EventKind::Received)]);
        assert_eq!(l.warning(), None);
    }

    #[test]
    fn filters_select_flows_and_links() {
        let mut l = log(PacketFilter { flows: Some(vec![1]), links: Some(vec!["bottleneck".into()]) }, 100);
        for flow in 0..2 {
            for link in 0..3 {
                l.record(ms(1), ms(1), EventKind::Queued, DropReason::None, link, 0, 0, flow, Dir::Data, &data(1));
            }
        }
        l.finish(ms(2));
        assert_eq!(l.events().iter().map(|e| (e.flow, e.link)).collect::<Vec<_>>(), [(1, 1)]);
    }

    #[test]
    fn sack_blocks_are_kept_per_event() {
        let mut l = log(PacketFilter::default(), 100);
        let mut ack = Segment { ack: 1001, flags: flags::ACK, n_sack: 2, ..Default::default() };
        ack.sack[0] = SackBlock { start: 3001, end: 4001 };
        ack.sack[1] = SackBlock { start: 5001, end: 6001 };
        l.record(ms(1), ms(1), EventKind::Sent, DropReason::None, 2, 0, 1, 0, Dir::Ack, &data(1));
        l.record(ms(1), ms(1), EventKind::Sent, DropReason::None, 2, 0, 2, 0, Dir::Ack, &ack);
        l.finish(ms(2));
        let e = l.events();
        assert!(l.sack_blocks(&e[0]).is_empty());
        assert_eq!(l.sack_blocks(&e[1]), &[SackBlock { start: 3001, end: 4001 }, SackBlock { start: 5001, end: 6001 }]);
        let cols = l.columns();
        let col = |name: &str| cols.iter().find(|c| c.0 == name).unwrap().2.clone();
        assert_eq!(col("sack2_start"), [0u64.to_le_bytes(), 5001u64.to_le_bytes()].concat());
        assert_eq!(col("sack3_end"), [0u8; 16]);
        // An ACK of flow 0 goes from its receiver (node 3) to its sender (node 0).
        assert_eq!(col("src"), [3u32.to_le_bytes(), 3u32.to_le_bytes()].concat());
        assert_eq!(col("bytes"), [1040u32.to_le_bytes(), 40u32.to_le_bytes()].concat());
    }

    #[test]
    fn a_full_log_stops_cuts_at_the_stop_and_warns() {
        let mut l = log(PacketFilter::default(), 4);
        // Each packet: queued at i ms, dequeued at i + 10 ms (recorded ahead).
        for i in 0..4 {
            l.record(ms(i), ms(i), EventKind::Queued, DropReason::None, 1, 0, i, 0, Dir::Data, &data(1 + 1000 * i));
            l.record(ms(i), ms(i + 10), EventKind::Dequeued, DropReason::None, 1, 0, i, 0, Dir::Data, &data(1 + 1000 * i));
        }
        // Full after the second packet (4 events): stopped at 2 ms, 4 events missed.
        assert_eq!(l.stopped_at(), Some(ms(2)));
        assert_eq!(l.missed(), 4);
        assert_eq!(l.memory_bytes(), 4 * 64);
        l.finish(ms(100));
        // The dequeues at 10 and 11 ms were recorded but come after the stop: cut, so that the
        // log is every event before 2 ms and nothing after.
        assert_eq!(l.events().iter().map(|e| e.t).collect::<Vec<_>>(), [ms(0), ms(1)]);
        let w = l.warning().unwrap();
        assert!(w.starts_with("packet trace stopped at 0.002000 s: it reached trace.max_packet_events = 4 events; 4 later"), "{w}");
    }

    /// `n` packets queued on the bottleneck, one a microsecond.
    fn queue_packets(l: &mut PacketLog, n: u64) {
        for i in 0..n {
            l.record(SimTime::from_micros(i), SimTime::from_micros(i), EventKind::Queued, DropReason::None, 1, 0, i, 0, Dir::Data, &data(1 + 1000 * i));
        }
    }

    #[test]
    fn a_log_short_of_memory_stops_at_its_last_doubling_and_says_why() {
        // 2 MiB available: a share of 341.3 KiB holds 4096 events (256 KiB) but not 8192.
        let mut l = log(PacketFilter::default(), 1_000_000).with_memory(MemorySource::Fixed(2 << 20));
        queue_packets(&mut l, 5000);
        assert_eq!(l.stopped_at(), Some(SimTime::from_micros(4096)));
        assert_eq!(l.missed(), 5000 - 4096);
        assert_eq!(l.memory_bytes(), 4096 * 64);
        let memory = Memory { available: (2 << 20) - 4096 * 64, total: 2 << 20, cgroup: false };
        assert_eq!(l.memory_stop(), Some(MemoryStop::Share { events: 4096, held: 4096 * 64, wanted: 8192 * 64, memory }));
        l.finish(SimTime::from_secs(1));
        // Everything recorded before the stop is kept, in order.
        assert_eq!(l.events().len(), 4096);
        assert!(l.events().iter().enumerate().all(|(i, e)| e.uid == i as u64 && e.seq == 1 + 1000 * i as u64 && e.t == SimTime::from_micros(i as u64)));
        assert_eq!(
            l.warning().unwrap(),
            "packet trace stopped at 0.004096 s: the log (4096 events, 256.0 KiB) would outgrow the memory available (1.8 MiB of 2.0 MiB): grown to 512.0 KiB, it would exceed its share, 341.3 KiB (1/6 of the memory available and of what it holds, to leave room for its table in Python); 904 later events were not recorded and events from that instant on are left out"
        );
    }

    #[test]
    fn a_log_with_memory_to_spare_stops_at_its_bound_with_storage_to_match() {
        // Growth stops at max_events too: 5000 events take 5000 rows, not the 8192 of a doubling.
        let mut l = log(PacketFilter::default(), 5000).with_memory(MemorySource::Fixed(1 << 30));
        queue_packets(&mut l, 6000);
        assert_eq!((l.stopped_at(), l.missed(), l.memory_stop()), (Some(SimTime::from_micros(5000)), 1000, None));
        assert_eq!(l.memory_bytes(), 5000 * 64);
        assert!(l.warning().unwrap().starts_with("packet trace stopped at 0.005000 s: it reached trace.max_packet_events = 5000 events; 1000 later"));
    }

    #[test]
    fn a_sack_table_that_cannot_grow_stops_the_log_before_the_event() {
        // A share of 70,000 bytes: the first 1024 events (64 KiB) fit, not 1024 SACK blocks more.
        let mut l = log(PacketFilter::default(), 100_000).with_memory(MemorySource::Fixed(6 * 70_000));
        queue_packets(&mut l, 10);
        let mut ack = Segment { ack: 1001, flags: flags::ACK, n_sack: 1, ..Default::default() };
        ack.sack[0] = SackBlock { start: 3001, end: 4001 };
        l.record(ms(1), ms(1), EventKind::Sent, DropReason::None, NO_LINK, 3, 99, 0, Dir::Ack, &ack);
        assert_eq!(l.stopped_at(), Some(ms(1)));
        assert!(matches!(l.memory_stop(), Some(MemoryStop::Share { events: 10, held: 65536, wanted: 81920, .. })), "{:?}", l.memory_stop());
        // Nothing of that event was kept; later ones are missed, not recorded.
        queue_packets(&mut l, 3);
        assert_eq!((l.events().len(), l.missed(), l.memory_bytes()), (10, 4, 65536));
        assert!(l.events().iter().all(|e| e.sack_at == NO_SACK));
    }

    #[test]
    fn a_refused_allocation_says_so() {
        let why = MemoryStop::Refused { events: 1 << 24, held: 1 << 30, wanted: 1 << 31 }.reason();
        assert_eq!(why, "the log (16777216 events, 1.00 GiB) could not grow to 2.00 GiB: the allocator refused the memory");
    }

    #[test]
    fn events_after_the_end_are_cut() {
        let mut l = log(PacketFilter::default(), 10);
        l.record(ms(9), ms(9), EventKind::Queued, DropReason::None, 1, 0, 0, 0, Dir::Data, &data(1));
        l.record(ms(9), ms(12), EventKind::Dequeued, DropReason::None, 1, 0, 0, 0, Dir::Data, &data(1));
        l.record(ms(10), ms(10), EventKind::Sent, DropReason::None, 0, 0, 1, 0, Dir::Data, &data(1001));
        l.finish(ms(10));
        assert_eq!(l.events().iter().map(|e| e.t).collect::<Vec<_>>(), [ms(9), ms(10)]);
    }
}
