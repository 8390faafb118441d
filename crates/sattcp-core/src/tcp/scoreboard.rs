//! The sender's table of segments sent but not yet cumulatively acknowledged.
//!
//! Every segment sent enters the table in sequence order (seed 001 §2.2.1: "When a segment is
//! sent, it is entered into the table"), and leaves it only when the cumulative ACK passes its
//! end: the table always covers exactly `[snd_una, snd_max)`. Each entry carries:
//!
//! - `sacked`: a SACK block covered it, so the receiver holds it. It stays in the table (the
//!   receiver may in principle renege, RFC 2018 §8) but is neither retransmitted nor counted as
//!   in flight.
//! - `lost`: the recovery algorithm has decided it is gone (a hole below SACKed data, or every
//!   unsacked segment after a timeout). A lost segment is a candidate for retransmission and is
//!   not counted in flight (RFC 6675 `IsLost()`, ns-3's `tcp-tx-buffer.h` "lost" flag).
//! - `retransmitted`: it was retransmitted during the current recovery episode (seed 001
//!   §2.2.1: "it marks the segment as retransmitted in the table"), so it is in flight again
//!   and is not sent a second time; a lost retransmission is left to the timer, except under
//!   RACK (tcp/rack.rs, BBR only), which clears the mark when it finds the retransmission lost.
//!
//! Sacked and lost are exclusive; a segment can be lost and later SACKed (the "loss" was a
//! reordering or a late arrival). The cumulative ACK removes entries from the front in O(1);
//! SACK blocks are located by binary search. The table also counts SACKed bytes so that
//! "in flight" is O(1) outside recovery.

use std::collections::VecDeque;

use crate::net::packet::SackBlock;
use crate::time::SimTime;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub start: u64,
    pub end: u64,
    /// Carries the FIN (occupies one sequence number, no payload).
    pub fin: bool,
    /// Transmissions so far minus one (0 = sent once).
    pub tx_count: u16,
    pub sacked: bool,
    pub lost: bool,
    pub retransmitted: bool,
    pub last_sent: SimTime,
}

impl Entry {
    /// Sequence space covered (payload bytes, or 1 for the FIN).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
}

#[derive(Clone, Debug, Default)]
///
/// The byte counts are `u32` (a window is at most 2^30 bytes, RFC 7323 §2.3) so that the
/// table stays 56 bytes and keeps the sender's third cache line (issue 15's layout).
pub struct Scoreboard {
    entries: VecDeque<Entry>,
    /// End of the highest SACKed segment (0 if none).
    high_sacked: u64,
    sacked_bytes: u32,
    /// Bytes ever marked lost, a retransmission found lost counted again (Linux `tp->lost`),
    /// modulo 2^32: the sender's difference over one ACK is the rate sample's `losses`.
    lost_marked: u32,
    /// Bytes of the unSACKed entries marked lost now (Linux `tp->lost_out`, in bytes).
    lost_out: u32,
    /// Bytes of the unSACKed entries marked retransmitted now (Linux `tp->retrans_out`).
    retrans_out: u32,
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }
    pub fn first(&self) -> Option<&Entry> {
        self.entries.front()
    }
    /// The last segment sent (the highest in sequence).
    pub fn last(&self) -> Option<&Entry> {
        self.entries.back()
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes as u64
    }
    /// Bytes marked lost so far (Linux `tp->lost`), modulo 2^32: take differences with
    /// `wrapping_sub`.
    pub fn lost_marked(&self) -> u32 {
        self.lost_marked
    }
    /// Bytes in flight as Linux's `tcp_packets_in_flight()` counts them (in bytes): the table
    /// (`packets_out`) less what is SACKed or marked lost (`left_out`), plus the
    /// retransmissions not SACKed (`retrans_out`): RFC 6675's `SetPipe()`
    /// ([`pipe_rfc6675`](Self::pipe_rfc6675)) in O(1), the two marks counted as they change.
    /// A hole marked lost is out of flight until it is resent; a lost hole resent counts once;
    /// a segment resent without a loss mark (a tail loss probe) twice.
    pub fn in_flight_linux(&self) -> u64 {
        let (Some(first), Some(last)) = (self.entries.front(), self.entries.back()) else { return 0 };
        (last.end - first.start) - self.sacked_bytes as u64 - self.lost_out as u64 + self.retrans_out as u64
    }
    /// End of the highest SACKed byte range, if any SACK is held.
    pub fn high_sacked(&self) -> Option<u64> {
        (self.sacked_bytes > 0).then_some(self.high_sacked)
    }

    /// A segment was sent for the first time (must extend the table at its end).
    pub fn push(&mut self, start: u64, end: u64, fin: bool, now: SimTime) {
        debug_assert!(self.entries.back().is_none_or(|e| e.end == start), "scoreboard gap at {start}");
        self.entries.push_back(Entry { start, end, fin, tx_count: 0, sacked: false, lost: false, retransmitted: false, last_sent: now });
    }

    /// The entry starting at `seq`.
    pub fn get(&self, seq: u64) -> Option<&Entry> {
        self.index_of(seq).map(|i| &self.entries[i])
    }
    /// The index of the entry starting at `seq` (0: the first), for state kept beside the
    /// table in the same order (the sender's delivery-rate snapshots).
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        let i = self.entries.partition_point(|e| e.end <= seq);
        (i < self.entries.len() && self.entries[i].start == seq).then_some(i)
    }

    /// The entry at `seq` is being sent again: count it and mark it retransmitted.
    /// Returns the updated entry.
    pub fn on_retransmit(&mut self, seq: u64, now: SimTime) -> Entry {
        let i = self.index_of(seq).expect("retransmitting a segment not in the scoreboard");
        let e = &mut self.entries[i];
        e.tx_count = e.tx_count.saturating_add(1);
        if !e.retransmitted && !e.sacked {
            self.retrans_out += e.len() as u32;
        }
        e.retransmitted = true;
        e.last_sent = now;
        *e
    }

    /// The cumulative ACK reached `ack`: drops every entry that ends at or before it. An ACK
    /// inside an entry trims it (only a receive window edge inside a segment does that).
    pub fn ack(&mut self, ack: u64) {
        self.ack_with(ack, |_| {})
    }

    /// [`ack`](Self::ack), showing `f` each entry before it leaves, the first first (rate
    /// sampling).
    #[inline]
    pub fn ack_with(&mut self, ack: u64, mut f: impl FnMut(&mut Entry)) {
        while let Some(e) = self.entries.front_mut() {
            if e.end <= ack {
                f(e);
                let len = e.len() as u32;
                if e.sacked {
                    self.sacked_bytes -= len;
                } else if e.lost | e.retransmitted {
                    self.lost_out -= if e.lost { len } else { 0 };
                    self.retrans_out -= if e.retransmitted { len } else { 0 };
                }
                self.entries.pop_front();
            } else {
                if e.start < ack {
                    let gone = (ack - e.start) as u32;
                    if e.sacked {
                        self.sacked_bytes -= gone;
                    } else {
                        self.lost_out -= if e.lost { gone } else { 0 };
                        self.retrans_out -= if e.retransmitted { gone } else { 0 };
                    }
                    e.start = ack;
                }
                break;
            }
        }
        if self.sacked_bytes == 0 {
            self.high_sacked = 0;
        }
    }

    /// Marks every entry inside the blocks as SACKed. Returns the bytes newly SACKed.
    pub fn sack(&mut self, blocks: &[SackBlock]) -> u64 {
        self.sack_with(blocks, |_, _| {})
    }

    /// [`sack`](Self::sack), showing `f` each newly SACKed entry with its index (rate
    /// sampling).
    #[inline]
    pub fn sack_with(&mut self, blocks: &[SackBlock], mut f: impl FnMut(usize, &mut Entry)) -> u64 {
        let mut newly = 0;
        for b in blocks {
            let mut i = self.entries.partition_point(|e| e.end <= b.start);
            while i < self.entries.len() && self.entries[i].end <= b.end {
                let e = &mut self.entries[i];
                if e.start >= b.start && !e.sacked {
                    e.sacked = true;
                    if e.lost {
                        self.lost_out -= e.len() as u32;
                    }
                    if e.retransmitted {
                        self.retrans_out -= e.len() as u32;
                    }
                    e.lost = false;
                    newly += e.len();
                    self.high_sacked = self.high_sacked.max(e.end);
                    f(i, e);
                }
                i += 1;
            }
        }
        self.sacked_bytes += newly as u32;
        newly
    }

    /// Forgets all SACK information and loss marks (seed 001 §2.2.1: "When a timeout occurs,
    /// the sender resets the SACK table").
    pub fn clear_sack(&mut self) {
        for e in self.entries.iter_mut() {
            e.sacked = false;
            e.lost = false;
            e.retransmitted = false;
        }
        self.sacked_bytes = 0;
        self.high_sacked = 0;
        self.lost_out = 0;
        self.retrans_out = 0;
    }

    /// Marks the entry starting at `seq` lost (RFC 6675 §5 (4.3): the first segment is
    /// presumed dropped when recovery starts).
    pub fn mark_lost(&mut self, seq: u64) {
        if let Some(i) = self.index_of(seq) {
            let e = &mut self.entries[i];
            if !e.sacked && !e.lost {
                e.lost = true;
                self.lost_marked = self.lost_marked.wrapping_add(e.len() as u32);
                self.lost_out += e.len() as u32;
            }
        }
    }

    /// Marks lost every hole below the highest SACK (unSACKed, not retransmitted): Fall &
    /// Floyd's recovery resends exactly these (`next_hole`), and Linux's RACK in recovery, with
    /// no reordering seen, marks them as soon as a segment sent after them is SACKed (RFC 8985
    /// §6.2 step 4, reo_wnd = 0). Only under `Cc::keeps_sack_info`, to count the losses BBR
    /// deducts (Linux `rs->losses`); the marks change nothing else for that recovery.
    pub fn mark_holes_lost(&mut self) {
        let Some(hi) = self.high_sacked() else { return };
        for e in self.entries.iter_mut().take_while(|e| e.end <= hi) {
            if !e.sacked && !e.retransmitted && !e.lost {
                e.lost = true;
                self.lost_marked = self.lost_marked.wrapping_add(e.len() as u32);
                self.lost_out += e.len() as u32;
            }
        }
    }

    /// RACK found the retransmission of the entry at `seq` lost (tcp/rack.rs): it is lost and
    /// no longer in flight, so the recovery may send it again (Linux `tcp_mark_skb_lost()`:
    /// "retransmits that are lost again"). Returns its length, counted in `lost_marked`.
    pub fn mark_retransmission_lost(&mut self, seq: u64) -> u64 {
        let i = self.index_of(seq).expect("a retransmission in the scoreboard");
        let e = &mut self.entries[i];
        debug_assert!(!e.sacked, "RACK judges only retransmissions not SACKed");
        if e.retransmitted {
            self.retrans_out -= e.len() as u32;
        }
        if !e.lost {
            self.lost_out += e.len() as u32;
        }
        e.retransmitted = false;
        e.lost = true;
        self.lost_marked = self.lost_marked.wrapping_add(e.len() as u32);
        e.len()
    }

    /// Clears the `retransmitted` marks (a new recovery episode starts).
    pub fn clear_retransmitted(&mut self) {
        for e in self.entries.iter_mut() {
            e.retransmitted = false;
        }
        self.retrans_out = 0;
    }

    /// The first entry that is neither SACKed nor already retransmitted and lies below the
    /// highest SACKed byte: ns-2's `ScoreBoard::GetNextRetran()` (seed 001 §2.2.1: "it first
    /// tries to retransmit the holes in the SACK blocks").
    pub fn next_hole(&self) -> Option<&Entry> {
        let hi = self.high_sacked()?;
        self.entries.iter().take_while(|e| e.end <= hi).find(|e| !e.sacked && !e.retransmitted)
    }

    /// RFC 6675 `IsLost(seq)` for the entry `i`: at least `dup_thresh` SACKed segments, or
    /// more than `(dup_thresh - 1) * mss` SACKed bytes, lie above it.
    fn is_lost_at(&self, i: usize, dup_thresh: u32, mss: u64) -> bool {
        let (mut segs, mut bytes) = (0u32, 0u64);
        for e in self.entries.iter().skip(i + 1).filter(|e| e.sacked) {
            segs += 1;
            bytes += e.len();
            if segs >= dup_thresh || bytes > (dup_thresh as u64 - 1) * mss {
                return true;
            }
        }
        false
    }

    /// RFC 6675 (§4 "Update()"-time bookkeeping): marks lost every unSACKed, not yet
    /// retransmitted entry for which `IsLost()` holds. One backward pass, O(n).
    pub fn mark_lost_rfc6675(&mut self, dup_thresh: u32, mss: u64) {
        let (mut segs, mut bytes) = (0u32, 0u64);
        for e in self.entries.iter_mut().rev() {
            if e.sacked {
                segs += 1;
                bytes += e.len();
            } else if !e.retransmitted && !e.lost && (segs >= dup_thresh || bytes > (dup_thresh as u64 - 1) * mss) {
                e.lost = true;
                self.lost_marked = self.lost_marked.wrapping_add(e.len() as u32);
                self.lost_out += e.len() as u32;
            }
        }
    }

    /// RFC 6675 `IsLost()` of the first entry (used to enter recovery before three
    /// duplicate ACKs when SACKs already prove a loss).
    pub fn first_is_lost(&self, dup_thresh: u32, mss: u64) -> bool {
        !self.entries.is_empty() && !self.entries[0].sacked && self.is_lost_at(0, dup_thresh, mss)
    }

    /// RFC 6675 `SetPipe()`: bytes in flight = for every unSACKed entry, its length if it is
    /// not lost, plus its length again if it was retransmitted. The same as
    /// [`in_flight_linux`](Self::in_flight_linux), by a walk of the table (O(n)).
    pub fn pipe_rfc6675(&self) -> u64 {
        self.entries.iter().filter(|e| !e.sacked).map(|e| if e.lost { 0 } else { e.len() } + if e.retransmitted { e.len() } else { 0 }).sum()
    }

    /// Bytes of the unSACKed entries marked lost (Linux `tp->lost_out`): Linux's
    /// `tcp_time_to_recover()` starts fast recovery when it is not zero ("the loss is proven").
    pub fn lost_out(&self) -> u64 {
        self.lost_out as u64
    }

    /// RFC 8985 §6.2 step 5 over the originals (sent once, not SACKed, not marked lost),
    /// Linux `tcp_rack_detect_loss()` walking the segments outside fast recovery: an original
    /// sent before the latest delivered segment (sent at `xmit`, ending at `xmit_end`; at the
    /// same time, one below it) is lost once `wait` (RACK.rtt + RACK.reo_wnd) has passed since
    /// it left. Originals leave in sequence order, so the walk stops at the first sent after
    /// that segment, or at the first not yet due, whose time it returns (the reordering
    /// timer's). Returns the bytes marked. Retransmissions are RACK's own list (tcp/rack.rs).
    pub fn mark_originals_lost(&mut self, xmit: SimTime, xmit_end: u64, wait: SimTime, now: SimTime) -> (u64, Option<SimTime>) {
        let mut bytes = 0;
        for e in self.entries.iter_mut() {
            if e.sacked || e.lost || e.tx_count > 0 {
                continue;
            }
            if e.last_sent > xmit || e.last_sent == xmit && e.end > xmit_end {
                break;
            }
            let due = e.last_sent + wait;
            if now < due {
                self.lost_marked = self.lost_marked.wrapping_add(bytes as u32);
                self.lost_out += bytes as u32;
                return (bytes, Some(due));
            }
            e.lost = true;
            bytes += e.len();
        }
        self.lost_marked = self.lost_marked.wrapping_add(bytes as u32);
        self.lost_out += bytes as u32;
        (bytes, None)
    }

    /// The counts behind [`in_flight_linux`](Self::in_flight_linux) against a walk of the table.
    #[cfg(test)]
    #[track_caller]
    pub fn assert_counts(&self) {
        let unsacked = self.entries.iter().filter(|e| !e.sacked);
        let lost: u64 = unsacked.clone().filter(|e| e.lost).map(Entry::len).sum();
        let retrans: u64 = unsacked.filter(|e| e.retransmitted).map(Entry::len).sum();
        assert_eq!((self.lost_out as u64, self.retrans_out as u64), (lost, retrans), "lost_out, retrans_out");
        let sacked: u64 = self.entries.iter().filter(|e| e.sacked).map(Entry::len).sum();
        assert_eq!(self.sacked_bytes as u64, sacked, "sacked_bytes");
        assert_eq!(self.in_flight_linux(), self.pipe_rfc6675());
    }

    /// RFC 6675 `NextSeg()` rule 1: the first lost, unSACKed, not retransmitted entry.
    pub fn next_lost(&self) -> Option<&Entry> {
        self.entries.iter().find(|e| e.lost && !e.sacked && !e.retransmitted)
    }

    /// RFC 6675 `NextSeg()` rule 3: the first unSACKed, not retransmitted entry below the
    /// highest SACKed byte (not yet judged lost).
    pub fn next_unsacked_below_high(&self) -> Option<&Entry> {
        self.next_hole()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Ten segments [1, 10001) sent at t = 0.
    fn ten_sent() -> Scoreboard {
        let mut sb = Scoreboard::default();
        for i in 0..10 {
            sb.push(1 + i * MSS, 1 + (i + 1) * MSS, false, SimTime::ZERO);
        }
        sb
    }
    fn blk(start: u64, end: u64) -> SackBlock {
        SackBlock { start, end }
    }

    #[test]
    fn cumulative_ack_removes_from_the_front() {
        let mut sb = ten_sent();
        sb.ack(3001);
        assert_eq!(sb.len(), 7);
        assert_eq!(sb.first().unwrap().start, 3001);
    }

    #[test]
    fn sack_marks_whole_segments_and_holes_come_first() {
        let mut sb = ten_sent();
        // Segment 0 lost, 1..=3 received; then segment 5 lost, 6 received.
        assert_eq!(sb.sack(&[blk(1001, 4001), blk(6001, 7001)]), 4000);
        assert_eq!(sb.high_sacked(), Some(7001));
        assert_eq!(sb.next_hole().unwrap().start, 1);
        sb.on_retransmit(1, SimTime::ZERO);
        assert_eq!(sb.next_hole().unwrap().start, 4001);
        sb.on_retransmit(4001, SimTime::ZERO);
        assert_eq!(sb.next_hole().unwrap().start, 5001);
        sb.on_retransmit(5001, SimTime::ZERO);
        assert_eq!(sb.next_hole(), None, "nothing above the highest SACK is a hole");
        sb.ack(4001);
        assert_eq!(sb.sacked_bytes(), 1000);
    }

    #[test]
    fn rfc6675_is_lost_and_pipe() {
        let mut sb = ten_sent();
        sb.sack(&[blk(2001, 5001)]);
        sb.mark_lost_rfc6675(3, MSS);
        // Segment 0 has three SACKed segments above; segment 1 at [1001, 2001) too.
        assert!(sb.first_is_lost(3, MSS));
        assert_eq!(sb.iter().filter(|e| e.lost).count(), 2);
        // In flight: the 5 segments above the SACKed ones.
        assert_eq!(sb.pipe_rfc6675(), 5 * MSS);
        sb.on_retransmit(1, SimTime::ZERO);
        assert_eq!(sb.pipe_rfc6675(), 6 * MSS);
        assert_eq!(sb.next_lost().unwrap().start, 1001);
    }

    #[test]
    fn an_ack_inside_an_entry_trims_it_and_its_sacked_bytes() {
        let mut sb = ten_sent();
        // A receive-window edge inside segment 0: [1, 501) acknowledged, [501, 1001) stays.
        sb.ack(501);
        assert_eq!((sb.len(), sb.first().map(|e| (e.start, e.len()))), (10, Some((501, 500))));
        // Inside a SACKed entry: the acknowledged part leaves the SACKed bytes, which stay the
        // sum of the SACKed entries' lengths.
        sb.sack(&[blk(2001, 3001)]);
        sb.ack(2501);
        let sacked: u64 = sb.iter().filter(|e| e.sacked).map(Entry::len).sum();
        assert_eq!((sb.sacked_bytes(), sacked, sb.high_sacked()), (500, 500, Some(3001)));
        sb.ack(3001);
        assert_eq!((sb.sacked_bytes(), sb.high_sacked()), (0, None));
    }

    #[test]
    fn mark_lost_presumes_the_first_segment_dropped_unless_it_is_sacked() {
        // RFC 6675 (4.3) on entering recovery.
        let mut sb = ten_sent();
        sb.sack(&[blk(2001, 3001)]);
        assert_eq!(sb.pipe_rfc6675(), 9 * MSS);
        sb.mark_lost(1);
        assert_eq!(sb.next_lost().map(|e| e.start), Some(1));
        assert_eq!(sb.pipe_rfc6675(), 8 * MSS, "a lost segment is not in flight");
        sb.mark_lost(2001);
        assert!(!sb.get(2001).unwrap().lost, "a SACKed segment is never lost");
        sb.mark_lost(1500);
        assert_eq!(sb.iter().filter(|e| e.lost).count(), 1, "no entry starts at 1500");
    }

    #[test]
    fn is_lost_counts_sacked_segments_even_when_they_are_small() {
        // RFC 6675 IsLost(): DupThresh SACKed segments above, *or* more than (DupThresh - 1) *
        // SMSS SACKed bytes. A full segment, then three of 100 bytes (an application's small
        // writes): three segments of 300 bytes in all prove the first lost; two do not.
        let mut sb = Scoreboard::default();
        sb.push(1, 1001, false, SimTime::ZERO);
        for i in 0..3 {
            sb.push(1001 + i * 100, 1101 + i * 100, false, SimTime::ZERO);
        }
        sb.sack(&[blk(1101, 1301)]);
        assert!(!sb.first_is_lost(3, MSS));
        sb.mark_lost_rfc6675(3, MSS);
        assert_eq!(sb.next_lost(), None);
        sb.sack(&[blk(1001, 1101)]);
        assert!(sb.first_is_lost(3, MSS));
        sb.mark_lost_rfc6675(3, MSS);
        assert_eq!(sb.next_lost().map(|e| e.start), Some(1));
    }

    #[test]
    fn two_full_sacked_segments_are_not_more_than_dupthresh_minus_one_smss() {
        // RFC 6675 IsLost(): *more than* (3 - 1) * SMSS bytes; exactly 2 * SMSS in two
        // segments is not a loss, a third segment is.
        let mut sb = ten_sent();
        sb.sack(&[blk(1001, 3001)]);
        assert!(!sb.first_is_lost(3, MSS));
        sb.mark_lost_rfc6675(3, MSS);
        assert_eq!(sb.next_lost(), None);
        sb.sack(&[blk(3001, 4001)]);
        assert!(sb.first_is_lost(3, MSS));
        sb.mark_lost_rfc6675(3, MSS);
        assert_eq!(sb.next_lost().map(|e| e.start), Some(1));
    }

    /// Linux's `tcp_packets_in_flight()` from the counted marks: SACKed and lost bytes leave,
    /// retransmissions come back; the counts follow every mark, an ACK inside an entry and
    /// the timeout's reset, and agree with RFC 6675's `SetPipe()` walk (`assert_counts`).
    #[test]
    fn in_flight_linux_counts_out_sacked_and_lost_and_in_retransmissions() {
        let mut sb = ten_sent();
        assert_eq!(sb.in_flight_linux(), 10 * MSS);
        sb.sack(&[blk(3001, 5001)]);
        sb.mark_holes_lost();
        assert_eq!(sb.in_flight_linux(), 5 * MSS, "3 lost, 2 SACKed");
        sb.on_retransmit(1, SimTime::ZERO);
        sb.on_retransmit(5001, SimTime::ZERO); // not lost (a probe): in flight twice
        assert_eq!(sb.in_flight_linux(), 7 * MSS);
        sb.assert_counts();
        assert_eq!(sb.mark_retransmission_lost(1), MSS);
        assert_eq!(sb.in_flight_linux(), 6 * MSS, "a retransmission lost again");
        sb.sack(&[blk(5001, 6001)]);
        assert_eq!(sb.in_flight_linux(), 4 * MSS, "SACKed: neither original nor retransmission in flight");
        sb.ack(1501);
        sb.assert_counts();
        assert_eq!(sb.in_flight_linux(), 4 * MSS, "the acknowledged half of a lost entry was not in flight");
        sb.on_retransmit(1501, SimTime::ZERO);
        sb.ack(1801);
        sb.assert_counts();
        sb.ack(2001);
        sb.assert_counts();
        sb.clear_retransmitted();
        sb.mark_lost_rfc6675(3, MSS);
        sb.mark_lost(7001);
        sb.assert_counts();
        sb.clear_sack();
        sb.assert_counts();
        assert_eq!(sb.in_flight_linux(), 8 * MSS);
        assert_eq!(std::mem::size_of::<Scoreboard>(), 56, "the sender's third line: the table and the zero-window probe");
    }

    /// Two entries per cache line (issue 15): the rate snapshots live beside the table, in the
    /// sender, only where rate sampling is on.
    #[test]
    fn an_entry_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }

    #[test]
    fn sack_with_shows_each_newly_sacked_entry_with_its_index() {
        let mut sb = ten_sent();
        let mut seen = Vec::new();
        sb.sack_with(&[blk(2001, 4001)], |i, e| seen.push((i, e.start)));
        sb.sack_with(&[blk(2001, 5001)], |i, e| seen.push((i, e.start)));
        assert_eq!(seen, vec![(2, 2001), (3, 3001), (4, 4001)], "each entry once, at its index");
        assert_eq!(sb.index_of(4001), Some(4));
    }

    #[test]
    fn timeout_clears_the_table() {
        let mut sb = ten_sent();
        sb.sack(&[blk(2001, 5001)]);
        sb.clear_sack();
        assert_eq!(sb.high_sacked(), None);
        assert_eq!(sb.next_hole(), None);
    }
}
