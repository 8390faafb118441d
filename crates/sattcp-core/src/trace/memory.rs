//! How much memory the packet log may still grow into (docs/traces.md, "Bounds").
//!
//! The log ([`super::PacketLog`]) is kept in memory and grows by doubling. Before each doubling
//! (never per event) it reads the memory available here, and when the doubled log would take
//! more than its share ([`LOG_SHARE`]) it stops recording, as it does at
//! `trace.max_packet_events`, and the run says why in its warnings. Without this, a forced run
//! (or a high `trace.max_packet_events`, or a low estimate in Python's `check_resources`) whose
//! log outgrew memory ended in the kernel's OOM killer or in Rust's abort on a failed
//! allocation: no message, nothing kept.

use std::path::Path;

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
    /// What the process can still take without swapping or being killed: Linux's
    /// `MemAvailable`, or less where a cgroup's limit leaves less (not counting what the log
    /// already holds).
    pub available: u64,
    /// The machine's memory (`MemTotal`), or the cgroup's limit where that is lower: for the
    /// warning.
    pub total: u64,
    /// Whether `total` is a cgroup's limit (a container's, a batch job's).
    pub cgroup: bool,
}

impl Memory {
    /// The machine's `MemAvailable` and `MemTotal`, bounded by the tightest cgroup limit if any.
    fn bounded(machine: Option<(u64, u64)>, cgroup: Option<CgroupLimit>) -> Option<Memory> {
        match (machine, cgroup) {
            (Some((available, total)), None) => Some(Memory { available, total, cgroup: false }),
            (None, Some(c)) => Some(Memory { available: c.headroom, total: c.limit, cgroup: true }),
            (Some((available, total)), Some(c)) => {
                Some(Memory { available: available.min(c.headroom), total: total.min(c.limit), cgroup: c.limit < total })
            }
            (None, None) => None,
        }
    }

    /// "1.8 MiB of 2.0 MiB", or "... of its cgroup's limit, 2.0 MiB": for warnings.
    pub fn describe(&self) -> String {
        if self.cgroup {
            format!("{} of its cgroup's limit, {}", size(self.available), size(self.total))
        } else {
            format!("{} of {}", size(self.available), size(self.total))
        }
    }
}

/// Where the log reads its [`Memory`]: the one place tests replace.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum MemorySource {
    /// The machine's, read from `/proc/meminfo` at each growth (so that memory other processes
    /// took meanwhile, as other runs of a sweep, counts), and the limits of the cgroups the
    /// process is in ([`cgroup_limit`]), so that a container or a batch job (Slurm, Kubernetes)
    /// with less memory than the machine is not killed by its limit. Where neither can be read
    /// (not Linux), none: the log is bounded by `trace.max_packet_events` and the allocator
    /// alone.
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
            MemorySource::System => {
                let machine = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| meminfo(&text));
                Memory::bounded(machine, cgroup_limit())
            }
            MemorySource::Fixed(bytes) => Some(Memory { available: bytes.saturating_sub(held), total: bytes, cgroup: false }),
        }
    }
}

/// `MemAvailable` and `MemTotal` of a `/proc/meminfo` text (proc(5): "MemTotal:  24684084 kB").
fn meminfo(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        let line = text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?;
        let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    };
    Some((field("MemAvailable")?, field("MemTotal")?))
}

/// The tightest memory limit of the cgroups a process is in, in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CgroupLimit {
    /// The lowest limit of the process's cgroup and its ancestors.
    pub limit: u64,
    /// The least room left under any of those limits: limit less the cgroup's working set
    /// (its usage less the inactive file cache, which the kernel reclaims before it kills: the
    /// working set that Kubernetes and `docker stats` report).
    pub headroom: u64,
}

/// The memory limits of this process's cgroups (v2 `memory.max`, v1 `memory.limit_in_bytes`),
/// its own and its ancestors', read from `/proc/self/cgroup`, `/proc/self/mountinfo` and the
/// cgroup files; none where no limit is set or nothing can be read.
///
/// Hand-written (about 60 lines) rather than a crate's: `sysinfo`'s `cgroup_limits` reads only
/// the files at the cgroup mount's root, which is the process's own cgroup inside a container
/// but not in a batch job on a host, where the job's cgroup is a directory below it (as here:
/// `/proc/self/cgroup` names `/process_api/...` under the v1 memory mount).
pub fn cgroup_limit() -> Option<CgroupLimit> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    cgroup_limit_in(&cgroups, &mounts, &|p: &Path| std::fs::read_to_string(p).ok())
}

/// [`cgroup_limit`] from the texts of `/proc/self/cgroup` and `/proc/self/mountinfo`, reading
/// cgroup files with `read` (tests give their own).
fn cgroup_limit_in(cgroups: &str, mountinfo: &str, read: &dyn Fn(&Path) -> Option<String>) -> Option<CgroupLimit> {
    let mut tightest: Option<CgroupLimit> = None;
    for line in cgroups.lines() {
        // "hierarchy-ID:controller-list:cgroup-path" (cgroups(7)): v2 is "0::/path".
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let v2 = id == "0" && controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "memory") {
            continue;
        }
        let Some((root, mount)) = cgroup_mount(mountinfo, v2) else { continue };
        let (limit_file, usage_file, inactive) =
            if v2 { ("memory.max", "memory.current", "inactive_file") } else { ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file") };
        // The process's cgroup as a directory under the mount (the mount's root may be a
        // cgroup below the hierarchy's root, as in a container without a cgroup namespace).
        let mut dir = match path.strip_prefix(root) {
            Some(rel) => mount.join(rel.trim_start_matches('/')),
            None => mount.to_path_buf(),
        };
        loop {
            let limit = read(&dir.join(limit_file)).and_then(|t| limit_bytes(&t));
            let usage = read(&dir.join(usage_file)).and_then(|t| t.trim().parse::<u64>().ok());
            if let (Some(limit), Some(usage)) = (limit, usage) {
                let cache = read(&dir.join("memory.stat")).and_then(|t| stat_field(&t, inactive)).unwrap_or(0);
                let headroom = limit.saturating_sub(usage.saturating_sub(cache));
                tightest = Some(match tightest {
                    None => CgroupLimit { limit, headroom },
                    Some(t) => CgroupLimit { limit: t.limit.min(limit), headroom: t.headroom.min(headroom) },
                });
            }
            if dir == mount || !dir.pop() || !dir.starts_with(mount) {
                break;
            }
        }
    }
    tightest
}

/// The root and mount point of the cgroup v2 hierarchy (`v2`) or of the v1 hierarchy with the
/// memory controller, from `/proc/self/mountinfo` (proc(5): "36 35 98:0 /root /mountpoint
/// options ... - fstype source super-options").
fn cgroup_mount(mountinfo: &str, v2: bool) -> Option<(&str, &Path)> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let mut after = after.split(' ');
        let (fstype, _source, options) = (after.next()?, after.next()?, after.next().unwrap_or(""));
        let ours = if v2 { fstype == "cgroup2" } else { fstype == "cgroup" && options.split(',').any(|o| o == "memory") };
        (ours && fields.len() >= 5).then(|| (fields[3], Path::new(fields[4])))
    })
}

/// A limit file's value: none for "max" (v2) or v1's "unlimited", the largest page-aligned
/// 64-bit number (9223372036854771712).
fn limit_bytes(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok().filter(|&b| b < 1 << 62)
}

/// The value of `name` in a `memory.stat` text ("inactive_file 41447424").
fn stat_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
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
        assert_eq!(meminfo(text), Some((23019872 * 1024, 24684084 * 1024)));
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
        assert_eq!(MemorySource::Fixed(3000).read(1000), Some(Memory { available: 2000, total: 3000, cgroup: false }));
        assert_eq!(MemorySource::Fixed(3000).read(5000), Some(Memory { available: 0, total: 3000, cgroup: false }));
    }

    /// A cgroup file system as a map from path to text.
    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: std::collections::HashMap<std::path::PathBuf, String> = entries.iter().map(|&(p, t)| (Path::new(p).to_path_buf(), t.to_string())).collect();
        move |p: &Path| map.get(p).cloned()
    }

    // This project's machine: cgroup v1 with the memory controller, and a v2 hierarchy beside
    // it without controllers (a "hybrid" layout); the process in a cgroup below the root.
    const HYBRID_CGROUP: &str = "9:name=systemd:/\n4:memory:/jobs/job7\n1:cpu:/\n0::/\n";
    const HYBRID_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    #[test]
    fn a_v1_limit_on_the_process_or_an_ancestor_bounds_it() {
        let unlimited = "9223372036854771712\n";
        // The job's own cgroup is limited to 1 GiB, 300 MiB used of which 100 MiB inactive cache.
        let read = files(&[
            ("/sys/fs/cgroup/memory/jobs/job7/memory.limit_in_bytes", "1073741824\n"),
            ("/sys/fs/cgroup/memory/jobs/job7/memory.usage_in_bytes", "314572800\n"),
            ("/sys/fs/cgroup/memory/jobs/job7/memory.stat", "cache 1\ninactive_file 5\ntotal_inactive_file 104857600\n"),
            ("/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes", unlimited),
            ("/sys/fs/cgroup/memory/jobs/memory.usage_in_bytes", "400000000\n"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", unlimited),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "900000000\n"),
        ]);
        assert_eq!(cgroup_limit_in(HYBRID_CGROUP, HYBRID_MOUNTS, &read), Some(CgroupLimit { limit: 1 << 30, headroom: (1 << 30) - (200 << 20) }));
        // The parent's lower limit, with less room left, binds instead.
        let read = files(&[
            ("/sys/fs/cgroup/memory/jobs/job7/memory.limit_in_bytes", "1073741824\n"),
            ("/sys/fs/cgroup/memory/jobs/job7/memory.usage_in_bytes", "314572800\n"),
            ("/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes", "524288000\n"),
            ("/sys/fs/cgroup/memory/jobs/memory.usage_in_bytes", "400000000\n"),
        ]);
        assert_eq!(cgroup_limit_in(HYBRID_CGROUP, HYBRID_MOUNTS, &read), Some(CgroupLimit { limit: 524288000, headroom: 124288000 }));
        // No limit anywhere: none.
        let read = files(&[
            ("/sys/fs/cgroup/memory/jobs/job7/memory.limit_in_bytes", unlimited),
            ("/sys/fs/cgroup/memory/jobs/job7/memory.usage_in_bytes", "314572800\n"),
        ]);
        assert_eq!(cgroup_limit_in(HYBRID_CGROUP, HYBRID_MOUNTS, &read), None);
    }

    #[test]
    fn a_v2_limit_is_read_below_the_mounts_root() {
        // A container: the v2 mount's root is the container's cgroup, which /proc/self/cgroup
        // names by its full path (no cgroup namespace).
        let cgroups = "0::/kubepods/pod1/c2\n";
        let mounts = "25 30 0:22 /kubepods/pod1 /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let read = files(&[
            ("/sys/fs/cgroup/c2/memory.max", "2147483648\n"),
            ("/sys/fs/cgroup/c2/memory.current", "1073741824\n"),
            ("/sys/fs/cgroup/c2/memory.stat", "anon 1\ninactive_file 73741824\n"),
            ("/sys/fs/cgroup/memory.max", "max\n"),
            ("/sys/fs/cgroup/memory.current", "2000000000\n"),
            // Above the mount: not read.
            ("/sys/fs/memory.max", "1\n"),
            ("/sys/fs/memory.current", "1\n"),
        ]);
        assert_eq!(cgroup_limit_in(cgroups, mounts, &read), Some(CgroupLimit { limit: 2 << 30, headroom: (2 << 30) - 1_000_000_000 }));
        // With a cgroup namespace the process sees itself at the root: the mount's own files.
        let read = files(&[("/sys/fs/cgroup/memory.max", "536870912\n"), ("/sys/fs/cgroup/memory.current", "600000000\n")]);
        assert_eq!(cgroup_limit_in("0::/\n", "25 30 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", &read), Some(CgroupLimit { limit: 512 << 20, headroom: 0 }));
        // No cgroup file system mounted, or no files: none.
        assert_eq!(cgroup_limit_in(cgroups, "", &read), None);
        assert_eq!(cgroup_limit_in(cgroups, mounts, &files(&[])), None);
    }

    #[test]
    fn a_cgroup_limit_below_the_machines_memory_bounds_it_and_is_named() {
        let gib = 1u64 << 30;
        let job = CgroupLimit { limit: 4 * gib, headroom: 3 * gib };
        assert_eq!(Memory::bounded(Some((20 * gib, 24 * gib)), Some(job)), Some(Memory { available: 3 * gib, total: 4 * gib, cgroup: true }));
        assert_eq!(Memory::bounded(Some((20 * gib, 24 * gib)), Some(job)).unwrap().describe(), "3.00 GiB of its cgroup's limit, 4.00 GiB");
        // A limit above the machine's memory: the machine's figures, and said as such.
        let loose = CgroupLimit { limit: 64 * gib, headroom: 60 * gib };
        assert_eq!(Memory::bounded(Some((2 * gib, 24 * gib)), Some(loose)), Some(Memory { available: 2 * gib, total: 24 * gib, cgroup: false }));
        assert_eq!(Memory::bounded(Some((2 * gib, 24 * gib)), Some(loose)).unwrap().describe(), "2.00 GiB of 24.00 GiB");
        assert_eq!(Memory::bounded(None, Some(job)), Some(Memory { available: 3 * gib, total: 4 * gib, cgroup: true }));
        assert_eq!(Memory::bounded(None, None), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(size(1000), "1000 B");
        assert_eq!(size(256 * 1024), "256.0 KiB");
        assert_eq!(size(1536 * 1024), "1.5 MiB");
        assert_eq!(size(3 << 29), "1.50 GiB");
    }
}
