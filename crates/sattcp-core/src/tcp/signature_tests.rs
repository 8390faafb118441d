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
    let st = net.sender.stats();
    Outcome { rounds, rtts_to_repair: (t_repair - retx[0]).as_secs_f64() / rtt.as_secs_f64(), timeouts: st.timeouts, fast_retransmits: st.fast_retransmits, partial_acks: st.partial_acks }
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

#[test]
fn print_signature_table() {
    for f in ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675"] {
        for k in [1, 2, 3, 6] {
            let d = dropped_segments(k);
            let net = run(f, &d);
            let o = outcome(&net, &d);
            eprintln!("{f:16} k={k}: {o:?} enter={:?}", net.snaps_of("enter").first().map(|s| (s.cwnd / MSS, s.ssthresh / MSS)));
        }
    }
}

