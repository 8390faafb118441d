//! Reno AIMD: slow start, congestion avoidance, multiplicative decrease (RFC 5681 §3.1),
//! counted the way ns-2's `TcpAgent::opencwnd()` and `closecwnd()` counted (seed 001 used
//! ns-2.1b3): one segment per new ACK in slow start (no byte counting), `1/cwnd` segment per
//! new ACK in congestion avoidance (ns-2 `wnd_option_ = 1`).

use super::{Reduction, Window};

/// RFC 5681 (4): ssthresh = max(FlightSize / 2, 2 * SMSS); ns-2 `closecwnd()`:
/// `if (ssthresh_ < 2) ssthresh_ = 2`.
pub const MIN_SSTHRESH_SEGMENTS: u64 = 2;
/// RFC 5681 (3.1): after a timeout cwnd = LW = 1 segment (ns-2 `wnd_restart_ = 1`).
pub const LOSS_WINDOW_SEGMENTS: u64 = 1;

#[derive(Copy, Clone, Debug, Default)]
pub struct RenoAimd;

impl RenoAimd {
    pub fn on_ack(&mut self, w: &Window, _acked: u64) -> u64 {
        if w.cwnd < w.ssthresh {
            // RFC 5681 (3.1) slow start: cwnd += SMSS per ACK (ns-2: cwnd_ += 1).
            w.cwnd + w.mss
        } else {
            // RFC 5681 (3.3) congestion avoidance: cwnd += SMSS*SMSS/cwnd per ACK
            // (ns-2: cwnd_ += 1/cwnd_), at least one byte.
            w.cwnd + (w.mss * w.mss / w.cwnd.max(1)).max(1)
        }
    }

    pub fn on_dupack_loss(&mut self, w: &Window, basis: u64) -> Reduction {
        let ssthresh = (basis / 2).max(MIN_SSTHRESH_SEGMENTS * w.mss);
        Reduction { ssthresh, cwnd: ssthresh }
    }

    pub fn on_timeout(&mut self, w: &Window, basis: u64) -> Reduction {
        let ssthresh = (basis / 2).max(MIN_SSTHRESH_SEGMENTS * w.mss);
        Reduction { ssthresh, cwnd: LOSS_WINDOW_SEGMENTS * w.mss }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    fn win(cwnd_segs: u64, ssthresh_segs: u64) -> Window {
        Window { cwnd: cwnd_segs * MSS, ssthresh: ssthresh_segs * MSS, mss: MSS }
    }

    #[test]
    fn slow_start_adds_one_segment_per_ack() {
        let mut cc = RenoAimd;
        assert_eq!(cc.on_ack(&win(4, 64), MSS), 5 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        let mut cc = RenoAimd;
        let mut w = win(10, 10);
        for _ in 0..10 {
            w.cwnd = cc.on_ack(&w, MSS);
        }
        // 10 ACKs at ~1/10 segment each: one segment, minus integer truncation.
        assert!((10_950..=11_000).contains(&w.cwnd), "{}", w.cwnd);
    }

    #[test]
    fn halving_and_timeout() {
        let mut cc = RenoAimd;
        assert_eq!(cc.on_dupack_loss(&win(20, 64), 20 * MSS), Reduction { ssthresh: 10 * MSS, cwnd: 10 * MSS });
        assert_eq!(cc.on_dupack_loss(&win(3, 64), 3 * MSS), Reduction { ssthresh: 2 * MSS, cwnd: 2 * MSS }, "floor of two segments");
        assert_eq!(cc.on_timeout(&win(20, 64), 20 * MSS), Reduction { ssthresh: 10 * MSS, cwnd: MSS });
    }
}
