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

use super::{reno::RenoAimd, RateEvent, Reduction, Window};
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
}

impl Westwood {
    pub fn bandwidth_estimate(&self) -> u64 {
        self.bw_est
    }
    pub fn rtt_min(&self) -> Option<SimTime> {
        self.rtt_min
    }

    pub fn on_rate_sample(&mut self, ev: &RateEvent) {
        if let Some(r) = ev.rs.rtt {
            self.rtt = Some(r);
            self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
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

    /// BWE x RTTmin in bytes, at least 2 segments (Linux `tcp_westwood_bw_rttmin()`).
    fn bw_rttmin(&self, w: &Window) -> u64 {
        let rtt = self.rtt_min.unwrap_or(SimTime::ZERO);
        let b = (self.bw_est as u128 * rtt.as_nanos() as u128 / 1_000_000_000) as u64;
        b.max(MIN_SSTHRESH_SEGMENTS * w.mss)
    }

    pub fn on_ack(&mut self, w: &Window, acked: u64) -> u64 {
        RenoAimd::default().on_ack(w, acked)
    }

    /// Fast retransmit: ssthresh = cwnd = BWE x RTTmin, never above the current cwnd (the
    /// papers' "if (cwnd > ssthresh) cwnd = ssthresh"; Linux instead halves here and sets
    /// both to BWE x RTTmin, higher or lower, when recovery ends: docs/tcp.md, Westwood+).
    pub fn on_dupack_loss(&mut self, w: &Window, _basis: u64) -> Reduction {
        let s = self.bw_rttmin(w).min(w.cwnd.max(MIN_SSTHRESH_SEGMENTS * w.mss));
        Reduction { ssthresh: s, cwnd: s }
    }

    /// Timeout: ssthresh = BWE x RTTmin, cwnd = 1 segment (Linux `CA_EVENT_LOSS`).
    pub fn on_timeout(&mut self, w: &Window, _basis: u64) -> Reduction {
        Reduction { ssthresh: self.bw_rttmin(w), cwnd: w.mss }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::rate::RateSample;
    use crate::tcp::recovery::CongState;

    const MSS: u64 = 1000;

    /// 100 ms RTT, 1000 bytes delivered per millisecond (1 MB/s): BWE converges to 1 MB/s,
    /// and a loss sets ssthresh = cwnd = BWE x RTTmin = 100 segments, where Reno would halve
    /// a 150-segment window to 75.
    #[test]
    fn a_loss_sets_the_window_to_bandwidth_times_min_rtt() {
        let mut ww = Westwood::default();
        for i in 0..5000u64 {
            let rs = RateSample { acked_sacked: MSS, rtt: Some(SimTime::from_millis(100 + i % 7)), ..Default::default() };
            ww.on_rate_sample(&RateEvent { now: SimTime::from_millis(i), rs, delivered: i * MSS, in_flight: 0, state: CongState::Open, srtt: None });
        }
        let bwe = ww.bandwidth_estimate();
        assert!((990_000..=1_010_000).contains(&bwe), "BWE {bwe} B/s");
        assert_eq!(ww.rtt_min(), Some(SimTime::from_millis(100)));
        let w = Window { cwnd: 150 * MSS, ssthresh: 1 << 30, mss: MSS };
        let r = ww.on_dupack_loss(&w, w.cwnd);
        assert!((99 * MSS..=101 * MSS).contains(&r.ssthresh), "{r:?}");
        assert_eq!(r.cwnd, r.ssthresh);
        assert_eq!(ww.on_timeout(&w, w.cwnd).cwnd, MSS);
    }
}
