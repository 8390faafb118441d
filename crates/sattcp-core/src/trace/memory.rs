//! How much memory the packet log may still grow into (docs/traces.md, "Bounds").
//!
//! The log ([`super::PacketLog`]) is kept in memory and grows by doubling. Before each doubling
//! (never per event) it reads the memory available here, and when the doubled log would take
//! more than its share ([`LOG_SHARE`]) it stops recording, as it does at
//! `trace.max_packet_events`, and the run says why in its warnings. Without this, a forced run
//! (or a high `trace.max_packet_events`, or a low estimate in Python's `check_resources`) whose
//! log outgrew memory ended in the kernel's OOM killer or in Rust's abort on a failed
//! allocation: no message, nothing kept.

/// The log takes at most 1/`LOG_SHARE` of the memory available to it (what it holds plus what
/// the machine has available).
///
/// Why a sixth: the log is not the last copy of the events. Measured on the GEO drop-tail
/// dumbbell with 3 million events (docs/traces.md, "Bounds"), Python's packet table
/// (`RunResult.packets`) peaks at about 300 bytes an event while it is built (the columns copied
/// into Python bytes, then into the DataFrame) and its Parquet export at about 33 more, beside
/// the log's 64. Log and table together thus take about six times the log at their peak; a
/// third, the figure first proposed (from "the table is about as many bytes again"), would let
/// a run finish only to be killed while its table is built.
pub const LOG_SHARE: u64 = 6;

/// Memory at one growth of the log, in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Memory {
    /// What the process can still take without swapping: Linux's `MemAvailable`, which does
    /// not count what the log already holds.
    pub available: u64,
    /// The machine's memory (`MemTotal`), for the warning.
    pub total: u64,
}

/// Where the log reads its [`Memory`]: the one place tests replace.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum MemorySource {
    /// The machine's, read from `/proc/meminfo` at each growth (so that memory other processes
    /// took meanwhile, as other runs of a sweep, counts). Where it cannot be read (not Linux),
    /// none: the log is bounded by `trace.max_packet_events` and the allocator alone.
    #[default]
    System,
    /// As if this many bytes were available when the log started, and none were taken since
    /// but by the log itself (tests; `sattcp._core.Simulation(packet_log_memory=...)`).
    Fixed(u64),
}

impl MemorySource {
    /// The memory available beside the `held` bytes the log holds, if known.
    pub fn read(self, held: u64) -> Option<Memory> {
        match self {
            MemorySource::System => std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| meminfo(&text)),
            MemorySource::Fixed(bytes) => Some(Memory { available: bytes.saturating_sub(held), total: bytes }),
        }
    }
}

/// `MemAvailable` and `MemTotal` of a `/proc/meminfo` text (proc(5): "MemTotal:  24684084 kB").
fn meminfo(text: &str) -> Option<Memory> {
    let field = |name: &str| {
        let line = text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?;
        let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    };
    Some(Memory { available: field("MemAvailable")?, total: field("MemTotal")? })
}

/// A size as the warnings write it: "256.0 KiB", "1.50 GiB".
pub fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_gives_available_and_total_in_bytes() {
        let text = "MemTotal:       24684084 kB\nMemFree:        20933624 kB\nMemAvailable:   23019872 kB\nBuffers:           17276 kB\n";
        assert_eq!(meminfo(text), Some(Memory { available: 23019872 * 1024, total: 24684084 * 1024 }));
        // Kernels before 3.14 have no MemAvailable: no figure, as where nothing can be read.
        assert_eq!(meminfo("MemTotal:       24684084 kB\nMemFree:        20933624 kB\n"), None);
        assert_eq!(meminfo("MemAvailable: lots\nMemTotal: 1 kB\n"), None);
        // MemAvailableX is not MemAvailable.
        assert_eq!(meminfo("MemAvailableX: 1 kB\nMemTotal: 1 kB\n"), None);
    }

    #[test]
    fn the_machines_figure_where_linux_gives_one() {
        if let Ok(text) = std::fs::read_to_string("/proc/meminfo") {
            let m = MemorySource::System.read(0).expect("a Linux /proc/meminfo has MemAvailable");
            assert!(m.available > 0 && m.available <= m.total, "{m:?} from {text}");
        }
    }

    #[test]
    fn a_fixed_figure_counts_what_the_log_holds_as_taken() {
        assert_eq!(MemorySource::Fixed(3000).read(1000), Some(Memory { available: 2000, total: 3000 }));
        assert_eq!(MemorySource::Fixed(3000).read(5000), Some(Memory { available: 0, total: 3000 }));
    }

    #[test]
    fn sizes() {
        assert_eq!(size(1000), "1000 B");
        assert_eq!(size(256 * 1024), "256.0 KiB");
        assert_eq!(size(1536 * 1024), "1.5 MiB");
        assert_eq!(size(3 << 29), "1.50 GiB");
    }
}
