//! TCP Hybla (Caini and Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous networks",
//! Int. J. Satell. Commun. Network. 2004): the window grows as fast in time as a Reno
//! connection with the reference RTT would, by scaling each ACK's increase with
//! rho = RTT / RTT0: slow start adds 2^rho - 1 segments per ACK, congestion avoidance
//! rho^2 / cwnd segments. Decrease is Reno's. Maths through `libm` (STYLE.md).

use super::{AckSample, Reduction, Window};
use crate::time::SimTime;

/// Hybla's reference RTT, RTT0 = 25 ms (the paper's and Linux `tcp_hybla.c`'s value).
pub const RTT0: SimTime = SimTime::from_millis(25);

#[derive(Clone, Debug, Default)]
pub struct Hybla;

impl Hybla {
    /// rho = max(srtt / RTT0, 1) (Linux clamps at 1).
    pub fn rho(srtt: Option<SimTime>) -> f64 {
        srtt.map_or(1.0, |r| (r.as_secs_f64() / RTT0.as_secs_f64()).max(1.0))
    }

    pub fn on_ack(&mut self, w: &Window, s: &AckSample) -> u64 {
        let rho = Self::rho(s.srtt);
        let mss = w.mss as f64;
        let inc = if w.cwnd < w.ssthresh {
            // Slow start: cwnd += (2^rho - 1) * MSS.
            (libm::exp2(rho) - 1.0) * mss
        } else {
            // Congestion avoidance: cwnd += rho^2 * MSS * MSS / cwnd.
            rho * rho * mss * mss / w.cwnd as f64
        };
        // Cap one ACK's growth so a GEO rho (~22) cannot overflow: at most doubling.
        w.cwnd + (inc.min(w.cwnd as f64) as u64).max(1)
    }

    pub fn on_dupack_loss(&mut self, w: &Window, basis: u64) -> Reduction {
        super::reno::RenoAimd::default().on_dupack_loss(w, basis)
    }

    pub fn on_timeout(&mut self, w: &Window, basis: u64) -> Reduction {
        super::reno::RenoAimd::default().on_timeout(w, basis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn rho_scales_growth_with_the_rtt() {
        let mut h = Hybla;
        let w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        // 100 ms RTT: rho = 4, congestion avoidance adds 16 * MSS^2 / cwnd = 1.6 segments.
        let s = AckSample { now: SimTime::ZERO, acked: MSS, srtt: Some(SimTime::from_millis(100)) };
        assert_eq!(h.on_ack(&w, &s), 10 * MSS + 1600);
        // Slow start: 2^4 - 1 = 15 segments per ACK, capped at doubling.
        let ss = Window { ssthresh: 1 << 30, ..w };
        assert_eq!(h.on_ack(&ss, &s), 20 * MSS);
        // At or under RTT0 it is Reno.
        let s = AckSample { srtt: Some(SimTime::from_millis(10)), ..s };
        assert_eq!(h.on_ack(&ss, &s), 11 * MSS);
    }
}
