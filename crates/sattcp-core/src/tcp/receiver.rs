//! The data-receiving end of a half-connection (ns-2's `TcpSink` / `Sack1TcpSink`): answers
//! the SYN, acknowledges data with pure ACKs carrying SACK blocks (RFC 2018), optionally
//! delays ACKs (off in the seeds: "segments are ACKed as soon as they are received", seed 000
//! §4.2.2).
//!
//! **Receive buffer.** By default (`cfg.rcv_buf = None`, the seeds) the application reads
//! in-order data at once and the advertised window is the fixed `cfg.rcv_window_field`;
//! out-of-order data waits inside that window.
//!
//! With `cfg.rcv_buf = Some(B)`, in-order bytes wait in a buffer of B bytes until the
//! application takes them with [`TcpReceiver::app_read`] ([`TcpReceiver::readable`] says how
//! many wait). The advertised window is the buffer's free space, `B - (unread in-order
//! bytes)` (out-of-order data lies inside that window, so it needs no separate room):
//!
//! - receiver SWS avoidance (RFC 1122 4.2.3.3, RFC 9293 §3.8.6.2.2): the right edge moves
//!   only when it can move by at least min(B/2, MSS); otherwise it stays where it was;
//! - the window never retracts (RFC 9293 §3.8.6): it is at least what remains of the window
//!   already offered (`rcv_adv - rcv_nxt`, `rcv_adv` the highest right edge ever advertised);
//! - window scaling (RFC 7323 §2.3): the field is the window shifted right by our negotiated
//!   scale, rounded down, at most 65535; the SYN-ACK's field is unscaled, min(B, 65535). Rounding
//!   down can make the edge the sender sees move left by less than one scale unit; RFC 7323
//!   §2.4 expects exactly that, and asks the receiver (rules 1-2) to accept any segment that was
//!   inside *some* window it announced, so acceptance is up to `rcv_adv`. (Rounding up instead,
//!   as Linux does, would let the edge creep past the buffer by up to a unit per ACK.) The
//!   buffer should hold many scale units: a buffer under one unit advertises zero forever;
//! - data beyond `rcv_adv` is trimmed (RFC 9293 §3.10.7.4); a segment wholly outside (a
//!   zero-window probe) is dropped and answered with an ACK at once;
//! - `app_read` sends a window update ACK when the right edge can move (the SWS rule above),
//!   so a zero window reopens as soon as min(B/2, MSS) has been read.
//!
//! Verification hook: [`TcpReceiver::take_deliveries`] returns the byte range delivered in
//! order to the application since the last call, so a test can check that every byte is
//! delivered exactly once and in order (each range must start where the previous one ended).

use super::config::TcpConfig;
use crate::net::packet::{flags, SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::time::SimTime;

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ReceiverStats {
    pub segments_received: u64,
    /// Payload bytes that arrived again after already being received.
    pub duplicate_bytes: u64,
    /// Segments that arrived above a hole.
    pub out_of_order_segments: u64,
    pub acks_sent: u64,
    /// Window-update ACKs sent because the application read (finite buffer only).
    pub window_updates: u64,
    /// Segments with data beyond the advertised window, trimmed or dropped (finite buffer).
    pub beyond_window: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum DelAck {
    Idle,
    /// One in-order segment is waiting for its ACK (RFC 5681 §4.2: ACK at least every
    /// second full-sized segment, and within the delayed-ACK timeout).
    Pending { expires_at: SimTime },
}

/// Laid out by hand (`repr(C)`, one 64-byte line per group; issue 15): an in-order segment
/// touches the first line (sequence state, delayed ACK, buffer and window configuration),
/// the lengths of the two block lists in the second, and the counters in the third; with a
/// hundred thousand flows every line touched is a likely cache miss. The configuration is the
/// part of [`TcpConfig`] a receiver uses (the rest is the sender's).
#[repr(C, align(64))]
pub struct TcpReceiver {
    // Line 1.
    /// Next byte expected.
    rcv_nxt: u64,
    fin_seq: Option<u64>,
    delack: DelAck,
    /// `cfg.rcv_buf`.
    rcv_buf: Option<u64>,
    /// `cfg.rcv_window_field`.
    rcv_window_field: u16,
    synced: bool,
    sack_ok: bool,
    /// Finite buffer only: the negotiated shift of our window field.
    wscale: u8,
    /// `cfg.delayed_ack`, `cfg.sack`, `cfg.window_scale`.
    delayed_ack: bool,
    sack: bool,
    window_scale: u8,
    // Line 2.
    /// Received byte ranges above `rcv_nxt`, sorted and disjoint ("out-of-order queue").
    ooo: Vec<SackBlock>,
    /// The SACK blocks of the last ACK sent, in the order sent (RFC 2018 §4: later ACKs
    /// repeat the most recently reported blocks).
    reported: Vec<SackBlock>,
    /// In-order bytes not yet handed out by `take_deliveries`.
    taken: u64,
    /// Finite buffer only: the next byte the application reads.
    read: u64,
    // Line 3.
    stats: ReceiverStats,
    /// Finite buffer only: the right edge of the window last advertised.
    rcv_adv: u64,
    /// `cfg.delack_timeout`, `cfg.mss`.
    delack_timeout: SimTime,
    mss: u32,
}

impl TcpReceiver {
    pub fn new(cfg: TcpConfig) -> Self {
        TcpReceiver {
            rcv_buf: cfg.rcv_buf,
            rcv_window_field: cfg.rcv_window_field,
            delayed_ack: cfg.delayed_ack,
            sack: cfg.sack,
            window_scale: cfg.window_scale,
            delack_timeout: cfg.delack_timeout,
            mss: cfg.mss,
            synced: false, sack_ok: false, rcv_nxt: 0, fin_seq: None, ooo: Vec::new(), reported: Vec::new(), taken: 1, delack: DelAck::Idle, stats: ReceiverStats::default(), read: 1, rcv_adv: 1, wscale: 0 }
    }

    pub fn on_segment(&mut self, now: SimTime, seg: &Segment, out: &mut Vec<Segment>) {
        if seg.is_syn() {
            self.on_syn(seg, out);
            return;
        }
        if !self.synced {
            return;
        }
        self.stats.segments_received += 1;
        let start = seg.seq;
        let mut end = seg.seq + seg.seq_len();
        let mut fin = seg.is_fin();
        if self.rcv_buf.is_some() && end > self.rcv_adv.max(self.rcv_nxt) && seg.len > 0 {
            // RFC 9293 §3.10.7.4: keep only what lies inside the window.
            self.stats.beyond_window += 1;
            let edge = self.rcv_adv.max(self.rcv_nxt);
            if start >= edge {
                self.send_ack(None, out); // not acceptable: answer with an ACK at once
                return;
            }
            end = edge;
            fin = false;
        }
        if fin {
            self.fin_seq = Some(seg.seq + seg.len as u64);
        }
        let advanced_from = self.rcv_nxt;
        if end <= self.rcv_nxt || self.covered(start, end) {
            self.stats.duplicate_bytes += end - start - fin as u64;
        } else if start > self.rcv_nxt {
            self.stats.out_of_order_segments += 1;
        }
        if end > self.rcv_nxt && start < end {
            self.insert(start.max(self.rcv_nxt), end);
        }
        let in_order = start <= advanced_from && self.rcv_nxt > advanced_from;
        // RFC 5681 §4.2: out-of-order segments, and segments that fill a hole, are ACKed
        // at once; in-order data may wait for a second segment or the timer. A segment fills
        // a hole when the cumulative ACK moves past its end (it joined data held above it),
        // as ns-2's `DelAckSink` delays only if `th->seqno() == acker_->Seqno()`. (Until
        // 2026-12, "the last ACK reported SACK blocks": without SACK a hole-filling segment
        // waited for the delayed-ACK timer.)
        let filled_hole = in_order && self.rcv_nxt > end;
        if self.delayed_ack && in_order && !filled_hole && self.ooo.is_empty() {
            match self.delack {
                DelAck::Idle => {
                    self.delack = DelAck::Pending { expires_at: now + self.delack_timeout };
                    return;
                }
                DelAck::Pending { .. } => {}
            }
        }
        let first = (!in_order || self.rcv_nxt == advanced_from).then_some(start).filter(|&s| s >= self.rcv_nxt);
        self.send_ack(first, out);
    }

    fn on_syn(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if !self.synced {
            self.synced = true;
            self.rcv_nxt = 1;
        }
        // RFC 2018 §2: SACK-permitted only in answer to a SYN that carried it.
        self.sack_ok = self.sack && seg.sack_permitted;
        // RFC 7323 §2.2: answer with our shift only if the SYN carried the option.
        let wscale = seg.wscale.map(|_| self.window_scale);
        self.wscale = wscale.unwrap_or(0);
        // RFC 7323 §2.2: the SYN-ACK's window is never scaled.
        let window = match self.rcv_buf {
            None => self.rcv_window_field,
            Some(b) => b.min(u16::MAX as u64) as u16,
        };
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + window as u64);
        self.stats.acks_sent += 1;
        out.push(Segment { seq: 0, ack: 1, flags: flags::SYN | flags::ACK, window, wscale, sack_permitted: self.sack_ok, ..Default::default() });
    }

    /// True when `[start, end)` lies inside one received out-of-order range.
    fn covered(&self, start: u64, end: u64) -> bool {
        self.ooo.iter().any(|b| b.start <= start && end <= b.end)
    }

    /// Adds `[start, end)` to the received ranges and advances `rcv_nxt` over any that now
    /// touch it.
    fn insert(&mut self, start: u64, end: u64) {
        if start <= self.rcv_nxt && self.ooo.is_empty() {
            self.rcv_nxt = self.rcv_nxt.max(end); // the common case: in order, no holes
            return;
        }
        let mut nb = SackBlock { start, end };
        self.ooo.retain(|b| {
            if b.end < nb.start || b.start > nb.end {
                true
            } else {
                nb.start = nb.start.min(b.start);
                nb.end = nb.end.max(b.end);
                false
            }
        });
        let i = self.ooo.partition_point(|b| b.start < nb.start);
        self.ooo.insert(i, nb);
        if self.ooo[0].start <= self.rcv_nxt {
            self.rcv_nxt = self.rcv_nxt.max(self.ooo.remove(0).end);
        }
    }

    /// The SACK blocks to send (RFC 2018 §4): first the block holding the segment that
    /// triggered this ACK (unless it advanced the cumulative ACK), then the most recently
    /// reported blocks that are still above `rcv_nxt` and not already listed, then (our
    /// choice; RFC 2018 leaves it open) any other received ranges, highest first.
    fn sack_blocks(&mut self, trigger: Option<u64>) -> ([SackBlock; MAX_SACK_BLOCKS], u8) {
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0usize;
        let containing = |seq: u64, ooo: &[SackBlock]| ooo.iter().copied().find(|b| b.start <= seq && seq < b.end);
        let push = |b: SackBlock, blocks: &mut [SackBlock; MAX_SACK_BLOCKS], n: &mut usize| {
            if *n < MAX_SACK_BLOCKS && !blocks[..*n].contains(&b) {
                blocks[*n] = b;
                *n += 1;
            }
        };
        if let Some(b) = trigger.and_then(|s| containing(s, &self.ooo)) {
            push(b, &mut blocks, &mut n);
        }
        for r in &self.reported {
            if let Some(b) = containing(r.start.max(self.rcv_nxt), &self.ooo) {
                push(b, &mut blocks, &mut n);
            }
        }
        for b in self.ooo.iter().rev() {
            push(*b, &mut blocks, &mut n);
        }
        self.reported.clear();
        self.reported.extend_from_slice(&blocks[..n]);
        (blocks, n as u8)
    }

    fn send_ack(&mut self, trigger: Option<u64>, out: &mut Vec<Segment>) {
        self.delack = DelAck::Idle;
        let mut seg = Segment { seq: 1, ack: self.ack_number(), flags: flags::ACK, window: self.window_field(), ..Default::default() };
        if self.sack_ok {
            let (blocks, n) = self.sack_blocks(trigger);
            seg.sack = blocks;
            seg.n_sack = n;
        }
        self.stats.acks_sent += 1;
        out.push(seg);
    }

    /// `rcv_nxt`, plus one once the FIN has arrived in order.
    fn ack_number(&self) -> u64 {
        self.rcv_nxt
    }

    /// The window field of the next ACK (module docs), recording the right edge it advertises.
    fn window_field(&mut self) -> u16 {
        let Some(buf) = self.rcv_buf else { return self.rcv_window_field };
        let field = self.select_window(buf);
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + ((field as u64) << self.wscale));
        field
    }

    /// The window field the buffer allows now, without recording it (module docs).
    fn select_window(&self, buf: u64) -> u16 {
        let free = buf.saturating_sub(self.data_end() - self.read);
        let cur = self.rcv_adv.saturating_sub(self.rcv_nxt);
        // RFC 1122 4.2.3.3 / RFC 9293 §3.8.6.2.2 (receiver SWS avoidance, Fr = 1/2): move the
        // right edge only by at least min(B/2, MSS).
        let threshold = (buf / 2).min(self.mss as u64);
        let wnd = if free >= cur + threshold { free } else { cur };
        // RFC 7323 §2.3: the field is the window >> scale, rounded down, at most 65535.
        (wnd >> self.wscale).min(u16::MAX as u64) as u16
    }

    /// One past the last in-order data byte received (the FIN excluded).
    fn data_end(&self) -> u64 {
        self.fin_seq.map_or(self.rcv_nxt, |f| self.rcv_nxt.min(f))
    }

    /// In-order bytes waiting for the application (always 0 without a finite buffer: the
    /// application reads at once).
    pub fn readable(&self) -> u64 {
        match self.rcv_buf {
            None => 0,
            Some(_) => self.data_end().saturating_sub(self.read),
        }
    }

    /// The application reads up to `max` bytes (finite buffer; without one it has read
    /// everything already and this returns 0). Returns the bytes read; emits a window update
    /// when the right edge can move (module docs).
    pub fn app_read(&mut self, _now: SimTime, max: u64, out: &mut Vec<Segment>) -> u64 {
        let Some(buf) = self.rcv_buf else { return 0 };
        let n = max.min(self.readable());
        if n == 0 {
            return 0;
        }
        self.read += n;
        let field = self.select_window(buf);
        if self.synced && self.rcv_nxt + ((field as u64) << self.wscale) > self.rcv_adv {
            self.stats.window_updates += 1;
            self.send_ack(None, out);
        }
        n
    }

    /// The window this receiver would advertise now, in bytes.
    pub fn window(&self) -> u64 {
        match self.rcv_buf {
            None => (self.rcv_window_field as u64) << self.wscale,
            Some(b) => (self.select_window(b) as u64) << self.wscale,
        }
    }

    /// Delayed-ACK timer.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if let DelAck::Pending { expires_at } = self.delack {
            if now >= expires_at {
                self.send_ack(None, out);
            }
        }
    }

    /// Sends a pending delayed ACK now (the host is sending data the other way:
    /// `tcp.piggyback_acks`). Nothing when no ACK is pending.
    pub fn ack_now(&mut self, out: &mut Vec<Segment>) {
        if let DelAck::Pending { .. } = self.delack {
            self.send_ack(None, out);
        }
    }

    pub fn poll_at(&self) -> Option<SimTime> {
        match self.delack {
            DelAck::Idle => None,
            DelAck::Pending { expires_at } => Some(expires_at),
        }
    }

    /// Data bytes delivered in order to the application: without a finite buffer, every
    /// in-order byte received; with one, the bytes the application has read.
    pub fn delivered(&self) -> u64 {
        match self.rcv_buf {
            None => self.data_end().saturating_sub(1),
            Some(_) => self.read - 1,
        }
    }

    /// In-order data bytes received (read or not).
    pub fn received(&self) -> u64 {
        self.data_end().saturating_sub(1)
    }

    /// The FIN has been received in order.
    pub fn fin_received(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.rcv_nxt > f)
    }

    /// The data offsets `[from, to)` delivered in order since the last call, or `None` if
    /// nothing new. Consecutive ranges are contiguous by construction; a test checks it.
    pub fn take_deliveries(&mut self) -> Option<(u64, u64)> {
        let end = self.delivered() + 1;
        if end > self.taken {
            let r = (self.taken - 1, end - 1);
            self.taken = end;
            Some(r)
        } else {
            None
        }
    }

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn sack_receiver() -> (TcpReceiver, Vec<Segment>) {
        let mut r = TcpReceiver::new(TcpConfig { sack: true, mss: MSS as u32, ..Default::default() });
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &Segment { flags: flags::SYN, wscale: Some(0), sack_permitted: true, ..Default::default() }, &mut out);
        assert!(out[0].sack_permitted);
        (r, out)
    }

    /// Data segment number `i`: bytes `[1 + i*MSS, 1 + (i+1)*MSS)`.
    fn data_seg(i: u64) -> Segment {
        Segment { seq: 1 + i * MSS, len: MSS as u32, flags: flags::ACK, ack: 1, ..Default::default() }
    }

    /// Delivers data segment number `i` and returns the ACK.
    #[track_caller]
    fn data(r: &mut TcpReceiver, i: u64) -> Segment {
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &data_seg(i), &mut out);
        assert_eq!(out.len(), 1);
        out[0]
    }

    #[track_caller]
    fn assert_ack(a: &Segment, ack: u64, blocks: &[(u64, u64)]) {
        assert_eq!(a.ack, ack, "cumulative ACK");
        let got: Vec<(u64, u64)> = a.sack_blocks().iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(got, blocks, "SACK blocks");
    }

    #[test]
    fn handshake_echoes_scale_and_sack() {
        let mut r = TcpReceiver::new(TcpConfig { sack: true, window_scale: 6, ..Default::default() });
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &Segment { flags: flags::SYN, wscale: Some(6), sack_permitted: true, ..Default::default() }, &mut out);
        assert_eq!(out[0].flags, flags::SYN | flags::ACK);
        assert_eq!(out[0].wscale, Some(6));
        assert_eq!(out[0].window, 65535);
        // Without a finite buffer the window is the fixed field, scaled (docs/tcp.md `window()`).
        assert_eq!(r.window(), 65535 << 6);
        // Our SYN took sequence number 0: the ACKs after it carry seq 1 (what a pcap shows).
        assert_eq!((out[0].seq, out[0].ack), (0, 1));
        out.clear();
        r.on_segment(SimTime::ZERO, &Segment { seq: 1, len: 100, flags: flags::ACK, ack: 1, ..Default::default() }, &mut out);
        assert_eq!((out[0].seq, out[0].ack), (1, 101));
        // Without the options in the SYN, neither comes back (RFC 7323 §2.2, RFC 2018 §2).
        let mut r = TcpReceiver::new(TcpConfig { sack: true, window_scale: 6, ..Default::default() });
        out.clear();
        r.on_segment(SimTime::ZERO, &Segment { flags: flags::SYN, ..Default::default() }, &mut out);
        assert_eq!((out[0].wscale, out[0].sack_permitted), (None, false));
    }

    /// RFC 2018 §5 style trace: segments 0..8, with 1, 3 and 5 lost, then 3 and 1 retransmitted.
    #[test]
    fn sack_blocks_first_is_the_latest_then_most_recent() {
        let (mut r, _) = sack_receiver();
        assert_ack(&data(&mut r, 0), 1001, &[]);
        assert_ack(&data(&mut r, 2), 1001, &[(2001, 3001)]);
        assert_ack(&data(&mut r, 4), 1001, &[(4001, 5001), (2001, 3001)]);
        assert_ack(&data(&mut r, 6), 1001, &[(6001, 7001), (4001, 5001), (2001, 3001)]);
        assert_ack(&data(&mut r, 7), 1001, &[(6001, 8001), (4001, 5001), (2001, 3001)]);
        // Retransmission of 3 joins [2001,3001) and [4001,5001): that block comes first.
        assert_ack(&data(&mut r, 3), 1001, &[(2001, 5001), (6001, 8001)]);
        // Retransmission of 1 advances the ACK over [2001, 5001): no block for it.
        assert_ack(&data(&mut r, 1), 5001, &[(6001, 8001)]);
        assert_ack(&data(&mut r, 5), 8001, &[]);
        assert_eq!(r.delivered(), 8000);
        assert_eq!(r.take_deliveries(), Some((0, 8000)));
        assert_eq!(r.take_deliveries(), None);
    }

    #[test]
    fn more_than_three_holes_report_the_three_most_recent() {
        let (mut r, _) = sack_receiver();
        for i in [1, 3, 5, 7] {
            data(&mut r, i);
        }
        assert_ack(&data(&mut r, 9), 1, &[(9001, 10001), (7001, 8001), (5001, 6001)]);
        // A duplicate of 3 puts its block first again.
        assert_ack(&data(&mut r, 3), 1, &[(3001, 4001), (9001, 10001), (7001, 8001)]);
        assert_eq!(r.stats().duplicate_bytes, MSS);
    }

    #[test]
    fn blocks_not_recently_reported_fill_the_list_highest_first() {
        // Segments 1, 3, 5, 7, 9 (the ACK lists 9, 7, 5), then 6 joins 5 and 7: that block,
        // then 9 (reported), then of the two never repeated (1 and 3) the highest.
        let (mut r, _) = sack_receiver();
        for i in [1, 3, 5, 7] {
            data(&mut r, i);
        }
        assert_ack(&data(&mut r, 9), 1, &[(9001, 10001), (7001, 8001), (5001, 6001)]);
        assert_ack(&data(&mut r, 6), 1, &[(5001, 8001), (9001, 10001), (3001, 4001)]);
    }

    /// `stats()` (docs/tcp.md; `duplicate_bytes` is also a column of the results' flows): every
    /// segment after the SYN counts, only one above a hole is out of order, a FIN that arrives
    /// again is no duplicate byte, and the SYN-ACK is one of the ACKs sent.
    #[test]
    fn the_counters_count_segments_out_of_order_ones_and_duplicate_bytes() {
        let (mut r, _) = sack_receiver();
        data(&mut r, 0);
        data(&mut r, 2);
        data(&mut r, 2);
        assert_ack(&data(&mut r, 1), 3001, &[]);
        let fin = Segment { seq: 3001, flags: flags::ACK | flags::FIN, ack: 1, ..Default::default() };
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &fin, &mut out);
        r.on_segment(SimTime::ZERO, &fin, &mut out);
        assert_eq!((out[0].ack, out[1].ack, r.fin_received()), (3002, 3002, true));
        let s = r.stats();
        assert_eq!((s.segments_received, s.out_of_order_segments, s.duplicate_bytes, s.acks_sent), (6, 1, MSS, 7));
    }

    /// A receiver with a `buf`-byte buffer and window scale `scale`, after the handshake.
    fn buffered(buf: u64, scale: u8) -> (TcpReceiver, Segment) {
        let mut r = TcpReceiver::new(TcpConfig { mss: MSS as u32, rcv_buf: Some(buf), window_scale: scale, ..Default::default() });
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &Segment { flags: flags::SYN, wscale: Some(scale), ..Default::default() }, &mut out);
        (r, out[0])
    }

    #[test]
    fn the_advertised_window_is_the_free_space_scaled_and_rounded_down() {
        // 200,000-byte buffer, scale 2 (a unit of 4 bytes).
        let (mut r, syn_ack) = buffered(200_000, 2);
        assert_eq!(syn_ack.window, 65535, "the SYN-ACK's window is unscaled: min(B, 65535)");
        assert_eq!(data(&mut r, 0).window, (199_000u32 >> 2) as u16, "B minus the 1000 unread bytes");
        assert_eq!(r.readable(), 1000);
        assert_eq!(r.delivered(), 0, "nothing read yet");
        let mut out = Vec::new();
        // Reading 500 bytes frees less than min(B/2, MSS) = 1000: no window update (SWS).
        assert_eq!(r.app_read(SimTime::ZERO, 500, &mut out), 500);
        assert!(out.is_empty());
        assert_eq!(r.window(), 199_000, "the right edge stays");
        // Reading the rest frees 1000 in all: the window update goes out.
        assert_eq!(r.app_read(SimTime::ZERO, 10_000, &mut out), 500);
        assert_eq!((out.len(), out[0].ack, out[0].window), (1, 1001, 50_000));
        assert_eq!(r.stats().window_updates, 1);
        assert_eq!(r.take_deliveries(), Some((0, 1000)));
        // A window that is not a multiple of the unit is rounded down: 3 bytes short.
        let (mut r, _) = buffered(100_003, 2);
        data(&mut r, 0);
        let mut out = Vec::new();
        r.app_read(SimTime::ZERO, 1000, &mut out);
        assert_eq!(out[0].window, 25_000, "100,003 >> 2");
    }

    /// The app does not read: the window shrinks from the left to zero, data beyond it is
    /// refused with an ACK, and reading reopens it with a window update.
    #[test]
    fn a_full_buffer_closes_the_window_and_reading_reopens_it() {
        let (mut r, syn_ack) = buffered(4 * MSS, 0);
        assert_eq!(syn_ack.window as u64, 4 * MSS);
        let wins: Vec<u16> = (0..4).map(|i| data(&mut r, i).window).collect();
        assert_eq!(wins, vec![3000, 2000, 1000, 0]);
        // A one-byte zero-window probe: dropped, answered at once with the zero window.
        let probe = Segment { seq: 4001, len: 1, flags: flags::ACK, ack: 1, ..Default::default() };
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &probe, &mut out);
        assert_eq!((out.len(), out[0].ack, out[0].window), (1, 4001, 0));
        assert_eq!((r.received(), r.stats().beyond_window), (4000, 1));
        // Reading 999 bytes is less than min(B/2, MSS) = 1000: still closed.
        out.clear();
        r.app_read(SimTime::ZERO, 999, &mut out);
        assert!(out.is_empty());
        r.app_read(SimTime::ZERO, 1, &mut out);
        assert_eq!((out[0].ack, out[0].window), (4001, 1000), "the window update");
        // The probe now fits.
        out.clear();
        r.on_segment(SimTime::ZERO, &probe, &mut out);
        assert_eq!((out[0].ack, out[0].window), (4002, 999));
        // A segment straddling the right edge is trimmed to it.
        out.clear();
        r.on_segment(SimTime::ZERO, &Segment { seq: 4002, len: 1000, flags: flags::ACK, ..Default::default() }, &mut out);
        assert_eq!((out[0].ack, out[0].window), (5001, 0));
        assert_eq!(r.received(), 5000);
    }

    /// Receiver SWS avoidance moves the right edge by min(B/2, MSS): with a buffer of one
    /// segment, half of it read reopens the closed window.
    #[test]
    fn a_buffer_of_one_segment_reopens_when_half_of_it_is_read() {
        let (mut r, _) = buffered(MSS, 0);
        assert_eq!(data(&mut r, 0).window, 0);
        let mut out = Vec::new();
        r.app_read(SimTime::ZERO, MSS / 2 - 1, &mut out);
        assert!(out.is_empty(), "499 bytes free: less than min(B/2, MSS) = 500");
        r.app_read(SimTime::ZERO, 1, &mut out);
        assert_eq!((out.len(), out[0].ack, out[0].window), (1, 1001, 500));
    }

    /// A bare FIN at the right edge of a closed window is taken, not refused: it needs no room
    /// in the buffer (Linux `tcp_data_queue()` makes the same exception, for stacks that send
    /// FINs into a zero window).
    #[test]
    fn a_bare_fin_into_a_zero_window_is_accepted() {
        let (mut r, _) = buffered(4 * MSS, 0);
        let wins: Vec<u16> = (0..4).map(|i| data(&mut r, i).window).collect();
        assert_eq!(wins, vec![3000, 2000, 1000, 0]);
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &Segment { seq: 4001, flags: flags::ACK | flags::FIN, ack: 1, ..Default::default() }, &mut out);
        assert_eq!((out.len(), out[0].ack, out[0].window), (1, 4002, 0));
        assert_eq!((r.fin_received(), r.received(), r.stats().beyond_window), (true, 4000, 0));
    }

    #[test]
    fn the_right_edge_never_moves_left() {
        // Scale 4 (16-byte unit), 10,000-byte buffer: after a 1000-byte segment the free space
        // is 9000, rounded down to 8992 (562 units); the receiver keeps accepting up to the
        // edge it announced at the SYN (10,001), per RFC 7323 §2.4.
        let (mut r, syn_ack) = buffered(10_000, 4);
        assert_eq!(syn_ack.window, 10_000);
        assert_eq!(data(&mut r, 0).window, 562);
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &Segment { seq: 1001, len: 9000, flags: flags::ACK, ..Default::default() }, &mut out);
        assert_eq!((out[0].ack, out[0].window, r.stats().beyond_window), (10_001, 0, 0), "the whole announced window is accepted");
        // Reading frees the buffer; the window comes back as free space, never below what
        // was promised.
        out.clear();
        r.app_read(SimTime::ZERO, 5000, &mut out);
        assert_eq!(out[0].window, 5000 >> 4);
    }

    /// A receiver with delayed ACKs, after the handshake.
    fn delaying() -> TcpReceiver {
        let mut r = TcpReceiver::new(TcpConfig { delayed_ack: true, mss: MSS as u32, ..Default::default() });
        r.on_segment(SimTime::ZERO, &Segment { flags: flags::SYN, ..Default::default() }, &mut Vec::new());
        r
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timer() {
        let mut r = delaying();
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &data_seg(0), &mut out);
        assert!(out.is_empty());
        assert_eq!(r.poll_at(), Some(SimTime::from_millis(100)));
        r.on_segment(SimTime::from_millis(1), &data_seg(1), &mut out);
        assert_eq!(out.last().unwrap().ack, 2001);
        r.on_segment(SimTime::from_millis(2), &data_seg(2), &mut out);
        assert_eq!(out.len(), 1);
        r.on_timer(SimTime::from_millis(102), &mut out);
        assert_eq!(out.last().unwrap().ack, 3001);
        // Out of order: at once.
        r.on_segment(SimTime::from_millis(3), &data_seg(4), &mut out);
        assert_eq!(out.len(), 3);
    }

    /// RFC 5681 §4.2 (ns-2 `DelAckSink`): a segment that fills a hole is acknowledged at once,
    /// with or without SACK (without it, it used to wait for the timer); a segment that
    /// only partly fills it too, since data still waits above.
    #[test]
    fn a_segment_that_fills_a_hole_is_acknowledged_at_once_without_sack() {
        for sack in [false, true] {
            let mut r = TcpReceiver::new(TcpConfig { delayed_ack: true, sack, mss: MSS as u32, ..Default::default() });
            r.on_segment(SimTime::ZERO, &Segment { flags: flags::SYN, sack_permitted: sack, ..Default::default() }, &mut Vec::new());
            let mut out = Vec::new();
            for i in [0, 1, 3, 4] {
                r.on_segment(SimTime::ZERO, &data_seg(i), &mut out);
            }
            assert_eq!(out.len(), 3, "sack {sack}: the pair, then the two out of order");
            r.on_segment(SimTime::from_millis(1), &data_seg(2), &mut out);
            assert_eq!((out.len(), out[3].ack, r.poll_at()), (4, 5001, None), "sack {sack}: the hole filled, at once");
            r.on_segment(SimTime::from_millis(2), &data_seg(7), &mut out);
            r.on_segment(SimTime::from_millis(3), &data_seg(5), &mut out);
            assert_eq!((out.len(), out[5].ack), (6, 6001), "sack {sack}: part of a hole, at once");
        }
    }

    /// Data that arrives again (a spurious retransmission) is acknowledged at once, delayed ACKs
    /// or not (RFC 9293 §3.10.7.4: a segment that is not acceptable is answered with an ACK):
    /// the sender learns at once that its retransmission was needless.
    #[test]
    fn a_duplicate_segment_is_acknowledged_at_once() {
        let mut r = delaying();
        let mut out = Vec::new();
        r.on_segment(SimTime::ZERO, &data_seg(0), &mut out);
        r.on_segment(SimTime::from_millis(1), &data_seg(1), &mut out);
        assert_eq!((out.len(), out[0].ack), (1, 2001));
        r.on_segment(SimTime::from_millis(2), &data_seg(0), &mut out);
        assert_eq!((out.len(), out[1].ack, r.poll_at()), (2, 2001, None));
        assert_eq!(r.stats().duplicate_bytes, MSS);
    }

    /// The hand layout (issue 15): what an in-order segment touches starts each line.
    #[test]
    fn the_per_segment_state_fills_the_first_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<TcpReceiver>(), 64);
        assert!(offset_of!(TcpReceiver, window_scale) < 64, "line 1: sequence state and configuration");
        assert_eq!((offset_of!(TcpReceiver, ooo), offset_of!(TcpReceiver, read) + 8), (64, 128), "line 2: the block lists");
        assert_eq!(offset_of!(TcpReceiver, stats), 128, "line 3: the counters");
        assert_eq!(size_of::<TcpReceiver>(), 256);
    }
}
