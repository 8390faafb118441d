//! The flavours' signatures through the whole engine (issue 3): scripted losses given in the
//! scenario, and the seeds' ordering of efficiencies on a GEO dumbbell.

mod common;

use common::run;

/// GEO path, window well above the BDP, three segments of one window dropped on their first
/// transmission (segments 200, 203 and 206, during the second round of congestion avoidance).
const THREE_LOSSES: &str = r#"
    [run]
    duration = "20s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "45Mbps"
    delay = "275ms"
    [switch]
    buffer = "10MB"
    [tcp]
    mss = 9180
    window_scale = 6
    ssthresh = "bdp"
    [app]
    kind = "transfer"
    bytes = "50MB"
    [[loss]]
    flow = 0
    segment = 200
    [[loss]]
    flow = 0
    segment = 203
    [[loss]]
    flow = 0
    segment = 206
"#;

#[track_caller]
fn signature(flavor: &str, timeouts: u64, fast_retransmits: u64, segments_retransmitted: u64) {
    let r = run(THREE_LOSSES, &[("tcp.flavor", flavor)]);
    let f = &r.flows[0];
    assert_eq!(r.links[0].drops_scripted, 3, "{flavor}: the three scripted drops happened");
    assert_eq!((f.timeouts, f.fast_retransmits, f.segments_retransmitted), (timeouts, fast_retransmits, segments_retransmitted), "{flavor}: (timeouts, fast retransmits, segments retransmitted)");
    // Only the three holes needed repair: every other retransmission (go-back-N after a
    // timeout) arrives as a duplicate.
    assert_eq!(f.duplicate_bytes, (segments_retransmitted - 3) * 9180, "{flavor}: needless retransmissions");
}

#[test]
fn a_scripted_loss_that_never_matches_is_reported() {
    // Segment 200 is never retransmitted twice with SACK: the second entry cannot happen.
    let text = THREE_LOSSES.replace("segment = 206", "segment = 206\n    [[loss]]\n    flow = 0\n    segment = 200\n    transmission = 2");
    let r = run(&text, &[("tcp.flavor", "sack")]);
    assert_eq!(r.links[0].drops_scripted, 3);
    assert_eq!(r.warnings, vec!["scripted loss never happened: flow 0 did not send data offset 1836000 a 3rd time (transmission 2)".to_string()]);
    assert!(run(THREE_LOSSES, &[("tcp.flavor", "sack")]).warnings.is_empty());
}

#[test]
fn vanilla_repairs_by_timeout_and_go_back_n() {
    // After the timeout it slow-starts from the first hole and resends what followed.
    signature("vanilla", 1, 0, 6);
}

#[test]
fn reno_halves_twice_then_times_out() {
    // One hole by fast retransmit, the second by another fast retransmit, the third by timeout.
    signature("reno", 1, 2, 3);
}

#[test]
fn newreno_ns2_repairs_one_hole_per_rtt_without_timeout() {
    // seed 001 §2.1: the timer is reset on every partial ACK, so no timeout at GEO.
    signature("newreno", 0, 1, 3);
}

#[test]
fn rfc6582_impatient_timer_times_out_at_geo() {
    // RFC 6582 resets the timer on the first partial ACK only; with an RTO close to the RTT
    // that is the timeout seed 001 §2.1 warns of.
    signature("newreno_rfc6582", 1, 1, 6);
}

#[test]
fn sack_repairs_every_hole_in_one_recovery() {
    signature("sack", 0, 1, 3);
    signature("sack_rfc6675", 0, 1, 3);
}

/// seed 001 conclusions: on a GEO dumbbell with a 0.5 x RTT x bandwidth buffer, SACK's
/// efficiency exceeds NewReno's, which exceeds Reno's and Vanilla's. (Deterministic: no
/// randomness in this scenario, so one run per flavour is the whole answer.)
#[test]
fn geo_dumbbell_efficiency_order_sack_newreno_reno_vanilla() {
    let text = include_str!("../../../scenarios/geo-dumbbell-droptail.toml");
    let e: Vec<f64> = ["vanilla", "reno", "newreno", "sack"].iter().map(|f| run(text, &[("tcp.flavor", f)]).summary.efficiency).collect();
    let (vanilla, reno, newreno, sack) = (e[0], e[1], e[2], e[3]);
    assert!(sack > newreno && newreno > reno && newreno > vanilla, "efficiencies vanilla {vanilla:.4} reno {reno:.4} newreno {newreno:.4} sack {sack:.4}");
    assert!(reno > vanilla, "reno {reno:.4} vanilla {vanilla:.4}");
}
