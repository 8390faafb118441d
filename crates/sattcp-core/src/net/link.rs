//! One-way links with a FIFO drop-tail queue at their sending end.
//!
//! A link serialises packets at its rate, one after another, and delivers each one
//! `delay` after its last bit left. Because the queue is FIFO and the rate fixed, the instant
//! a packet will finish transmission is known when it is enqueued: `enqueue` returns its
//! arrival time at the far end, and no event is needed for the transmitter (the engine keeps
//! each link's packets in flight in a FIFO and schedules only the head). The queue length at
//! any instant is recovered from the start times of the packets still waiting.
//!
//! `QueueLimit::Packets(n)` counts the packets waiting, not the one being transmitted: n wait.
//! ns-2's `DropTail` limit means one less: it drops an arrival when `q_->length() + 1 >=
//! qlim_` (`drop-tail.cc`), so `queue-limit 8` holds 7 waiting packets plus the one in
//! service; `QueueLimit::PacketsNs2(n)` has that meaning (tcp/ns2.rs `drop_tail_ns2`).

use crate::engine::rng::Rng;
use crate::metrics::result::Trace;
use crate::net::packet::NodeId;
use crate::time::{Rate, SimTime};
use std::collections::VecDeque;

/// How much a drop-tail queue holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Bytes(u64),
    Packets(u64),
    /// ns-2's meaning of a packet limit: n - 1 waiting plus the one in service.
    PacketsNs2(u64),
}

/// Why a packet was lost on a link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The drop-tail queue was full on arrival.
    QueueFull,
    /// A bit error corrupted the packet; the receiving node discarded it.
    Corrupted,
    /// A scripted loss (test harness / loss script).
    Scripted,
    /// A moving link had no path when the packet's transmission ended (net::schedule).
    NoRoute,
}

/// Per-link counters. `repr(C)`: the three every packet updates come first (they end the
/// link's first cache line, see [`Link`]).
#[derive(Clone, Debug, Default, serde::Serialize)]
#[repr(C)]
pub struct LinkStats {
    pub packets: u64,
    pub bytes: u64,
    /// Sum of transmission times, for utilisation.
    pub busy_ns: u64,
    pub peak_queue_packets: u64,
    pub peak_queue_bytes: u64,
    pub drops_queue_full: u64,
    pub drops_corrupted: u64,
    pub drops_scripted: u64,
}

/// What enqueuing a packet decided.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Accepted: arrives at the far end at `arrival` (`corrupted` by a bit error or not).
    Sent { arrival: SimTime, corrupted: bool },
    Dropped(DropReason),
}

/// Laid out by hand (`repr(C)`; issue 15, bench/README.md). With 10,000 flows there are 40,000
/// access links, and every line a packet touches is a likely cache miss, so a packet that finds
/// the transmitter idle touches only the first line (its start, rate, delay, bit errors and the
/// three counters it updates); one that has to wait also touches the second and third (the
/// queue, its limit, its peaks and time integral). The queue's integral is brought up to date
/// only where the queue changes (a packet starts waiting or leaves it), which sums the same
/// integer products as bringing it up to date at every packet.
#[repr(C, align(64))]
pub struct Link {
    /// When the transmitter is free again.
    busy_until: SimTime,
    /// Start of transmission of the first packet waiting (`SimTime::MAX`: none waits), so
    /// that a packet finding no queue does not read the queue.
    next_start: SimTime,
    pub delay: SimTime,
    pub rate: Rate,
    /// Bit error rate; a packet of b bits is corrupted with probability 1-(1-BER)^b.
    pub ber: f64,
    pub stats: LinkStats,
    waiting_bytes: u64,
    /// Last instant the queue integral was brought up to date (meaningful while packets wait).
    integ_at: SimTime,
    pub from: NodeId,
    pub to: NodeId,
    /// Integral of queued bytes over time (byte x ns), for the time-weighted mean.
    queue_byte_ns: u128,
    /// (start of transmission, bytes) of packets accepted but not yet started.
    waiting: VecDeque<(SimTime, u32)>,
    /// The drop-tail limit as a number of packets waiting and of bytes waiting (`u64::MAX`:
    /// none), from the [`QueueLimit`].
    max_waiting: u64,
    max_waiting_bytes: u64,
    /// Packets waiting, recorded at every change (arrivals and departures) when traced.
    pub trace: Option<Trace>,
    errors: Rng,
    pub name: String,
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: String, from: NodeId, to: NodeId, rate: Rate, delay: SimTime, ber: f64, limit: QueueLimit, errors: Rng) -> Self {
        let (max_waiting, max_waiting_bytes) = match limit {
            QueueLimit::Packets(n) => (n, u64::MAX),
            // drop-tail.cc `DropTail::enque()`: `(q_->length() + 1) >= qlim_` drops, that is
            // at n - 1 waiting (n = 0: every packet that would wait).
            QueueLimit::PacketsNs2(n) => (n.saturating_sub(1), u64::MAX),
            QueueLimit::Bytes(b) => (u64::MAX, b),
        };
        Link {
            name,
            from,
            to,
            rate,
            delay,
            ber,
            max_waiting,
            max_waiting_bytes,
            errors,
            busy_until: SimTime::ZERO,
            next_start: SimTime::MAX,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            integ_at: SimTime::ZERO,
            queue_byte_ns: 0,
            stats: LinkStats::default(),
            trace: None,
        }
    }

    /// When the transmitter is free again: the end of the transmission of the packet enqueued
    /// last.
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }

    /// Advances the queue to `now`: packets whose transmission has started leave the queue.
    #[inline]
    fn drain(&mut self, now: SimTime) {
        if self.next_start > now {
            return;
        }
        self.drain_started(now);
    }

    #[inline(never)]
    fn drain_started(&mut self, now: SimTime) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.integrate(start);
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
            if let Some(tr) = &mut self.trace {
                tr.record(start.as_secs_f64(), self.waiting.len() as f64);
            }
        }
        self.next_start = self.waiting.front().map_or(SimTime::MAX, |&(start, _)| start);
    }

    #[inline]
    fn integrate(&mut self, t: SimTime) {
        if t > self.integ_at {
            self.queue_byte_ns += self.waiting_bytes as u128 * (t.0 - self.integ_at.0) as u128;
            self.integ_at = t;
        }
    }

    /// Packets waiting at `now` (not counting the one in transmission).
    pub fn queue_packets(&mut self, now: SimTime) -> u64 {
        self.drain(now);
        self.waiting.len() as u64
    }

    pub fn queue_bytes(&mut self, now: SimTime) -> u64 {
        self.drain(now);
        self.waiting_bytes
    }

    /// Offers a packet of `bytes` to the link at `now`.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, bytes: u32) -> Admit {
        self.drain(now);
        let start = self.busy_until.max(now);
        if start > now && !self.wait(now, start, bytes) {
            self.stats.drops_queue_full += 1;
            return Admit::Dropped(DropReason::QueueFull);
        }
        let tx = self.rate.tx_time(bytes as u64);
        self.busy_until = start + tx;
        self.stats.packets += 1;
        self.stats.bytes += bytes as u64;
        self.stats.busy_ns += tx.0;
        let corrupted = self.ber > 0.0 && {
            // P(corrupt) = 1 - (1 - BER)^bits, computed stably with libm.
            let bits = bytes as f64 * 8.0;
            let p = -libm::expm1(bits * libm::log1p(-self.ber));
            self.errors.bernoulli(p)
        };
        if corrupted {
            self.stats.drops_corrupted += 1;
        }
        Admit::Sent { arrival: self.busy_until + self.delay, corrupted }
    }

    /// A packet of `bytes` offered at `now` has to wait until `start`: false if the drop-tail
    /// queue is full, else it joins the queue.
    #[inline]
    fn wait(&mut self, now: SimTime, start: SimTime, bytes: u32) -> bool {
        if self.waiting.len() as u64 >= self.max_waiting || self.waiting_bytes + bytes as u64 > self.max_waiting_bytes {
            return false;
        }
        if self.waiting.is_empty() {
            // Nothing waited since `integ_at`: the integral had nothing to add.
            self.integ_at = now;
            self.next_start = start;
        } else {
            self.integrate(now);
        }
        self.waiting.push_back((start, bytes));
        self.waiting_bytes += bytes as u64;
        if let Some(tr) = &mut self.trace {
            tr.record(now.as_secs_f64(), self.waiting.len() as f64);
        }
        self.stats.peak_queue_packets = self.stats.peak_queue_packets.max(self.waiting.len() as u64);
        self.stats.peak_queue_bytes = self.stats.peak_queue_bytes.max(self.waiting_bytes);
        true
    }

    /// Closes the statistics at the end of the run.
    pub fn finish(&mut self, end: SimTime) {
        self.drain(end);
        self.integrate(end);
    }

    /// Fraction of `duration` the transmitter was busy (transmissions that ran past the end
    /// are counted up to the end).
    pub fn utilization(&self, duration: SimTime) -> f64 {
        if duration.0 == 0 {
            return 0.0;
        }
        let over = self.busy_until.saturating_sub(duration).0;
        (self.stats.busy_ns.saturating_sub(over)) as f64 / duration.0 as f64
    }

    pub fn mean_queue_bytes(&self, duration: SimTime) -> f64 {
        if duration.0 == 0 {
            return 0.0;
        }
        self.queue_byte_ns as f64 / duration.0 as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::RngFactory;

    fn link(limit: QueueLimit) -> Link {
        Link::new("l".into(), 0, 1, Rate::mbps(8), SimTime::from_millis(10), 0.0, limit, RngFactory::new(1).stream("x"))
    }

    #[test]
    fn an_unqueued_packet_touches_one_line() {
        use std::mem::offset_of;
        // issue 15: what `enqueue` reads and writes for a packet that does not wait.
        let line0 = [offset_of!(Link, busy_until), offset_of!(Link, next_start), offset_of!(Link, delay), offset_of!(Link, rate), offset_of!(Link, ber)];
        assert!(line0.iter().all(|&o| o < 64));
        assert_eq!(offset_of!(Link, stats) + offset_of!(LinkStats, busy_ns) + 8, 64);
        // A packet that waits: the second and third lines.
        assert!(offset_of!(Link, max_waiting_bytes) + 8 <= 192);
    }

    #[test]
    fn back_to_back_packets_serialise() {
        let mut l = link(QueueLimit::Packets(10));
        // 1000 bytes at 8 Mbps = 1 ms.
        assert_eq!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { arrival: SimTime::from_millis(11), corrupted: false });
        assert_eq!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { arrival: SimTime::from_millis(12), corrupted: false });
        assert_eq!(l.queue_packets(SimTime::ZERO), 1);
        assert_eq!(l.queue_packets(SimTime::from_millis(1)), 0);
    }

    #[test]
    fn a_long_queue_keeps_its_order_and_its_integral() {
        // 8 Mbps: 1000 bytes take 1 ms; 10 ms of delay. Six packets at once: one starts, five
        // wait, with different sizes so that each start differs.
        let mut l = link(QueueLimit::Packets(10));
        let us = SimTime::from_micros;
        let sent = |a: Admit| match a {
            Admit::Sent { arrival, .. } => arrival,
            other => panic!("dropped: {other:?}"),
        };
        let arrivals: Vec<SimTime> = [1000, 2000, 500, 1500, 1000, 3000].iter().map(|&b| sent(l.enqueue(SimTime::ZERO, b))).collect();
        assert_eq!(arrivals, [11_000, 13_000, 13_500, 15_000, 16_000, 19_000].map(us));
        assert_eq!((l.queue_packets(SimTime::ZERO), l.queue_bytes(SimTime::ZERO)), (5, 8000));
        assert_eq!(l.queue_packets(us(1000)), 4);
        assert_eq!((l.queue_packets(us(3500)), l.queue_bytes(us(3500))), (2, 4000));
        // One more while two wait: it goes after them.
        assert_eq!(sent(l.enqueue(us(4000), 1000)), us(20_000));
        let left: Vec<u64> = [4000, 5000, 6000, 8999, 9000].iter().map(|&t| l.queue_packets(us(t))).collect();
        assert_eq!(left, [3, 2, 1, 1, 0]);
        assert_eq!(l.stats.peak_queue_packets, 5);
        // Waiting byte-milliseconds: 2000 x 1 + 500 x 3 + 1500 x 3.5 + 1000 x 5 + 3000 x 6 +
        // 1000 x 5 (the last, from 4 to 9 ms) = 36,750, over 10 ms.
        l.finish(us(10_000));
        assert!((l.mean_queue_bytes(us(10_000)) - 3675.0).abs() < 1e-9);
    }

    #[test]
    fn drop_tail_counts_waiting_packets_only() {
        let mut l = link(QueueLimit::Packets(2));
        for _ in 0..3 {
            assert!(matches!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { .. }));
        }
        assert_eq!(l.enqueue(SimTime::ZERO, 1000), Admit::Dropped(DropReason::QueueFull));
        assert_eq!(l.stats.drops_queue_full, 1);
        assert_eq!(l.stats.peak_queue_packets, 2);
    }

    #[test]
    fn ns2_limit_counts_the_packet_in_service() {
        // ns-2 `queue-limit 2`: one in service, one waiting, the third arrival dropped.
        let mut l = link(QueueLimit::PacketsNs2(2));
        for _ in 0..2 {
            assert!(matches!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { .. }));
        }
        assert_eq!(l.enqueue(SimTime::ZERO, 1000), Admit::Dropped(DropReason::QueueFull));
        assert_eq!(l.stats.peak_queue_packets, 1);
    }

    #[test]
    fn trace_records_arrivals_and_departures() {
        let mut l = link(QueueLimit::Packets(10));
        l.trace = Some(Trace::default());
        for _ in 0..3 {
            let _ = l.enqueue(SimTime::ZERO, 1000);
        }
        l.finish(SimTime::from_millis(10));
        let tr = l.trace.unwrap();
        // 1 ms per packet: the first is sent at once, the second and third wait (1, then 2 at
        // t = 0); one starts at 1 ms, the last at 2 ms.
        assert_eq!(tr.t, vec![0.0, 0.0, 0.001, 0.002]);
        assert_eq!(tr.v, vec![1.0, 2.0, 1.0, 0.0]);
    }

    #[test]
    fn byte_limit_and_mean_queue() {
        let mut l = link(QueueLimit::Bytes(1500));
        assert!(matches!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { .. }));
        assert!(matches!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { .. }));
        assert_eq!(l.enqueue(SimTime::ZERO, 1000), Admit::Dropped(DropReason::QueueFull));
        l.finish(SimTime::from_millis(4));
        // 1000 bytes waited 1 ms out of 4 ms: mean 250 bytes; busy 2 of 4 ms.
        assert!((l.mean_queue_bytes(SimTime::from_millis(4)) - 250.0).abs() < 1e-9);
        assert!((l.utilization(SimTime::from_millis(4)) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn stats_count_what_was_sent_and_not_what_was_dropped() {
        // Packets(1): one in service, one waiting, the third dropped. 8 Mbps: a byte is 1 us.
        let mut l = link(QueueLimit::Packets(1));
        for b in [1000, 500] {
            assert!(matches!(l.enqueue(SimTime::ZERO, b), Admit::Sent { .. }));
        }
        assert_eq!(l.enqueue(SimTime::ZERO, 700), Admit::Dropped(DropReason::QueueFull));
        let s = &l.stats;
        assert_eq!((s.packets, s.bytes, s.busy_ns, s.drops_queue_full), (2, 1500, 1_500_000, 1));
        assert_eq!((s.peak_queue_packets, s.peak_queue_bytes), (1, 500));
    }

    #[test]
    fn a_byte_limit_admits_a_packet_that_fills_it_exactly() {
        // Bytes(2000): the waiting bytes may reach the limit, not pass it.
        let mut l = link(QueueLimit::Bytes(2000));
        for _ in 0..3 {
            assert!(matches!(l.enqueue(SimTime::ZERO, 1000), Admit::Sent { .. }), "one in service, 2000 bytes waiting");
        }
        assert_eq!(l.enqueue(SimTime::ZERO, 1), Admit::Dropped(DropReason::QueueFull));
        assert_eq!(l.queue_bytes(SimTime::ZERO), 2000);
    }

    #[test]
    fn bit_errors_corrupt_at_the_expected_rate() {
        let mut l = Link::new("l".into(), 0, 1, Rate::mbps(1000), SimTime::ZERO, 1e-5, QueueLimit::Packets(1 << 40), RngFactory::new(3).stream("e"));
        let n = 20_000;
        let mut bad = 0;
        for i in 0..n {
            if let Admit::Sent { corrupted: true, .. } = l.enqueue(SimTime::from_millis(i), 1250) {
                bad += 1;
            }
        }
        // 10,000 bits at BER 1e-5: p = 1 - (1-1e-5)^10000 = 0.09516.
        let p = bad as f64 / n as f64;
        assert!((p - 0.09516).abs() < 0.007, "{p}");
    }
}
