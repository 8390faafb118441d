//! The data-sending end of a half-connection: handshake, segmentation, the retransmission
//! timer, and the glue between the scoreboard, the loss recovery and the congestion control.
//!
//! The sender alone changes the congestion state ([`CongState`]) and applies what the
//! recovery ([`Recovery`]) and the congestion controller ([`Cc`]) decide. Sequence numbers:
//! the SYN is 0, data starts at 1 (net/packet.rs). `snd_una` is the first unacknowledged
//! byte, `snd_max` one past the highest byte ever sent, and `snd_nxt` the next byte to send in
//! sequence, which a timeout sets back to `snd_una` (go-back-N, as BSD and ns-2 did).
//!
//! ## The application side
//!
//! - [`TcpSender::app_send`] offers bytes without limit (the seeds' bulk and WWW sources: data
//!   waits outside the socket, as with ns-2's agents; `snd_buf` then only limits the flight).
//! - [`TcpSender::app_write`] is a socket write into a finite send buffer (`cfg.snd_buf`):
//!   it accepts at most [`send_space`](TcpSender::send_space) bytes (the buffer minus the bytes
//!   written and not yet acknowledged) and returns how many it took. When a write was cut
//!   short, the sender raises a flag once acknowledgements free room again; the application
//!   polls it with [`take_writable`](TcpSender::take_writable) (passive, like `poll_at`).
//!   With `snd_buf = None` (the default) every write is accepted whole.
//!
//! ## Timers
//!
//! One timer slot ([`poll_at`](TcpSender::poll_at) is the earliest of them): the
//! retransmission timer, or the persist timer while the peer's window is too small for the
//! next segment and nothing is outstanding (RFC 9293 §3.8.6.1, RFC 1122 4.2.2.17); and
//! independently the pacing release time when a pacing rate holds a segment back
//! (tcp/pacing.rs).
//!
//! **Persist.** The timer starts at the RTO and doubles at each expiry up to `max_rto`
//! (Linux `tcp_probe0_when()`; RFC 1122 asks for exponential backoff); the backoff ends when
//! the window takes the next segment (Linux `tcp_ack_probe()`). Each expiry sends a window
//! probe of new data at `snd_max` (counted in `SenderStats::window_probes`):
//!
//! - A window smaller than the next segment but not zero: as many bytes as it takes (Linux
//!   `tcp_write_wakeup()`). That is an ordinary segment within the window: timed for the RTT,
//!   under the retransmission timer, and the episode ends. A later window update (even one that
//!   left the receiver before the probe arrived) sends new data after it, never the probe again.
//! - A zero window: one octet beyond it (RFC 9293 §3.8.6.1: "at least one octet of new data"),
//!   the only probe a receiver refuses: it drops it and answers with its closed window. This
//!   probe is not timed and its answers are not duplicate ACKs; the persist timer resends it
//!   while the window stays closed. An answer that still shows a zero window marks it refused
//!   (`snd_nxt` back to `snd_una`, as BSD's `tcp_output()` does), so that when the window
//!   opens it is resent in sequence; a window that opens with the probe in flight and not
//!   refused (the update overtook it) lets sending go on after it.
//!
//! ## Congestion-control hooks, rate samples, pacing
//!
//! When the controller uses them (or `cfg.rate_samples` asks; off for Reno AIMD, CUBIC and
//! Hybla, so the seeds' runs pay nothing for it), every transmission snapshots the
//! delivery-rate state into its scoreboard entry, every ACK
//! that delivers data (cumulatively or by SACK) yields a [`RateSample`](super::rate::RateSample)
//! (tcp/rate.rs), and the controller sees it in [`Cc::on_rate_sample`] after the recovery has
//! acted; the [`Control`](super::cc::Control) it returns (cwnd, pacing rate) is applied before
//! sending. The other hooks are listed in tcp/cc/mod.rs.

use super::cc::{AckSample, Cc, RateEvent, Window};
use super::config::{BackoffReset, TcpConfig};
use super::pacing::Pacer;
use super::rack::{Rack, Resend};
use super::rate::{RateEstimator, RateSample, TxRate};
use super::recovery::{CongState, Cx, Gate, Out, Pick, Recovery, TimerAction};
use super::ns2::Ns2Compat;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use crate::net::packet::{flags, Segment};
use crate::time::SimTime;
use std::collections::VecDeque;
use std::num::NonZeroU64;

/// Counters of one sender.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SenderStats {
    /// Payload bytes sent, first transmissions and retransmissions.
    pub bytes_sent: u64,
    /// Payload bytes retransmitted.
    pub bytes_retransmitted: u64,
    pub segments_sent: u64,
    pub segments_retransmitted: u64,
    /// Retransmission timeouts (SYN timeouts included).
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// ACKs received, duplicates among them, and partial ACKs (new data acknowledged during
    /// fast recovery without reaching RECOVER).
    pub acks_received: u64,
    pub dupacks_received: u64,
    pub partial_acks: u64,
    /// Slow-start restarts after an idle period (not counted in `timeouts`).
    pub idle_restarts: u64,
    /// Window probes sent by the persist timer (into a window smaller than a segment, or
    /// one octet beyond a zero window; module docs).
    pub window_probes: u64,
}

/// RFC 1122 4.2.2.17: the persist interval backs off exponentially; the shift is capped here
/// (the interval itself at `max_rto`), so it cannot overflow.
const MAX_PERSIST_BACKOFF: u32 = 16;

/// RFC 5681 §3.1: "if the SYN or SYN/ACK is lost, the initial window used by a sender after a
/// correctly transmitted SYN MUST be one segment" (Linux `tcp_init_transfer()`: cwnd 1 after a
/// retransmitted SYN; ns-2 `timeout()` with `bugfix_ss_`: `wnd_init_ = 1`).
const SYN_LOSS_INITIAL_WINDOW_SEGMENTS: u64 = 1;

/// The retransmission or persist timer (smoltcp style: the deadline lives in the variant).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Timer {
    Idle,
    Retransmit { expires_at: SimTime },
    /// The peer's window cannot take the next segment and nothing is outstanding (or only a
    /// window probe): probe at `expires_at` (RFC 9293 §3.8.6.1).
    Persist { expires_at: SimTime },
    /// Linux's tail loss probe timer (`ICSK_TIME_LOSS_PROBE`), in the retransmission timer's
    /// place as in Linux (one pending timer); only senders with RACK set it (BBR; docs/tcp.md,
    /// "Tail loss probe (BBR)").
    LossProbe { expires_at: SimTime },
}

/// Linux `TCP_TIMEOUT_MIN` (2 ms): what the probe timeout adds to 2 SRTT with more than one
/// segment out.
const TLP_TIMEOUT_MIN: SimTime = SimTime::from_millis(2);
/// Linux `TCP_TIMEOUT_INIT` (1 s): the probe timeout before any RTT sample.
const TLP_TIMEOUT_INIT: SimTime = SimTime::from_secs(1);

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Closed,
    SynSent,
    Established,
}

/// The recovery's view of the sender for one event (a macro so that the borrow of the
/// fields stays disjoint from `self.rec`).
macro_rules! cx {
    ($s:ident, $now:expr, $acked:expr) => {
        Cx {
            now: $now,
            win: &mut $s.win,
            cc: &mut $s.cc,
            sb: &mut $s.sb,
            snd_una: $s.snd_una,
            snd_nxt: $s.snd_nxt,
            snd_max: $s.snd_max,
            rwnd: $s.rwnd,
            dupacks: $s.dupacks,
            dup_thresh: $s.dupack_threshold,
            recover: $s.recover,
            after_timeout: $s.after_timeout,
            acked: $acked,
            state: $s.state,
            new_data: $s.snd_max < $s.app_end,
            ns2: &$s.ns2,
        }
    };
}

/// ns-3's `EstimateRtt` on a new ACK up to `ack`, before the scoreboard lets go of what it
/// covers (tcp/rtt.rs, ns-3): the oldest history entry is the segment at max(`snd_una`, the
/// history floor); if the ACK covers it and it was sent once, the sample is the time since.
#[inline]
fn ns3_rtt_sample(rtt: &mut RttEstimator, sb: &Scoreboard, snd_una: u64, now: SimTime, ack: u64) {
    let front = snd_una.max(rtt.history_floor());
    let e = if front == snd_una { sb.first() } else { sb.get(front) };
    if let Some(e) = e.filter(|e| ack >= e.end && e.tx_count == 0) {
        rtt.measure(now - e.last_sent);
    }
}

/// The earlier of two optional deadlines.
#[inline]
fn earliest(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Linux `tcp_clean_rtx_queue()`'s `seq_rtt_us` for an ACK up to `ack`: the RTT of the oldest
/// newly acknowledged segment not SACKed before (`first_ackt`), none if the ACK acknowledges a
/// segment ever retransmitted (`FLAG_RETRANS_DATA_ACKED`: Karn's rule).
fn linux_seq_rtt(sb: &Scoreboard, ack: u64, now: SimTime) -> Option<SimTime> {
    let mut first = None;
    for e in sb.iter().take_while(|e| e.end <= ack) {
        if e.tx_count > 0 {
            return None;
        }
        if !e.sacked && first.is_none() {
            first = Some(e.last_sent);
        }
    }
    first.map(|t| now - t)
}

/// Laid out by hand (`repr(C)`, fields grouped by 64-byte line; issue 15): what every ACK and
/// every segment sent touches comes first (sequence state and flags; the window, timers and
/// the configuration read per segment; the scoreboard's header; the pacer and ns-2 switches;
/// the counters, the RTT estimator, the recovery and the controller), the rest last (the
/// whole configuration, the delivery-rate state). With a hundred thousand flows every line a
/// segment touches is a likely cache miss.
#[repr(C, align(64))]
pub struct TcpSender {
    // Line 1: sequence state and flags.
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// One past the last byte the application has offered (1 + offered bytes).
    app_end: u64,
    /// Peer's receive window in bytes (its field shifted by `snd_wscale`).
    rwnd: u64,
    recover: u64,
    dupacks: u32,
    phase: Phase,
    state: CongState,
    snd_wscale: u8,
    sack_ok: bool,
    after_timeout: bool,
    /// The application asked to close: send a FIN after the data (only if `cfg.fin`).
    closing: bool,
    /// Delivery-rate sampling is on (the controller uses it, or `cfg.rate_samples`).
    rate_on: bool,
    /// An `app_write` was cut short; `writable` is raised when room frees.
    write_blocked: bool,
    writable: bool,
    /// `cfg.sws_avoidance`, `cfg.slow_start_restart`, `cfg.fin`.
    sws_avoidance: bool,
    slow_start_restart: bool,
    fin: bool,
    // Line 2: window, timers, per-segment configuration.
    win: Window,
    timer: Timer,
    /// A pacing release time the send loop stopped at.
    pace_wait: Option<SimTime>,
    /// `cfg.dupack_threshold`, `cfg.rcv_window_field`, `cfg.backoff_reset`.
    dupack_threshold: u32,
    rcv_window_field: u16,
    backoff_reset: BackoffReset,
    // Line 3.
    sb: Scoreboard,
    /// Start of an outstanding zero-window probe (one octet beyond a closed window; never 0,
    /// the SYN's number, so the option takes 8 bytes and the line keeps the scoreboard).
    probe: Option<NonZeroU64>,
    // Line 4.
    /// `cfg.snd_buf`.
    snd_buf: Option<u64>,
    /// `cfg.ns2` (the recovery reads it per ACK).
    ns2: Ns2Compat,
    pacer: Pacer,
    // Then.
    stats: SenderStats,
    rtt: RttEstimator,
    rec: Recovery,
    cc: Cc,
    /// Consecutive persist expiries (the backoff shift).
    persist_backoff: u32,
    /// The initial window in bytes (RFC 5681's IW): `cfg.initial_cwnd` segments, one after a
    /// SYN timeout; also the window of a slow-start restart (RFC 5681 §4.1, ns-2 `wnd_init_`).
    initial_window: u64,
    // Cold.
    cfg: TcpConfig,
    /// `snd_una` at the last retransmission timeout: a timeout again before an ACK passes it
    /// is a repeated one (Linux's `icsk_retransmits` > 0, [`Cc::holds_ssthresh_within_a_window`]).
    rto_una: Option<u64>,
    rate: RateEstimator,
    /// The last ACK's rate sample.
    last_rs: RateSample,
    /// Rate sampling only: the delivery-rate snapshot of each scoreboard entry's last
    /// transmission, in the scoreboard's order (kept beside it so that an entry is 32 bytes
    /// where rate sampling is off, as for Reno, CUBIC and Hybla).
    txs: VecDeque<TxRate>,
    /// RACK (tcp/rack.rs), only under a controller that keeps SACK information as Linux does
    /// (`Cc::keeps_sack_info`, BBR).
    rack: Option<Box<Rack>>,
    /// RACK's reordering timer: a retransmission sent before a delivered segment becomes lost
    /// then (RFC 8985 §6.2 step 5).
    rack_wait: Option<SimTime>,
    /// `Scoreboard::lost_marked` when the ACK being processed arrived: what the ACK marks lost
    /// is the difference (Linux `rs->losses`).
    ack_lost_mark: u32,
}

impl TcpSender {
    pub fn new(cfg: TcpConfig) -> Self {
        let mss = cfg.mss as u64;
        let win = Window { cwnd: cfg.initial_cwnd as u64 * mss, ssthresh: cfg.initial_ssthresh, mss };
        let rtt = RttEstimator::new(cfg.timer_granularity, cfg.initial_rto, cfg.min_rto, cfg.max_rto).with_ns2(cfg.ns2.tick_phase, cfg.ns2.rfc2988_rto).with_kind(cfg.rtt_estimator);
        let cc = Cc::new(cfg.cc).with_ns2_window(cfg.ns2.window_arith);
        TcpSender {
            rate_on: cfg.rate_samples || cc.uses_rate_samples(),
            // (Only where `rate_on`: BBR reads rate samples, and the hot paths test that flag
            // before reading these cold fields.)
            rack: (cc.keeps_sack_info() && cc.uses_rate_samples()).then(|| Box::new(Rack::with_tlp(cfg.tlp))),
            rack_wait: None,
            ack_lost_mark: 0,
            cc,
            rec: Recovery::new(cfg.recovery),
            phase: Phase::Closed,
            app_end: 1,
            closing: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            rwnd: cfg.rcv_window_field as u64,
            snd_wscale: 0,
            sack_ok: false,
            win,
            state: CongState::Open,
            dupacks: 0,
            recover: 0,
            after_timeout: false,
            rto_una: None,
            sb: Scoreboard::default(),
            rtt,
            timer: Timer::Idle,
            stats: SenderStats::default(),
            rate: RateEstimator::default(),
            last_rs: RateSample::default(),
            txs: VecDeque::new(),
            pacer: Pacer::default(),
            pace_wait: None,
            persist_backoff: 0,
            initial_window: win.cwnd,
            probe: None,
            write_blocked: false,
            writable: false,
            sws_avoidance: cfg.sws_avoidance,
            slow_start_restart: cfg.slow_start_restart,
            fin: cfg.fin,
            dupack_threshold: cfg.dupack_threshold,
            rcv_window_field: cfg.rcv_window_field,
            backoff_reset: cfg.backoff_reset,
            snd_buf: cfg.snd_buf,
            ns2: cfg.ns2.clone(),
            cfg,
        }
    }

    /// Opens the connection: emits the SYN with the window-scale and SACK-permitted options
    /// (RFC 7323 §2.2, RFC 2018 §2).
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.phase != Phase::Closed {
            return;
        }
        self.phase = Phase::SynSent;
        self.snd_nxt = 1;
        self.snd_max = 1;
        self.rtt.on_send(now, 1);
        self.send_syn(out);
        self.arm(now);
    }

    fn send_syn(&mut self, out: &mut Vec<Segment>) {
        out.push(Segment { seq: 0, flags: flags::SYN, window: self.rcv_window_field, wscale: Some(self.cfg.window_scale), sack_permitted: self.cfg.sack, ..Default::default() });
    }

    /// The application offers `bytes` more bytes (bulk: a huge number), whatever the send
    /// buffer holds (see the module docs; [`app_write`](Self::app_write) respects it).
    pub fn app_send(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        debug_assert!(!self.closing, "app_send after close");
        self.app_end = self.app_end.saturating_add(bytes);
        self.send(now, out);
    }

    /// A socket write into the send buffer: accepts at most [`send_space`](Self::send_space)
    /// bytes, sends what the windows allow, and returns the bytes accepted. A short write
    /// arms the [`take_writable`](Self::take_writable) notification.
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) -> u64 {
        debug_assert!(!self.closing, "app_write after close");
        let n = bytes.min(self.send_space());
        if n < bytes {
            self.write_blocked = true;
        }
        if n > 0 {
            self.app_end += n;
            self.send(now, out);
        }
        n
    }

    /// Free room in the send buffer: `snd_buf` minus the bytes written and not yet
    /// acknowledged (`u64::MAX` without a buffer limit).
    pub fn send_space(&self) -> u64 {
        match self.snd_buf {
            None => u64::MAX,
            Some(b) => b.saturating_sub(self.app_end.saturating_sub(self.snd_una.max(1))),
        }
    }

    /// True once after a short [`app_write`](Self::app_write) when acknowledgements have
    /// freed room in the send buffer (the socket's "writable" event); clears the flag.
    pub fn take_writable(&mut self) -> bool {
        std::mem::take(&mut self.writable)
    }

    /// The application has no more data: with `cfg.fin`, a FIN follows the last byte.
    pub fn close(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.fin && !self.closing {
            self.closing = true;
            self.send(now, out);
        }
    }

    /// A segment from the receiver: the SYN-ACK, or a pure ACK (with SACK blocks).
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment, out: &mut Vec<Segment>) {
        if !seg.has_ack() {
            return;
        }
        match self.phase {
            Phase::Closed => {}
            Phase::SynSent => {
                if seg.is_syn() && seg.ack == 1 {
                    self.established(now, seg);
                    self.send(now, out);
                }
            }
            Phase::Established => {
                if !seg.is_syn() {
                    self.on_ack(now, seg, out);
                }
            }
        }
    }

    fn established(&mut self, now: SimTime, seg: &Segment) {
        self.phase = Phase::Established;
        // RFC 7323 §2.2: scaling is in effect only if both SYNs carried the option.
        self.snd_wscale = seg.wscale.unwrap_or(0);
        // RFC 2018 §2: SACK only if both ends sent SACK-permitted.
        self.sack_ok = self.cfg.sack && seg.sack_permitted;
        // RFC 7323 §2.2: the window field of a SYN is never scaled.
        self.rwnd = seg.window as u64;
        self.snd_una = 1;
        self.rtt.on_ack(now, 1);
        self.timer = Timer::Idle;
    }

    fn on_ack(&mut self, now: SimTime, seg: &Segment, out: &mut Vec<Segment>) {
        self.stats.acks_received += 1;
        let ack = seg.ack;
        if ack > self.snd_max {
            return; // acknowledges data never sent (RFC 9293 §3.10.7.4): ignore
        }
        let prior_rwnd = self.rwnd;
        self.rwnd = (seg.window as u64) << self.snd_wscale;
        let rate_on = self.rate_on;
        if rate_on {
            self.rate.begin_ack(self.cc_in_flight());
        }
        // (RACK and `rs->losses` are read only where `rate_on`, a field of the first line: the
        // fields they keep are in the cold lines, which a Reno, CUBIC or Hybla flow's ACK would
        // otherwise read, one line more per ACK at 100,000 flows; bench/README.md.)
        if rate_on {
            self.ack_lost_mark = self.sb.lost_marked();
        }
        // RACK's min_RTT (RFC 8985 §6.2 step 2): the delivery-rate estimator's, or before any
        // data sample the handshake's (Linux's `tcp_min_rtt()` takes the SYN-ACK's RTT too).
        let mut rack = if rate_on { self.rack.as_deref_mut() } else { None };
        let min_rtt = if rack.is_some() { self.rate.min_rtt().or(self.rtt.srtt()) } else { None };
        let rate = &mut self.rate;
        let mut sack_news = false;
        // Linux's estimator (tcp/rtt.rs) samples SACKed segments too (`first_sackt`: the
        // oldest newly SACKed segment sent once).
        let linux_rtt = self.rtt.is_linux();
        let mut first_sackt: Option<SimTime> = None;
        let mut sacked = |e: &super::scoreboard::Entry| {
            if linux_rtt && e.tx_count == 0 {
                first_sackt = Some(first_sackt.map_or(e.last_sent, |t| t.min(e.last_sent)));
            }
        };
        if self.sack_ok && seg.n_sack > 0 {
            let newly = if rate_on {
                let txs = &mut self.txs;
                self.sb.sack_with(seg.sack_blocks(), |i, e| {
                    sacked(e);
                    if let Some(r) = rack.as_deref_mut() {
                        r.on_delivered(now, e.last_sent, e.end, e.tx_count > 0, min_rtt);
                    }
                    rate.on_delivered(now, e.end - e.start, e.last_sent, &mut txs[i], e.tx_count > 0)
                })
            } else if linux_rtt {
                self.sb.sack_with(seg.sack_blocks(), |_, e| sacked(e))
            } else {
                self.sb.sack(seg.sack_blocks())
            };
            sack_news = newly > 0;
        }
        if let Some(r) = rack.as_deref_mut().filter(|r| r.tlp.high_seq.is_some()) {
            // Linux `tcp_process_tlp_ack()` (a probe outstanding), before the recovery decides;
            // a loss the probe repaired: `tcp_init_cwnd_reduction()`'s ssthresh hook.
            let progress = ack > self.snd_una || seg.len > 0 || self.rwnd != prior_rwnd || sack_news;
            if r.tlp.on_ack(ack, progress) {
                self.cc.on_cwnd_reduction(&self.win);
            }
        }
        // tcp/ns2.rs `sack_dupack_needs_news` (ns-2 Sack1 `CheckUpdate()`); RFC 6675 §2.
        let counts = sack_news || !self.sack_ok || self.state == CongState::Recovery || !(self.ns2.sack_dupack_needs_news || self.rec.dupack_needs_sack_news());
        let mut o = Out { rtt_sample: true, ..Default::default() };
        let new_ack = ack > self.snd_una;
        if linux_rtt {
            // `tcp_ack_update_rtt()`: the cumulative ACK's sample, else the SACKs'.
            let seq_rtt = if new_ack { linux_seq_rtt(&self.sb, ack, now) } else { None };
            if let Some(m) = seq_rtt.or(first_sackt.map(|t| now - t)) {
                self.rtt.measure_linux(m, ack.max(self.snd_una), self.snd_max);
            }
        }
        if new_ack {
            if self.rtt.samples_every_ack() {
                ns3_rtt_sample(&mut self.rtt, &self.sb, self.snd_una, now, ack);
            }
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if rate_on {
                let txs = &mut self.txs;
                self.sb.ack_with(ack, |e| {
                    if let Some(r) = rack.as_deref_mut().filter(|_| !e.sacked) {
                        r.on_delivered(now, e.last_sent, e.end, e.tx_count > 0, min_rtt);
                    }
                    let mut tx = txs.pop_front().expect("a rate snapshot per scoreboard entry");
                    rate.on_delivered(now, e.end - e.start, e.last_sent, &mut tx, e.tx_count > 0)
                });
                self.last_rs = self.rate.end_ack(now);
            } else {
                self.sb.ack(ack);
            }
            self.rack_detect_lost(now);
            self.snd_nxt = self.snd_nxt.max(ack);
            if self.probe.is_some_and(|p| ack > p.get()) {
                self.probe = None;
            }
            if self.write_blocked && self.send_space() > 0 {
                self.write_blocked = false;
                self.writable = true;
            }
            o.grow = self.state != CongState::Recovery;
            let mut cx = cx!(self, now, acked);
            self.rec.on_new_ack(&mut cx, &mut o);
            if self.state == CongState::Recovery && !o.exit {
                self.stats.partial_acks += 1;
            }
            if !o.keep_dupacks {
                self.dupacks = 0;
            }
            if o.rtt_sample {
                self.rtt.on_ack(now, ack);
            } else {
                self.rtt.on_partial_ack(ack);
            }
            // tcp.rto_backoff_reset (config.rs `BackoffReset`): what else forgets the backoff.
            let reset = match self.backoff_reset {
                BackoffReset::Sample => false,
                // Linux 2.2 `tcp_ack_saw_tstamp`: `if (tp->packets_out == 0) { ... tp->backoff = 0;`
                BackoffReset::AllAcked => ack >= self.snd_max,
                // ns-3 `NewAck(ack, resetRTO)`: every new ACK that restarts the timer.
                BackoffReset::NewAck => o.timer != TimerAction::Keep,
            };
            if reset {
                self.rtt.clear_backoff();
            }
            if o.grow {
                let sample = AckSample { now, acked, srtt: self.rtt.srtt() };
                self.win.cwnd = self.cc.on_ack(&self.win, &sample);
            }
        } else if ack == self.snd_una && self.snd_una < self.snd_max && seg.len == 0 && counts && self.rwnd == prior_rwnd && self.probe.is_none() {
            // A duplicate ACK (RFC 5681 §2): no data, no new acknowledgement, data outstanding,
            // the same window (a window update is not a duplicate; nor is a probe's answer).
            self.end_rate_sample(now);
            self.rack_detect_lost(now);
            self.stats.dupacks_received += 1;
            self.dupacks += 1;
            let mut cx = cx!(self, now, 0);
            self.rec.on_dupack(&mut cx, &mut o);
        } else {
            self.end_rate_sample(now);
            self.rack_detect_lost(now);
            if rate_on && self.rack.is_some() {
                self.enter_recovery_on_lost(now, out);
            }
            if self.probe.is_some() {
                if self.rwnd == 0 {
                    // The window is still closed with the zero-window probe unacknowledged:
                    // the receiver refused it (BSD `tcp_output()` pulls `snd_nxt` back to
                    // the closed window): it is no longer in flight.
                    self.snd_nxt = self.snd_una;
                } else {
                    // The window opened: sending goes on in sequence, resending the probe
                    // only if it was refused. One in flight is not resent: this window was
                    // advertised before the probe arrived (a refusal would have come first),
                    // so the receiver takes it.
                    self.probe = None;
                }
            }
            self.send(now, out);
            return;
        }
        self.apply(now, new_ack, o, out);
    }

    /// RACK (tcp/rack.rs) after an ACK's deliveries or at its reordering timer: retransmissions
    /// sent before a delivered segment whose RTT + reo_wnd has passed are lost (RFC 8985 §6.2
    /// step 5). In fast recovery the recovery resends them as holes (its PIPE counts them
    /// out); in the loss state of a timeout they wait in front of the go-back-N.
    fn rack_detect_lost(&mut self, now: SimTime) {
        if !self.rate_on {
            return; // no RACK (a cold field: see `on_ack`)
        }
        let Some(rack) = self.rack.as_deref_mut() else { return };
        let Some(srtt) = self.rtt.srtt() else { return };
        let recovering = matches!(self.state, CongState::Recovery | CongState::Loss);
        let reo_wnd = rack.reo_wnd(recovering, self.rate.min_rtt().unwrap_or(srtt), srtt);
        let (bytes, mut wait) = rack.detect_lost_retransmissions(now, reo_wnd, &mut self.sb, self.state == CongState::Loss);
        if matches!(self.state, CongState::Open | CongState::Disorder) {
            // Outside recovery RACK judges the originals too (Linux `tcp_rack_detect_loss()`
            // walks every segment); reo_wnd is zero once the duplicate threshold's worth is
            // SACKed (`tcp_rack_reo_wnd()`).
            let dupthresh = self.sb.sacked_bytes() >= self.dupack_threshold as u64 * self.win.mss;
            let reo = rack.reo_wnd_at(false, dupthresh, self.rate.min_rtt().unwrap_or(srtt), srtt);
            let (_, w) = rack.detect_lost_originals(now, reo, &mut self.sb);
            wait = earliest(wait, w);
        }
        self.rack_wait = wait;
        if bytes > 0 && self.state == CongState::Recovery {
            self.rec.on_retransmission_lost(bytes, self.win.mss);
        }
    }

    fn end_rate_sample(&mut self, now: SimTime) {
        if self.rate_on {
            self.last_rs = self.rate.end_ack(now);
        }
    }

    /// The rate snapshot of a segment sent now (kept in its scoreboard entry).
    #[inline]
    fn rate_snapshot(&mut self, now: SimTime) -> Option<TxRate> {
        self.rate_on.then(|| self.rate.on_send(now, self.snd_max - self.snd_una))
    }

    /// Bytes in flight: sent, not cumulatively acknowledged, not SACKed.
    fn in_flight(&self) -> u64 {
        self.snd_max - self.snd_una - self.sb.sacked_bytes()
    }

    /// Bytes in flight as a rate-based controller sees them, the count its cwnd is compared
    /// with (Linux `tcp_packets_in_flight()`: not acknowledged, not SACKed, not presumed lost,
    /// retransmissions included): in fast recovery the SACK recovery's own PIPE (under BBR,
    /// which keeps the SACK table as Linux does, the scoreboard's count of exactly that:
    /// `Scoreboard::in_flight_linux`), after a timeout what was resent since (go-back-N
    /// presumes the rest lost), otherwise [`in_flight`](Self::in_flight). Counting the holes
    /// as in flight (issue 14) kept BBR's PROBE_RTT waiting for a flight of 4 segments that a
    /// timeout had left thousands of segments long, and made its packet conservation send far
    /// more than was delivered.
    fn cc_in_flight(&self) -> u64 {
        match self.state {
            CongState::Recovery if self.cc.keeps_sack_info() => self.sb.in_flight_linux(),
            CongState::Recovery => self.rec.pipe_bytes(self.win.mss).unwrap_or_else(|| self.in_flight()),
            CongState::Loss => (self.snd_nxt - self.snd_una).saturating_sub(self.sb.sacked_bytes() + self.rack.as_ref().map_or(0, |r| r.resend_bytes(&self.sb))),
            _ => self.in_flight(),
        }
    }

    /// Applies a recovery's decisions, moves the congestion state, then sends.
    fn apply(&mut self, now: SimTime, new_ack: bool, o: Out, out: &mut Vec<Segment>) {
        if o.enter {
            self.enter_recovery();
        }
        if o.exit {
            self.state = CongState::Open;
            self.recovery_exit(CongState::Recovery);
        }
        self.apply_rest(now, new_ack, o, out);
    }

    /// Under RACK (BBR), outside recovery, where no ACK's recovery decision is taken (RACK's
    /// reordering timer; an ACK that is neither new nor a duplicate, e.g. one whose SACK
    /// blocks come with a window update, which Linux's `tcp_ack_is_dubious()` still sends to
    /// `tcp_fastretrans_alert()`): fast recovery starts if a segment is marked lost.
    fn enter_recovery_on_lost(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if !matches!(self.state, CongState::Open | CongState::Disorder) || self.sb.lost_out() == 0 {
            return;
        }
        let mut o = Out::default();
        let mut cx = cx!(self, now, 0);
        self.rec.enter_on_lost(&mut cx, &mut o);
        if o.enter {
            self.enter_recovery();
            if let Some(seq) = o.retransmit {
                self.retransmit(now, seq, out);
            }
            self.arm(now);
        }
    }

    /// Fast recovery starts (a fast retransmit).
    fn enter_recovery(&mut self) {
        // seed 001 §2.1: RECOVER = the highest sequence number sent.
        self.state = CongState::Recovery;
        self.recover = self.snd_max;
        self.after_timeout = false;
        self.stats.fast_retransmits += 1;
        // Karn's rule; ns-2 `reset_rtx_timer(1, 0)` stops timing.
        self.rtt.on_retransmit();
        if let Some(r) = if self.rate_on { self.rack.as_deref_mut() } else { None } {
            // Linux `tcp_enter_recovery()` -> `tcp_init_cwnd_reduction()`: the probe
            // episode ends (`tlp_high_seq = 0`). (Read only where `rate_on`: a cold field.)
            r.tlp.high_seq = None;
        }
    }

    /// [`apply`](Self::apply) after the recovery's entry and exit.
    fn apply_rest(&mut self, now: SimTime, new_ack: bool, o: Out, out: &mut Vec<Segment>) {
        if o.go_back_n {
            // Tahoe's fast retransmit (recovery/tahoe.rs): slow start from snd_una.
            self.state = CongState::Loss;
            self.recover = self.snd_max;
            self.after_timeout = true;
            self.stats.fast_retransmits += 1;
            self.rtt.on_retransmit();
            self.sb.clear_retransmitted();
            self.snd_nxt = self.snd_una;
        }
        match self.state {
            CongState::Loss if self.snd_una >= self.recover => {
                self.state = CongState::Open;
                self.recovery_exit(CongState::Loss);
            }
            CongState::Open if self.dupacks > 0 => self.state = CongState::Disorder,
            CongState::Disorder if self.dupacks == 0 => self.state = CongState::Open,
            _ => {}
        }
        if self.rate_on {
            // Every ACK: the controller's view with the rate sample; it may set cwnd and
            // pacing. (Only controllers that use rate samples decide anything here.)
            // Linux `rs->losses`: what this ACK marked lost, the recovery's marks included.
            self.last_rs.losses = self.sb.lost_marked().wrapping_sub(self.ack_lost_mark) as u64;
            let ev = RateEvent { now, rs: self.last_rs, delivered: self.rate.delivered(), in_flight: self.cc_in_flight(), state: self.state, srtt: self.rtt.srtt() };
            let ctl = self.cc.on_rate_sample(&self.win, &ev);
            if let Some(c) = ctl.cwnd {
                self.win.cwnd = c;
            }
            if ctl.pacing_rate.is_some() {
                self.pacer.set_rate(ctl.pacing_rate);
            }
            if let Some(t) = ctl.ssthresh {
                self.win.ssthresh = t;
            }
        }
        if let Some(seq) = o.retransmit {
            if self.sb.get(seq).is_some() {
                self.retransmit(now, seq, out);
            }
        }
        for _ in 0..o.force_new {
            if !self.send_next_forced(now, out) {
                break;
            }
        }
        match o.timer {
            TimerAction::Restart => self.arm(now),
            TimerAction::Keep => {}
            // ns-2 `newtimer()` / RFC 6298 (5.2)-(5.3): restart on new data acknowledged,
            // stop when nothing is outstanding.
            TimerAction::Default if new_ack => self.rearm_or_stop(now),
            TimerAction::Default => {}
        }
        if self.snd_una >= self.snd_max && !self.idle_timer() {
            self.timer = Timer::Idle;
        }
        if new_ack && self.rate_on {
            // Linux `tcp_set_xmit_timer()` on an ACK that acknowledges data
            // (`FLAG_SET_XMIT_TIMER`): the probe timer, a whole RTO at most, in the place of the
            // retransmission timer just restarted; where no probe is due, that timer stays.
            self.schedule_loss_probe(now, true);
        }
        self.send(now, out);
    }

    /// The congestion state `from` (`Recovery` or `Loss`) has just ended.
    fn recovery_exit(&mut self, from: CongState) {
        if let Some(r) = self.cc.on_recovery_exit(&self.win, from) {
            (self.win.ssthresh, self.win.cwnd) = (r.ssthresh, r.cwnd);
        }
    }

    /// True when the timer keeps running with nothing outstanding, to detect an idle period
    /// (ns-2 `newtimer()` re-arms on the ACK of the last packet; slow_start_restart_).
    fn idle_timer(&self) -> bool {
        self.slow_start_restart && self.phase == Phase::Established && !self.closing
    }

    /// The engine's call at or after [`poll_at`](Self::poll_at).
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        match self.timer {
            Timer::Retransmit { expires_at } if now >= expires_at => self.on_rto(now, out),
            Timer::Persist { expires_at } if now >= expires_at => self.on_persist(now, out),
            Timer::LossProbe { expires_at } if now >= expires_at => self.on_loss_probe(now, out),
            _ => {}
        }
        if self.rate_on && self.rack_wait.is_some_and(|t| t <= now) {
            self.rack_wait = None;
            self.rack_detect_lost(now);
            // Linux `tcp_rack_reo_timeout()`: losses found outside recovery start it.
            self.enter_recovery_on_lost(now, out);
            self.send(now, out);
        }
        if self.pace_wait.is_some_and(|t| t <= now) {
            self.send(now, out);
        }
    }

    /// The persist timer fired: send a window probe and back off (module docs).
    fn on_persist(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.timer = Timer::Idle;
        self.stats.window_probes += 1;
        let new_data = self.snd_una == self.snd_max && self.snd_max < self.app_end;
        if self.probe.is_none() && new_data && self.rwnd > 0 {
            // A window smaller than the next segment: what it takes goes as an ordinary
            // segment (Linux `tcp_write_wakeup()`), timed and under the retransmission timer
            // that sending armed, and the closed-window episode ends (Linux
            // `tcp_send_probe0()` clears the backoff once packets are out). A later window
            // update does not resend it: it is in flight within the window.
            let len = (self.app_end - self.snd_max).min(self.win.mss).min(self.rwnd);
            self.send_new_len(now, len, out);
            self.persist_backoff = 0;
            return;
        }
        if let Some(p) = self.probe.map(NonZeroU64::get) {
            self.retransmit(now, p, out);
            self.snd_nxt = self.snd_nxt.max(p + 1);
        } else if new_data {
            // A zero window. RFC 9293 §3.8.6.1: at least one octet of new data, beyond the
            // window, which the receiver refuses while its window stays closed.
            let start = self.snd_max;
            self.sb.push(start, start + 1, false, now);
            if let Some(tx) = self.rate_snapshot(now) {
                self.txs.push_back(tx);
            }
            self.emit(now, start, 1, false, 0, out);
            self.snd_max = start + 1;
            self.snd_nxt = self.snd_max;
            self.probe = NonZeroU64::new(start);
        }
        self.persist_backoff = (self.persist_backoff + 1).min(MAX_PERSIST_BACKOFF);
        self.timer = Timer::Persist { expires_at: now + self.persist_interval() };
    }

    /// The persist interval: the RTO doubled per expiry, at most `max_rto` (Linux
    /// `tcp_probe0_when()`).
    fn persist_interval(&self) -> SimTime {
        self.rtt.rto().times(1 << self.persist_backoff).min(self.cfg.max_rto.max(self.rtt.rto()))
    }

    /// True when the peer's window cannot take the next segment while nothing (or only a
    /// probe) is outstanding: the persist timer's condition.
    fn window_blocked(&self) -> bool {
        if self.snd_max >= self.app_end || !(self.snd_una == self.snd_max || self.probe.is_some()) {
            return false;
        }
        let len = (self.app_end - self.snd_max).min(self.win.mss);
        self.snd_max + len - self.snd_una > self.rwnd
    }

    /// Starts or stops the persist timer after sending (module docs).
    fn update_persist(&mut self, now: SimTime) {
        let blocked = self.window_blocked();
        if !blocked {
            // The window takes the next segment: the episode's backoff ends (Linux
            // `tcp_ack_probe()` clears `icsk_backoff`), also when sending has already put the
            // retransmission timer in the persist timer's place.
            self.persist_backoff = 0;
        }
        match self.timer {
            Timer::Persist { .. } if !blocked => self.rearm_or_stop(now),
            Timer::Persist { .. } => {}
            _ if blocked => self.timer = Timer::Persist { expires_at: now + self.persist_interval() },
            _ => {}
        }
    }

    /// The retransmission timer fired.
    fn on_rto(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.timer = Timer::Idle;
        if self.phase == Phase::Established && self.snd_una >= self.snd_max {
            // Nothing outstanding for an RTO (ns-2 `timeout()` with restart_bugfix_): with
            // slow_start_restart_, cwnd = wnd_init_ (`closecwnd(3)`), ssthresh kept, no backoff;
            // recover_ = maxseq_ as after any timeout. The timer then stays idle: a further
            // expiry would change nothing.
            if self.slow_start_restart {
                self.win.cwnd = self.cc.on_idle_restart(&self.win, self.initial_window);
                self.recover = self.snd_max;
                self.after_timeout = true;
                self.stats.idle_restarts += 1;
            }
            return;
        }
        self.stats.timeouts += 1;
        self.rtt.on_timeout(self.snd_max);
        if self.phase == Phase::SynSent {
            // The SYN or the SYN-ACK was lost: the window after the handshake is one segment.
            self.initial_window = SYN_LOSS_INITIAL_WINDOW_SEGMENTS * self.win.mss;
            self.win.cwnd = self.initial_window;
            if self.ns2.syn_timeout_ssthresh {
                // ns-2 `timeout()` takes the SYN for a lost packet 0, sent in a window of one:
                // ssthresh_ = max(int(1/2), 2) (tcp/ns2.rs).
                self.win.ssthresh = super::cc::reno::MIN_SSTHRESH_SEGMENTS * self.win.mss;
            }
            self.send_syn(out);
            self.arm(now);
            return;
        }
        if self.snd_una >= self.snd_max {
            return; // nothing outstanding (ns-2: "if no outstanding data, don't do anything")
        }
        // Linux's tcp_enter_loss: "Reduce ssthresh if it has not yet been made inside this
        // window": not during fast recovery, nor on a timeout again with nothing acknowledged
        // since the last (RFC 5681 §3.1's note), where `recover` is still ahead.
        let reduced_in_this_window = self.snd_una < self.recover
            && match self.state {
                CongState::Recovery => true,
                CongState::Loss => self.rto_una == Some(self.snd_una),
                CongState::Open | CongState::Disorder => false,
            };
        let hold = reduced_in_this_window && self.cc.holds_ssthresh_within_a_window();
        self.rto_una = Some(self.snd_una);
        let mut cx = cx!(self, now, 0);
        let basis = self.rec.on_timeout(&mut cx);
        let r = self.cc.on_timeout(&self.win, basis, !hold);
        let mss = self.win.mss;
        if !hold {
            // ns-2 counts ssthresh in whole segments (`ssthresh_ = int(window() / 2)`).
            self.win.ssthresh = (r.ssthresh / mss).max(super::cc::reno::MIN_SSTHRESH_SEGMENTS) * mss;
        }
        self.win.cwnd = r.cwnd;
        self.state = CongState::Loss;
        // ns-2 `timeout()`: recover_ = maxseq_; RFC 6582 §3.2 step 1 likewise.
        self.recover = self.snd_max;
        self.after_timeout = true;
        self.dupacks = 0;
        self.sb.clear_retransmitted();
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_timeout(now);
            self.rack_wait = None;
        }
        // Go back N (ns-2 `reset_rtx_timer(0, 1)`: t_seqno_ = highest_ack_ + 1).
        self.snd_nxt = self.snd_una;
        self.arm(now);
        self.send(now, out);
    }

    /// Linux `tcp_schedule_loss_probe()` (RFC 8985 §7.2): with segments out, SACK on and the
    /// open state, the probe timer replaces the retransmission timer: PTO = 2 SRTT + 2 ms
    /// (`TCP_TIMEOUT_MIN`), 2 SRTT + `min_rto` with one segment out (a delayed ACK), 1 s before
    /// any RTT sample; never later than the RTO would fire: a whole RTO on an ACK that
    /// advances (`advancing`), else what is left of the RTO since the first unacknowledged
    /// segment was sent (`tcp_rto_delta_us()`; none if that time has passed). Returns whether
    /// it was scheduled. Senders without RACK, or with `tcp.tlp` off, never schedule one.
    fn schedule_loss_probe(&mut self, now: SimTime, advancing: bool) -> bool {
        if !self.rack.as_deref().is_some_and(|r| r.tlp.on) || self.snd_una >= self.snd_max || !self.sack_ok || self.state != CongState::Open {
            return false;
        }
        let mut pto = match self.rtt.srtt() {
            Some(srtt) => srtt.times(2) + if self.sb.len() == 1 { self.cfg.min_rto } else { TLP_TIMEOUT_MIN },
            None => TLP_TIMEOUT_INIT,
        };
        let rto = if advancing { Some(self.rtt.rto()) } else { self.rto_delta(now) };
        if let Some(rto) = rto {
            pto = pto.min(rto);
        }
        self.timer = Timer::LossProbe { expires_at: now + pto };
        true
    }

    /// Linux `tcp_rto_delta_us()`: how long until the RTO measured from the first
    /// unacknowledged segment's last transmission; `None` if that time has come.
    fn rto_delta(&self, now: SimTime) -> Option<SimTime> {
        let due = self.sb.first()?.last_sent + self.rtt.rto();
        (due > now).then(|| due - now)
    }

    /// Linux `tcp_rearm_rto()` in the probe timer's place: the retransmission timer for what
    /// is left of the RTO since the first unacknowledged segment was sent, at least 1 µs.
    fn rearm_rto_after_probe_timer(&mut self, now: SimTime) {
        if self.snd_una >= self.snd_max {
            self.timer = Timer::Idle;
            return;
        }
        let delta = self.rto_delta(now).unwrap_or(SimTime::ZERO).max(SimTime::from_micros(1));
        self.timer = Timer::Retransmit { expires_at: now + delta };
    }

    /// The probe timer fired: Linux `tcp_send_loss_probe()` (RFC 8985 §7.3). At most one probe
    /// outstanding (`tlp_high_seq`): else the retransmission timer for what is left of the
    /// RTO. The probe is one new segment if the peer's window (and the send buffer) takes it,
    /// whatever cwnd says (`tcp_write_xmit(..., push_one = 2)`, held back only by the pacer),
    /// else the last segment sent again (`tlp_retrans`); then `tlp_high_seq = snd_nxt`, the
    /// probe is counted, and the retransmission timer restarts for a whole RTO.
    fn on_loss_probe(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.timer = Timer::Idle;
        let Some(rack) = self.rack.as_deref_mut() else { return };
        if rack.tlp.high_seq.is_some() || self.snd_una >= self.snd_max {
            self.rearm_rto_after_probe_timer(now);
            return;
        }
        rack.tlp.retrans = false;
        let peer = self.snd_buf.map_or(self.rwnd, |b| self.rwnd.min(b));
        let len = self.app_end.saturating_sub(self.snd_max).min(self.win.mss);
        if len > 0 && self.snd_max + len - self.snd_una <= peer {
            // `tcp_send_head()` within the send window (`tcp_snd_wnd_test()`).
            if self.paced(now) {
                // `tcp_write_xmit()` stops at the pacer: nothing sent, no probe.
                self.rearm_rto_after_probe_timer(now);
                return;
            }
            self.send_new_len(now, len, out);
        } else {
            // The last segment sent (`skb_rb_last(&sk->tcp_rtx_queue)`). One already SACKed is
            // not resent (a deviation; module docs).
            let Some(last) = self.sb.last().filter(|e| !e.sacked).map(|e| e.start) else {
                self.rearm_rto_after_probe_timer(now);
                return;
            };
            self.retransmit(now, last, out);
            if let Some(r) = self.rack.as_deref_mut() {
                r.tlp.retrans = true;
            }
        }
        let tlp = &mut self.rack.as_deref_mut().expect("checked above").tlp;
        tlp.high_seq = Some(self.snd_max);
        tlp.probes += 1;
        self.arm(now);
    }

    /// Sends what the window (or the recovery's PIPE) allows.
    fn send(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.phase != Phase::Established {
            return;
        }
        self.pace_wait = None;
        let snd_max = self.snd_max;
        let mut burst = 0;
        loop {
            match self.rec.gate(self.state, self.dupacks) {
                Gate::Closed => break,
                Gate::Pipe => {
                    if self.paced(now) {
                        break;
                    }
                    let cx = cx!(self, now, 0);
                    match self.rec.pick(&cx) {
                        None => break,
                        Some(Pick::Hole(seq)) => {
                            let len = self.retransmit(now, seq, out);
                            self.rec.on_pipe_sent(len);
                        }
                        Some(Pick::New) => {
                            if !self.send_new(now, out) {
                                break;
                            }
                            self.rec.on_pipe_sent(self.win.mss);
                        }
                    }
                }
                Gate::Window { extra } => {
                    if !self.send_in_window(now, extra, out) {
                        break;
                    }
                }
                Gate::Burst { extra, max } => {
                    if burst >= max || !self.send_in_window(now, extra, out) {
                        break;
                    }
                    burst += 1;
                }
            }
        }
        if self.rate_on {
            if self.snd_max >= self.app_end && self.snd_nxt >= self.snd_max {
                // Nothing left to send (tcp_rate_check_app_limited): rate samples of what is
                // sent from now on are application-limited if the window is not the limit.
                let in_flight = self.in_flight();
                if in_flight < self.win.cwnd {
                    self.rate.on_app_limited(in_flight);
                }
            }
            if self.snd_max > snd_max {
                // Linux `tcp_write_xmit()` after sending new data: "Send one loss probe per
                // tail loss episode" (`tcp_schedule_loss_probe(sk, false)`).
                self.schedule_loss_probe(now, false);
            }
        }
        self.update_persist(now);
    }

    /// The usable window: min(cwnd + inflation, peer's window, send buffer).
    fn window(&self, extra: u64) -> u64 {
        let w = (self.win.cwnd + extra).min(self.rwnd);
        self.snd_buf.map_or(w, |b| w.min(b))
    }

    /// Sends one segment from `snd_nxt` if the window allows. Returns whether it sent.
    fn send_in_window(&mut self, now: SimTime, extra: u64, out: &mut Vec<Segment>) -> bool {
        let wnd = self.window(extra);
        let resend = if self.state == CongState::Loss { self.rack.as_deref_mut().and_then(|r| r.next_resend(&self.sb)).copied() } else { None };
        if let Some(e) = resend {
            // A retransmission RACK found lost behind the go-back-N (`rack_detect_lost`):
            // first, within the window (Linux resends what is marked lost in sequence).
            if self.cc_in_flight() + e.len() > wnd || self.paced(now) {
                return false;
            }
            self.retransmit(now, e.start, out);
            return true;
        }
        if self.snd_nxt < self.snd_max {
            // Going back N after a timeout: resend the scoreboard's segment at snd_nxt.
            let Some(e) = self.sb.get(self.snd_nxt).copied() else {
                self.snd_nxt = self.snd_max;
                return true;
            };
            if e.sacked && (self.rec.skips_sacked_after_timeout() || self.cc.keeps_sack_info()) {
                self.snd_nxt = e.end;
                return true;
            }
            match self.timeout_resend(&e, now) {
                Resend::Now => {}
                Resend::At(t) => {
                    self.pace_wait = Some(t); // wait for its ACK or RACK's time
                    return false;
                }
                Resend::OnAck => return false,
            }
            // Under a controller that keeps SACK information (BBR) the window limits the bytes
            // in flight, SACKed data not counted (Linux compares cwnd with
            // `tcp_packets_in_flight()`); otherwise the span from snd_una, as ns-2.
            let need = if self.cc.keeps_sack_info() { self.cc_in_flight() + e.len() } else { e.end - self.snd_una };
            if need > wnd && !e.fin || self.paced(now) {
                return false;
            }
            self.retransmit(now, e.start, out);
            self.snd_nxt = e.end;
            return true;
        }
        if self.snd_max < self.app_end {
            let len = (self.app_end - self.snd_max).min(self.win.mss);
            if self.snd_max + len - self.snd_una > wnd {
                return false;
            }
            // Sender SWS avoidance (RFC 1122 4.2.3.4, off in the seeds): hold back a short
            // segment while data is unacknowledged.
            if self.sws_avoidance && len < self.win.mss && self.snd_una < self.snd_max || self.paced(now) {
                return false;
            }
            return self.send_new(now, out);
        }
        if self.closing && self.snd_max <= self.app_end && self.paced(now) {
            return false;
        }
        self.send_fin(now, out)
    }

    /// When the go-back-N after a timeout may resend `e`: at once, except under RACK (BBR,
    /// `Cc::keeps_sack_info`, Linux's recovery), where a segment other than the first that the
    /// timeout did not find lost waits until RACK does (RFC 8985 §6.3 and §6.2 step 5,
    /// `Rack::timeout_resend`; the reordering window of the loss state, §6.2 step 4).
    fn timeout_resend(&self, e: &super::scoreboard::Entry, now: SimTime) -> Resend {
        let (Some(rack), Some(srtt)) = (self.rack.as_deref(), self.rtt.srtt()) else { return Resend::Now };
        if e.start <= self.snd_una {
            return Resend::Now;
        }
        rack.timeout_resend(e.last_sent, now, rack.reo_wnd(true, self.rate.min_rtt().unwrap_or(srtt), srtt))
    }

    /// True if the pacer holds the next segment back; then `poll_at` reports its release.
    #[inline]
    fn paced(&mut self, now: SimTime) -> bool {
        match self.pacer.release_at(now) {
            Some(t) => {
                self.pace_wait = Some(t);
                true
            }
            None => false,
        }
    }

    /// Sends the next segment in sequence whatever cwnd says (ns-2 `output(t_seqno_++)`):
    /// the segment at `snd_nxt` when going back N after a timeout, else new data.
    fn send_next_forced(&mut self, now: SimTime, out: &mut Vec<Segment>) -> bool {
        if self.snd_nxt < self.snd_max {
            let Some(e) = self.sb.get(self.snd_nxt).copied() else { return false };
            self.retransmit(now, e.start, out);
            self.snd_nxt = e.end;
            return true;
        }
        self.send_new(now, out)
    }

    /// Sends the next new segment at `snd_max` (window already checked, or forced).
    fn send_new(&mut self, now: SimTime, out: &mut Vec<Segment>) -> bool {
        if self.snd_max >= self.app_end {
            return self.send_fin(now, out);
        }
        let len = (self.app_end - self.snd_max).min(self.win.mss);
        if self.snd_max + len - self.snd_una > self.rwnd {
            return false;
        }
        self.send_new_len(now, len, out);
        true
    }

    /// Sends `len` bytes of new data at `snd_max` (at most what is left to send), timed.
    fn send_new_len(&mut self, now: SimTime, len: u64, out: &mut Vec<Segment>) {
        let start = self.snd_max;
        let end = start + len;
        self.sb.push(start, end, false, now);
        if let Some(tx) = self.rate_snapshot(now) {
            self.txs.push_back(tx);
        }
        self.rtt.on_send(now, end);
        self.emit(now, start, len as u32, false, 0, out);
        if self.snd_nxt == self.snd_max {
            self.snd_nxt = end;
        }
        self.snd_max = end;
    }

    fn send_fin(&mut self, now: SimTime, out: &mut Vec<Segment>) -> bool {
        if !self.closing || self.snd_max > self.app_end {
            return false;
        }
        let seq = self.app_end;
        self.sb.push(seq, seq + 1, true, now);
        if let Some(tx) = self.rate_snapshot(now) {
            self.txs.push_back(tx);
        }
        self.emit(now, seq, 0, true, 0, out);
        if self.snd_nxt == self.snd_max {
            self.snd_nxt = seq + 1;
        }
        self.snd_max = seq + 1;
        true
    }

    /// Retransmits the scoreboard entry starting at `seq`. Returns its length.
    fn retransmit(&mut self, now: SimTime, seq: u64, out: &mut Vec<Segment>) -> u64 {
        let e = self.sb.on_retransmit(seq, now);
        if let Some(r) = if self.rate_on { self.rack.as_deref_mut() } else { None } {
            r.on_retransmit(now, seq);
        }
        if let Some(tx) = self.rate_snapshot(now) {
            if let Some(i) = self.sb.index_of(seq) {
                self.txs[i] = tx;
            }
        }
        self.rtt.on_resend(e.end);
        if seq == self.snd_una && self.state == CongState::Recovery && self.cc.keeps_sack_info() {
            // Linux `tcp_xmit_retransmit_queue()`: resending the head restarts the
            // retransmission timer (`rearm_timer`), so a head whose retransmission was lost
            // and found by RACK gets a whole RTO again (BBR: Linux's loss handling).
            self.arm(now);
        }
        let len = if e.fin { 0 } else { e.len() };
        self.stats.segments_retransmitted += 1;
        self.stats.bytes_retransmitted += len;
        self.emit(now, e.start, len as u32, e.fin, e.tx_count, out);
        e.len()
    }

    #[inline(always)]
    fn emit(&mut self, now: SimTime, seq: u64, len: u32, fin: bool, tx_count: u16, out: &mut Vec<Segment>) {
        // ns-2 `output()`: arm the timer if none is pending or nothing was outstanding (a
        // pending persist timer gives way; a probe re-arms it after).
        if !matches!(self.timer, Timer::Retransmit { .. }) || self.snd_una == self.snd_max {
            self.arm(now);
        }
        self.pacer.on_send(now, len as u64);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        let f = if fin { flags::ACK | flags::FIN } else { flags::ACK };
        out.push(Segment { seq, ack: 1, len, flags: f, window: self.rcv_window_field, tx_count, ..Default::default() });
    }

    fn rearm_or_stop(&mut self, now: SimTime) {
        if self.snd_una < self.snd_max || self.idle_timer() {
            self.arm(now);
        } else {
            self.timer = Timer::Idle;
        }
    }

    fn arm(&mut self, now: SimTime) {
        self.timer = Timer::Retransmit { expires_at: now + self.rtt.rto() };
    }

    /// The next deadline (the retransmission or persist timer, or a pacing release), `None`
    /// if idle.
    pub fn poll_at(&self) -> Option<SimTime> {
        let timer = match self.timer {
            Timer::Idle => None,
            Timer::Retransmit { expires_at } | Timer::Persist { expires_at } | Timer::LossProbe { expires_at } => Some(expires_at),
        };
        earliest(timer, earliest(self.pace_wait, if self.rate_on { self.rack_wait } else { None }))
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// Tail loss probes sent (Linux `LINUX_MIB_TCPLOSSPROBES`; BBR only: docs/tcp.md, "Tail
    /// loss probe (BBR)"). Kept in the cold RACK box (`Rack::tlp`), not in [`SenderStats`],
    /// so that the sender's lines do not grow.
    pub fn loss_probes(&self) -> u64 {
        self.rack.as_deref().map_or(0, |r| r.tlp.probes)
    }
    /// Probes that repaired a loss: a probe resending the last segment, then an ACK beyond
    /// the probe's `snd_nxt` without a duplicate ACK first (Linux
    /// `LINUX_MIB_TCPLOSSPROBERECOVERY`).
    pub fn loss_probe_recoveries(&self) -> u64 {
        self.rack.as_deref().map_or(0, |r| r.tlp.recoveries)
    }
    /// The persist timer is running (the peer's window is closed to the next segment).
    pub fn in_persist(&self) -> bool {
        matches!(self.timer, Timer::Persist { .. })
    }
    /// The last ACK's delivery-rate sample (tcp/rate.rs); a default (invalid) sample unless
    /// rate sampling is on.
    pub fn rate_sample(&self) -> &RateSample {
        &self.last_rs
    }
    /// Bytes delivered to the peer so far, cumulatively ACKed or SACKed (`C.delivered`; 0
    /// unless rate sampling is on).
    pub fn delivered(&self) -> u64 {
        self.rate.delivered()
    }
    /// The pacing rate in bytes per second, if the controller set one.
    pub fn pacing_rate(&self) -> Option<u64> {
        self.pacer.rate()
    }
    /// Sets the pacing rate (bytes per second; `None`: no pacing). Controllers set it
    /// through [`Control`](super::cc::Control); this is for tests and experiments.
    pub fn set_pacing_rate(&mut self, rate: Option<u64>) {
        self.pacer.set_rate(rate);
    }
    /// The congestion window in bytes, without fast-recovery inflation (ns-2's traced
    /// `cwnd_`); see [`effective_window`](Self::effective_window).
    pub fn cwnd(&self) -> u64 {
        self.win.cwnd
    }
    /// cwnd plus Reno/ns-2 NewReno inflation (`dupwnd_`), limited by the peer's window.
    pub fn effective_window(&self) -> u64 {
        self.window(self.rec.inflation())
    }
    pub fn ssthresh(&self) -> u64 {
        self.win.ssthresh
    }
    pub fn srtt(&self) -> Option<SimTime> {
        self.rtt.srtt()
    }
    /// The retransmission timeout that the next arming would use.
    pub fn rto(&self) -> SimTime {
        self.rtt.rto()
    }
    pub fn state(&self) -> CongState {
        self.state
    }
    /// RECOVER: `snd_max` at the last fast retransmit or timeout.
    pub fn recover(&self) -> u64 {
        self.recover
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// The handshake has completed.
    pub fn is_established(&self) -> bool {
        self.phase == Phase::Established
    }
    /// SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    /// The peer's receive window in bytes (its field shifted by the negotiated scale).
    pub fn peer_window(&self) -> u64 {
        self.rwnd
    }
    /// PIPE of the seed's SACK recovery in segments (`None` for other recoveries).
    pub fn pipe(&self) -> Option<i64> {
        match &self.rec {
            Recovery::SackFallFloyd(r) => Some(r.pipe),
            _ => None,
        }
    }
    /// Data bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.app_end - 1)
    }
    /// True when every byte offered so far (and the FIN, if sent) has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.phase == Phase::Established && self.snd_una >= self.app_end && self.snd_una >= self.snd_max
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::SackBlock;
    use super::super::config::{RecoveryKind, RttEstimatorKind};

    const MSS: u64 = 1000;
    const T0: SimTime = SimTime::ZERO;

    fn cfg() -> TcpConfig {
        TcpConfig { mss: MSS as u32, window_scale: 6, sack: true, initial_cwnd: 2, initial_ssthresh: 64 * MSS, ..Default::default() }
    }

    /// The SYN-ACK a receiver with scale 6 and SACK would send.
    const SYN_ACK: Segment = Segment { seq: 0, ack: 1, len: 0, flags: flags::SYN | flags::ACK, window: 65535, wscale: Some(6), sack_permitted: true, n_sack: 0, sack: [SackBlock { start: 0, end: 0 }; 3], tx_count: 0 };

    fn ack(n: u64) -> Segment {
        Segment { seq: 1, ack: n, flags: flags::ACK, window: 65535, ..Default::default() }
    }

    /// Acknowledges everything sent, one round trip (100 ms) at a time, until all is acked;
    /// returns the time of the last ACK.
    #[track_caller]
    fn ack_everything(s: &mut TcpSender, mut t: SimTime) -> SimTime {
        let mut out = Vec::new();
        while !s.all_acked() {
            t += SimTime::from_millis(100);
            s.on_segment(t, &ack(s.snd_max()), &mut out);
            assert!(t < SimTime::from_secs(60), "never fully acknowledged");
        }
        t
    }

    /// A sender after the handshake (SYN-ACK at 100 ms) with `bytes` offered; returns it and
    /// the data segments it sent.
    fn established(cfg: TcpConfig, bytes: u64) -> (TcpSender, Vec<Segment>) {
        let mut s = TcpSender::new(cfg);
        let mut out = Vec::new();
        s.connect(T0, &mut out);
        s.app_send(T0, bytes, &mut out);
        assert_eq!(out.len(), 1, "only the SYN before the handshake");
        out.clear();
        s.on_segment(SimTime::from_millis(100), &SYN_ACK, &mut out);
        (s, out)
    }

    #[track_caller]
    fn seqs(out: &[Segment]) -> Vec<(u64, u32, u16)> {
        out.iter().map(|s| (s.seq, s.len, s.tx_count)).collect()
    }

    #[test]
    fn syn_carries_options_and_scale_applies_after_the_handshake() {
        let mut s = TcpSender::new(cfg());
        let mut out = Vec::new();
        s.connect(T0, &mut out);
        assert_eq!((out[0].flags, out[0].wscale, out[0].sack_permitted), (flags::SYN, Some(6), true));
        // Not before the SYN-ACK, then established (mutation testing: `is_established()` as
        // `true`, as `false` and with `!=` went unnoticed).
        assert!(!s.is_established());
        s.on_segment(SimTime::from_millis(100), &SYN_ACK, &mut out);
        assert!(s.is_established());
        assert!(s.sack_enabled());
        assert_eq!(s.peer_window(), 65535, "the SYN-ACK's window is not scaled");
        assert_eq!(s.srtt(), Some(SimTime::from_millis(100)), "the handshake gives the first RTT sample (one tick)");
        s.on_segment(SimTime::from_millis(200), &ack(1), &mut out);
        assert_eq!(s.peer_window(), 4_194_240, "seed 000 §4.2.2: 65535 << 6");
    }

    #[test]
    fn syn_is_retransmitted_with_backoff() {
        let mut s = TcpSender::new(cfg());
        let mut out = Vec::new();
        s.connect(T0, &mut out);
        assert_eq!(s.poll_at(), Some(SimTime::from_secs(3)), "initial RTO");
        s.on_timer(SimTime::from_secs(3), &mut out);
        assert_eq!(out.len(), 2);
        assert!(out[1].is_syn());
        assert_eq!(s.poll_at(), Some(SimTime::from_secs(9)), "backed off to 6 s");
        assert_eq!(s.stats().timeouts, 1);
    }

    /// A sender whose SYN (or the SYN-ACK) was lost once: resent at the initial RTO (3 s),
    /// answered 100 ms later, with `bytes` offered; returns it and what the SYN-ACK sent.
    fn established_after_a_lost_syn(cfg: TcpConfig, bytes: u64) -> (TcpSender, Vec<Segment>) {
        let mut s = TcpSender::new(cfg);
        let mut out = Vec::new();
        s.connect(T0, &mut out);
        s.app_send(T0, bytes, &mut out);
        s.on_timer(SimTime::from_secs(3), &mut out);
        assert_eq!((out.len(), out[1].is_syn()), (2, true), "the SYN twice, no data");
        out.clear();
        s.on_segment(SimTime::from_millis(3100), &SYN_ACK, &mut out);
        (s, out)
    }

    /// RFC 5681 §3.1: "if the SYN or SYN/ACK is lost, the initial window used by a sender
    /// after a correctly transmitted SYN MUST be one segment"; ssthresh is kept, so slow start
    /// goes on from one segment. The slow-start restart after idle (RFC 5681 §4.1's IW) is
    /// that one segment too.
    #[test]
    fn a_lost_syn_leaves_an_initial_window_of_one_segment() {
        let (mut s, out) = established_after_a_lost_syn(TcpConfig { initial_cwnd: 4, ..cfg() }, 100 * MSS);
        assert_eq!(seqs(&out), vec![(1, 1000, 0)], "one segment where the initial window is four");
        assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 64 * MSS));
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(3200), &ack(1001), &mut out);
        assert_eq!(seqs(&out), vec![(1001, 1000, 0), (2001, 1000, 0)], "slow start: one more per ACK");
        // The restart window after idle is the one-segment initial window.
        let (mut s, _) = established_after_a_lost_syn(TcpConfig { initial_cwnd: 4, ..cfg() }, 10 * MSS);
        let t = ack_everything(&mut s, SimTime::from_millis(3100));
        let deadline = s.poll_at().expect("the idle timer");
        s.on_timer(deadline, &mut out);
        assert_eq!((s.cwnd(), s.stats().idle_restarts), (MSS, 1), "restart at one segment (idle since {t})");
        // Without the loss: the configured window, four segments.
        let (_, out) = established(TcpConfig { initial_cwnd: 4, ..cfg() }, 100 * MSS);
        assert_eq!(out.len(), 4);
    }

    /// ns-2 `syn_timeout_ssthresh` (tcp/ns2.rs): ns-2's `timeout()` takes the lost SYN for a
    /// lost packet 0 sent in a window of one, ssthresh_ = max(int(1/2), 2): after the SYN-ACK's
    /// one segment, the second ACK finds cwnd = ssthresh = 2 and grows by 1/cwnd.
    #[test]
    fn ns2_cuts_ssthresh_to_two_segments_on_a_lost_syn() {
        let mut c = TcpConfig { initial_cwnd: 2, ..cfg() };
        c.ns2.syn_timeout_ssthresh = true;
        let (mut s, out) = established_after_a_lost_syn(c, 100 * MSS);
        assert_eq!(seqs(&out), vec![(1, 1000, 0)]);
        assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 2 * MSS), "ns-2: ssthresh_ 2, wnd_init_ 1");
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(3200), &ack(1001), &mut out);
        assert_eq!(s.cwnd(), 2 * MSS, "slow start up to ssthresh");
        s.on_segment(SimTime::from_millis(3300), &ack(2001), &mut out);
        assert_eq!(s.cwnd(), 2 * MSS + MSS / 2, "congestion avoidance: + MSS*MSS/cwnd");
        // A second lost SYN changes nothing more; without a loss the switch does nothing.
        let mut c = TcpConfig { initial_cwnd: 2, ..cfg() };
        c.ns2.syn_timeout_ssthresh = true;
        let (s, _) = established(c, 100 * MSS);
        assert_eq!((s.cwnd(), s.ssthresh()), (2 * MSS, 64 * MSS));
    }

    /// `tcp.rto_backoff_reset` (config.rs `BackoffReset`): after a timeout the go-back-N's
    /// ACKs cover retransmitted segments, so Karn's rule takes no sample from them. ns-2 keeps
    /// the doubled RTO; Linux 2.2 forgets it once nothing is outstanding; ns-3 at the first
    /// new ACK that restarts the timer.
    #[test]
    fn the_backoff_outlives_the_go_back_n_acks_unless_the_rule_forgets_it() {
        let after_timeout = |reset: BackoffReset| {
            let (mut s, _) = established(TcpConfig { initial_cwnd: 4, backoff_reset: reset, ..cfg() }, 4 * MSS);
            let (base, rto) = (s.rto(), s.poll_at().unwrap());
            let mut out = Vec::new();
            s.on_timer(rto, &mut out);
            assert_eq!(s.rto(), base.times(2), "backed off");
            s.on_segment(rto + SimTime::from_millis(100), &ack(1001), &mut out);
            let partway = s.rto();
            s.on_segment(rto + SimTime::from_millis(200), &ack(4001), &mut out);
            assert!(s.all_acked());
            (base, partway, s.rto())
        };
        let (base, partway, end) = after_timeout(BackoffReset::Sample);
        assert_eq!((partway, end), (base.times(2), base.times(2)), "Karn: no sample, the backoff stays (ns-2)");
        let (base, partway, end) = after_timeout(BackoffReset::AllAcked);
        assert_eq!((partway, end), (base.times(2), base), "cleared once everything is acknowledged (Linux 2.2)");
        let (base, partway, end) = after_timeout(BackoffReset::NewAck);
        assert_eq!((partway, end), (base, base), "cleared by the first new ACK (ns-3 NewAck)");
    }

    /// ns-3's estimator in the sender (tcp/rtt.rs): a sample from every ACK, from the oldest
    /// segment it newly covers; none from a retransmitted segment (Karn) nor, after a timeout,
    /// from anything sent before it (`m_history.clear()`). Expected values by hand with
    /// `IntegerUpdate` (rtt.rs tests).
    #[test]
    fn ns3_estimator_samples_every_ack_but_no_retransmission_and_nothing_sent_before_a_timeout() {
        let ms = SimTime::from_millis;
        let (mut s, _) = established(TcpConfig { initial_cwnd: 2, rtt_estimator: RttEstimatorKind::Ns3, ..cfg() }, 100 * MSS);
        // SYN at 0, SYN-ACK at 100 ms: est 100 ms, var 50 ms, RTO 100 + max(100, 200) ms.
        assert_eq!((s.srtt(), s.rto()), (Some(ms(100)), ms(300)));
        let mut out = Vec::new();
        // Segment 1 (sent at 100 ms) acked at 250 ms: 150 ms; est (800 + 50) / 8 = 106.25 ms.
        s.on_segment(ms(250), &ack(1001), &mut out);
        assert_eq!((s.srtt(), s.rto()), (Some(SimTime::from_nanos(106_250_000)), SimTime::from_nanos(306_250_000)));
        // Segments 2 (100 ms) and 3 (250 ms) acked at 260 ms: the oldest, 160 ms.
        s.on_segment(ms(260), &ack(3001), &mut out);
        assert_eq!((s.srtt(), s.rto()), (Some(SimTime::from_nanos(112_968_750)), SimTime::from_nanos(316_718_750)));
        // Nothing more arrives: the timeout, then go-back-N from 3001.
        let rto_at = s.poll_at().unwrap();
        let sent_before = s.snd_max();
        out.clear();
        s.on_timer(rto_at, &mut out);
        assert_eq!(seqs(&out), vec![(3001, 1000, 1)]);
        assert_eq!(s.rto(), SimTime::from_nanos(2 * 316_718_750));
        // The retransmission's ACK: Karn, no sample; the backoff stays (tcp.rto_backoff_reset
        // "sample", cfg()'s).
        s.on_segment(rto_at + ms(120), &ack(4001), &mut out);
        assert_eq!((s.srtt(), s.rto()), (Some(SimTime::from_nanos(112_968_750)), SimTime::from_nanos(2 * 316_718_750)));
        // Everything sent before the timeout acked at once (its oldest, 4001, resent by the
        // go-back-N): no sample.
        let t = rto_at + ms(200);
        out.clear();
        s.on_segment(t, &ack(sent_before), &mut out);
        assert_eq!(s.srtt(), Some(SimTime::from_nanos(112_968_750)));
        assert!(out.iter().any(|o| o.seq == sent_before && o.tx_count == 0), "new data sent at {t:?}");
        // The first segment sent after the timeout, acked 120 ms later: a sample again, which
        // forgets the backoff. est = (112,968,750 x 8 + 7,031,250) >> 3 = 113,847,656.
        s.on_segment(t + ms(120), &ack(sent_before + MSS), &mut out);
        assert_eq!((s.srtt(), s.rto()), (Some(SimTime::from_nanos(113_847_656)), SimTime::from_nanos(273_691_404)));
    }

    /// Linux's estimator (`tcp.rtt_estimator = "linux"`): the SYN-ACK is a sample; so is an
    /// ACK that only SACKs a segment sent once (`first_sackt`), which ns-2's and ns-3's never
    /// sample; a cumulative ACK covering a retransmission is none (Karn), even with
    /// segments sent once beside it.
    #[test]
    fn linux_estimator_samples_sacks_and_follows_karn() {
        let ms = SimTime::from_millis;
        let cfg = TcpConfig { rtt_estimator: RttEstimatorKind::Linux, timer_granularity: ms(1), min_rto: ms(200), ..cfg() };
        let (mut s, out) = established(cfg, 100 * MSS);
        // SYN at 0, SYN-ACK at 100 ms: srtt 100 ms, RTTVAR max(2 x 100, 200) ms.
        assert_eq!((s.srtt(), s.rto()), (Some(ms(100)), ms(300)));
        assert_eq!(seqs(&out), vec![(1, 1000, 0), (1001, 1000, 0)], "two segments at 100 ms");
        let mut out = Vec::new();
        // A duplicate ACK at 220 ms SACKing segment 2 (sent at 100 ms): a 120 ms sample.
        // srtt 100 + 20 / 8 = 102.5 ms; mdev 200 + (20 - 50) = 170 ms; RTTVAR stays 200 ms.
        let mut dup = ack(1);
        (dup.n_sack, dup.sack[0]) = (1, SackBlock { start: 1001, end: 2001 });
        s.on_segment(ms(220), &dup, &mut out);
        assert_eq!((s.srtt(), s.rto()), (Some(SimTime::from_micros(102_500)), ms(303)));
        // Segment 1 resent, then acknowledged with segment 2 at 400 ms: Karn, no sample.
        s.sb.on_retransmit(1, ms(300));
        s.on_segment(ms(400), &ack(2001), &mut out);
        assert_eq!(s.srtt(), Some(SimTime::from_micros(102_500)));
        // The helper alone: the oldest newly acknowledged segment sent once and not SACKed.
        let mut sb = Scoreboard::default();
        for i in 0..4 {
            sb.push(1 + i * MSS, 1 + (i + 1) * MSS, false, ms(10 * i));
        }
        sb.sack(&[SackBlock { start: 1, end: 1001 }]);
        assert_eq!(linux_seq_rtt(&sb, 3001, ms(100)), Some(ms(90)), "segment 2, sent at 10 ms");
        sb.on_retransmit(3001, ms(50));
        assert_eq!(linux_seq_rtt(&sb, 3001, ms(100)), Some(ms(90)), "the retransmission is not acknowledged");
        assert_eq!(linux_seq_rtt(&sb, 4001, ms(100)), None, "it is: Karn");
    }

    /// The history floor alone: two segments sent once before a timeout whose ACK covers
    /// both gives no sample (ns-3 emptied its history); a segment sent after it does.
    #[test]
    fn ns3_sample_skips_what_was_sent_before_the_last_timeout() {
        let ms = SimTime::from_millis;
        let mut rtt = RttEstimator::new(ms(100), SimTime::from_secs(3), ms(200), SimTime::from_secs(60)).with_kind(RttEstimatorKind::Ns3);
        let mut sb = Scoreboard::default();
        sb.push(1, 1001, false, ms(0));
        sb.push(1001, 2001, false, ms(0));
        rtt.on_timeout(2001);
        ns3_rtt_sample(&mut rtt, &sb, 1, ms(600), 2001);
        assert_eq!(rtt.samples(), 0, "no history before the timeout");
        sb.ack(2001);
        sb.push(2001, 3001, false, ms(5000));
        ns3_rtt_sample(&mut rtt, &sb, 2001, ms(5500), 3001);
        assert_eq!(rtt.srtt(), Some(ms(500)));
        // Without the timeout the oldest covered segment is sampled.
        let mut fresh = RttEstimator::new(ms(100), SimTime::from_secs(3), ms(200), SimTime::from_secs(60)).with_kind(RttEstimatorKind::Ns3);
        let mut sb = Scoreboard::default();
        sb.push(1, 1001, false, ms(0));
        sb.push(1001, 2001, false, ms(10));
        ns3_rtt_sample(&mut fresh, &sb, 1, ms(600), 2001);
        assert_eq!(fresh.srtt(), Some(ms(600)));
        // Karn's rule without a timeout (a fast retransmission): the ACK covers the oldest
        // segment, but it was sent again, so no sample (mutation testing: `ack >= e.end &&
        // e.tx_count == 0` as `||` went unnoticed).
        let mut karn = RttEstimator::new(ms(100), SimTime::from_secs(3), ms(200), SimTime::from_secs(60)).with_kind(RttEstimatorKind::Ns3);
        let mut sb = Scoreboard::default();
        sb.push(1, 1001, false, ms(0));
        sb.on_retransmit(1, ms(300));
        ns3_rtt_sample(&mut karn, &sb, 1, ms(600), 1001);
        assert_eq!(karn.samples(), 0, "a retransmitted segment gives no sample");
    }

    #[test]
    fn initial_window_then_slow_start() {
        let (mut s, out) = established(cfg(), 100 * MSS);
        assert_eq!(seqs(&out), vec![(1, 1000, 0), (1001, 1000, 0)], "initial cwnd of 2 segments");
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(200), &ack(1001), &mut out);
        assert_eq!(seqs(&out), vec![(2001, 1000, 0), (3001, 1000, 0)], "slow start: +1 segment per ACK");
        assert_eq!(s.cwnd(), 3 * MSS);
    }

    #[test]
    fn cubic_keeps_ssthresh_on_a_repeated_timeout_as_linux() {
        use super::super::config::CcKind;
        let (mut s, _) = established(TcpConfig { initial_cwnd: 20, cc: CcKind::Cubic, ..cfg() }, 100 * MSS);
        let mut out = Vec::new();
        let rto = s.poll_at().unwrap();
        s.on_timer(rto, &mut out);
        assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 14 * MSS), "beta 0.7 of 20 segments");
        // Again, nothing acknowledged: Linux's tcp_enter_loss keeps ssthresh (it was 2
        // segments, CUBIC's beta of the one-segment window).
        let rto2 = s.poll_at().unwrap();
        s.on_timer(rto2, &mut out);
        assert_eq!((s.cwnd(), s.ssthresh(), s.stats().timeouts), (MSS, 14 * MSS, 2));
        // An ACK of the retransmission, then a timeout: a new window, reduced again.
        s.on_segment(rto2 + SimTime::from_millis(100), &ack(1001), &mut out);
        let rto3 = s.poll_at().unwrap();
        s.on_timer(rto3, &mut out);
        assert_eq!((s.cwnd(), s.ssthresh(), s.stats().timeouts), (MSS, 2 * MSS, 3));
        // Reno AIMD with ns-2's recovery halves the one-segment window again, as ns-2 does.
        let (mut s, _) = established(TcpConfig { initial_cwnd: 20, ..cfg() }, 100 * MSS);
        for _ in 0..2 {
            let rto = s.poll_at().unwrap();
            s.on_timer(rto, &mut out);
        }
        assert_eq!(s.ssthresh(), 2 * MSS);
    }

    #[test]
    fn timeout_halves_ssthresh_and_goes_back_n_from_one_segment() {
        let (mut s, _) = established(TcpConfig { initial_cwnd: 4, ..cfg() }, 100 * MSS);
        let rto = s.poll_at().unwrap();
        let mut out = Vec::new();
        s.on_timer(rto, &mut out);
        assert_eq!(seqs(&out), vec![(1, 1000, 1)], "cwnd = 1 segment: only the first is resent");
        assert_eq!((s.cwnd(), s.ssthresh(), s.state()), (MSS, 2 * MSS, CongState::Loss));
        // Counted (mutation testing: `bytes_retransmitted`'s `+=` as `*=` went unnoticed).
        let st = s.stats();
        assert_eq!((st.segments_retransmitted, st.bytes_retransmitted, st.segments_sent, st.bytes_sent), (1, 1000, 5, 5000));
        assert_eq!(s.poll_at(), Some(rto + s.rto()), "re-armed, backed off");
        out.clear();
        s.on_segment(rto + SimTime::from_millis(100), &ack(1001), &mut out);
        assert_eq!(seqs(&out), vec![(1001, 1000, 1), (2001, 1000, 1)], "going back N in slow start");
    }

    #[test]
    fn slow_start_restarts_after_an_idle_rto() {
        // ns-2 slow_start_restart_: 10 segments acked, then nothing to send for an RTO.
        let (mut s, _) = established(TcpConfig { initial_cwnd: 2, ..cfg() }, 10 * MSS);
        let t = ack_everything(&mut s, SimTime::from_millis(100));
        let mut out = Vec::new();
        let cwnd_before = s.cwnd();
        let (ssthresh, deadline) = (s.ssthresh(), s.poll_at().expect("the timer keeps running when idle"));
        assert_eq!(deadline, t + s.rto());
        s.on_timer(deadline, &mut out);
        assert!(out.is_empty(), "nothing to retransmit");
        assert_eq!((s.cwnd(), s.ssthresh()), (2 * MSS, ssthresh), "cwnd back to the initial window (was {cwnd_before}), ssthresh kept");
        assert_eq!((s.stats().idle_restarts, s.stats().timeouts), (1, 0));
        assert_eq!(s.poll_at(), None, "idle: nothing more to time");
        // The next file starts in slow start from the initial window.
        s.app_send(deadline + SimTime::from_secs(5), 10 * MSS, &mut out);
        assert_eq!(out.len(), 2);
    }

    /// With slow-start restart the timer runs on when everything is acknowledged; new data
    /// sent before it expires restarts it (ns-2 `output()`: nothing was outstanding), so the
    /// data is timed from its sending, not from the last ACK (mutation testing: `emit`'s `||`
    /// as `&&` was caught only by the snapshot table).
    #[test]
    fn new_data_after_everything_was_acknowledged_restarts_the_idle_timer() {
        let (mut s, _) = established(cfg(), 2 * MSS);
        let t = ack_everything(&mut s, SimTime::from_millis(100));
        assert_eq!(s.poll_at(), Some(t + s.rto()), "the idle timer");
        let later = t + SimTime::from_millis(50);
        let mut out = Vec::new();
        s.app_send(later, MSS, &mut out);
        assert_eq!((seqs(&out), s.poll_at()), (vec![(2001, 1000, 0)], Some(later + s.rto())));
    }

    #[test]
    fn without_slow_start_restart_an_idle_connection_keeps_its_window() {
        let (mut s, _) = established(TcpConfig { slow_start_restart: false, ..cfg() }, 10 * MSS);
        ack_everything(&mut s, SimTime::from_millis(100));
        let mut out = Vec::new();
        assert_eq!(s.poll_at(), None, "the timer stops when nothing is outstanding");
        let cwnd = s.cwnd();
        s.app_send(SimTime::from_secs(10), 20 * MSS, &mut out);
        assert_eq!(out.len() as u64, cwnd / MSS, "a whole window at once after idle");
    }

    #[test]
    fn fin_follows_the_data_and_its_ack_completes() {
        let (mut s, out) = established(TcpConfig { fin: true, ..cfg() }, 1500);
        assert_eq!(seqs(&out), vec![(1, 1000, 0), (1001, 500, 0)]);
        let mut out = Vec::new();
        s.close(SimTime::from_millis(150), &mut out);
        // Once (mutation testing: `send_fin()`'s `snd_nxt = seq + 1` and its test went
        // unnoticed; left behind, `snd_nxt` made the go-back-N path send the FIN again).
        assert_eq!(seqs(&out), vec![(1501, 0, 0)]);
        assert!(out[0].is_fin());
        assert_eq!((s.snd_max(), s.stats().segments_sent, s.stats().segments_retransmitted), (1502, 3, 0));
        // The same behind a one-byte last segment, which starts just below the FIN.
        let (mut s2, out2) = established(TcpConfig { fin: true, ..cfg() }, 1001);
        assert_eq!(seqs(&out2), vec![(1, 1000, 0), (1001, 1, 0)]);
        let mut out2 = Vec::new();
        s2.close(SimTime::from_millis(150), &mut out2);
        assert_eq!(seqs(&out2), vec![(1002, 0, 0)]);
        s.on_segment(SimTime::from_millis(300), &ack(1501), &mut out);
        assert!(!s.all_acked(), "FIN outstanding");
        s.on_segment(SimTime::from_millis(300), &ack(1502), &mut out);
        assert!(s.all_acked());
        assert_eq!(s.bytes_acked(), 1500);
        assert_eq!(s.poll_at(), None);
    }

    #[test]
    fn send_buffer_limits_the_flight() {
        let (_, out) = established(TcpConfig { initial_cwnd: 10, snd_buf: Some(3 * MSS), ..cfg() }, 100 * MSS);
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn sws_avoidance_holds_a_short_segment_while_data_is_outstanding() {
        let (mut s, out) = established(TcpConfig { sws_avoidance: true, ..cfg() }, 1500);
        assert_eq!(seqs(&out), vec![(1, 1000, 0)]);
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(200), &ack(1001), &mut out);
        assert_eq!(seqs(&out), vec![(1001, 500, 0)]);
        // Full-sized segments go while data is outstanding; only the short tail waits
        // (mutation testing: `len < mss` as `<=` went unnoticed).
        let (mut s, out) = established(TcpConfig { sws_avoidance: true, ..cfg() }, 2500);
        assert_eq!(seqs(&out), vec![(1, 1000, 0), (1001, 1000, 0)]);
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(200), &ack(1001), &mut out);
        assert!(out.is_empty(), "500 bytes wait while 1001 is outstanding");
        s.on_segment(SimTime::from_millis(210), &ack(2001), &mut out);
        assert_eq!(seqs(&out), vec![(2001, 500, 0)]);
    }

    /// Sender SWS avoidance holds back short data segments, not the FIN: it follows the short
    /// last segment at once (mutation testing: `snd_max < app_end` as `<=`, which sends the
    /// FIN through the data path's checks, went unnoticed).
    #[test]
    fn sws_avoidance_does_not_hold_back_the_fin() {
        let (mut s, out) = established(TcpConfig { sws_avoidance: true, fin: true, ..cfg() }, 1500);
        assert_eq!(seqs(&out), vec![(1, 1000, 0)]);
        let mut out = Vec::new();
        s.close(SimTime::from_millis(150), &mut out);
        assert!(out.is_empty(), "the short segment waits, and the FIN behind it");
        s.on_segment(SimTime::from_millis(200), &ack(1001), &mut out);
        assert_eq!(seqs(&out), vec![(1001, 500, 0), (1501, 0, 0)]);
        assert!(out[1].is_fin());
    }

    /// The FIN waits for the pacer like a data segment (mutation testing: the FIN's pacing
    /// test `snd_max <= app_end` as `>` went unnoticed).
    #[test]
    fn the_fin_waits_for_the_pacer() {
        let (mut s, mut out) = paced_connecting(TcpConfig { fin: true, ..cfg() }, MSS);
        let ms = SimTime::from_millis;
        s.on_segment(ms(100), &SYN_ACK, &mut out);
        s.close(ms(105), &mut out);
        assert_eq!((seqs(&out), s.poll_at()), (vec![(1, 1000, 0)], Some(ms(110))));
        s.on_timer(ms(110), &mut out);
        assert_eq!(seqs(&out[1..]), vec![(1001, 0, 0)]);
        assert!(out[1].is_fin());
    }

    /// An ACK of `n` advertising `field` (scale 6 after the handshake).
    fn ack_win(n: u64, field: u16) -> Segment {
        Segment { window: field, ..ack(n) }
    }

    #[test]
    fn a_write_takes_only_the_room_in_the_send_buffer_and_the_sender_says_when_room_frees() {
        let (mut s, _) = established(TcpConfig { initial_cwnd: 10, snd_buf: Some(5 * MSS), ..cfg() }, 0);
        let mut out = Vec::new();
        let t = SimTime::from_millis(100);
        assert_eq!(s.send_space(), 5 * MSS);
        assert_eq!(s.app_write(t, 8 * MSS, &mut out), 5 * MSS, "only the buffer's worth is accepted");
        assert_eq!((out.len(), s.send_space()), (5, 0), "all five segments sent, none acknowledged");
        assert_eq!(s.app_write(t, MSS, &mut out), 0, "a full buffer takes nothing");
        assert!(!s.take_writable(), "no room freed yet");
        out.clear();
        s.on_segment(SimTime::from_millis(200), &ack(2001), &mut out);
        assert_eq!(s.send_space(), 2 * MSS, "two acknowledged segments leave the buffer");
        assert!(s.take_writable(), "room freed after a short write");
        assert!(!s.take_writable(), "told once");
        assert_eq!(s.app_write(SimTime::from_millis(200), 3 * MSS, &mut out), 2 * MSS);
        assert_eq!(seqs(&out), vec![(5001, 1000, 0), (6001, 1000, 0)]);
        // A write that was not cut short is not told when room frees (mutation testing:
        // `write_blocked && ...` as `||` went unnoticed).
        let (mut s, _) = established(TcpConfig { initial_cwnd: 10, snd_buf: Some(5 * MSS), ..cfg() }, 0);
        assert_eq!(s.app_write(t, 3 * MSS, &mut out), 3 * MSS);
        s.on_segment(SimTime::from_millis(200), &ack(2001), &mut out);
        assert_eq!((s.send_space(), s.take_writable()), (4 * MSS, false));
        // Without a buffer limit every write is whole (today's default).
        let (mut s, _) = established(cfg(), 0);
        assert_eq!((s.send_space(), s.app_write(t, 1 << 40, &mut out)), (u64::MAX, 1 << 40));
    }

    /// Four segments sent (cwnd 4), then all four acknowledged at 200 ms by an ACK whose window
    /// field is `field` (scaled by 6): the sender, what that ACK made it send, and the time.
    fn four_acked_with_window(field: u16) -> (TcpSender, Vec<Segment>, SimTime) {
        let (mut s, out) = established(TcpConfig { initial_cwnd: 4, ..cfg() }, 100 * MSS);
        assert_eq!(out.len(), 4);
        let mut out = Vec::new();
        let t = SimTime::from_millis(200);
        s.on_segment(t, &ack_win(4001, field), &mut out);
        (s, out, t)
    }

    /// Peer's window closes with everything acknowledged, the persist timer probes with one
    /// byte, backing off, and sending resumes when the window opens.
    #[test]
    fn zero_window_runs_the_persist_timer_and_resumes_when_the_window_opens() {
        let (mut s, mut out, t) = four_acked_with_window(0);
        assert!(out.is_empty(), "a zero window: nothing sent");
        assert!(s.in_persist());
        let rto = s.rto();
        assert_eq!(s.poll_at(), Some(t + rto), "the first probe one RTO later");
        // First probe: one byte of new data at snd_max.
        let p1 = t + rto;
        s.on_timer(p1, &mut out);
        assert_eq!(seqs(&out), vec![(4001, 1, 0)]);
        assert_eq!(s.poll_at(), Some(p1 + rto.times(2)), "backed off");
        // The receiver drops it and answers with its zero window: not a duplicate ACK.
        out.clear();
        s.on_segment(p1 + SimTime::from_millis(100), &ack_win(4001, 0), &mut out);
        s.on_segment(p1 + SimTime::from_millis(100), &ack_win(4001, 0), &mut out);
        s.on_segment(p1 + SimTime::from_millis(100), &ack_win(4001, 0), &mut out);
        assert!(out.is_empty());
        assert_eq!((s.stats().dupacks_received, s.stats().fast_retransmits), (0, 0));
        // Second probe: the same byte again.
        let p2 = p1 + rto.times(2);
        s.on_timer(p2, &mut out);
        assert_eq!(seqs(&out), vec![(4001, 1, 1)]);
        assert_eq!(s.stats().window_probes, 2);
        // Refused too; then the window opens (the probe still unacknowledged): the probe
        // byte is resent in sequence, then new data as cwnd allows (5 segments after the first
        // ACK's slow-start step: the probe byte and four segments fit in 5000 bytes; the
        // window is 6400).
        out.clear();
        s.on_segment(p2 + SimTime::from_millis(40), &ack_win(4001, 0), &mut out);
        assert!(out.is_empty());
        let t = p2 + SimTime::from_millis(50);
        s.on_segment(t, &ack_win(4001, 100), &mut out);
        assert!(!s.in_persist());
        assert_eq!(seqs(&out)[0], (4001, 1, 2), "the probe byte first");
        assert_eq!(seqs(&out)[1..], [(4002, 1000, 0), (5002, 1000, 0), (6002, 1000, 0), (7002, 1000, 0)]);
        assert_eq!(s.poll_at(), Some(t + s.rto()), "the retransmission timer runs again");
        // Acknowledged: sending goes on at the ACK clock.
        out.clear();
        s.on_segment(t + SimTime::from_millis(100), &ack_win(8002, 100), &mut out);
        assert_eq!(out.len(), 6, "cwnd 6 segments, window 6400 bytes: {:?}", seqs(&out));
    }

    /// A zero-window probe still in flight when a window update arrives (the update left
    /// the receiver before the probe reached it; a refusal would have come first) is not
    /// resent: the receiver takes it into the window it has opened. Sending goes on after it.
    /// It used to be resent as if refused (a duplicate byte of split TCP's loss-free
    /// terrestrial leg in zhou-single, review of 2026-11-29).
    #[test]
    fn a_zero_window_probe_in_flight_is_not_resent_when_the_window_opens() {
        let (mut s, mut out, t) = four_acked_with_window(0);
        let p1 = t + s.rto();
        s.on_timer(p1, &mut out);
        assert_eq!(seqs(&out), vec![(4001, 1, 0)]);
        out.clear();
        s.on_segment(p1 + SimTime::from_millis(10), &ack_win(4001, 100), &mut out);
        assert!(!s.in_persist());
        assert_eq!(seqs(&out)[0], (4002, 1000, 0), "new data after the probe byte");
        assert_eq!(s.stats().segments_retransmitted, 0);
        // The probe and the data are acknowledged in turn: nothing is missing.
        out.clear();
        s.on_segment(p1 + SimTime::from_millis(100), &ack_win(5002, 100), &mut out);
        assert_eq!((s.stats().segments_retransmitted, s.stats().dupacks_received), (0, 0));
    }

    /// A window smaller than a segment but not zero: the persist timer's probe is as long as
    /// the window allows (RFC 9293 §3.8.6.1; Linux `tcp_write_wakeup()`), not one byte
    /// (mutation testing: the length's `app_end - snd_max` as `app_end / snd_max` went
    /// unnoticed).
    #[test]
    fn a_window_probe_fills_a_window_smaller_than_a_segment() {
        let (mut s, mut out, t) = four_acked_with_window(5);
        assert_eq!((s.peer_window(), out.len()), (320, 0), "5 << 6 bytes: no segment fits");
        assert!(s.in_persist());
        s.on_timer(t + s.rto(), &mut out);
        assert_eq!(seqs(&out), vec![(4001, 320, 0)]);
        assert_eq!((s.snd_max(), s.stats().window_probes), (4321, 1));
    }

    /// A probe that fits the offered window is an ordinary segment in flight (Linux
    /// `tcp_write_wakeup()`): timed, under the retransmission timer, and not resent when an
    /// ACK that left the receiver before the probe arrived opens the window further (same
    /// acknowledgement number, larger window). Sending rewound to `snd_una` and resent it:
    /// 3 spurious retransmissions of split TCP's loss-free terrestrial leg in zhou-single
    /// (review of 2026-11-29).
    #[test]
    fn a_probe_within_the_window_is_not_resent_when_the_window_opens_further() {
        let (mut s, mut out, t) = four_acked_with_window(5);
        let p = t + s.rto();
        s.on_timer(p, &mut out);
        assert_eq!(seqs(&out), vec![(4001, 320, 0)], "the window's 320 bytes");
        assert!(!s.in_persist(), "data in flight: the retransmission timer runs");
        assert_eq!(s.poll_at(), Some(p + s.rto()));
        // The receiver read its buffer before the probe arrived: a window update, same ack.
        out.clear();
        s.on_segment(p + SimTime::from_millis(10), &ack_win(4001, 100), &mut out);
        assert_eq!(seqs(&out)[0], (4321, 1000, 0), "new data after the probe, nothing resent");
        assert_eq!((s.stats().segments_retransmitted, s.stats().bytes_retransmitted), (0, 0));
        // The probe's own ACK is a new ACK (its RTT sampled), not a duplicate.
        out.clear();
        s.on_segment(p + SimTime::from_millis(100), &ack_win(4321, 100), &mut out);
        assert_eq!((s.stats().dupacks_received, s.stats().segments_retransmitted), (0, 0));
        assert_eq!(s.stats().window_probes, 1);
    }

    /// The probe within a small window, lost: the retransmission timer resends it as any
    /// segment (Linux: packets out, so the probe timer stops and the RTO runs).
    #[test]
    fn a_lost_probe_within_the_window_is_resent_by_the_retransmission_timer() {
        let (mut s, mut out, t) = four_acked_with_window(5);
        let p = t + s.rto();
        s.on_timer(p, &mut out);
        out.clear();
        let rto_at = s.poll_at().unwrap();
        s.on_timer(rto_at, &mut out);
        assert_eq!(seqs(&out), vec![(4001, 320, 1)]);
        assert_eq!((s.stats().timeouts, s.stats().window_probes), (1, 1));
    }

    /// A sender of configuration `c` paced at 100 kB/s (a 1000-byte segment every 10 ms),
    /// connecting at 0 with `bytes` to send (its SYN sent and cleared from the output).
    fn paced_connecting(c: TcpConfig, bytes: u64) -> (TcpSender, Vec<Segment>) {
        let mut s = TcpSender::new(c);
        let mut out = Vec::new();
        s.set_pacing_rate(Some(100_000));
        s.connect(T0, &mut out);
        s.app_send(T0, bytes, &mut out);
        out.clear();
        (s, out)
    }

    /// A segment the peer's window takes but the pacer holds back is no reason to probe:
    /// the persist timer waits for a window too small for the next segment, and a tail of
    /// exactly the window's 320 bytes fits (mutation testing: `window_blocked()`'s `>` as
    /// `>=` and its length arithmetic went unnoticed).
    #[test]
    fn a_paced_segment_that_fits_the_window_starts_no_persist_timer() {
        let (mut s, mut out) = paced_connecting(TcpConfig { initial_cwnd: 4, ..cfg() }, MSS + 320);
        let ms = SimTime::from_millis;
        s.on_segment(ms(100), &SYN_ACK, &mut out);
        assert_eq!(seqs(&out), vec![(1, 1000, 0)]);
        // Acknowledged before the pacer lets the tail go, the window now 5 << 6 = 320 bytes.
        s.on_segment(ms(105), &ack_win(1001, 5), &mut out);
        assert_eq!((s.peer_window(), out.len()), (320, 1));
        assert!(!s.in_persist(), "the 320-byte tail fits the window");
        assert_eq!(s.poll_at(), Some(ms(110)), "the pacing release");
        s.on_timer(ms(110), &mut out);
        assert_eq!(seqs(&out[1..]), vec![(1001, 320, 0)]);
    }

    /// A window update opens the window while the pacer holds the next segment back: the
    /// persist timer stops (the retransmission timer runs instead, slow-start restart being
    /// on) and the segment leaves at the pacing release (mutation testing: `update_persist()`'s
    /// `!blocked` guard as `false` went unnoticed). (A new ACK re-arms the retransmission
    /// timer before sending; only a window update reaches this guard.)
    #[test]
    fn the_persist_timer_stops_when_a_window_update_opens_the_window_while_paced() {
        let (mut s, mut out) = paced_connecting(TcpConfig { initial_cwnd: 4, ..cfg() }, 10 * MSS);
        let ms = SimTime::from_millis;
        s.on_segment(ms(100), &SYN_ACK, &mut out);
        assert_eq!(seqs(&out), vec![(1, 1000, 0)]);
        s.on_segment(ms(105), &ack_win(1001, 0), &mut out);
        assert!(s.in_persist(), "a zero window");
        s.on_segment(ms(106), &ack_win(1001, 100), &mut out);
        assert_eq!(out.len(), 1, "paced");
        assert!(!s.in_persist(), "the window takes the next segment");
        assert_eq!(s.poll_at(), Some(ms(110)), "the pacing release, before the RTO");
        s.on_timer(ms(110), &mut out);
        assert_eq!(seqs(&out[1..]), vec![(1001, 1000, 0)]);
        assert_eq!(s.stats().window_probes, 0);
    }

    /// The persist backoff belongs to one closed-window episode: once a probe's answer
    /// opens the window and data flows, the next zero window starts again at one RTO (Linux
    /// `tcp_ack_probe()` clears `icsk_backoff` when the window opens). It used to carry over
    /// (4 x RTO after two probes): sending replaced the persist timer before
    /// `update_persist()` could see it stop.
    #[test]
    fn a_later_zero_window_probes_after_one_rto_again() {
        let (mut s, mut out, t) = four_acked_with_window(0);
        let rto = s.rto();
        let p1 = t + rto;
        s.on_timer(p1, &mut out);
        let p2 = p1 + rto.times(2);
        s.on_timer(p2, &mut out);
        assert_eq!(s.stats().window_probes, 2);
        let t = p2 + SimTime::from_millis(50);
        s.on_segment(t, &ack_win(4001, 100), &mut out);
        assert!(!s.in_persist());
        let t = t + SimTime::from_millis(100);
        s.on_segment(t, &ack_win(s.snd_max(), 0), &mut out);
        assert!(s.in_persist());
        assert_eq!((s.rto(), s.poll_at()), (rto, Some(t + rto)));
    }

    #[test]
    fn the_persist_interval_doubles_up_to_max_rto() {
        let (mut s, _) = established(TcpConfig { initial_cwnd: 1, max_rto: SimTime::from_secs(10), ..cfg() }, 10 * MSS);
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(200), &ack_win(1001, 0), &mut out);
        let rto = s.rto();
        let mut t = s.poll_at().unwrap();
        let mut gaps = Vec::new();
        for _ in 0..8 {
            s.on_timer(t, &mut out);
            let next = s.poll_at().unwrap();
            gaps.push(next - t);
            t = next;
        }
        let expect: Vec<SimTime> = [2, 4, 8, 16, 32, 64, 128, 256].iter().map(|&k| rto.times(k).min(SimTime::from_secs(10))).collect();
        assert_eq!(gaps, expect, "rto = {rto:?}");
        assert!(s.in_persist());
        assert_eq!(s.stats().window_probes, 8);
        assert_eq!(s.stats().timeouts, 0, "probes are not retransmission timeouts");
    }

    /// The sender's rate samples on a hand-built ACK sequence: 4 segments sent at 100 ms,
    /// ACKed one by one 10 ms apart from 300 ms.
    #[test]
    fn rate_samples_from_the_acks() {
        let (mut s, out) = established(TcpConfig { initial_cwnd: 4, rate_samples: true, ..cfg() }, 4 * MSS);
        assert_eq!(out.len(), 4);
        let mut out = Vec::new();
        let mut got = Vec::new();
        for i in 1..=4u64 {
            s.on_segment(SimTime::from_millis(290 + 10 * i), &ack(1 + i * MSS), &mut out);
            let rs = *s.rate_sample();
            got.push((rs.delivered, rs.interval, rs.rtt, rs.acked_sacked));
        }
        let ms = SimTime::from_millis;
        // The flight started at 100 ms (delivered 0 then); segment i is delivered at
        // 290 + 10 i ms: i segments over 190 + 10 i ms, RTT 190 + 10 i ms.
        assert_eq!(got, vec![(MSS, ms(200), Some(ms(200)), MSS), (2 * MSS, ms(210), Some(ms(210)), MSS), (3 * MSS, ms(220), Some(ms(220)), MSS), (4 * MSS, ms(230), Some(ms(230)), MSS)]);
        assert_eq!(s.delivered(), 4 * MSS);
        // A SACK delivers too: a new flight, the first segment lost, the next SACKed.
        s.app_send(ms(400), 4 * MSS, &mut out);
        let sack = Segment { sack: [SackBlock { start: 5001, end: 6001 }, SackBlock::default(), SackBlock::default()], n_sack: 1, ..ack(4001) };
        s.on_segment(ms(600), &sack, &mut out);
        assert_eq!((s.rate_sample().acked_sacked, s.delivered()), (MSS, 5 * MSS));
        // A first transmission SACKed is no retransmission: it gives the sample its RTT (sent
        // at 400 ms). (Mutation testing: `tx_count > 0` as `>= 0` went unnoticed.)
        assert_eq!((s.rate_sample().is_retrans, s.rate_sample().rtt), (false, Some(ms(200))));
    }

    /// Linux `tcp_rate_check_app_limited()`: when the application has nothing more to send
    /// and the flight is below cwnd, what is sent from then on is application-limited, and
    /// so are the rate samples its ACKs give; a flight that fills cwnd exactly is
    /// window-limited (mutation testing: `in_flight < cwnd` as `<=`, `==`, `>` and
    /// `snd_nxt >= snd_max` as `<` went unnoticed).
    #[test]
    fn an_application_limited_flight_marks_its_rate_samples() {
        let (mut s, out) = established(TcpConfig { initial_cwnd: 4, rate_samples: true, ..cfg() }, 2 * MSS);
        assert_eq!(out.len(), 2);
        assert!(s.rate.is_app_limited(), "2 segments in flight, cwnd 4");
        let ms = SimTime::from_millis;
        let mut out = Vec::new();
        s.app_send(ms(150), MSS, &mut out);
        assert_eq!(seqs(&out), vec![(2001, 1000, 0)]);
        s.on_segment(ms(200), &ack(2001), &mut out);
        assert!(!s.rate_sample().is_app_limited, "sent before the application ran dry");
        s.on_segment(ms(250), &ack(3001), &mut out);
        assert!(s.rate_sample().is_app_limited, "sent while application-limited");
        // The application runs dry with cwnd full: not application-limited.
        let (s, out) = established(TcpConfig { initial_cwnd: 4, rate_samples: true, ..cfg() }, 4 * MSS);
        assert_eq!(out.len(), 4);
        assert!(!s.rate.is_app_limited(), "4 segments in flight, cwnd 4");
    }

    /// The bytes in flight before an ACK, as its rate sample reports them to the controller
    /// (BBR reads `prior_in_flight`): outside recovery SACKed bytes are not in flight; in fast
    /// recovery it is the SACK recovery's PIPE. Ten segments sent, the first two lost: after
    /// the third duplicate RFC 6675 retransmits segment 1 and presumes segment 2 lost, so PIPE
    /// is the five segments above the SACKed ones plus the retransmission, one segment less
    /// than sent minus SACKed (mutation testing: `in_flight()`'s `- sacked_bytes()` as `+`
    /// and `cc_in_flight()` without its recovery arm went unnoticed).
    #[test]
    fn the_rate_sample_counts_sacked_bytes_out_of_flight_and_pipe_in_recovery() {
        let c = TcpConfig { initial_cwnd: 10, recovery: RecoveryKind::SackRfc6675, rate_samples: true, ..cfg() };
        let (mut s, out) = established(c, 100 * MSS);
        assert_eq!(out.len(), 10);
        let mut out = Vec::new();
        let t = SimTime::from_millis(200);
        s.on_segment(t, &ack(1), &mut out); // the window scaled: an update, no duplicate
        let sacked_to = |end: u64| Segment { sack: [SackBlock { start: 2001, end }, SackBlock::default(), SackBlock::default()], n_sack: 1, ..ack(1) };
        s.on_segment(t, &sacked_to(3001), &mut out);
        assert_eq!((s.state(), s.rate_sample().prior_in_flight), (CongState::Disorder, 10 * MSS));
        s.on_segment(t, &sacked_to(4001), &mut out);
        assert_eq!(s.rate_sample().prior_in_flight, 9 * MSS, "one segment SACKed");
        s.on_segment(t, &sacked_to(5001), &mut out);
        assert_eq!((s.state(), seqs(&out)), (CongState::Recovery, vec![(1, 1000, 1)]));
        s.on_segment(t, &sacked_to(6001), &mut out);
        assert_eq!(s.rate_sample().prior_in_flight, 6 * MSS, "PIPE: 5001-10001 and the retransmission");
    }

    /// The SYN advertises the configured receive window field, and every ACK is counted,
    /// duplicates and window updates included (mutation testing: the SYN's `window` and the
    /// ACK counter went unnoticed).
    #[test]
    fn the_syn_advertises_its_window_and_every_ack_is_counted() {
        let mut s = TcpSender::new(TcpConfig { rcv_window_field: 12_345, ..cfg() });
        let mut out = Vec::new();
        s.connect(T0, &mut out);
        assert_eq!((out[0].seq, out[0].window), (0, 12_345));
        // Data segments acknowledge the peer's SYN and carry the same field (what a pcap
        // trace shows; mutation testing: `emit`'s `ack` and `window` went unnoticed).
        let (_, data) = established(TcpConfig { rcv_window_field: 12_345, ..cfg() }, MSS);
        assert_eq!((data[0].ack, data[0].window, data[0].flags & flags::ACK != 0), (1, 12_345, true));
        let (mut s, _) = established(TcpConfig { initial_cwnd: 4, ..cfg() }, 10 * MSS);
        assert_eq!(s.stats().acks_received, 0, "the SYN-ACK is the handshake's, not an ACK of data");
        let t = SimTime::from_millis(200);
        s.on_segment(t, &ack(1001), &mut out);
        s.on_segment(t, &ack(1001), &mut out);
        s.on_segment(t, &ack_win(1001, 100), &mut out);
        assert_eq!(s.stats().acks_received, 3);
    }

    /// ns-2 Sack1's `CheckUpdate()` (`tcp.ns2.sack_dupack_needs_news`): outside recovery a
    /// duplicate ACK counts only if its SACK blocks report something new; the same blocks again
    /// do not count, and without the switch they do (mutation testing: `newly > 0` as `>= 0`
    /// went unnoticed).
    #[test]
    fn a_duplicate_ack_without_sack_news_counts_only_without_ns2_check_update() {
        for (needs_news, dupacks) in [(false, 2), (true, 1)] {
            let mut c = TcpConfig { initial_cwnd: 4, ..cfg() };
            c.ns2.sack_dupack_needs_news = needs_news;
            let (mut s, out) = established(c, 10 * MSS);
            assert_eq!(out.len(), 4);
            let mut out = Vec::new();
            let dup = Segment { sack: [SackBlock { start: 2001, end: 3001 }, SackBlock::default(), SackBlock::default()], n_sack: 1, ..ack(1) };
            let t = SimTime::from_millis(200);
            // First the window scaled (the SYN-ACK's was not): a window update, no duplicate.
            s.on_segment(t, &ack(1), &mut out);
            assert_eq!(s.stats().dupacks_received, 0);
            s.on_segment(t, &dup, &mut out);
            s.on_segment(t, &dup, &mut out);
            assert_eq!(s.stats().dupacks_received, dupacks, "sack_dupack_needs_news = {needs_news}");
        }
    }

    /// RFC 6675 §2: with SACK, a duplicate acknowledgment is an ACK that SACKs data not
    /// SACKed before. The RFC 6675 recovery counts only those outside recovery, whatever
    /// `tcp.ns2.sack_dupack_needs_news` says (after a timeout, go-back-N resends data the
    /// receiver already had, whose ACKs carry no news and must not start a fast
    /// retransmission); the other recoveries count every duplicate (RFC 5681).
    #[test]
    fn rfc6675_counts_only_duplicate_acks_with_sack_news() {
        for (recovery, dupacks) in [(RecoveryKind::SackRfc6675, 1), (RecoveryKind::NewrenoNs3, 2)] {
            let (mut s, out) = established(TcpConfig { initial_cwnd: 4, recovery, ..cfg() }, 10 * MSS);
            assert_eq!(out.len(), 4);
            let mut out = Vec::new();
            let dup = Segment { sack: [SackBlock { start: 2001, end: 3001 }, SackBlock::default(), SackBlock::default()], n_sack: 1, ..ack(1) };
            let t = SimTime::from_millis(200);
            s.on_segment(t, &ack(1), &mut out);
            s.on_segment(t, &dup, &mut out);
            s.on_segment(t, &dup, &mut out);
            assert_eq!(s.stats().dupacks_received, dupacks, "{recovery:?}");
        }
    }

    /// The loss state of a timeout lasts until RECOVER (`snd_max` at the timeout) is
    /// acknowledged, the ACK of exactly RECOVER included (Linux `tcp_try_undo_recovery()`'s
    /// `CA_Loss` -> `CA_Open`); until then ns-3 NewReno ignores duplicate ACKs ("we do not
    /// count the DupAcks received in CA_LOSS"), afterwards three start a fast retransmission
    /// (mutation testing: the guard `snd_una >= recover` as `true`, `false` and `<` went
    /// unnoticed).
    #[test]
    fn the_loss_state_of_a_timeout_ends_when_recover_is_acknowledged() {
        let (mut s, _) = established(TcpConfig { initial_cwnd: 4, recovery: RecoveryKind::NewrenoNs3, ..cfg() }, 100 * MSS);
        let rto = s.poll_at().unwrap();
        let mut out = Vec::new();
        s.on_timer(rto, &mut out);
        assert_eq!((s.state(), s.recover()), (CongState::Loss, 4001));
        let ms = SimTime::from_millis;
        s.on_segment(rto + ms(100), &ack(1001), &mut out);
        assert_eq!(s.state(), CongState::Loss, "1001 is below RECOVER");
        s.on_segment(rto + ms(200), &ack(3001), &mut out);
        assert_eq!(s.state(), CongState::Loss, "3001 is below RECOVER");
        s.on_segment(rto + ms(300), &ack(4001), &mut out);
        assert_eq!(s.state(), CongState::Open, "RECOVER acknowledged");
        assert!(s.snd_max() > 4001);
        out.clear();
        for _ in 0..3 {
            s.on_segment(rto + ms(310), &ack(4001), &mut out);
        }
        assert_eq!((s.state(), s.stats().fast_retransmits), (CongState::Recovery, 1));
        assert_eq!(seqs(&out)[0], (4001, 1000, 1), "the fast retransmission");
    }

    /// Tahoe's fast retransmission (recovery/tahoe.rs): the third duplicate ACK counts a fast
    /// retransmit, enters the loss state with RECOVER = `snd_max`, and goes back N from one
    /// segment (mutation testing: its counter's `+=` as `*=` went unnoticed).
    #[test]
    fn tahoe_counts_its_fast_retransmission_and_goes_back_n() {
        let (mut s, out) = established(TcpConfig { initial_cwnd: 4, recovery: RecoveryKind::Tahoe, ..cfg() }, 100 * MSS);
        assert_eq!(out.len(), 4);
        let mut out = Vec::new();
        let t = SimTime::from_millis(200);
        s.on_segment(t, &ack(1001), &mut out);
        out.clear();
        for _ in 0..3 {
            s.on_segment(t, &ack(1001), &mut out);
        }
        assert_eq!((s.stats().fast_retransmits, s.stats().timeouts), (1, 0));
        assert_eq!((s.state(), s.recover(), s.cwnd()), (CongState::Loss, 6001, MSS));
        assert_eq!(seqs(&out), vec![(1001, 1000, 1)], "one segment from snd_una");
    }

    /// `effective_window()` (public, for traces and tests): cwnd plus Reno's inflation (ns-2
    /// `dupwnd_`, one segment per duplicate ACK in fast recovery), limited by the peer's
    /// window (mutation testing: `effective_window()` as 0 and as 1 went unnoticed).
    #[test]
    fn the_effective_window_is_cwnd_plus_reno_inflation_within_the_peers_window() {
        let (mut s, out) = established(TcpConfig { initial_cwnd: 4, ..cfg() }, 100 * MSS);
        assert_eq!(out.len(), 4);
        let mut out = Vec::new();
        let t = SimTime::from_millis(200);
        s.on_segment(t, &ack(1001), &mut out);
        assert_eq!((s.cwnd(), s.effective_window()), (5 * MSS, 5 * MSS), "outside recovery: cwnd");
        for _ in 0..3 {
            s.on_segment(t, &ack(1001), &mut out);
        }
        assert_eq!((s.state(), s.cwnd(), s.effective_window()), (CongState::Recovery, 2 * MSS, 5 * MSS), "ssthresh + 3 segments");
        s.on_segment(t, &ack(1001), &mut out);
        assert_eq!(s.effective_window(), 6 * MSS, "one more segment per duplicate");
        s.on_segment(t, &ack_win(1001, 50), &mut out);
        assert_eq!((s.peer_window(), s.effective_window()), (3200, 3200), "the peer's window, 50 << 6");
    }

    /// Linux's `CA_Disorder`: the state after a duplicate ACK outside recovery, kept while
    /// duplicates go on, back to Open at the next new ACK (only `state()` and the testkit's
    /// traces show it; mutation testing: the two transitions' guards went unnoticed).
    #[test]
    fn duplicate_acks_outside_recovery_are_disorder_until_a_new_ack() {
        let (mut s, _) = established(TcpConfig { initial_cwnd: 4, ..cfg() }, 100 * MSS);
        let mut out = Vec::new();
        let t = SimTime::from_millis(200);
        s.on_segment(t, &ack(1001), &mut out);
        assert_eq!(s.state(), CongState::Open);
        s.on_segment(t, &ack(1001), &mut out);
        assert_eq!((s.state(), s.stats().dupacks_received), (CongState::Disorder, 1));
        s.on_segment(t, &ack(1001), &mut out);
        assert_eq!((s.state(), s.stats().dupacks_received), (CongState::Disorder, 2));
        s.on_segment(t, &ack(2001), &mut out);
        assert_eq!(s.state(), CongState::Open);
    }

    /// Under BBR the go-back-N after a timeout resends while the bytes in flight (what was
    /// resent since, `cc_in_flight()`) plus the segment fit cwnd (Linux compares cwnd with
    /// `tcp_packets_in_flight()`), not the span from `snd_una`: after the first ACK, cwnd 4
    /// segments, four resends leave at BBR's pacing releases, and the fifth waits (mutation
    /// testing: `cc_in_flight() + e.len()` as `*` went unnoticed).
    #[test]
    fn bbr_goes_back_n_while_the_resent_flight_fits_cwnd() {
        // The retransmission timer's go-back-N: no tail loss probe first (`tcp.tlp` off).
        use super::super::config::CcKind;
        let (mut s, out) = established(TcpConfig { initial_cwnd: 10, cc: CcKind::Bbr, tlp: false, ..cfg() }, 100 * MSS);
        assert_eq!(out.len(), 10);
        let rto = s.poll_at().unwrap();
        let mut out = Vec::new();
        s.on_timer(rto, &mut out);
        assert_eq!((seqs(&out), s.state()), (vec![(1, 1000, 1)], CongState::Loss));
        out.clear();
        let t = rto + SimTime::from_millis(100);
        s.on_segment(t, &ack(1001), &mut out);
        let deadline = t + s.rto();
        while let Some(p) = s.poll_at().filter(|&p| p < deadline) {
            s.on_timer(p, &mut out);
        }
        assert_eq!(s.cwnd(), 4 * MSS);
        assert_eq!(seqs(&out), vec![(1001, 1000, 1), (2001, 1000, 1), (3001, 1000, 1), (4001, 1000, 1)]);
        assert_eq!((s.cc_in_flight(), s.poll_at()), (4 * MSS, Some(deadline)), "the window is full: only the retransmission timer is left");
    }

    /// RFC 8985 §6.3 under BBR: a timeout finds lost the segments sent at least RACK.rtt
    /// before it (Linux `tcp_timeout_mark_lost()`); the go-back-N resends a more recent one
    /// only once RACK finds it lost too (§6.2 step 5: a segment sent after it delivered, and
    /// RACK.rtt + reo_wnd passed, reo_wnd 0 in the loss state without reordering). Ten
    /// segments at 100 ms, the first ACKed at 250 ms (RACK.rtt 150 ms); one more segment
    /// written at T - 100 ms, T the timeout.
    #[test]
    fn bbr_holds_a_go_back_n_resend_until_rack_finds_it_lost() {
        // The retransmission timer's go-back-N: no tail loss probe first (`tcp.tlp` off).
        use super::super::config::CcKind;
        let ms = SimTime::from_millis;
        let (mut s, out) = established(TcpConfig { initial_cwnd: 10, cc: CcKind::Bbr, tlp: false, ..cfg() }, 10 * MSS);
        assert_eq!(out.len(), 10);
        let mut out = Vec::new();
        s.on_segment(ms(250), &ack(1001), &mut out);
        assert!(out.is_empty());
        let t = s.poll_at().unwrap();
        s.app_send(t - ms(100), MSS, &mut out);
        assert_eq!(seqs(&out), vec![(10001, 1000, 0)]);
        out.clear();
        s.on_timer(t, &mut out);
        assert_eq!((seqs(&out), s.state()), (vec![(1001, 1000, 1)], CongState::Loss));
        out.clear();
        // The head's resend (sent at T) is ACKed at T + 150 ms: RACK.rtt 150 ms, so 10001 (sent
        // at T - 100 ms) is lost from T + 50 ms on; the segments of 100 ms were lost at T.
        s.on_segment(t + ms(150), &ack(2001), &mut out);
        let e = *s.sb.get(10001).unwrap();
        assert_eq!(s.timeout_resend(&e, t + ms(150)), Resend::Now);
        assert_eq!(s.timeout_resend(&e, t + ms(49)), Resend::At(t + ms(50)), "RACK's time not yet come");
        assert_eq!(s.timeout_resend(s.sb.get(3001).unwrap(), t + ms(150)), Resend::Now);
        // Before any segment sent after it is delivered, RACK knows no time for it.
        let (mut s2, _) = established(TcpConfig { initial_cwnd: 10, cc: CcKind::Bbr, tlp: false, ..cfg() }, 10 * MSS);
        s2.on_segment(ms(250), &ack(1001), &mut out);
        let t2 = s2.poll_at().unwrap();
        s2.app_send(t2 - ms(100), MSS, &mut out);
        s2.on_timer(t2, &mut out);
        assert_eq!(s2.timeout_resend(s2.sb.get(10001).unwrap(), t2 + ms(10)), Resend::OnAck);
        assert_eq!(s2.timeout_resend(s2.sb.get(2001).unwrap(), t2), Resend::Now, "sent at 100 ms, lost at the timeout");
        // Other controllers go back N at once (ns-2).
        let (mut s, _) = established(TcpConfig { initial_cwnd: 10, ..cfg() }, 100 * MSS);
        s.on_segment(ms(250), &ack(1001), &mut out);
        assert_eq!(s.timeout_resend(s.sb.get(2001).unwrap(), ms(250)), Resend::Now);
    }

    /// A pure ACK of 1 with SACK blocks in whole segments: `(2, 5)` is [2001, 5001).
    fn sack_segs(blocks: &[(u64, u64)]) -> Segment {
        let mut seg = ack(1);
        for (i, &(x, y)) in blocks.iter().enumerate() {
            seg.sack[i] = SackBlock { start: x * MSS + 1, end: y * MSS + 1 };
        }
        seg.n_sack = blocks.len() as u8;
        seg
    }

    /// The segments sent on an ACK at `t` ms and the bytes its rate sample reports lost.
    #[track_caller]
    fn step(s: &mut TcpSender, t: u64, blocks: &[(u64, u64)]) -> (Vec<(u64, u32, u16)>, u64) {
        let mut out = Vec::new();
        s.on_segment(SimTime::from_millis(t), &sack_segs(blocks), &mut out);
        (seqs(&out), s.rate_sample().losses)
    }

    /// `sack/bbr` (Fall & Floyd's recovery, BBR), ten segments sent at 100 ms, segments 1 and
    /// 5 lost; segments 2-4 SACKed at 201-203 ms, the fast retransmit at 203 ms.
    fn sack_bbr_losing_1_and_5() -> TcpSender {
        use super::super::config::CcKind;
        let c = TcpConfig { initial_cwnd: 10, cc: CcKind::Bbr, recovery: RecoveryKind::SackFallFloyd, ..cfg() };
        let (mut s, _) = established(c, 100 * MSS);
        s.on_segment(SimTime::from_millis(200), &ack(1), &mut Vec::new()); // the window scaled: an update
        step(&mut s, 201, &[(1, 2)]);
        step(&mut s, 202, &[(1, 3)]);
        assert_eq!(step(&mut s, 203, &[(1, 4)]), (vec![(1, 1000, 1)], MSS), "fast retransmit: segment 1 lost");
        s
    }

    /// Each ACK's rate sample carries the bytes it marked lost (Linux `rs->losses`, which BBR
    /// deducts from cwnd): segment 1 at the fast retransmit (above), segment 5 when a SACK
    /// above it shows the hole, nothing on an ACK that shows no new hole.
    #[test]
    fn bbr_sees_the_bytes_each_ack_marks_lost() {
        let mut s = sack_bbr_losing_1_and_5();
        assert_eq!(step(&mut s, 204, &[(6, 7), (1, 5)]), (vec![], MSS), "the hole at segment 5");
        assert_eq!(step(&mut s, 205, &[(6, 8), (1, 5)]), (vec![], 0));
        assert_eq!(step(&mut s, 300, &[(6, 11), (1, 5)]), (vec![(5001, 1000, 1)], 0), "the hole resent");
    }

    /// RACK (RFC 8985 §6.2 step 5) finds a lost retransmission: segment 5's retransmission,
    /// sent at 300 ms after segment 1's (203 ms), is SACKed at 400 ms (RACK.rtt 100 ms), so
    /// segment 1's retransmission is lost from 303 ms on (reo_wnd 0 in recovery without
    /// reordering): the ACK counts it lost and it is resent at once, where before it waited
    /// for the retransmission timer (503 ms) and its go-back-N; resending the head restarts
    /// the timer (Linux `tcp_xmit_retransmit_queue()`'s `rearm_timer`).
    #[test]
    fn bbr_resends_a_lost_retransmission_once_a_later_one_is_sacked() {
        let mut s = sack_bbr_losing_1_and_5();
        step(&mut s, 204, &[(6, 7), (1, 5)]);
        step(&mut s, 205, &[(6, 8), (1, 5)]);
        assert_eq!(step(&mut s, 300, &[(6, 11), (1, 5)]), (vec![(5001, 1000, 1)], 0));
        assert_eq!(step(&mut s, 400, &[(1, 11)]), (vec![(1, 1000, 2)], MSS), "segment 1's retransmission lost and resent");
        assert_eq!(s.timer, Timer::Retransmit { expires_at: SimTime::from_millis(400) + s.rto() });
        assert!(s.rto() >= SimTime::from_millis(200));
        // A segment sent before the retransmission, delivered, proves nothing (RFC 8985 §6.2
        // step 5 looks at segments sent after it): segment 11 ([10001, 11001)), sent at
        // 201 ms, SACKed only at 400 ms.
        let mut s = sack_bbr_losing_1_and_5();
        step(&mut s, 204, &[(6, 7), (1, 5)]);
        step(&mut s, 205, &[(6, 8), (1, 5)]);
        assert_eq!(step(&mut s, 300, &[(6, 10), (1, 5)]), (vec![(5001, 1000, 1)], 0));
        assert_eq!(step(&mut s, 400, &[(6, 11), (1, 5)]), (vec![(11001, 1000, 0)], 0), "new data, not segment 1");
        assert!(s.sb.get(1).unwrap().retransmitted, "still in flight");
    }

    /// RACK in the loss state of a timeout: ten segments at 100 ms, none acknowledged; the
    /// timeout (400 ms) resends segment 1, ACKed at 550 ms; the go-back-N resends segment 2
    /// at 550 ms (lost) and segment 3 at BBR's next pacing release (707.6 ms). Segment 3's
    /// resend SACKed at 860 ms (RACK.rtt 152.4 ms) shows segment 2's lost since 702.4 ms: it
    /// is out of flight (nothing left in flight, segment 3 SACKed) and resent at the next
    /// release (865.2 ms) before segment 4, where before it waited for the timer (1150 ms).
    #[test]
    fn bbr_resends_a_lost_go_back_n_retransmission_before_going_on() {
        // The retransmission timer's go-back-N: no tail loss probe first (`tcp.tlp` off).
        use super::super::config::CcKind;
        let ms = SimTime::from_millis;
        let c = TcpConfig { initial_cwnd: 10, cc: CcKind::Bbr, recovery: RecoveryKind::SackFallFloyd, tlp: false, ..cfg() };
        let (mut s, _) = established(c, 10 * MSS);
        let mut out = Vec::new();
        s.on_timer(ms(400), &mut out);
        s.on_segment(ms(550), &ack(1001), &mut out);
        let release = s.poll_at().unwrap();
        s.on_timer(release, &mut out);
        assert_eq!((seqs(&out), s.state()), (vec![(1, 1000, 1), (1001, 1000, 1), (2001, 1000, 1)], CongState::Loss));
        out.clear();
        let sacked = Segment { sack: [SackBlock { start: 2001, end: 3001 }, SackBlock::default(), SackBlock::default()], n_sack: 1, ..ack(1001) };
        s.on_segment(ms(860), &sacked, &mut out);
        assert_eq!((seqs(&out), s.rate_sample().losses, s.cc_in_flight()), (vec![], MSS, 0));
        let release = s.poll_at().unwrap();
        assert!(release < ms(870), "{release:?}: the pacer's, not the timer's");
        s.on_timer(release, &mut out);
        assert_eq!((seqs(&out), s.cc_in_flight()), (vec![(1001, 1000, 2)], MSS));
        assert_eq!(s.timer, Timer::Retransmit { expires_at: ms(1150) });
    }

    /// `sack/bbr` as the study runs it (Linux's estimator, a 1 ms tick), ten segments in the
    /// initial window: after the handshake (SYN-ACK at 100 ms) SRTT 100 ms and RTO 300 ms.
    fn tlp_cfg() -> TcpConfig {
        use super::super::config::CcKind;
        let ms = SimTime::from_millis;
        TcpConfig { initial_cwnd: 10, cc: CcKind::Bbr, recovery: RecoveryKind::SackFallFloyd, rtt_estimator: RttEstimatorKind::Linux, timer_granularity: ms(1), ..cfg() }
    }

    /// RACK's time rule on the originals outside recovery (RFC 8985 §6.2 step 5, Linux
    /// `tcp_rack_detect_loss()`, `tcp_rack_reo_timeout()`): ten segments at 100 ms, the first
    /// three lost, the fourth SACKed at 200 ms (one duplicate ACK, RACK.rtt 100 ms). The
    /// three were sent before it, so they are lost once RACK.rtt + reo_wnd has passed since
    /// they left: reo_wnd is min_RTT / 4 = 25 ms (fewer than three segments SACKed), so at
    /// 225 ms the reordering timer marks them lost and fast recovery starts with the first
    /// (Linux's `tcp_time_to_recover()`: `lost_out`), whatever the duplicate ACKs. Before, Fall
    /// & Floyd's three duplicate ACKs never came and the retransmission timer fired.
    #[test]
    fn bbr_starts_fast_recovery_when_racks_timer_finds_originals_lost() {
        let ms = SimTime::from_millis;
        let (mut s, out) = established(TcpConfig { tlp: false, ..tlp_cfg() }, 100 * MSS);
        assert_eq!(out.len(), 10);
        s.on_segment(ms(200), &ack(1), &mut Vec::new()); // the window scaled: an update
        assert_eq!(step(&mut s, 200, &[(3, 4)]), (vec![(10001, 1000, 0)], 0));
        assert_eq!((s.state(), s.rack_wait), (CongState::Disorder, Some(ms(225))), "RACK's reordering timer");
        assert!(timers_until(&mut s, ms(225)).iter().all(|g| g.tx_count == 0), "nothing resent before 225 ms");
        let out = timers_until(&mut s, ms(226));
        assert_eq!(seqs(&out).first(), Some(&(1, 1000, 1)), "the first lost segment resent at 225 ms");
        assert_eq!((s.state(), s.stats().fast_retransmits, s.stats().timeouts), (CongState::Recovery, 1, 0));
        assert_eq!(s.sb.lost_out(), 3 * MSS, "segments 1-3");
        // With three segments SACKed the reordering window is zero (Linux `tcp_rack_reo_wnd()`:
        // `sacked_out >= reordering`): the third SACK marks the hole and starts the recovery.
        let (mut s, _) = established(TcpConfig { tlp: false, ..tlp_cfg() }, 100 * MSS);
        s.on_segment(ms(200), &ack(1), &mut Vec::new());
        step(&mut s, 201, &[(1, 2)]);
        step(&mut s, 202, &[(1, 3)]);
        assert_eq!(step(&mut s, 203, &[(1, 4)]), (vec![(1, 1000, 1)], MSS));
        assert_eq!(s.state(), CongState::Recovery);
        // An ACK that is not a duplicate (the first, whose scaled window is an update) but
        // SACKs three segments still starts it (Linux `tcp_ack_is_dubious()`: SACKed data).
        let (mut s, _) = established(TcpConfig { tlp: false, ..tlp_cfg() }, 100 * MSS);
        let out = step(&mut s, 300, &[(7, 10)]).0;
        assert_eq!((s.state(), out.first()), (CongState::Recovery, Some(&(1, 1000, 1))));
    }

    /// Runs the sender's timers up to `until` (exclusive); returns what they sent.
    fn timers_until(s: &mut TcpSender, until: SimTime) -> Vec<Segment> {
        let mut out = Vec::new();
        while let Some(p) = s.poll_at().filter(|&p| p < until) {
            s.on_timer(p, &mut out);
        }
        out
    }

    /// RFC 8985 §7 under BBR (Linux `tcp_schedule_loss_probe()`, `tcp_send_loss_probe()`,
    /// `tcp_process_tlp_ack()`): ten segments at 100 ms, all ACKed at 200 ms, three more sent
    /// then (at BBR's pacing releases); the ACKs of the first two are lost and the third,
    /// the last segment, is lost. With more than one segment out and no ACK since, the probe
    /// is due 2 SRTT + 2 ms after the last send; nothing is left to send, so it resends the
    /// last segment, whose ACK (all data, 100 ms later) repairs the tail without a timeout.
    /// The loss counts as repaired when an ACK passes the probe's `snd_nxt` (Linux `after()`).
    #[test]
    fn bbr_probes_a_lost_last_segment_2_srtt_after_the_last_send() {
        let ms = SimTime::from_millis;
        let (mut s, out) = established(tlp_cfg(), 10 * MSS);
        assert_eq!(out.len(), 10);
        let mut out = Vec::new();
        s.on_segment(ms(200), &ack(10 * MSS + 1), &mut out);
        s.app_send(ms(200), 3 * MSS, &mut out);
        assert_eq!(s.srtt(), Some(ms(100)));
        let mut sent = timers_until(&mut s, ms(300));
        sent.splice(0..0, out);
        assert_eq!(seqs(&sent), vec![(10001, 1000, 0), (11001, 1000, 0), (12001, 1000, 0)]);
        let last_send = s.sb.last().unwrap().last_sent;
        let pto = last_send + ms(202);
        assert_eq!(s.poll_at(), Some(pto), "2 SRTT + 2 ms after the last send (last send at {last_send})");
        assert_eq!(s.timer, Timer::LossProbe { expires_at: pto });
        let out = timers_until(&mut s, pto + SimTime::from_nanos(1));
        assert_eq!(seqs(&out), vec![(12001, 1000, 1)], "the last segment resent");
        assert_eq!((s.loss_probes(), s.stats().timeouts, s.state()), (1, 0, CongState::Open));
        assert_eq!(s.timer, Timer::Retransmit { expires_at: pto + s.rto() }, "a whole RTO from the probe");
        // Its ACK: everything, no timeout; the episode stays open until an ACK passes it.
        let mut out = Vec::new();
        s.on_segment(pto + ms(100), &ack(13 * MSS + 1), &mut out);
        assert!(s.all_acked());
        assert_eq!((s.loss_probe_recoveries(), s.stats().timeouts), (0, 0));
        s.app_send(pto + ms(150), MSS, &mut out);
        s.on_segment(pto + ms(250), &ack(14 * MSS + 1), &mut out);
        let st = s.stats();
        assert_eq!((s.loss_probes(), s.loss_probe_recoveries(), st.timeouts, st.fast_retransmits), (1, 1, 0, 0));
        assert!(s.rack.as_ref().unwrap().tlp.high_seq.is_none(), "the episode ended");
    }

    /// With one segment out the probe waits 2 SRTT + `min_rto` for a delayed ACK, but never
    /// longer than the RTO: ten segments at 100 ms, the first nine ACKed at 200 ms (the last
    /// lost). RTO 300 ms < 2 x 100 + 200 ms: the probe replaces the timeout at 500 ms; with
    /// `min_rto` 10 ms (the RTO still 300 ms: RTTVAR starts at twice the first sample) it
    /// comes at 200 + 2 x 100 + 10 ms.
    #[test]
    fn bbr_probes_a_lone_segment_after_2_srtt_and_min_rto_capped_by_the_rto() {
        let ms = SimTime::from_millis;
        let (mut s, _) = established(tlp_cfg(), 10 * MSS);
        let mut out = Vec::new();
        s.on_segment(ms(200), &ack(9 * MSS + 1), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.rto(), ms(300));
        assert_eq!(s.timer, Timer::LossProbe { expires_at: ms(500) }, "capped by the RTO");
        let out = timers_until(&mut s, ms(501));
        assert_eq!(seqs(&out), vec![(9001, 1000, 1)]);
        assert_eq!((s.loss_probes(), s.stats().timeouts), (1, 0));
        let (mut s, _) = established(TcpConfig { min_rto: ms(10), ..tlp_cfg() }, 10 * MSS);
        s.on_segment(ms(200), &ack(9 * MSS + 1), &mut Vec::new());
        assert!(s.rto() > ms(210), "{}", s.rto());
        assert_eq!(s.timer, Timer::LossProbe { expires_at: ms(410) }, "2 SRTT + min_rto");
    }

    /// Data the peer's window takes but cwnd does not: the probe is one new segment, beyond
    /// cwnd (Linux `tcp_write_xmit(..., push_one = 2)`), and a probe of new data ends its
    /// episode when acknowledged, with no loss counted.
    #[test]
    fn bbr_probes_with_one_new_segment_when_the_window_allows() {
        let ms = SimTime::from_millis;
        let (mut s, out) = established(tlp_cfg(), 100 * MSS);
        assert_eq!(out.len(), 10, "cwnd-limited");
        assert_eq!(s.timer, Timer::LossProbe { expires_at: ms(302) }, "sent at 100 ms: 2 SRTT + 2 ms");
        let out = timers_until(&mut s, ms(303));
        assert_eq!(seqs(&out), vec![(10001, 1000, 0)], "one new segment");
        assert_eq!((s.loss_probes(), s.rack.as_ref().unwrap().tlp.retrans), (1, false));
        assert_eq!(s.rack.as_ref().unwrap().tlp.high_seq, Some(11001));
        let mut out = Vec::new();
        s.on_segment(ms(402), &ack(11 * MSS + 1), &mut out);
        assert!(s.rack.as_ref().unwrap().tlp.high_seq.is_none());
        assert_eq!(s.loss_probe_recoveries(), 0);
    }

    /// At most one probe outstanding (`tlp_high_seq`): when the timer comes again before the
    /// first probe's episode ended, the retransmission timer takes over for what is left of
    /// the RTO since the first unacknowledged segment was sent; and no probe is scheduled
    /// in fast recovery.
    #[test]
    fn bbr_sends_one_probe_at_a_time_and_none_in_recovery() {
        let ms = SimTime::from_millis;
        let (mut s, _) = established(tlp_cfg(), 10 * MSS);
        let pto = s.poll_at().unwrap();
        assert_eq!(pto, ms(302));
        let out = timers_until(&mut s, pto + SimTime::from_nanos(1));
        assert_eq!(seqs(&out), vec![(9001, 1000, 1)], "nothing new to send: the last segment");
        // A second probe timer while the first probe is unanswered: none sent.
        s.timer = Timer::LossProbe { expires_at: ms(350) };
        let out = timers_until(&mut s, ms(351));
        assert!(out.is_empty());
        assert_eq!(s.loss_probes(), 1);
        assert_eq!(s.timer, Timer::Retransmit { expires_at: ms(100) + s.rto() }, "the RTO since segment 1 was sent");
        // Fast recovery: the recovery's timer, no probe.
        let mut s = sack_bbr_losing_1_and_5();
        assert_eq!(s.state(), CongState::Recovery);
        assert!(matches!(s.timer, Timer::Retransmit { .. }));
        step(&mut s, 204, &[(6, 7), (1, 5)]);
        step(&mut s, 300, &[(6, 11), (1, 5)]);
        assert!(matches!(s.timer, Timer::Retransmit { .. }), "{:?}", s.timer);
        assert_eq!(s.loss_probes(), 0);
    }

    /// Through the test network (tcp/testkit.rs, which checks that every byte is delivered
    /// once and in order): a 50-segment BBR transfer on the GEO path whose last segment is
    /// lost once completes after one probe and no timeout; without the probe (`tcp.tlp`
    /// off), after a timeout, later.
    #[test]
    fn a_bbr_transfer_whose_last_segment_is_lost_completes_after_a_probe() {
        use super::super::testkit::{Net, Path};
        let total = 50 * MSS;
        let run = |tlp: bool| {
            let c = TcpConfig { window_scale: 8, tlp, ..tlp_cfg() };
            let mut net = Net::new(Path::geo(), c, move |id| id.offset == total - MSS && id.tx_count == 0);
            net.start(total);
            assert!(net.run_to_completion(SimTime::from_secs(60)));
            assert_eq!(net.delivered(), total);
            (net.sender.loss_probes(), net.sender.stats().timeouts, net.delivered_at(total).unwrap())
        };
        let (probes, timeouts, done) = run(true);
        let (probes_off, timeouts_off, done_off) = run(false);
        assert_eq!((probes, timeouts, probes_off, timeouts_off), (1, 0, 0, 1));
        assert!(done < done_off, "{done} against {done_off}");
    }

    /// The same lost last segment without RACK (Reno): no probe, the retransmission timer.
    #[test]
    fn reno_has_no_tail_loss_probe() {
        let ms = SimTime::from_millis;
        let c = TcpConfig { recovery: RecoveryKind::SackFallFloyd, ..tlp_cfg() };
        let c = TcpConfig { cc: super::super::config::CcKind::RenoAimd, ..c };
        let (mut s, out) = established(c, 10 * MSS);
        assert_eq!(out.len(), 10);
        let mut out = Vec::new();
        s.on_segment(ms(200), &ack(9 * MSS + 1), &mut out);
        assert!(matches!(s.timer, Timer::Retransmit { .. }));
        let rto = s.poll_at().unwrap();
        let out = timers_until(&mut s, rto + SimTime::from_nanos(1));
        assert_eq!(seqs(&out), vec![(9001, 1000, 1)]);
        assert_eq!((s.loss_probes(), s.stats().timeouts, s.state()), (0, 1, CongState::Loss));
        // BBR with `tcp.tlp` off likewise.
        let (mut s, _) = established(TcpConfig { tlp: false, ..tlp_cfg() }, 10 * MSS);
        s.on_segment(ms(200), &ack(9 * MSS + 1), &mut Vec::new());
        assert!(matches!(s.timer, Timer::Retransmit { .. }));
    }

    #[test]
    fn pacing_spaces_segments_by_length_over_rate() {
        let (s, out) = established(TcpConfig { initial_cwnd: 10, ..cfg() }, 100 * MSS);
        assert_eq!((out.len(), s.pacing_rate()), (10, None), "no pacing by default: a whole window at once");
        let mut s2 = TcpSender::new(TcpConfig { initial_cwnd: 10, ..cfg() });
        let mut out = Vec::new();
        s2.set_pacing_rate(Some(1_000_000)); // 1 MB/s: one 1000-byte segment per millisecond
        assert_eq!(s2.pacing_rate(), Some(1_000_000), "mutation testing: `pacing_rate()` as `None` went unnoticed");
        s2.connect(T0, &mut out);
        s2.app_send(T0, 100 * MSS, &mut out);
        out.clear();
        let t0 = SimTime::from_millis(100);
        s2.on_segment(t0, &SYN_ACK, &mut out);
        assert_eq!(out.len(), 1, "one segment, then wait for the pacer");
        let mut times = vec![t0];
        while times.len() < 10 {
            let t = s2.poll_at().unwrap();
            let n = out.len();
            s2.on_timer(t, &mut out);
            assert_eq!(out.len(), n + 1, "one segment per release");
            times.push(t);
        }
        let gaps: Vec<SimTime> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps, vec![SimTime::from_millis(1); 9]);
        assert_eq!(s2.poll_at(), Some(times[0] + s2.rto()), "cwnd used up: only the retransmission timer is left");
    }

    #[test]
    fn flavour_names() {
        use super::super::config::{flavor, CcKind, RecoveryKind};
        assert_eq!(flavor("newreno"), Some((RecoveryKind::NewrenoNs2, CcKind::RenoAimd)));
        assert_eq!(flavor("sack"), Some((RecoveryKind::SackFallFloyd, CcKind::RenoAimd)));
        assert_eq!(flavor("tahoe"), Some((RecoveryKind::Tahoe, CcKind::RenoAimd)));
        assert_eq!(flavor("westwood"), None);
        assert_eq!(flavor("sack/cubic"), Some((RecoveryKind::SackFallFloyd, CcKind::Cubic)));
        assert_eq!(flavor("newreno/hybla"), Some((RecoveryKind::NewrenoNs2, CcKind::Hybla)));
        // BBR and Westwood+ are congestion controls (issue 14), selected by suffix; an unknown
        // suffix is still refused.
        assert_eq!(flavor("reno/bbr"), Some((RecoveryKind::Reno, CcKind::Bbr)));
        assert_eq!(flavor("sack_rfc6675/westwood"), Some((RecoveryKind::SackRfc6675, CcKind::Westwood)));
        assert_eq!(flavor("reno/vegas"), None);
        assert!(TcpConfig::default().with_flavor("sack").unwrap().sack);
        assert!(!TcpConfig::default().with_flavor("reno").unwrap().sack);
    }

    /// The hand layout (issue 15): the per-segment state fills the first four lines.
    #[test]
    fn the_per_segment_state_fills_the_first_lines() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<TcpSender>(), 64);
        assert!(offset_of!(TcpSender, fin) < 64, "line 1: sequence state and flags");
        assert_eq!((offset_of!(TcpSender, win), offset_of!(TcpSender, sb), offset_of!(TcpSender, snd_buf)), (64, 128, 192));
        assert!(offset_of!(TcpSender, pacer) + std::mem::size_of::<Pacer>() <= 256, "line 4: send buffer, ns-2 switches, pacer");
    }
}
