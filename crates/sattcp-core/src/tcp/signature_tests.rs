//! The flavours' signatures (issue 3): scripted losses of k = 1, 2, 3, 6 segments of one
//! window on the seeds' GEO path (45 Mbps, 275 ms one way, MSS 9180, window scale 6, initial
//! ssthresh = the path's bandwidth-delay product, seed 000 §4.2.2), plus reliability and
//! throughput checks.

use super::recovery::CongState;
use super::testkit::{Net, Path, SegId};
use super::TcpConfig;
use crate::time::{Rate, SimTime};

/// seed 000 §4.2.2: MSS 9180 bytes for satellite runs.
const MSS: u64 = 9180;
/// seed 000 §4.2.2: GEO RTT-bandwidth product, 3,093,750 bytes, used as initial ssthresh.
const GEO_BDP: u64 = 3_093_750;
/// Bytes sent in the scripted-loss runs: 3000 segments.
const TRANSFER: u64 = 3000 * MSS;
/// The first dropped segment (index from 0): by then slow start has ended at ssthresh (337
/// segments, the BDP) and congestion avoidance keeps the 45 Mbps link full, so the flight is
/// one BDP of evenly spaced segments (the FIFO has no limit). The k drops are 4 segments
/// apart, all in one window.
const FIRST_DROP: u64 = 1500;
const DROP_SPACING: u64 = 4;

fn geo_cfg(flavor: &str) -> TcpConfig {
    TcpConfig { mss: MSS as u32, window_scale: 6, initial_ssthresh: GEO_BDP, ..Default::default() }.with_flavor(flavor).expect("known flavour")
}

fn dropped_segments(k: u64) -> Vec<u64> {
    (0..k).map(|i| FIRST_DROP + i * DROP_SPACING).collect()
}

/// Runs `flavor` on the GEO path with the first transmissions of the given segments dropped.
#[track_caller]
fn run(flavor: &str, drops: &[u64]) -> Net {
    let drops: Vec<u64> = drops.to_vec();
    let mut net = Net::new(Path::geo(), geo_cfg(flavor), move |id: SegId| id.tx_count == 0 && drops.contains(&(id.offset / MSS)));
    net.start(TRANSFER);
    assert!(net.run_to_completion(SimTime::from_secs(600)), "{flavor}: transfer did not complete");
    assert_eq!(net.delivered(), TRANSFER, "{flavor}: every byte delivered");
    net
}

/// Outcome of one scripted-loss run.
#[derive(Debug)]
struct Outcome {
    /// Retransmission rounds: the dropped segments' retransmissions, grouped into rounds
    /// separated by more than half an RTT.
    rounds: u32,
    /// From the first retransmission to the delivery of the last dropped segment, in
    /// propagation RTTs (550 ms).
    rtts_to_repair: f64,
    /// From the first drop to the delivery of the last dropped segment, in RTTs.
    rtts_from_drop: f64,
    timeouts: u64,
    fast_retransmits: u64,
    partial_acks: u64,
}

fn outcome(net: &Net, drops: &[u64]) -> Outcome {
    let rtt = Path::geo().rtt();
    let retx: Vec<SimTime> = net.sent.iter().filter(|s| s.1.tx_count > 0 && drops.contains(&(s.1.offset / MSS))).map(|s| s.0).collect();
    let rounds = 1 + retx.windows(2).filter(|w| w[1] - w[0] > SimTime(rtt.as_nanos() / 2)).count() as u32;
    let last = drops.iter().max().unwrap();
    let t_repair = net.delivered_at((last + 1) * MSS).expect("repaired");
    let t_drop = net.sent.iter().find(|s| s.2).expect("a drop").0;
    let st = net.sender.stats();
    let in_rtts = |d: SimTime| d.as_secs_f64() / rtt.as_secs_f64();
    Outcome { rounds, rtts_to_repair: in_rtts(t_repair - retx[0]), rtts_from_drop: in_rtts(t_repair - t_drop), timeouts: st.timeouts, fast_retransmits: st.fast_retransmits, partial_acks: st.partial_acks }
}

#[test]
fn clean_transfer_every_flavour() {
    for f in ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675"] {
        let net = run(f, &[]);
        let st = net.sender.stats();
        assert_eq!((st.timeouts, st.fast_retransmits, st.segments_retransmitted), (0, 0, 0), "{f}");
        assert!(net.sender.sack_enabled() == f.starts_with("sack"), "{f}: SACK negotiated only for SACK flavours");
        assert_eq!(net.sender.peer_window(), 4_194_240, "seed 000 §4.2.2: 65535 << 6");
    }
}

/// The scripted-loss table of docs/tcp.md, regenerated and compared row by row, so the page
/// stays true (print it with `cargo test -p sattcp-core signature_table -- --nocapture`).
#[test]
fn signature_table_matches_docs() {
    let doc = include_str!("../../../../docs/tcp.md");
    let mut missing = Vec::new();
    for f in ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675"] {
        for k in [1, 2, 3, 6] {
            let d = dropped_segments(k);
            let o = outcome(&run(f, &d), &d);
            let row = format!("| {f} | {k} | {:.2} | {:.2} | {} | {} | {} | {} |", o.rtts_to_repair, o.rtts_from_drop, o.rounds, o.fast_retransmits, o.partial_acks, o.timeouts);
            eprintln!("{row}");
            if !doc.lines().any(|l| l == row) {
                missing.push(row);
            }
        }
    }
    assert!(missing.is_empty(), "docs/tcp.md lacks these rows (update its table):\n{}", missing.join("\n"));
}

/// (flavour, k) -> (RTTs to repair from the first retransmission: min, max; timeouts;
/// fast retransmits; partial ACKs).
#[track_caller]
fn assert_signature(flavor: &str, k: u64, rtts: (f64, f64), timeouts: u64, fast_retransmits: u64, partial_acks: u64) {
    let d = dropped_segments(k);
    let o = outcome(&run(flavor, &d), &d);
    assert!(rtts.0 <= o.rtts_to_repair && o.rtts_to_repair <= rtts.1, "{flavor} k={k}: {o:?}, expected RTTs in {rtts:?}");
    assert_eq!((o.timeouts, o.fast_retransmits, o.partial_acks), (timeouts, fast_retransmits, partial_acks), "{flavor} k={k}: (timeouts, fast retransmits, partial ACKs) in {o:?}");
}

#[test]
fn newreno_repairs_one_hole_per_rtt_without_timeout() {
    // seed 001 §2.1: "recover from N segment losses in N round trips": the first hole is
    // repaired half an RTT after the fast retransmit, each further one an RTT later.
    for k in [1, 2, 3, 6] {
        let kf = k as f64;
        assert_signature("newreno", k, (kf - 0.6, kf - 0.4), 0, 1, k - 1);
    }
}

#[test]
fn sack_repairs_every_hole_in_about_one_rtt() {
    // seed 001 §2.2: "a sender implementing SACK can recover from N segment loss much
    // faster": every hole is retransmitted in the first round trip of recovery.
    assert_signature("sack", 1, (0.4, 0.6), 0, 1, 0);
    for k in [2, 3, 6] {
        assert_signature("sack", k, (0.9, 1.1), 0, 1, k - 1);
    }
    assert_signature("sack_rfc6675", 1, (0.4, 0.6), 0, 1, 0);
    for k in [2, 3, 6] {
        assert_signature("sack_rfc6675", k, (0.9, 1.1), 0, 1, k - 1);
    }
}

#[test]
fn reno_halves_again_then_times_out() {
    // seed 001 §2: Reno recovers from isolated losses, not bursts. One fast retransmit per
    // hole while duplicates keep coming (each halving cwnd), then the timer.
    assert_signature("reno", 1, (0.4, 0.6), 0, 1, 0);
    assert_signature("reno", 2, (1.9, 2.1), 0, 2, 0);
    assert_signature("reno", 3, (4.0, 5.0), 1, 2, 0);
    assert_signature("reno", 6, (7.0, 8.0), 1, 2, 0);
}

#[test]
fn vanilla_waits_for_the_timer_then_slow_starts() {
    for (k, rtts) in [(1, (0.4, 0.6)), (2, (1.4, 1.6)), (3, (2.4, 2.6)), (6, (4.4, 4.6))] {
        assert_signature("vanilla", k, rtts, 1, 0, 0);
    }
    // The timer fires at least one RTO after the drop.
    let d = dropped_segments(1);
    let net = run("vanilla", &d);
    let t = net.snaps_of("timeout");
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].cwnd, t[0].state), (MSS, CongState::Loss), "slow start from one segment");
}

#[test]
fn rfc6582_impatient_timer_times_out_on_three_holes() {
    // RFC 6582 §4 ("Impatient"): only the first partial ACK resets the timer, so on a GEO
    // path three holes outlast the RTO: the case seed 001 §2.1 avoided by resetting the timer
    // on every partial ACK.
    assert_signature("newreno_rfc6582", 2, (1.4, 1.6), 0, 1, 1);
    let d = dropped_segments(3);
    let o = outcome(&run("newreno_rfc6582", &d), &d);
    assert_eq!(o.timeouts, 1, "{o:?}");
}

#[track_caller]
fn first(net: &Net, what: &str) -> super::testkit::Snap {
    *net.snaps_of(what).first().unwrap_or_else(|| panic!("no {what} snapshot"))
}

#[test]
fn newreno_window_at_entry_partial_acks_and_exit() {
    let d = dropped_segments(3);
    let net = run("newreno", &d);
    let enter = first(&net, "enter");
    // ns-2 closecwnd(1): cwnd = ssthresh = window/2 in whole segments.
    assert_eq!((enter.cwnd, enter.ssthresh), (170 * MSS, 170 * MSS));
    assert_eq!(enter.snd_una, FIRST_DROP * MSS + 1, "fast retransmit of the first hole");
    let partials = net.snaps_of("partial");
    assert_eq!(partials.len(), 2);
    for (i, p) in partials.iter().enumerate() {
        // seed 001 §2.1: a partial ACK resets CWND to SSTHRESH and retransmits the next hole.
        assert_eq!((p.cwnd, p.ssthresh, p.state), (170 * MSS, 170 * MSS, CongState::Recovery));
        assert_eq!(p.snd_una, d[i + 1] * MSS + 1, "partial ACK {i} stops at the next hole");
        assert!((p.t - enter.t).as_secs_f64() > 0.5 * (i + 1) as f64, "one hole per RTT");
    }
    let exit = first(&net, "exit");
    assert_eq!(exit.state, CongState::Open);
    assert!(exit.cwnd >= 170 * MSS && exit.cwnd <= 171 * MSS, "cwnd = ssthresh, then one CA step: {}", exit.cwnd / MSS);
    assert!(exit.snd_una > (d[2] + 1) * MSS, "exit after the last hole");
}

#[test]
fn newreno_flywheel_sends_one_new_segment_per_two_dupacks() {
    // seed 001 §2.1 (Hoe): during the fast-retransmit phase, one new packet beyond RECOVER per
    // two duplicate ACKs, and nothing else.
    let d = dropped_segments(1);
    let net = run("newreno", &d);
    let enter = first(&net, "enter");
    let exit = first(&net, "exit");
    let recover = net.sent.iter().filter(|s| s.0 <= enter.t).map(|s| s.1.offset + s.1.len as u64).max().unwrap();
    let new_in_recovery = net.sent.iter().filter(|s| s.0 > enter.t && s.0 < exit.t && s.1.tx_count == 0).count() as u64;
    assert!(net.sent.iter().filter(|s| s.0 > enter.t && s.0 < exit.t && s.1.tx_count == 0).all(|s| s.1.offset >= recover));
    // Every segment between the hole and RECOVER gives a duplicate; after the third, one new
    // segment per two, but never beyond the receiver's window (4,194,240 bytes): ns-2's
    // `output()` ignored the window here, we do not (docs/tcp.md).
    let dupacks = (recover / MSS) - FIRST_DROP - 1;
    let rwnd_room = (FIRST_DROP * MSS + 4_194_240 - recover) / MSS;
    assert!(rwnd_room < (dupacks - 3) / 2, "this run is window-limited");
    assert!(new_in_recovery.abs_diff(rwnd_room) <= 1, "{new_in_recovery} new segments for {dupacks} duplicates");
    // Without the window limit: a 16 MB window (scale 8) on the same run.
    let drops = d.clone();
    let cfg = TcpConfig { window_scale: 8, ..geo_cfg("newreno") };
    let mut net = Net::new(Path::geo(), cfg, move |id: SegId| id.tx_count == 0 && drops.contains(&(id.offset / MSS)));
    net.start(TRANSFER);
    assert!(net.run_to_completion(SimTime::from_secs(600)));
    let (enter, exit) = (first(&net, "enter"), first(&net, "exit"));
    let recover = net.sent.iter().filter(|s| s.0 <= enter.t).map(|s| s.1.offset + s.1.len as u64).max().unwrap();
    let dupacks = (recover / MSS) - FIRST_DROP - 1;
    let new_in_recovery = net.sent.iter().filter(|s| s.0 > enter.t && s.0 < exit.t && s.1.tx_count == 0).count() as u64;
    assert!(new_in_recovery.abs_diff((dupacks - 3) / 2) <= 1, "{new_in_recovery} new segments for {dupacks} duplicates");
}

#[test]
fn sack_fall_floyd_pipe_accounting() {
    // seed 001 §2.2.1, step by step from the third duplicate ACK.
    let d = dropped_segments(3);
    let drops = d.clone();
    let mut net = Net::new(Path::geo(), geo_cfg("sack"), move |id: SegId| id.tx_count == 0 && drops.contains(&(id.offset / MSS)));
    net.start(TRANSFER);
    let mut before = 0;
    while net.sender.state() != CongState::Recovery {
        before = net.sender.cwnd();
        assert!(net.step());
    }
    let w = before / MSS;
    // PIPE = CWND - 3 segments (CWND before the cut); CWND halved; SSTHRESH = CWND.
    assert_eq!(net.sender.pipe(), Some(w as i64 - 3));
    assert_eq!((net.sender.cwnd(), net.sender.ssthresh()), (w / 2 * MSS, w / 2 * MSS));
    assert_eq!(net.sender.recover(), net.sender.snd_max(), "RECOVER = highest sent");
    // Each further duplicate ACK: PIPE - 1, and nothing is sent while PIPE >= CWND.
    let sent_before = net.sent.len();
    for i in 1..=10 {
        let dup = net.sender.stats().dupacks_received;
        while net.sender.stats().dupacks_received == dup {
            assert!(net.step());
        }
        assert_eq!(net.sender.pipe(), Some(w as i64 - 3 - i));
    }
    assert_eq!(net.sent.len(), sent_before, "PIPE >= CWND: nothing sent");
    // Run to the first partial ACK: PIPE drops by 2 (and the sender may then fill the pipe).
    let mut pipe = net.sender.pipe().unwrap();
    let mut sent = net.sent.len();
    while net.sender.stats().partial_acks == 0 {
        pipe = net.sender.pipe().unwrap();
        sent = net.sent.len();
        assert!(net.step());
    }
    let after = net.sender.pipe().unwrap();
    assert_eq!(after, pipe - 2 + (net.sent.len() - sent) as i64, "partial ACK: PIPE - 2, + 1 per segment sent");
}

#[test]
fn sack_blocks_on_the_wire_for_three_holes() {
    let d = dropped_segments(3);
    let net = run("sack", &d);
    let b = |i: u64| i * MSS + 1;
    let hole = b(FIRST_DROP);
    let dup: Vec<Vec<(u64, u64)>> = net.acks.iter().filter(|(_, a)| a.ack == hole).skip(1).take(9).map(|(_, a)| a.sack_blocks().iter().map(|s| (s.start, s.end)).collect()).collect();
    let first = FIRST_DROP;
    assert_eq!(dup[0], vec![(b(first + 1), b(first + 2))]);
    assert_eq!(dup[2], vec![(b(first + 1), b(first + 4))]);
    // Segment 1505 arrives above the second hole: its block first, then the older one.
    assert_eq!(dup[3], vec![(b(first + 5), b(first + 6)), (b(first + 1), b(first + 4))]);
    assert_eq!(dup[6], vec![(b(first + 9), b(first + 10)), (b(first + 5), b(first + 8)), (b(first + 1), b(first + 4))]);
    assert_eq!(dup[8], vec![(b(first + 9), b(first + 12)), (b(first + 5), b(first + 8)), (b(first + 1), b(first + 4))]);
}

#[test]
fn window_limited_throughput_64kb_over_580ms() {
    // issue 2 / seed 004: a 64 KB window over a 580 ms RTT gives 64 KB / 580 ms (903 kbps).
    let cfg = TcpConfig { mss: 1024, rcv_window_field: 65535, window_scale: 0, initial_ssthresh: 1 << 30, ..Default::default() }.with_flavor("reno").unwrap();
    let path = Path { rate: Rate::mbps(45), delay: SimTime::from_millis(290), queue_limit: None };
    let mut net = Net::new(path, cfg, |_| false);
    net.start(1 << 40);
    net.run_until(SimTime::from_secs(10));
    let d0 = net.delivered();
    net.run_until(SimTime::from_secs(70));
    let rate = (net.delivered() - d0) as f64 * 8.0 / 60.0;
    let ideal = 65535.0 * 8.0 / 0.580;
    assert!((rate / ideal - 1.0).abs() < 0.02, "{rate:.0} bit/s vs {ideal:.0}");
}

/// The k = 3 cwnd traces, as CSV for plotting: written to `$SATTCP_TCP_TRACES/<flavour>_k3.csv`
/// when that variable is set (`SATTCP_TCP_TRACES=target/tcp-traces cargo test -p sattcp-core
/// cwnd_traces`), checked for shape otherwise.
#[test]
fn cwnd_traces_k3() {
    let dir = std::env::var_os("SATTCP_TCP_TRACES").map(std::path::PathBuf::from);
    for f in ["vanilla", "reno", "newreno", "sack"] {
        let net = run(f, &dropped_segments(3));
        let csv = net.cwnd_csv();
        assert!(csv.starts_with("t_s,cwnd,ssthresh\n") && csv.lines().count() > 100, "{f}");
        if let Some(d) = &dir {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join(format!("{f}_k3.csv")), csv).unwrap();
        }
    }
}

/// One bulk flow on the GEO path through a drop-tail FIFO of a quarter of the
/// bandwidth-delay product (84 packets of 9220 bytes; one flow with ssthresh = BDP does not
/// overflow seed 000's 0.5 x BDP): slow start overflows it. A documented measurement: goodput
/// over 60 s per flavour.
#[test]
fn droptail_quarter_bdp_single_flow() {
    let mut rows = Vec::new();
    for f in ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675"] {
        let path = Path { queue_limit: Some(84), ..Path::geo() };
        let mut net = Net::new(path, geo_cfg(f), |_| false);
        net.start(1 << 40);
        net.run_until(SimTime::from_secs(60));
        let st = net.sender.stats();
        let mbps = net.delivered() as f64 * 8.0 / 60.0 / 1e6;
        let row = format!("| {f} | {mbps:.2} | {} | {} | {} |", net.queue_drops, st.fast_retransmits, st.timeouts);
        assert!(include_str!("../../../../docs/tcp.md").lines().any(|l| l == row), "docs/tcp.md lacks {row}");
        assert!(net.queue_drops > 0, "{f}: slow start must overflow the buffer");
        rows.push((f, mbps));
    }
    // SACK repairs the slow-start burst of losses in about one RTT; the others need one RTT
    // per hole (NewReno: about 45 holes, then the unpaced burst at the exit of fast recovery
    // overflows the FIFO again), a timeout, or both (docs/tcp.md).
    let sack = rows.iter().find(|r| r.0 == "sack").unwrap().1;
    assert!(rows.iter().all(|r| r.1 <= sack * 1.01), "{rows:?}");
}

/// Hybla and CUBIC on the GEO path after a single loss: both regain the window faster than
/// Reno AIMD, which adds one segment per 550 ms RTT.
#[test]
fn hybla_and_cubic_regrow_faster_than_reno_on_geo() {
    let mut after = Vec::new();
    for f in ["sack", "sack/cubic", "sack/hybla"] {
        let d = [FIRST_DROP];
        let drops = d.to_vec();
        let mut net = Net::new(Path { queue_limit: Some(400), ..Path::geo() }, geo_cfg(f), move |id: SegId| id.tx_count == 0 && drops.contains(&(id.offset / MSS)));
        net.start(1 << 40);
        net.run_until(SimTime::from_secs(40));
        after.push((f, net.delivered()));
    }
    eprintln!("{after:?}");
    assert!(after[1].1 > after[0].1 && after[2].1 > after[0].1, "{after:?}");
}

mod reliability {
    use super::*;
    use proptest::prelude::*;

    const FLAVOURS: [&str; 6] = ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675"];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every flavour, any pattern of data losses (first transmissions and
        /// retransmissions) and of ACK losses (the SYN-ACK included): the transfer completes and every byte arrives once, in order
        /// (the test network asserts contiguity of the receiver's deliveries).
        #[test]
        fn every_byte_once_in_order(
            flavour in 0usize..6,
            drops in proptest::collection::vec((0u64..80, 0u16..3), 0..25),
            tail in 1u64..1000,
            delayed_ack in any::<bool>(),
            fin in any::<bool>(),
            wnd_segs in 4u16..64,
            ack_drops in proptest::collection::vec(0usize..150, 0..20),
            queue in 2usize..40,
            cc in 0usize..3,
        ) {
            let f = format!("{}{}", FLAVOURS[flavour], ["", "/cubic", "/hybla"][cc]);
            let f = f.as_str();
            let cfg = TcpConfig { mss: 1000, rcv_window_field: wnd_segs * 1000, initial_ssthresh: 32_000, delayed_ack, fin, ..Default::default() }.with_flavor(f).unwrap();
            let path = Path { rate: Rate::mbps(10), delay: SimTime::from_millis(20), queue_limit: Some(queue) };
            let total = 79 * 1000 + tail;
            let mut net = Net::new(path, cfg, move |id: SegId| drops.contains(&(id.offset / 1000, id.tx_count)));
            net.drop_acks = ack_drops;
            net.start(total);
            prop_assert!(net.run_to_completion(SimTime::from_secs(3600)), "{} did not complete", f);
            // Let the last ACKs and any spurious retransmissions drain.
            net.run_until(net.now + SimTime::from_secs(200));
            prop_assert_eq!(net.delivered(), total);
            prop_assert_eq!(net.receiver.fin_received(), fin);
            prop_assert!(net.sender.all_acked());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        /// Issue 9 and 14: the rate-based and paced controllers (BBR, Westwood+, CUBIC with
        /// HyStart++) with every recovery, optionally a finite receive buffer whose reader
        /// pauses (zero window, persist timer): the transfer completes, every byte once, in
        /// order.
        #[test]
        fn every_byte_once_in_order_modern_cc_and_buffers(
            flavour in 0usize..6,
            drops in proptest::collection::vec((0u64..80, 0u16..3), 0..25),
            tail in 1u64..1000,
            delayed_ack in any::<bool>(),
            ack_drops in proptest::collection::vec(0usize..150, 0..20),
            queue in 2usize..40,
            cc in 0usize..5,
            rcv_buf in proptest::option::of(2_000u64..40_000),
            pause in proptest::option::of((0u64..2000, 1u64..5000)),
        ) {
            let f = format!("{}{}", FLAVOURS[flavour], ["/bbr", "/westwood", "/westwood_linux", "/cubic_hystart", ""][cc]);
            let f = f.as_str();
            let cfg = TcpConfig { mss: 1000, rcv_window_field: 64_000, initial_ssthresh: 32_000, initial_cwnd: 4, delayed_ack, rcv_buf, ..Default::default() }.with_flavor(f).unwrap();
            let path = Path { rate: Rate::mbps(10), delay: SimTime::from_millis(20), queue_limit: Some(queue) };
            let total = 79 * 1000 + tail;
            let mut net = Net::new(path, cfg, move |id: SegId| drops.contains(&(id.offset / 1000, id.tx_count)));
            net.drop_acks = ack_drops;
            if let (Some(_), Some((from, len))) = (rcv_buf, pause) {
                net.pause_reading(SimTime::from_millis(from), SimTime::from_millis(from + len));
            }
            net.start(total);
            prop_assert!(net.run_to_completion(SimTime::from_secs(3600)), "{} did not complete", f);
            net.run_until(net.now + SimTime::from_secs(200));
            prop_assert_eq!(net.delivered(), total);
            prop_assert!(net.sender.all_acked());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// The same on the seeds' GEO path with a large window (4,194,240 bytes), a drop-tail
        /// buffer, and scattered scripted losses, 2000 segments of 9180 bytes.
        #[test]
        fn every_byte_once_in_order_geo(
            flavour in 0usize..6,
            drops in proptest::collection::vec((0u64..2000, 0u16..2), 0..40),
            queue in 20usize..400,
            cc in 0usize..3,
        ) {
            let f = format!("{}{}", FLAVOURS[flavour], ["", "/cubic", "/hybla"][cc]);
            let total = 2000 * MSS;
            let mut net = Net::new(Path { queue_limit: Some(queue), ..Path::geo() }, geo_cfg(&f), move |id: SegId| drops.contains(&(id.offset / MSS, id.tx_count)));
            net.start(total);
            prop_assert!(net.run_to_completion(SimTime::from_secs(36_000)), "{} did not complete", f);
            prop_assert_eq!(net.delivered(), total);
        }
    }
}

/// cwnd and ssthresh (in segments, 1/100 precision) at entering recovery, each partial ACK and
/// exit, for k = 2 (holes at 1500 and 1504; the window before the loss was 340.x segments).
#[test]
fn windows_at_the_instants_that_matter() {
    type Row = (&'static str, f64, f64, u64);
    let cases: [(&str, &[Row]); 5] = [
        // RFC 2581 / ns-2 Reno: halve, exit on the first new ACK (one CA step), halve again.
        ("reno", &[("enter", 170.0, 170.0, 1500), ("exit", 170.01, 170.0, 1504), ("enter", 85.0, 85.0, 1504), ("exit", 85.01, 85.0, 1956)]),
        // seed 001 §2.1: cwnd = ssthresh at entry and at each partial ACK; exit, one CA step.
        ("newreno", &[("enter", 170.0, 170.0, 1500), ("partial", 170.0, 170.0, 1504), ("exit", 170.01, 170.0, 1956)]),
        // seed 001 §2.2.1: halved at entry, unchanged until exit (no growth on the exit ACK).
        ("sack", &[("enter", 170.0, 170.0, 1500), ("partial", 170.0, 170.0, 1504), ("exit", 170.0, 170.0, 1841)]),
        // RFC 6582: ssthresh + 3 at entry; inflated by every duplicate, deflated by the partial
        // ACK; at exit min(ssthresh, FlightSize + SMSS).
        ("newreno_rfc6582", &[("enter", 173.5, 170.5, 1500), ("partial", 506.5, 170.5, 1504), ("exit", 5.0, 170.5, 1956)]),
        // RFC 6675: FlightSize / 2, unrounded.
        ("sack_rfc6675", &[("enter", 170.5, 170.5, 1500), ("partial", 170.5, 170.5, 1504), ("exit", 170.5, 170.5, 1841)]),
    ];
    for (f, want) in cases {
        let net = run(f, &dropped_segments(2));
        let got: Vec<Row> = net.snaps.iter().map(|s| (s.what, (s.cwnd as f64 / MSS as f64 * 100.0).round() / 100.0, (s.ssthresh as f64 / MSS as f64 * 100.0).round() / 100.0, (s.snd_una - 1) / MSS)).collect();
        assert_eq!(got, want, "{f}: (instant, cwnd, ssthresh, snd_una segment)");
    }
}
