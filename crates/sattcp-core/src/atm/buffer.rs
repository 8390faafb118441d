//! Switch buffer sizes in cells, as seed 000 Table 3 computes them.
//!
//! Table 3 gives the RTT-bandwidth product in cells as 1062 (WAN, 10 ms), 21230 (MEO, 200 ms) and
//! 58380 (GEO, 550 ms) at 45 Mbps. The exact products are 450,000 / 424 = 1061.3,
//! 9,000,000 / 424 = 21226.4 and 24,750,000 / 424 = 58372.6 cells: the table rounds them *up to
//! four significant figures* (plain ceiling would give 21227 and 58373, whose halves 10613.5 and
//! 29186.5 are not the table's 10615 and 29190). The buffers are then that rounded product times
//! 0.5, 1 and 2: 531/1062/2124, 10615/21230/42460, 29190/58380/116760, except that for WAN the
//! seeds chose 2300 instead of 2124 ("the smallest buffer size that can hold one complete packet
//! (MSS=1024 bytes) for each of the 100 TCP connections", seed 000 §4.2.3): a scenario writes
//! that one as "2300cells".

use super::aal5::{cells_for_tcp_payload, CELL_BITS, CELL_BYTES};
use crate::time::{Rate, SimTime, Size};

/// Significant figures kept by Table 3 of seed 000 when it rounds the RTT-bandwidth product.
pub const TABLE3_SIG_FIGS: u32 = 4;

/// The RTT-bandwidth product in cells as Table 3 of seed 000 states it: `rtt x rate / 424 bits`,
/// rounded up to [`TABLE3_SIG_FIGS`] significant figures (exact integer arithmetic).
pub fn bdp_cells(rtt: SimTime, rate: Rate) -> u64 {
    // cells = num / den exactly.
    let num = rtt.0 as u128 * rate.as_bps() as u128;
    let den = CELL_BITS as u128 * 1_000_000_000;
    let whole = num / den;
    let digits = if whole == 0 { 1 } else { whole.ilog10() + 1 };
    let unit = 10u128.pow(digits.saturating_sub(TABLE3_SIG_FIGS));
    // Saturates rather than truncate: a product above u64::MAX cells is rejected as too large.
    u64::try_from(num.div_ceil(den * unit) * unit).unwrap_or(u64::MAX)
}

/// `k` times the Table 3 product, rounded to the nearest cell (0.5 x 1062 = 531).
pub fn bdp_multiple_cells(k: f64, rtt: SimTime, rate: Rate) -> u64 {
    (k * bdp_cells(rtt, rate) as f64).round() as u64
}

/// A buffer size in cells from a [`Size`] as the scenario gives it: cells as written; a multiple
/// of the RTT-bandwidth product (`rtt` is the round-trip propagation delay of the path, `rate`
/// the bottleneck rate) as Table 3; bytes as whole cells (rounded down); packets as packets of
/// `mss` payload bytes in AAL5 cells. Saturates at u64::MAX rather than wrap, so that
/// validation's "at most 2^32 - 1 cells" rule sees a huge buffer as huge.
pub fn buffer_cells(size: Size, rtt: SimTime, rate: Rate, mss: u64) -> u64 {
    match size {
        Size::Cells(c) => c,
        Size::Bdp(k) => bdp_multiple_cells(k, rtt, rate),
        Size::Bytes(b) => b / CELL_BYTES,
        Size::Packets(n) => n.saturating_mul(cells_for_tcp_payload(mss)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_size;

    const T3: Rate = Rate::mbps(45);

    #[track_caller]
    fn assert_row(rtt_ms: u64, product: u64, buffers: [u64; 3]) {
        let rtt = SimTime::from_millis(rtt_ms);
        assert_eq!(bdp_cells(rtt, T3), product, "RTT-bandwidth product for {rtt_ms} ms");
        let got = [0.5, 1.0, 2.0].map(|k| bdp_multiple_cells(k, rtt, T3));
        assert_eq!(got, buffers, "buffers for {rtt_ms} ms");
    }

    #[test]
    fn table3_of_seed_000() {
        assert_row(10, 1062, [531, 1062, 2124]); // the seeds used 2300 for 2 RTT: "2300cells"
        assert_row(200, 21230, [10615, 21230, 42460]);
        assert_row(550, 58380, [29190, 58380, 116760]);
    }

    #[test]
    fn scenario_sizes_convert_to_cells() {
        let geo = SimTime::from_millis(550);
        let cells = |s: &str| buffer_cells(parse_size(s).unwrap(), geo, T3, 9180);
        assert_eq!(cells("0.5bdp"), 29190);
        assert_eq!(cells("2300cells"), 2300);
        assert_eq!(cells("530B"), 10);
        assert_eq!(cells("2pkt"), 386);
    }

    #[test]
    fn small_products_are_plain_ceilings() {
        assert_eq!(bdp_cells(SimTime::from_millis(1), T3), 107); // 106.1
        assert_eq!(bdp_cells(SimTime::ZERO, T3), 0);
    }

    #[test]
    fn huge_packet_counts_saturate_instead_of_wrapping() {
        // MSS 1024 is 23 cells a packet; 5614226457215950848 x 23 wraps to 8192 cells, which
        // passed validation as an ordinary buffer.
        let wan = SimTime::from_millis(10);
        assert_eq!(buffer_cells(parse_size("5614226457215950848pkt").unwrap(), wan, T3, 1024), u64::MAX);
        assert_eq!(buffer_cells(Size::Packets(100), wan, T3, 1024), 2300);
        assert_eq!(bdp_cells(SimTime::MAX, Rate(u64::MAX)), u64::MAX);
    }
}
