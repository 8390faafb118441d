//! ACK pacing toward the servers (seed 004 §IV: "acknowledgements are paced out to the
//! Internet servers based on the number of packets acknowledged by each acknowledgement and
//! the acknowledgement inter-arrival time of the satellite connections"; RFC 2760 §5.2).
//!
//! When a satellite ACK frees `R` bytes of a connection's SGW buffer, the terrestrial
//! receiver could advertise all of it at once, and the server would answer with a burst of
//! `R` bytes. The pacer instead hands the room out one segment at a time, evenly over the
//! expected time until the next satellite ACK (the smoothed inter-arrival time of the
//! satellite ACKs, gain 1/8 as RFC 6298's SRTT): the first segment at once, the rest at equal
//! steps. Room not yet handed out when the next ACK arrives is added to the new amount and
//! spread again. Disabled (or before two ACKs have given an inter-arrival time), all room is
//! handed out at once.
//!
//! The world applies what [`AckPacer`] releases as the application reading from the
//! terrestrial TCP's receive buffer, which opens the window the server sees.

use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct AckPacer {
    enabled: bool,
    mss: u64,
    last_ack: Option<SimTime>,
    /// Smoothed satellite ACK inter-arrival time.
    interval: Option<SimTime>,
    /// Room freed and not yet handed out.
    owed: u64,
    step: SimTime,
    next_at: Option<SimTime>,
}

impl AckPacer {
    pub fn new(enabled: bool, mss: u32) -> Self {
        AckPacer { enabled, mss: mss as u64, last_ack: None, interval: None, owed: 0, step: SimTime::ZERO, next_at: None }
    }

    /// Room not yet handed out.
    pub fn owed(&self) -> u64 {
        self.owed
    }

    /// The smoothed satellite ACK inter-arrival time, once known.
    pub fn interval(&self) -> Option<SimTime> {
        self.interval
    }

    /// A satellite ACK freed `freed` bytes at `now`. Returns the bytes to hand out now.
    pub fn on_sat_ack(&mut self, now: SimTime, freed: u64) -> u64 {
        if let Some(prev) = self.last_ack {
            let sample = now - prev;
            self.interval = Some(match self.interval {
                None => sample,
                Some(i) => SimTime((7 * i.as_nanos() + sample.as_nanos()) / 8),
            });
        }
        self.last_ack = Some(now);
        self.owed += freed;
        let interval = match self.interval {
            Some(i) if self.enabled && i > SimTime::ZERO => i,
            _ => {
                self.next_at = None;
                return std::mem::take(&mut self.owed);
            }
        };
        if self.owed == 0 {
            return 0;
        }
        let steps = self.owed.div_ceil(self.mss);
        self.step = SimTime(interval.as_nanos() / steps);
        self.release(now)
    }

    fn release(&mut self, now: SimTime) -> u64 {
        let n = self.owed.min(self.mss);
        self.owed -= n;
        self.next_at = (self.owed > 0).then(|| now + self.step);
        n
    }

    pub fn poll_at(&self) -> Option<SimTime> {
        self.next_at
    }

    /// The pacing step is due: returns the bytes to hand out.
    pub fn on_timer(&mut self, now: SimTime) -> u64 {
        match self.next_at {
            Some(t) if t <= now => self.release(now),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    #[test]
    fn disabled_hands_everything_out_at_once() {
        let mut p = AckPacer::new(false, 512);
        assert_eq!(p.on_sat_ack(t(0), 4096), 4096);
        assert_eq!(p.on_sat_ack(t(80), 4096), 4096);
        assert_eq!(p.poll_at(), None);
    }

    #[test]
    fn a_large_opening_is_spread_over_the_ack_interarrival_time() {
        let mut p = AckPacer::new(true, 512);
        // The first ACK gives no inter-arrival time yet: all at once.
        assert_eq!(p.on_sat_ack(t(0), 1024), 1024);
        // 80 ms later, 8 segments freed: one now, then one every 10 ms.
        assert_eq!(p.on_sat_ack(t(80), 8 * 512), 512);
        let mut times = vec![t(80)];
        while let Some(at) = p.poll_at() {
            assert_eq!(p.on_timer(at), 512);
            times.push(at);
        }
        assert_eq!(times, (0..8).map(|k| t(80 + 10 * k)).collect::<Vec<_>>());
        assert_eq!(p.owed(), 0);
    }

    #[test]
    fn room_left_when_the_next_ack_comes_is_spread_again() {
        let mut p = AckPacer::new(true, 512);
        p.on_sat_ack(t(0), 0);
        p.on_sat_ack(t(100), 10 * 512); // 1 now, step 10 ms
        assert_eq!(p.on_timer(t(110)), 512);
        // Next ACK at 150 ms (interval 100 -> 7/8*100 + 1/8*50 = 93.75 ms), 2 more freed:
        // 8 + 2 - 1 owed... all 10 segments accounted for exactly.
        let mut total = 1024 + p.on_sat_ack(t(150), 2 * 512);
        while let Some(at) = p.poll_at() {
            total += p.on_timer(at);
        }
        assert_eq!(total, 12 * 512);
        assert_eq!(p.interval(), Some(SimTime::from_micros(93_750)));
    }

    #[test]
    fn a_timer_that_is_not_due_releases_nothing() {
        let mut p = AckPacer::new(true, 512);
        p.on_sat_ack(t(0), 0);
        p.on_sat_ack(t(40), 4 * 512);
        assert_eq!(p.on_timer(t(45)), 0);
        assert_eq!(p.on_timer(t(50)), 512);
    }
}
