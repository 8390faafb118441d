//! The event queue: a binary min-heap ordered by (time, insertion sequence), so that events
//! at equal times run first-in first-out (nexosim's rule; DESIGN.md "Decisions").
//!
//! Timer cancellation is lazy and O(1): the owner of a timer remembers the deadline it has
//! scheduled and ignores an event whose deadline it no longer holds (see `TimerSlot`).

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
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

/// A priority queue of events of type `E`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_seq: 0 }
    }

    /// Schedules `event` at `time`. O(log n).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        // A u64 counter incremented once per event cannot wrap in any feasible run; say so
        // loudly rather than silently reorder events if it ever did.
        self.next_seq = seq.checked_add(1).expect("event sequence counter wrapped");
        self.heap.push(Entry { time, seq, event });
    }

    /// Time of the earliest event. O(1).
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Removes and returns the earliest event. O(log n).
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The one pending wake-up of a passive state machine (a TCP endpoint, an application).
///
/// The machine says when it next needs to run (`poll_at`); the engine keeps at most one live
/// event for it: a new deadline earlier than the scheduled one schedules a new event (the old
/// one becomes stale), a later one waits for the scheduled event, which then re-arms. An
/// event whose time is not the slot's deadline is stale and is dropped in O(1).
#[derive(Copy, Clone, Debug, Default)]
pub struct TimerSlot {
    scheduled: Option<SimTime>,
}

impl TimerSlot {
    /// Returns the time at which a new event must be scheduled, if any, for `want`.
    #[inline]
    #[must_use]
    pub fn arm(&mut self, want: Option<SimTime>) -> Option<SimTime> {
        match (want, self.scheduled) {
            (Some(w), Some(s)) if w >= s => None,
            (Some(w), _) => {
                self.scheduled = Some(w);
                Some(w)
            }
            (None, _) => None,
        }
    }

    /// Called when an event for this slot fires at `now`: true if it is the live one (the
    /// slot is then empty and the owner must run and re-arm), false if stale.
    #[inline]
    pub fn fire(&mut self, now: SimTime) -> bool {
        if self.scheduled == Some(now) {
            self.scheduled = None;
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
}
