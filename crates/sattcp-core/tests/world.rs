//! End-to-end behaviour of the engine with TCP (issue 2's "tests that must exist").

mod common;

use common::{run, scenario};
use sattcp_core::{SimTime, Simulation};

const GEO_BULK: &str = include_str!("../../../scenarios/geo-bulk.toml");

/// A single path: 100 Mbps, 290 ms one way (RTT 580 ms), a 64 KB window (seed 004 §5: 903 kbps).
const WINDOW_LIMITED: &str = r#"
    [run]
    duration = "120s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "100Mbps"
    delay = "290ms"
    [switch]
    buffer = "1000pkt"
    [tcp]
    flavor = "reno"
    mss = 1460
    window = 65535
    window_scale = 0
    ssthresh = "1MB"
"#;

#[test]
fn window_limited_throughput_is_window_over_rtt() {
    let sc = scenario(WINDOW_LIMITED, &[]);
    let mut sim = Simulation::new(&sc);
    sim.run_until(SimTime::from_secs(20));
    let d0 = sim.receiver(0).delivered();
    sim.run_until(SimTime::from_secs(120));
    let d1 = sim.receiver(0).delivered();
    let bps = (d1 - d0) as f64 * 8.0 / 100.0;
    // 65535 bytes per 580 ms round trip = 903,931 bps (seed 004 quotes 903 kbps).
    let want = 65535.0 * 8.0 / 0.580;
    assert!((bps / want - 1.0).abs() < 0.02, "throughput {bps:.0} bps, want {want:.0} within 2%");
}

#[test]
fn one_bulk_flow_fills_an_error_free_geo_link() {
    let sc = scenario(GEO_BULK, &[]);
    let mut sim = Simulation::new(&sc);
    sim.run_until(SimTime::from_secs(50));
    let d0 = sim.receiver(0).delivered();
    sim.run_until(SimTime::from_secs(100));
    let d1 = sim.receiver(0).delivered();
    let bps = (d1 - d0) as f64 * 8.0 / 50.0;
    // IP-level ceiling: 45 Mbps x 9180 / 9220.
    let ceiling = 45e6 * 9180.0 / 9220.0;
    assert!(bps >= 0.95 * ceiling, "goodput {bps:.0} bps < 95% of {ceiling:.0}");
    assert!(bps <= ceiling * 1.0001, "goodput {bps:.0} above the physical ceiling {ceiling:.0}");
}

const LOSSY_TRANSFER: &str = r#"
    [run]
    duration = "600s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "10Mbps"
    delay = "20ms"
    [switch]
    buffer = "100pkt"
    [tcp]
    mss = 1000
    ssthresh = "64KB"
    [app]
    kind = "transfer"
    bytes = 300000
"#;

#[test]
fn every_byte_arrives_exactly_once_despite_bit_errors() {
    for flavor in ["vanilla", "reno", "newreno", "sack"] {
        for (seed, ber) in [(1u64, "1e-5"), (2, "3e-6"), (3, "1e-6"), (4, "0.0")] {
            let seed_s = seed.to_string();
            let text = LOSSY_TRANSFER.replace("delay = \"20ms\"", &format!("delay = \"20ms\"\n    ber = {ber}"));
            let mut sim = Simulation::new(&scenario(&text, &[("tcp.flavor", flavor), ("run.seed", &seed_s)]));
            sim.run();
            let r = sim.finish();
            let f = &r.flows[0];
            assert_eq!(f.delivered_bytes, 300_000, "{flavor} seed {seed} BER {ber}: delivered {} of 300000", f.delivered_bytes);
            assert!(f.completed_at_s.is_some(), "{flavor} seed {seed} BER {ber}: transfer did not complete");
        }
    }
}

#[test]
fn same_seed_same_digest_other_seed_other_digest() {
    let text = LOSSY_TRANSFER.replace("delay = \"20ms\"", "delay = \"20ms\"\n    ber = 1e-5");
    let run = |seed: &str| {
        let mut sim = Simulation::new(&scenario(&text, &[("run.seed", seed)]));
        sim.run();
        sim.finish()
    };
    let (a, b, c) = (run("7"), run("7"), run("8"));
    assert_eq!(a.digest, b.digest);
    assert_eq!(a.events, b.events);
    assert_ne!(a.digest, c.digest, "a different seed with bit errors must change the run");
}

#[test]
fn dumbbell_flows_share_the_bottleneck_and_conserve_packets() {
    let text = include_str!("../../../scenarios/geo-dumbbell-droptail.toml");
    let sc = scenario(text, &[("topology.pairs", "10"), ("run.duration", "20s")]);
    let mut sim = Simulation::new(&sc);
    sim.run();
    let r = sim.finish();
    assert_eq!(r.flows.len(), 10);
    assert!(r.flows.iter().all(|f| f.delivered_bytes > 0), "every flow delivers something");
    let bn = r.links.iter().find(|l| l.link == "bottleneck").unwrap();
    // Every data packet crossing the bottleneck came from an access link.
    let up: u64 = r.links.iter().filter(|l| l.link.ends_with("->r1")).map(|l| l.packets).sum();
    assert_eq!(up, bn.packets + bn.drops_queue_full + r.links.iter().filter(|l| l.link.ends_with("->r1")).map(|l| l.drops_queue_full).sum::<u64>(), "conservation at R1");
    assert!(r.summary.efficiency <= 1.0 + 1e-9);
}

/// The ceiling emerges from the framing, it is not written in (issue 4): one bulk flow over the
/// 45 Mbps ATM bottleneck, a receiver window a little above the bandwidth-delay product and a
/// buffer that never overflows, reaches the seeds' C once past slow start.
#[track_caller]
fn atm_goodput(mss: &str, window_scale: &str, delay: &str, want_bps: f64) {
    let text = include_str!("../../../scenarios/kota-geo.toml");
    let sc = scenario(
        text,
        &[
            ("topology.pairs", "1"),
            ("app.kind", "bulk"),
            ("tcp.mss", mss),
            ("tcp.window_scale", window_scale),
            ("tcp.ssthresh", "\"1bdp\""),
            ("links.bottleneck.delay", delay),
            ("switch.buffer", "\"4bdp\""),
            ("run.duration", "30s"),
        ],
    );
    let mut sim = Simulation::new(&sc);
    sim.run_until(SimTime::from_secs(10));
    let d0 = sim.receiver(0).delivered();
    sim.run_until(SimTime::from_secs(30));
    let bps = (sim.receiver(0).delivered() - d0) as f64 * 8.0 / 20.0;
    assert!((bps / want_bps - 1.0).abs() < 0.01, "MSS {mss}: goodput {bps:.0} bps, C = {want_bps:.0}");
    let r = sim.finish();
    let bn = r.links.iter().find(|l| l.link == "bottleneck").unwrap();
    assert_eq!(bn.drops_queue_full, 0, "the buffer never overflows");
    assert_eq!(bn.cells_dropped, Some(0));
}

#[test]
fn atm_goodput_reaches_c_for_mss_9180() {
    // 65535 << 6 = 4.19 MB > 3.09 MB bandwidth-delay product at 550 ms.
    atm_goodput("9180", "6", "\"275ms\"", 40.385e6);
}

#[test]
fn atm_goodput_reaches_c_for_mss_1024() {
    // WAN: 64 KB window > 56,250 B product at 10 ms.
    atm_goodput("1024", "0", "\"5ms\"", 37.8015e6);
}

#[test]
fn a_transfer_with_fin_completes_and_the_fin_arrives() {
    let sc = scenario(LOSSY_TRANSFER, &[("tcp.fin", "true"), ("tcp.flavor", "sack")]);
    let mut sim = Simulation::new(&sc);
    sim.run();
    assert!(sim.receiver(0).fin_received(), "the FIN follows the last byte");
    assert_eq!(sim.receiver(0).delivered(), 300_000);
}

#[test]
fn cubic_and_hybla_run_end_to_end() {
    for f in ["sack/cubic", "newreno/hybla"] {
        let sc = scenario(GEO_BULK, &[("tcp.flavor", f), ("run.duration", "\"20s\"")]);
        let mut sim = Simulation::new(&sc);
        sim.run();
        assert!(sim.receiver(0).delivered() > 0, "{f}");
    }
}

/// Issue 5: a 20 s run of the seeds' GEO study scenario (100 WWW pairs over ATM) is sane.
#[test]
fn kota_geo_www_20s_is_sane() {
    let text = include_str!("../../../scenarios/kota-geo.toml");
    let sc = scenario(text, &[("run.duration", "\"20s\"")]);
    let mut sim = Simulation::new(&sc);
    sim.run();
    let r = sim.finish();
    let s = &r.summary;
    assert_eq!(s.flows, 100, "100 data flows (servers)");
    assert_eq!(r.flows.len(), 200, "plus 100 request flows (clients)");
    assert!(s.efficiency > 0.0 && s.efficiency <= 1.0, "efficiency {}", s.efficiency);
    let f = s.fairness.expect("fairness defined");
    assert!(f > 0.0 && f <= 1.0 + 1e-12, "fairness {f}");
    for fl in &r.flows {
        // Every client has made at least one batch of requests by 20 s (first batches fall in
        // the first 10 s), so every server has sent something.
        assert!(fl.delivered_bytes > 0, "flow {} ({}) delivered nothing", fl.flow, fl.role);
        // Nothing is delivered that was not scheduled (no byte delivered twice).
        assert!(fl.delivered_bytes <= fl.scheduled_bytes, "flow {}: delivered {} > scheduled {}", fl.flow, fl.delivered_bytes, fl.scheduled_bytes);
        if fl.role == "request" {
            assert_eq!(fl.scheduled_bytes % 128, 0, "requests are 128 bytes each");
        }
        if fl.role == "data" {
            let e = fl.fair_share_bps.expect("data flows have a fair share");
            assert!(e >= 0.0 && e <= s.capacity_bps);
        }
    }
    let shares: f64 = r.flows.iter().filter_map(|f| f.fair_share_bps).sum();
    assert!(shares <= s.capacity_bps * (1.0 + 1e-9), "max-min shares never exceed C: {shares} > {}", s.capacity_bps);
    for name in ["bottleneck", "bottleneck-rev"] {
        let l = r.links.iter().find(|l| l.link == name).unwrap();
        assert!(l.cells.unwrap() > 0 && l.utilization <= 1.0, "{name}");
        // Conservation at each switch port: cells in = cells out + dropped + buffered.
        assert_eq!(l.cells_arrived.unwrap(), l.cells.unwrap() + l.cells_dropped.unwrap() + l.cells_buffered.unwrap(), "{name}: conservation");
        assert!(l.drops_queue_full <= l.cells_dropped.unwrap(), "{name}: frames lost <= cells lost");
    }
}

/// ATM: frames delivered to a host are counted on the link from its switch to it.
#[test]
fn atm_delivered_frames_count_on_the_links_into_the_hosts() {
    let text = include_str!("../../../scenarios/kota-geo.toml");
    let sc = scenario(text, &[("topology.pairs", "2"), ("app.kind", "bulk"), ("run.duration", "\"5s\"")]);
    let mut sim = Simulation::new(&sc);
    sim.run();
    let r = sim.finish();
    let link = |n: &str| r.links.iter().find(|l| l.link == n).unwrap_or_else(|| panic!("{n}"));
    for i in 0..2 {
        let (data_in, acks_in) = (link(&format!("r2->dst{i}")), link(&format!("r1->src{i}")));
        assert!(data_in.packets > 0 && acks_in.packets > 0, "pair {i}: frames delivered on the links into the hosts");
        // Each data frame is 193 cells at MSS 9180 (SYN and pure ACKs are 2 cells).
        assert!(data_in.bytes > 100 * 53 * data_in.packets, "pair {i}: data frames are mostly full-size");
        let up = link(&format!("src{i}->r1"));
        assert!(up.packets >= data_in.packets, "pair {i}: no more frames delivered than sent");
    }
}

/// A chain of hops through routers: the slowest hop is the bottleneck, delays add up.
#[test]
fn multi_hop_path_is_limited_by_its_slowest_hop() {
    let text = r#"
        [run]
        duration = "30s"
        [topology]
        kind = "path"
        [[links.path]]
        rate = "100Mbps"
        delay = "1ms"
        [[links.path]]
        rate = "10Mbps"
        delay = "100ms"
        [[links.path]]
        rate = "50Mbps"
        delay = "10ms"
        [switch]
        buffer = "1bdp"
        [tcp]
        flavor = "sack"
        mss = 1460
        window_scale = 4
        [trace]
        links = ["hop1"]
    "#;
    let sc = scenario(text, &[]);
    assert_eq!(sc.rtt_prop(), SimTime::from_millis(222), "RTT = 2 x (1 + 100 + 10) ms");
    let mut sim = Simulation::new(&sc);
    sim.run_until(SimTime::from_secs(10));
    let d0 = sim.receiver(0).delivered();
    sim.run();
    let bps = (sim.receiver(0).delivered() - d0) as f64 * 8.0 / 20.0;
    let ceiling = 10e6 * 1460.0 / 1500.0;
    assert!(bps > 0.9 * ceiling && bps <= ceiling * 1.0001, "goodput {bps:.0} of {ceiling:.0}");
    let r = sim.finish();
    let hop = |n: &str| r.links.iter().find(|l| l.link == n).unwrap();
    assert!(hop("hop1").utilization > 0.9, "the 10 Mbps hop is busy");
    assert!(r.traces.contains_key("link/hop1/queue_packets"));
}

/// The names validation accepts for traces are the names the world gives its links.
#[test]
fn world_link_names_are_the_topologys() {
    for (text, sets) in [
        (include_str!("../../../scenarios/geo-dumbbell-droptail.toml"), vec![("topology.pairs", "3"), ("run.duration", "\"1s\"")]),
        (include_str!("../../../scenarios/kota-geo.toml"), vec![("topology.pairs", "3"), ("run.duration", "\"1s\"")]),
        (include_str!("../../../scenarios/geo-three-losses.toml"), vec![("run.duration", "\"1s\"")]),
    ] {
        let sc = scenario(text, &sets);
        let mut sim = Simulation::new(&sc);
        sim.run();
        let names: Vec<String> = sim.finish().links.into_iter().map(|l| l.link).collect();
        assert_eq!(names, sc.topology.link_names());
    }
}

/// Scripted losses at a chosen point (issue 9): at the sender the packet never leaves the host;
/// at a link it crosses the hops before that link and is dropped where it would enter the
/// link's queue, counted there as a scripted drop.
#[test]
fn scripted_loss_at_a_link_drops_where_the_packet_enters_its_queue() {
    let text = r#"
        [run]
        duration = "20s"
        [topology]
        kind = "path"
        [[links.path]]
        rate = "10Mbps"
        delay = "10ms"
        [[links.path]]
        rate = "2Mbps"
        delay = "20ms"
        [switch]
        buffer = "100pkt"
        [tcp]
        flavor = "newreno"
        mss = 1000
        [app]
        kind = "transfer"
        bytes = 100000
    "#;
    let run = |at: &str| {
        let t = format!("{text}\n        [[loss]]\n        segment = 5\n        {at}\n");
        common::run(&t, &[])
    };
    let link = |r: &sattcp_core::metrics::result::RunResult, n: &str| r.links.iter().find(|l| l.link == n).unwrap().clone();
    let (sender, default, hop1) = (run("at = \"sender\""), run(""), run("at = \"hop1\""));
    assert_eq!(sender.digest, default.digest, "at = \"sender\" is the default");
    assert!(sender.warnings.is_empty() && hop1.warnings.is_empty(), "{:?} {:?}", sender.warnings, hop1.warnings);
    assert_eq!(link(&sender, "hop0").drops_scripted, 1);
    assert_eq!(link(&sender, "hop1").drops_scripted, 0);
    assert_eq!(link(&hop1, "hop0").drops_scripted, 0);
    assert_eq!(link(&hop1, "hop1").drops_scripted, 1);
    assert_eq!(link(&hop1, "hop1").drops_by_reason.get("scripted"), Some(&1));
    // The dropped packet crossed hop0 once more than hop1 when dropped at hop1; when dropped
    // at the sender, both hops carried the same data packets.
    let data = |r: &sattcp_core::metrics::result::RunResult, n: &str| link(r, n).packets;
    assert_eq!(data(&hop1, "hop0"), data(&hop1, "hop1") + 1);
    assert_eq!(data(&sender, "hop0"), data(&sender, "hop1"));
    for r in [&sender, &hop1] {
        assert_eq!(r.flows[0].delivered_bytes, 100_000);
        assert_eq!(r.flows[0].segments_retransmitted, 1, "one loss, one retransmission");
    }
}

/// Per-flow TCP settings (issue 9): two flows with different flavours on one dumbbell, under
/// the same scripted losses, each behave as that flavour alone would (same recoveries, same
/// retransmissions, same bytes, completion within a few bottleneck transmission times).
#[test]
fn two_flavours_on_one_dumbbell_each_behave_as_alone() {
    let base = r#"
        [run]
        duration = "60s"
        [topology]
        pairs = 2
        [links.access]
        rate = "10Mbps"
        delay = "1ms"
        [links.bottleneck]
        rate = "1Gbps"
        delay = "50ms"
        [switch]
        buffer = "1000pkt"
        [tcp]
        mss = 1000
        ssthresh = "64KB"
        [app]
        kind = "transfer"
        bytes = 400000
        [[loss]]
        flow = 0
        segment = 40
        [[loss]]
        flow = 0
        segment = 41
        [[loss]]
        flow = 0
        segment = 43
        [[loss]]
        flow = 1
        segment = 40
        [[loss]]
        flow = 1
        segment = 41
        [[loss]]
        flow = 1
        segment = 43
    "#;
    let mixed = common::run(&format!("{base}\n        [[tcp.groups]]\n        flows = [1]\n        flavor = \"sack\"\n"), &[("tcp.flavor", "reno")]);
    let reno = common::run(base, &[("tcp.flavor", "reno")]);
    let sack = common::run(base, &[("tcp.flavor", "sack")]);
    let sig = |f: &sattcp_core::metrics::result::FlowResult| (f.fast_retransmits, f.timeouts, f.segments_retransmitted, f.delivered_bytes, f.segments_sent);
    assert_eq!(sig(&mixed.flows[0]), sig(&reno.flows[0]), "flow 0 behaves as Reno");
    assert_eq!(sig(&mixed.flows[1]), sig(&sack.flows[1]), "flow 1 behaves as SACK");
    assert_ne!(sig(&reno.flows[0]), sig(&sack.flows[0]), "the two flavours differ under these losses");
    for (m, alone) in [(&mixed.flows[0], &reno.flows[0]), (&mixed.flows[1], &sack.flows[1])] {
        let (a, b) = (m.completed_at_s.unwrap(), alone.completed_at_s.unwrap());
        assert!((a - b).abs() < 1e-3, "flow {}: completes at {a} mixed, {b} alone", m.flow);
    }
}

/// Finite receive buffer (issue 9): B bytes limit one bulk flow over round trip R to B/R.
#[test]
fn a_receive_buffer_of_b_bytes_limits_a_bulk_flow_to_b_over_r() {
    // The window field could offer 65535 << 2 = 262 KB; the buffer offers 146,000 bytes
    // (100 segments of 1460).
    let sc = scenario(WINDOW_LIMITED, &[("tcp.window_scale", "2"), ("tcp.receive_buffer", "146000")]);
    let mut sim = Simulation::new(&sc);
    sim.run_until(SimTime::from_secs(20));
    let d0 = sim.receiver(0).delivered();
    sim.run_until(SimTime::from_secs(120));
    let bps = (sim.receiver(0).delivered() - d0) as f64 * 8.0 / 100.0;
    // R = 580 ms of propagation + one 1500-byte packet at 100 Mbps (120 us) + its ACK (3.2 us).
    let r = 0.580 + 1500.0 * 8.0 / 100e6 + 40.0 * 8.0 / 100e6;
    let want = 146_000.0 * 8.0 / r;
    assert!((bps / want - 1.0).abs() < 0.02, "throughput {bps:.0} bps, B/R = {want:.0}");
    // Without the buffer the window field allows 262 KB per round trip: the limit is the buffer's.
    let mut free = Simulation::new(&scenario(WINDOW_LIMITED, &[("tcp.window_scale", "2")]));
    free.run_until(SimTime::from_secs(120));
    assert!(free.receiver(0).delivered() as f64 > 1.5 * sim.receiver(0).delivered() as f64);
}

/// A bulk writer and a reader that stops reading from `stop` to `resume`.
struct StallingReader {
    flow: sattcp_core::net::packet::FlowId,
    stop: SimTime,
    resume: SimTime,
}

impl sattcp_core::app::App for StallingReader {
    fn start(&mut self, cx: &mut sattcp_core::app::AppCx<'_>) {
        cx.open_at(self.flow, SimTime::ZERO);
        cx.set_timer(Some(self.resume));
    }
    fn on_open(&mut self, cx: &mut sattcp_core::app::AppCx<'_>, flow: u32) {
        cx.write(flow, 1 << 40);
    }
    fn on_readable(&mut self, cx: &mut sattcp_core::app::AppCx<'_>, flow: u32, _readable: u64) {
        if cx.now() < self.stop || cx.now() >= self.resume {
            cx.read(flow, u64::MAX);
        }
    }
    fn on_timer(&mut self, cx: &mut sattcp_core::app::AppCx<'_>) {
        cx.read(self.flow, u64::MAX);
    }
}

/// Finite receive buffer (issue 9): a reader that stops lets the window close to zero; the
/// sender's persist timer probes it; when the reader resumes the flow recovers its B/R rate
/// and every byte arrives once.
#[test]
fn a_reader_that_stops_and_resumes_gives_a_zero_window_the_persist_timer_rides_out() {
    let text = r#"
        [run]
        duration = "30s"
        [topology]
        kind = "path"
        [[links.path]]
        rate = "10Mbps"
        delay = "50ms"
        [switch]
        buffer = "1000pkt"
        [tcp]
        mss = 1000
        window_scale = 1
        receive_buffer = 64000
        ssthresh = "1MB"
    "#;
    let sc = scenario(text, &[]);
    let (stop, resume) = (SimTime::from_secs(5), SimTime::from_secs(12));
    let mut sim = Simulation::with_apps(&sc, |s| {
        let (a, b) = s.endpoints[0];
        let flow = s.flow(sattcp_core::app::Role::Data, a, b);
        s.app(Box::new(StallingReader { flow, stop, resume }), &[flow]);
    });
    sim.run_until(SimTime::from_secs(11));
    assert_eq!(sim.receiver(0).window(), 0, "the buffer is full: zero window");
    assert_eq!(sim.receiver(0).readable(), 64_000, "unread bytes fill the buffer");
    assert!(sim.sender(0).in_persist(), "the sender waits on its persist timer");
    let stalled = sim.receiver(0).delivered();
    let probes = sim.sender(0).stats().window_probes;
    assert!(probes >= 2, "the persist timer probes the zero window ({probes} probes)");
    sim.run_until(SimTime::from_secs(20));
    let d20 = sim.receiver(0).delivered();
    sim.run();
    let d30 = sim.receiver(0).delivered();
    assert!(!sim.sender(0).in_persist());
    // Back to B/R: 64,000 bytes per ~102 ms round trip, about 5 Mbps.
    let bps = (d30 - d20) as f64 * 8.0 / 10.0;
    let r = 0.100 + 1040.0 * 8.0 / 10e6 + 40.0 * 8.0 / 10e6;
    assert!((bps / (64_000.0 * 8.0 / r) - 1.0).abs() < 0.02, "after resuming: {bps:.0} bps");
    assert!(d20 > stalled + 64_000, "reading resumed and data flowed again");
    assert_eq!(sim.receiver(0).stats().duplicate_bytes, 0, "no byte arrived twice");
    assert_eq!(sim.receiver(0).received(), d30 + sim.receiver(0).readable(), "every in-order byte read or waiting");
}

/// Graph topology (issue 9): routes are shortest paths by delay, then fewest hops; C is the
/// named bottleneck's.
#[test]
fn graph_routes_follow_the_shortest_paths() {
    let text = include_str!("../../../scenarios/graph-diamond.toml");
    let r = common::run(text, &[]);
    let link = |n: &str| r.links.iter().find(|l| l.link == n).unwrap_or_else(|| panic!("{n}"));
    // a -> b: r1->r2 (10 ms), not r1->r3->r2 (20 ms); c -> d: r1->r3.
    assert!(link("r1->r2").packets > 1000 && link("r1->r3").packets > 1000);
    assert_eq!(link("r3->r2").packets, 0, "the longer branch carries nothing");
    assert!(r.flows.iter().all(|f| f.delivered_bytes > 1_000_000), "both flows deliver");
    assert!((r.summary.capacity_bps - 10e6 * 1460.0 / 1500.0).abs() < 1e-6, "C of the 10 Mbps bottleneck");
    // Equal delays: the path with fewer hops wins (r1->r2 at 20 ms against r1->r3->r2).
    let tied = common::run(&text.replacen("delay = \"10ms\"", "delay = \"20ms\"", 1), &[]);
    let l = |n: &str| tied.links.iter().find(|l| l.link == n).unwrap().packets;
    assert!(l("r1->r2") > 1000 && l("r3->r2") == 0);
}

/// Prefetching (on where the flows' and hops' state passes 1 MiB) is a hint: with it and
/// without it a run is the same run, event for event (issue 15). A dumbbell of 1,000 flows (on
/// by default), of 10 flows (off by default), the seeds' ATM study scenario (ports: hops
/// without a single link) and a LEO path of moving links.
#[test]
fn prefetching_does_not_change_a_run() {
    const DUMBBELL: &str = include_str!("../../../scenarios/geo-dumbbell-droptail.toml");
    const KOTA: &str = include_str!("../../../scenarios/kota-geo.toml");
    const LEO: &str = include_str!("../../../scenarios/leo-paris-moscow-isl.toml");
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);
    let cases: [Case; 4] = [
        ("1,000 flows", DUMBBELL, vec![("tcp.mss", "1024"), ("topology.pairs", "1000"), ("links.bottleneck.rate", "450Mbps"), ("app.stagger", "1ms"), ("run.duration", "3s")]),
        ("10 flows", DUMBBELL, vec![("tcp.mss", "1024"), ("topology.pairs", "10"), ("links.bottleneck.rate", "4500kbps"), ("run.duration", "5s")]),
        ("ATM", KOTA, vec![("run.duration", "5s")]),
        ("LEO", LEO, vec![("run.duration", "5s")]),
    ];
    for (name, text, sets) in cases {
        let sc = scenario(text, &sets);
        let [off, on] = [false, true].map(|prefetch| {
            let mut sim = Simulation::new(&sc);
            sim.set_prefetch(prefetch);
            sim.run();
            sim.finish()
        });
        assert!(on.events > 1000, "{name}: {} events", on.events);
        assert_eq!((on.digest.as_str(), on.events), (off.digest.as_str(), off.events), "{name}");
        assert_eq!(serde_json::to_string(&on.flows).unwrap(), serde_json::to_string(&off.flows).unwrap(), "{name}");
    }
}

#[test]
fn bulk_flows_that_open_after_the_end_are_named_in_the_warnings() {
    let dumbbell = include_str!("../../../scenarios/geo-dumbbell-droptail.toml");
    let short = [("topology.pairs", "3"), ("run.duration", "\"3s\"")];
    // Starts at 0, 2 and 4 s: the last one after the end.
    let r = run(dumbbell, &[short[0], short[1], ("app.stagger", "\"2s\"")]);
    assert_eq!(r.flows.iter().map(|f| f.bytes_sent > 0).collect::<Vec<_>>(), [true, true, false]);
    let w: Vec<_> = r.warnings.iter().filter(|w| w.contains("at or after the run's end")).collect();
    assert_eq!(w, ["1 of 3 flows open at or after the run's end (3 s), so send nothing (the first: flow 2 at 4 s): check app.start and app.stagger against run.duration"]);
    let r = run(dumbbell, &[short[0], short[1], ("app.start", "\"5s\"")]);
    assert!(r.warnings.iter().any(|w| w.starts_with("3 of 3 flows open at or after")), "{:?}", r.warnings);
    let r = run(dumbbell, &short);
    assert!(r.warnings.iter().all(|w| !w.contains("run's end")), "{:?}", r.warnings);
    // Applications that open as they run (WWW) are not second-guessed: a short run is theirs.
    let r = run(include_str!("../../../scenarios/kota-geo.toml"), &[("run.duration", "\"2s\"")]);
    assert!(r.warnings.iter().all(|w| !w.contains("run's end")), "{:?}", r.warnings);
}
