//! The world of one run: nodes, links, TCP endpoints and applications, driven by the event
//! loop. Built from a validated [`Scenario`]; single-threaded and deterministic.

use crate::engine::queue::{EventQueue, TimerSlot};
use crate::app::www::{WwwClient, WwwServer};
use crate::atm::{cell_time, cells_for_ip, max_goodput_bps, CELL_BYTES};
use crate::engine::rng::RngFactory;
use crate::fabric::{AtmFabric, FrameFate};
use crate::metrics::fairness::study_metrics;
use crate::metrics::result::{FlowResult, LinkResult, RunResult, Summary, Trace};
use crate::net::link::{Admit, Link, QueueLimit};
use crate::net::packet::{Dir, FlowId, NodeId, Packet, Segment, IP_HEADER, TCP_HEADER};
use crate::scenario::validate::SwitchKind;
use crate::scenario::{AppSpec, LinkSpec, LossSpec, Scenario, Topology};
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::{SimTime, Size};
use crate::trace::{DropReason as Why, EventKind, FlowEnds, LinkInfo, PacketLog, NO_LINK as UNTRACED_LINK};
use std::collections::BTreeMap;

type LinkId = u32;
const NO_LINK: LinkId = u32::MAX;

#[derive(Copy, Clone, Debug)]
enum Ev {
    /// A packet arrives at `node` (a frame reassembled after the ATM fabric).
    Arrive { pkt: u32, node: NodeId },
    /// The first packet in flight on `link` reaches the link's far end. A link delivers in
    /// the order it sends (one rate, one delay), so its packets in flight wait in a FIFO and
    /// only the head of each link is in the event queue.
    LinkArrive { link: LinkId },
    SenderTimer { flow: FlowId },
    ReceiverTimer { flow: FlowId },
    AppStart { flow: FlowId },
    /// A WWW client has a request due.
    WwwWake { pair: u32 },
    /// An ATM switch port has cells to move (0: toward the bottleneck, 1: back).
    SwitchWake { dir: u32 },
}

impl Ev {
    /// Two 64-bit words identifying the event, for the run digest.
    #[inline]
    fn words(&self) -> (u64, u64) {
        match *self {
            Ev::Arrive { pkt, node } => (1, (pkt as u64) << 32 | node as u64),
            Ev::LinkArrive { link } => (7, link as u64),
            Ev::SenderTimer { flow } => (2, flow as u64),
            Ev::ReceiverTimer { flow } => (3, flow as u64),
            Ev::AppStart { flow } => (4, flow as u64),
            Ev::WwwWake { pair } => (5, pair as u64),
            Ev::SwitchWake { dir } => (6, dir as u64),
        }
    }
}

/// A node's static routes.
struct Node {
    /// Dumbbell routers: the out link toward each destination node (empty elsewhere).
    routes: Vec<LinkId>,
    /// Hosts: their single link.
    default_link: LinkId,
    /// Path nodes: the links toward higher-numbered and lower-numbered nodes (a chain needs
    /// no table: memory stays linear in the number of hops).
    chain: Option<(NodeId, LinkId, LinkId)>,
}

impl Node {
    fn new() -> Self {
        Node { routes: Vec::new(), default_link: NO_LINK, chain: None }
    }

    #[inline]
    fn route(&self, dst: NodeId) -> LinkId {
        if self.default_link != NO_LINK {
            self.default_link
        } else if let Some((me, up, down)) = self.chain {
            if dst > me {
                up
            } else {
                down
            }
        } else {
            self.routes.get(dst as usize).copied().unwrap_or(NO_LINK)
        }
    }
}

/// What a flow carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Data from a source (bulk, transfer, or a WWW server's files): the flows the study's
    /// metrics are about.
    Data,
    /// A WWW client's requests to its server.
    Request,
}

/// What the application does at a flow's start.
#[derive(Copy, Clone, Debug)]
enum StartWith {
    /// Offer this many bytes (a bulk source offers more than any run can carry).
    Offer(u64),
    /// Only open the connection (WWW: data comes later, request by request).
    Connect,
}

/// A WWW client/server pair: the client's requests travel on `req_flow`, the server's files
/// on `data_flow` (two one-way TCPs, as ns-2 modelled a connection).
struct WwwPair {
    client: WwwClient,
    server: WwwServer,
    req_flow: FlowId,
    data_flow: FlowId,
    slot: TimerSlot,
    /// Request bytes already handed to the server.
    seen: u64,
}

struct Flow {
    role: Role,
    /// The WWW pair this flow belongs to.
    pair: Option<u32>,
    start: StartWith,
    src: NodeId,
    dst: NodeId,
    sender: TcpSender,
    receiver: TcpReceiver,
    snd_slot: TimerSlot,
    rcv_slot: TimerSlot,
    /// Bytes the application handed to TCP.
    scheduled: u64,
    /// For fixed-size transfers: the size, and when it was all delivered.
    transfer: Option<u64>,
    completed_at: Option<SimTime>,
    traced: bool,
}

/// A slab of packets in flight, reusing freed slots.
#[derive(Default)]
struct Packets {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Packets {
    #[inline]
    fn insert(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        }
    }
    #[inline]
    fn release(&mut self, i: u32) {
        self.free.push(i);
    }
}

/// One run's simulation: `step`, `run_until`, `run`, then `finish` for the result.
pub struct Simulation {
    name: String,
    seed: u64,
    duration: SimTime,
    now: SimTime,
    queue: EventQueue<Ev>,
    nodes: Vec<Node>,
    links: Vec<Link>,
    /// Per link, the packets in flight (arrival time, packet), in arrival order.
    in_flight: Vec<std::collections::VecDeque<(SimTime, u32)>>,
    flows: Vec<Flow>,
    packets: Packets,
    next_uid: u64,
    events: u64,
    digest: u64,
    losses: Vec<LossSpec>,
    out: Vec<Segment>,
    traces: BTreeMap<String, Trace>,
    /// ATM ports (forward, reverse) whose occupancy is traced.
    traced_ports: [bool; 2],
    capacity_bps: f64,
    www: Vec<WwwPair>,
    /// ATM switches (switch.kind = "atm"), with, per host, (direction, VC) of its frames.
    atm: Option<AtmFabric>,
    atm_port_of: Vec<Option<(u32, u32)>>,
    /// Per host, the link from its switch to it (ATM: where delivered frames are counted).
    atm_into_host: Vec<LinkId>,
    /// Packet events (`trace.packets`); `None`: not traced, one branch per event.
    plog: Option<Box<PacketLog>>,
    /// Points each time-series trace may hold (`trace.max_points` shared by the variables).
    trace_cap: usize,
    max_points: u64,
}

fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Cells buffered at ATM port `dir` (for traces).
fn fabric_occupancy(fabric: Option<&AtmFabric>, dir: u32) -> f64 {
    fabric.map(|f| f.dirs[dir as usize].port.port().occupancy() as f64).unwrap_or(0.0)
}

/// Resolves a queue size to a drop-tail limit.
fn queue_limit(size: Size, bdp_bytes: u64) -> QueueLimit {
    match size {
        Size::Bytes(b) => QueueLimit::Bytes(b),
        Size::Packets(p) => QueueLimit::Packets(p),
        Size::Bdp(k) => QueueLimit::Bytes((k * bdp_bytes as f64).round() as u64),
        // Validation rejects cells for drop-tail queues.
        Size::Cells(c) => QueueLimit::Bytes(c * 48),
    }
}

const UNLIMITED: QueueLimit = QueueLimit::Packets(u64::MAX);

impl Simulation {
    pub fn new(sc: &Scenario) -> Self {
        let rngs = RngFactory::new(sc.seed);
        let bdp = sc.bdp_bytes();
        let mut nodes: Vec<Node> = Vec::new();
        let mut links: Vec<Link> = Vec::new();
        let mut endpoints: Vec<(NodeId, NodeId)> = Vec::new();
        let add_link = |links: &mut Vec<Link>, name: String, from: NodeId, to: NodeId, spec: &LinkSpec, limit: QueueLimit| -> LinkId {
            let errors = rngs.stream(&format!("link/{name}/errors"));
            links.push(Link::new(name, from, to, spec.rate, spec.delay, spec.ber, limit, errors));
            (links.len() - 1) as LinkId
        };
        let switch_limit = queue_limit(sc.switch.buffer, bdp);
        // (host, the link that delivers to it), for the ATM fabric's accounting.
        let mut into_host: Vec<(NodeId, LinkId)> = Vec::new();
        let is_atm = matches!(sc.switch.kind, SwitchKind::Atm { .. });
        match &sc.topology {
            Topology::Dumbbell { pairs, access, bottleneck } => {
                let n = *pairs;
                let (r1, r2) = (2 * n, 2 * n + 1);
                let total = 2 * n + 2;
                for _ in 0..total {
                    nodes.push(Node::new());
                }
                nodes[r1 as usize].routes = vec![NO_LINK; total as usize];
                nodes[r2 as usize].routes = vec![NO_LINK; total as usize];
                let access_limit = access.queue.map(|q| queue_limit(q, bdp)).unwrap_or(UNLIMITED);
                // On ATM links the cells travel at the payload rate (after SONET framing).
                let access_atm;
                let access = if is_atm {
                    access_atm = LinkSpec { rate: access.payload_rate, ..access.clone() };
                    &access_atm
                } else {
                    access
                };
                let fwd = add_link(&mut links, "bottleneck".into(), r1, r2, bottleneck, bottleneck.queue.map(|q| queue_limit(q, bdp)).unwrap_or(switch_limit));
                let rev = add_link(&mut links, "bottleneck-rev".into(), r2, r1, bottleneck, bottleneck.queue.map(|q| queue_limit(q, bdp)).unwrap_or(switch_limit));
                for i in 0..n {
                    let (s, d) = (i, n + i);
                    let up = add_link(&mut links, format!("src{i}->r1"), s, r1, access, access_limit);
                    let down = add_link(&mut links, format!("r1->src{i}"), r1, s, access, access_limit);
                    let out = add_link(&mut links, format!("r2->dst{i}"), r2, d, access, access_limit);
                    let back = add_link(&mut links, format!("dst{i}->r2"), d, r2, access, access_limit);
                    nodes[s as usize].default_link = up;
                    nodes[d as usize].default_link = back;
                    into_host.push((s, down));
                    into_host.push((d, out));
                    nodes[r1 as usize].routes[s as usize] = down;
                    nodes[r1 as usize].routes[d as usize] = fwd;
                    nodes[r2 as usize].routes[d as usize] = out;
                    nodes[r2 as usize].routes[s as usize] = rev;
                    endpoints.push((s, d));
                }
            }
            Topology::Path { hops } => {
                let h = hops.len() as u32;
                let total = h + 1;
                for i in 0..total {
                    let mut n = Node::new();
                    n.chain = Some((i, NO_LINK, NO_LINK));
                    nodes.push(n);
                }
                for (i, spec) in hops.iter().enumerate() {
                    let i = i as u32;
                    let limit = spec.queue.map(|q| queue_limit(q, bdp)).unwrap_or(switch_limit);
                    let f = add_link(&mut links, format!("hop{i}"), i, i + 1, spec, limit);
                    let r = add_link(&mut links, format!("hop{i}-rev"), i + 1, i, spec, limit);
                    if let Some(c) = &mut nodes[i as usize].chain {
                        c.1 = f;
                    }
                    if let Some(c) = &mut nodes[(i + 1) as usize].chain {
                        c.2 = r;
                    }
                }
                endpoints.push((0, h));
            }
        }

        let mut queue = EventQueue::new();
        let mut flows = Vec::with_capacity(endpoints.len());
        let mut www = Vec::new();
        let mut new_flow = |role: Role, pair: Option<u32>, start: StartWith, src: NodeId, dst: NodeId, transfer: Option<u64>| {
            let f = flows.len() as u32;
            flows.push(Flow {
                role,
                pair,
                start,
                src,
                dst,
                sender: TcpSender::new(sc.tcp.clone()),
                receiver: TcpReceiver::new(sc.tcp.clone()),
                snd_slot: TimerSlot::default(),
                rcv_slot: TimerSlot::default(),
                scheduled: 0,
                transfer,
                completed_at: None,
                traced: sc.trace.flows.contains(&f),
            });
            f
        };
        match &sc.app {
            AppSpec::Bulk { start, stagger } | AppSpec::Transfer { start, stagger, .. } => {
                let transfer = match sc.app {
                    AppSpec::Transfer { bytes, .. } => Some(bytes),
                    _ => None,
                };
                for (i, &(src, dst)) in endpoints.iter().enumerate() {
                    let f = new_flow(Role::Data, None, StartWith::Offer(transfer.unwrap_or(u64::MAX / 4)), src, dst, transfer);
                    queue.push(*start + stagger.times(i as u64), Ev::AppStart { flow: f });
                }
            }
            AppSpec::Www { params } => {
                // Servers are the sources (left), clients the sinks (right): files cross the
                // bottleneck forward, requests backward. Data flows are 0..N so that flow i is
                // server i's throughput x_i; request flows are N..2N. A pair's persistent
                // connection (HTTP/1.1, seed 000 §4.1) is opened when its client first needs it,
                // at its first request (both half-connections then), and stays open.
                for (i, &(src, dst)) in endpoints.iter().enumerate() {
                    new_flow(Role::Data, Some(i as u32), StartWith::Connect, src, dst, None);
                }
                let n = endpoints.len() as u32;
                for (i, &(src, dst)) in endpoints.iter().enumerate() {
                    let req = new_flow(Role::Request, Some(i as u32), StartWith::Connect, dst, src, None);
                    let client = WwwClient::for_index(params, &rngs, i);
                    let server = WwwServer::for_index(params, &rngs, i);
                    let mut slot = TimerSlot::default();
                    if let Some(first) = client.next_request_at() {
                        queue.push(first, Ev::AppStart { flow: req });
                        queue.push(first, Ev::AppStart { flow: i as u32 });
                        if let Some(t) = slot.arm(Some(first)) {
                            queue.push(t, Ev::WwwWake { pair: i as u32 });
                        }
                    }
                    www.push(WwwPair { client, server, req_flow: req, data_flow: i as u32, slot, seen: 0 });
                }
                debug_assert_eq!(flows.len() as u32, 2 * n);
            }
        }
        let is_port = |name: &str| is_atm && (name == "bottleneck" || name == "bottleneck-rev");
        let traced_vars = (3 * sc.trace.flows.len() + sc.trace.links.len()).max(1) as u64;
        let trace_cap = (sc.trace.max_points / traced_vars).min(usize::MAX as u64) as usize;
        for l in links.iter_mut() {
            if sc.trace.links.contains(&l.name) && !is_port(&l.name) {
                l.trace = Some(Trace::with_cap(trace_cap));
            }
        }
        let plog = sc.trace.packets.as_ref().map(|filter| {
            let ends = flows.iter().map(|f| FlowEnds { src: f.src, dst: f.dst, mss: sc.tcp.mss.min(u16::MAX as u32) as u16 }).collect();
            let infos = links.iter().map(|l| LinkInfo { name: l.name.clone(), from: l.from, to: l.to, rate_bps: l.rate.as_bps() }).collect();
            Box::new(PacketLog::new(ends, infos, filter, sc.trace.max_packet_events))
        });
        let traced_ports = [sc.trace.links.iter().any(|n| n == "bottleneck") && is_atm, sc.trace.links.iter().any(|n| n == "bottleneck-rev") && is_atm];
        let mss = sc.tcp.mss as f64;
        let mut atm_port_of = Vec::new();
        let mut atm_into_host = Vec::new();
        let (atm, capacity_bps) = match (&sc.switch.kind, &sc.topology) {
            (SwitchKind::Atm { policy }, Topology::Dumbbell { pairs, access, bottleneck }) => {
                let errors = [rngs.stream("atm/bottleneck/errors"), rngs.stream("atm/bottleneck-rev/errors")];
                let fabric = AtmFabric::new(*pairs, sc.switch.buffer_cells as u32, *policy, access.payload_rate, access.delay, bottleneck.payload_rate, bottleneck.delay, bottleneck.ber, errors)
                    .expect("validated ATM parameters");
                atm_port_of = vec![None; nodes.len()];
                atm_into_host = vec![NO_LINK; nodes.len()];
                for &(h, l) in &into_host {
                    atm_into_host[h as usize] = l;
                }
                for i in 0..*pairs {
                    atm_port_of[i as usize] = Some((0, i));
                    atm_port_of[(pairs + i) as usize] = Some((1, i));
                }
                // C: the seeds' maximum TCP goodput after TCP/IP/LLC/AAL5/cell overheads.
                (Some(fabric), max_goodput_bps(bottleneck.payload_rate, sc.tcp.mss as u64))
            }
            _ => (None, sc.bottleneck_rate().as_bps() as f64 * mss / (mss + (IP_HEADER + TCP_HEADER) as f64)),
        };
        Simulation {
            name: sc.name.clone(),
            seed: sc.seed,
            duration: sc.duration,
            now: SimTime::ZERO,
            queue,
            nodes,
            in_flight: vec![Default::default(); links.len()],
            links,
            flows,
            packets: Packets::default(),
            next_uid: 0,
            events: 0,
            // FNV-1a offset basis as the digest's starting value.
            digest: 0xcbf2_9ce4_8422_2325,
            losses: sc.losses.clone(),
            out: Vec::with_capacity(64),
            traces: BTreeMap::new(),
            traced_ports,
            capacity_bps,
            www,
            atm,
            atm_port_of,
            atm_into_host,
            plog,
            trace_cap,
            max_points: sc.trace.max_points,
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn duration(&self) -> SimTime {
        self.duration
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// The receiving TCP of `flow` (its delivered bytes, statistics).
    pub fn receiver(&self, flow: FlowId) -> &TcpReceiver {
        &self.flows[flow as usize].receiver
    }
    /// The sending TCP of `flow` (its window, statistics).
    pub fn sender(&self, flow: FlowId) -> &TcpSender {
        &self.flows[flow as usize].sender
    }

    /// Runs the next event if it is due no later than the end of the run. Returns false when
    /// nothing is left to run.
    pub fn step(&mut self) -> bool {
        match self.queue.peek_time() {
            Some(t) if t <= self.duration => {}
            _ => return false,
        }
        let (t, ev) = self.queue.pop().expect("peeked");
        self.now = t;
        self.events += 1;
        let (a, b) = ev.words();
        for w in [t.0, a, b] {
            self.digest = (self.digest ^ w).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.dispatch(ev);
        true
    }

    /// Runs every event due at or before `until` (and never past the end of the run).
    pub fn run_until(&mut self, until: SimTime) {
        while !self.run_until_bounded(until, u64::MAX) {}
    }

    /// Like [`run_until`](Self::run_until) but stops after at most `max_events` events, so
    /// that a caller can look up between slices (progress, Ctrl-C). Returns true once every
    /// event due at or before `until` has run.
    pub fn run_until_bounded(&mut self, until: SimTime, max_events: u64) -> bool {
        let until = until.min(self.duration);
        let mut n = 0;
        while let Some(t) = self.queue.peek_time() {
            if t > until {
                break;
            }
            if n == max_events {
                return false;
            }
            self.step();
            n += 1;
        }
        self.now = self.now.max(until);
        true
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.duration);
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { pkt, node } => self.arrive(pkt, node),
            Ev::LinkArrive { link } => {
                let q = &mut self.in_flight[link as usize];
                let (t, pkt) = q.pop_front().expect("a packet in flight");
                debug_assert_eq!(t, self.now);
                if let Some(&(next, _)) = q.front() {
                    self.queue.push(next, Ev::LinkArrive { link });
                }
                let node = self.links[link as usize].to;
                if self.plog.is_some() && self.packets.slots[pkt as usize].corrupted {
                    self.trace_drop(pkt, link, Why::Corrupted);
                }
                self.arrive(pkt, node);
            }
            Ev::SenderTimer { flow } => {
                let now = self.now;
                let fl = &mut self.flows[flow as usize];
                if fl.snd_slot.fire(now) {
                    if fl.sender.poll_at().is_some_and(|t| t <= now) {
                        fl.sender.on_timer(now, &mut self.out);
                    }
                    self.after_sender(flow);
                }
            }
            Ev::ReceiverTimer { flow } => {
                let now = self.now;
                let fl = &mut self.flows[flow as usize];
                if fl.rcv_slot.fire(now) {
                    if fl.receiver.poll_at().is_some_and(|t| t <= now) {
                        fl.receiver.on_timer(now, &mut self.out);
                    }
                    self.after_receiver(flow);
                }
            }
            Ev::AppStart { flow } => {
                let now = self.now;
                let fl = &mut self.flows[flow as usize];
                fl.sender.connect(now, &mut self.out);
                if let StartWith::Offer(bytes) = fl.start {
                    fl.scheduled = fl.scheduled.saturating_add(bytes);
                    fl.sender.app_send(now, bytes, &mut self.out);
                    if fl.transfer.is_some() {
                        // A fixed-size transfer has nothing more: a FIN follows if tcp.fin.
                        fl.sender.close(now, &mut self.out);
                    }
                }
                self.after_sender(flow);
            }
            Ev::SwitchWake { dir } => {
                let now = self.now;
                let fabric = self.atm.as_mut().expect("switch wake without ATM");
                let (queue, packets, links, into_host, plog) = (&mut self.queue, &mut self.packets, &mut self.links, &self.atm_into_host, &mut self.plog);
                let egress_cell = fabric.access_cell;
                let next = fabric.wake(dir as usize, now, |fate| match fate {
                    FrameFate::Delivered { pkt, at } => {
                        let p = &packets.slots[pkt as usize];
                        // Account the frame on the destination's access link.
                        let dst = p.dst;
                        let cells = cells_for_ip(p.bytes as u64);
                        let egress = into_host[dst as usize] as usize;
                        let st = &mut links[egress].stats;
                        st.packets += 1;
                        st.bytes += cells * CELL_BYTES;
                        st.busy_ns += egress_cell.0 * cells;
                        queue.push(at, Ev::Arrive { pkt, node: dst });
                    }
                    FrameFate::Lost { pkt } => {
                        if let Some(log) = plog.as_deref_mut() {
                            let p = &packets.slots[pkt as usize];
                            log.record(now, now, EventKind::Dropped, Why::AtmFrame, dir, links[dir as usize].from, p.uid, p.flow, p.dir, &p.seg);
                        }
                        packets.release(pkt)
                    }
                });
                if let Some(t) = next {
                    self.queue.push(t, Ev::SwitchWake { dir });
                }
                if self.traced_ports[dir as usize] {
                    let name = if dir == 0 { "bottleneck" } else { "bottleneck-rev" };
                    let cells = fabric_occupancy(self.atm.as_ref(), dir);
                    self.traces.entry(format!("link/{name}/queue_cells")).or_insert_with(|| Trace::with_cap(self.trace_cap)).record(now.as_secs_f64(), cells);
                }
            }
            Ev::WwwWake { pair } => {
                let now = self.now;
                let w = &mut self.www[pair as usize];
                if !w.slot.fire(now) {
                    return;
                }
                let req = w.req_flow;
                let mut bytes = 0;
                while let Some(r) = w.client.pop_request(now) {
                    bytes += r.bytes;
                }
                if let Some(t) = w.slot.arm(w.client.next_request_at().map(|t| t.max(now))) {
                    self.queue.push(t, Ev::WwwWake { pair });
                }
                if bytes > 0 {
                    let fl = &mut self.flows[req as usize];
                    fl.scheduled += bytes;
                    fl.sender.app_send(now, bytes, &mut self.out);
                    self.after_sender(req);
                }
            }
        }
    }

    /// Puts on the wire the segments an endpoint of `flow` just emitted: data from the
    /// sender's host, ACKs from the receiver's.
    fn flush(&mut self, flow: FlowId, dir: Dir) {
        let fl = &self.flows[flow as usize];
        let (src, dst) = match dir {
            Dir::Data => (fl.src, fl.dst),
            Dir::Ack => (fl.dst, fl.src),
        };
        let mut out = std::mem::take(&mut self.out);
        for seg in out.drain(..) {
            self.send(flow, dir, src, dst, seg);
        }
        self.out = out;
    }

    /// Sends what the sender of `flow` emitted and re-arms its timer.
    fn after_sender(&mut self, flow: FlowId) {
        let now = self.now;
        self.flush(flow, Dir::Data);
        let fl = &mut self.flows[flow as usize];
        if let Some(t) = fl.snd_slot.arm(fl.sender.poll_at().map(|t| t.max(now))) {
            self.queue.push(t, Ev::SenderTimer { flow });
        }
        if fl.traced {
            let cap = self.trace_cap;
            let t = now.as_secs_f64();
            let (cwnd, ssthresh, srtt) = (fl.sender.cwnd() as f64, fl.sender.ssthresh() as f64, fl.sender.srtt());
            self.traces.entry(format!("flow/{flow}/cwnd")).or_insert_with(|| Trace::with_cap(cap)).record(t, cwnd);
            self.traces.entry(format!("flow/{flow}/ssthresh")).or_insert_with(|| Trace::with_cap(cap)).record(t, ssthresh);
            if let Some(srtt) = srtt {
                self.traces.entry(format!("flow/{flow}/srtt")).or_insert_with(|| Trace::with_cap(cap)).record(t, srtt.as_secs_f64());
            }
        }
    }

    /// Sends what the receiver of `flow` emitted and re-arms its timer.
    fn after_receiver(&mut self, flow: FlowId) {
        let now = self.now;
        self.flush(flow, Dir::Ack);
        let fl = &mut self.flows[flow as usize];
        if let Some(t) = fl.rcv_slot.arm(fl.receiver.poll_at().map(|t| t.max(now))) {
            self.queue.push(t, Ev::ReceiverTimer { flow });
        }
        if fl.completed_at.is_none() && fl.transfer.is_some_and(|b| fl.receiver.delivered() >= b) {
            fl.completed_at = Some(now);
        }
        if fl.role == Role::Request {
            // Requests delivered in order reach the (infinitely fast) server, which schedules
            // each requested file on its data flow at once.
            let (delivered, pair) = (fl.receiver.delivered(), fl.pair.expect("request flows belong to a pair"));
            let w = &mut self.www[pair as usize];
            if delivered > w.seen {
                let file_bytes = w.server.on_request_bytes(delivered - w.seen);
                w.seen = delivered;
                if file_bytes > 0 {
                    let data = w.data_flow;
                    let fl = &mut self.flows[data as usize];
                    fl.scheduled += file_bytes;
                    fl.sender.app_send(now, file_bytes, &mut self.out);
                    self.after_sender(data);
                }
            }
        }
    }

    /// Puts a segment on the wire at its source host.
    fn send(&mut self, flow: FlowId, dir: Dir, src: NodeId, dst: NodeId, seg: Segment) {
        let link = self.nodes[src as usize].route(dst);
        if dir == Dir::Data && !self.losses.is_empty() && seg.len > 0 {
            let offset = seg.seq - 1;
            if let Some(i) = self.losses.iter().position(|l| l.flow == flow && l.offset == offset && l.transmission == seg.tx_count) {
                self.losses.swap_remove(i);
                self.links[link as usize].stats.drops_scripted += 1;
                if let Some(log) = self.plog.as_deref_mut() {
                    log.record(self.now, self.now, EventKind::Sent, Why::None, UNTRACED_LINK, src, self.next_uid, flow, dir, &seg);
                    log.record(self.now, self.now, EventKind::Dropped, Why::Scripted, UNTRACED_LINK, src, self.next_uid, flow, dir, &seg);
                }
                self.next_uid += 1;
                return;
            }
        }
        let uid = self.next_uid;
        self.next_uid += 1;
        let pkt = Packet { uid, flow, dir, src, dst, bytes: seg.ip_bytes(), seg, corrupted: false };
        let id = self.packets.insert(pkt);
        if self.plog.is_some() {
            self.trace_host(id, EventKind::Sent, src);
        }
        if let Some(&Some((d, vc))) = self.atm_port_of.get(src as usize) {
            self.send_cells(id, link, d, vc);
        } else {
            self.forward(id, link);
        }
    }

    /// Sends packet `id` as an AAL5 frame on its host's access link into ATM port `dir`.
    fn send_cells(&mut self, id: u32, link: LinkId, dir: u32, vc: u32) {
        let now = self.now;
        let cells = cells_for_ip(self.packets.slots[id as usize].bytes as u64);
        let wire = cells * CELL_BYTES;
        let l = &mut self.links[link as usize];
        match l.enqueue(now, wire as u32) {
            Admit::Sent { arrival, corrupted } => {
                self.packets.slots[id as usize].corrupted = corrupted;
                let first_bit_at = arrival - l.rate.tx_time(wire);
                if self.plog.is_some() {
                    self.trace_hop(id, link, first_bit_at - self.links[link as usize].delay);
                }
                let fabric = self.atm.as_mut().expect("ATM fabric");
                if let Some(t) = fabric.offer(dir as usize, vc, first_bit_at, id, cells as u32) {
                    self.queue.push(t.max(now), Ev::SwitchWake { dir });
                }
            }
            Admit::Dropped(_) => {
                if self.plog.is_some() {
                    self.trace_drop(id, link, Why::QueueFull);
                }
                self.packets.release(id)
            }
        }
    }

    // Packet traces: the world's hot paths test `self.plog.is_some()` and call these out of
    // line, so that with tracing off a hook costs one load and one branch.

    /// Records that `link` accepted packet `id` now and starts transmitting it at `start`.
    #[cold]
    #[inline(never)]
    fn trace_hop(&mut self, id: u32, link: LinkId, start: SimTime) {
        if let Some(log) = self.plog.as_deref_mut() {
            let (p, now, from) = (&self.packets.slots[id as usize], self.now, self.links[link as usize].from);
            log.record(now, now, EventKind::Queued, Why::None, link, from, p.uid, p.flow, p.dir, &p.seg);
            log.record(now, start, EventKind::Dequeued, Why::None, link, from, p.uid, p.flow, p.dir, &p.seg);
        }
    }

    /// Records the drop of packet `id` on `link`.
    #[cold]
    #[inline(never)]
    fn trace_drop(&mut self, id: u32, link: LinkId, why: Why) {
        if let Some(log) = self.plog.as_deref_mut() {
            let (p, now) = (&self.packets.slots[id as usize], self.now);
            let node = self.links.get(link as usize).map_or(p.dst, |l| if why == Why::Corrupted { l.to } else { l.from });
            log.record(now, now, EventKind::Dropped, why, link, node, p.uid, p.flow, p.dir, &p.seg);
        }
    }

    /// Records an event of packet `id` at a host (`node`): sent, received.
    #[cold]
    #[inline(never)]
    fn trace_host(&mut self, id: u32, kind: EventKind, node: NodeId) {
        if let Some(log) = self.plog.as_deref_mut() {
            let (p, now) = (&self.packets.slots[id as usize], self.now);
            log.record(now, now, kind, Why::None, UNTRACED_LINK, node, p.uid, p.flow, p.dir, &p.seg);
        }
    }

    /// Offers packet `id` to `link`.
    #[inline]
    fn forward(&mut self, id: u32, link: LinkId) {
        let now = self.now;
        let l = &mut self.links[link as usize];
        let bytes = self.packets.slots[id as usize].bytes;
        match l.enqueue(now, bytes) {
            Admit::Sent { arrival, corrupted } => {
                self.packets.slots[id as usize].corrupted = corrupted;
                if self.plog.is_some() {
                    let start = arrival - l.delay - l.rate.tx_time(bytes as u64);
                    self.trace_hop(id, link, start);
                }
                let q = &mut self.in_flight[link as usize];
                if q.is_empty() {
                    self.queue.push(arrival, Ev::LinkArrive { link });
                }
                debug_assert!(q.back().is_none_or(|&(t, _)| t < arrival), "a link delivers in order");
                q.push_back((arrival, id));
            }
            Admit::Dropped(_) => {
                if self.plog.is_some() {
                    self.trace_drop(id, link, Why::QueueFull);
                }
                self.packets.release(id)
            }
        }
    }

    fn arrive(&mut self, id: u32, node: NodeId) {
        let p = &self.packets.slots[id as usize];
        if p.corrupted {
            // Discarded by the receiving interface (counted by the link that corrupted it).
            self.packets.release(id);
            return;
        }
        if p.dst != node {
            let link = self.nodes[node as usize].route(p.dst);
            debug_assert_ne!(link, NO_LINK, "no route from {node} to {}", p.dst);
            self.forward(id, link);
            return;
        }
        let (flow, dir, seg) = (p.flow, p.dir, p.seg);
        if self.plog.is_some() {
            self.trace_host(id, EventKind::Received, node);
        }
        self.packets.release(id);
        let now = self.now;
        let fl = &mut self.flows[flow as usize];
        match dir {
            Dir::Data => {
                fl.receiver.on_segment(now, &seg, &mut self.out);
                self.after_receiver(flow);
            }
            Dir::Ack => {
                fl.sender.on_segment(now, &seg, &mut self.out);
                self.after_sender(flow);
            }
        }
    }

    /// Closes the run and returns its result.
    pub fn finish(mut self) -> RunResult {
        let end = self.duration;
        let secs = end.as_secs_f64();
        for l in &mut self.links {
            l.finish(end);
            if let Some(tr) = l.trace.take() {
                self.traces.insert(format!("link/{}/queue_packets", l.name), tr);
            }
        }
        let mut packets = self.plog.take().map(|b| *b);
        let mut warnings: Vec<String> = crate::metrics::result::traces_warning(self.traces.iter(), self.max_points).into_iter().collect();
        if let Some(log) = &mut packets {
            log.finish(end);
            warnings.extend(log.warning());
        }
        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let s = f.sender.stats();
                let delivered = f.receiver.delivered();
                FlowResult {
                    flow: i as u32,
                    role: match f.role {
                        Role::Data => "data",
                        Role::Request => "request",
                    },
                    fair_share_bps: None,
                    src: f.src,
                    dst: f.dst,
                    scheduled_bytes: f.scheduled,
                    bytes_sent: s.bytes_sent,
                    bytes_retransmitted: s.bytes_retransmitted,
                    segments_sent: s.segments_sent,
                    segments_retransmitted: s.segments_retransmitted,
                    timeouts: s.timeouts,
                    fast_retransmits: s.fast_retransmits,
                    delivered_bytes: delivered,
                    throughput_bps: delivered as f64 * 8.0 / secs,
                    duplicate_bytes: f.receiver.stats().duplicate_bytes,
                    completed_at_s: f.completed_at.map(|t| t.as_secs_f64()),
                    final_cwnd: f.sender.cwnd(),
                    final_ssthresh: f.sender.ssthresh(),
                    final_srtt_s: f.sender.srtt().map(|t| t.as_secs_f64()),
                }
            })
            .collect();
        let mut links: Vec<LinkResult> = self
            .links
            .iter()
            .map(|l| LinkResult {
                link: l.name.clone(),
                from: l.from,
                to: l.to,
                rate_bps: l.rate.as_bps(),
                delay_s: l.delay.as_secs_f64(),
                utilization: l.utilization(end),
                packets: l.stats.packets,
                bytes: l.stats.bytes,
                drops_queue_full: l.stats.drops_queue_full,
                drops_corrupted: l.stats.drops_corrupted,
                drops_scripted: l.stats.drops_scripted,
                peak_queue_packets: Some(l.stats.peak_queue_packets),
                peak_queue_bytes: l.stats.peak_queue_bytes,
                mean_queue_bytes: l.mean_queue_bytes(end),
                drops_by_reason: [("queue_full", l.stats.drops_queue_full), ("corrupted", l.stats.drops_corrupted), ("scripted", l.stats.drops_scripted)]
                    .into_iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(k, n)| (k.to_string(), n))
                    .collect(),
                cells: None,
                cells_arrived: None,
                cells_dropped: None,
                cells_corrupted: None,
                cells_buffered: None,
                peak_queue_cells: None,
                mean_queue_cells: None,
                frames_discarded: None,
            })
            .collect();
        if let Some(fabric) = &mut self.atm {
            fabric.close(end);
        }
        if let Some(fabric) = &self.atm {
            // The bottleneck links' figures come from the switch ports, in cells.
            let cell = cell_time(fabric.cell_rate);
            for (dir, name) in ["bottleneck", "bottleneck-rev"].iter().enumerate() {
                let d = &fabric.dirs[dir];
                let st = d.port.port().stats();
                let lr = links.iter_mut().find(|l| l.link == *name).expect("bottleneck link");
                let rs = d.reasm.stats();
                // Packet fields count frames (IP packets), as on IP links; cell figures have
                // their own fields.
                lr.packets = rs.frames_delivered + rs.discarded();
                lr.drops_queue_full = st.frames_dropped_whole + st.frames_truncated;
                lr.drops_corrupted = rs.discarded_corrupted;
                lr.bytes = st.departed * CELL_BYTES;
                lr.utilization = (st.departed * cell.0).min(end.0) as f64 / end.0.max(1) as f64;
                lr.cells = Some(st.departed);
                lr.cells_arrived = Some(st.arrived);
                lr.cells_dropped = Some(st.dropped());
                lr.cells_corrupted = Some(d.cells_corrupted);
                lr.cells_buffered = Some(d.port.port().occupancy() as u64);
                lr.peak_queue_packets = None;
                lr.peak_queue_cells = Some(st.peak_occupancy as u64);
                lr.peak_queue_bytes = st.peak_occupancy as u64 * CELL_BYTES;
                let mean_cells = d.port.port().mean_occupancy(end);
                lr.mean_queue_cells = Some(mean_cells);
                lr.mean_queue_bytes = mean_cells * CELL_BYTES as f64;
                lr.frames_discarded = Some(rs.discarded());
                lr.drops_by_reason = fabric.drops_by_reason(dir);
                if d.cells_corrupted > 0 {
                    lr.drops_by_reason.insert("cells_corrupted".into(), d.cells_corrupted);
                }
            }
        }
        // The study's metrics (seed 000 §4.3) over the data flows: x_i their throughputs, S_i
        // what their sources scheduled per second of simulated time.
        let mut flows = flows;
        let data: Vec<usize> = (0..flows.len()).filter(|&i| self.flows[i].role == Role::Data).collect();
        let tputs: Vec<f64> = data.iter().map(|&i| flows[i].throughput_bps).collect();
        let sched: Vec<f64> = data.iter().map(|&i| flows[i].scheduled_bytes as f64 * 8.0 / secs).collect();
        let m = study_metrics(self.capacity_bps, &tputs, &sched);
        for (k, &i) in data.iter().enumerate() {
            flows[i].fair_share_bps = Some(m.shares[k]);
        }
        let total: f64 = tputs.iter().sum();
        let summary = Summary {
            flows: data.len() as u32,
            sim_time_s: secs,
            total_throughput_bps: total,
            capacity_bps: self.capacity_bps,
            efficiency: m.efficiency,
            fairness: m.fairness,
            jain_fairness: m.jain,
            timeouts: flows.iter().map(|f| f.timeouts).sum(),
            fast_retransmits: flows.iter().map(|f| f.fast_retransmits).sum(),
            bytes_retransmitted: flows.iter().map(|f| f.bytes_retransmitted).sum(),
            drops_queue_full: links.iter().map(|l| l.drops_queue_full).sum(),
            drops_corrupted: links.iter().map(|l| l.drops_corrupted).sum(),
        };
        RunResult {
            sattcp_version: env!("CARGO_PKG_VERSION"),
            name: self.name,
            seed: self.seed,
            events: self.events,
            digest: format!("{:016x}", self.digest),
            summary,
            flows,
            links,
            traces: self.traces,
            warnings: self
                .losses
                .iter()
                .map(|l| format!("scripted loss never happened: flow {} did not send data offset {} a {} time (transmission {})", l.flow, l.offset, ordinal(l.transmission as u64 + 1), l.transmission))
                .chain(warnings)
                .collect(),
            packets,
        }
    }
}
