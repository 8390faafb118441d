//! The SGW's congestion control: a round-robin scheduler over the per-connection queues that
//! serves the satellite link at its rate (seed 004 §III.A: "we cancel all the congestion
//! control algorithms in TCP and substitute them with a scheduler as a centralized congestion
//! manager ... When the scheduler encounters an empty queue, it goes on to serve the next one").
//!
//! [`RoundRobin`] picks whose packet goes next; [`LinkClock`] says when the link can take the
//! next one, so that the scheduler never offers the link more than its rate: a packet starts
//! only when the previous one has been serialised. The world asks the clock for the next
//! departure time, and at that time asks the round robin for a connection with a packet ready.

use crate::time::{Rate, SimTime};

/// Round robin over `n` queues, skipping those with nothing to send.
#[derive(Clone, Debug)]
pub struct RoundRobin {
    n: usize,
    /// The queue served first at the next pick.
    next: usize,
}

impl RoundRobin {
    pub fn new(n: usize) -> Self {
        RoundRobin { n, next: 0 }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Adds a queue (a new connection) at the end of the cycle; returns its index.
    pub fn add(&mut self) -> usize {
        self.n += 1;
        self.n - 1
    }

    /// The next queue in cyclic order, starting after the one served last, for which `ready`
    /// holds; `None` when no queue is ready. O(n) in the worst case, O(1) when all are busy.
    pub fn pick(&mut self, mut ready: impl FnMut(usize) -> bool) -> Option<usize> {
        for i in 0..self.n {
            let q = (self.next + i) % self.n;
            if ready(q) {
                self.next = (q + 1) % self.n;
                return Some(q);
            }
        }
        None
    }
}

/// The satellite transmitter: one packet at a time, at the link's rate.
#[derive(Copy, Clone, Debug)]
pub struct LinkClock {
    rate: Rate,
    /// When the packet being serialised ends (the link is free from then on).
    busy_until: SimTime,
    /// Bytes and packets started so far.
    pub bytes: u64,
    pub packets: u64,
}

impl LinkClock {
    pub fn new(rate: Rate) -> Self {
        LinkClock { rate, busy_until: SimTime::ZERO, bytes: 0, packets: 0 }
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// True when a packet may start now.
    pub fn is_free(&self, now: SimTime) -> bool {
        now >= self.busy_until
    }

    /// When the link is free.
    pub fn free_at(&self) -> SimTime {
        self.busy_until
    }

    /// Starts serialising a packet of `bytes` at `now` (the link must be free); returns when
    /// its last bit leaves.
    pub fn start(&mut self, now: SimTime, bytes: u64) -> SimTime {
        debug_assert!(self.is_free(now), "the satellite link is busy until {:?}", self.busy_until);
        self.busy_until = now.max(self.busy_until) + self.rate.tx_time(bytes);
        self.bytes += bytes;
        self.packets += 1;
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_cycles_over_busy_queues() {
        let mut rr = RoundRobin::new(3);
        let order: Vec<_> = (0..7).map(|_| rr.pick(|_| true).unwrap()).collect();
        assert_eq!(order, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn round_robin_skips_empty_queues_and_keeps_its_place() {
        let mut rr = RoundRobin::new(4);
        let backlog = [2, 0, 1, 3];
        let mut left = backlog;
        let mut served = vec![];
        while let Some(q) = rr.pick(|q| left[q] > 0) {
            left[q] -= 1;
            served.push(q);
        }
        // Queue 1 is never served; each round serves every non-empty queue once.
        assert_eq!(served, [0, 2, 3, 0, 3, 3]);
        assert_eq!(rr.pick(|_| false), None);
    }

    #[test]
    fn a_queue_added_later_joins_the_cycle() {
        let mut rr = RoundRobin::new(2);
        assert_eq!(rr.pick(|_| true), Some(0));
        assert_eq!(rr.add(), 2);
        let order: Vec<_> = (0..4).map(|_| rr.pick(|_| true).unwrap()).collect();
        assert_eq!(order, [1, 2, 0, 1]);
    }

    #[test]
    fn the_link_never_carries_more_than_its_rate() {
        // 600 kbps (seed 004 §V.A), 552-byte packets (512 B segments + 40 B headers), three
        // greedy queues: every departure waits for the previous packet to be serialised.
        let rate = Rate::bps(600_000);
        let mut clock = LinkClock::new(rate);
        let mut rr = RoundRobin::new(3);
        let mut now = SimTime::ZERO;
        let mut starts = vec![];
        for _ in 0..1000 {
            assert!(clock.is_free(now));
            rr.pick(|_| true).unwrap();
            starts.push(now);
            now = clock.start(now, 552);
        }
        let tx = rate.tx_time(552);
        assert_eq!(tx, SimTime::from_nanos(7_360_000));
        assert!(starts.windows(2).all(|w| w[1] - w[0] == tx));
        // Over any span, bits carried <= rate x span (+ one packet in progress).
        let span = clock.free_at() - starts[0];
        assert!(clock.bytes * 8 * 1_000_000_000 <= rate.as_bps() * span.as_nanos());
        assert_eq!(clock.packets, 1000);
    }

    #[test]
    fn an_idle_link_starts_at_once() {
        let mut clock = LinkClock::new(Rate::mbps(1));
        let end = clock.start(SimTime::ZERO, 125);
        assert_eq!(end, SimTime::from_millis(1));
        // Idle for a while: the next packet starts when offered, not at the old end.
        let later = SimTime::from_millis(5);
        assert!(clock.is_free(later));
        assert_eq!(clock.start(later, 125), SimTime::from_millis(6));
    }
}
