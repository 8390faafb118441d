//! Hops and nodes are parts: a toy hop kind, defined here and nowhere else, replaces a path's
//! first link without the event loop knowing it (issue 9). The toy is a middlebox on the
//! sending node's interface: it serialises packets onto its link as a drop-tail link does,
//! holds each one `extra` longer before it reaches the far node, and drops every `every`-th
//! data segment offered to it.

mod common;

use common::scenario;
use sattcp_core::app;
use sattcp_core::net::hop::{Hop, HopModel, LinkId, Next, Offered};
use sattcp_core::net::link::{Admit, DropReason, Link};
use sattcp_core::net::packet::{Dir, NodeId, Packet, Segment};
use sattcp_core::net::tap::{PacketEvent, PacketTap, TapDrop};
use sattcp_core::net::topology::Network;
use sattcp_core::{SimTime, Simulation};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// One 10 Mbps hop, 20 ms one way; a 300 kB transfer.
const PATH: &str = r#"
    [run]
    duration = "20s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "10Mbps"
    delay = "20ms"
    [switch]
    buffer = "100pkt"
    [tcp]
    mss = 1460
    [app]
    kind = "transfer"
    bytes = 300000
"#;

const TRANSFER: u64 = 300_000;
const ONE_WAY: SimTime = SimTime(20_000_000);

/// The toy hop kind.
struct DelayDrop {
    link: LinkId,
    /// Added to the link's delay.
    extra: SimTime,
    /// Every `every`-th data segment offered is dropped (`u64::MAX`: none).
    every: u64,
    data_offered: u64,
    /// (arrival at the far node, packet), in arrival order (one rate, one delay: FIFO).
    in_flight: VecDeque<(SimTime, u32)>,
}

impl DelayDrop {
    fn new(link: LinkId, extra: SimTime, every: u64) -> Self {
        DelayDrop { link, extra, every, data_offered: 0, in_flight: VecDeque::new() }
    }
}

impl HopModel for DelayDrop {
    fn offer(&mut self, now: SimTime, _input: u32, pkt: u32, p: &mut Packet, links: &mut [Link]) -> Offered {
        if p.dir == Dir::Data && p.seg.len > 0 {
            self.data_offered += 1;
            if self.data_offered.is_multiple_of(self.every) {
                // This hop's own drop decision, counted on its link as a scripted one.
                links[self.link as usize].stats.drops_scripted += 1;
                return Offered { admit: Admit::Dropped(DropReason::Scripted), next: Next::Nothing };
            }
        }
        let admit = links[self.link as usize].enqueue(now, p.bytes);
        let mut next = Next::Nothing;
        if let Admit::Sent { arrival, corrupted } = admit {
            p.corrupted = corrupted;
            let at = arrival + self.extra;
            if self.in_flight.is_empty() {
                next = Next::Arrive(at);
            }
            self.in_flight.push_back((at, pkt));
        }
        // The link's own decision: the world's trace shows when the packet left the link.
        Offered { admit, next }
    }

    fn arrive(&mut self, now: SimTime, links: &[Link]) -> Option<(u32, NodeId, Option<SimTime>)> {
        let (t, pkt) = self.in_flight.pop_front().expect("a packet in flight");
        assert_eq!(t, now, "the world calls arrive at the time offer asked for");
        Some((pkt, links[self.link as usize].to, self.in_flight.front().map(|&(t, _)| t)))
    }

    fn out_link(&self) -> LinkId {
        self.link
    }
}

/// Puts the toy in place of hop 0 (the path's forward link, link 0).
fn toy(extra: SimTime, every: u64) -> impl FnOnce(&mut Network) {
    move |net: &mut Network| {
        assert!(matches!(net.hops[0], Hop::Link(_)));
        net.hops[0] = Hop::Custom(Box::new(DelayDrop::new(0, extra, every)));
    }
}

/// Packet events of data segments, by packet uid.
#[derive(Default)]
struct Log {
    sent: Vec<(SimTime, u64, u64)>,
    /// (uid, depart) of data accepted by hop 0.
    queued: BTreeMap<u64, SimTime>,
    /// uids of data dropped at hop 0, in order.
    dropped: Vec<u64>,
    /// (time, uid, seq, len) of data taken by the receiving host.
    received: Vec<(SimTime, u64, u64, u32)>,
}

struct Rec(Arc<Mutex<Log>>);

impl PacketTap for Rec {
    fn event(&mut self, now: SimTime, ev: PacketEvent, p: &Packet, _seg: &Segment) {
        if p.dir != Dir::Data || p.seg.len == 0 {
            return;
        }
        let mut log = self.0.lock().unwrap();
        match ev {
            PacketEvent::Sent => log.sent.push((now, p.uid, p.seg.seq)),
            PacketEvent::Queued { hop: 0, depart } => {
                log.queued.insert(p.uid, depart.expect("a link's departure"));
            }
            PacketEvent::Dropped { hop: Some(0), reason } => {
                assert_eq!(reason, TapDrop::Scripted);
                log.dropped.push(p.uid);
            }
            PacketEvent::Received => log.received.push((now, p.uid, p.seg.seq, p.seg.len)),
            _ => {}
        }
    }
}

/// Runs the path with `network` applied, recording data packet events.
fn run(network: impl FnOnce(&mut Network)) -> (Simulation, Arc<Mutex<Log>>) {
    let sc = scenario(PATH, &[]);
    let mut sim = Simulation::with_parts(&sc, network, app::install);
    let log = Arc::new(Mutex::new(Log::default()));
    sim.set_tap(Box::new(Rec(log.clone())));
    sim.run();
    (sim, log)
}

#[test]
fn a_toy_hop_that_adds_nothing_is_the_link_event_for_event() {
    let (plain, _) = run(|_| {});
    let (toy, _) = run(toy(SimTime::ZERO, u64::MAX));
    let (p, t) = (plain.finish(), toy.finish());
    assert_eq!(t.flows[0].delivered_bytes, TRANSFER);
    // The digest covers every event's time and kind.
    assert_eq!((t.digest, t.events), (p.digest, p.events));
    assert_eq!(t.summary.capacity_bps, p.summary.capacity_bps, "C of the toy's link: its rate x 1460 / 1500");
    assert_eq!(t.summary.capacity_bps, 10e6 * 1460.0 / 1500.0);
}

#[test]
fn a_toy_hop_delays_every_packet_by_its_time_and_drops_every_kth_data_segment() {
    const EXTRA: SimTime = SimTime(7_000_000);
    const EVERY: u64 = 10;
    let (plain, plain_log) = run(|_| {});
    let (sim, log) = run(toy(EXTRA, EVERY));
    let log = log.lock().unwrap();

    // The handshake's SYN crossed the toy: the first data segment leaves exactly 7 ms later
    // than over the plain link.
    assert_eq!(log.sent[0].0, plain_log.lock().unwrap().sent[0].0 + EXTRA);
    assert_eq!(plain.receiver(0).delivered(), TRANSFER);

    // Every data segment that crossed reached the receiver the link's delay plus 7 ms after
    // its last bit left.
    assert_eq!(log.received.len(), log.queued.len());
    for &(t, uid, ..) in &log.received {
        assert_eq!(t, log.queued[&uid] + ONE_WAY + EXTRA, "packet {uid}");
    }

    // The 10th, 20th, ... data segment offered (by packet order: uids grow with time) was
    // dropped, and only those.
    let mut offered: Vec<u64> = log.queued.keys().chain(&log.dropped).copied().collect();
    offered.sort_unstable();
    let expected: Vec<u64> = offered.iter().copied().skip(EVERY as usize - 1).step_by(EVERY as usize).collect();
    assert_eq!(log.dropped, expected);
    assert_eq!(log.dropped.len() as u64, offered.len() as u64 / EVERY);
    assert!(log.dropped.len() >= 20, "{} drops", log.dropped.len());
    // Every segment offered was one the sender sent (none made up, none lost on the way).
    assert_eq!(offered.len(), log.sent.len());

    // Every byte delivered once, in order: what crossed covers the transfer, and the receiver
    // delivered exactly the transfer (not a byte more).
    let mut got = log.received.clone();
    got.sort_by_key(|&(t, uid, ..)| (t, uid));
    let mut next = 1u64;
    let mut early = BTreeMap::new();
    for &(_, _, seq, len) in &got {
        early.insert(seq, seq + len as u64);
        while let Some((&s, &e)) = early.first_key_value() {
            if s > next {
                break;
            }
            next = next.max(e);
            early.remove(&s);
        }
    }
    assert_eq!(next - 1, TRANSFER);
    assert_eq!(sim.receiver(0).delivered(), TRANSFER);
    let drops = log.dropped.len() as u64;
    drop(log);
    let r = sim.finish();
    assert_eq!(r.flows[0].delivered_bytes, TRANSFER);
    assert!(r.flows[0].completed_at_s.is_some());
    // The toy's drops are its link's figures.
    assert_eq!(r.links[0].drops_scripted, drops);
}
