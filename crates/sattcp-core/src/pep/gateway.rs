//! The satellite side of the SGW as one passive machine: the per-connection senders under the
//! round-robin scheduler, the forward satellite link, the clients, and the return channel on
//! which their ACKs compete (seed 004 figure 1).
//!
//! The terrestrial side (the servers' TCP connections, terminated at the SGW) lives in the
//! world; it hands bytes over with [`Gateway::push`] and gets room back through
//! [`GwOut::Release`] (after ACK pacing), which the world applies as the SGW application
//! reading from that connection's receive buffer, so the server sees the window open.
//!
//! Both satellite links are [`Link`]s, the simulator's own link model (rate, propagation
//! delay, bit errors per bit, drop-tail queue), so a satellite hop here behaves exactly as the
//! same hop in an end-to-end or split-TCP baseline. The forward link is offered a packet only
//! when its transmitter is free (the scheduler pulls, §III.A), so its queue stays empty; on
//! the return channel ACKs queue and may be dropped.
//!
//! Packet sizes: a data packet is its payload plus 40 bytes of IP and TCP headers; an ACK is
//! 40 bytes plus its SACK option (RFC 2018 §3: 8 bytes a block plus 2, padded with two NOPs to
//! 8n + 4), which is what the return channel carries (seed 004 figure 8).

use super::ack_pacer::AckPacer;
use super::sat_receiver::{AckPolicy, SatReceiver, SatReceiverConfig};
use super::sat_sender::{SatSender, SatSenderConfig};
use super::scheduler::RoundRobin;
use super::{SackSemantics, SatAck, SegNo};
use crate::metrics::result::Trace;
use crate::net::link::{Admit, Link};
use crate::time::SimTime;
use std::collections::VecDeque;

/// IP + TCP headers of every satellite-leg packet.
pub const HEADERS: u32 = 40;

/// Bytes of an ACK with `n` SACK blocks on the return channel.
pub fn ack_bytes(n: usize) -> u32 {
    HEADERS + if n > 0 { 8 * n as u32 + 4 } else { 0 }
}

/// Index of a connection through the gateway.
pub type ConnId = u32;

#[derive(Clone, Debug)]
pub struct GatewayConfig {
    pub mss: u32,
    pub semantics: SackSemantics,
    pub ack_policy: AckPolicy,
    pub ack_delay: SimTime,
    /// Each client's receive buffer in bytes.
    pub client_buffer: u64,
    pub ack_pacing: bool,
    pub timer_granularity: SimTime,
    pub initial_rto: SimTime,
    pub timer_copies: u8,
}

/// What the gateway tells the world.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GwOut {
    /// Room for `bytes` more in connection `conn`'s buffer: read them from its terrestrial
    /// receive buffer.
    Release { conn: ConnId, bytes: u64 },
    /// The client of `conn` now holds `total` bytes in order.
    Delivered { conn: ConnId, total: u64 },
}

struct Conn {
    /// The satellite leg is open (its handshake done) from then on.
    opens_at: SimTime,
    tx: SatSender,
    rx: SatReceiver,
    pacer: AckPacer,
    traced: bool,
}

/// Per-connection time series (seed 004 figures 5-6 and 10-12).
#[derive(Clone, Debug, Default)]
pub struct ConnTraces {
    /// Bytes handed over and not yet sent once (the SGW backlog).
    pub backlog: Trace,
    /// Segments the client holds in order (its received sequence number).
    pub client_cum: Trace,
    /// Segments in the client's reorder buffer.
    pub reorder: Trace,
}

pub struct Gateway {
    cfg: GatewayConfig,
    fwd: Link,
    ret: Link,
    conns: Vec<Conn>,
    traces: Vec<ConnTraces>,
    rr: RoundRobin,
    /// When the forward transmitter is free.
    fwd_free: SimTime,
    /// Packets on the forward link: (arrival, conn, segment, length, corrupted).
    fwd_flight: VecDeque<(SimTime, ConnId, SegNo, u32, bool)>,
    /// ACKs on the return channel: (arrival, conn, ack, corrupted).
    ret_flight: VecDeque<(SimTime, ConnId, SatAck, bool)>,
    /// The gateway's own clock (events up to here have run).
    clock: SimTime,
    /// ACKs lost on the return channel (queue full or corrupted).
    pub acks_lost: u64,
    /// Bytes sent on the forward satellite link so far, at each transmission (its utilisation
    /// over time, seed 004 figure 5).
    pub sat_bytes: Trace,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Due {
    FwdArrival,
    RetArrival,
    SenderTimer(usize),
    ReceiverTimer(usize),
    Pacer(usize),
    Transmit,
}

impl Gateway {
    /// A gateway with `fwd` as the satellite link toward the clients and `ret` as the return
    /// channel.
    pub fn new(cfg: GatewayConfig, fwd: Link, ret: Link) -> Self {
        Gateway { cfg, fwd, ret, conns: Vec::new(), traces: Vec::new(), rr: RoundRobin::new(0), fwd_free: SimTime::ZERO, fwd_flight: VecDeque::new(), ret_flight: VecDeque::new(), clock: SimTime::ZERO, acks_lost: 0, sat_bytes: Trace::default() }
    }

    /// Adds a connection whose SGW buffer holds `buffer` bytes; `traced` records its series.
    pub fn add_conn(&mut self, buffer: u64, traced: bool) -> ConnId {
        let c = &self.cfg;
        let rx = SatReceiver::new(SatReceiverConfig { mss: c.mss, buffer: c.client_buffer, policy: c.ack_policy, ack_delay: c.ack_delay });
        let mut scfg = SatSenderConfig::new(c.mss, buffer, c.semantics, rx.window_segs());
        scfg.timer_granularity = c.timer_granularity;
        scfg.initial_rto = c.initial_rto;
        scfg.timer_copies = c.timer_copies;
        self.conns.push(Conn { opens_at: SimTime::ZERO, tx: SatSender::new(scfg), rx, pacer: AckPacer::new(c.ack_pacing, c.mss), traced });
        self.traces.push(ConnTraces::default());
        self.rr.add() as ConnId
    }

    pub fn sender(&self, conn: ConnId) -> &SatSender {
        &self.conns[conn as usize].tx
    }
    pub fn receiver(&self, conn: ConnId) -> &SatReceiver {
        &self.conns[conn as usize].rx
    }
    pub fn traces(&self, conn: ConnId) -> &ConnTraces {
        &self.traces[conn as usize]
    }
    pub fn forward_link(&self) -> &Link {
        &self.fwd
    }
    pub fn return_link(&self) -> &Link {
        &self.ret
    }
    pub fn forward_link_mut(&mut self) -> &mut Link {
        &mut self.fwd
    }
    pub fn return_link_mut(&mut self) -> &mut Link {
        &mut self.ret
    }
    pub fn conns(&self) -> usize {
        self.conns.len()
    }

    /// The terrestrial leg of `conn` hands over `bytes` at `now`; returns how many fit.
    pub fn push(&mut self, now: SimTime, conn: ConnId, bytes: u64, out: &mut Vec<GwOut>) -> u64 {
        self.advance(now, out);
        let n = self.conns[conn as usize].tx.push(bytes);
        self.trace(conn);
        self.advance(now, out);
        n
    }

    /// The terrestrial leg of `conn` ended (its last segment may be short).
    pub fn close(&mut self, now: SimTime, conn: ConnId, out: &mut Vec<GwOut>) {
        self.advance(now, out);
        self.conns[conn as usize].tx.close();
        self.advance(now, out);
    }

    /// The satellite leg of `conn` opens at `at` (its handshake, one satellite round trip
    /// after the SGW learns of the connection): nothing is sent before.
    pub fn set_open_at(&mut self, conn: ConnId, at: SimTime) {
        self.conns[conn as usize].opens_at = at;
    }

    fn any_ready(&self) -> bool {
        self.conns.iter().any(|c| c.tx.ready() && c.opens_at <= self.clock)
    }

    /// The next event: its time and kind (ties in a fixed order: arrivals, then per
    /// connection its sender's timer, its client's ACK timer, its pacer, then the transmitter).
    fn next_due(&self) -> Option<(SimTime, Due)> {
        let mut best: Option<(SimTime, Due)> = None;
        let mut consider = |t: Option<SimTime>, d: Due| {
            if let Some(t) = t {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, d));
                }
            }
        };
        consider(self.fwd_flight.front().map(|f| f.0), Due::FwdArrival);
        consider(self.ret_flight.front().map(|f| f.0), Due::RetArrival);
        for (i, c) in self.conns.iter().enumerate() {
            consider(c.tx.poll_at(), Due::SenderTimer(i));
            consider(c.rx.poll_at(), Due::ReceiverTimer(i));
            consider(c.pacer.poll_at(), Due::Pacer(i));
        }
        if self.any_ready() {
            consider(Some(self.fwd_free.max(self.clock)), Due::Transmit);
        }
        // A connection with data waiting for its satellite leg to open.
        let opening = self.conns.iter().filter(|c| c.tx.ready() && c.opens_at > self.clock).map(|c| c.opens_at).min();
        consider(opening.map(|t| t.max(self.fwd_free)), Due::Transmit);
        best
    }

    /// When the gateway next needs to run.
    pub fn poll_at(&self) -> Option<SimTime> {
        self.next_due().map(|(t, _)| t)
    }

    /// Runs every event due at or before `now`.
    pub fn advance(&mut self, now: SimTime, out: &mut Vec<GwOut>) {
        while let Some((t, due)) = self.next_due() {
            if t > now {
                break;
            }
            self.clock = self.clock.max(t);
            let t = self.clock;
            match due {
                Due::FwdArrival => {
                    let (_, conn, seg, len, corrupted) = self.fwd_flight.pop_front().expect("due arrival");
                    if !corrupted {
                        let c = &mut self.conns[conn as usize];
                        let before = c.rx.delivered();
                        let ack = c.rx.on_segment(t, seg, len);
                        if c.rx.delivered() > before {
                            out.push(GwOut::Delivered { conn, total: c.rx.delivered() });
                        }
                        self.trace(conn);
                        if let Some(a) = ack {
                            self.send_ack(t, conn, a);
                        }
                    }
                }
                Due::RetArrival => {
                    let (_, conn, ack, corrupted) = self.ret_flight.pop_front().expect("due arrival");
                    if corrupted {
                        continue;
                    }
                    let c = &mut self.conns[conn as usize];
                    let freed = c.tx.on_ack(t, &ack);
                    let now_free = c.pacer.on_sat_ack(t, freed);
                    if now_free > 0 {
                        out.push(GwOut::Release { conn, bytes: now_free });
                    }
                }
                Due::SenderTimer(i) => self.conns[i].tx.on_timer(t),
                Due::ReceiverTimer(i) => {
                    if let Some(a) = self.conns[i].rx.on_timer(t) {
                        self.send_ack(t, i as ConnId, a);
                    }
                }
                Due::Pacer(i) => {
                    let n = self.conns[i].pacer.on_timer(t);
                    if n > 0 {
                        out.push(GwOut::Release { conn: i as ConnId, bytes: n });
                    }
                }
                Due::Transmit => self.transmit(t),
            }
        }
        self.clock = self.clock.max(now);
    }

    /// The transmitter is free: the round robin picks a connection with a packet ready.
    fn transmit(&mut self, now: SimTime) {
        let conns = &self.conns;
        let Some(q) = self.rr.pick(|q| conns[q].tx.ready() && conns[q].opens_at <= now) else { return };
        let p = self.conns[q].tx.next_packet(now).expect("a ready connection has a packet");
        let bytes = p.len + HEADERS;
        match self.fwd.enqueue(now, bytes) {
            Admit::Sent { arrival, corrupted } => {
                self.fwd_free = arrival - self.fwd.delay;
                self.fwd_flight.push_back((arrival, q as ConnId, p.seg, p.len, corrupted));
                self.sat_bytes.record(now.as_secs_f64(), self.fwd.stats.bytes as f64);
            }
            Admit::Dropped(_) => unreachable!("the scheduler offers the forward link a packet only when it is free"),
        }
        self.trace(q as ConnId);
    }

    fn send_ack(&mut self, now: SimTime, conn: ConnId, ack: SatAck) {
        match self.ret.enqueue(now, ack_bytes(ack.n_sack as usize)) {
            Admit::Sent { arrival, corrupted } => {
                if corrupted {
                    self.acks_lost += 1;
                }
                self.ret_flight.push_back((arrival, conn, ack, corrupted));
            }
            Admit::Dropped(_) => self.acks_lost += 1,
        }
    }

    fn trace(&mut self, conn: ConnId) {
        let c = &self.conns[conn as usize];
        if !c.traced {
            return;
        }
        let t = self.clock.as_secs_f64();
        let tr = &mut self.traces[conn as usize];
        tr.backlog.record(t, c.tx.backlog() as f64);
        tr.client_cum.record(t, c.rx.cum() as f64);
        tr.reorder.record(t, c.rx.reorder_segments() as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::RngFactory;
    use crate::net::link::QueueLimit;
    use crate::pep::sat_receiver::DEFAULT_ACK_DELAY;
    use crate::pep::sat_sender::{DEFAULT_INITIAL_RTO, DEFAULT_TIMER_COPIES, DEFAULT_TIMER_GRANULARITY};
    use crate::time::Rate;

    const MSS: u32 = 512;

    fn cfg(policy: AckPolicy, semantics: SackSemantics) -> GatewayConfig {
        GatewayConfig {
            mss: MSS,
            semantics,
            ack_policy: policy,
            ack_delay: DEFAULT_ACK_DELAY,
            client_buffer: 1 << 20,
            ack_pacing: false,
            timer_granularity: DEFAULT_TIMER_GRANULARITY,
            initial_rto: DEFAULT_INITIAL_RTO,
            timer_copies: DEFAULT_TIMER_COPIES,
        }
    }

    /// Seed 004 §V.A: 600 kbps satellite link, satellite RTT 500 ms; a return channel.
    fn gateway(ber: f64, policy: AckPolicy, semantics: SackSemantics, seed: u64) -> Gateway {
        let rngs = RngFactory::new(seed);
        let fwd = Link::new("sat".into(), 0, 1, Rate::bps(600_000), SimTime::from_millis(250), ber, QueueLimit::Packets(1 << 30), rngs.stream("sat"));
        let ret = Link::new("ret".into(), 1, 0, Rate::bps(64_000), SimTime::from_millis(250), 0.0, QueueLimit::Packets(1 << 30), rngs.stream("ret"));
        Gateway::new(cfg(policy, semantics), fwd, ret)
    }

    /// A terrestrial side that refills every connection's buffer at once, up to `total`
    /// bytes each, and closes it then. Runs to `until`; returns each connection's client
    /// total and the time its transfer ended.
    fn run(g: &mut Gateway, total: u64, until: SimTime) -> Vec<(u64, Option<SimTime>)> {
        let n = g.conns();
        let mut pushed = vec![0u64; n];
        let mut delivered = vec![(0u64, None); n];
        let mut out = vec![];
        let mut now = SimTime::ZERO;
        loop {
            for c in 0..n {
                if pushed[c] < total {
                    pushed[c] += g.push(now, c as ConnId, total - pushed[c], &mut out);
                    if pushed[c] == total {
                        g.close(now, c as ConnId, &mut out);
                    }
                }
            }
            for o in out.drain(..) {
                if let GwOut::Delivered { conn, total: got } = o {
                    delivered[conn as usize].0 = got;
                    if got == total {
                        delivered[conn as usize].1 = Some(now);
                    }
                }
            }
            match g.poll_at() {
                Some(t) if t <= until => {
                    now = t;
                    g.advance(now, &mut out);
                }
                _ => break,
            }
        }
        delivered
    }

    #[test]
    fn an_error_free_link_is_kept_full_and_delivers_in_order() {
        let mut g = gateway(0.0, AckPolicy::Tcp, SackSemantics::Modified, 1);
        let c = g.add_conn(200 * MSS as u64, false);
        let total = 1_000_000;
        let res = run(&mut g, total, SimTime::from_secs(60));
        assert_eq!(res[c as usize].0, total);
        let end = res[c as usize].1.unwrap();
        // 1,000,000 bytes = 1954 segments of 552 bytes on the wire at 600 kbps = 14.382 s,
        // plus the one-way delay 250 ms: the link never idles (the buffer of 200 segments
        // exceeds the satellite BDP of 68 segments).
        let segs = total.div_ceil(MSS as u64);
        let wire = (segs - 1) * (MSS as u64 + 40) + (total - (segs - 1) * MSS as u64 + 40);
        let expect = Rate::bps(600_000).tx_time(wire) + SimTime::from_millis(250);
        assert_eq!(end, expect);
        assert_eq!(g.sender(c).stats().segments_retransmitted, 0);
    }

    #[test]
    fn a_small_buffer_limits_throughput_to_buffer_over_rtt() {
        // Buff = 20 segments, satellite RTT = 500 ms + serialisation: far below the link's
        // 68-segment BDP, so throughput ~ Buff / RTT (seed 004 §II.A with TerrRTT = 0).
        let mut g = gateway(0.0, AckPolicy::EveryN(1), SackSemantics::Modified, 1);
        g.add_conn(20 * MSS as u64, false);
        let res = run(&mut g, 2_000_000, SimTime::from_secs(20));
        let got = res[0].0 as f64 * 8.0 / 20.0;
        // RTT for a segment: 552 B at 600 kbps (7.36 ms) + 250 ms + ACK (40 B at 64 kbps = 5 ms) + 250 ms.
        let rtt = 0.00736 + 0.25 + 0.005 + 0.25;
        let expect = 20.0 * MSS as f64 * 8.0 / rtt;
        assert!((got - expect).abs() / expect < 0.03, "{got} vs {expect}");
    }

    #[test]
    fn round_robin_shares_the_link_equally_between_greedy_connections() {
        let mut g = gateway(0.0, AckPolicy::Tcp, SackSemantics::Modified, 1);
        for _ in 0..3 {
            g.add_conn(400 * MSS as u64, false);
        }
        let res = run(&mut g, u64::MAX / 2, SimTime::from_secs(30));
        let got: Vec<u64> = res.iter().map(|r| r.0).collect();
        let (lo, hi) = (got.iter().min().unwrap(), got.iter().max().unwrap());
        assert!(hi - lo <= MSS as u64, "{got:?}");
        // Together they fill the link: 30 s minus the first 250 ms, 600 kbps x 512/552.
        let sum: u64 = got.iter().sum();
        let expect = 600_000.0 / 8.0 * (MSS as f64 / 552.0) * 29.75;
        assert!((sum as f64 - expect).abs() / expect < 0.01, "{sum} vs {expect}");
    }

    #[test]
    fn every_byte_arrives_once_in_order_under_bit_errors() {
        for (ber, semantics, policy) in [(1e-5, SackSemantics::Modified, AckPolicy::EveryN(4)), (1e-5, SackSemantics::Normal, AckPolicy::Tcp), (1e-4, SackSemantics::Modified, AckPolicy::Tcp)] {
            for seed in 1..=3 {
                let mut g = gateway(ber, policy, semantics, seed);
                for _ in 0..2 {
                    g.add_conn(100 * MSS as u64, false);
                }
                let total = 300_000;
                let res = run(&mut g, total, SimTime::from_secs(600));
                for (c, r) in res.iter().enumerate() {
                    assert_eq!(r.0, total, "ber {ber} {semantics:?} seed {seed} conn {c}");
                    assert!(g.sender(c as ConnId).is_done());
                    assert_eq!(g.sender(c as ConnId).held(), 0);
                    assert_eq!(g.receiver(c as ConnId).reorder_segments(), 0);
                }
                assert!(g.forward_link().stats.drops_corrupted > 0, "errors were drawn");
            }
        }
    }

    #[test]
    fn ack_sizes_count_the_sack_option() {
        assert_eq!(ack_bytes(0), 40);
        assert_eq!(ack_bytes(1), 52);
        assert_eq!(ack_bytes(4), 76);
    }
}
