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

/// With `ns2_window` (tcp/ns2.rs `window_arith`) cwnd is also kept as ns-2 kept it, a
/// `double` count of packets (`cwnd_`), and the byte window is its integer number of bytes:
/// the sender's test `sent + MSS <= cwnd` in bytes is then ns-2's `t_seqno_ <= highest_ack_ +
/// int(cwnd_)`. The shadow is re-read from the byte window whenever someone else changed it
/// (a cut, a timeout): ns-2's cuts are whole packets.
#[derive(Copy, Clone, Debug, Default)]
pub struct RenoAimd {
    ns2_window: bool,
    /// ns-2 `cwnd_` in packets (f64 arithmetic is IEEE-exact and deterministic here).
    pkts: f64,
    /// The byte window last returned, to notice a cut made elsewhere.
    last: u64,
}

impl RenoAimd {
    /// Reno AIMD with ns-2's fractional window arithmetic.
    pub fn ns2() -> Self {
        RenoAimd { ns2_window: true, pkts: 0.0, last: u64::MAX }
    }

    pub fn on_ack(&mut self, w: &Window, _acked: u64) -> u64 {
        if self.ns2_window {
            return self.on_ack_ns2(w);
        }
        if w.cwnd < w.ssthresh {
            // RFC 5681 (3.1) slow start: cwnd += SMSS per ACK (ns-2: cwnd_ += 1).
            w.cwnd + w.mss
        } else {
            // RFC 5681 (3.3) congestion avoidance: cwnd += SMSS*SMSS/cwnd per ACK
            // (ns-2: cwnd_ += 1/cwnd_), at least one byte.
            w.cwnd + (w.mss * w.mss / w.cwnd.max(1)).max(1)
        }
    }

    /// ns-2 `opencwnd()` with `windowOption_ 1`, `increase_num_ 1`: `cwnd_ += 1` below
    /// ssthresh, else `cwnd_ += 1/cwnd_`.
    fn on_ack_ns2(&mut self, w: &Window) -> u64 {
        let mss = w.mss as f64;
        if w.cwnd != self.last {
            self.pkts = w.cwnd as f64 / mss;
        }
        if self.pkts < w.ssthresh as f64 / mss {
            self.pkts += 1.0;
        } else {
            self.pkts += 1.0 / self.pkts;
        }
        self.last = (self.pkts * mss) as u64;
        self.last
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
        let mut cc = RenoAimd::default();
        assert_eq!(cc.on_ack(&win(4, 64), MSS), 5 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        let mut cc = RenoAimd::default();
        let mut w = win(10, 10);
        for _ in 0..10 {
            w.cwnd = cc.on_ack(&w, MSS);
        }
        // 10 ACKs at ~1/10 segment each: one segment, minus integer truncation.
        assert!((10_950..=11_000).contains(&w.cwnd), "{}", w.cwnd);
    }

    #[test]
    fn ns2_window_grows_by_one_over_cwnd_in_packets() {
        // ns-2: from cwnd_ = 10 in congestion avoidance, ten ACKs add 1/10 + 1/10.1 + ... =
        // 0.9586 packets; our byte arithmetic loses the fractions of a byte (10,956).
        let mut cc = RenoAimd::ns2();
        let mut w = win(10, 10);
        let mut pkts = 10.0f64;
        for _ in 0..10 {
            w.cwnd = cc.on_ack(&w, MSS);
            pkts += 1.0 / pkts;
        }
        assert_eq!(w.cwnd, (pkts * 1000.0) as u64);
        assert_eq!(w.cwnd, 10_958);
        // A cut made by the sender is taken up: ns-2 cuts to whole packets.
        w.cwnd = 5 * MSS;
        w.ssthresh = 5 * MSS;
        assert_eq!(cc.on_ack(&w, MSS), 5_200);
        // Slow start adds whole packets, keeping any fraction.
        let mut cc = RenoAimd::ns2();
        assert_eq!(cc.on_ack(&win(2, 28), MSS), 3 * MSS);
    }

    #[test]
    fn halving_and_timeout() {
        let mut cc = RenoAimd::default();
        assert_eq!(cc.on_dupack_loss(&win(20, 64), 20 * MSS), Reduction { ssthresh: 10 * MSS, cwnd: 10 * MSS });
        assert_eq!(cc.on_dupack_loss(&win(3, 64), 3 * MSS), Reduction { ssthresh: 2 * MSS, cwnd: 2 * MSS }, "floor of two segments");
        assert_eq!(cc.on_timeout(&win(20, 64), 20 * MSS), Reduction { ssthresh: 10 * MSS, cwnd: MSS });
    }
}
