//! Pacing: the sender releases segments no faster than a rate the congestion controller sets
//! (none by default: ACK clocking alone, as in the seeds). Modelled on Linux's internal TCP
//! pacing (`tcp_update_skb_after_send()`): each segment of `len` payload bytes pushes the
//! earliest departure time of the next one `len / rate` past the later of now and the previous
//! departure time, so an idle sender earns no credit for a burst.
//!
//! Passive like the rest of TCP: the sender asks [`Pacer::release_at`] before sending and, if
//! the answer is in the future, reports it through `poll_at()`; the engine calls back then.

use crate::time::SimTime;

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Bytes per second; `None`: no pacing.
    rate: Option<u64>,
    /// Earliest departure time of the next segment.
    next: SimTime,
}

impl Pacer {
    /// Sets (or with `None`, removes) the pacing rate in bytes per second. A rate of 0 is
    /// treated as 1 B/s (never a division by zero; a controller should not ask for it).
    pub fn set_rate(&mut self, rate: Option<u64>) {
        self.rate = rate.map(|r| r.max(1));
    }
    pub fn rate(&self) -> Option<u64> {
        self.rate
    }

    /// When the next segment may leave: `None` if now (or no pacing), else the time.
    #[inline]
    pub fn release_at(&self, now: SimTime) -> Option<SimTime> {
        (self.rate.is_some() && self.next > now).then_some(self.next)
    }

    /// A segment of `len` payload bytes left now.
    #[inline]
    pub fn on_send(&mut self, now: SimTime, len: u64) {
        if let Some(rate) = self.rate {
            let gap = SimTime((len as u128 * 1_000_000_000).div_ceil(rate as u128) as u64);
            self.next = self.next.max(now) + gap;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_leave_len_over_rate_apart_without_idle_credit() {
        let mut p = Pacer::default();
        p.on_send(SimTime::ZERO, 1000);
        assert_eq!(p.release_at(SimTime::ZERO), None, "no rate: no pacing");
        // 1,000,000 B/s: a 1000-byte segment every millisecond.
        p.set_rate(Some(1_000_000));
        let t0 = SimTime::from_secs(1);
        p.on_send(t0, 1000);
        assert_eq!(p.release_at(t0), Some(t0 + SimTime::from_millis(1)));
        p.on_send(t0 + SimTime::from_millis(1), 500);
        assert_eq!(p.release_at(t0 + SimTime::from_millis(1)), Some(t0 + SimTime::from_micros(1500)));
        // Idle for a second: the next segment may go at once, and the one after 1 ms later.
        let t1 = SimTime::from_secs(2);
        assert_eq!(p.release_at(t1), None);
        p.on_send(t1, 1000);
        assert_eq!(p.release_at(t1), Some(t1 + SimTime::from_millis(1)));
    }
}
