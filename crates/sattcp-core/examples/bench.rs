//! Measures the simulator on whole scenarios and prints figures (not a timed test).
//!
//!     cargo run --release -p sattcp-core --example bench -- [SCENARIO.toml ...] [--repeat N] [--set k=v ...]
//!     cargo run --release -p sattcp-core --example bench -- --kv SCENARIO.toml [--set k=v ...]
//!     cargo run --release -p sattcp-core --example bench -- --scale [--flows 10,100,1000,10000,100000] [--duration 5s] [--repeat N] [--no-pending] [--set k=v ...]
//!
//! `--set` applies to the named scenarios, else to every standing case or every N of `--scale`
//! (`--set run.chain_hops=true`: hop chaining, issue 15).
//!
//! For each case: wall time and CPU time (best of N), events, events per CPU second, events per
//! bottleneck packet, CPU ns per bottleneck packet, peak heap memory of the run, and the ratio
//! of the run's CPU time per event to an event-loop floor measured in the same process: a bare
//! `BinaryHeap` of `(u64 time, u64 seq)` entries holding as many pending entries as the case
//! holds on average, popped and pushed once per event (`floor_ns_per_op`).
//!
//! Without scenario arguments it runs the standing benchmarks, 100 s simulated each: the
//! 100-flow GEO drop-tail dumbbell (MSS 9180 and 1024), the 100-flow GEO ATM dumbbell with
//! bulk sources (a saturated T3: about 106,000 cells per simulated second), and the seeds'
//! 100-pair GEO WWW study scenario.
//!
//! `--scale` runs the drop-tail GEO dumbbell (`geo-dumbbell-droptail.toml`) with N flows, the
//! bottleneck scaled to 450 kbps per flow (45 Mbps at N = 100), MSS 1024, the flows' starts
//! spread over 1 s (stagger 1 s / N), `--duration` simulated (default 5 s, so that 100,000
//! flows at 45 Gbps fit in a minute or two of CPU), and prints the cost per bottleneck packet
//! and its ratio to the smallest N, the kernel's part of that cost (runs of a second of CPU or
//! more: the kernel samples the split at its ticks) and the minor page faults per 1,000
//! bottleneck packets (the first touch of fresh memory: see bench/README.md, "The kernel's
//! share"), allocations per bottleneck packet while the events run, and the peak heap
//! bytes per flow for each N. `--no-pending` skips the pending-event count
//! and the floor (a second run with a packet tap: minutes at 100,000 flows).
//!
//! `--kv` runs each scenario once and prints `key=value` figures (wall time, events, bottleneck
//! packets, delivered bytes) for scripts such as `bench/peers`.
//!
//! Pending events: the engine does not expose its queue length, so the bench counts the
//! pending events a run would hold from outside, in a separate untimed run with a packet tap,
//! sampled about 2,000 times (at most every 1,000 events): one event per hop with packets in flight (only the head of
//! each link is in the queue), one per TCP sender or receiver with a deadline (`poll_at`).
//! Stale timer events (a deadline moved earlier) are not counted, so the figure is a lower
//! bound; the floor's cost grows with the log of it, so the error is small.
//!
//! Memory: a counting global allocator (this binary only) records the peak of live heap bytes
//! during each case (simulation built, run and finished), less the bytes live before it, and
//! counts the allocations (alloc and realloc calls) made while the events run.

use sattcp_core::net::packet::{Packet, Segment};
use sattcp_core::net::tap::{PacketEvent, PacketTap};
use sattcp_core::scenario::{load, parse_override_value, Scenario};
use sattcp_core::{SimTime, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Counts live heap bytes and their peak (bench binary only).
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations (alloc and growing realloc calls) since the start, for allocations per packet.
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        ALLOCS.fetch_add(1, Relaxed);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        ALLOCS.fetch_add(1, Relaxed);
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Relaxed) + (new - l.size());
                PEAK.fetch_max(now, Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[path = "common/floor.rs"]
mod floor;
use floor::{cpu_now, Rng};

#[repr(C)]
struct Timeval {
    sec: i64,
    usec: i64,
}
/// Linux x86-64 `struct rusage` (<sys/resource.h>): two times, then 14 longs.
#[repr(C)]
struct Rusage {
    utime: Timeval,
    stime: Timeval,
    rest: [i64; 14],
}
extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}
/// Linux's RUSAGE_THREAD.
const RUSAGE_THREAD: i32 = 1;
/// `ru_minflt`'s place in `Rusage::rest` (after maxrss, ixrss, idrss, isrss).
const MINFLT: usize = 4;

/// This thread's kernel CPU time (seconds) and minor page faults so far: with the CPU time,
/// the share the kernel spends giving the run fresh memory (each first touch of a page is a
/// fault and a page cleared; bench/README.md, "The kernel's share"). Declared by hand as
/// `cpu_now` is, rather than adding the `libc` crate for one call.
fn kernel_now() -> (f64, u64) {
    let mut r = Rusage { utime: Timeval { sec: 0, usec: 0 }, stime: Timeval { sec: 0, usec: 0 }, rest: [0; 14] };
    // SAFETY: a valid pointer to an rusage-shaped struct; the call only writes it.
    let rc = unsafe { getrusage(RUSAGE_THREAD, &mut r) };
    assert_eq!(rc, 0, "getrusage");
    (r.stime.sec as f64 + r.stime.usec as f64 * 1e-6, r.rest[MINFLT] as u64)
}

const USAGE: &str = "usage: bench [SCENARIO.toml ...] [--repeat N] [--no-pending] [--set k=v ...]
       bench --kv SCENARIO.toml ... [--set k=v ...]
       bench --scale [--flows 10,100,1000,10000,100000] [--duration 5s] [--repeat N] [--no-pending] [--set k=v ...]
       bench --host    (the machine and its load, the first line of every table; bench/peers prints it)
(cargo run --release -p sattcp-core --example bench -- ...; bench/README.md)";

/// A clear message and exit status 2 for bad arguments (no panic, no backtrace).
fn fail(msg: &str) -> ! {
    eprintln!("bench: {msg}\n{USAGE}");
    std::process::exit(2)
}

/// The value after option `opt`, or a clear error.
fn value(v: Option<String>, opt: &str, what: &str) -> String {
    v.unwrap_or_else(|| fail(&format!("{opt} needs a value ({opt} {what})")))
}

/// A count of at least one, or a clear error naming the option and the text.
fn count(v: &str, opt: &str) -> u64 {
    match v.parse::<u64>() {
        Ok(n) if n >= 1 => n,
        _ => fail(&format!("{opt}: {v:?} is not a whole number of at least 1")),
    }
}

/// Peak resident set of the process (VmHWM, kB), for the summary line.
fn vm_hwm_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// The machine, as `sattcp.worker.host_id()` names it (python/sattcp/worker.py: host name,
/// processor with its family and model, last-level cache, CPUs this process may use), and the
/// load average: figures from two days' runs compare only on the same kind of machine (issue
/// 15: this project's cloud machines came with 8 or 32 MiB of L3, 1.6-2.5x apart).
fn host_line() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let first = cpuinfo.split("\n\n").next().unwrap_or("");
    let field = |k: &str| {
        first.lines().find_map(|l| {
            let (key, v) = l.split_once(':')?;
            (key.trim() == k && !v.trim().is_empty()).then(|| v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
    };
    let mut parts = vec![match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(fam), Some(model)) => format!("{name} (family {fam} model {model})"),
        (Some(name), ..) => name,
        _ => std::env::consts::ARCH.to_string(),
    }];
    // The highest-level data or unified cache of CPU 0.
    let mut best: Option<(u32, String)> = None;
    for i in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok().map(|s| s.trim().to_string());
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else { continue };
        let Ok(level) = level.parse::<u32>() else { continue };
        if kind != "Instruction" && best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, size));
        }
    }
    if let Some((level, size)) = best {
        let kib = size.strip_suffix('K').and_then(|k| k.parse::<f64>().ok());
        parts.push(match kib {
            Some(k) if k >= 1024.0 => format!("L{level} {} MiB", k / 1024.0),
            Some(k) => format!("L{level} {k} KiB"),
            None => format!("L{level} {size}"),
        });
    }
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    parts.push(format!("{cpus} CPU{}", if cpus == 1 { "" } else { "s" }));
    let node = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default();
    let host = std::env::var("SATTCP_HOST_ID").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| {
        format!("{}: {}", if node.is_empty() { "unknown host" } else { &node }, parts.join(", "))
    });
    let load = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| s.split_whitespace().next().map(str::to_string));
    format!("host: {host}; load average {}", load.as_deref().unwrap_or("unknown"))
}

fn short(f: &str) -> String {
    std::path::Path::new(f).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| f.to_string())
}

/// Packets currently on each hop (queued or propagating), from the tap's events.
#[derive(Default)]
struct InFlight {
    at: HashMap<u64, u32>,
    per_hop: Vec<u32>,
    busy_hops: usize,
}

impl InFlight {
    fn leave(&mut self, uid: u64) {
        if let Some(h) = self.at.remove(&uid) {
            let c = &mut self.per_hop[h as usize];
            *c -= 1;
            if *c == 0 {
                self.busy_hops -= 1;
            }
        }
    }
}

struct Counter(Arc<Mutex<InFlight>>);

impl PacketTap for Counter {
    fn event(&mut self, _now: SimTime, ev: PacketEvent, p: &Packet, _seg: &Segment) {
        let mut s = self.0.lock().expect("tap lock");
        match ev {
            PacketEvent::Sent => {}
            PacketEvent::Queued { hop, .. } => {
                s.leave(p.uid);
                let h = hop as usize;
                if s.per_hop.len() <= h {
                    s.per_hop.resize(h + 1, 0);
                }
                s.per_hop[h] += 1;
                if s.per_hop[h] == 1 {
                    s.busy_hops += 1;
                }
                s.at.insert(p.uid, hop);
            }
            PacketEvent::Dropped { .. } | PacketEvent::Received => s.leave(p.uid),
        }
    }
}

/// Mean pending events over a run (see the module comment), from an untimed run with a tap.
/// `events`: the run's event count, to take about `SAMPLES` samples whatever its size.
fn mean_pending(sc: &Scenario, events: u64) -> f64 {
    const SAMPLES: u64 = 2000;
    let sample_every = (events / SAMPLES).max(1000);
    let state = Arc::new(Mutex::new(InFlight::default()));
    let mut sim = Simulation::new(sc);
    sim.set_tap(Box::new(Counter(state.clone())));
    let (mut sum, mut samples) = (0.0, 0u64);
    let mut n = 0u64;
    while sim.step() {
        n += 1;
        if n.is_multiple_of(sample_every) {
            let hops = state.lock().expect("tap lock").busy_hops;
            let timers = (0..sim.flow_count() as u32)
                .map(|f| sim.sender(f).poll_at().is_some() as usize + sim.receiver(f).poll_at().is_some() as usize)
                .sum::<usize>();
            sum += (hops + timers) as f64;
            samples += 1;
        }
    }
    if samples == 0 {
        1.0
    } else {
        (sum / samples as f64).max(1.0)
    }
}

/// The event-loop floor: CPU ns per pop + push on a bare binary heap of `(time, seq)` holding
/// `pending` entries, each popped entry rescheduled a pseudo-random 0-1 s later.
fn floor_ns_per_op(pending: usize, ops: u64) -> f64 {
    const SPREAD_NS: u64 = 1_000_000_000;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut heap = BinaryHeap::with_capacity(pending + 1);
    let mut seq = 0u64;
    for _ in 0..pending.max(1) {
        heap.push(Reverse((rng.next() % SPREAD_NS, seq)));
        seq += 1;
    }
    let c0 = cpu_now();
    for _ in 0..ops {
        let Reverse((t, _)) = heap.pop().expect("non-empty");
        heap.push(Reverse((t + rng.next() % SPREAD_NS, seq)));
        seq += 1;
    }
    let dt = cpu_now() - c0;
    black_box(&heap);
    dt * 1e9 / ops.max(1) as f64
}

struct Measured {
    wall: f64,
    /// CPU time of the same (best) run.
    cpu: f64,
    /// Of `cpu`, the kernel's time (page faults, mostly), and the minor page faults, same run.
    sys: f64,
    faults: u64,
    events: u64,
    bn_packets: u64,
    bn_cells: Option<u64>,
    peak_bytes: usize,
    /// None: not measured (`--no-pending`).
    pending: Option<f64>,
    floor_ns: Option<f64>,
    goodput_bps: f64,
    /// Heap allocations made while the events ran (build and result excluded), last run.
    run_allocs: usize,
    /// Entries the event queue moved (into a lower bucket or its sorted run) per event, last
    /// run (feature `queue-stats`; `None` without it).
    moves_per_event: Option<f64>,
}

fn measure(sc: &Scenario, repeat: usize, with_pending: bool) -> Measured {
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    let (mut sys, mut faults) = (0.0, 0);
    let mut last = None;
    let mut peak_bytes = 0;
    let mut run_allocs = 0;
    let mut moves = None;
    for _ in 0..repeat.max(1) {
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        let (t0, c0, k0) = (Instant::now(), cpu_now(), kernel_now());
        let mut sim = Simulation::new(sc);
        let a0 = ALLOCS.load(Relaxed);
        let m0 = queue_moves();
        sim.run();
        run_allocs = ALLOCS.load(Relaxed) - a0;
        moves = queue_moves().zip(m0).map(|(m1, m0)| m1 - m0);
        let r = sim.finish();
        best = best.min(t0.elapsed().as_secs_f64());
        let (cpu, k1) = (cpu_now() - c0, kernel_now());
        if cpu < best_cpu {
            (best_cpu, sys, faults) = (cpu, k1.0 - k0.0, k1.1 - k0.1);
        }
        peak_bytes = PEAK.load(Relaxed).saturating_sub(base);
        last = Some(r);
    }
    let r = last.expect("at least one run");
    let bn = r.links.iter().find(|l| l.link == "bottleneck" || l.link == "hop0").expect("a bottleneck");
    let (bn_packets, bn_cells) = (bn.packets, bn.cells);
    let goodput_bps = r.flows.iter().map(|f| f.throughput_bps).sum();
    let events = r.events;
    drop(r);
    let (pending, floor_ns) = if with_pending {
        let pending = mean_pending(sc, events);
        // A fixed number of pop + push operations: a stable mean whatever the case's size.
        const FLOOR_OPS: u64 = 4_000_000;
        (Some(pending), Some(floor_ns_per_op(pending.round() as usize, FLOOR_OPS)))
    } else {
        (None, None)
    };
    Measured { wall: best, cpu: best_cpu, sys, faults, events, bn_packets, bn_cells, peak_bytes, pending, floor_ns, goodput_bps, run_allocs, moves_per_event: moves.map(|m| m as f64 / events.max(1) as f64) }
}

impl Measured {
    /// `x` per bottleneck packet of the run.
    fn per_packet(&self, x: f64) -> f64 {
        x / self.bn_packets.max(1) as f64
    }
}

/// The event queue's moves so far (feature `queue-stats`).
fn queue_moves() -> Option<u64> {
    #[cfg(feature = "queue-stats")]
    return Some(sattcp_core::engine::queue::MOVES.load(Relaxed));
    #[cfg(not(feature = "queue-stats"))]
    None
}

fn header() {
    println!(
        "{:<28} {:>8} {:>8} {:>11} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6}",
        "case", "wall s", "cpu s", "events", "Mev/s", "ev/bnpkt", "ns/bnpkt", "cells/s", "peak MB", "alloc/pkt", "pending", "floor ns", "xfloor"
    );
}

fn row(name: &str, m: &Measured) {
    let ns_per_event = m.cpu * 1e9 / m.events.max(1) as f64;
    let cells = m.bn_cells.map(|c| format!("{:.1}M", c as f64 / m.cpu / 1e6)).unwrap_or_else(|| "-".into());
    let opt = |v: Option<f64>, prec: usize| v.map(|v| format!("{v:.prec$}")).unwrap_or_else(|| "-".into());
    println!(
        "{:<28} {:>8.3} {:>8.3} {:>11} {:>7.2} {:>8.2} {:>9.0} {:>9} {:>9.1} {:>9.4} {:>8} {:>8} {:>6}",
        name,
        m.wall,
        m.cpu,
        m.events,
        m.events as f64 / m.cpu / 1e6,
        m.per_packet(m.events as f64),
        m.per_packet(m.cpu * 1e9),
        cells,
        m.peak_bytes as f64 / 1e6,
        m.per_packet(m.run_allocs as f64),
        opt(m.pending, 0),
        opt(m.floor_ns, 1),
        opt(m.floor_ns.map(|f| ns_per_event / f), 1)
    );
    if let Some(mv) = m.moves_per_event {
        println!("{:<28} event-queue moves per event {mv:.2}", "");
    }
}

fn load_case(f: &str, sets: &[(String, toml::Value)]) -> Scenario {
    let text = std::fs::read_to_string(f).unwrap_or_else(|e| fail(&format!("{f}: {e}")));
    load(&text, sets, None).unwrap_or_else(|e| fail(&format!("{f}: {e}"))).0
}

fn main() {
    let mut files = Vec::new();
    let mut sets = Vec::new();
    let mut repeat = 3;
    let mut scale = false;
    let mut flows: Vec<u64> = vec![10, 100, 1000, 10_000, 100_000];
    let mut duration = "5s".to_string();
    let mut with_pending = true;
    let mut kv = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = count(&value(args.next(), "--repeat", "N"), "--repeat") as usize,
            "--set" => {
                let kv = value(args.next(), "--set", "k=v");
                let Some((k, v)) = kv.split_once('=') else { fail(&format!("--set {kv:?}: expected key=value")) };
                sets.push((k.to_string(), parse_override_value(v)));
            }
            "--scale" => scale = true,
            "--no-pending" => with_pending = false,
            "--kv" => kv = true,
            "--flows" => flows = value(args.next(), "--flows", "N,N,...").split(',').map(|v| count(v, "--flows")).collect(),
            "--duration" => duration = value(args.next(), "--duration", "5s"),
            "--host" => {
                println!("{}", host_line());
                return;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return;
            }
            _ if a.starts_with('-') => fail(&format!("unknown option {a:?}")),
            _ => files.push(a),
        }
    }
    if kv && files.is_empty() {
        fail("--kv needs at least one scenario file");
    }
    if scale && (kv || !files.is_empty()) {
        fail("--scale runs its own dumbbell: it takes no scenario files and no --kv");
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/");
    let ov = |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect::<Vec<_>>();
    if kv {
        // One untimed-floor run per case as `key=value` lines, for scripts (bench/peers):
        // wall_s from building the world to the results, run_s the event loop alone.
        for f in &files {
            let sc = load_case(f, &sets);
            let t0 = Instant::now();
            let mut sim = Simulation::new(&sc);
            let t1 = Instant::now();
            sim.run();
            let run = t1.elapsed().as_secs_f64();
            let r = sim.finish();
            let wall = t0.elapsed().as_secs_f64();
            let bn = r.links.iter().find(|l| l.link == "bottleneck" || l.link == "hop0").map(|l| l.packets).unwrap_or(0);
            let delivered: u64 = r.flows.iter().map(|f| f.delivered_bytes).sum();
            let (timeouts, fast): (u64, u64) = (r.flows.iter().map(|f| f.timeouts).sum(), r.flows.iter().map(|f| f.fast_retransmits).sum());
            println!("case={} wall_s={wall:.6} run_s={run:.6} events={} bn_packets={bn} delivered_bytes={delivered} flows={} timeouts={timeouts} fast_retransmits={fast} digest={}", short(f), r.events, r.flows.len(), r.digest);
        }
        return;
    }
    if scale {
        // Every N's scenario checked before the first run (a bad --set or --duration fails at once).
        let scenarios: Vec<(u64, Scenario)> = flows
            .iter()
            .map(|&n| {
                let rate = format!("\"{}kbps\"", 450 * n);
                let stagger = format!("\"{}ns\"", 1_000_000_000 / n.max(1));
                let pairs = n.to_string();
                let dur = format!("\"{duration}\"");
                let mut n_sets = ov(&[("topology.pairs", &pairs), ("links.bottleneck.rate", &rate), ("tcp.mss", "1024"), ("app.stagger", &stagger), ("run.duration", &dur)]);
                // `--set` applies to every N (e.g. run.chain_hops=true).
                n_sets.extend(sets.iter().cloned());
                (n, load_case(&format!("{root}geo-dumbbell-droptail.toml"), &n_sets))
            })
            .collect();
        println!("{}", host_line());
        println!(
            "scaling: geo-dumbbell-droptail.toml, 450 kbps of bottleneck per flow, MSS 1024, starts spread over 1 s, {duration} simulated, best of {repeat}"
        );
        header();
        // One unmeasured run of the smallest case first. The first run in a fresh process pays
        // for cold code and caches: at 10 flows (1,250 bottleneck packets in 5 s) that was
        // 4.6 us per packet against 0.66 us warm (`--repeat 1` against `--repeat 5`,
        // 2026-11-28), so under `--repeat 1` the base of the "vs smallest" ratios was a cold
        // start and every ratio read about 0.3x.
        if let Some((_, sc)) = scenarios.iter().min_by_key(|(n, _)| *n) {
            measure(sc, 1, false);
        }
        let mut rows = Vec::new();
        for (n, sc) in &scenarios {
            let m = measure(sc, repeat, with_pending);
            row(&format!("N = {n}"), &m);
            rows.push((*n, m));
        }
        println!();
        println!(
            "{:>8} {:>12} {:>12} {:>11} {:>12} {:>12} {:>12} {:>10} {:>14}",
            "flows", "cpu ns/bnpkt", "vs smallest", "of it, sys", "faults/kpkt", "floor ns/op", "alloc/bnpkt", "B/flow", "goodput/flow"
        );
        let base = rows.first().map(|(_, m)| m.per_packet(m.cpu * 1e9)).unwrap_or(1.0);
        for (n, m) in &rows {
            let c = m.per_packet(m.cpu * 1e9);
            println!(
                "{:>8} {:>12.0} {:>11.2}x {:>11} {:>12.1} {:>12} {:>12.4} {:>10.0} {:>10.0} kbps",
                n,
                c,
                c / base,
                // The kernel splits a thread's CPU time into user and system by sampling at its
                // ticks: too coarse for runs of less than a second of CPU.
                if m.cpu >= 1.0 { format!("{:.0}", m.per_packet(m.sys * 1e9)) } else { "-".into() },
                m.per_packet(m.faults as f64 * 1e3),
                m.floor_ns.map(|f| format!("{f:.1}")).unwrap_or_else(|| "-".into()),
                m.per_packet(m.run_allocs as f64),
                m.peak_bytes as f64 / *n as f64,
                m.goodput_bps / *n as f64 / 1e3
            );
        }
    } else {
        // (label, file, overrides)
        type Case = (String, String, Vec<(String, toml::Value)>);
        let mut cases: Vec<Case> = files.iter().map(|f| (short(f), f.clone(), sets.clone())).collect();
        if cases.is_empty() {
            cases = vec![
                ("droptail GEO, MSS 9180".into(), format!("{root}geo-dumbbell-droptail.toml"), vec![]),
                ("droptail GEO, MSS 1024".into(), format!("{root}geo-dumbbell-droptail.toml"), ov(&[("tcp.mss", "1024")])),
                ("ATM GEO bulk, EPD".into(), format!("{root}kota-geo.toml"), ov(&[("app.kind", "bulk"), ("switch.policy", "epd")])),
                ("ATM GEO WWW (kota-geo)".into(), format!("{root}kota-geo.toml"), vec![]),
            ];
            // `--set` applies to every standing case (e.g. run.chain_hops=true).
            for c in &mut cases {
                c.2.extend(sets.iter().cloned());
            }
        }
        let scenarios: Vec<(&String, Scenario)> = cases.iter().map(|(name, f, sets)| (name, load_case(f, sets))).collect();
        println!("{}", host_line());
        println!("best of {repeat}; rates and ns/bnpkt from CPU time; xfloor: CPU ns per event / floor CPU ns per heap pop+push");
        header();
        for (name, sc) in &scenarios {
            row(name, &measure(sc, repeat, with_pending));
        }
    }
    if let Some(kb) = vm_hwm_kb() {
        println!("process peak RSS (VmHWM): {:.1} MB", kb as f64 / 1e3);
    }
}
