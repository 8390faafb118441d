//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`): every ACK that newly delivers data (cumulatively or by SACK) yields a
//! [`RateSample`], the bytes delivered over the longer of the send and the ACK interval of the
//! most recently sent packet among those delivered. Congestion controllers that model the path
//! (BBR) read it; the classic ones ignore it.
//!
//! The connection keeps `delivered` (bytes delivered so far), `delivered_time` (when that count
//! last grew), `first_sent_time` (the send time of the packet that started the current
//! sampling flight) and `app_limited` (the `delivered` mark until which samples are
//! application-limited, 0 = none). Each transmission snapshots them ([`TxRate`], kept in the
//! scoreboard entry, as Linux keeps them in `TCP_SKB_CB(skb)->tx`). Counting is in bytes
//! (Linux counts packets; with whole segments the two differ only by the MSS factor).

use crate::time::SimTime;

/// The connection state a transmission snapshots (draft §3.2 "P.delivered", ...).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TxRate {
    /// `C.delivered` when the packet was sent.
    pub delivered: u64,
    /// `C.delivered_time` when the packet was sent; [`TxRate::RETIRED`] once the packet has
    /// been SACKed (Linux zeroes `tx.delivered_mstamp`), so a later cumulative ACK does not
    /// count it twice. (A sentinel rather than an `Option` keeps the scoreboard entry small.)
    pub delivered_time: SimTime,
    /// `C.first_sent_time` when the packet was sent.
    pub first_sent_time: SimTime,
    /// The packet was sent while the connection was application-limited.
    pub app_limited: bool,
}

impl TxRate {
    /// `delivered_time` of a packet already counted as delivered (or never snapshot).
    pub const RETIRED: SimTime = SimTime::MAX;
}

impl Default for TxRate {
    fn default() -> Self {
        TxRate { delivered: 0, delivered_time: TxRate::RETIRED, first_sent_time: SimTime::ZERO, app_limited: false }
    }
}

/// One ACK's delivery-rate sample (Linux `struct rate_sample`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over `interval` (`C.delivered - P.delivered`).
    pub delivered: u64,
    /// max(send interval, ACK interval); the sample is valid only if this is non-zero.
    pub interval: SimTime,
    /// Bytes newly delivered by this ACK (cumulatively acknowledged or SACKed).
    pub acked_sacked: u64,
    /// `C.delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// The sampled packet was sent while application-limited: the rate is a lower bound.
    pub is_app_limited: bool,
    /// The sampled packet was a retransmission.
    pub is_retrans: bool,
    /// RTT of the most recently sent packet this ACK delivered that was never retransmitted
    /// (Karn), exact in nanoseconds.
    pub rtt: Option<SimTime>,
    /// Bytes in flight before this ACK.
    pub prior_in_flight: u64,
    /// Bytes this ACK marked lost (Linux `rs->losses`), set by the sender once the recovery
    /// has acted: RFC 6675's `IsLost()` marks, Fall & Floyd's holes under
    /// `Cc::keeps_sack_info` (`Scoreboard::mark_holes_lost`), and RACK's lost retransmissions
    /// (tcp/rack.rs); 0 with the recoveries that mark nothing.
    pub losses: u64,
}

impl RateSample {
    /// The sample holds a rate (Linux: `rs->delivered >= 0 && rs->interval_us > 0`).
    pub fn is_valid(&self) -> bool {
        self.interval > SimTime::ZERO
    }
    /// Delivery rate in bytes per second (0 if invalid).
    pub fn rate_bytes_per_sec(&self) -> u64 {
        if !self.is_valid() {
            return 0;
        }
        (self.delivered as u128 * 1_000_000_000 / self.interval.as_nanos() as u128) as u64
    }
}

#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    app_limited: u64,
    /// Minimum RTT seen (Linux `tcp_min_rtt()`), to reject samples shorter than one RTT.
    min_rtt: Option<SimTime>,
    /// The sample being built from the packets one ACK delivers.
    rs: RateSample,
    /// `P.delivered_time` of the sampled packet (`rs.prior_mstamp`).
    prior_time: Option<SimTime>,
    /// The send time of the sampled packet (for the RTT sample: the latest sent).
    newest_sent: Option<SimTime>,
}

impl RateEstimator {
    /// Bytes delivered so far (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn min_rtt(&self) -> Option<SimTime> {
        self.min_rtt
    }
    /// Whether the connection is currently marked application-limited.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// A packet is sent (or resent) now with `in_flight` bytes outstanding before it
    /// (`tcp_rate_skb_sent`): the snapshot to store with it.
    #[inline]
    pub fn on_send(&mut self, now: SimTime, in_flight: u64) -> TxRate {
        if in_flight == 0 {
            // Draft §3.2: a new flight starts; its intervals are measured from now.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        TxRate { delivered: self.delivered, delivered_time: self.delivered_time, first_sent_time: self.first_sent_time, app_limited: self.app_limited != 0 }
    }

    /// Starts one ACK's sample.
    #[inline]
    pub fn begin_ack(&mut self, prior_in_flight: u64) {
        self.rs = RateSample { prior_in_flight, ..Default::default() };
        self.prior_time = None;
        self.newest_sent = None;
    }

    /// A packet of `len` bytes, last sent at `sent_time`, is newly delivered by the ACK being
    /// processed, cumulatively or by SACK (`tcp_rate_skb_delivered`). `tx` is its snapshot
    /// (retired here), `retransmitted` whether it was ever resent.
    #[inline]
    pub fn on_delivered(&mut self, now: SimTime, len: u64, sent_time: SimTime, tx: &mut TxRate, retransmitted: bool) {
        let dt = tx.delivered_time;
        if dt == TxRate::RETIRED {
            return;
        }
        self.delivered += len;
        self.rs.acked_sacked += len;
        if self.prior_time.is_none() || tx.delivered > self.rs.prior_delivered {
            self.rs.prior_delivered = tx.delivered;
            self.prior_time = Some(dt);
            self.rs.is_app_limited = tx.app_limited;
            self.rs.is_retrans = retransmitted;
            // Draft §3.3: the send interval runs from the flight's first send to this send.
            self.rs.interval = sent_time.saturating_sub(tx.first_sent_time);
            self.first_sent_time = sent_time;
        }
        if !retransmitted && self.newest_sent.is_none_or(|t| sent_time > t) {
            self.newest_sent = Some(sent_time);
            self.rs.rtt = Some(now - sent_time);
        }
        tx.delivered_time = TxRate::RETIRED;
    }

    /// Ends the ACK (`tcp_rate_gen`): the sample, valid or not (see [`RateSample::is_valid`]).
    #[inline]
    pub fn end_ack(&mut self, now: SimTime) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0; // the app-limited flight has been delivered
        }
        if self.rs.acked_sacked > 0 {
            self.delivered_time = now;
        }
        if let Some(rtt) = self.rs.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        let mut rs = self.rs;
        let Some(prior) = self.prior_time else {
            rs.interval = SimTime::ZERO;
            return rs;
        };
        rs.delivered = self.delivered - rs.prior_delivered;
        // Draft §3.3: interval = max(send_elapsed, ack_elapsed), so neither ACK compression
        // nor a send burst inflates the rate.
        let ack_elapsed = now.saturating_sub(prior);
        rs.interval = rs.interval.max(ack_elapsed);
        if self.min_rtt.is_some_and(|m| rs.interval < m) {
            // Linux: an interval shorter than the minimum RTT means the sample is unreliable
            // (e.g. an ACK that was stretched or reordered).
            rs.interval = SimTime::ZERO;
        }
        rs
    }

    /// The application has nothing more to send (`tcp_rate_check_app_limited`): if the
    /// sender is not limited by the window and no loss is being repaired, mark the rate
    /// samples of the packets sent from now on as application-limited until this flight is
    /// delivered.
    #[inline]
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    /// A hand-built ACK sequence: 10 packets leave 1 ms apart (a 1 packet/ms bottleneck) at
    /// t = 0..9 ms over a 100 ms round trip, and every ACK releases one new packet at once
    /// (ACK clocking, a window of 10 packets). The first round's samples ramp up from idle;
    /// from the second round on every sample is the window over the RTT: 10 packets per
    /// 100 ms = 100,000 B/s.
    #[test]
    fn samples_follow_the_ack_clock() {
        let mut r = RateEstimator::default();
        // (ack time, send time, snapshot) of each packet in flight, in order.
        let mut flight: std::collections::VecDeque<(SimTime, SimTime, TxRate)> = (0..10).map(|i| (ms(100 + i), ms(i), r.on_send(ms(i), i * MSS))).collect();
        assert_eq!((flight[9].2.first_sent_time, flight[9].2.delivered), (ms(0), 0));
        let mut samples = Vec::new();
        while samples.len() < 50 {
            let (now, sent, mut tx) = flight.pop_front().unwrap();
            r.begin_ack(10 * MSS);
            r.on_delivered(now, MSS, sent, &mut tx, false);
            samples.push(r.end_ack(now));
            flight.push_back((now + ms(100), now, r.on_send(now, 9 * MSS)));
        }
        // First round: packet i, sent at i ms with P.delivered = 0 at P.delivered_time = 0:
        // i+1 packets over max(send i ms, ACK 100+i ms).
        for (i, s) in samples[..10].iter().enumerate() {
            assert_eq!((s.delivered, s.interval, s.rtt), ((i as u64 + 1) * MSS, ms(100 + i as u64), Some(ms(100))), "round 1, ack {i}");
        }
        for (i, s) in samples[10..].iter().enumerate() {
            assert_eq!((s.delivered, s.interval), (10 * MSS, ms(100)), "ack {}", i + 10);
            assert_eq!(s.rate_bytes_per_sec(), 100_000);
            assert!(!s.is_app_limited);
        }
        assert_eq!(r.min_rtt(), Some(ms(100)));
    }

    /// A SACKed packet counts once: its later cumulative ACK adds nothing.
    #[test]
    fn a_sacked_packet_is_not_delivered_twice() {
        let mut r = RateEstimator::default();
        let mut a = r.on_send(ms(0), 0);
        let mut b = r.on_send(ms(1), MSS);
        r.begin_ack(2 * MSS);
        r.on_delivered(ms(101), MSS, ms(1), &mut b, false); // SACK of b
        let s = r.end_ack(ms(101));
        assert_eq!((s.acked_sacked, r.delivered()), (MSS, MSS));
        r.begin_ack(MSS);
        r.on_delivered(ms(150), MSS, ms(50), &mut a, true); // a retransmitted, then cumulatively ACKed
        r.on_delivered(ms(150), MSS, ms(1), &mut b, false); // already counted
        let s = r.end_ack(ms(150));
        assert_eq!((s.acked_sacked, r.delivered()), (MSS, 2 * MSS));
        assert_eq!(s.rtt, None, "Karn: no RTT from a retransmitted packet");
    }

    /// App-limited marking lasts until the flight outstanding at the mark is delivered.
    #[test]
    fn app_limited_marks_samples_until_the_flight_is_delivered() {
        let mut r = RateEstimator::default();
        let mut a = r.on_send(ms(0), 0);
        r.on_app_limited(MSS);
        assert!(r.is_app_limited());
        let mut b = r.on_send(ms(50), MSS);
        assert!(!a.app_limited && b.app_limited);
        r.begin_ack(2 * MSS);
        r.on_delivered(ms(100), MSS, ms(0), &mut a, false);
        let s = r.end_ack(ms(100));
        assert!(!s.is_app_limited);
        assert!(r.is_app_limited(), "the mark (delivered 0 + in flight 1000) is not yet passed");
        r.begin_ack(MSS);
        r.on_delivered(ms(150), MSS, ms(50), &mut b, false);
        let s = r.end_ack(ms(150));
        assert!(s.is_app_limited);
        assert!(!r.is_app_limited());
    }
}
