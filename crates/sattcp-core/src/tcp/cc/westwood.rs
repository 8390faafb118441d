//! TCP Westwood+ (Mascolo et al., "TCP Westwood: bandwidth estimation for enhanced transport
//! over wireless links", MobiCom 2001; Grieco and Mascolo, "Performance evaluation and
//! comparison of Westwood+, New Reno, and Vegas", CCR 2004; Linux `net/ipv4/tcp_westwood.c`):
//! Reno's growth, but on a loss the window is set to the bandwidth it has measured times the
//! minimum RTT (ssthresh = BWE x RTTmin) instead of being halved, so random (non-congestion)
//! losses cost little.
//!
//! The estimate (Westwood+, as Linux): the bytes delivered over each interval of at least one
//! RTT (and at least 50 ms) give a sample `bk / delta`, smoothed twice by a 7/8 low-pass filter
//! (`westwood_filter()`; the first sample initialises both stages). Delivered bytes and the
//! exact RTT come from the sender's rate samples (tcp/rate.rs), so the estimate counts SACKed
//! bytes too (Linux approximates them from duplicate ACKs).
//!
//! The reaction to a loss exists in two forms, a choice of the user's (`tcp.cc = "westwood"` or
//! `"westwood_linux"`; docs/tcp.md, Westwood+):
//! - the papers' (Mascolo et al. 2001, Grieco and Mascolo 2004): at a fast retransmit
//!   ssthresh = BWE x RTTmin and cwnd = ssthresh if it was larger; at a timeout ssthresh =
//!   BWE x RTTmin and cwnd = 1 segment;
//! - Linux's `tcp_westwood.c`: Reno halves the window at a fast retransmit (`.ssthresh =
//!   tcp_reno_ssthresh`), and when fast recovery ends (`CA_EVENT_COMPLETE_CWR`) ssthresh =
//!   cwnd = BWE x RTTmin, higher or lower than before; a timeout that reduces ssthresh
//!   (`tcp_enter_loss()` raises `CA_EVENT_LOSS` only then) sets ssthresh = BWE x RTTmin and makes
//!   the next RTT sample the new minimum (`reset_rtt_min`); leaving the loss state of a timeout
//!   changes nothing.

use super::{reno::RenoAimd, RateEvent, Reduction, Window};
use crate::tcp::recovery::CongState;
use crate::time::SimTime;

/// Linux `TCP_WESTWOOD_RTT_MIN`: the shortest sampling interval.
const RTT_MIN_INTERVAL: SimTime = SimTime::from_millis(50);
/// ssthresh floor, 2 segments (Linux `tcp_westwood_bw_rttmin()`: max(.., 2)).
const MIN_SSTHRESH_SEGMENTS: u64 = 2;

#[derive(Clone, Debug, Default)]
pub struct Westwood {
    /// Smoothed bandwidth estimate (bytes/s) and the first filter stage.
    bw_est: u64,
    bw_ns_est: u64,
    /// Bytes delivered since the interval began, and when it began.
    bk: u64,
    stamp: Option<SimTime>,
    /// The last RTT sample and the minimum seen.
    rtt: Option<SimTime>,
    rtt_min: Option<SimTime>,
    first_sample: bool,
    /// Linux's reaction to losses instead of the papers' (module comment).
    linux: bool,
    /// Linux `reset_rtt_min`: the next RTT sample replaces the minimum (after a timeout).
    reset_rtt_min: bool,
}

impl Westwood {
    /// Westwood+ with Linux's reaction to losses (module comment).
    pub fn linux() -> Self {
        Westwood { linux: true, ..Default::default() }
    }

    /// Whether this is Linux's form ([`Cc::holds_ssthresh_within_a_window`](super::Cc)).
    pub fn is_linux(&self) -> bool {
        self.linux
    }

    pub fn bandwidth_estimate(&self) -> u64 {
        self.bw_est
    }
    pub fn rtt_min(&self) -> Option<SimTime> {
        self.rtt_min
    }

    pub fn on_rate_sample(&mut self, ev: &RateEvent) {
        if let Some(r) = ev.rs.rtt {
            self.rtt = Some(r);
            self.rtt_min = Some(match self.rtt_min {
                Some(m) if !self.reset_rtt_min => m.min(r),
                _ => r,
            });
            self.reset_rtt_min = false;
        }
        let stamp = *self.stamp.get_or_insert(ev.now);
        self.bk += ev.rs.acked_sacked;
        let delta = ev.now - stamp;
        // Linux westwood_update_window(): one sample per RTT (at least 50 ms).
        if let Some(rtt) = self.rtt {
            if delta > rtt.max(RTT_MIN_INTERVAL) {
                let sample = (self.bk as u128 * 1_000_000_000 / delta.as_nanos() as u128) as u64;
                if !self.first_sample {
                    self.first_sample = true;
                    self.bw_ns_est = sample;
                    self.bw_est = sample;
                } else {
                    // Linux westwood_do_filter(): a = (7a + b) / 8, twice.
                    self.bw_ns_est = (7 * self.bw_ns_est + sample) / 8;
                    self.bw_est = (7 * self.bw_est + self.bw_ns_est) / 8;
                }
                self.bk = 0;
                self.stamp = Some(ev.now);
            }
        }
    }

    /// BWE x RTTmin in bytes, at least 2 segments (Linux `tcp_westwood_bw_rttmin()`). Linux's
    /// form rounds it down to whole segments, as the kernel counts packets; the papers' form
    /// keeps the bytes (their "(BWE*RTTmin)/seg_size" is a fraction in ns-2, whose windows are;
    /// rounding it would cost 15% of the 1% loss figure, 2.85 -> 2.42 Mbps, tests/modern_cc.rs).
    fn bw_rttmin(&self, w: &Window) -> u64 {
        let rtt = self.rtt_min.unwrap_or(SimTime::ZERO);
        let b = (self.bw_est as u128 * rtt.as_nanos() as u128 / 1_000_000_000) as u64;
        let b = if self.linux { b / w.mss * w.mss } else { b };
        b.max(MIN_SSTHRESH_SEGMENTS * w.mss)
    }

    pub fn on_ack(&mut self, w: &Window, acked: u64) -> u64 {
        RenoAimd::default().on_ack(w, acked)
    }

    /// Fast retransmit. The papers: ssthresh = cwnd = BWE x RTTmin, never above the current
    /// cwnd ("if (cwnd > ssthresh) cwnd = ssthresh"). Linux: Reno's halving of `basis`
    /// (`tcp_reno_ssthresh()`); the estimate is applied when recovery ends.
    pub fn on_dupack_loss(&mut self, w: &Window, basis: u64) -> Reduction {
        if self.linux {
            return RenoAimd::default().on_dupack_loss(w, basis);
        }
        let s = self.bw_rttmin(w).min(w.cwnd.max(MIN_SSTHRESH_SEGMENTS * w.mss));
        Reduction { ssthresh: s, cwnd: s }
    }

    /// Fast recovery (`from` = `Recovery`) or a timeout's loss state (`Loss`) ended: Linux sets
    /// ssthresh = cwnd = BWE x RTTmin at the end of fast recovery (`CA_EVENT_COMPLETE_CWR`);
    /// the papers change nothing then.
    pub fn on_recovery_exit(&mut self, w: &Window, from: CongState) -> Option<Reduction> {
        (self.linux && from == CongState::Recovery).then(|| {
            let s = self.bw_rttmin(w);
            Reduction { ssthresh: s, cwnd: s }
        })
    }

    /// Timeout: ssthresh = BWE x RTTmin, cwnd = 1 segment (`CA_EVENT_LOSS`). `reduces`: the
    /// sender applies the ssthresh (false for Linux's form on a timeout within a window
    /// already reduced, where Linux raises no `CA_EVENT_LOSS` and so keeps the minimum RTT).
    pub fn on_timeout(&mut self, w: &Window, reduces: bool) -> Reduction {
        if self.linux && reduces {
            self.reset_rtt_min = true;
        }
        Reduction { ssthresh: self.bw_rttmin(w), cwnd: w.mss }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::rate::RateSample;
    use crate::tcp::recovery::CongState;

    const MSS: u64 = 1000;

    /// Feeds `ww` 5 s of ACKs of 1000 bytes a millisecond (1 MB/s) with RTTs of 100-106 ms.
    fn measured(mut ww: Westwood) -> Westwood {
        for i in 0..5000u64 {
            let rs = RateSample { acked_sacked: MSS, rtt: Some(SimTime::from_millis(100 + i % 7)), ..Default::default() };
            ww.on_rate_sample(&RateEvent { now: SimTime::from_millis(i), rs, delivered: i * MSS, in_flight: 0, state: CongState::Open, srtt: None });
        }
        ww
    }

    /// Linux's form: a fast retransmit halves (150 -> 75 segments), the end of fast recovery
    /// sets ssthresh = cwnd = BWE x RTTmin (100 segments, higher than the halved window), the end
    /// of a timeout's loss state changes nothing; a timeout that reduces ssthresh makes the
    /// next RTT sample the minimum, one that does not (a repeated timeout) keeps it.
    #[test]
    fn linux_halves_at_a_fast_retransmit_and_applies_the_estimate_when_recovery_ends() {
        let mut ww = measured(Westwood::linux());
        let w = Window { cwnd: 150 * MSS, ssthresh: 1 << 30, mss: MSS };
        assert_eq!(ww.on_dupack_loss(&w, w.cwnd), Reduction { ssthresh: 75 * MSS, cwnd: 75 * MSS });
        let w = Window { cwnd: 75 * MSS, ssthresh: 75 * MSS, mss: MSS };
        assert_eq!(ww.on_recovery_exit(&w, CongState::Recovery), Some(Reduction { ssthresh: 100 * MSS, cwnd: 100 * MSS }));
        assert_eq!(ww.on_recovery_exit(&w, CongState::Loss), None);
        let sample = |ww: &mut Westwood, ms: u64| {
            let rs = RateSample { acked_sacked: MSS, rtt: Some(SimTime::from_millis(ms)), ..Default::default() };
            ww.on_rate_sample(&RateEvent { now: SimTime::from_secs(6), rs, delivered: 0, in_flight: 0, state: CongState::Loss, srtt: None });
        };
        let mut held = ww.clone();
        assert_eq!(held.on_timeout(&w, false), Reduction { ssthresh: 100 * MSS, cwnd: MSS });
        sample(&mut held, 300);
        assert_eq!(held.rtt_min(), Some(SimTime::from_millis(100)));
        assert_eq!(ww.on_timeout(&w, true).cwnd, MSS);
        sample(&mut ww, 300);
        assert_eq!(ww.rtt_min(), Some(SimTime::from_millis(300)));
        sample(&mut ww, 250);
        assert_eq!(ww.rtt_min(), Some(SimTime::from_millis(250)));
    }

    /// The papers' form never acts at the end of a recovery, and a timeout keeps the minimum.
    #[test]
    fn the_papers_form_keeps_the_window_the_loss_set() {
        let mut ww = measured(Westwood::default());
        let w = Window { cwnd: 75 * MSS, ssthresh: 75 * MSS, mss: MSS };
        assert_eq!(ww.on_recovery_exit(&w, CongState::Recovery), None);
        let r = ww.on_timeout(&w, true);
        assert!((99 * MSS..=101 * MSS).contains(&r.ssthresh) && !r.ssthresh.is_multiple_of(MSS), "bytes, not whole segments: {r:?}");
        assert_eq!(r.cwnd, MSS);
        let rs = RateSample { acked_sacked: MSS, rtt: Some(SimTime::from_millis(300)), ..Default::default() };
        ww.on_rate_sample(&RateEvent { now: SimTime::from_secs(6), rs, delivered: 0, in_flight: 0, state: CongState::Loss, srtt: None });
        assert_eq!(ww.rtt_min(), Some(SimTime::from_millis(100)));
    }

    /// 100 ms RTT, 1000 bytes delivered per millisecond (1 MB/s): BWE converges to 1 MB/s,
    /// and a loss sets ssthresh = cwnd = BWE x RTTmin = 100 segments, where Reno would halve
    /// a 150-segment window to 75.
    #[test]
    fn a_loss_sets_the_window_to_bandwidth_times_min_rtt() {
        let mut ww = measured(Westwood::default());
        let bwe = ww.bandwidth_estimate();
        assert!((990_000..=1_010_000).contains(&bwe), "BWE {bwe} B/s");
        assert_eq!(ww.rtt_min(), Some(SimTime::from_millis(100)));
        let w = Window { cwnd: 150 * MSS, ssthresh: 1 << 30, mss: MSS };
        let r = ww.on_dupack_loss(&w, w.cwnd);
        assert!((99 * MSS..=101 * MSS).contains(&r.ssthresh), "{r:?}");
        assert_eq!(r.cwnd, r.ssthresh);
        assert_eq!(ww.on_timeout(&w, true).cwnd, MSS);
    }
}
