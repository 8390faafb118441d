//! The memory floor of a packet-level simulation with many flows (issue 15): what touching a
//! flow's state costs per packet on this machine as the flows' state outgrows the caches,
//! measured without any simulator around it. Prints figures; not a test.
//!
//!     cargo run --release -p sattcp-core --example memfloor -- [--flows 10,100,1000,10000,100000]
//!         [--lines 1,2,4,8,16,32] [--in-flight 45] [--packets 4000000] [--ahead 16]
//!
//! The loop stands for a bottleneck that delivers packets in the order they were sent, the
//! flows interleaved at random: a ring of 64-byte packets of `flows x in-flight` slots (45 per
//! flow: the scaling dumbbell's bandwidth-delay product plus its half-BDP buffer at 450 kbps
//! per flow and a 550 ms round trip, in 1,064-byte packets) is the packets in flight. Per
//! packet the loop reads the slot at the ring's tail (the packet delivered now: sent one ring
//! ago, so streamed), then reads and writes one word in each of `lines` 64-byte lines of the
//! state of the flow the packet names (the least any simulator must do: a sender's or a
//! receiver's line per packet, more with a realistic state), then writes into the same slot the
//! packet the flow sends in reply, to a flow drawn at random. Two variants: "no prefetch", as
//! a simple event loop does it (the core overlaps what its out-of-order window reaches), and
//! "prefetch ahead", which reads the packet `--ahead` slots further on and prefetches its flow's lines,
//! as a loop that knows its next events can (the order is known exactly here, which a
//! simulator's queue only partly offers).
//!
//! Prints CPU ns per packet for each flow count and line count, and per flow count the cost of
//! one more line (the slope from the fewest to the most lines): how much a simulator's cost
//! per packet must grow with the flows for each per-flow line its packets touch
//! (bench/README.md, "The memory floor").

use std::hint::black_box;

use sattcp_core::engine::prefetch;

#[path = "common/floor.rs"]
mod floor;
use floor::{cpu_now, Rng};

/// One cache line of flow state, or one packet (its first word names its flow).
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// CPU ns per packet of the loop described in the module comment.
fn floor(flows: usize, lines: usize, in_flight: usize, packets: u64, ahead: usize) -> f64 {
    let mut state = vec![Line::default(); flows * lines];
    let slots = (flows * in_flight).max(64);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut ring: Vec<Line> = (0..slots).map(|_| Line([rng.below(flows as u64), 0, 0, 0, 0, 0, 0, 0])).collect();
    // Places ahead within one lap of the ring (0: no prefetching).
    let ahead = ahead % slots;
    // One lap untimed first: pages touched and caches in their steady state.
    let laps = |ring: &mut Vec<Line>, state: &mut Vec<Line>, rng: &mut Rng, n: u64| {
        let mut t = 0usize;
        for _ in 0..n {
            if ahead > 0 {
                let mut a = t + ahead;
                if a >= slots {
                    a -= slots;
                }
                let g = ring[a].0[0] as usize * lines;
                for k in 0..lines {
                    prefetch(&state[g + k]);
                }
            }
            let f = ring[t].0[0] as usize * lines;
            for k in 0..lines {
                state[f + k].0[0] += 1;
            }
            ring[t].0[0] = rng.below(flows as u64);
            t += 1;
            if t == slots {
                t = 0;
            }
        }
    };
    laps(&mut ring, &mut state, &mut rng, slots as u64);
    let c0 = cpu_now();
    laps(&mut ring, &mut state, &mut rng, packets);
    let dt = cpu_now() - c0;
    black_box((&ring, &state));
    dt * 1e9 / packets as f64
}

/// A comma-separated list of counts, or a clear error (exit 2) naming the option.
fn list(v: Option<String>, what: &str) -> Vec<usize> {
    let bad = |why: String| -> ! {
        eprintln!("memfloor: {what}: {why} (expected counts such as 1,2,4)");
        std::process::exit(2)
    };
    let v = v.unwrap_or_else(|| bad("missing value".into()));
    let out: Vec<usize> = v.split(',').map(|x| x.trim().parse().unwrap_or_else(|_| bad(format!("{x:?} is not a count")))).collect();
    if out.is_empty() || out.iter().any(|&n| n == 0 && what != "--ahead") {
        bad(format!("{v:?} has a zero"));
    }
    out
}

/// One count, or a clear error (exit 2) naming the option.
fn one(v: Option<String>, what: &str) -> usize {
    match list(v, what)[..] {
        [n] => n,
        _ => {
            eprintln!("memfloor: {what} takes one count");
            std::process::exit(2)
        }
    }
}

fn main() {
    let mut flows = vec![10, 100, 1000, 10_000, 100_000];
    let mut lines = vec![1, 2, 4, 8, 16, 32];
    let (mut in_flight, mut packets, mut ahead) = (45usize, 4_000_000u64, 16usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--flows" => flows = list(args.next(), "--flows"),
            "--lines" => lines = list(args.next(), "--lines"),
            "--in-flight" => in_flight = one(args.next(), "--in-flight"),
            "--packets" => packets = one(args.next(), "--packets") as u64,
            "--ahead" => ahead = one(args.next(), "--ahead"),
            _ => {
                eprintln!("memfloor: unknown argument {a:?} (options: --flows, --lines, --in-flight, --packets, --ahead)");
                std::process::exit(2)
            }
        }
    }
    lines.sort_unstable();
    println!("memory floor: CPU ns per packet for L per-flow lines touched per packet; {in_flight} packets in flight per flow; {packets} packets");
    for (name, ahead) in [("no prefetch", 0), ("prefetch ahead", ahead)] {
        println!();
        print!("{name:<16}{:>8}", "flows");
        for l in &lines {
            print!(" {:>8}", format!("L={l}"));
        }
        println!(" {:>12}", "ns per line");
        for &n in &flows {
            print!("{:<16}{n:>8}", "");
            let ns: Vec<f64> = lines.iter().map(|&l| floor(n, l, in_flight, packets, ahead)).collect();
            for x in &ns {
                print!(" {x:>8.1}");
            }
            // The marginal cost of a line: the slope between the fewest and the most lines.
            let (l0, l1) = (lines[0] as f64, lines[lines.len() - 1] as f64);
            let slope = if l1 > l0 { format!("{:.2}", (ns[ns.len() - 1] - ns[0]) / (l1 - l0)) } else { "-".into() };
            println!(" {slope:>12}");
        }
    }
}
