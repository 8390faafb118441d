//! The client end of a satellite connection: in-order delivery to the application, a reorder
//! buffer for segments that arrive after a hole, and acknowledgements with up to four SACK
//! blocks and a window counted in segments (seed 004 §III).
//!
//! The client never reneges (§IV): a segment it SACKed stays in its reorder buffer until the
//! hole below it is filled. Its application reads in-order data at once (§II: "we assume large
//! buffer is available for each TCP connection at the client"), so the buffer holds only the
//! reorder buffer, and the window it advertises is `(buffer - reorder bytes) / mss` segments
//! beyond the cumulative point: a long-lasting hole closes the window (§V.B.1: "the client
//! receiver buffer should be set about four times the bandwidth delay product").
//!
//! When it acknowledges ([`AckPolicy`]):
//! - `EveryN(n)`: "An acknowledgement is sent every N packets are received no matter they are
//!   in order or out of order" (§V.A.2), with a timer that flushes a partial count so that the
//!   end of a transfer is acknowledged (its value is ours: docs/gateway.md).
//! - `Tcp`: "every other in sequence packet is acknowledged and every out of sequence packet is
//!   acknowledged" (§V.B.1), as RFC 5681 §4.2 asks of a TCP receiver (an arrival above a hole,
//!   a duplicate, or one that fills a hole is acknowledged at once).

use super::{SatAck, SegBlock, SegNo, MAX_SAT_SACK_BLOCKS};
use crate::time::SimTime;
use std::collections::BTreeMap;

/// Default flush timer for a partial ACK count. The seed names no timer ("every N packets
/// ... no matter they are in order or out of order", §V.A.2); one must exist so that the end
/// of a transfer is acknowledged, and it must not fire before N packets arrive at the rates
/// studied (at 600 kbps, 32 segments take 235 ms), or it would cap N's effect. We take the
/// delayed-ACK bound of RFC 1122 4.2.3.2, 500 ms (docs/gateway.md).
pub const DEFAULT_ACK_DELAY: SimTime = SimTime::from_millis(500);

#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AckPolicy {
    EveryN(u32),
    Tcp,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SatReceiverConfig {
    pub mss: u32,
    /// The client's receive buffer in bytes (§V.B: 256 KB).
    pub buffer: u64,
    pub policy: AckPolicy,
    pub ack_delay: SimTime,
}

/// Counters of one client.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SatReceiverStats {
    pub segments_received: u64,
    pub duplicates: u64,
    pub acks_sent: u64,
    /// Most segments held in the reorder buffer at once (seed 004 figures 11-12).
    pub peak_reorder_segments: u64,
}

pub struct SatReceiver {
    cfg: SatReceiverConfig,
    /// Next segment expected in order.
    cum: SegNo,
    /// Bytes delivered in order to the application.
    delivered: u64,
    /// The reorder buffer as disjoint ranges `start -> end` of segments above `cum`.
    ooo: BTreeMap<SegNo, SegNo>,
    ooo_segments: u64,
    ooo_bytes: u64,
    /// SACK blocks in the order they last changed, most recent first (RFC 2018 §4).
    recent: Vec<SegBlock>,
    /// Arrivals since the last ACK.
    unacked: u32,
    timer: Option<SimTime>,
    stats: SatReceiverStats,
}

impl SatReceiver {
    pub fn new(cfg: SatReceiverConfig) -> Self {
        SatReceiver { cfg, cum: 0, delivered: 0, ooo: BTreeMap::new(), ooo_segments: 0, ooo_bytes: 0, recent: Vec::new(), unacked: 0, timer: None, stats: SatReceiverStats::default() }
    }

    pub fn stats(&self) -> &SatReceiverStats {
        &self.stats
    }
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn cum(&self) -> SegNo {
        self.cum
    }
    /// Segments waiting above a hole.
    pub fn reorder_segments(&self) -> u64 {
        self.ooo_segments
    }
    pub fn reorder_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// The window to advertise, in segments (16-bit field, never scaled).
    pub fn window_segs(&self) -> u16 {
        let free = self.cfg.buffer.saturating_sub(self.ooo_bytes);
        (free / self.cfg.mss as u64).min(u16::MAX as u64) as u16
    }

    fn holds(&self, seg: SegNo) -> bool {
        seg < self.cum || self.ooo.range(..=seg).next_back().is_some_and(|(_, &end)| seg < end)
    }

    /// Inserts `seg` in the reorder buffer, merging neighbours; returns its block.
    fn insert_ooo(&mut self, seg: SegNo) -> SegBlock {
        let mut start = seg;
        let mut end = seg + 1;
        if let Some((&s, &e)) = self.ooo.range(..seg).next_back() {
            if e == seg {
                start = s;
                self.ooo.remove(&s);
            }
        }
        if let Some(e) = self.ooo.remove(&end) {
            end = e;
        }
        self.ooo.insert(start, end);
        SegBlock { start, end }
    }

    /// Segment `seg` of `len` payload bytes arrived. Returns an ACK if one is due now.
    pub fn on_segment(&mut self, now: SimTime, seg: SegNo, len: u32) -> Option<SatAck> {
        self.stats.segments_received += 1;
        self.unacked += 1;
        let had_hole = !self.ooo.is_empty();
        let duplicate = self.holds(seg);
        let out_of_order = seg > self.cum;
        if duplicate {
            self.stats.duplicates += 1;
        } else if out_of_order {
            let block = self.insert_ooo(seg);
            self.ooo_segments += 1;
            self.ooo_bytes += len as u64;
            self.stats.peak_reorder_segments = self.stats.peak_reorder_segments.max(self.ooo_segments);
            self.recent.retain(|b| b.end < block.start || b.start > block.end);
            self.recent.insert(0, block);
        } else {
            // In order: deliver it and whatever it unblocks.
            self.cum += 1;
            self.delivered += len as u64;
            if let Some(end) = self.ooo.remove(&self.cum) {
                let n = end - self.cum;
                // Only the stream's last segment may be short, and it cannot sit below a hole
                // of full ones, so the unblocked run is n full segments (its bytes were counted
                // on arrival: move them from the reorder buffer to the application).
                let bytes = if self.ooo.is_empty() { self.ooo_bytes } else { n * self.cfg.mss as u64 };
                self.ooo_segments -= n;
                self.ooo_bytes -= bytes;
                self.delivered += bytes;
                self.cum = end;
            }
            let cum = self.cum;
            self.recent.retain(|b| b.start > cum);
        }
        let now_due = match self.cfg.policy {
            AckPolicy::EveryN(n) => self.unacked >= n,
            AckPolicy::Tcp => duplicate || out_of_order || had_hole || self.unacked >= 2,
        };
        if now_due {
            return Some(self.ack());
        }
        if self.timer.is_none() {
            self.timer = Some(now + self.cfg.ack_delay);
        }
        None
    }

    /// Builds the ACK (resets the count and the flush timer).
    fn ack(&mut self) -> SatAck {
        self.unacked = 0;
        self.timer = None;
        self.stats.acks_sent += 1;
        let mut a = SatAck { cum: self.cum, window_segs: self.window_segs(), ..Default::default() };
        for (i, b) in self.recent.iter().take(MAX_SAT_SACK_BLOCKS).enumerate() {
            // `recent` may hold a block that later merged with a neighbour: report the range
            // as the reorder buffer holds it now.
            let (&s, &e) = self.ooo.range(..=b.start).next_back().expect("a SACKed block is buffered");
            a.sack[i] = SegBlock { start: s, end: e };
            a.n_sack = i as u8 + 1;
        }
        a
    }

    pub fn poll_at(&self) -> Option<SimTime> {
        self.timer
    }

    /// The flush timer: acknowledges a partial count.
    pub fn on_timer(&mut self, now: SimTime) -> Option<SatAck> {
        match self.timer {
            Some(t) if t <= now && self.unacked > 0 => Some(self.ack()),
            Some(t) if t <= now => {
                self.timer = None;
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 512;

    fn rx(policy: AckPolicy) -> SatReceiver {
        SatReceiver::new(SatReceiverConfig { mss: MSS, buffer: 64 * MSS as u64, policy, ack_delay: DEFAULT_ACK_DELAY })
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn blocks(a: &SatAck) -> Vec<(SegNo, SegNo)> {
        a.blocks().iter().map(|b| (b.start, b.end)).collect()
    }

    #[test]
    fn every_n_counts_arrivals_in_or_out_of_order() {
        let mut r = rx(AckPolicy::EveryN(4));
        let acks: Vec<_> = [0, 1, 3, 4, 5, 6, 7, 2].iter().map(|&s| r.on_segment(t(0), s, MSS).map(|a| a.cum)).collect();
        // The 4th arrival (4, above the hole at 2) and the 8th (2, filling it).
        assert_eq!(acks, [None, None, None, Some(2), None, None, None, Some(8)]);
        assert_eq!(r.delivered(), 8 * MSS as u64);
        assert_eq!(r.stats().acks_sent, 2);
    }

    #[test]
    fn a_partial_count_is_flushed_by_the_timer() {
        let mut r = rx(AckPolicy::EveryN(8));
        assert_eq!(r.on_segment(t(0), 0, MSS), None);
        assert_eq!(r.on_segment(t(5), 1, MSS), None);
        assert_eq!(r.poll_at(), Some(t(500)));
        assert_eq!(r.on_timer(t(499)), None);
        assert_eq!(r.on_timer(t(500)).map(|a| a.cum), Some(2));
        assert_eq!(r.poll_at(), None);
    }

    #[test]
    fn tcp_policy_acks_every_other_and_every_out_of_order_segment() {
        let mut r = rx(AckPolicy::Tcp);
        let got: Vec<_> = [0, 1, 2, 3, 5, 6, 4].iter().map(|&s| r.on_segment(t(0), s, MSS).is_some()).collect();
        assert_eq!(got, [false, true, false, true, true, true, true]);
    }

    #[test]
    fn sack_blocks_report_the_most_recent_first_at_most_four() {
        let mut r = rx(AckPolicy::EveryN(1));
        r.on_segment(t(0), 0, MSS);
        let mut last = None;
        for s in [2, 4, 6, 8, 10, 7] {
            last = r.on_segment(t(0), s, MSS);
        }
        let a = last.unwrap();
        assert_eq!(a.cum, 1);
        // 7 merged 6 and 8 into [6, 9); then 10, 4, 2 in recency order; four at most.
        assert_eq!(blocks(&a), [(6, 9), (10, 11), (4, 5), (2, 3)]);
        assert_eq!(r.reorder_segments(), 6);
    }

    #[test]
    fn the_window_shrinks_with_the_reorder_buffer_and_reopens() {
        let mut r = rx(AckPolicy::EveryN(1));
        assert_eq!(r.window_segs(), 64);
        for s in 1..=10 {
            r.on_segment(t(0), s, MSS);
        }
        assert_eq!(r.window_segs(), 54);
        let a = r.on_segment(t(0), 0, MSS).unwrap();
        assert_eq!((a.cum, a.window_segs, a.n_sack), (11, 64, 0));
        assert_eq!(r.reorder_bytes(), 0);
        assert_eq!(r.delivered(), 11 * MSS as u64);
        assert_eq!(r.stats().peak_reorder_segments, 10);
    }

    #[test]
    fn duplicates_are_counted_not_delivered_twice() {
        let mut r = rx(AckPolicy::EveryN(1));
        for s in [0, 0, 2, 2, 1] {
            r.on_segment(t(0), s, MSS);
        }
        assert_eq!(r.stats().duplicates, 2);
        assert_eq!(r.delivered(), 3 * MSS as u64);
        assert_eq!(r.cum(), 3);
    }

    #[test]
    fn a_short_last_segment_is_delivered_with_its_length() {
        let mut r = rx(AckPolicy::EveryN(1));
        r.on_segment(t(0), 2, 100);
        r.on_segment(t(0), 1, MSS);
        r.on_segment(t(0), 0, MSS);
        assert_eq!(r.delivered(), 2 * MSS as u64 + 100);
        assert_eq!(r.reorder_bytes(), 0);
    }
}
