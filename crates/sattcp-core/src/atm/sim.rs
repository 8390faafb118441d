//! Standalone cell-level checks of the ATM parts working together, without the event engine: a
//! greedy frame source on a 149.76 Mbps access link feeding one switch output port on a 45 Mbps
//! bottleneck, cells reassembled after the bottleneck. Also a throughput microbenchmark of
//! `AtmPort` (an `#[ignore]` test that prints its figure).

use super::aal5::{cells_for_tcp_payload, max_goodput_bps, CellClock};
use super::cell::Cell;
use super::port::{AtmPort, DropPolicy};
use super::reassembly::{Reassembled, Reassembler};
use crate::time::{Rate, SimTime};

/// SONET OC-3 payload rate available to cells on the access links (seed 001 §5: "155.52 Mbps
/// (149.76 Mbps after SONET overhead)").
const ACCESS: Rate = Rate(149_760_000);
/// The T3 bottleneck's cell rate (seed 000 §4.3).
const T3: Rate = Rate::mbps(45);

/// What one run measured.
#[derive(Debug)]
struct Run {
    frames_sent: u64,
    frames_delivered: u64,
    /// Bits of TCP payload delivered per second, from the start of the first cell on the
    /// bottleneck to the end of its last cell.
    goodput_bps: f64,
    port_peak: u32,
}

/// One VC sends frames of `mss` payload bytes back to back on the access link for `duration`;
/// the port (capacity `k`, `policy`) feeds the bottleneck; frames are counted as delivered when
/// reassembled intact.
fn greedy_source(mss: u64, k: u32, policy: DropPolicy, duration: SimTime) -> Run {
    let n = cells_for_tcp_payload(mss) as u32;
    let mut port = AtmPort::new(k, policy).unwrap();
    let mut rx = Reassembler::new();
    let mut access = CellClock::new(ACCESS);
    let mut bottleneck = CellClock::new(T3);
    let mut in_tx: Option<Cell> = None;
    let (mut frame, mut index) = (0u64, 0u32);
    let mut next_arrival = access.send(SimTime::ZERO);
    let (mut first_start, mut last_eof) = (None, SimTime::ZERO);
    let mut delivered = 0u64;

    // The source stops at a frame boundary once `duration` has passed.
    let mut sending = true;
    while sending || in_tx.is_some() {
        // Departures complete before arrivals at the same instant.
        if let Some(cell) = in_tx.filter(|_| !sending || bottleneck.busy_until() <= next_arrival) {
            let now = bottleneck.busy_until();
            if let Reassembled::Frame { .. } = rx.receive(cell) {
                delivered += 1;
                last_eof = now;
            }
            in_tx = port.depart(now);
            if in_tx.is_some() {
                bottleneck.send(now);
            }
            continue;
        }
        let now = next_arrival;
        let _ = port.arrive(now, Cell::of_frame(0, frame, index, n));
        index += 1;
        if index == n {
            (frame, index) = (frame + 1, 0);
        }
        next_arrival = access.send(now);
        sending = index != 0 || next_arrival < duration;
        if in_tx.is_none() {
            in_tx = port.depart(now);
            first_start.get_or_insert(now);
            bottleneck.send(now);
        }
    }
    // Until the bottleneck has sent its last cell (for EPD, the last delivered EOF).
    let span = bottleneck.busy_until().max(last_eof) - first_start.unwrap();
    Run {
        frames_sent: frame,
        frames_delivered: delivered,
        goodput_bps: (delivered * mss * 8) as f64 / span.as_secs_f64(),
        port_peak: port.stats().peak_occupancy,
    }
}

#[track_caller]
fn assert_goodput_is_c(mss: u64) {
    // EPD with R = 0.8: one VC never starts a frame it cannot finish (0.8 K + 193 < K), and the
    // bottleneck never idles, so every cell it sends belongs to a delivered frame.
    let run = greedy_source(mss, 2000, DropPolicy::EPD_SEED, SimTime::from_secs(1));
    let c = max_goodput_bps(T3, mss);
    eprintln!("MSS {mss}: goodput {:.4} Mbps, C {:.4} Mbps, {run:?}", run.goodput_bps / 1e6, c / 1e6);
    assert!((run.goodput_bps / c - 1.0).abs() < 1e-4, "goodput {} vs C {}", run.goodput_bps, c);
    assert!(run.frames_delivered < run.frames_sent, "the source must overload the port");
    assert!(run.port_peak <= 2000);
}

#[test]
fn greedy_frames_through_epd_reach_c_for_mss_9180() {
    assert_goodput_is_c(9180);
}

#[test]
fn greedy_frames_through_epd_reach_c_for_mss_1024() {
    assert_goodput_is_c(1024);
}

#[test]
fn frame_blind_drops_waste_the_bottleneck() {
    // The same overload without EPD: the buffer stays full, so nearly every frame loses cells
    // (PPD cuts it after its head, plain UBR anywhere) and the bottleneck carries cells of frames
    // that the receiver then discards.
    let c = max_goodput_bps(T3, 1024);
    let g = |policy| greedy_source(1024, 2000, policy, SimTime::from_millis(300)).goodput_bps / c;
    let (epd, ppd, ubr) = (g(DropPolicy::EPD_SEED), g(DropPolicy::Ppd), g(DropPolicy::TailDrop));
    eprintln!("goodput / C with one overloading VC: EPD {epd:.4}, PPD {ppd:.4}, UBR {ubr:.4}");
    assert!(epd > 0.999);
    // One VC overloading the port keeps the buffer full: almost every frame is cut.
    assert!(ppd < 0.5 && ubr < 0.5, "EPD {epd}, PPD {ppd}, UBR {ubr}");
}

/// Cells per second through `arrive` + `depart`: 100 VCs of 193-cell frames interleaved, a
/// Selective Drop port of 58380 cells kept near its threshold. Run with
/// `cargo test -p sattcp-core --release atm::sim::port_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn port_throughput() {
    let mut port = AtmPort::new(58_380, DropPolicy::SD_SEED).unwrap();
    let n = 193u32;
    let mut index = [0u32; 100];
    let mut frame = [0u64; 100];
    let ops = 20_000_000u64;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let started = std::time::Instant::now();
    let mut accepted = 0u64;
    for t in 0..ops {
        // xorshift: a cheap deterministic choice of VC.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let vc = (x % 100) as usize;
        let now = SimTime(t * 9_423);
        let cell = Cell::of_frame(vc as u32, frame[vc], index[vc], n);
        index[vc] += 1;
        if index[vc] == n {
            index[vc] = 0;
            frame[vc] += 1;
        }
        accepted += port.arrive(now, cell).is_accepted() as u64;
        // Serve a little slower than arrivals (10 departures per 11 arrivals): overload.
        if t % 11 != 0 {
            let _ = port.depart(now);
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let s = port.stats();
    eprintln!(
        "AtmPort (SD, 100 VCs): {:.1} M arrivals/s ({} arrivals + {} departures in {secs:.3} s, {accepted} accepted, mean X {:.0})",
        ops as f64 / secs / 1e6,
        ops,
        s.departed,
        port.mean_occupancy(SimTime(ops * 9_423)),
    );
    assert_eq!(s.arrived, s.departed + s.dropped() + port.occupancy() as u64);
}

/// The ATM part of the GEO run alone: 100 VCs on 149.76 Mbps inputs offering MSS 9180 frames
/// (193 cells) at 1.1 times the T3 cell rate for 100 s simulated, through a `SwitchPort` with
/// Selective Drop and 0.5 RTT of buffer (29190 cells), driven lazily as the engine would
/// (wake-ups at offers and at `poll_at`), cells reassembled after the bottleneck. Prints wall
/// time and cells per second. Run with
/// `cargo test -p sattcp-core atm::sim::switch_port_geo_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn switch_port_geo_throughput() {
    use super::switch::SwitchPort;
    let n = cells_for_tcp_payload(9180) as u32;
    let mut sp = SwitchPort::new(AtmPort::new(29_190, DropPolicy::SD_SEED).unwrap(), T3);
    for _ in 0..100 {
        sp.add_input(ACCESS);
    }
    // Per VC a frame every 1 / (1.1 x 106132 / 193 / 100) s = 165.3 ms, with a fixed phase.
    let period = SimTime(165_300_000);
    let horizon = SimTime::from_secs(100);
    let mut offers: Vec<(SimTime, u32)> = Vec::new();
    for vc in 0..100u32 {
        let mut t = SimTime(vc as u64 * 1_653_000 + (vc as u64 * 7919 % 1000) * 1_000);
        while t < horizon {
            offers.push((t, vc));
            t += period;
        }
    }
    offers.sort();
    let mut rx = Reassembler::new();
    let (mut delivered, mut cells_out, mut wakes) = (0u64, 0u64, 0u64);
    let started = std::time::Instant::now();
    let mut next = 0;
    loop {
        let offer_t = offers.get(next).map(|o| o.0);
        let wake = match (offer_t, sp.poll_at()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => break,
            },
        };
        wakes += 1;
        sp.advance(wake, |d| {
            cells_out += d.cells.count as u64;
            delivered += matches!(rx.receive_span(d.cells), Reassembled::Frame { .. }) as u64;
        });
        while let Some(&(at, vc)) = offers.get(next).filter(|o| o.0 == wake) {
            sp.offer(vc, at, vc, next as u64, n);
            next += 1;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let s = sp.port().stats();
    eprintln!(
        "SwitchPort GEO 100 s: {} frames offered, {delivered} delivered, {} cells in, {cells_out} out, {wakes} wake-ups; {secs:.3} s wall, {:.1} M cells/s",
        offers.len(),
        s.arrived,
        (s.arrived + cells_out) as f64 / secs / 1e6
    );
}
