//! Seed 004's split connections: the applications of `topology.kind = "gateway"` with
//! `gateway.scheme = "sgw"` or `"split_tcp"` (end-to-end TCP, `"e2e"`, uses the bulk and
//! transfer sources of `app::bulk` between servers and clients).
//!
//! Both split schemes terminate each server's TCP connection at the SGW (premature ACKs) and
//! hold its bytes in one per-connection buffer (seed 004 figure 2): the terrestrial TCP
//! receiver's buffer is that buffer, and the relay *reads* bytes out of it only when the
//! satellite leg has them acknowledged by the client. Until then they occupy it, so the window
//! the server sees is the buffer's free space: back-pressure reaches the server only through
//! its advertised window (§III.A).
//!
//! - [`SgwRelay`] (`"sgw"`): the satellite leg is `pep::gateway::Gateway` (round-robin
//!   scheduler, the rate-based reliable protocol, the clients, the return channel), with ACK
//!   pacing of the freed room if asked.
//! - [`TcpRelay`] (`"split_tcp"`): the satellite leg is a second TCP connection from the SGW to
//!   the client (the seed's baseline uses TCP SACK on both legs: set `tcp.flavor = "sack"`).

use super::{App, AppCx, AppReport, Interest, Role, Setup};
use crate::net::topology::{queue_limit, UNLIMITED};
use crate::net::packet::FlowId;
use crate::pep::gateway::{ConnId, Gateway, GatewayConfig, GwOut};
use crate::scenario::validate::gateway::{GatewaySpec, Scheme};
use crate::scenario::AppSpec;
use crate::tcp::TcpConfig;
use crate::time::SimTime;

/// What each server sends: a persistent source, or one transfer of `bytes`.
#[derive(Copy, Clone, Debug)]
struct Source {
    bytes: Option<u64>,
    start: SimTime,
    stagger: SimTime,
}

impl Source {
    fn of(app: &AppSpec) -> Source {
        match *app {
            AppSpec::Transfer { bytes, start, stagger } => Source { bytes: Some(bytes), start, stagger },
            AppSpec::Bulk { start, stagger } => Source { bytes: None, start, stagger },
            // Validation allows only bulk and transfer sources on a gateway topology.
            AppSpec::Www { .. } | AppSpec::PingPong(_) => Source { bytes: None, start: SimTime::ZERO, stagger: SimTime::ZERO },
        }
    }
    fn offer(&self) -> u64 {
        // A bulk source offers more than any run can carry.
        self.bytes.unwrap_or(u64::MAX / 4)
    }
}

/// The smallest window-scale shift that lets a receive buffer of `bytes` be advertised whole
/// (RFC 7323 §2.3), at least `given`.
fn scale_for(bytes: u64, given: u8) -> u8 {
    let mut s = given;
    while s < 14 && (65_535u64 << s) < bytes {
        s += 1;
    }
    s
}

/// The terrestrial leg's TCP: the scenario's, with the SGW buffer as its receive buffer.
fn terrestrial_tcp(base: &TcpConfig, buffer: u64) -> TcpConfig {
    let mut t = base.clone();
    t.rcv_buf = Some(buffer);
    t.window_scale = scale_for(buffer, base.window_scale);
    t
}

/// Installs the relays of a split scheme.
pub fn install(setup: &mut Setup<'_>, g: &GatewaySpec) {
    let sc = setup.scenario;
    let source = Source::of(&sc.app);
    let n = g.servers.len() as u32;
    let (sgw, first_client) = (n, n + 2);
    // Connection i's TCP settings are those the scenario gives flow i ([tcp], [[tcp.groups]]).
    let relay: Vec<FlowId> = (0..n).map(|i| setup.flow_with(Role::Relay, i, sgw, terrestrial_tcp(sc.tcp_for(i), g.buffers[i as usize]))).collect();
    match g.scheme {
        Scheme::Sgw => {
            let rngs = setup.rngs;
            let (bdp, ns2) = (sc.bdp_bytes(), sc.tcp.ns2.drop_tail_ns2);
            let link = |name: &str, spec: &crate::scenario::LinkSpec| {
                // The queue limit and the random stream of the world link of that name: a
                // satellite hop behaves the same whichever scheme carries it.
                let limit = spec.queue.map_or(UNLIMITED, |q| queue_limit(q, bdp, ns2));
                crate::net::link::Link::new(name.into(), sgw, n + 1, spec.rate, spec.delay, spec.ber, limit, rngs.stream(&format!("link/{name}/errors")))
            };
            let mut ret = link("sat-return", &g.return_link);
            (ret.from, ret.to) = (n + 1, sgw);
            let cfg = GatewayConfig {
                mss: sc.tcp.mss,
                semantics: g.semantics,
                ack_policy: g.ack_policy,
                ack_delay: g.ack_delay,
                client_buffer: g.client_buffer,
                ack_pacing: g.ack_pacing,
                timer_granularity: g.timer_granularity,
                initial_rto: g.initial_rto,
                timer_copies: g.timer_copies,
            };
            let mut gw = Gateway::new(cfg, link("sat", &g.satellite), ret);
            for (i, (&b, srv)) in g.buffers.iter().zip(&g.servers).enumerate() {
                let c = gw.add_conn(b, true);
                // The SGW learns of the connection when the server's SYN arrives, then opens
                // the satellite leg with a handshake of one satellite round trip (the split
                // TCP baseline opens its satellite TCP at the same moment).
                gw.set_open_at(c, source.start + source.stagger.times(i as u64) + srv.delay + g.sat_rtt());
            }
            let conns = relay.iter().map(|&flow| Conn { flow, pushed: 0, read: 0, client: 0, done_at: None }).collect();
            setup.app(Box::new(SgwRelay { gw, conns, source, out: Vec::new(), buffers: g.buffers.clone() }), &relay);
        }
        Scheme::SplitTcp => {
            // The satellite legs are flows n..2n: their settings those of flow n + i.
            let sat: Vec<FlowId> = (0..n)
                .map(|i| {
                    let mut t = sc.tcp_for(n + i).clone();
                    t.rcv_buf = Some(g.client_buffer);
                    t.window_scale = scale_for(g.client_buffer, t.window_scale);
                    setup.flow_with(Role::Data, sgw, first_client + i, t)
                })
                .collect();
            let mut owned = relay.clone();
            owned.extend(&sat);
            let legs = relay.iter().zip(&sat).zip(&g.servers).map(|((&a, &b), srv)| Leg { terrestrial: a, satellite: b, syn_delay: srv.delay, relayed: 0, released: 0, closed: false }).collect();
            setup.app(Box::new(TcpRelay { legs, source }), &owned);
        }
        Scheme::E2e => unreachable!("end-to-end TCP uses the bulk and transfer sources"),
    }
}

/// One connection through [`SgwRelay`].
struct Conn {
    /// The server's TCP connection to the SGW.
    flow: FlowId,
    /// Bytes handed to the gateway so far.
    pushed: u64,
    /// Bytes read out of the TCP receive buffer (released by the satellite leg).
    read: u64,
    /// Bytes the client holds in order.
    client: u64,
    done_at: Option<SimTime>,
}

/// `"sgw"`: the server's TCP to the SGW, the rate-based satellite leg behind it.
pub struct SgwRelay {
    gw: Gateway,
    conns: Vec<Conn>,
    source: Source,
    out: Vec<GwOut>,
    buffers: Vec<u64>,
}

impl SgwRelay {
    fn conn_of(&self, flow: FlowId) -> ConnId {
        self.conns.iter().position(|c| c.flow == flow).expect("a relay flow") as ConnId
    }

    /// Applies the gateway's outputs: room freed (read from the TCP receive buffer, which
    /// opens the server's window), bytes at the client.
    fn apply(&mut self, cx: &mut AppCx<'_>) {
        let mut out = std::mem::take(&mut self.out);
        for o in out.drain(..) {
            match o {
                GwOut::Release { conn, bytes } => {
                    let c = &mut self.conns[conn as usize];
                    c.read += cx.read(c.flow, bytes);
                }
                GwOut::Delivered { conn, total } => {
                    let c = &mut self.conns[conn as usize];
                    c.client = total;
                    if self.source.bytes == Some(total) && c.done_at.is_none() {
                        c.done_at = Some(cx.now());
                        cx.complete(c.flow);
                    }
                }
            }
        }
        self.out = out;
        cx.set_timer(self.gw.poll_at());
    }
}

impl App for SgwRelay {

    fn start(&mut self, cx: &mut AppCx<'_>) {
        for (i, c) in self.conns.iter().enumerate() {
            cx.open_at(c.flow, self.source.start + self.source.stagger.times(i as u64));
        }
    }

    fn on_open(&mut self, cx: &mut AppCx<'_>, flow: FlowId) {
        cx.write(flow, self.source.offer());
        if self.source.bytes.is_some() {
            cx.close(flow);
        }
    }

    /// New bytes wait in the terrestrial receive buffer: they are handed to the gateway but
    /// stay in the buffer (unread) until the client holds them.
    fn on_readable(&mut self, cx: &mut AppCx<'_>, flow: FlowId, readable: u64) {
        let conn = self.conn_of(flow);
        let now = cx.now();
        let c = &mut self.conns[conn as usize];
        let delivered = c.read + readable;
        if delivered > c.pushed {
            // The TCP receive buffer is the gateway buffer, so what TCP delivered always fits.
            let n = self.gw.push(now, conn, delivered - c.pushed, &mut self.out);
            debug_assert_eq!(n, delivered - c.pushed, "the SGW buffer overflowed its TCP receive buffer");
            c.pushed += n;
            if self.source.bytes == Some(c.pushed) {
                self.gw.close(now, conn, &mut self.out);
            }
        }
        self.apply(cx);
    }

    fn on_timer(&mut self, cx: &mut AppCx<'_>) {
        self.gw.advance(cx.now(), &mut self.out);
        self.apply(cx);
    }

    fn done(&self) -> bool {
        self.source.bytes.is_some() && self.conns.iter().all(|c| c.done_at.is_some())
    }

    fn report(&mut self, end: SimTime) -> Option<AppReport> {
        let secs = end.as_secs_f64();
        let mut r = AppReport::default();
        self.gw.forward_link_mut().finish(end);
        self.gw.return_link_mut().finish(end);
        r.links = [self.gw.forward_link(), self.gw.return_link()].into_iter().map(|l| crate::world::link_result(l, end)).collect();
        let mut conns = Vec::new();
        for (i, c) in self.conns.iter().enumerate() {
            let id = i as ConnId;
            let tx = self.gw.sender(id).stats();
            let rx = self.gw.receiver(id).stats();
            let tr = self.gw.traces(id);
            r.traces.push((format!("sgw/{i}/backlog_bytes"), tr.backlog.clone()));
            r.traces.push((format!("sgw/{i}/client_segments"), tr.client_cum.clone()));
            r.traces.push((format!("sgw/{i}/reorder_segments"), tr.reorder.clone()));
            r.data.push((c.client, self.source.bytes.unwrap_or(c.pushed)));
            conns.push(serde_json::json!({
                "conn": i,
                "buffer_bytes": self.buffers[i],
                "delivered_bytes": c.client,
                "throughput_bps": c.client as f64 * 8.0 / secs,
                "completed_at_s": c.done_at.map(|t| t.as_secs_f64()),
                "segments_sent": tx.segments_sent,
                "segments_retransmitted": tx.segments_retransmitted,
                "losses_detected": tx.losses_detected,
                "timeouts": tx.timeouts,
                "peak_held_bytes": tx.peak_held,
                "acks_sent": rx.acks_sent,
                "peak_reorder_segments": rx.peak_reorder_segments,
            }));
        }
        r.traces.push(("sgw/sat_bytes".into(), self.gw.sat_bytes.clone()));
        let ret = self.gw.return_link();
        r.section = Some((
            "gateway".into(),
            serde_json::json!({
                "scheme": "sgw",
                "conns": conns,
                "return_channel_bps": ret.stats.bytes as f64 * 8.0 / secs,
                "acks_lost": self.gw.acks_lost,
            }),
        ));
        Some(r)
    }
}

/// One connection through [`TcpRelay`].
struct Leg {
    terrestrial: FlowId,
    satellite: FlowId,
    /// The server's SYN reaches the SGW this long after the connection starts: the SGW then
    /// opens the satellite leg.
    syn_delay: SimTime,
    /// Bytes written to the satellite leg.
    relayed: u64,
    /// Bytes read out of the terrestrial receive buffer (acknowledged by the client).
    released: u64,
    closed: bool,
}

/// `"split_tcp"`: TCP to the SGW, TCP from the SGW to the client, one buffer between.
pub struct TcpRelay {
    legs: Vec<Leg>,
    source: Source,
}

impl App for TcpRelay {
    fn interest(&self) -> Interest {
        // Delivered: the clients' transfers complete; acked: the satellite legs release.
        Interest { delivered: true, acked: true }
    }

    fn start(&mut self, cx: &mut AppCx<'_>) {
        for (i, l) in self.legs.iter().enumerate() {
            let at = self.source.start + self.source.stagger.times(i as u64);
            cx.open_at(l.terrestrial, at);
            cx.open_at(l.satellite, at + l.syn_delay);
        }
    }

    fn on_open(&mut self, cx: &mut AppCx<'_>, flow: FlowId) {
        if self.legs.iter().any(|l| l.terrestrial == flow) {
            cx.write(flow, self.source.offer());
            if self.source.bytes.is_some() {
                cx.close(flow);
            }
        }
    }

    fn on_readable(&mut self, cx: &mut AppCx<'_>, flow: FlowId, readable: u64) {
        let Some(l) = self.legs.iter_mut().find(|l| l.terrestrial == flow) else {
            // A client: its application reads at once (seed 004 §II: large client buffers).
            cx.read(flow, u64::MAX);
            return;
        };
        // New bytes at the SGW go on to the client, and stay (unread) in the terrestrial
        // receive buffer, the one buffer, until the client holds them. The satellite leg's
        // send buffer is unbounded.
        let delivered = l.released + readable;
        if delivered > l.relayed {
            cx.write(l.satellite, delivered - l.relayed);
            l.relayed = delivered;
        }
        if self.source.bytes == Some(l.relayed) && !l.closed {
            l.closed = true;
            cx.close(l.satellite);
        }
    }

    fn on_delivered(&mut self, cx: &mut AppCx<'_>, flow: FlowId, delivered: u64) {
        if self.source.bytes == Some(delivered) && self.legs.iter().any(|l| l.satellite == flow) {
            cx.complete(flow);
        }
    }

    fn on_acked(&mut self, cx: &mut AppCx<'_>, flow: FlowId, acked: u64) {
        if let Some(l) = self.legs.iter_mut().find(|l| l.satellite == flow) {
            // The client holds them: they leave the SGW buffer.
            let acked = acked.min(l.relayed);
            if acked > l.released {
                l.released += cx.read(l.terrestrial, acked - l.released);
            }
        }
    }
}
