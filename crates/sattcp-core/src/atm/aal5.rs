//! AAL5 framing with LLC/SNAP encapsulation, exact to the byte, and the timing of cells on a
//! link.
//!
//! An IP datagram of `b` bytes becomes an AAL5 CPCS-PDU of `b + 8 (LLC/SNAP, RFC 2684) + 8
//! (AAL5 trailer: UU, CPI, length, CRC-32)` bytes padded up to a multiple of 48, carried in
//! 53-byte cells (seed 000 §4.3: "1024 bytes of data + 20 bytes of TCP header + 20 bytes of IP
//! header + 8 bytes of LLC header + 8 bytes of AAL5 trailer. These are padded to produce 23 ATM
//! cells ... 1219 bytes at the ATM layer").

use crate::net::packet::{IP_HEADER, TCP_HEADER};
use crate::time::{Rate, SimTime};

/// Bytes of one ATM cell on the wire: 5 header + 48 payload (ITU-T I.361).
pub const CELL_BYTES: u64 = 53;
/// Payload bytes of one cell.
pub const CELL_PAYLOAD: u64 = 48;
/// LLC/SNAP encapsulation header (RFC 2684 §5.1; seed 000 §4.3 "8 bytes of LLC header").
pub const LLC_SNAP: u64 = 8;
/// AAL5 CPCS-PDU trailer (ITU-T I.363.5; seed 000 §4.3 "8 bytes of AAL5 trailer").
pub const AAL5_TRAILER: u64 = 8;
/// Overhead added to an IP datagram before padding.
pub const AAL5_OVERHEAD: u64 = LLC_SNAP + AAL5_TRAILER;
/// TCP/IP headers as the seeds count them (no options; seed 000 §4.3).
pub const TCPIP_HEADERS: u64 = (IP_HEADER + TCP_HEADER) as u64;
/// Bits of one cell on the wire.
pub const CELL_BITS: u64 = CELL_BYTES * 8;

/// Cells needed to carry an IP datagram of `ip_bytes` bytes:
/// `ceil((ip_bytes + 16) / 48)`.
#[inline]
pub const fn cells_for_ip(ip_bytes: u64) -> u64 {
    (ip_bytes + AAL5_OVERHEAD).div_ceil(CELL_PAYLOAD)
}

/// Cells needed to carry a TCP segment with `payload` data bytes: `ceil((payload + 56) / 48)`.
#[inline]
pub const fn cells_for_tcp_payload(payload: u64) -> u64 {
    cells_for_ip(payload + TCPIP_HEADERS)
}

/// Bytes on the wire (whole cells, headers included) for an IP datagram of `ip_bytes` bytes.
#[inline]
pub const fn wire_bytes_for_ip(ip_bytes: u64) -> u64 {
    cells_for_ip(ip_bytes) * CELL_BYTES
}

/// Padding bytes inside the last cell (the AAL5 PAD field, 0..=47).
#[inline]
pub const fn pad_bytes_for_ip(ip_bytes: u64) -> u64 {
    cells_for_ip(ip_bytes) * CELL_PAYLOAD - ip_bytes - AAL5_OVERHEAD
}

/// Maximum TCP goodput, in bits per second, of a link that carries 53-byte cells at
/// `cell_rate` (all 53 bytes count against the rate), when every segment carries `mss` bytes:
///
/// `C = cell_rate * mss / (53 * ceil((mss + 56) / 48))`
///
/// This is the seeds' formula (seed 000 §4.3: "C is 1024/1219 = 84% = 37.80 Mbps approximately
/// on a 45Mbps link"): 45 Mbps gives 37.8015 Mbps for MSS 1024 and 40.3852 Mbps for MSS 9180.
/// No physical-layer framing (PLCP, SONET) is subtracted: the seeds' T3 carries cells at 45 Mbps.
pub fn max_goodput_bps(cell_rate: Rate, mss: u64) -> f64 {
    let wire = (cells_for_tcp_payload(mss) * CELL_BYTES) as f64;
    cell_rate.as_bps() as f64 * mss as f64 / wire
}

/// Time to send one cell at `rate`, rounded up to the next nanosecond
/// (45 Mbps: 424 bits -> 9422.2 ns -> 9423 ns).
///
/// For runs of back-to-back cells prefer [`cell_end_time`], which does not accumulate the
/// rounding.
#[inline]
pub fn cell_time(rate: Rate) -> SimTime {
    rate.tx_time(CELL_BYTES)
}

/// When cell `k` (from 0) of a burst of back-to-back cells whose first bit leaves at `start`
/// has been fully transmitted at `rate`: `start + ceil((k + 1) * 424 bits / rate)`.
///
/// Rounding is applied once, to the whole run, so the last cell of a frame of `n` cells ends at
/// exactly `start + rate.tx_time(n * 53)`, the time the same frame takes as a packet.
#[inline]
pub fn cell_end_time(start: SimTime, rate: Rate, k: u64) -> SimTime {
    start + rate.tx_time((k + 1) * CELL_BYTES)
}

/// The times at which the cells of an IP datagram of `ip_bytes` bytes, whose first bit leaves at
/// `start` on a link of `rate`, have been fully transmitted (add the propagation delay for their
/// arrival times). An iterator: nothing is allocated.
pub fn segment_times(start: SimTime, rate: Rate, ip_bytes: u64) -> impl ExactSizeIterator<Item = SimTime> {
    (0..cells_for_ip(ip_bytes) as u32).map(move |k| cell_end_time(start, rate, k as u64))
}

/// The end times of the successive cells of one back-to-back run, stepped without a division:
/// after `CellRun::new(start, rate, k)`, `end()` is `cell_end_time(start, rate, k)` and each
/// `step()` moves to the next cell, to the same nanosecond.
///
/// Hand-written for speed: the cell-level paths of a switch port ask for one end time per cell
/// (issue 15: about a million per second of simulated ATM); keeping `(k + 1) x 424e9` as a
/// quotient and remainder of the rate replaces the division by two additions and a compare.
#[derive(Copy, Clone, Debug)]
pub struct CellRun {
    start: SimTime,
    /// `(k + 1) x CELL_BITS x 1e9 = q x bps + r`, `r < bps`.
    q: u64,
    r: u64,
    /// `CELL_BITS x 1e9 = step_q x bps + step_r`.
    step_q: u64,
    step_r: u64,
    bps: u64,
}

impl CellRun {
    /// Cell `k` (from 0) of a run whose first bit leaves at `start`.
    #[inline]
    pub fn new(start: SimTime, rate: Rate, k: u64) -> CellRun {
        const CELL_BIT_NS: u64 = CELL_BITS * 1_000_000_000;
        let bps = rate.as_bps();
        let num = (k as u128 + 1) * CELL_BIT_NS as u128;
        let (q, r) = ((num / bps as u128) as u64, (num % bps as u128) as u64);
        CellRun { start, q, r, step_q: CELL_BIT_NS / bps, step_r: CELL_BIT_NS % bps, bps }
    }
    /// The same link's run moved to a new busy period from `start`, at its first cell: what
    /// `CellRun::new(start, rate, 0)` gives, without its two divisions (the first cell's
    /// quotient and remainder are the step's). A clock starts a run at each idle-to-busy
    /// change; the 128-bit division was 1.1% of a study run's samples (`__udivti3`).
    #[inline]
    pub fn restart(&mut self, start: SimTime) {
        self.start = start;
        self.q = self.step_q;
        self.r = self.step_r;
    }
    /// When the current cell's last bit leaves.
    #[inline]
    pub fn end(&self) -> SimTime {
        SimTime(self.start.0 + self.q + (self.r > 0) as u64)
    }
    /// Moves to the next cell of the run.
    #[inline]
    pub fn step(&mut self) {
        // r + step_r may not fit in u64 for rates near u64::MAX: compare against the room left.
        let room = self.bps - self.step_r;
        if self.r >= room {
            self.r -= room;
            self.q += self.step_q + 1;
        } else {
            self.r += self.step_r;
            self.q += self.step_q;
        }
    }
}

/// Transmission times of an output link that sends cells back to back whenever it has some.
///
/// Within a busy period (each cell starts exactly when the previous one ends) the end times are
/// computed from the start of the period with [`cell_end_time`], so a link that stays busy for
/// 100 s carries exactly `rate / 424` cells per second, to the nanosecond.
#[derive(Copy, Clone, Debug)]
pub struct CellClock {
    rate: Rate,
    period_start: SimTime,
    sent_in_period: u64,
    busy_until: SimTime,
    /// The last cell sent, as a step of the current busy period (no division per cell).
    run: CellRun,
}

impl CellClock {
    pub fn new(rate: Rate) -> CellClock {
        CellClock { rate, period_start: SimTime::ZERO, sent_in_period: 0, busy_until: SimTime::ZERO, run: CellRun::new(SimTime::ZERO, rate, 0) }
    }
    pub fn rate(&self) -> Rate {
        self.rate
    }
    /// When the cell in transmission (if any) ends; the link is free from then on.
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }
    /// The current busy period: when its first cell started, and how many cells it has sent.
    #[inline]
    pub fn period(&self) -> (SimTime, u64) {
        (self.period_start, self.sent_in_period)
    }
    /// When the `n`-th cell after the one in transmission will end if the link stays busy
    /// (`n = 0`: the current one, [`busy_until`](Self::busy_until)). Needs a cell sent before.
    #[inline]
    pub fn end_of_next(&self, n: u64) -> SimTime {
        debug_assert!(self.sent_in_period > 0);
        cell_end_time(self.period_start, self.rate, self.sent_in_period - 1 + n)
    }
    /// Up to `max` cells (at least one) go back to back from `now` on: the first starts at
    /// `now`, each next one when the one before it ends, as long as that is not after `bound`.
    /// Returns how many started and the sum of their start times. The same as calling
    /// [`send`](Self::send) at each of those times, with a division-free step per cell.
    #[inline]
    pub fn send_back_to_back(&mut self, now: SimTime, max: u32, bound: SimTime) -> (u32, u128) {
        debug_assert!(max > 0);
        self.send(now);
        let (mut n, mut starts) = (1u32, now.0 as u128);
        while n < max && self.busy_until <= bound {
            starts += self.busy_until.0 as u128;
            self.run.step();
            self.busy_until = self.run.end();
            self.sent_in_period += 1;
            n += 1;
        }
        (n, starts)
    }
    /// A cell starts transmission at `now` (not before [`busy_until`](Self::busy_until)):
    /// returns when its last bit leaves.
    #[inline]
    pub fn send(&mut self, now: SimTime) -> SimTime {
        debug_assert!(now >= self.busy_until, "cell sent at {now} while the link is busy until {}", self.busy_until);
        if now > self.busy_until || self.sent_in_period == 0 {
            self.period_start = now;
            self.sent_in_period = 0;
            self.run.restart(now); // = CellRun::new(now, self.rate, 0)
        } else {
            self.run.step();
        }
        // = cell_end_time(self.period_start, self.rate, self.sent_in_period)
        self.busy_until = self.run.end();
        self.sent_in_period += 1;
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[track_caller]
    fn assert_segment(payload: u64, cells: u64, wire: u64) {
        assert_eq!(cells_for_tcp_payload(payload), cells, "cells for {payload} payload bytes");
        assert_eq!(wire_bytes_for_ip(payload + 40), wire, "wire bytes for {payload} payload bytes");
    }

    #[test]
    fn mss_1024_is_23_cells_1219_bytes() {
        // seed 000 §4.3: 1024 + 20 + 20 + 8 + 8 = 1080 -> 23 cells, 1219 bytes.
        assert_segment(1024, 23, 1219);
        assert_eq!(pad_bytes_for_ip(1064), 23 * 48 - 1080);
    }

    #[test]
    fn mss_9180_is_193_cells() {
        // 9180 + 56 = 9236 -> ceil(9236 / 48) = 193 cells = 10229 bytes.
        assert_segment(9180, 193, 10229);
    }

    #[test]
    fn request_128_bytes_is_4_cells() {
        // 128 + 56 = 184 -> ceil(184 / 48) = 4 cells, 212 bytes.
        assert_segment(128, 4, 212);
    }

    #[test]
    fn pure_ack_is_2_cells() {
        // A 40-byte ACK: 40 + 16 = 56 bytes -> 2 cells (one cell holds 48).
        assert_eq!(cells_for_ip(40), 2);
        assert_segment(0, 2, 106);
    }

    #[test]
    fn max_goodput_matches_seeds() {
        let c1024 = max_goodput_bps(Rate::mbps(45), 1024) / 1e6;
        let c9180 = max_goodput_bps(Rate::mbps(45), 9180) / 1e6;
        assert!((c1024 - 37.80).abs() < 0.005, "C(1024) = {c1024}");
        assert!((c9180 - 40.39).abs() < 0.005, "C(9180) = {c9180}");
    }

    #[test]
    fn cell_times_do_not_accumulate_rounding() {
        let r = Rate::mbps(45);
        assert_eq!(cell_time(r), SimTime(9_423));
        let t0 = SimTime::from_millis(1);
        let times: Vec<_> = segment_times(t0, r, 1064).collect();
        assert_eq!(times.len(), 23);
        assert_eq!(times[0], t0 + SimTime(9_423));
        assert_eq!(times[1], t0 + SimTime(18_845)); // ceil(2 * 9422.2)
        assert_eq!(*times.last().unwrap(), t0 + r.tx_time(1219));
        assert!(times.windows(2).all(|w| w[1] > w[0]));
    }

    #[test]
    fn cell_clock_keeps_busy_periods_exact() {
        let r = Rate::mbps(45);
        let mut clock = CellClock::new(r);
        let mut t = SimTime::from_micros(3);
        for _ in 0..106_132 {
            t = clock.send(t);
        }
        // 106,132 cells of 424 bits at 45 Mbps: 0.99999 s, to the nanosecond (rounded up).
        assert_eq!(t, SimTime::from_micros(3) + r.tx_time(106_132 * 53));
        assert_eq!(clock.end_of_next(0), t);
        assert_eq!(clock.end_of_next(2), SimTime::from_micros(3) + r.tx_time(106_134 * 53));
        // After an idle gap a new period starts where the next cell starts.
        let later = t + SimTime(1);
        assert_eq!(clock.send(later), later + SimTime(9_423));
    }

    proptest! {
        /// Stepping a run gives `cell_end_time` of every cell, to the nanosecond, at any rate.
        #[test]
        fn cell_run_steps_agree_with_cell_end_time(start in 0u64..1 << 50, bps in 1_000u64..u64::MAX, k0 in 0u64..1 << 32, n in 1usize..300) {
            let rate = Rate(bps);
            let mut run = CellRun::new(SimTime(start), rate, k0);
            for k in k0..k0 + n as u64 {
                prop_assert_eq!(run.end(), cell_end_time(SimTime(start), rate, k), "cell {}", k);
                run.step();
            }
        }

        /// A run restarted at its first cell is the run `new` builds there, whatever it was at.
        #[test]
        fn cell_run_restart_is_new_at_the_first_cell(start in 0u64..1 << 50, later in 0u64..1 << 50, bps in 1_000u64..u64::MAX, k0 in 0u64..1 << 32, n in 0usize..50) {
            let rate = Rate(bps);
            let mut run = CellRun::new(SimTime(start), rate, k0);
            for _ in 0..n {
                run.step();
            }
            run.restart(SimTime(later));
            let fresh = CellRun::new(SimTime(later), rate, 0);
            prop_assert_eq!((run.start, run.q, run.r, run.step_q, run.step_r, run.bps),
                            (fresh.start, fresh.q, fresh.r, fresh.step_q, fresh.step_r, fresh.bps));
        }

        #[test]
        fn cells_are_ceil_of_payload_plus_56(l in 0u64..70_000) {
            prop_assert_eq!(cells_for_tcp_payload(l), (l + 56).div_ceil(48));
            let pad = pad_bytes_for_ip(l + 40);
            prop_assert!(pad < 48);
            prop_assert_eq!((l + 40 + 16 + pad) % 48, 0);
        }
    }
}
