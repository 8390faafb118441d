//! CUBIC (RFC 9438): the window grows as a cubic function of the time since the last
//! congestion event, centred on the window where that event happened, with a Reno-friendly
//! floor. Slow start is standard, or with HyStart++ (RFC 9406, `hystart.rs`) when built by
//! [`Cubic::with_hystart`]. Maths in f64 through `libm` (STYLE.md), so
//! results are the same on every machine.

use super::hystart::HyStartPP;
use super::{AckSample, Control, RateEvent, Reduction, Window};
use crate::time::SimTime;

/// RFC 9438 §4.6: beta_cubic = 0.7.
pub const BETA: f64 = 0.7;
/// RFC 9438 §5: C = 0.4 (segments / s^3).
pub const C: f64 = 0.4;
/// RFC 9438 §4.3: alpha_cubic = 3 (1 - beta) / (1 + beta) for the Reno-friendly region.
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// W_max in segments (RFC 9438 §4.2; Linux `last_max_cwnd`), what fast convergence (§4.7)
    /// compares the next loss's cwnd with. 0 before the first loss and after a timeout.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch.
    epoch: Option<SimTime>,
    k: f64,
    /// W_est in segments (RFC 9438 §4.3).
    w_est: f64,
    /// HyStart++ in the initial slow start, if enabled.
    hystart: Option<Box<HyStartPP>>,
}

impl Cubic {
    pub fn with_hystart() -> Self {
        Cubic { hystart: Some(Default::default()), ..Default::default() }
    }
    pub fn uses_rate_samples(&self) -> bool {
        self.hystart.is_some()
    }

    /// HyStart++ watches every ACK's RTT sample in slow start; at the end of CSS it sets
    /// ssthresh = cwnd (RFC 9406 §4.2).
    pub fn on_rate_sample(&mut self, w: &Window, ev: &RateEvent) -> Control {
        if let Some(h) = &mut self.hystart {
            if w.cwnd < w.ssthresh && h.on_rate_sample(ev) {
                return Control { ssthresh: Some(w.cwnd), ..Default::default() };
            }
        }
        Control::default()
    }

    pub fn on_ack(&mut self, w: &Window, s: &AckSample) -> u64 {
        let mss = w.mss as f64;
        if w.cwnd < w.ssthresh {
            // RFC 9438 §4.10 / RFC 5681 slow start (RFC 9406 CSS: a quarter of it).
            return w.cwnd + self.hystart.as_ref().map_or(w.mss, |h| h.increment(w.mss));
        }
        let cwnd = w.cwnd as f64 / mss;
        let epoch = *self.epoch.get_or_insert_with(|| {
            // RFC 9438 §4.2: a new epoch starts at the first ACK in congestion avoidance.
            if self.w_max < cwnd {
                self.w_max = cwnd;
            }
            self.k = libm::cbrt((self.w_max - cwnd).max(0.0) / C);
            self.w_est = cwnd;
            s.now
        });
        let rtt = s.srtt.map_or(0.0, |r| r.as_secs_f64());
        let t = (s.now - epoch).as_secs_f64();
        // RFC 9438 §4.3: W_est += alpha * segments_acked / cwnd.
        self.w_est += ALPHA * (s.acked as f64 / mss) / cwnd;
        let w_cubic = |t: f64| C * (t - self.k).powi(3) + self.w_max;
        let next = if w_cubic(t) < self.w_est {
            self.w_est
        } else {
            // RFC 9438 §4.4-4.5: aim at W_cubic(t + RTT), at most 1.5 cwnd, growing by
            // (target - cwnd) / cwnd per segment acknowledged.
            let target = w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * (s.acked as f64 / mss)
        };
        ((next * mss) as u64).max(w.cwnd)
    }

    fn congestion(&mut self, w: &Window) -> u64 {
        if let Some(h) = &mut self.hystart {
            h.on_congestion();
        }
        let cwnd = w.cwnd as f64 / w.mss as f64;
        // RFC 9438 §4.7 fast convergence: a loss below the W_max of the previous one (as that
        // loss set it, fast convergence included: Linux `cubictcp_recalc_ssthresh()` compares
        // with `last_max_cwnd`) releases bandwidth: W_max = cwnd (1 + beta) / 2.
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.epoch = None;
        ((w.cwnd as f64 * BETA) as u64).max(2 * w.mss)
    }

    pub fn on_dupack_loss(&mut self, w: &Window, _basis: u64) -> Reduction {
        // RFC 9438 §4.6: ssthresh = cwnd = cwnd * beta_cubic.
        let ssthresh = self.congestion(w);
        Reduction { ssthresh, cwnd: ssthresh }
    }

    pub fn on_timeout(&mut self, w: &Window, _basis: u64) -> Reduction {
        // RFC 9438 §4.8: ssthresh as for a loss, cwnd = 1 segment; "during the first
        // congestion avoidance stage after a timeout ... K is set to 0, and W_max is set to the
        // congestion window size at the beginning of the current congestion avoidance stage"
        // (Linux: `cubictcp_state(TCP_CA_Loss)` -> `bictcp_reset()` zeroes `last_max_cwnd`).
        let ssthresh = self.congestion(w);
        self.w_max = 0.0;
        Reduction { ssthresh, cwnd: w.mss }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[track_caller]
    fn window(cwnd_segments: u64) -> Window {
        Window { cwnd: cwnd_segments * MSS, ssthresh: cwnd_segments * MSS, mss: MSS }
    }

    /// RFC 9438 §4.7 and Linux `cubictcp_recalc_ssthresh()`: each loss compares its cwnd with
    /// the W_max the previous loss set. Losses at 100, 95, 90 segments: W_max 100; 95 < 100 so
    /// 95 x 1.7 / 2 = 80.75; 90 >= 80.75 so 90. (Compared with the previous loss's cwnd
    /// instead, the third was 90 < 95: 76.5.)
    #[test]
    fn fast_convergence_compares_with_the_previous_w_max() {
        let mut c = Cubic::default();
        let mut got = Vec::new();
        for segs in [100, 95, 90] {
            c.on_dupack_loss(&window(segs), segs * MSS);
            got.push(c.w_max);
        }
        assert_eq!(got, vec![100.0, 95.0 * 1.7 / 2.0, 90.0]);
    }

    /// RFC 9438 §4.8: after a timeout the first congestion-avoidance epoch has K = 0 and
    /// W_max = the cwnd it starts at (Linux zeroes `last_max_cwnd` entering TCP_CA_Loss): the
    /// window grows convexly from there at once, not along a concave approach to the W_max of
    /// before the timeout.
    #[test]
    fn after_a_timeout_the_first_epoch_starts_with_k_zero() {
        let mut c = Cubic::default();
        c.on_dupack_loss(&window(100), 100 * MSS);
        let r = c.on_timeout(&window(100), 100 * MSS);
        // Fast convergence: 100 is not below W_max = 100, so ssthresh = 0.7 x 100.
        assert_eq!(r, Reduction { ssthresh: 70 * MSS, cwnd: MSS });
        // Slow start back to ssthresh, then the first ACK in congestion avoidance.
        let w = Window { cwnd: 70 * MSS, ssthresh: 70 * MSS, mss: MSS };
        let srtt = Some(SimTime::from_millis(100));
        c.on_ack(&w, &AckSample { now: SimTime::from_secs(20), acked: MSS, srtt });
        assert_eq!((c.k, c.w_max), (0.0, 70.0));
    }

    #[test]
    fn cut_by_beta_then_regrow_to_w_max_in_k_seconds() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        let r = c.on_dupack_loss(&w, w.cwnd);
        assert_eq!(r, Reduction { ssthresh: 70 * MSS, cwnd: 70 * MSS });
        (w.cwnd, w.ssthresh) = (r.cwnd, r.ssthresh);
        // K = cbrt(100 * 0.3 / 0.4) = 4.217 s; with 100 ms RTT and one ACK per segment.
        let srtt = Some(SimTime::from_millis(100));
        let mut now = SimTime::from_secs(10);
        let end = now + SimTime::from_millis(4217);
        while now < end {
            for _ in 0..w.cwnd / MSS {
                w.cwnd = c.on_ack(&w, &AckSample { now, acked: MSS, srtt });
            }
            now += SimTime::from_millis(100);
        }
        let segs = w.cwnd as f64 / MSS as f64;
        assert!((97.0..=103.0).contains(&segs), "back near W_max = 100 after K: {segs}");
    }

    /// RFC 9438 §4.2: after a loss at W_max = 100 segments the window follows
    /// W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C), within one segment, on both
    /// sides of the plateau (concave then convex), with ACKs spread evenly over each 100 ms RTT.
    #[test]
    fn the_window_follows_the_cubic_curve_within_a_segment() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        let r = c.on_dupack_loss(&w, w.cwnd);
        (w.cwnd, w.ssthresh) = (r.cwnd, r.ssthresh);
        let k = libm::cbrt(100.0 * (1.0 - BETA) / C);
        let rtt = SimTime::from_millis(100);
        let t0 = SimTime::from_secs(10);
        let mut now = t0;
        let mut worst: f64 = 0.0;
        while now < t0 + SimTime::from_secs_f64(2.0 * k) {
            let n = w.cwnd / MSS;
            for j in 0..n {
                let at = now + SimTime(rtt.as_nanos() * j / n);
                w.cwnd = c.on_ack(&w, &AckSample { now: at, acked: MSS, srtt: Some(rtt) });
            }
            now += rtt;
            let t = (now - t0).as_secs_f64();
            let curve = C * (t - k).powi(3) + 100.0;
            let segs = w.cwnd as f64 / MSS as f64;
            worst = worst.max((segs - curve).abs());
            assert!((segs - curve).abs() <= 1.0, "t = {t:.1} s: cwnd {segs:.2} segments, W(t) = {curve:.2}");
        }
        assert!(worst > 0.0);
    }
}
