//! HyStart++ (RFC 9406): leave slow start before the first loss when the RTT starts to grow.
//! Each round (a flight, counted with the rate samples' delivered marks) the minimum of the
//! first `N_RTT_SAMPLE` exact RTT samples is compared with the previous round's; a rise of
//! `RttThresh` = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms) moves to Conservative Slow Start
//! (CSS: growth divided by 4) for `CSS_ROUNDS` rounds, after which congestion avoidance begins
//! with ssthresh = cwnd; an RTT back under the CSS baseline returns to slow start (a spurious
//! exit). Only the initial slow start uses it (RFC 9406 §4.2 leaves later ones optional).
//! Used by CUBIC as `CcKind::CubicHystart` (`tcp.cc = "cubic_hystart"`).

use super::RateEvent;
use crate::time::SimTime;

/// RFC 9406 §4.3 constants.
pub const MIN_RTT_THRESH: SimTime = SimTime::from_millis(4);
pub const MAX_RTT_THRESH: SimTime = SimTime::from_millis(16);
pub const MIN_RTT_DIVISOR: u64 = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u64 = 4;
pub const CSS_ROUNDS: u32 = 5;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    /// Conservative slow start: rounds done, and the RTT baseline that started it.
    Css { rounds: u32, baseline: SimTime },
    /// Left for congestion avoidance (or a loss ended slow start).
    Done,
}

#[derive(Clone, Debug)]
pub struct HyStartPP {
    phase: Phase,
    round_end: u64,
    last_round_min: Option<SimTime>,
    current_round_min: Option<SimTime>,
    samples: u32,
}

impl Default for HyStartPP {
    fn default() -> Self {
        HyStartPP { phase: Phase::SlowStart, round_end: 0, last_round_min: None, current_round_min: None, samples: 0 }
    }
}

impl HyStartPP {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The slow-start increment for one ACK: `inc`, or `inc / CSS_GROWTH_DIVISOR` in CSS.
    pub fn increment(&self, inc: u64) -> u64 {
        match self.phase {
            Phase::Css { .. } => inc / CSS_GROWTH_DIVISOR,
            _ => inc,
        }
    }

    /// A loss or timeout ended slow start.
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// Every ACK in slow start; returns true when CSS has run its rounds and congestion
    /// avoidance should begin (ssthresh = cwnd, RFC 9406 §4.2).
    pub fn on_rate_sample(&mut self, ev: &RateEvent) -> bool {
        if self.phase == Phase::Done {
            return false;
        }
        let rs = &ev.rs;
        if rs.acked_sacked > 0 && rs.prior_delivered >= self.round_end {
            // A new round begins.
            self.round_end = ev.delivered;
            self.last_round_min = self.current_round_min.take();
            self.samples = 0;
            if let Phase::Css { rounds, baseline } = self.phase {
                if rounds + 1 >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return true;
                }
                self.phase = Phase::Css { rounds: rounds + 1, baseline };
            }
        }
        if let Some(rtt) = rs.rtt {
            self.current_round_min = Some(self.current_round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        let (Some(cur), true) = (self.current_round_min, self.samples >= N_RTT_SAMPLE) else { return false };
        match self.phase {
            Phase::SlowStart => {
                if let Some(last) = self.last_round_min {
                    let thresh = SimTime(last.as_nanos() / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if cur >= last + thresh {
                        self.phase = Phase::Css { rounds: 0, baseline: cur };
                    }
                }
            }
            Phase::Css { baseline, .. } if cur < baseline => self.phase = Phase::SlowStart,
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::rate::RateSample;
    use crate::tcp::recovery::CongState;

    /// Rounds of 10 ACKs with a 100 ms RTT; from round 4 the RTT is 120 ms (a queue builds):
    /// CSS begins in round 4 once 8 samples are in, and after 5 CSS rounds slow start ends.
    #[test]
    fn a_rising_rtt_moves_to_css_then_to_avoidance_after_five_rounds() {
        let mut h = HyStartPP::default();
        let mut delivered: u64 = 0;
        let mut done_at = None;
        for round in 0..12u64 {
            let round_start = delivered;
            for i in 0..10u64 {
                let rtt = SimTime::from_millis(if round >= 4 { 120 } else { 100 });
                delivered += 1000;
                // The first ACK of a round delivers a packet sent after the last round ended.
                let prior = if i == 0 { round_start } else { round_start.saturating_sub(1000) };
                let rs = RateSample { acked_sacked: 1000, prior_delivered: prior, rtt: Some(rtt), ..Default::default() };
                let ev = RateEvent { now: SimTime::from_millis(round * 100 + i), rs, delivered, in_flight: 0, state: CongState::Open, srtt: None };
                if h.on_rate_sample(&ev) && done_at.is_none() {
                    done_at = Some(round);
                }
                if round < 4 {
                    assert_eq!(h.phase(), Phase::SlowStart, "round {round}");
                }
            }
            if round == 4 {
                assert_eq!(h.phase(), Phase::Css { rounds: 0, baseline: SimTime::from_millis(120) });
                assert_eq!(h.increment(1000), 250, "CSS grows a quarter as fast");
            }
        }
        assert_eq!(done_at, Some(9), "5 CSS rounds (4..8), avoidance from round 9");
        assert_eq!(h.phase(), Phase::Done);
    }
}
