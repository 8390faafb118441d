//! Simulated time, rates and the unit strings people write ("45Mbps", "275ms", "9180B").
//!
//! Time is an integer count of nanoseconds (DESIGN.md, "Decisions"): no floating point on the
//! event-time path, so the same scenario and seed give bit-identical results on every machine.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant or a span of simulated time, in nanoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; for configuration only, never on the event path.
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime((s * 1e9).round() as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
    /// `k` times this span (saturating).
    pub fn times(self, k: u64) -> SimTime {
        SimTime(self.0.saturating_mul(k))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{}ns", ns)
        }
    }
}

/// A link rate in bits per second.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, serde::Serialize)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(b: u64) -> Self {
        Rate(b)
    }
    pub const fn mbps(m: u64) -> Self {
        Rate(m * 1_000_000)
    }
    pub fn as_bps(self) -> u64 {
        self.0
    }
    pub fn as_mbps_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Time to serialise `bytes` at this rate, rounded up to the next nanosecond.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimTime {
        // bytes x 8e9 fits in u64 up to about 2.3 GB: the common case avoids a 128-bit
        // division (a library call that showed in the cell-level profile).
        const U64_SAFE_BYTES: u64 = u64::MAX / 8_000_000_000;
        if bytes <= U64_SAFE_BYTES {
            return SimTime((bytes * 8_000_000_000).div_ceil(self.0));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let r = self.0 as u128;
        SimTime(bits.div_ceil(r) as u64)
    }
    /// Bytes carried in `t` at this rate (rounded down), saturating at u64::MAX (the product
    /// of two u64 values need not fit: 1 Tbps for a year is 3.9e18 bytes, 10 Tbps overflows).
    pub fn bytes_in(self, t: SimTime) -> u64 {
        let b = self.0 as u128 * t.0 as u128 / 8 / 1_000_000_000;
        u64::try_from(b).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Mbps", self.as_mbps_f64())
    }
}

/// Splits "45Mbps" into (45.0, "Mbps"). Whitespace between number and unit is allowed.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit() || c == '.' || c == '_' || ((c == 'e' || c == 'E') && i > 0 && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+')) || ((c == '-' || c == '+') && (i == 0 || s[..i].ends_with(['e', 'E']))))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: f64 = s[..end].replace('_', "").parse().ok()?;
    Some((num, s[end..].trim()))
}

/// 2^64 as a float: the first value a u64 cannot hold. `x as u64` saturates silently at
/// u64::MAX, so every conversion below checks against this first.
const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// `n * scale` rounded, if it fits in a u64; `n` is finite and >= 0.
pub(crate) fn scaled_u64(n: f64, scale: f64) -> Option<u64> {
    let x = (n * scale).round();
    (x < U64_LIMIT).then_some(x as u64)
}

// Error strings below are rules, not messages: the caller reports the value as written beside
// them (scenario::Problem's `got`), so they name at most the offending unit, never the value.

/// The rule [`parse_duration`] gives a negative (or NaN) duration; a key that must be
/// positive reports its own rule instead (scenario validation).
pub const NOT_NEGATIVE: &str = "must be >= 0";

/// The rule [`parse_duration`] gives a duration above 0 but below one nanosecond, the unit of
/// simulated time: rounded to the nearest nanosecond it would become 0 (refused by keys that
/// must be > 0, silently no delay at all elsewhere) or 1 ns (up to twice what was written).
/// (0 itself stays what each key allows.)
pub const BELOW_1NS: &str = "must be at least 1ns (simulated time counts whole nanoseconds)";

/// The rule [`parse_rate`] gives a rate above 0 but below one bit per second, the unit of
/// [`Rate`]: rounded it would become 0 bps (refused as "must be > 0" of a rate nobody wrote as
/// 0) or 1 bps (up to twice what was written), as [`BELOW_1NS`] for durations.
pub const BELOW_1BPS: &str = "must be at least 1bps (rates count whole bits per second)";

/// The rules [`parse_size`] gives a size above 0 but below one of its whole units (a byte, a
/// packet, a cell): rounded it would become 0 (a buffer that holds nothing) or 1 (up to twice
/// what was written), as [`BELOW_1NS`] for durations. A queue holds whole packets and an ATM
/// buffer whole cells, so a fraction of one is no more meaningful than a fraction of a byte.
/// Multiples of the bdp stay fractional ("0.5bdp"): they scale a computed product, not a count.
pub const BELOW_1B: &str = "must be at least 1B (sizes count whole bytes)";
/// See [`BELOW_1B`].
pub const BELOW_1PKT: &str = "must be at least 1pkt (sizes in packets count whole packets)";
/// See [`BELOW_1B`].
pub const BELOW_1CELL: &str = "must be at least 1cell (sizes in cells count whole cells)";

/// Whether `x` (a value in its whole unit: ns, bps, bytes, packets, cells) is above 0 but below
/// one by more than a float's error in `n * scale` ("1e-9s" is 1.0 ns, give or take).
fn below_one_unit(x: f64) -> bool {
    x > 0.0 && x < 1.0 - 1e-9
}

/// Parses a duration: "275ms", "5us", "100s", "1.5s", "10ns", "2min", rounded to the nearest
/// nanosecond. At most u64::MAX ns (about 584 years): anything longer is an error, never a
/// saturated value. A duration above 0 and below 1 ns is an error ([`BELOW_1NS`]) for every key
/// alike, never 0 ns or 1 ns.
pub fn parse_duration(s: &str) -> Result<SimTime, String> {
    let (n, unit) = split_number(s).ok_or("expected a duration such as \"275ms\"")?;
    let scale = match unit {
        "ns" => 1e0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" => return Err("a duration needs a unit (ns, us, ms, s, min)".into()),
        u => return Err(format!("unknown time unit {u:?} (use ns, us, ms, s or min)")),
    };
    if n.is_nan() || n < 0.0 {
        return Err(NOT_NEGATIVE.into());
    }
    if below_one_unit(n * scale) {
        return Err(BELOW_1NS.into());
    }
    scaled_u64(n, scale).map(SimTime).ok_or_else(|| "too large (at most 18446744073s, u64 nanoseconds)".into())
}

/// Parses a rate: "45Mbps", "155.52Mbps", "2.048Mbps", "64kbps", "1Gbps", "1000bps", rounded to
/// the nearest bit per second. At most u64::MAX bps; 0 and a negative rate are errors, and so is
/// a rate above 0 and below 1 bps ([`BELOW_1BPS`]), never 0 bps or 1 bps.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (n, unit) = split_number(s).ok_or("expected a rate such as \"45Mbps\"")?;
    let scale = match unit {
        "bps" | "b/s" => 1e0,
        "kbps" | "Kbps" | "kb/s" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "" => return Err("a rate needs a unit (bps, kbps, Mbps, Gbps)".into()),
        u => return Err(format!("unknown rate unit {u:?} (use bps, kbps, Mbps or Gbps)")),
    };
    if n.is_nan() || n <= 0.0 {
        return Err("must be > 0".into());
    }
    if below_one_unit(n * scale) {
        return Err(BELOW_1BPS.into());
    }
    match scaled_u64(n, scale) {
        // Not reached (at least 1 - 1e-9 bps rounds to 1), but a Rate(0) would divide by zero.
        Some(0) => Err(BELOW_1BPS.into()),
        Some(bps) => Ok(Rate(bps)),
        None => Err("too large (at most 18446744073Gbps, u64 bits per second)".into()),
    }
}

/// A size given in bytes ("9180B", "64KB", "1MB", "64KiB"), in packets ("100pkt"), in cells
/// ("531cells") or as a multiple of the path's bandwidth-delay product ("0.5bdp").
#[derive(Copy, Clone, PartialEq, Debug, serde::Serialize)]
pub enum Size {
    Bytes(u64),
    Packets(u64),
    Cells(u64),
    Bdp(f64),
}

/// Parses a [`Size`]. Decimal prefixes are powers of 1000 (KB = 1000 B), binary ones of 1024
/// (KiB). A bare integer is bytes. Bytes, packets and cells are rounded to the nearest whole
/// one; above 0 and below one whole unit is an error ([`BELOW_1B`], [`BELOW_1PKT`],
/// [`BELOW_1CELL`]), never 0 or 1. A bdp multiple is taken as written ("0.5bdp").
pub fn parse_size(s: &str) -> Result<Size, String> {
    let (n, unit) = split_number(s).ok_or("expected a size such as \"9180B\", \"100pkt\" or \"0.5bdp\"")?;
    if n.is_nan() || n < 0.0 {
        return Err("must be >= 0".into());
    }
    let count = |scale: f64, what: &str, below_one: &str| {
        if below_one_unit(n * scale) {
            return Err(below_one.to_string());
        }
        scaled_u64(n, scale).ok_or_else(|| format!("too large (at most 2^64 - 1 {what})"))
    };
    let bytes = |scale: f64| count(scale, "bytes", BELOW_1B).map(Size::Bytes);
    match unit {
        "" | "B" => bytes(1.0),
        "KB" | "kB" => bytes(1e3),
        "MB" => bytes(1e6),
        "GB" => bytes(1e9),
        "KiB" => bytes(1024.0),
        "MiB" => bytes(1024.0 * 1024.0),
        "pkt" | "pkts" | "packets" => count(1.0, "packets", BELOW_1PKT).map(Size::Packets),
        "cell" | "cells" => count(1.0, "cells", BELOW_1CELL).map(Size::Cells),
        "bdp" | "BDP" if n.is_finite() => Ok(Size::Bdp(n)),
        "bdp" | "BDP" => Err("too large (a bdp multiple must be finite)".into()),
        u => Err(format!("unknown size unit {u:?} (use B, KB, MB, GB, KiB, MiB, pkt, cells or bdp)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_rounds_up() {
        // 1219 bytes at 45 Mbps = 216.711... us
        assert_eq!(Rate::mbps(45).tx_time(1219), SimTime(216_712));
        assert_eq!(Rate::mbps(8).tx_time(1), SimTime(1_000));
    }

    #[test]
    fn tx_time_fast_path_agrees_with_128_bit_arithmetic() {
        let exact = |r: Rate, b: u64| SimTime((b as u128 * 8_000_000_000).div_ceil(r.0 as u128) as u64);
        for r in [Rate(1), Rate(45_000_000), Rate(149_760_000), Rate(u64::MAX / 3)] {
            for b in [0, 1, 53, 1219, 10_229, u64::MAX / 8_000_000_000, u64::MAX / 8_000_000_000 + 1, 1 << 40] {
                assert_eq!(r.tx_time(b), exact(r, b), "rate {r:?} bytes {b}");
            }
        }
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("275ms").unwrap(), SimTime::from_millis(275));
        assert_eq!(parse_duration("5us").unwrap(), SimTime::from_micros(5));
        assert_eq!(parse_duration("1.5s").unwrap(), SimTime::from_millis(1500));
        assert_eq!(parse_rate("155.52Mbps").unwrap(), Rate(155_520_000));
        assert_eq!(parse_rate("2.048Mbps").unwrap(), Rate(2_048_000));
        assert_eq!(parse_size("64KB").unwrap(), Size::Bytes(64_000));
        assert_eq!(parse_size("0.5bdp").unwrap(), Size::Bdp(0.5));
        assert_eq!(parse_size("531cells").unwrap(), Size::Cells(531));
        assert_eq!(parse_size("1e6B").unwrap(), Size::Bytes(1_000_000));
    }

    #[test]
    fn rejects_misspelled_units() {
        let e = parse_rate("45Mbs").unwrap_err();
        assert!(e.contains("Mbs"), "{e}");
        assert!(parse_rate("-45Mbps").is_err());
        assert!(parse_rate("0Mbps").is_err());
        assert!(parse_duration("275").is_err());
        assert!(parse_duration("abc").is_err());
    }

    #[track_caller]
    fn assert_rule(got: Result<impl fmt::Debug, String>, rule: &str) {
        match got {
            Ok(v) => panic!("expected the rule {rule:?}, parsed {v:?}"),
            Err(e) => assert_eq!(e, rule),
        }
    }

    #[test]
    fn values_that_do_not_fit_are_errors_not_saturated() {
        // 1e12 s = 1e21 ns > u64::MAX (1.8e19 ns) used to become SimTime::MAX.
        assert_rule(parse_duration("1e12s"), "too large (at most 18446744073s, u64 nanoseconds)");
        assert_rule(parse_duration("1e400s"), "too large (at most 18446744073s, u64 nanoseconds)");
        assert_eq!(parse_duration("1e10s").unwrap(), SimTime::from_secs(10_000_000_000));
        assert_rule(parse_rate("2e19bps"), "too large (at most 18446744073Gbps, u64 bits per second)");
        assert_rule(parse_rate("1e400Mbps"), "too large (at most 18446744073Gbps, u64 bits per second)");
        assert_rule(parse_size("1e20B"), "too large (at most 2^64 - 1 bytes)");
        assert_rule(parse_size("2e19pkt"), "too large (at most 2^64 - 1 packets)");
        assert_rule(parse_size("1e400cells"), "too large (at most 2^64 - 1 cells)");
        assert_rule(parse_size("1e400bdp"), "too large (a bdp multiple must be finite)");
    }

    #[test]
    fn rules_name_the_unit_but_not_the_value() {
        // The caller reports the value beside the rule ("..., got \"45Mbs\""): saying it twice
        // read `must be > 0, got "0Mbps", got "0Mbps"`.
        assert_rule(parse_rate("45Mbs"), "unknown rate unit \"Mbs\" (use bps, kbps, Mbps or Gbps)");
        assert_rule(parse_rate("0Mbps"), "must be > 0");
        assert_rule(parse_rate("45"), "a rate needs a unit (bps, kbps, Mbps, Gbps)");
        assert_rule(parse_duration("-1s"), "must be >= 0");
        assert_rule(parse_duration("5days"), "unknown time unit \"days\" (use ns, us, ms, s or min)");
        assert_rule(parse_duration("abc"), "expected a duration such as \"275ms\"");
        assert_rule(parse_size("-1B"), "must be >= 0");
        assert_rule(parse_size("3furlongs"), "unknown size unit \"furlongs\" (use B, KB, MB, GB, KiB, MiB, pkt, cells or bdp)");
    }

    #[test]
    fn a_duration_below_one_nanosecond_is_refused_whatever_it_would_round_to() {
        // 1e-12s rounded to 0 ns ("must be > 0" on run.duration, none at all on a delay) while
        // 0.5ns rounded to 1 ns: one rule now, for every duration key.
        for s in ["1e-12s", "0.4ns", "0.5ns", "0.999ns", "1e-4us", "1e-10s"] {
            assert_rule(parse_duration(s), BELOW_1NS);
        }
        assert_eq!(parse_duration("0ns").unwrap(), SimTime::ZERO);
        assert_eq!(parse_duration("0s").unwrap(), SimTime::ZERO);
        // 1 ns however it is written, and rounding to the nearest nanosecond above it.
        for s in ["1ns", "1e-9s", "0.001us", "1e-6ms", "1.4ns"] {
            assert_eq!(parse_duration(s).unwrap(), SimTime(1), "{s}");
        }
        assert_eq!(parse_duration("1.5ns").unwrap(), SimTime(2));
        assert_eq!(parse_duration("275.0000001ms").unwrap(), SimTime(275_000_000));
    }

    #[test]
    fn a_rate_below_one_bit_per_second_is_refused_whatever_it_would_round_to() {
        // 0.4bps said "must be > 0 (rounds to 0 bps)" of a rate written above 0, while 0.5bps
        // ran as 1 bps: one rule now, as for durations below 1 ns.
        for s in ["0.4bps", "0.5bps", "0.999bps", "1e-4kbps", "1e-7Mbps", "1e-10Gbps", "5e-324bps"] {
            assert_rule(parse_rate(s), BELOW_1BPS);
        }
        // 0 and negative rates keep their own rule: no rate may be 0.
        assert_rule(parse_rate("0bps"), "must be > 0");
        assert_rule(parse_rate("-0.5bps"), "must be > 0");
        // 1 bps however it is written, and rounding to the nearest bit per second above it.
        for s in ["1bps", "0.001kbps", "1e-6Mbps", "1e-9Gbps", "1.4bps"] {
            assert_eq!(parse_rate(s).unwrap(), Rate(1), "{s}");
        }
        assert_eq!(parse_rate("1.5bps").unwrap(), Rate(2));
    }

    #[test]
    fn a_size_below_one_whole_unit_is_refused_but_a_bdp_multiple_is_not() {
        // 0.4B was 0 bytes, 0.5pkt one packet, 0.4cells none: one rule now, as for durations.
        for s in ["0.4B", "0.5B", "0.999", "1e-4KB", "1e-7MB", "1e-10GB", "1e-4KiB", "1e-7MiB"] {
            assert_rule(parse_size(s), BELOW_1B);
        }
        for s in ["0.4pkt", "0.5pkts", "0.999packets"] {
            assert_rule(parse_size(s), BELOW_1PKT);
        }
        for s in ["0.4cells", "0.5cell"] {
            assert_rule(parse_size(s), BELOW_1CELL);
        }
        // 0 stays what each key allows; a whole unit however it is written; rounding above it.
        assert_eq!(parse_size("0B").unwrap(), Size::Bytes(0));
        assert_eq!(parse_size("0pkt").unwrap(), Size::Packets(0));
        assert_eq!(parse_size("0cells").unwrap(), Size::Cells(0));
        for s in ["1B", "1", "0.001KB", "1e-6MB", "1.4B"] {
            assert_eq!(parse_size(s).unwrap(), Size::Bytes(1), "{s}");
        }
        assert_eq!(parse_size("1.5B").unwrap(), Size::Bytes(2));
        assert_eq!(parse_size("1pkt").unwrap(), Size::Packets(1));
        assert_eq!(parse_size("100pkt").unwrap(), Size::Packets(100));
        assert_eq!(parse_size("1cell").unwrap(), Size::Cells(1));
        // A bdp multiple scales a computed product: fractions of it are meant.
        assert_eq!(parse_size("0.5bdp").unwrap(), Size::Bdp(0.5));
        assert_eq!(parse_size("0.001bdp").unwrap(), Size::Bdp(0.001));
    }

    #[test]
    fn bytes_in_saturates() {
        // u64::MAX bps for u64::MAX ns is 4.25e37 bytes; `as u64` used to wrap it.
        assert_eq!(Rate(u64::MAX).bytes_in(SimTime::MAX), u64::MAX);
        assert_eq!(Rate::mbps(45).bytes_in(SimTime::from_millis(550)), 3_093_750);
    }
}
