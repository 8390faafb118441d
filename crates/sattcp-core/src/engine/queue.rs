//! The event queue, ordered by (time, insertion sequence), so that events at equal times run
//! first-in first-out (nexosim's rule; DESIGN.md "Decisions").
//!
//! A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
//! problem", JACM 37(2), 1990) over the event times: a discrete-event simulation never
//! schedules before the event it is running, so the times popped never decrease and an entry
//! can be filed by the highest bit in which its time differs from the last time popped.
//! Pushing is O(1) (append to one of 65 vectors); popping moves entries only to lower buckets,
//! so each entry moves at most 64 times and in practice a few. Unlike a binary heap of tens of
//! thousands of pending timers (issue 15: the cost per packet grew 4x from 10 to 10,000 flows,
//! most of it in the heap's cache misses), every access is a sequential walk of a vector.
//! Hand-written rather than a crate: the published radix heaps (`radix-heap`) order equal keys
//! arbitrarily and do not take the insertion sequence as a tie-break, which the run digests
//! depend on; here entries of one time are sorted by sequence when they reach bucket 0, so the
//! order popped is exactly the binary heap's (time, seq) order.
//!
//! The earliest entries wait in a sorted run (`now`): when the earliest bucket holds at most
//! `SORT_MAX` entries, it is sorted whole into the run instead of being spread over the lower
//! buckets, and an event scheduled before the run's last entry is inserted in its place. With
//! many flows, events are dense and the radix heap moved each entry through several buckets
//! (4.78 moves per event at 100,000 flows); the run takes most entries in one move, and the
//! events due next are known a few ahead (issue 15, bench/README.md "The sorted run").
//!
//! An event scheduled before the last time popped (no model does this; kept exact rather than
//! undefined) comes next all the same: before the radix base it waits in a small binary heap
//! that is served first, else it goes to the front of the run.
//!
//! Timer cancellation is lazy and O(1): the owner of a timer remembers the deadline it has
//! scheduled and ignores an event whose deadline it no longer holds (see `TimerSlot`).

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Entries moved by `refill` (into a lower bucket or into the run) since the process
/// started, with the feature `queue-stats` only: the bench prints them per event
/// (bench/README.md, "Entries moved per event by the radix heap").
#[cfg(feature = "queue-stats")]
pub static MOVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A bucket of at most this many entries is sorted whole into the run when it is the earliest
/// (8, 16, 32 and 128 measured: bench/README.md "The sorted run").
const SORT_MAX: usize = 32;

/// Buckets 1..=64: bucket i holds the entries whose time first differs from `last` at bit i-1.
const BUCKETS: usize = 65;

/// Bucket of `time` relative to the radix base `last` (`time >= last`): 0 if equal, else one
/// plus the index of the highest differing bit.
#[inline]
fn bucket_of(time: u64, last: u64) -> usize {
    (u64::BITS - (time ^ last).leading_zeros()) as usize
}

/// A priority queue of events of type `E`.
pub struct EventQueue<E> {
    /// The radix base: the time of the first entry the last refill put in `now` (at most the
    /// last time popped). Every entry in `buckets` has a time >= `last`.
    last: u64,
    /// The run: the earliest entries, in (time, sequence) order, every one of them due before
    /// any entry in `buckets` (or at the same time with a lower sequence number).
    now: VecDeque<Entry<E>>,
    /// Entries after `last`, by bucket (index 0 unused).
    buckets: [Vec<Entry<E>>; BUCKETS],
    /// Bit i set: `buckets[i]` is not empty.
    filled: u128,
    /// Entries scheduled before `last` (see the module comment).
    early: BinaryHeap<Entry<E>>,
    len: usize,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            last: 0,
            now: VecDeque::with_capacity(64),
            buckets: std::array::from_fn(|_| Vec::new()),
            filled: 0,
            early: BinaryHeap::new(),
            len: 0,
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time`. O(1). (Always inlined: its callers are the loop's
    /// per-packet paths, and when the compiler declined, the call cost about 1% of the
    /// instructions of a 100-flow run; bench/README.md.)
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        // A u64 counter incremented once per event cannot wrap in any feasible run; say so
        // loudly rather than silently reorder events if it ever did.
        self.next_seq = seq.checked_add(1).expect("event sequence counter wrapped");
        self.len += 1;
        let e = Entry { time: time.0, seq, event };
        if time.0 < self.last {
            self.early.push(e);
            return;
        }
        if let Some(back) = self.now.back() {
            if time.0 < back.time {
                // Inside the run: after every entry of its time or earlier (the newest sequence
                // number), before every later one. Before all of them is the common case with
                // few flows (a run of a few events far apart); a general insert there cost 3%
                // of the instructions at 10 flows.
                if self.now.front().is_some_and(|f| time.0 < f.time) {
                    self.now.push_front(e);
                } else {
                    let at = self.now.partition_point(|x| x.time <= time.0);
                    self.now.insert(at, e);
                }
                return;
            }
        }
        let b = bucket_of(time.0, self.last);
        if b == 0 {
            // The newest sequence number: its place is at the back.
            self.now.push_back(e);
        } else {
            self.buckets[b].push(e);
            self.filled |= 1 << b;
        }
    }

    /// Time of the earliest event. Amortised O(1); takes `&mut self` because it may move
    /// the next time's entries to the front.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if let Some(e) = self.early.peek() {
            return Some(SimTime(e.time));
        }
        if self.now.is_empty() && !self.refill() {
            return None;
        }
        Some(SimTime(self.now.front().expect("refilled").time))
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if let Some(e) = self.early.pop() {
            self.len -= 1;
            return Some((SimTime(e.time), e.event));
        }
        if self.now.is_empty() && !self.refill() {
            return None;
        }
        let e = self.now.pop_front().expect("refilled");
        self.len -= 1;
        Some((SimTime(e.time), e.event))
    }

    /// An event that will run soon, for prefetching (issue 15): the next one where it is
    /// known without work (the run is in order), else one entry of the earliest non-empty
    /// bucket (all of which run before any other bucket's). Does not look at events scheduled
    /// before the last time popped (rare).
    #[inline]
    pub fn peek_soon(&self) -> Option<&E> {
        if let Some(e) = self.now.front() {
            return Some(&e.event);
        }
        if self.filled == 0 {
            return None;
        }
        self.buckets[self.filled.trailing_zeros() as usize].last().map(|e| &e.event)
    }

    /// Moves the earliest entries into `now` (which is empty): the whole earliest bucket,
    /// sorted, if it is small, else the entries of its earliest time. False if there are none.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> bool {
        if self.filled == 0 {
            return false;
        }
        let b = self.filled.trailing_zeros() as usize;
        self.filled &= !(1 << b);
        let mut from = std::mem::take(&mut self.buckets[b]);
        if from.len() <= SORT_MAX {
            // Every entry of a higher bucket is later than all of this one's. The buckets keep
            // their base: the new `last` shares with the old one every bit above b-1.
            if from.len() > 1 {
                from.sort_unstable_by_key(|e| (e.time as u128) << 64 | e.seq as u128);
            }
            self.last = from[0].time;
            #[cfg(feature = "queue-stats")]
            MOVES.fetch_add(from.len() as u64, std::sync::atomic::Ordering::Relaxed);
            self.now.extend(from.drain(..));
            self.buckets[b] = from;
            return true;
        }
        let min = from.iter().map(|e| e.time).min().expect("bucket marked filled");
        self.last = min;
        // Every entry moves to a lower bucket: it shares with `min` the bits above b-1.
        #[cfg(feature = "queue-stats")]
        MOVES.fetch_add(from.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let mut sorted = true;
        for e in from.drain(..) {
            let nb = bucket_of(e.time, min);
            if nb == 0 {
                sorted &= self.now.back().is_none_or(|p| p.seq < e.seq);
                self.now.push_back(e);
            } else {
                self.buckets[nb].push(e);
                self.filled |= 1 << nb;
            }
        }
        if !sorted {
            self.now.make_contiguous().sort_unstable_by_key(|e| e.seq);
        }
        // Keep the bucket's allocation for its next entries.
        self.buckets[b] = from;
        true
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The one pending wake-up of a passive state machine (a TCP endpoint, an application).
///
/// The machine says when it next needs to run (`poll_at`); the engine keeps at most one live
/// event for it: a new deadline earlier than the scheduled one schedules a new event (the old
/// one becomes stale), a later one waits for the scheduled event, which then re-arms. An
/// event whose time is not the slot's deadline is stale and is dropped in O(1).
/// Eight bytes (`SimTime::MAX` for none, not an `Option` of 16): a flow's two slots share its
/// first cache line with its ends and routes (world/mod.rs `Flow`; issue 15). No deadline is
/// ever `SimTime::MAX` within a run (a run ends before it).
#[derive(Copy, Clone, Debug)]
pub struct TimerSlot {
    scheduled: SimTime,
}

impl Default for TimerSlot {
    fn default() -> Self {
        TimerSlot { scheduled: SimTime::MAX }
    }
}

impl TimerSlot {
    /// Returns the time at which a new event must be scheduled, if any, for `want`.
    #[inline]
    #[must_use]
    pub fn arm(&mut self, want: Option<SimTime>) -> Option<SimTime> {
        match want {
            Some(w) if w >= self.scheduled => None,
            Some(w) => {
                self.scheduled = w;
                Some(w)
            }
            None => None,
        }
    }

    /// Called when an event for this slot fires at `now`: true if it is the live one (the
    /// slot is then empty and the owner must run and re-arm), false if stale.
    #[inline]
    pub fn fire(&mut self, now: SimTime) -> bool {
        if self.scheduled == now && now != SimTime::MAX {
            self.scheduled = SimTime::MAX;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'b');
        q.push(SimTime(1), 'a');
        q.push(SimTime(5), 'c');
        q.push(SimTime(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    }

    #[test]
    fn timer_slot_keeps_one_live_event() {
        let mut s = TimerSlot::default();
        assert_eq!(s.arm(Some(SimTime(10))), Some(SimTime(10)));
        // A later deadline waits for the event already scheduled.
        assert_eq!(s.arm(Some(SimTime(20))), None);
        // An earlier one schedules a new event; the one at 10 becomes stale.
        assert_eq!(s.arm(Some(SimTime(5))), Some(SimTime(5)));
        assert!(s.fire(SimTime(5)));
        assert!(!s.fire(SimTime(10)), "stale event must be ignored");
        assert_eq!(s.arm(None), None);
    }

    #[test]
    fn peek_soon_names_an_event_that_runs_before_any_later_bucket() {
        let mut q = EventQueue::new();
        assert_eq!(q.peek_soon(), None);
        for (t, e) in [(10, 'a'), (20, 'b'), (1000, 'c'), (10, 'd')] {
            q.push(SimTime(t), e);
        }
        assert_eq!(q.pop(), Some((SimTime(10), 'a')));
        // 'd' waits at the current time: it is the next event.
        assert_eq!(q.peek_soon(), Some(&'d'));
        assert_eq!(q.pop(), Some((SimTime(10), 'd')));
        // Nothing at the current time: the earliest bucket holds only 'b'.
        assert_eq!(q.peek_soon(), Some(&'b'));
        assert_eq!(q.pop(), Some((SimTime(20), 'b')));
        assert_eq!(q.peek_soon(), Some(&'c'));
    }

    #[test]
    fn timer_slot_is_one_word_and_starts_empty() {
        assert_eq!(std::mem::size_of::<TimerSlot>(), 8);
        let mut s = TimerSlot::default();
        assert!(!s.fire(SimTime(0)), "an empty slot fires nothing");
        assert!(!s.fire(SimTime::MAX), "not even at the sentinel");
        assert_eq!(s.arm(Some(SimTime(0))), Some(SimTime(0)));
        assert!(s.fire(SimTime(0)));
    }
}

#[cfg(test)]
mod radix_tests {
    use super::*;
    use proptest::prelude::*;

    /// The order of the binary heap this queue replaced: (time, seq), seq = push order.
    struct Reference {
        heap: BinaryHeap<Entry<u32>>,
        seq: u64,
    }

    impl Reference {
        fn push(&mut self, time: u64, event: u32) {
            self.heap.push(Entry { time, seq: self.seq, event });
            self.seq += 1;
        }
        fn pop(&mut self) -> Option<(SimTime, u32)> {
            self.heap.pop().map(|e| (SimTime(e.time), e.event))
        }
    }

    #[test]
    fn an_event_before_the_last_time_popped_comes_first() {
        let mut q = EventQueue::new();
        q.push(SimTime(100), 'c');
        q.push(SimTime(300), 'd');
        assert_eq!(q.pop(), Some((SimTime(100), 'c')));
        q.push(SimTime(50), 'a');
        q.push(SimTime(60), 'b');
        q.push(SimTime(100), 'e');
        let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        assert_eq!(order, vec![(50, 'a'), (60, 'b'), (100, 'e'), (300, 'd')]);
        assert!(q.is_empty());
    }

    /// Pops everything left, in order.
    fn drain<E>(q: &mut EventQueue<E>) -> Vec<(u64, E)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn a_small_bucket_becomes_a_sorted_run_that_takes_earlier_events_in_place() {
        let mut q = EventQueue::new();
        q.push(SimTime(0), 0);
        // One bucket (times 32 to 63 differ from 0 first at bit 5), out of order, two at one
        // time (their push order decides).
        for (t, e) in [(50, 1), (34, 2), (44, 3), (34, 4), (40, 5)] {
            q.push(SimTime(t), e);
        }
        assert_eq!(q.pop(), Some((SimTime(0), 0)));
        assert_eq!(q.pop(), Some((SimTime(34), 2)), "the bucket is sorted into the run");
        // Now at 34, the run holds 34, 40, 44, 50: a push inside it (after the entry of 34).
        q.push(SimTime(36), 10);
        assert_eq!(q.pop(), Some((SimTime(34), 4)));
        assert_eq!(q.pop(), Some((SimTime(36), 10)));
        // Now at 36, the run holds 40, 44, 50: pushes before its front, at one of its times
        // (after the entry there), at its back's time (into a bucket, after it) and later.
        q.push(SimTime(38), 6);
        q.push(SimTime(40), 7);
        q.push(SimTime(50), 8);
        q.push(SimTime(60), 9);
        assert_eq!(q.peek_time(), Some(SimTime(38)));
        assert_eq!(q.peek_soon(), Some(&6));
        assert_eq!(drain(&mut q), vec![(38, 6), (40, 5), (40, 7), (44, 3), (50, 1), (50, 8), (60, 9)]);
    }

    #[test]
    fn a_large_bucket_is_spread_by_the_radix_rule_in_the_same_order() {
        let mut q = EventQueue::new();
        let mut r = Reference { heap: BinaryHeap::new(), seq: 0 };
        q.push(SimTime(0), 0);
        r.push(0, 0);
        // Four times SORT_MAX entries in one bucket (times 2^20 to 2^21), many sharing a time.
        for i in 1..=4 * SORT_MAX as u32 {
            let t = (1 << 20) + u64::from(i * 7919 % 97) * 1000;
            q.push(SimTime(t), i);
            r.push(t, i);
        }
        assert_eq!(q.pop(), r.pop());
        // Pushes between the entries as they run.
        let mut i = 1000;
        while let Some(e) = r.pop() {
            assert_eq!(q.pop(), Some(e));
            if i < 1100 {
                let t = e.0 .0 + u64::from(i % 5) * 400;
                q.push(SimTime(t), i);
                r.push(t, i);
                i += 1;
            }
        }
        assert_eq!(q.pop(), None);
    }

    proptest! {
        /// Interleaved pushes (mostly at or after the current time, as a simulation schedules,
        /// sometimes many at one time, sometimes before it) and pops: the same events in the
        /// same order as the binary heap, and the same peeked times.
        #[test]
        fn pops_in_the_binary_heaps_order(ops in proptest::collection::vec((0u8..10, 0u64..1 << 40, 0u8..4), 1..400)) {
            let mut q = EventQueue::new();
            let mut r = Reference { heap: BinaryHeap::new(), seq: 0 };
            let mut now = 0u64;
            for (i, &(op, delta, shape)) in ops.iter().enumerate() {
                if op < 6 {
                    let t = match shape {
                        0 => now,
                        1 => now + delta % 1000,
                        2 => now + delta,
                        _ => now.saturating_sub(delta % 500),
                    };
                    q.push(SimTime(t), i as u32);
                    r.push(t, i as u32);
                } else {
                    prop_assert_eq!(q.peek_time(), r.heap.peek().map(|e| SimTime(e.time)));
                    let got = q.pop();
                    prop_assert_eq!(got, r.pop());
                    if let Some((t, _)) = got {
                        now = now.max(t.0);
                    }
                }
                prop_assert_eq!(q.len(), r.heap.len());
            }
            while let Some(e) = r.pop() {
                prop_assert_eq!(q.pop(), Some(e));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
