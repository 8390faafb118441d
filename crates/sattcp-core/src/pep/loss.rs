//! Loss detection from in-order delivery on the FIFO satellite link (seed 004 §III.B, after
//! Samaraweera and Fairhurst 1998).
//!
//! The satellite link delivers in the order it sends, so a packet that left the scheduler
//! before one the client is known to hold, and is itself neither cumulatively nor selectively
//! acknowledged, was lost. In the seed's words: "All sent packets including retransmission
//! packets are sorted in the order they leave scheduler. We keep track of the right most
//! packets in sequence space of all selectively acknowledged packets. Whenever an
//! acknowledgment is received, we compare the current right most packet in the ACK with
//! previous one in sequence space. If the sequence number does not advance, our scheme does
//! nothing. While the sequence number does advance, our error recovery scheme is triggered.
//! The first match of the current right most packet in the sorted list must have arrived at
//! the client. If a packet before the right most packet in the sorted list is neither
//! cumulatively acknowledged nor selectively acknowledged, our scheme assumes the packet is
//! lost and retransmits it."
//!
//! Choices the seed leaves open (docs/gateway.md):
//! - "Right most packet": the highest segment covered by any SACK block of this ACK. An ACK
//!   without SACK blocks carries no ordering evidence beyond its cumulative point, and
//!   everything below that point is acknowledged, so it triggers nothing.
//! - "First match": the earliest transmission of that segment still in the list. If that copy
//!   was lost and a later copy arrived, using the earliest copy declares fewer packets lost,
//!   never more: the rule stays conservative when retransmissions are in flight.
//! - Entries up to the match are resolved (acknowledged, or declared lost and queued for a
//!   retransmission that re-enters the list at its end), so they leave the list: it holds only
//!   packets whose fate is unknown, and its length is bounded by what is in flight.

use super::SegNo;
use std::collections::VecDeque;

/// The list of packets in the order they left the scheduler, with the right-most SACKed
/// segment seen so far.
#[derive(Clone, Debug, Default)]
pub struct InOrderLossDetector {
    sent: VecDeque<SegNo>,
    /// Highest segment number covered by a SACK block so far.
    rightmost: Option<SegNo>,
}

impl InOrderLossDetector {
    pub fn new() -> Self {
        Self::default()
    }

    /// A transmission of segment `seg` (first or retransmission) left the scheduler.
    pub fn on_send(&mut self, seg: SegNo) {
        self.sent.push_back(seg);
    }

    /// Packets whose fate is still unknown.
    pub fn pending(&self) -> usize {
        self.sent.len()
    }

    /// Forgets the right-most point (normal SACK semantics clear the SACK state on a
    /// timeout, so the next SACKed segment counts as an advance again).
    pub fn reset_rightmost(&mut self) {
        self.rightmost = None;
    }

    /// An ACK arrived whose highest SACKed segment is `rightmost` (`None` without SACK blocks)
    /// and after which `acked(s)` tells whether segment `s` is held by the client
    /// (cumulatively or selectively). Pushes onto `lost` every segment this ACK proves lost,
    /// in the order they were sent.
    pub fn on_ack(&mut self, cum: SegNo, rightmost: Option<SegNo>, acked: impl Fn(SegNo) -> bool, lost: &mut Vec<SegNo>) {
        // Packets below the cumulative point are settled; drop them from the front so the list
        // stays short when there are no losses.
        while self.sent.front().is_some_and(|&s| s < cum) {
            self.sent.pop_front();
        }
        let Some(r) = rightmost else { return };
        if self.rightmost.is_some_and(|prev| r <= prev) {
            return;
        }
        self.rightmost = Some(r);
        let Some(pos) = self.sent.iter().position(|&s| s == r) else { return };
        for s in self.sent.drain(..=pos) {
            if s != r && !acked(s) && !lost.contains(&s) {
                lost.push(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's holdings: everything below `cum` plus the SACKed ranges.
    fn holds(cum: SegNo, sacked: &[(SegNo, SegNo)]) -> impl Fn(SegNo) -> bool + '_ {
        move |s| s < cum || sacked.iter().any(|&(a, b)| (a..b).contains(&s))
    }

    #[track_caller]
    fn ack(d: &mut InOrderLossDetector, cum: SegNo, sacked: &[(SegNo, SegNo)]) -> Vec<SegNo> {
        let rightmost = sacked.iter().map(|&(_, b)| b - 1).max();
        let mut lost = vec![];
        d.on_ack(cum, rightmost, holds(cum, sacked), &mut lost);
        lost
    }

    fn sent(segs: impl IntoIterator<Item = SegNo>) -> InOrderLossDetector {
        let mut d = InOrderLossDetector::new();
        segs.into_iter().for_each(|s| d.on_send(s));
        d
    }

    #[test]
    fn in_order_acks_declare_nothing_and_keep_the_list_short() {
        let mut d = sent(0..10);
        for cum in 1..=10 {
            assert_eq!(ack(&mut d, cum, &[]), Vec::<SegNo>::new());
        }
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn a_first_loss_is_found_by_the_next_sack() {
        // 0..6 sent, 2 corrupted: the client acks 0,1 and SACKs 3.
        let mut d = sent(0..6);
        assert_eq!(ack(&mut d, 2, &[(3, 4)]), [2]);
        // Further SACKs of later segments find nothing new.
        assert_eq!(ack(&mut d, 2, &[(3, 6)]), Vec::<SegNo>::new());
    }

    #[test]
    fn several_losses_in_one_window_are_found_at_once() {
        // 1, 3 and 4 lost; the ACK for 5 SACKs 2 and 5.
        let mut d = sent(0..6);
        assert_eq!(ack(&mut d, 1, &[(5, 6), (2, 3)]), [1, 3, 4]);
    }

    #[test]
    fn nothing_happens_when_the_rightmost_does_not_advance() {
        let mut d = sent(0..8);
        assert_eq!(ack(&mut d, 0, &[(5, 6)]), [0, 1, 2, 3, 4]);
        // An ACK SACKing only older data (e.g. a late ACK) does not advance the right edge.
        assert_eq!(ack(&mut d, 0, &[(2, 3), (5, 6)]), Vec::<SegNo>::new());
    }

    #[test]
    fn a_lost_retransmission_is_found_from_the_sending_order() {
        // 0..5 sent, 1 lost; SACK of 2 finds it.
        let mut d = sent(0..5);
        assert_eq!(ack(&mut d, 1, &[(2, 3)]), [1]);
        // The retransmission of 1 leaves after 4, then new segments 5, 6.
        d.on_send(1);
        d.on_send(5);
        d.on_send(6);
        // The retransmission is lost too: the client SACKs 5 (sent after it) -> lost again.
        assert_eq!(ack(&mut d, 1, &[(2, 6)]), [1]);
        d.on_send(1);
        d.on_send(7);
        // This time it arrives: the cumulative ACK jumps; nothing is declared.
        assert_eq!(ack(&mut d, 8, &[]), Vec::<SegNo>::new());
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn the_first_copy_in_sending_order_is_the_match() {
        // Segment 3 was sent twice (first copy, then a timer retransmission after 4 and 5).
        let mut d = sent([0, 1, 2, 3, 4, 5, 3]);
        // Client holds 0, 1, and SACKs 3 only (2, 4, 5 lost or late). The earliest copy of 3
        // is matched: only 2, sent before it, is declared lost, not 4 and 5 (the later copy
        // of 3 may be the one that arrived).
        assert_eq!(ack(&mut d, 2, &[(3, 4)]), [2]);
        assert_eq!(d.pending(), 3);
    }

    #[test]
    fn a_segment_sent_twice_before_the_match_is_reported_once() {
        // Timer expiry sends two copies of 1 (seed 004 §III.B), both lost, then 2 arrives.
        let mut d = sent([0, 1, 1, 2]);
        assert_eq!(ack(&mut d, 1, &[(2, 3)]), [1]);
    }

    #[test]
    fn after_a_reset_the_same_rightmost_triggers_again() {
        let mut d = sent(0..4);
        assert_eq!(ack(&mut d, 0, &[(3, 4)]), [0, 1, 2]);
        d.reset_rightmost();
        d.on_send(0);
        d.on_send(3);
        assert_eq!(ack(&mut d, 0, &[(3, 4)]), [0]);
    }
}
