//! The SGW end of one satellite connection: the per-connection buffer, the client's window,
//! the error control of seed 004 §III.B and the SACK semantics of §IV.
//!
//! - **One buffer** (seed 004 §II.A, figure 2): the bytes the terrestrial leg handed over wait
//!   here until the client holds them; "receive buffer and send buffer ... represented by one
//!   buffer". [`SatSender::space`] is what the terrestrial receiver may advertise to the server,
//!   so back-pressure reaches the server only through its advertised window.
//! - **No congestion control** (§III.A): no slow start, no window reduction, no backoff. The
//!   sender offers a packet whenever the round-robin scheduler asks and it has one: a lost
//!   segment first ("sent with higher priority than new packets"), else the next new segment if
//!   the client's window allows it. The client's window is counted in segments (§III.A).
//! - **Error control** (§III.B): losses are found by [`InOrderLossDetector`]; a timer "with a
//!   finer granularity" is the last resort and, when it expires, sends "two copies of the lost
//!   packet" (here: the first segment the client does not hold). The timeout is computed as in
//!   RFC 6298 from RTT samples of segments sent once (Karn), rounded up to the timer
//!   granularity, without backoff (§III.A: "there is no need to exponentially back off the timer
//!   after timeout because congestion is taken care of by the scheduler").
//! - **SACK semantics** (§IV): with [`SackSemantics::Normal`] a SACKed segment stays in the
//!   buffer until the cumulative ACK passes it and a timeout clears the SACK state (RFC 2018
//!   §8); with [`SackSemantics::Modified`] it leaves the buffer at once and the SACK state
//!   survives timeouts, so only corrupted segments occupy the buffer.

use super::loss::InOrderLossDetector;
use super::{SackSemantics, SatAck, SegNo};
use crate::time::SimTime;
use std::collections::VecDeque;

/// Timer defaults: the seed gives the TCP timer granularity (100 ms, §V.A) and says the
/// satellite timer is finer; we take 10 ms, a parameter (docs/gateway.md).
pub const DEFAULT_TIMER_GRANULARITY: SimTime = SimTime::from_millis(10);
/// Before the first RTT sample (RFC 6298 (2.1) uses 1 s).
pub const DEFAULT_INITIAL_RTO: SimTime = SimTime::from_secs(1);
/// Copies sent when the timer expires (seed 004 §III.B: "two copies of the lost packet").
pub const DEFAULT_TIMER_COPIES: u8 = 2;

#[derive(Clone, Debug, PartialEq)]
pub struct SatSenderConfig {
    /// Segment size in payload bytes (the same for every connection, §III.A).
    pub mss: u32,
    /// The connection's SGW buffer in bytes (§II.A: set from a static peak rate x RTT).
    pub buffer: u64,
    pub semantics: SackSemantics,
    pub timer_granularity: SimTime,
    pub initial_rto: SimTime,
    pub timer_copies: u8,
    /// The client's window before its first ACK, in segments (from its SYN).
    pub initial_window_segs: u16,
}

impl SatSenderConfig {
    pub fn new(mss: u32, buffer: u64, semantics: SackSemantics, initial_window_segs: u16) -> Self {
        SatSenderConfig {
            mss,
            buffer,
            semantics,
            timer_granularity: DEFAULT_TIMER_GRANULARITY,
            initial_rto: DEFAULT_INITIAL_RTO,
            timer_copies: DEFAULT_TIMER_COPIES,
            initial_window_segs,
        }
    }
}

/// A packet the scheduler takes from this connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SatSegment {
    pub seg: SegNo,
    /// Payload bytes (`mss`, or less for the stream's last segment).
    pub len: u32,
    /// 0 for the first transmission.
    pub tx_count: u16,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Held {
    /// Sent, fate unknown (or queued for retransmission).
    Out,
    /// SACKed by the client.
    Sacked,
}

#[derive(Copy, Clone, Debug)]
struct SegState {
    held: Held,
    /// Its bytes already left the buffer (modified semantics release SACKed segments).
    released: bool,
    /// Waiting in the retransmission queue.
    queued: bool,
    tx_count: u16,
    first_sent: SimTime,
}

/// Counters of one satellite connection.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SatSenderStats {
    pub segments_sent: u64,
    pub segments_retransmitted: u64,
    pub bytes_sent: u64,
    pub losses_detected: u64,
    pub timeouts: u64,
    pub acks_received: u64,
    /// Most bytes held in the buffer at once.
    pub peak_held: u64,
}

pub struct SatSender {
    cfg: SatSenderConfig,
    /// Stream bytes accepted from the terrestrial leg.
    accepted: u64,
    /// Bytes of `accepted` still in the buffer.
    held: u64,
    /// The terrestrial leg ended: the last, shorter segment may go.
    closed: bool,
    /// Every segment below it is held by the client.
    cum: SegNo,
    /// The next segment never sent.
    next_new: SegNo,
    /// Segments `[cum, next_new)`.
    segs: VecDeque<SegState>,
    /// Segments to retransmit, in order (a timer expiry queues several copies of one). Only
    /// segments the client lacks: in `[cum, next_new)` and not SACKed ([`SatSender::on_ack`]
    /// drops the others), so that [`SatSender::ready`] is true exactly when
    /// [`SatSender::next_packet`] has a packet.
    retx: VecDeque<SegNo>,
    window_segs: u64,
    detector: InOrderLossDetector,
    srtt: Option<SimTime>,
    rttvar: SimTime,
    timer: Option<SimTime>,
    stats: SatSenderStats,
    lost: Vec<SegNo>,
}

impl SatSender {
    pub fn new(cfg: SatSenderConfig) -> Self {
        SatSender {
            window_segs: cfg.initial_window_segs as u64,
            cfg,
            accepted: 0,
            held: 0,
            closed: false,
            cum: 0,
            next_new: 0,
            segs: VecDeque::new(),
            retx: VecDeque::new(),
            detector: InOrderLossDetector::new(),
            srtt: None,
            rttvar: SimTime::ZERO,
            timer: None,
            stats: SatSenderStats::default(),
            lost: Vec::new(),
        }
    }

    pub fn config(&self) -> &SatSenderConfig {
        &self.cfg
    }
    pub fn stats(&self) -> &SatSenderStats {
        &self.stats
    }
    /// Bytes in the buffer (unsent, or sent and not yet released).
    pub fn held(&self) -> u64 {
        self.held
    }
    /// Free buffer space: what the terrestrial leg may still hand over.
    pub fn space(&self) -> u64 {
        self.cfg.buffer.saturating_sub(self.held)
    }
    /// Bytes handed over and not yet sent once ("backlogged packets", seed 004 figure 6).
    pub fn backlog(&self) -> u64 {
        self.accepted.saturating_sub(self.next_new * self.cfg.mss as u64)
    }
    /// Segments the client holds in order.
    pub fn cum(&self) -> SegNo {
        self.cum
    }
    /// Segments sent and neither acknowledged nor known lost ("data in flight").
    pub fn in_flight(&self) -> u64 {
        self.segs.iter().filter(|s| s.held == Held::Out && !s.queued).count() as u64
    }
    /// All accepted bytes are held by the client and the stream is closed.
    pub fn is_done(&self) -> bool {
        self.closed && self.cum * self.cfg.mss as u64 >= self.accepted
    }

    /// The terrestrial leg hands over `bytes`; returns how many fit in the buffer.
    pub fn push(&mut self, bytes: u64) -> u64 {
        let n = bytes.min(self.space());
        self.accepted += n;
        self.held += n;
        self.stats.peak_held = self.stats.peak_held.max(self.held);
        n
    }

    /// The terrestrial leg has no more data: the stream's last segment may be shorter.
    pub fn close(&mut self) {
        self.closed = true;
    }

    fn seg_len(&self, seg: SegNo) -> u32 {
        let mss = self.cfg.mss as u64;
        (self.accepted.saturating_sub(seg * mss)).min(mss) as u32
    }

    fn new_seg_ready(&self) -> bool {
        let mss = self.cfg.mss as u64;
        let start = self.next_new * mss;
        let complete = self.accepted >= start + mss || (self.closed && self.accepted > start);
        complete && self.next_new < self.cum + self.window_segs
    }

    /// True when a packet can go now (the scheduler skips this connection otherwise).
    pub fn ready(&self) -> bool {
        !self.retx.is_empty() || self.new_seg_ready()
    }

    fn state_mut(&mut self, seg: SegNo) -> Option<&mut SegState> {
        seg.checked_sub(self.cum).and_then(|i| self.segs.get_mut(i as usize))
    }

    /// The scheduler takes the next packet of this connection: a lost one first, else a new
    /// one. `None` if nothing is ready.
    pub fn next_packet(&mut self, now: SimTime) -> Option<SatSegment> {
        if let Some(seg) = self.retx.pop_front() {
            // A timer expiry queues two copies: the segment stays queued until the last leaves.
            let another_copy = self.retx.contains(&seg);
            let st = self.state_mut(seg).filter(|st| st.held == Held::Out).expect("the retransmission queue holds only segments the client lacks");
            st.tx_count += 1;
            let tx_count = st.tx_count;
            st.queued = another_copy;
            let len = self.seg_len(seg);
            self.stats.segments_retransmitted += 1;
            return Some(self.sent(now, seg, len, tx_count));
        }
        if !self.new_seg_ready() {
            return None;
        }
        let seg = self.next_new;
        self.next_new += 1;
        self.segs.push_back(SegState { held: Held::Out, released: false, queued: false, tx_count: 0, first_sent: now });
        let len = self.seg_len(seg);
        Some(self.sent(now, seg, len, 0))
    }

    fn sent(&mut self, now: SimTime, seg: SegNo, len: u32, tx_count: u16) -> SatSegment {
        self.detector.on_send(seg);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        if self.timer.is_none() {
            self.timer = Some(now + self.rto());
        }
        SatSegment { seg, len, tx_count }
    }

    /// RFC 6298 (2.3) without backoff, rounded up to the timer granularity.
    pub fn rto(&self) -> SimTime {
        let raw = match self.srtt {
            None => self.cfg.initial_rto,
            Some(srtt) => srtt + self.rttvar.times(4).max(self.cfg.timer_granularity),
        };
        let g = self.cfg.timer_granularity.as_nanos().max(1);
        SimTime(raw.as_nanos().div_ceil(g) * g)
    }

    fn rtt_sample(&mut self, r: SimTime) {
        // RFC 6298 (2.2), (2.3): alpha = 1/8, beta = 1/4.
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = SimTime(r.as_nanos() / 2);
            }
            Some(s) => {
                let dev = s.as_nanos().abs_diff(r.as_nanos());
                self.rttvar = SimTime((3 * self.rttvar.as_nanos() + dev) / 4);
                self.srtt = Some(SimTime((7 * s.as_nanos() + r.as_nanos()) / 8));
            }
        }
    }

    /// An ACK from the client. Returns the bytes released from the buffer (room for the
    /// terrestrial leg).
    pub fn on_ack(&mut self, now: SimTime, ack: &SatAck) -> u64 {
        self.stats.acks_received += 1;
        self.window_segs = ack.window_segs as u64;
        let modified = self.cfg.semantics == SackSemantics::Modified;
        let mut released = 0;
        let mut progress = false;
        let mut sample = None;
        // Cumulative part.
        while self.cum < ack.cum.min(self.next_new) {
            let st = self.segs.pop_front().expect("state for every segment in flight");
            if !st.released {
                released += self.seg_len(self.cum) as u64;
            }
            if st.tx_count == 0 && st.held == Held::Out {
                sample = Some(now - st.first_sent);
            }
            self.cum += 1;
            progress = true;
        }
        // Selective part.
        for b in ack.blocks() {
            for seg in b.start.max(self.cum)..b.end.min(self.next_new) {
                let len = self.seg_len(seg) as u64;
                let st = self.state_mut(seg).expect("segment in flight");
                if st.held == Held::Sacked {
                    continue;
                }
                st.held = Held::Sacked;
                progress = true;
                if st.tx_count == 0 {
                    sample = Some(now - st.first_sent);
                }
                if modified && !st.released {
                    st.released = true;
                    released += len;
                }
            }
        }
        if let Some(r) = sample {
            self.rtt_sample(r);
        }
        if progress {
            self.drop_held_from_retx();
        }
        // Loss detection from the sending order.
        let rightmost = ack.blocks().iter().map(|b| b.end.saturating_sub(1)).filter(|&s| s >= self.cum).max();
        let mut lost = std::mem::take(&mut self.lost);
        lost.clear();
        {
            let (cum, segs) = (self.cum, &self.segs);
            let acked = |s: SegNo| s < cum || s.checked_sub(cum).and_then(|i| segs.get(i as usize)).is_none_or(|st| st.held == Held::Sacked);
            self.detector.on_ack(self.cum, rightmost, acked, &mut lost);
        }
        for &seg in &lost {
            if let Some(st) = self.state_mut(seg) {
                if !st.queued {
                    st.queued = true;
                    self.retx.push_back(seg);
                    self.stats.losses_detected += 1;
                }
            }
        }
        self.lost = lost;
        self.held -= released;
        if progress {
            self.timer = (self.cum < self.next_new).then(|| now + self.rto());
        }
        released
    }

    /// Drops from the retransmission queue the segments the client now holds (cumulatively
    /// acknowledged or SACKed since they were queued: the timer's first copy arrived, or a
    /// loss was declared in error). Left there, they made `ready()` true with no packet to
    /// send, and the gateway's transmitter panicked.
    fn drop_held_from_retx(&mut self) {
        let (cum, segs) = (self.cum, &mut self.segs);
        self.retx.retain(|&seg| match seg.checked_sub(cum).and_then(|i| segs.get_mut(i as usize)) {
            Some(st) if st.held == Held::Out => true,
            Some(st) => {
                st.queued = false;
                false
            }
            None => false,
        });
    }

    /// When the timer expires, if armed.
    pub fn poll_at(&self) -> Option<SimTime> {
        self.timer
    }

    /// The timer expired: queue copies of the first segment the client lacks, first in line.
    pub fn on_timer(&mut self, now: SimTime) {
        match self.timer {
            Some(t) if t <= now => {}
            _ => return,
        }
        if self.cum >= self.next_new {
            self.timer = None;
            return;
        }
        self.stats.timeouts += 1;
        if self.cfg.semantics == SackSemantics::Normal {
            // RFC 2018 §8: after a timeout the sender forgets what was SACKed.
            for st in self.segs.iter_mut() {
                st.held = Held::Out;
            }
            self.detector.reset_rightmost();
        }
        let seg = self.cum;
        // The first segment the client lacks (a SACK block never covers the cumulative
        // point, so it is `Out`; checked so that the queue keeps its invariant whatever the
        // ACKs said).
        if let Some(st) = self.state_mut(seg).filter(|st| st.held == Held::Out) {
            st.queued = true;
            for _ in 0..self.cfg.timer_copies {
                self.retx.push_front(seg);
            }
        }
        self.timer = Some(now + self.rto());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pep::{SegBlock, MAX_SAT_SACK_BLOCKS};

    const MSS: u32 = 512;

    fn sender(semantics: SackSemantics, buffer_segs: u64) -> SatSender {
        SatSender::new(SatSenderConfig::new(MSS, buffer_segs * MSS as u64, semantics, 1000))
    }

    fn ack(cum: SegNo, blocks: &[(SegNo, SegNo)]) -> SatAck {
        let mut a = SatAck { cum, window_segs: 1000, ..Default::default() };
        for (i, &(start, end)) in blocks.iter().take(MAX_SAT_SACK_BLOCKS).enumerate() {
            a.sack[i] = SegBlock { start, end };
        }
        a.n_sack = blocks.len().min(MAX_SAT_SACK_BLOCKS) as u8;
        a
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Sends every ready packet at `now`, returning the segment numbers.
    fn drain(s: &mut SatSender, now: SimTime) -> Vec<SegNo> {
        std::iter::from_fn(|| s.next_packet(now).map(|p| p.seg)).collect()
    }

    #[test]
    fn the_buffer_limits_what_the_terrestrial_leg_hands_over() {
        let mut s = sender(SackSemantics::Modified, 4);
        assert_eq!(s.push(10_000), 4 * 512);
        assert_eq!(s.space(), 0);
        assert_eq!(drain(&mut s, t(0)), [0, 1, 2, 3]);
        // Sending does not free the buffer; acknowledgement does.
        assert_eq!(s.space(), 0);
        assert_eq!(s.on_ack(t(500), &ack(2, &[])), 1024);
        assert_eq!(s.space(), 1024);
        assert_eq!(s.push(10_000), 1024);
    }

    #[test]
    fn only_full_segments_go_until_the_stream_closes() {
        let mut s = sender(SackSemantics::Modified, 100);
        s.push(1300);
        assert_eq!(drain(&mut s, t(0)), [0, 1]);
        assert!(!s.ready());
        s.close();
        let p = s.next_packet(t(1)).unwrap();
        assert_eq!((p.seg, p.len), (2, 276));
        s.on_ack(t(600), &ack(3, &[]));
        assert!(s.is_done());
        assert_eq!(s.held(), 0);
    }

    #[test]
    fn the_client_window_in_segments_limits_new_data_only() {
        let mut s = SatSender::new(SatSenderConfig::new(MSS, 100 * 512, SackSemantics::Modified, 3));
        s.push(100 * 512);
        assert_eq!(drain(&mut s, t(0)), [0, 1, 2]);
        // Window 3 from cum 1: segment 3 may go; 1 is lost (SACK of 2) and is resent anyway.
        let mut a = ack(1, &[(2, 3)]);
        a.window_segs = 3;
        s.on_ack(t(500), &a);
        assert_eq!(drain(&mut s, t(500)), [1, 3]);
    }

    #[test]
    fn lost_segments_go_before_new_ones() {
        let mut s = sender(SackSemantics::Modified, 100);
        s.push(100 * 512);
        assert_eq!(drain(&mut s, t(0)).len(), 100);
        s.push(0);
        // 5 and 7 corrupted.
        s.on_ack(t(500), &ack(5, &[(8, 9), (6, 7)]));
        assert_eq!(s.stats().losses_detected, 2);
        let first_two: Vec<_> = (0..2).map(|_| s.next_packet(t(501)).unwrap()).collect();
        assert_eq!(first_two.iter().map(|p| (p.seg, p.tx_count)).collect::<Vec<_>>(), [(5, 1), (7, 1)]);
    }

    #[test]
    fn modified_semantics_release_sacked_segments_at_once() {
        let mut m = sender(SackSemantics::Modified, 10);
        let mut n = sender(SackSemantics::Normal, 10);
        for s in [&mut m, &mut n] {
            s.push(10 * 512);
            drain(s, t(0));
        }
        // Segment 0 corrupted; 1..9 SACKed.
        let a = ack(0, &[(1, 10)]);
        assert_eq!(m.on_ack(t(500), &a), 9 * 512);
        assert_eq!(n.on_ack(t(500), &a), 0);
        assert_eq!((m.held(), n.held()), (512, 10 * 512));
        // The retransmission of 0 arrives: both are empty now.
        assert_eq!(m.on_ack(t(1000), &ack(10, &[])), 512);
        assert_eq!(n.on_ack(t(1000), &ack(10, &[])), 10 * 512);
        assert_eq!((m.held(), n.held()), (0, 0));
    }

    #[test]
    fn the_timer_sends_two_copies_of_the_first_missing_segment_without_backoff() {
        let mut s = sender(SackSemantics::Modified, 10);
        s.push(3 * 512);
        drain(&mut s, t(0));
        let rto = s.rto();
        assert_eq!(rto, DEFAULT_INITIAL_RTO);
        assert_eq!(s.poll_at(), Some(rto));
        s.on_timer(rto);
        let copies: Vec<_> = std::iter::from_fn(|| s.next_packet(rto)).collect();
        assert_eq!(copies.iter().map(|p| (p.seg, p.tx_count)).collect::<Vec<_>>(), [(0, 1), (0, 2)]);
        assert_eq!(s.stats().timeouts, 1);
        // No backoff: the next expiry is one RTO later again.
        assert_eq!(s.poll_at(), Some(rto + rto));
    }

    #[test]
    fn normal_semantics_forget_sacks_on_timeout_modified_keep_them() {
        for (semantics, held_after) in [(SackSemantics::Normal, 4 * 512), (SackSemantics::Modified, 512)] {
            let mut s = sender(semantics, 10);
            s.push(4 * 512);
            drain(&mut s, t(0));
            s.on_ack(t(500), &ack(0, &[(1, 4)]));
            // The retransmission of 0 is lost as well; the timer fires.
            drain(&mut s, t(500));
            let at = s.poll_at().unwrap();
            s.on_timer(at);
            assert_eq!(s.held(), held_after, "{semantics:?}");
            let resent: Vec<_> = drain(&mut s, at);
            assert_eq!(resent, [0, 0], "{semantics:?}: only the missing segment is resent");
        }
    }

    /// The scheduler asks `ready()`, then takes `next_packet()`: the two must agree.
    #[track_caller]
    fn assert_ready_agrees(s: &mut SatSender, now: SimTime) {
        let ready = s.ready();
        assert_eq!(ready, s.next_packet(now).is_some(), "ready() said {ready}");
    }

    /// A copy queued for retransmission whose segment the client then acknowledges (the
    /// first of the timer's copies arrived) is no packet to send: `ready()` said there was one
    /// while `next_packet()` skipped it, and the gateway's transmitter panicked ("a ready
    /// connection has a packet"; timer_copies = 3 at BER 1e-4, review of 2026-11-29).
    #[test]
    fn a_queued_copy_acknowledged_cumulatively_is_not_ready() {
        let mut s = sender(SackSemantics::Modified, 10);
        s.push(2 * 512);
        assert_eq!(drain(&mut s, t(0)), [0, 1]);
        // Segment 0 lost; the timer queues three copies, the first leaves.
        s.cfg.timer_copies = 3;
        let at = s.poll_at().unwrap();
        s.on_timer(at);
        assert_eq!(s.next_packet(at).map(|p| (p.seg, p.tx_count)), Some((0, 1)));
        // It arrives: the client holds both segments; nothing else to send.
        s.on_ack(at + t(500), &ack(2, &[]));
        assert!(!s.ready(), "the two copies left are acknowledged");
        assert_ready_agrees(&mut s, at + t(500));
        // New data goes as usual.
        s.push(512);
        assert_eq!(drain(&mut s, at + t(501)), [2]);
    }

    /// Likewise a segment queued as lost that a later ACK SACKs (a spurious loss): it is not
    /// resent, and `ready()` says so, under both semantics.
    #[test]
    fn a_queued_segment_sacked_later_is_not_ready() {
        for semantics in [SackSemantics::Normal, SackSemantics::Modified] {
            let mut s = SatSender::new(SatSenderConfig::new(MSS, 100 * 512, semantics, 4));
            s.push(100 * 512);
            assert_eq!(drain(&mut s, t(0)), [0, 1, 2, 3]);
            // 2 SACKed: 0 and 1 declared lost, 0 resent; the window (4 from 0) is full.
            let mut a = ack(0, &[(2, 3)]);
            a.window_segs = 4;
            s.on_ack(t(500), &a);
            assert_eq!(s.next_packet(t(500)).map(|p| p.seg), Some(0));
            // 1 was not lost after all.
            let mut a = ack(0, &[(1, 3)]);
            a.window_segs = 4;
            s.on_ack(t(510), &a);
            assert!(!s.ready(), "{semantics:?}: 1 is SACKed, 4 beyond the window");
            assert_ready_agrees(&mut s, t(510));
        }
    }

    #[test]
    fn rtt_samples_come_from_segments_sent_once() {
        let mut s = sender(SackSemantics::Modified, 10);
        s.push(2 * 512);
        drain(&mut s, t(0));
        s.on_ack(t(520), &ack(1, &[]));
        // srtt 520 ms, rttvar 260 ms: RTO = 520 + 1040 = 1560 ms (a multiple of 10 ms).
        assert_eq!(s.rto(), t(1560));
        assert_eq!(s.poll_at(), Some(t(520) + t(1560)));
    }

    #[test]
    fn every_byte_is_released_exactly_once_whatever_is_lost() {
        // A deterministic lossy channel: every 7th transmission is lost; the client SACKs what
        // it holds. The buffer empties exactly, once per byte.
        for semantics in [SackSemantics::Normal, SackSemantics::Modified] {
            let total = 200 * 512 + 100;
            let mut s = sender(semantics, 50);
            let mut pushed = 0;
            let mut released = 0;
            let mut held_by_client = std::collections::BTreeSet::new();
            let mut n_tx = 0u64;
            let mut now = t(0);
            for _round in 0..10_000 {
                pushed += s.push(total - pushed);
                if pushed == total {
                    s.close();
                }
                let mut arrived = vec![];
                while let Some(p) = s.next_packet(now) {
                    n_tx += 1;
                    if !n_tx.is_multiple_of(7) {
                        arrived.push(p.seg);
                    }
                }
                for seg in arrived {
                    held_by_client.insert(seg);
                    let cum = (0..).find(|k| !held_by_client.contains(k)).unwrap();
                    let blocks: Vec<_> = held_by_client.iter().filter(|&&k| k > cum).map(|&k| (k, k + 1)).rev().take(4).collect();
                    released += s.on_ack(now, &ack(cum, &blocks));
                }
                now += t(100);
                if let Some(at) = s.poll_at().filter(|&at| at <= now) {
                    s.on_timer(at);
                }
                if s.is_done() {
                    break;
                }
            }
            assert!(s.is_done(), "{semantics:?}: transfer did not finish");
            assert_eq!(released, total, "{semantics:?}");
            assert_eq!(s.held(), 0);
        }
    }
}
