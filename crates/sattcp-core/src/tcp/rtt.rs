//! Round-trip time estimation and the retransmission timeout, as ns-2's `TcpAgent` computed
//! them (the seeds used ns-2.1b3): Jacobson/Karels smoothing in integer clock ticks, one timed
//! segment at a time, Karn's rule, exponential backoff.
//!
//! The RTT is measured in ticks of the coarse TCP clock (`timer_granularity`, 100 ms in the
//! seeds, seed 000 §4.2.2): a sample is the number of tick boundaries crossed between sending
//! the timed segment and receiving the ACK that covers it, at least one. ns-2 put the tick
//! grid at a random boot-time phase per agent (`boot_time_ = Random::uniform(tcpTick_)`,
//! `rtt_update()`: `t_rtt_ = int((tao + fmod(sendtime + boot_time_, tcpTick_)) / tcpTick_)`,
//! which is the number of boundaries of the grid shifted by `boot_time_`); ours is given
//! (`Ns2Compat::tick_phase`, 0 by default: the grid at t = 0), so runs are deterministic.

use crate::time::SimTime;

/// Fixed-point fraction bits of the smoothed RTT (ns-2 `T_SRTT_BITS`; Jacobson 1988: gain 1/8).
const SRTT_BITS: u32 = 3;
/// Fixed-point fraction bits of the mean deviation (ns-2 `T_RTTVAR_BITS`; gain 1/4).
const RTTVAR_BITS: u32 = 2;
/// RTO = srtt + 2^RTTVAR_EXP * rttvar (RFC 6298 (2.3): K = 4).
const RTTVAR_EXP: u32 = 2;
/// Backoff multiplier cap (ns-2 `rtt_backoff()`: `if (t_backoff_ < 64) t_backoff_ <<= 1`).
const MAX_BACKOFF: u64 = 64;
/// ns-2 `rtt_timeout()`: "if (timeout < 2 * tcp_tick_) timeout = 2 * tcp_tick_".
const MIN_RTO_TICKS: u64 = 2;
/// Past this backoff ns-2 folds srtt into rttvar and forgets srtt (4.3BSD `tcp_timers.c`:
/// "if backed off this far, clobber the srtt value, storing it in the mean deviation").
const CLOBBER_BACKOFF: u64 = 8;

/// The RTT estimator and RTO calculator of one sender.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    tick: u64,
    /// Smoothed RTT in ticks, scaled by 2^SRTT_BITS; 0 = no estimate yet.
    srtt: i64,
    /// Mean deviation in ticks, scaled by 2^RTTVAR_BITS.
    rttvar: i64,
    /// Current (un-backed-off) RTO.
    rtxcur: SimTime,
    backoff: u64,
    min_rto: SimTime,
    max_rto: SimTime,
    /// The segment being timed: (sequence number the ACK must reach, send time).
    timing: Option<(u64, SimTime)>,
    samples: u64,
    /// ns-2 `boot_time_` in ns, in [0, tick).
    phase: u64,
    /// ns-2 `rfc2988_`: below `min_rto` the RTO is `min_rto * backoff`.
    rfc2988: bool,
}

impl RttEstimator {
    pub fn new(tick: SimTime, initial_rto: SimTime, min_rto: SimTime, max_rto: SimTime) -> Self {
        RttEstimator { tick: tick.as_nanos().max(1), srtt: 0, rttvar: 0, rtxcur: initial_rto, backoff: 1, min_rto, max_rto, timing: None, samples: 0, phase: 0, rfc2988: false }
    }

    /// ns-2's tick phase (`boot_time_`, reduced modulo the tick) and `rfc2988_` clamp
    /// (tcp/ns2.rs).
    pub fn with_ns2(mut self, tick_phase: SimTime, rfc2988: bool) -> Self {
        self.phase = tick_phase.as_nanos() % self.tick;
        self.rfc2988 = rfc2988;
        self
    }

    /// A segment ending at `end` (exclusive) was sent for the first time. Starts timing it if
    /// no segment is being timed (ns-2 `output()`: `if (!rtt_active_) ...`).
    pub fn on_send(&mut self, now: SimTime, end: u64) {
        if self.timing.is_none() {
            self.timing = Some((end, now));
        }
    }

    /// Karn's rule (Karn and Partridge 1987; RFC 6298 (3)): a retransmission makes the timed
    /// sample ambiguous, so stop timing (ns-2 `reset_rtx_timer()`: `rtt_active_ = 0`).
    pub fn on_retransmit(&mut self) {
        self.timing = None;
    }

    /// The segment ending at `end` was sent again: if it is the timed one, its sample would
    /// be ambiguous (Karn), so stop timing.
    pub fn on_resend(&mut self, end: u64) {
        if self.timing.is_some_and(|(e, _)| e == end) {
            self.timing = None;
        }
    }

    /// A cumulative ACK up to `ack` (exclusive) arrived. Takes a sample if it covers the timed
    /// segment, which also clears the backoff (ns-2 `newack()`).
    pub fn on_ack(&mut self, now: SimTime, ack: u64) {
        if let Some((end, sent)) = self.timing {
            if ack >= end {
                self.timing = None;
                self.backoff = 1;
                let (n, s) = (now.as_nanos() + self.phase, sent.as_nanos() + self.phase);
                let ticks = (n / self.tick).saturating_sub(s / self.tick).max(1);
                self.update(ticks as i64);
            }
        }
    }

    /// Clears the backoff without a sample (`tcp.rto_backoff_reset` = `all_acked` or `new_ack`,
    /// config.rs `BackoffReset`).
    pub fn clear_backoff(&mut self) {
        self.backoff = 1;
    }

    /// A partial ACK during ns-2's fast recovery clears the backoff and the timing without
    /// sampling (ns-2 `NewRenoTcpAgent::partialnewack()`).
    pub fn on_partial_ack(&mut self, ack: u64) {
        if self.timing.is_some_and(|(end, _)| ack >= end) {
            self.timing = None;
            self.backoff = 1;
        }
    }

    /// Jacobson/Karels update in fixed point (ns-2 `rtt_update()`, RFC 6298 (2.2)-(2.3)).
    fn update(&mut self, m: i64) {
        self.samples += 1;
        if self.srtt != 0 {
            let mut delta = m - (self.srtt >> SRTT_BITS);
            self.srtt += delta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            delta = delta.abs() - (self.rttvar >> RTTVAR_BITS);
            self.rttvar += delta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            // RFC 6298 (2.2): SRTT = R, RTTVAR = R/2.
            self.srtt = m << SRTT_BITS;
            self.rttvar = m << (RTTVAR_BITS - 1);
        }
        let ticks = ((self.rttvar << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.srtt) >> SRTT_BITS;
        self.rtxcur = SimTime(ticks as u64 * self.tick);
    }

    /// The timeout expired: double the backoff (ns-2 `rtt_backoff()`) and stop timing.
    pub fn on_timeout(&mut self) {
        self.timing = None;
        if self.backoff < MAX_BACKOFF {
            self.backoff <<= 1;
        }
        if self.backoff > CLOBBER_BACKOFF && self.srtt != 0 {
            self.rttvar += self.srtt >> SRTT_BITS;
            self.srtt = 0;
        }
    }

    /// The retransmission timeout to arm now: the current RTO times the backoff, at most
    /// `max_rto`, at least `min_rto` and two ticks (ns-2 `rtt_timeout()`).
    pub fn rto(&self) -> SimTime {
        if self.rfc2988 {
            // ns-2 `rtt_timeout()` with `rfc2988_` (Tom Kelly's correction): "clamping
            // minrto_ before applying t_backoff_".
            let base = if self.rtxcur < self.min_rto { self.min_rto } else { self.rtxcur };
            return base.times(self.backoff).min(self.max_rto).max(SimTime(self.tick * MIN_RTO_TICKS));
        }
        let t = self.rtxcur.times(self.backoff).min(self.max_rto);
        t.max(self.min_rto).max(SimTime(self.tick * MIN_RTO_TICKS))
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<SimTime> {
        (self.srtt != 0).then(|| SimTime((self.srtt as u64 * self.tick) >> SRTT_BITS))
    }

    pub fn backoff(&self) -> u64 {
        self.backoff
    }
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(SimTime::from_millis(100), SimTime::from_secs(3), SimTime::from_millis(200), SimTime::from_secs(64))
    }

    #[track_caller]
    fn sample(e: &mut RttEstimator, sent_ms: u64, acked_ms: u64) {
        e.on_send(SimTime::from_millis(sent_ms), 1000);
        e.on_ack(SimTime::from_millis(acked_ms), 1000);
    }

    #[test]
    fn first_sample_sets_srtt_and_rto_in_ticks() {
        let mut e = est();
        assert_eq!(e.rto(), SimTime::from_secs(3));
        // 580 ms from t = 10 ms crosses 5 tick boundaries (100, 200, ..., 500).
        sample(&mut e, 10, 590);
        assert_eq!(e.srtt(), Some(SimTime::from_millis(500)));
        // RTO = srtt + 4 * srtt/2 = 3 * 5 ticks.
        assert_eq!(e.rto(), SimTime::from_millis(1500));
    }

    #[test]
    fn steady_samples_shrink_rttvar_toward_the_tick() {
        let mut e = est();
        for i in 0..40 {
            sample(&mut e, i * 1000, i * 1000 + 600);
        }
        assert_eq!(e.srtt(), Some(SimTime::from_millis(600)));
        // rttvar decays by 1/4 per sample in integer quarters of a tick and sticks at 3/4
        // (3 - (3 >> 2) = 3): RTO = 6 + 4 * 0.75 = 9 ticks.
        assert_eq!(e.rto(), SimTime::from_millis(900));
    }

    #[test]
    fn tick_phase_shifts_the_grid_and_rfc2988_clamps_before_the_backoff() {
        // 580 ms from t = 10 ms: 5 boundaries of the grid at 0; with boot_time_ = 15 ms (the
        // boundaries at 85, 185, ..., 585 ms) it crosses 6.
        let mut e = est().with_ns2(SimTime::from_millis(15), true);
        sample(&mut e, 10, 590);
        assert_eq!(e.srtt(), Some(SimTime::from_millis(600)));
        // Grid at 0: RTO = 5 + 4 * 2.5 = 15 ticks = 1.5 s, below min_rto (2 s): ns-2 clamps first.
        let mut e = RttEstimator::new(SimTime::from_millis(100), SimTime::from_secs(3), SimTime::from_secs(2), SimTime::from_secs(64)).with_ns2(SimTime::ZERO, true);
        sample(&mut e, 10, 590);
        assert_eq!(e.rto(), SimTime::from_secs(2));
        e.on_timeout();
        assert_eq!(e.rto(), SimTime::from_secs(4), "min_rto * backoff (ours without rfc2988: max(1.5 s * 2, 2 s) = 3 s)");
        let mut ours = RttEstimator::new(SimTime::from_millis(100), SimTime::from_secs(3), SimTime::from_secs(2), SimTime::from_secs(64));
        sample(&mut ours, 10, 590);
        ours.on_timeout();
        assert_eq!(ours.rto(), SimTime::from_secs(3));
    }

    #[test]
    fn karn_retransmission_discards_the_sample() {
        let mut e = est();
        e.on_send(SimTime::ZERO, 1000);
        e.on_retransmit();
        e.on_ack(SimTime::from_millis(600), 1000);
        assert_eq!(e.srtt(), None);
    }

    #[test]
    fn clear_backoff_returns_to_the_base_rto_without_a_sample() {
        // tcp.rto_backoff_reset = "all_acked" (Linux 2.2: everything outstanding acked): the
        // backoff goes, the estimate stays.
        let mut e = est();
        sample(&mut e, 0, 600);
        let (base, srtt) = (e.rto(), e.srtt());
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), base.times(4));
        e.clear_backoff();
        assert_eq!((e.backoff(), e.rto(), e.srtt()), (1, base, srtt));
    }

    #[test]
    fn backoff_doubles_up_to_64_and_a_sample_clears_it() {
        let mut e = est();
        sample(&mut e, 0, 600);
        let base = e.rto();
        e.on_timeout();
        assert_eq!(e.rto(), base.times(2));
        for _ in 0..10 {
            e.on_timeout();
        }
        assert_eq!(e.backoff(), 64);
        assert_eq!(e.rto(), SimTime::from_secs(64), "capped by max_rto");
        sample(&mut e, 100_000, 100_600);
        assert_eq!(e.backoff(), 1);
    }
}
