//! The world of one run: nodes, links and hops (built by `net::topology`), TCP flows, and the
//! applications that drive them (`app`), run by the event loop. Built from a validated
//! [`Scenario`]; single-threaded and deterministic.
//!
//! The event loop knows packets, hops, TCP endpoints and applications only through their
//! interfaces: a hop kind (`net::hop::Hop`) or an application (`app::App`) is added without
//! touching this file.

mod finish;

pub(crate) use finish::link_result;

use crate::app::{self, App, AppId, Interest, Role, Setup};
use crate::engine::queue::{EventQueue, TimerSlot};
use crate::engine::rng::RngFactory;
use crate::metrics::result::Trace;
use crate::net::atm_hop::FrameFate;
use crate::net::hop::{Hop, HopId, LinkId, Next, Via, NO_PACKET};
use crate::net::link::{Admit, DropReason, Link};
use crate::net::packet::{Dir, FlowId, NodeId, Packet, SackBlock, SackPool, Segment, MAX_SACK_BLOCKS};
use crate::net::schedule::{self, MovingStats, RttProbe};
use crate::net::tap::{PacketEvent, PacketTap, Tap, TapDrop};
use crate::net::topology::{self, Node};
use crate::scenario::{LossSpec, Scenario};
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

/// What [`World::chain`] did with a packet entering a hop.
enum Chained {
    /// Not chained: offer it to the hop as usual.
    No,
    /// Handled (dropped, or kept in flight on the hop).
    Done,
    /// Crossed the hop: offer it to this next hop at this instant.
    Next(SimTime, Via),
}

#[derive(Copy, Clone, Debug)]
enum Ev {
    /// A packet arrives at `node` (an ATM frame reassembled at its destination).
    Arrive { pkt: u32, node: NodeId },
    /// The first packet in flight on link hop `hop` reaches the link's far end. A link
    /// delivers in the order it sends (one rate, one delay), so its packets in flight wait in
    /// a FIFO and only the head of each link is in the event queue. `pkt`: the packet
    /// expected at the head, a hint for prefetching only (`NO_PACKET`: unknown; see
    /// [`Simulation::prefetch_next`]).
    HopArrive { hop: HopId, pkt: u32 },
    SenderTimer { flow: FlowId },
    ReceiverTimer { flow: FlowId },
    /// An application opens `flow` (its sender sends the SYN).
    Open { flow: FlowId },
    /// An application's timer.
    AppTimer { app: AppId },
    /// A hop that moves packets internally (an ATM switch port) has work due.
    HopWake { hop: HopId },
}

impl Ev {
    /// Two 64-bit words identifying the event, for the run digest: a packet by its `uid`, not
    /// by the slot it occupies (how [`Packets`] reuses slots is not behaviour).
    #[inline]
    fn words(&self, packets: &Packets) -> (u64, u64) {
        match *self {
            Ev::Arrive { pkt, node } => (1 | (node as u64) << 32, packets[pkt].uid),
            Ev::HopArrive { hop, .. } => (7, hop as u64),
            Ev::SenderTimer { flow } => (2, flow as u64),
            Ev::ReceiverTimer { flow } => (3, flow as u64),
            Ev::Open { flow } => (4, flow as u64),
            Ev::AppTimer { app } => (5, app as u64),
            Ev::HopWake { hop } => (6, hop as u64),
        }
    }
}

/// Laid out by hand (`repr(C)`; issue 15, bench/README.md): what the loop reads for every
/// segment (the ends, the owner, the timer slots, the trace flag, the first hops) shares the
/// first cache line; the sender and the receiver, themselves laid out by line, follow.
#[repr(C)]
struct Flow {
    src: NodeId,
    dst: NodeId,
    /// The application that owns this flow (`u32::MAX`: none).
    app: AppId,
    traced: bool,
    role: Role,
    /// The owner's [`Interest`] (a copy of `AppEntry::interest`: a segment reads this line only).
    interest: Interest,
    snd_slot: TimerSlot,
    rcv_slot: TimerSlot,
    /// The first hop of each direction (by `Dir`): the route from `src` to `dst` and from
    /// `dst` to `src`, looked up once (routes do not change during a run), so that sending
    /// does not read the host's node (a likely cache miss with many hosts; issue 15).
    first_hop: [Via; 2],
    /// Bytes the application handed to TCP.
    scheduled: u64,
    sender: TcpSender,
    receiver: TcpReceiver,
    /// When the application declared the flow's work complete (a transfer fully delivered).
    completed_at: Option<SimTime>,
}

/// A slab of packets in flight, reusing freed slots, and the SACK blocks of those that carry
/// some (out of line: the packets themselves stay one cache line each, net/packet.rs).
///
/// Slots are handed out in address order, round and round (issue 15): a cursor moves up
/// through the slots and a new packet takes the first free slot at or after it; at the end,
/// the cursor goes back to the start if at least `1 / WRAP_FREE` of the slots are free, else
/// the slab grows by one slot. So packets sent one after another sit side by side, and a long
/// link, which delivers them in about the order they were sent, reads its packets almost
/// sequentially, where the memory system streams them. Reusing the last freed slot first (as
/// before) kept a flow's packets in one slot that wandered over the whole slab: with 10,000
/// and 100,000 flows each arrival at the bottleneck's far end was a random miss
/// (bench/README.md, "Kept: packet slots in address order"). Slot numbers are not hashed in
/// the run digest (`Ev::words` hashes a packet's `uid`).
///
/// In chunks of `PACKET_CHUNK` slots that never move (issue 15): a `Vec<Packet>` that grows
/// by doubling copies every packet in flight at each growth (the system allocator cannot
/// `mremap` a 64-byte-aligned block) and faults in twice the pages (at 10,000 flows an eighth of
/// the run's last-level cache misses; bench/README.md, "Kept: the packet slab in chunks").
#[derive(Default)]
struct Packets {
    slots: Slots,
    /// One bit per slot, set while the slot holds a packet.
    used: Vec<u64>,
    /// Slots that exist.
    len: u32,
    /// One past the slot last handed out: where the search for a free slot starts.
    cursor: u32,
    /// Slots that exist and hold no packet.
    free: u32,
    sacks: SackPool,
}

/// The slots of [`Packets`], apart from its bitmap and SACK pool so that a slot and the pool
/// can be borrowed at once.
#[derive(Default)]
struct Slots {
    /// Slots 0 to `PACKET_CHUNK - 1` (all that most runs need): a vector that grows by
    /// doubling up to `PACKET_CHUNK`.
    first: Vec<Packet>,
    /// Slot `i` beyond those is `rest[(i >> PACKET_CHUNK_BITS) - 1][i % PACKET_CHUNK]`.
    rest: Vec<Vec<Packet>>,
}

/// [`Packets`]' cursor goes back to the first slot when at least one slot in `WRAP_FREE` is
/// free, else the slab grows. Fewer free slots at the wrap mean more used slots to step over,
/// so new packets land further apart: 8 was 6-12% slower than the last-freed-first slab in 5 s
/// runs at 10,000 and 100,000 flows; 2 and 4 were alike in time, 4 takes less memory (17.1
/// against 19.2 kB per flow at 10,000 flows, 16.5 before) (bench/README.md, "Kept: packet
/// slots in address order").
const WRAP_FREE: u64 = 4;
/// [`Packets`] prefetches the slot this many places after the one it hands out: the next
/// packets' slots, which have left the caches since the cursor last passed (perf put the
/// time of the ring without it on the writes of new packets; 16 places measured no better).
const SLOT_AHEAD: u32 = 8;

/// Slots per chunk of [`Packets`] (4 MiB of packets).
const PACKET_CHUNK_BITS: u32 = 16;
const PACKET_CHUNK: usize = 1 << PACKET_CHUNK_BITS;

impl std::ops::Index<u32> for Slots {
    type Output = Packet;
    #[inline(always)]
    fn index(&self, i: u32) -> &Packet {
        let i = i as usize;
        if i < PACKET_CHUNK {
            &self.first[i]
        } else {
            &self.rest[(i >> PACKET_CHUNK_BITS) - 1][i % PACKET_CHUNK]
        }
    }
}

impl std::ops::IndexMut<u32> for Slots {
    #[inline(always)]
    fn index_mut(&mut self, i: u32) -> &mut Packet {
        let i = i as usize;
        if i < PACKET_CHUNK {
            &mut self.first[i]
        } else {
            &mut self.rest[(i >> PACKET_CHUNK_BITS) - 1][i % PACKET_CHUNK]
        }
    }
}

impl std::ops::Index<u32> for Packets {
    type Output = Packet;
    #[inline(always)]
    fn index(&self, i: u32) -> &Packet {
        &self.slots[i]
    }
}

impl std::ops::IndexMut<u32> for Packets {
    #[inline(always)]
    fn index_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i]
    }
}

impl Packets {
    #[inline]
    fn insert(&mut self, mut p: Packet, sack: &[SackBlock; MAX_SACK_BLOCKS]) -> u32 {
        if p.seg.n_sack > 0 {
            p.sack_at = self.sacks.store(sack);
        }
        let i = self.next_slot();
        if i < self.len {
            self.slots[i] = p;
            self.free -= 1;
        } else {
            self.len += 1;
            if i as usize / 64 == self.used.len() {
                self.used.push(0);
            }
            let first = &mut self.slots.first;
            if first.len() < PACKET_CHUNK {
                first.push(p);
            } else {
                self.slots.push_rest(p);
            }
        }
        self.used[i as usize / 64] |= 1 << (i % 64);
        self.cursor = i + 1;
        crate::engine::prefetch(self.ptr(i.wrapping_add(SLOT_AHEAD)));
        i
    }
    /// The slot for a new packet: the first free slot at or after the cursor; if none, the
    /// first free slot from the start, provided at least `1 / WRAP_FREE` of the slots are
    /// free; otherwise a new slot (`len`).
    #[inline]
    fn next_slot(&self) -> u32 {
        if self.free > 0 {
            if let Some(i) = self.free_from(self.cursor) {
                return i;
            }
            if self.free as u64 * WRAP_FREE >= self.len as u64 {
                return self.free_from(0).expect("a free slot below the cursor");
            }
        }
        self.len
    }
    /// The first free slot at or after `from`, if any.
    #[inline]
    fn free_from(&self, from: u32) -> Option<u32> {
        let mut w = from as usize / 64;
        let mut bits = !*self.used.get(w)? & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let i = (w * 64) as u32 + bits.trailing_zeros();
                return (i < self.len).then_some(i);
            }
            w += 1;
            bits = !*self.used.get(w)?;
        }
    }
    #[inline]
    fn release(&mut self, i: u32) {
        self.sacks.release(&self.slots[i]);
        debug_assert!(self.used[i as usize / 64] & 1 << (i % 64) != 0, "slot {i} released twice");
        self.used[i as usize / 64] &= !(1 << (i % 64));
        self.free += 1;
    }
    /// Where slot `i` is, for prefetching (null if there is no such slot: a prefetch of it
    /// is harmless).
    #[inline(always)]
    fn ptr(&self, i: u32) -> *const Packet {
        let i = i as usize;
        if i < PACKET_CHUNK {
            self.slots.first.as_ptr().wrapping_add(i)
        } else {
            self.slots.rest.get((i >> PACKET_CHUNK_BITS) - 1).map_or(std::ptr::null(), |c| c.as_ptr().wrapping_add(i % PACKET_CHUNK))
        }
    }
}

impl Slots {
    /// A new slot beyond the first chunk.
    #[cold]
    #[inline(never)]
    fn push_rest(&mut self, p: Packet) -> u32 {
        if self.rest.last().is_none_or(|c| c.len() == PACKET_CHUNK) {
            self.rest.push(Vec::with_capacity(PACKET_CHUNK));
        }
        let n = self.rest.len();
        let c = &mut self.rest[n - 1];
        c.push(p);
        u32::try_from((n << PACKET_CHUNK_BITS) + c.len() - 1).expect("more than 2^32 packets in flight")
    }
}

/// An installed application with its timer.
struct AppEntry {
    app: Box<dyn App>,
    interest: Interest,
    slot: TimerSlot,
}

/// Everything but the applications: what an application's [`AppCx`] acts on.
pub struct World {
    now: SimTime,
    duration: SimTime,
    queue: EventQueue<Ev>,
    nodes: Vec<Node>,
    links: Vec<Link>,
    hops: Vec<Hop>,
    /// The bottleneck hop (whose C the metrics use).
    bottleneck: HopId,
    /// Per hop, whether its queue in cells is traced (ATM ports).
    traced_cells: Vec<bool>,
    flows: Vec<Flow>,
    packets: Packets,
    next_uid: u64,
    /// Scripted losses at the sending host (`[[loss]]` without `at`).
    losses: Vec<LossSpec>,
    /// Scripted losses where a packet enters a link's queue, with the link.
    link_losses: Vec<(LinkId, LossSpec)>,
    out: Vec<Segment>,
    traces: BTreeMap<String, Trace>,
    tap: Tap,
    /// Traced flows' RTT samples (`flow/F/rtt`, net::schedule::RttProbe).
    rtt_probes: BTreeMap<FlowId, RttProbe>,
    /// Points each time series may hold: `trace.max_points` shared by the traced variables.
    trace_cap: usize,
    max_points: u64,
    /// tcp/ns2.rs `sack_option_bytes`: ACKs carry 8 bytes per SACK block, as ns-2's.
    sack_option_bytes: bool,
    /// `tcp.piggyback_acks`: per flow, the flow of the same application running the other
    /// way between the same two hosts (`u32::MAX`: none); empty when no flow asks for it.
    piggyback: Vec<FlowId>,
    /// `run.chain_hops` and no packet tap: hops with a single feeder are crossed without an
    /// event (see [`World::chain`]).
    chain: bool,
    /// Per hop, the hop that alone feeds it (`net::topology::single_feeders`); empty when
    /// chaining is off.
    feeder: Vec<HopId>,
    /// Per hop, whether it feeds a chained hop (so most hops skip the route lookup).
    feeds: Vec<bool>,
    /// Per hop, for the link hops that packets may enter ahead of time (those with a single
    /// feeder): the instant each packet in flight on it entered, in its order (`None`
    /// elsewhere; empty when chaining is off). Kept here, not in the hop, so that a hop stays
    /// one cache line (net/hop.rs).
    entered: Vec<Option<VecDeque<SimTime>>>,
    /// Arrival events of chained packets waiting for the instant their packet enters its
    /// last hop (see [`World::defer`]): (that instant, order, arrival, hop, packet), earliest
    /// first.
    deferred: BinaryHeap<Reverse<Deferred>>,
    deferrals: u64,
    /// Per hop, the link its packets enter (`u32::MAX` for hops with several inputs: ATM
    /// ports, custom hops), so that the link's line can be prefetched beside the hop's instead
    /// of after reading it (issue 15); empty where the loop does not prefetch.
    hop_link: Vec<LinkId>,
    /// Keys the scenario gave but does not use (`Scenario::ignored`) and its doubtful values
    /// (`Scenario::notes`), first among the warnings (last here: read once, at the end).
    scenario_warnings: Vec<String>,
}

/// A deferred arrival event (hop chaining, [`World::defer`]): (the instant its packet enters
/// its hop, order, arrival, hop, packet).
type Deferred = (SimTime, u64, SimTime, HopId, u32);

/// One run's simulation: `step`, `run_until`, `run`, then `finish` for the result.
pub struct Simulation {
    name: String,
    seed: u64,
    mss: u32,
    events: u64,
    digest: u64,
    apps: Vec<AppEntry>,
    /// Whether the loop prefetches for the next event ([`Simulation::prefetch_next`]): only
    /// where the per-flow state outgrows a core's cache (`PREFETCH_ABOVE_BYTES`); below, every
    /// line is cached and the prefetch would cost instructions for nothing.
    prefetch: bool,
    w: World,
}

/// Flows' and hops' state above which the event loop prefetches (a common size of a core's
/// L2 cache; issue 15, bench/README.md). Results do not depend on it.
const PREFETCH_ABOVE_BYTES: usize = 1 << 20;

/// What an application can do, handed to each of its hooks.
pub struct AppCx<'a> {
    w: &'a mut World,
    app: AppId,
    slot: &'a mut TimerSlot,
}

impl AppCx<'_> {
    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.w.now
    }

    /// This application's id.
    pub fn id(&self) -> AppId {
        self.app
    }

    /// Opens `flow` at `at` (then [`App::on_open`] runs).
    pub fn open_at(&mut self, flow: FlowId, at: SimTime) {
        self.w.queue.push(at, Ev::Open { flow });
    }

    /// Arms the application's one timer (`None`: leave it as it is). An earlier deadline
    /// replaces a later one; a later one waits for the one armed (re-arm in [`App::on_timer`]).
    pub fn set_timer(&mut self, at: Option<SimTime>) {
        if let Some(t) = self.slot.arm(at) {
            self.w.queue.push(t, Ev::AppTimer { app: self.app });
        }
    }

    /// Writes `bytes` to the send buffer of `flow` and sends what TCP may. Returns the bytes
    /// accepted: all of them with an unbounded buffer; with a finite one at most its free
    /// room, and [`App::on_send_space`] follows when acknowledgements free room.
    pub fn write(&mut self, flow: FlowId, bytes: u64) -> u64 {
        let now = self.w.now;
        let fl = &mut self.w.flows[flow as usize];
        let n = fl.sender.app_write(now, bytes, &mut self.w.out);
        fl.scheduled = fl.scheduled.saturating_add(n);
        self.w.after_sender(flow);
        n
    }

    /// Reads up to `max` bytes from the receive buffer of `flow` (finite buffers; a window
    /// update follows when the window can open). Returns the bytes read.
    pub fn read(&mut self, flow: FlowId, max: u64) -> u64 {
        let now = self.w.now;
        let n = self.w.flows[flow as usize].receiver.app_read(now, max, &mut self.w.out);
        self.w.after_receiver(flow);
        n
    }

    /// Free room in the send buffer of `flow` (`u64::MAX` when unbounded).
    pub fn send_space(&self, flow: FlowId) -> u64 {
        self.w.flows[flow as usize].sender.send_space()
    }

    /// Bytes waiting in the receive buffer of `flow`.
    pub fn readable(&self, flow: FlowId) -> u64 {
        self.w.flows[flow as usize].receiver.readable()
    }

    /// The application has no more data for `flow`: a FIN follows the last byte if tcp.fin.
    pub fn close(&mut self, flow: FlowId) {
        let now = self.w.now;
        self.w.flows[flow as usize].sender.close(now, &mut self.w.out);
        self.w.after_sender(flow);
    }

    /// Marks `flow`'s work complete now (its `completed_at_s`).
    pub fn complete(&mut self, flow: FlowId) {
        let now = self.w.now;
        self.w.flows[flow as usize].completed_at.get_or_insert(now);
    }

    /// Bytes delivered in order by the receiver of `flow`.
    pub fn delivered(&self, flow: FlowId) -> u64 {
        self.w.flows[flow as usize].receiver.delivered()
    }

    /// Bytes acknowledged to the sender of `flow`.
    pub fn acked(&self, flow: FlowId) -> u64 {
        self.w.flows[flow as usize].sender.bytes_acked()
    }

    /// Ends the run now (an application whose work defines the run, e.g. the ping-pong's
    /// schedule): no later event runs and the result's end (`sim_time_s`) is now.
    pub fn end_run(&mut self) {
        self.w.duration = self.w.duration.min(self.w.now);
    }
}

impl Simulation {
    /// The world of `sc` with the applications its `[app]` names.
    pub fn new(sc: &Scenario) -> Self {
        Self::with_apps(sc, app::install)
    }

    /// The world of `sc` with the applications `install` sets up (declaring flows between the
    /// topology's hosts and installing the applications that own them).
    pub fn with_apps(sc: &Scenario, install: impl FnOnce(&mut Setup<'_>)) -> Self {
        Self::with_parts(sc, |_| {}, install)
    }

    /// Like [`with_apps`](Self::with_apps), with `network` first given the network the
    /// topology builder made: it may replace or wrap hops (`Hop::Custom`, `net::hop::HopModel`)
    /// and change routes, so that a new node or hop kind runs without this loop knowing it.
    pub fn with_parts(sc: &Scenario, network: impl FnOnce(&mut topology::Network), install: impl FnOnce(&mut Setup<'_>)) -> Self {
        let rngs = RngFactory::new(sc.seed);
        let mut net = topology::build(sc, &rngs);
        network(&mut net);
        let mut setup = Setup::new(sc, &net.endpoints, &rngs);
        install(&mut setup);
        let Setup { flows: decls, apps: installed, .. } = setup;
        // ns-2 boot_time_ per agent (tcp.ns2.random_tick_phase): drawn only when asked for.
        let mut boot = rngs.stream("tcp/boot_time");
        let flows: Vec<Flow> = decls
            .iter()
            .enumerate()
            .map(|(f, d)| Flow {
                role: d.role,
                app: d.app,
                src: d.src,
                dst: d.dst,
                sender: TcpSender::new(crate::tcp::ns2::Ns2Compat::with_random_tick_phase(&d.tcp, &mut boot)),
                receiver: TcpReceiver::new(d.tcp.clone()),
                snd_slot: TimerSlot::default(),
                rcv_slot: TimerSlot::default(),
                interest: Interest::default(),
                first_hop: [net.nodes[d.src as usize].route(d.dst), net.nodes[d.dst as usize].route(d.src)],
                scheduled: 0,
                completed_at: None,
                traced: sc.trace.flows.contains(&(f as u32)),
            })
            .collect();
        // tcp.piggyback_acks: each flow's reverse half (same application, the same two hosts
        // the other way). Computed once, only when some flow asks for it.
        let piggyback: Vec<FlowId> = if decls.iter().any(|d| d.tcp.piggyback_acks) {
            // One index of (application, source, destination) -> first such flow: O(n log n)
            // at 100,000 flows, where a search per flow would be quadratic.
            let mut by_ends: BTreeMap<(AppId, NodeId, NodeId), FlowId> = BTreeMap::new();
            for (i, f) in flows.iter().enumerate() {
                by_ends.entry((f.app, f.src, f.dst)).or_insert(i as FlowId);
            }
            let reverse = |f: &Flow| by_ends.get(&(f.app, f.dst, f.src)).copied().unwrap_or(u32::MAX);
            flows.iter().zip(&decls).map(|(f, d)| if d.tcp.piggyback_acks { reverse(f) } else { u32::MAX }).collect()
        } else {
            Vec::new()
        };
        let mut links = net.links;
        let mut hops = net.hops;
        // Queue traces: in packets on IP links, in cells at hops that keep their own queue.
        let traced = |name: &str| sc.trace.links.iter().any(|n| n == name);
        let traced_cells: Vec<bool> = hops.iter().map(|h| h.queue_cells().is_some() && traced(&links[h.out_link() as usize].name)).collect();
        // A traced port's queue is sampled at its wake-ups: at its own times, without slack.
        for (h, _) in hops.iter_mut().zip(&traced_cells).filter(|(_, &t)| t) {
            h.set_eager();
        }
        let ported: Vec<u32> = hops.iter().filter(|h| h.queue_cells().is_some()).map(|h| h.out_link()).collect();
        // Per traced flow: cwnd, ssthresh, srtt, data in flight, bytes received, RTT samples,
        // bytes acknowledged.
        let traced_vars = (7 * sc.trace.flows.len() + sc.trace.links.len()).max(1) as u64;
        let trace_cap = (sc.trace.max_points / traced_vars).min(usize::MAX as u64) as usize;
        for (i, l) in links.iter_mut().enumerate() {
            if traced(&l.name) && !ported.contains(&(i as u32)) {
                l.trace = Some(Trace::with_cap(trace_cap));
            }
        }
        let link_losses = sc
            .losses
            .iter()
            .filter_map(|l| {
                let name = l.at.as_ref()?;
                let id = links.iter().position(|k| &k.name == name).expect("validated link name");
                Some((id as LinkId, l.clone()))
            })
            .collect();
        // Moving links' delays and routes are known in advance: their traces are written now.
        let traces = schedule::static_traces(&hops, &links, sc);
        // run.chain_hops: which hops a single link feeds, from the flows' ends and the routes.
        let chain = sc.chain_hops && sc.trace.packets.is_none();
        let feeder = if chain { topology::single_feeders(&net.nodes, &links, &hops, flows.iter().map(|f| (f.src, f.dst))) } else { Vec::new() };
        let mut feeds = vec![false; if chain { hops.len() } else { 0 }];
        let mut entered: Vec<Option<VecDeque<SimTime>>> = if chain { (0..hops.len()).map(|_| None).collect() } else { Vec::new() };
        for (n, &f) in feeder.iter().enumerate().filter(|(_, &f)| f != topology::NO_FEEDER) {
            feeds[f as usize] = true;
            if let Hop::Link(_) = &hops[n] {
                entered[n] = Some(VecDeque::new());
            }
        }
        let mut w = World {
            now: SimTime::ZERO,
            duration: sc.duration,
            queue: EventQueue::new(),
            nodes: net.nodes,
            links,
            hops,
            bottleneck: net.bottleneck,
            traced_cells,
            flows,
            packets: Packets::default(),
            next_uid: 0,
            scenario_warnings: sc.ignored.iter().chain(&sc.notes).cloned().collect(),
            losses: sc.losses.iter().filter(|l| l.at.is_none()).cloned().collect(),
            link_losses,
            out: Vec::with_capacity(64),
            traces,
            tap: Tap::default(),
            rtt_probes: sc.trace.flows.iter().map(|&f| (f, RttProbe::default())).collect(),
            trace_cap,
            max_points: sc.trace.max_points,
            sack_option_bytes: sc.tcp.ns2.sack_option_bytes,
            piggyback,
            chain: chain && feeds.contains(&true),
            feeder,
            feeds,
            entered,
            deferred: BinaryHeap::new(),
            deferrals: 0,
            hop_link: Vec::new(),
        };
        if let Some(filter) = &sc.trace.packets {
            let recorder = w.packet_recorder(filter, sc.tcp.mss, sc.trace.max_packet_events, sc.trace.packet_memory);
            w.install_tap(Box::new(recorder));
        }
        let mut apps: Vec<AppEntry> = installed.into_iter().map(|app| AppEntry { interest: app.interest(), app, slot: TimerSlot::default() }).collect();
        for fl in &mut w.flows {
            if let Some(e) = apps.get(fl.app as usize) {
                fl.interest = e.interest;
            }
        }
        for (i, e) in apps.iter_mut().enumerate() {
            e.app.start(&mut AppCx { w: &mut w, app: i as AppId, slot: &mut e.slot });
        }
        let state_bytes = w.flows.len() * std::mem::size_of::<Flow>() + w.hops.len() * std::mem::size_of::<Hop>();
        let mut sim = Simulation {
            prefetch: false,
            name: sc.name.clone(),
            seed: sc.seed,
            mss: sc.tcp.mss,
            events: 0,
            // FNV-1a offset basis as the digest's starting value.
            digest: 0xcbf2_9ce4_8422_2325,
            apps,
            w,
        };
        sim.set_prefetch(state_bytes > PREFETCH_ABOVE_BYTES);
        sim
    }

    /// Whether the loop prefetches (chosen by the size of the flows' and hops' state). Hints
    /// only: for tests that check a run does not depend on them.
    #[doc(hidden)]
    pub fn set_prefetch(&mut self, on: bool) {
        self.prefetch = on;
        self.w.hop_link = if on {
            self.w.hops.iter().map(|h| if matches!(h, Hop::Link(_) | Hop::Moving(_)) { h.first_link(0) } else { LinkId::MAX }).collect()
        } else {
            Vec::new()
        };
    }

    /// Installs a packet tap (packet traces): every packet event from now on goes to it.
    /// Hop chaining (`run.chain_hops`) stops: a tap sees each hop's events at their instants.
    /// (Install it before the run: packets already chained have had their later hops.)
    pub fn set_tap(&mut self, tap: Box<dyn PacketTap>) {
        self.w.install_tap(tap);
        self.w.chain = false;
    }

    pub fn now(&self) -> SimTime {
        self.w.now
    }
    pub fn duration(&self) -> SimTime {
        self.w.duration
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn flow_count(&self) -> usize {
        self.w.flows.len()
    }
    /// The receiving TCP of `flow` (its delivered bytes, statistics).
    pub fn receiver(&self, flow: FlowId) -> &TcpReceiver {
        &self.w.flows[flow as usize].receiver
    }
    /// A moving hop's counters (reordered packets, drops for want of a path); None for
    /// other hops.
    pub fn moving_stats(&self, hop: HopId) -> Option<&MovingStats> {
        match &self.w.hops[hop as usize] {
            Hop::Moving(m) => Some(&m.flight.stats),
            _ => None,
        }
    }
    /// The sending TCP of `flow` (its window, statistics).
    pub fn sender(&self, flow: FlowId) -> &TcpSender {
        &self.w.flows[flow as usize].sender
    }
    /// Application `app` (to ask whether it is done).
    pub fn app(&self, app: AppId) -> &dyn App {
        self.apps[app as usize].app.as_ref()
    }

    /// Runs the next event if it is due no later than the end of the run. Returns false when
    /// nothing is left to run.
    pub fn step(&mut self) -> bool {
        match self.w.next_time() {
            Some(t) if t <= self.w.duration => {}
            _ => return false,
        }
        let (t, ev) = self.w.queue.pop().expect("peeked");
        if self.prefetch {
            self.prefetch_next();
        }
        self.w.now = t;
        self.events += 1;
        let (a, b) = ev.words(&self.w.packets);
        for w in [t.0, a, b] {
            self.digest = (self.digest ^ w).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.dispatch(ev);
        true
    }

    /// Prefetches the first line of what an event due soon reads first (its hop and packet,
    /// or its flow), so that this memory arrives while the current event runs: with 10,000+
    /// flows these are mostly cache misses (issue 15, bench/README.md). A hint only: results
    /// do not depend on it.
    #[inline(always)]
    fn prefetch_next(&self) {
        use crate::engine::prefetch;
        let w = &self.w;
        match w.queue.peek_soon() {
            Some(&Ev::HopArrive { hop, pkt }) => {
                prefetch(w.hops.as_ptr().wrapping_add(hop as usize));
                if pkt != NO_PACKET {
                    prefetch(w.packets.ptr(pkt));
                }
            }
            Some(&Ev::Arrive { pkt, .. }) => prefetch(w.packets.ptr(pkt)),
            Some(&Ev::SenderTimer { flow } | &Ev::ReceiverTimer { flow }) => prefetch(w.flows.as_ptr().wrapping_add(flow as usize)),
            _ => {}
        }
    }

    /// Runs every event due at or before `until` (and never past the end of the run).
    pub fn run_until(&mut self, until: SimTime) {
        while !self.run_until_bounded(until, u64::MAX) {}
    }

    /// Like [`run_until`](Self::run_until) but stops after at most `max_events` events, so
    /// that a caller can look up between slices (progress, Ctrl-C). Returns true once every
    /// event due at or before `until` has run.
    pub fn run_until_bounded(&mut self, until: SimTime, max_events: u64) -> bool {
        let until = until.min(self.w.duration);
        let mut n = 0;
        while let Some(t) = self.w.next_time() {
            if t > until {
                break;
            }
            if n == max_events {
                return false;
            }
            // False once the run has been ended early (AppCx::end_run) before `until`.
            if !self.step() {
                break;
            }
            n += 1;
        }
        self.w.now = self.w.now.max(until.min(self.w.duration));
        true
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.w.duration);
    }

    /// Runs `f` on the application owning `flow`, if any.
    #[inline]
    fn with_app(&mut self, flow: FlowId, f: impl FnOnce(&mut dyn App, &mut AppCx<'_>)) {
        let app = self.w.flows[flow as usize].app;
        if let Some(e) = self.apps.get_mut(app as usize) {
            f(e.app.as_mut(), &mut AppCx { w: &mut self.w, app, slot: &mut e.slot });
        }
    }

    /// A TCP endpoint of `flow` took a segment travelling `dir`: tell its application.
    #[inline]
    fn took(&mut self, flow: FlowId, dir: Dir) {
        let fl = &self.w.flows[flow as usize];
        if fl.app as usize >= self.apps.len() {
            return;
        }
        let interest = fl.interest;
        match dir {
            Dir::Data => {
                // Finite receive buffers only (always 0 otherwise).
                let readable = self.w.flows[flow as usize].receiver.readable();
                if readable > 0 {
                    self.with_app(flow, |a, cx| a.on_readable(cx, flow, readable));
                }
                if interest.delivered {
                    let d = self.w.flows[flow as usize].receiver.delivered();
                    self.with_app(flow, |a, cx| a.on_delivered(cx, flow, d));
                }
            }
            Dir::Ack => {
                // Finite send buffers only: a short write earlier, room freed now.
                if self.w.flows[flow as usize].sender.take_writable() {
                    self.with_app(flow, |a, cx| a.on_send_space(cx, flow));
                }
                if interest.acked {
                    let d = self.w.flows[flow as usize].sender.bytes_acked();
                    self.with_app(flow, |a, cx| a.on_acked(cx, flow, d));
                }
            }
        }
    }

    fn dispatch(&mut self, ev: Ev) {
        let w = &mut self.w;
        match ev {
            Ev::Arrive { pkt, node } => {
                if let Some((flow, dir)) = w.arrive(pkt, node) {
                    self.took(flow, dir);
                }
            }
            Ev::HopArrive { hop, .. } => {
                // None: a moving link's stale event (net::schedule).
                let Some((pkt, node, next)) = w.hops[hop as usize].arrive(w.now, &w.links) else { return };
                if self.prefetch {
                    w.prefetch_behind(hop);
                }
                let entered = if w.entered.is_empty() { None } else { w.pop_entered(hop) };
                if let Some(t) = next {
                    // Hop chaining: a packet offered ahead of time has its arrival scheduled
                    // when it enters the hop, as without chaining.
                    let head = w.hops[hop as usize].head_packet();
                    w.schedule_arrival(entered.unwrap_or(w.now), t, hop, head);
                }
                if let Some((flow, dir)) = w.arrive(pkt, node) {
                    self.took(flow, dir);
                }
            }
            Ev::SenderTimer { flow } => {
                let now = w.now;
                let fl = &mut w.flows[flow as usize];
                if fl.snd_slot.fire(now) {
                    if fl.sender.poll_at().is_some_and(|t| t <= now) {
                        fl.sender.on_timer(now, &mut w.out);
                    }
                    w.after_sender(flow);
                }
            }
            Ev::ReceiverTimer { flow } => {
                let now = w.now;
                let fl = &mut w.flows[flow as usize];
                if fl.rcv_slot.fire(now) {
                    if fl.receiver.poll_at().is_some_and(|t| t <= now) {
                        fl.receiver.on_timer(now, &mut w.out);
                    }
                    w.after_receiver(flow);
                }
            }
            Ev::Open { flow } => {
                let now = w.now;
                w.flows[flow as usize].sender.connect(now, &mut w.out);
                w.after_sender(flow);
                self.with_app(flow, |a, cx| a.on_open(cx, flow));
            }
            Ev::AppTimer { app } => {
                let e = &mut self.apps[app as usize];
                if e.slot.fire(w.now) {
                    e.app.on_timer(&mut AppCx { w, app, slot: &mut e.slot });
                }
            }
            Ev::HopWake { hop } => w.hop_wake(hop),
        }
    }

    /// Closes the run and returns its result.
    pub fn finish(mut self) -> crate::metrics::result::RunResult {
        let capacity_bps = self.w.hops[self.w.bottleneck as usize].capacity_bps(&self.w.links, self.mss, self.w.duration);
        let end = self.w.duration;
        let mut reports: Vec<_> = self.apps.iter_mut().filter_map(|e| e.app.report(end)).collect();
        // Opens fixed at build time that the run never reached: zeros, not a result (one line
        // for all of them: with 100,000 flows there may be as many).
        let late: Vec<(FlowId, SimTime)> = self.apps.iter().filter_map(|e| e.app.scheduled_open()).filter(|&(_, at)| at >= end).collect();
        if let Some(&(flow, at)) = late.iter().min_by_key(|&&(f, _)| f) {
            let warning = format!(
                "{} of {} flows open at or after the run's end ({} s), so send nothing (the first: flow {flow} at {} s): check app.start and app.stagger against run.duration",
                late.len(),
                self.w.flows.len(),
                end.as_secs_f64(),
                at.as_secs_f64()
            );
            reports.push(crate::app::AppReport { warnings: vec![warning], ..Default::default() });
        }
        finish::result(self.w, self.name, self.seed, self.events, self.digest, capacity_bps, reports)
    }
}

impl World {
    /// Installs a packet tap (`trace.packets`, `Simulation::set_tap`). A lost frame is recorded
    /// at the wake-up that finds it: ATM ports wake at their own times, so that the traces are
    /// those of a run without slack.
    fn install_tap(&mut self, tap: Box<dyn PacketTap>) {
        self.tap = Tap::new(tap);
        for h in &mut self.hops {
            h.set_eager();
        }
    }

    /// The packet tap of `trace.packets` (crate::trace::recorder), for this world's flows,
    /// links and hops.
    fn packet_recorder(&self, filter: &crate::trace::PacketFilter, mss: u32, max_events: u64, memory: crate::trace::memory::MemorySource) -> crate::trace::recorder::PacketRecorder {
        use crate::trace::{recorder::HopLinks, FlowEnds, LinkInfo, NO_LINK};
        let first = |from: NodeId, to: NodeId| {
            let via = self.nodes[from as usize].route(to);
            if via == Via::NONE {
                NO_LINK
            } else {
                self.hops[via.hop as usize].first_link(via.input)
            }
        };
        let flows = self.flows.iter().map(|f| FlowEnds { src: f.src, dst: f.dst, mss: mss.min(u16::MAX as u32) as u16 }).collect();
        let first_links = self.flows.iter().map(|f| [first(f.src, f.dst), first(f.dst, f.src)]).collect();
        let links = self.links.iter().map(|l| LinkInfo { name: l.name.clone(), from: l.from, to: l.to, rate_bps: l.rate.as_bps() }).collect();
        let hops = self.hops.iter().map(|h| if h.queue_cells().is_some() { HopLinks::Atm { out: h.out_link() } } else { HopLinks::Link(h.out_link()) }).collect();
        crate::trace::recorder::PacketRecorder::new(flows, links, hops, first_links, filter, max_events, memory)
    }

    /// Puts on the wire the segments an endpoint of `flow` just emitted: data from the
    /// sender's host, ACKs from the receiver's.
    fn flush(&mut self, flow: FlowId, dir: Dir) {
        let fl = &self.flows[flow as usize];
        let (src, dst) = match dir {
            Dir::Data => (fl.src, fl.dst),
            Dir::Ack => (fl.dst, fl.src),
        };
        let via = fl.first_hop[dir as usize];
        let mut out = std::mem::take(&mut self.out);
        for seg in out.drain(..) {
            self.send(flow, dir, src, dst, via, seg);
        }
        self.out = out;
    }

    /// Sends what the sender of `flow` emitted and re-arms its timer.
    fn after_sender(&mut self, flow: FlowId) {
        let now = self.now;
        if !self.piggyback.is_empty() {
            self.piggyback_ack(flow);
        }
        self.flush(flow, Dir::Data);
        let fl = &mut self.flows[flow as usize];
        if let Some(t) = fl.snd_slot.arm(fl.sender.poll_at().map(|t| t.max(now))) {
            self.queue.push(t, Ev::SenderTimer { flow });
        }
        if fl.traced {
            let t = now.as_secs_f64();
            let (cwnd, ssthresh, srtt) = (fl.sender.cwnd() as f64, fl.sender.ssthresh() as f64, fl.sender.srtt());
            let cap = self.trace_cap;
            self.traces.entry(format!("flow/{flow}/cwnd")).or_insert_with(|| Trace::with_cap(cap)).record(t, cwnd);
            self.traces.entry(format!("flow/{flow}/ssthresh")).or_insert_with(|| Trace::with_cap(cap)).record(t, ssthresh);
            if let Some(srtt) = srtt {
                self.traces.entry(format!("flow/{flow}/srtt")).or_insert_with(|| Trace::with_cap(cap)).record(t, srtt.as_secs_f64());
            }
            // Data in flight: sent and not yet acknowledged (seed 004 figures 3-4).
            let inflight = fl.sender.snd_max().saturating_sub(fl.sender.snd_una()) as f64;
            self.traces.entry(format!("flow/{flow}/inflight")).or_insert_with(|| Trace::with_cap(cap)).record(t, inflight);
        }
    }

    /// `tcp.piggyback_acks`: before the data the sender of `flow` just emitted leaves its host,
    /// the delayed ACK pending at that host for the reverse half-connection leaves, just ahead
    /// of it (one connection would carry it on that data; here it is its own packet).
    fn piggyback_ack(&mut self, flow: FlowId) {
        let reverse = self.piggyback[flow as usize];
        if reverse == u32::MAX || !self.out.iter().any(|s| s.len > 0) {
            return;
        }
        let data = std::mem::take(&mut self.out);
        self.flows[reverse as usize].receiver.ack_now(&mut self.out);
        if !self.out.is_empty() {
            self.after_receiver(reverse);
        }
        self.out = data;
    }

    /// Sends what the receiver of `flow` emitted and re-arms its timer.
    fn after_receiver(&mut self, flow: FlowId) {
        let now = self.now;
        self.flush(flow, Dir::Ack);
        let fl = &mut self.flows[flow as usize];
        if let Some(t) = fl.rcv_slot.arm(fl.receiver.poll_at().map(|t| t.max(now))) {
            self.queue.push(t, Ev::ReceiverTimer { flow });
        }
        if fl.traced {
            // In-order bytes at the receiver (its received sequence number, seed 004 figure 10).
            let got = fl.receiver.received() as f64;
            let cap = self.trace_cap;
            self.traces.entry(format!("flow/{flow}/received")).or_insert_with(|| Trace::with_cap(cap)).record(now.as_secs_f64(), got);
        }
    }

    /// Puts a segment on the wire at its source host. Drop decision: a scripted loss at the
    /// sender (`[[loss]]`).
    fn send(&mut self, flow: FlowId, dir: Dir, src: NodeId, dst: NodeId, via: Via, seg: Segment) {
        let pkt = Packet { uid: self.next_uid, flow, dir, src, dst, bytes: seg.wire_bytes(self.sack_option_bytes), seg: seg.header(), corrupted: false, sack_at: 0 };
        if dir == Dir::Data && !self.losses.is_empty() && seg.len > 0 {
            let offset = seg.seq - 1;
            if let Some(i) = self.losses.iter().position(|l| l.flow == flow && l.offset == offset && l.transmission == seg.tx_count) {
                self.losses.swap_remove(i);
                let link = self.hops[via.hop as usize].first_link(via.input);
                self.links[link as usize].stats.drops_scripted += 1;
                self.tap.event_segment(self.now, PacketEvent::Dropped { hop: None, reason: TapDrop::Scripted }, &pkt, &seg);
                return;
            }
        }
        if dir == Dir::Data && seg.len > 0 && !self.rtt_probes.is_empty() {
            if let Some(p) = self.rtt_probes.get_mut(&flow) {
                p.on_send(self.now, seg.seq, seg.seq + seg.len as u64, seg.tx_count);
            }
        }
        self.next_uid += 1;
        self.tap.event_segment(self.now, PacketEvent::Sent, &pkt, &seg);
        let id = self.packets.insert(pkt, &seg.sack);
        self.forward(id, via);
    }

    /// Offers packet `id` to hop `via`. Drop decisions: the hop's (drop-tail queue full, bit
    /// errors marked for the far node; an ATM port decides per cell later, in `hop_wake`).
    #[inline]
    fn forward(&mut self, id: u32, via: Via) {
        if self.chain && self.feeds[via.hop as usize] {
            return self.forward_chained(id, via);
        }
        let now = self.now;
        if !self.link_losses.is_empty() && self.scripted_at_link(now, id, via) {
            return;
        }
        self.offer(now, id, via);
    }

    /// [`forward`](Self::forward) to a hop that feeds a chained hop: through every hop of the
    /// chain at once ([`World::chain`]). Out of line: the unchained path stays small.
    #[inline(never)]
    fn forward_chained(&mut self, id: u32, via: Via) {
        let (mut now, mut via) = (self.now, via);
        loop {
            if !self.link_losses.is_empty() && self.scripted_at_link(now, id, via) {
                return;
            }
            if self.chain && self.feeds[via.hop as usize] {
                match self.chain(now, id, via) {
                    Chained::Done => return,
                    Chained::Next(t, next) => {
                        (now, via) = (t, next);
                        continue;
                    }
                    Chained::No => {}
                }
            }
            return self.offer(now, id, via);
        }
    }

    /// Hop chaining (`run.chain_hops`, issue 15): packet `id` enters the link hop `via` at
    /// `now`; if the hop its far node routes it onto is fed by `via` alone
    /// (`net::topology::single_feeders`), the packet is not put in flight on `via` (no arrival
    /// event): the caller offers it to that next hop at once, at the instant it reaches the
    /// far node, which is known now. The next hop sees the same packets in the same order at
    /// the same instants as without chaining, so its queue, drops, bit errors, statistics and
    /// queue trace are the same; only the engine events differ (one fewer per chained hop).
    /// Not chained: a packet for the far node itself, one corrupted on `via` (the far node
    /// discards it), one arriving after the end of the run (it never arrives).
    fn chain(&mut self, now: SimTime, id: u32, via: Via) -> Chained {
        let Hop::Link(h) = &mut self.hops[via.hop as usize] else { return Chained::No };
        let p = &mut self.packets[id];
        let far = h.to();
        if far == p.dst {
            return Chained::No;
        }
        let next = self.nodes[far as usize].route(p.dst);
        if next == Via::NONE || self.feeder[next.hop as usize] != via.hop {
            return Chained::No;
        }
        match h.enqueue(now, p, &mut self.links) {
            // Counted by the link; no tap is installed while chaining.
            Admit::Dropped(_) => self.packets.release(id),
            Admit::Sent { arrival, corrupted } => {
                if !corrupted && arrival <= self.duration {
                    return Chained::Next(arrival, next);
                }
                let next = h.keep(arrival, id);
                self.track_entered(via.hop, now);
                if let Next::Arrive(t) = next {
                    self.schedule_arrival(now, t, via.hop, id);
                }
            }
        }
        Chained::Done
    }

    /// Prefetching along a link's packets in flight (issue 15): a long link (the bottleneck)
    /// delivers its packets one after another, so the packets a few places behind its head are
    /// those of the next arrivals. Two stages: the packet `FAR` places behind is fetched; the
    /// one `NEAR` places behind, fetched `FAR - NEAR` arrivals ago, is read to fetch what its
    /// arrival will read (its flow and endpoint where the far node is its destination, else
    /// the hop it goes on to). Hints only: results do not depend on them.
    #[inline(never)]
    fn prefetch_behind(&self, hop: HopId) {
        use crate::engine::prefetch;
        // Places behind the head, in arrivals (about 0.2 us of run time each at 100,000 flows).
        const FAR: usize = 6;
        const NEAR: usize = 3;
        // The FIFO's own entries, 16 bytes each, were written a propagation delay ago and have
        // left the caches: fetched 4 lines ahead of the far stage's reads (issue 15: the read of
        // the entry `FAR` places behind was most of this function's time at 100,000 flows).
        const FIFO_AHEAD: usize = FAR + 16;
        let h = &self.hops[hop as usize];
        if let Some(e) = h.entry_behind_head(FIFO_AHEAD) {
            prefetch(e);
        }
        if let Some((far, _)) = h.behind_head(FAR) {
            prefetch(self.packets.ptr(far));
        }
        let Some((near, to)) = h.behind_head(NEAR) else { return };
        let p = &self.packets[near];
        if p.dst == to {
            let fl = self.flows.as_ptr().wrapping_add(p.flow as usize);
            prefetch(fl);
            let end = if p.dir == Dir::Data { std::mem::offset_of!(Flow, receiver) } else { std::mem::offset_of!(Flow, sender) };
            prefetch((fl as *const u8).wrapping_add(end));
        } else {
            let via = self.nodes[to as usize].route(p.dst);
            self.prefetch_hop(via.hop);
        }
    }

    /// Prefetches hop `hop`'s line and its link's first line together (issue 15: a packet
    /// offered to a hop reads the hop, then its link; fetched one after the other, the second
    /// miss waited for the first). Hints only; nothing where the loop does not prefetch.
    #[inline(always)]
    fn prefetch_hop(&self, hop: HopId) {
        use crate::engine::prefetch;
        if let Some(&link) = self.hop_link.get(hop as usize) {
            prefetch(self.hops.as_ptr().wrapping_add(hop as usize));
            if link != LinkId::MAX {
                prefetch(self.links.as_ptr().wrapping_add(link as usize));
            }
        }
    }

    /// Hop chaining: a packet entered link hop `hop` at `at`; recorded where the hop's packets
    /// may enter ahead of time ([`World::entered`]).
    #[inline]
    fn track_entered(&mut self, hop: HopId, at: SimTime) {
        if let Some(Some(e)) = self.entered.get_mut(hop as usize) {
            e.push_back(at);
        }
    }

    /// Hop chaining: the head packet of link hop `hop` arrived; returns the instant the next
    /// head entered, where tracked ([`World::entered`]: later than the present for a packet
    /// offered ahead of time).
    #[inline(never)]
    fn pop_entered(&mut self, hop: HopId) -> Option<SimTime> {
        let e = self.entered[hop as usize].as_mut()?;
        e.pop_front();
        e.front().copied()
    }

    /// Schedules the arrival at `at` of the head packet (`pkt`, a prefetch hint) of link hop
    /// `hop`, which entered it at `entered`: now, or deferred for a chained packet that enters
    /// later.
    #[inline]
    fn schedule_arrival(&mut self, entered: SimTime, at: SimTime, hop: HopId, pkt: u32) {
        if entered > self.now {
            self.defer(entered, at, hop, pkt);
        } else {
            self.queue.push(at, Ev::HopArrive { hop, pkt });
        }
    }

    /// Hop chaining: the arrival event at `at` of a chained packet that becomes the head of
    /// link hop `hop` when it enters it, at `entered` (later than now). Without chaining that
    /// event is scheduled at `entered`, by the event of the packet's arrival at the hop's
    /// near node; the engine runs equal times in the order they were scheduled, so scheduling
    /// it now would put it ahead of events at the same time `at` scheduled between now and
    /// `entered` (a delayed-ACK timer, another packet's arrival). It is scheduled instead just
    /// before the first event at or after `entered` runs ([`World::next_time`]): after every
    /// event scheduled before `entered`, before every event scheduled from `entered` on, as
    /// without chaining. (Left open: the order among events at the instant `entered` itself,
    /// where the arrival event of the unchained run sits somewhere among them; it matters
    /// only if one of them also schedules an event at exactly `at`.)
    #[cold]
    fn defer(&mut self, entered: SimTime, at: SimTime, hop: HopId, pkt: u32) {
        self.deferred.push(Reverse((entered, self.deferrals, at, hop, pkt)));
        self.deferrals += 1;
    }

    /// The time of the next event, after scheduling the deferred arrivals (see
    /// [`World::defer`]) whose packets have entered their hop by then.
    #[inline(always)]
    fn next_time(&mut self) -> Option<SimTime> {
        if self.deferred.is_empty() {
            return self.queue.peek_time();
        }
        self.next_time_deferred()
    }

    #[inline(never)]
    fn next_time_deferred(&mut self) -> Option<SimTime> {
        while let Some(&Reverse((entered, _, at, hop, pkt))) = self.deferred.peek() {
            if self.queue.peek_time().is_some_and(|t| t < entered) {
                break;
            }
            self.deferred.pop();
            self.queue.push(at, Ev::HopArrive { hop, pkt });
        }
        self.queue.peek_time()
    }

    /// Offers packet `id` to hop `via` at `now` (the event's time, or a chained arrival).
    #[inline]
    fn offer(&mut self, now: SimTime, id: u32, via: Via) {
        let p = &mut self.packets[id];
        let hop = &mut self.hops[via.hop as usize];
        let o = hop.offer(now, via.input, id, p, &mut self.links);
        if !self.entered.is_empty() && matches!(o.admit, Admit::Sent { .. }) {
            self.track_entered(via.hop, now);
        }
        match o.next {
            Next::Nothing => {}
            // For a link, the packet offered is the new head (a moving link may reorder: the
            // hint may then name another packet, which costs nothing but a wasted prefetch).
            Next::Arrive(t) => self.schedule_arrival(now, t, via.hop, id),
            Next::Wake(t) => self.queue.push(t, Ev::HopWake { hop: via.hop }),
        }
        match o.admit {
            Admit::Sent { arrival, .. } => {
                if self.tap.is_on() {
                    let depart = Some(arrival.saturating_sub(self.links[self.hops[via.hop as usize].first_link(via.input) as usize].delay));
                    self.tap.event(now, PacketEvent::Queued { hop: via.hop, depart }, &self.packets[id], &self.packets.sacks);
                }
            }
            // A moving link's packet whose transmission ends without a path: sent on the link
            // (its figures count it), lost as its last bit leaves (docs/leo.md). Traced as
            // queued and dequeued as any packet, and dropped then, not when it was queued.
            Admit::Dropped(DropReason::NoRoute) if self.tap.is_on() => {
                let end = self.links[self.hops[via.hop as usize].first_link(via.input) as usize].busy_until();
                self.tap.event(now, PacketEvent::Queued { hop: via.hop, depart: Some(end) }, &self.packets[id], &self.packets.sacks);
                self.tap.event(end, PacketEvent::Dropped { hop: Some(via.hop), reason: TapDrop::NoRoute }, &self.packets[id], &self.packets.sacks);
                self.packets.release(id);
            }
            Admit::Dropped(reason) => {
                let reason = match reason {
                    DropReason::QueueFull => TapDrop::QueueFull,
                    DropReason::Corrupted => TapDrop::Corrupted,
                    DropReason::Scripted => TapDrop::Scripted,
                    DropReason::NoRoute => TapDrop::NoRoute,
                };
                self.tap.event(now, PacketEvent::Dropped { hop: Some(via.hop), reason }, &self.packets[id], &self.packets.sacks);
                self.packets.release(id);
            }
        }
    }

    /// Drop decision: a scripted loss (`[[loss]] at = "link"`) where packet `id` would enter
    /// the queue of the link `via` serialises it on, at `now`. Returns true if it was dropped.
    #[cold]
    fn scripted_at_link(&mut self, now: SimTime, id: u32, via: Via) -> bool {
        let p = &self.packets[id];
        if p.dir != Dir::Data || p.seg.len == 0 {
            return false;
        }
        let link = self.hops[via.hop as usize].first_link(via.input);
        let (flow, offset, tx) = (p.flow, p.seg.seq - 1, p.seg.tx_count);
        let Some(i) = self.link_losses.iter().position(|(k, l)| *k == link && l.flow == flow && l.offset == offset && l.transmission == tx) else { return false };
        self.link_losses.swap_remove(i);
        self.links[link as usize].stats.drops_scripted += 1;
        self.tap.event(now, PacketEvent::Dropped { hop: Some(via.hop), reason: TapDrop::Scripted }, p, &self.packets.sacks);
        self.packets.release(id);
        true
    }

    /// Packet `id` reaches `node`: forwarded, discarded (corrupted), or taken by its TCP
    /// endpoint, whose flow and direction are returned.
    fn arrive(&mut self, id: u32, node: NodeId) -> Option<(FlowId, Dir)> {
        let p = &self.packets[id];
        if p.corrupted {
            // Discarded by the receiving interface (counted by the link that corrupted it).
            self.tap.event(self.now, PacketEvent::Dropped { hop: None, reason: TapDrop::Corrupted }, p, &self.packets.sacks);
            self.packets.release(id);
            return None;
        }
        if p.dst != node {
            let via = self.nodes[node as usize].route(p.dst);
            debug_assert_ne!(via, Via::NONE, "no route from {node} to {}", p.dst);
            self.forward(id, via);
            return None;
        }
        self.tap.event(self.now, PacketEvent::Received, p, &self.packets.sacks);
        let (flow, dir) = (p.flow, p.dir);
        let seg = self.packets.sacks.segment(p);
        self.packets.release(id);
        let now = self.now;
        // The reply leaves by the flow's first hop the other way: its hop and link lines are
        // fetched while the endpoint works (issue 15).
        let back = if dir == Dir::Data { Dir::Ack } else { Dir::Data };
        self.prefetch_hop(self.flows[flow as usize].first_hop[back as usize].hop);
        let fl = &mut self.flows[flow as usize];
        match dir {
            Dir::Data => {
                fl.receiver.on_segment(now, &seg, &mut self.out);
                self.after_receiver(flow);
            }
            Dir::Ack => {
                fl.sender.on_segment(now, &seg, &mut self.out);
                // Traced flows only (an empty map costs one test per ACK).
                if let Some(p) = if self.rtt_probes.is_empty() { None } else { self.rtt_probes.get_mut(&flow).filter(|_| seg.has_ack()) } {
                    if let Some(rtt) = p.on_ack(now, seg.ack) {
                        // Every sample (not only changes): equal consecutive samples are data.
                        let cap = self.trace_cap;
                        self.traces.entry(format!("flow/{flow}/rtt")).or_insert_with(|| Trace::with_cap(cap)).push_sample(now.as_secs_f64(), rtt.as_secs_f64());
                    }
                    // Bytes acknowledged, for throughput against time (scripts/plot_leo.py).
                    let cap = self.trace_cap;
                    self.traces.entry(format!("flow/{flow}/acked")).or_insert_with(|| Trace::with_cap(cap)).record(now.as_secs_f64(), seg.ack.saturating_sub(1) as f64);
                }
                self.after_sender(flow);
            }
        }
        Some((flow, dir))
    }

    /// A hop's wake-up (ATM port): frames delivered to their hosts, lost frames released.
    fn hop_wake(&mut self, hop: HopId) {
        let now = self.now;
        let (queue, packets, tap) = (&mut self.queue, &mut self.packets, &mut self.tap);
        let h = &mut self.hops[hop as usize];
        let next = h.wake(now, &mut self.links, |fate| match fate {
            FrameFate::Delivered { pkt, at } => {
                // The port runs at most its egress delay late (`AtmHop`): never in the past.
                debug_assert!(at >= now, "frame delivered at {at}, before the wake-up at {now}");
                let dst = packets[pkt].dst;
                queue.push(at, Ev::Arrive { pkt, node: dst });
            }
            FrameFate::Lost { pkt } => {
                tap.event(now, PacketEvent::Dropped { hop: Some(hop), reason: TapDrop::Frame }, &packets[pkt], &packets.sacks);
                packets.release(pkt);
            }
        });
        if let Some(t) = next {
            self.queue.push(t, Ev::HopWake { hop });
        }
        if self.traced_cells[hop as usize] {
            let cells = self.hops[hop as usize].queue_cells().unwrap_or(0.0);
            let name = &self.links[self.hops[hop as usize].out_link() as usize].name;
            let cap = self.trace_cap;
            self.traces.entry(format!("link/{name}/queue_cells")).or_insert_with(|| Trace::with_cap(cap)).record(now.as_secs_f64(), cells);
        }
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn a_flow_keeps_what_every_segment_reads_in_its_first_line() {
        // issue 15: ends, owner, trace flag, timer slots and first hops in one cache line.
        assert!(offset_of!(Flow, first_hop) + std::mem::size_of::<[Via; 2]>() <= 64);
        assert!(offset_of!(Flow, rcv_slot) < 64 && offset_of!(Flow, traced) < 64 && offset_of!(Flow, interest) < 64);
    }
}

#[cfg(test)]
mod packets_tests {
    use super::*;
    use crate::net::packet::Header;

    fn packet(uid: u64) -> Packet {
        Packet { uid, flow: (uid % 7) as FlowId, dir: Dir::Data, src: 0, dst: 1, bytes: 1064, seg: Header::default(), corrupted: false, sack_at: 0 }
    }

    /// Slots are numbered in order of creation across the first chunk and the next ones, and
    /// every packet stays where it was put: the numbering is that of one growing vector.
    #[test]
    fn slots_past_the_first_chunk_keep_their_numbers_and_contents() {
        let mut p = Packets::default();
        let none = [SackBlock::default(); MAX_SACK_BLOCKS];
        let n = 2 * PACKET_CHUNK + 3;
        for uid in 0..n as u64 {
            assert_eq!(p.insert(packet(uid), &none), uid as u32);
        }
        assert_eq!(p.slots.rest.len(), 2, "the first chunk, then two more");
        for i in [0, PACKET_CHUNK - 1, PACKET_CHUNK, 2 * PACKET_CHUNK, n - 1] {
            assert_eq!(p[i as u32].uid, i as u64);
            assert!(std::ptr::eq(p.ptr(i as u32), &p[i as u32]));
        }
        assert!(p.ptr(n as u32 + PACKET_CHUNK as u32).is_null(), "no chunk there");
        let (a, b) = (PACKET_CHUNK as u32 + 5, 3);
        p.release(a);
        p.release(b);
        // Two free slots out of 131,075: too few to go back to the start.
        assert_eq!(p.insert(packet(1_000_000), &none), n as u32, "a new slot");
        p[a - 1].bytes = 40;
        assert_eq!((p[a - 1].bytes, p[a - 2].bytes, p[a - 1].uid), (40, 1064, a as u64 - 1), "its neighbour untouched");
    }

    /// Slots are handed out in address order: the first free one at or after the last one
    /// handed out; past the end, back to the start once at least a quarter are free, else a
    /// new slot.
    #[test]
    fn slots_are_handed_out_in_address_order_round_and_round() {
        assert_eq!(WRAP_FREE, 4, "the counts below are for a quarter");
        let mut p = Packets::default();
        let none = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut uid = 0;
        let mut put = |p: &mut Packets| {
            uid += 1;
            p.insert(packet(uid), &none)
        };
        for i in 0..16 {
            assert_eq!(put(&mut p), i);
        }
        // Three free of 16 (less than a quarter): the slab grows.
        for i in [5, 9, 2] {
            p.release(i);
        }
        assert_eq!(put(&mut p), 16);
        // Five free of 17: back to the start, in address order.
        p.release(1);
        p.release(12);
        assert_eq!(p.free, 5);
        assert_eq!(put(&mut p), 1, "the lowest free slot, not the last freed");
        // Slots ahead of the cursor come first, even those freed before one behind it.
        p.release(0);
        for i in [2, 5, 9, 12] {
            assert_eq!(put(&mut p), i);
        }
        // Nothing free ahead; one free of 17 behind: grow rather than go round.
        assert_eq!(put(&mut p), 17);
        assert_eq!((p.len, p.free), (18, 1));
        // Across a word of the bitmap: slots 60 to 79.
        while p.len < 80 {
            put(&mut p);
        }
        for i in 60..80 {
            p.release(i);
        }
        assert_eq!(put(&mut p), 0, "21 free of 80: back to the start, its first free slot");
        for i in 60..80 {
            assert_eq!(put(&mut p), i, "then up through the first word's end and into the next");
        }
        assert_eq!(put(&mut p), 80);
        // Exactly a quarter free is enough: 2 of 8.
        let mut q = Packets::default();
        for i in 0..8 {
            assert_eq!(put(&mut q), i);
        }
        q.release(6);
        q.release(3);
        assert_eq!(put(&mut q), 3);
    }

    proptest::proptest! {
        /// Whatever the order of inserts and releases: every insert takes the slot a plain
        /// scan over a vector of flags picks (the first free at or after the last one handed
        /// out; else from the start if `1 / WRAP_FREE` are free; else a new one), no slot holds two
        /// packets, and every packet is found where it was put.
        #[test]
        fn a_slot_holds_one_packet_and_keeps_it(ops in proptest::collection::vec((proptest::bool::weighted(0.55), 0usize..1000), 1..2000)) {
            let mut p = Packets::default();
            let none = [SackBlock::default(); MAX_SACK_BLOCKS];
            let mut live: Vec<(u32, u64)> = Vec::new();
            let mut used: Vec<bool> = Vec::new();
            let mut cursor = 0;
            for (uid, &(add, pick)) in ops.iter().enumerate() {
                if add || live.is_empty() {
                    let free = used.iter().filter(|u| !**u).count();
                    let want = (cursor..used.len()).find(|&j| !used[j])
                        .or_else(|| if free as u64 * WRAP_FREE >= used.len() as u64 { (0..used.len()).find(|&j| !used[j]) } else { None })
                        .unwrap_or(used.len());
                    let i = p.insert(packet(uid as u64), &none);
                    proptest::prop_assert_eq!(i as usize, want);
                    if want == used.len() {
                        used.push(true);
                    } else {
                        used[want] = true;
                    }
                    cursor = want + 1;
                    live.push((i, uid as u64));
                } else {
                    let (i, _) = live.swap_remove(pick % live.len());
                    p.release(i);
                    used[i as usize] = false;
                }
                proptest::prop_assert_eq!((p.len as usize, p.free as usize), (used.len(), used.iter().filter(|u| !**u).count()));
            }
            for &(i, uid) in &live {
                proptest::prop_assert_eq!(p[i].uid, uid);
            }
        }
    }
}
