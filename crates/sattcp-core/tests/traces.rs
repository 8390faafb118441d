//! Packet traces of whole runs: the log agrees with the run's counters, recording changes
//! nothing, the bounds hold, and the pcapng file has one interface per link with the log's
//! transmissions and drops.

mod common;
use common::run;
use sattcp_core::net::packet::{flags, Dir, SackBlock};
use sattcp_core::trace::memory::MemorySource;
use sattcp_core::trace::{pcapng, DropReason, EventKind, MemoryStop, PacketEvent, PacketLog, NO_LINK};
use sattcp_core::Simulation;

/// One SACK flow through a dumbbell whose bottleneck queue (8 packets) overflows in slow start,
/// a scripted loss of segment 5, and bit errors on the bottleneck.
const DUMBBELL: &str = r#"
    [run]
    duration = "3s"
    seed = 3
    [topology]
    pairs = 2
    [links.access]
    rate = "100Mbps"
    delay = "1ms"
    [links.bottleneck]
    rate = "10Mbps"
    delay = "20ms"
    ber = 5e-7
    [switch]
    buffer = "4pkt"
    [tcp]
    flavor = "sack"
    mss = 1000
    window = 65535
    window_scale = 4
    [app]
    kind = "bulk"
    [[loss]]
    flow = 0
    segment = 5
    [trace]
    packets = "all"
"#;

fn count(log: &PacketLog, f: impl Fn(&PacketEvent) -> bool) -> u64 {
    log.events().iter().filter(|e| f(e)).count() as u64
}

#[test]
fn the_log_agrees_with_the_runs_counters() {
    let r = run(DUMBBELL, &[]);
    let log = r.packets.as_ref().expect("packets traced");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let ev = log.events();
    assert!(ev.windows(2).all(|w| w[0].t <= w[1].t), "sorted by time");
    assert!(ev.iter().all(|e| e.t.as_secs_f64() <= 3.0));
    // Something of every kind happened, drops for three reasons.
    for k in EventKind::ALL {
        assert!(count(log, |e| e.kind == k) > 0, "{k:?}");
    }
    for (i, l) in r.links.iter().enumerate() {
        let on = |e: &PacketEvent| e.link == i as u32;
        // Every packet a link accepted, every packet its queue refused, every corrupted one.
        assert_eq!(count(log, |e| on(e) && e.kind == EventKind::Queued), l.packets, "{}", l.link);
        assert_eq!(count(log, |e| on(e) && e.kind == EventKind::Dropped && e.reason == DropReason::QueueFull), l.drops_queue_full, "{}", l.link);
        // Corrupted packets still in flight at the end are discarded after it.
        assert!(count(log, |e| on(e) && e.kind == EventKind::Dropped && e.reason == DropReason::Corrupted) <= l.drops_corrupted, "{}", l.link);
        // Transmissions that start by the end of the run.
        assert!(count(log, |e| on(e) && e.kind == EventKind::Dequeued) <= l.packets);
    }
    assert!(r.links[0].drops_queue_full > 0 && r.links[0].drops_corrupted > 0, "the scenario exercises both drops: {:?}", r.links[0]);
    assert_eq!(count(log, |e| e.kind == EventKind::Dropped && e.reason == DropReason::Scripted && e.link == NO_LINK && e.flow == 0), 1);
    for f in &r.flows {
        let sent = count(log, |e| e.kind == EventKind::Sent && e.flow == f.flow && e.dir == Dir::Data && e.flags & flags::SYN == 0);
        assert_eq!(sent, f.segments_sent, "flow {}", f.flow);
    }
    // A packet's dequeue on a link follows its queueing there, at the link's rate order.
    for d in ev.iter().filter(|e| e.kind == EventKind::Dequeued) {
        let q = ev.iter().find(|e| e.uid == d.uid && e.link == d.link && e.kind == EventKind::Queued).expect("queued first");
        assert!(q.t <= d.t);
    }
    // The scripted loss drops segment 5 (bytes 5001..6001) at the sender; the ACKs that come
    // back next acknowledge 5001 and SACK what arrived beyond it, a growing block from 6001.
    let lost = ev.iter().find(|e| e.reason == DropReason::Scripted).unwrap();
    assert_eq!((lost.seq, lost.len, lost.kind, lost.dir), (5001, 1000, EventKind::Dropped, Dir::Data));
    let sacks: Vec<(u64, &[SackBlock])> = ev.iter().filter(|e| e.t > lost.t && e.kind == EventKind::Received && e.flow == 0 && e.dir == Dir::Ack && e.n_sack > 0).map(|e| (e.ack, log.sack_blocks(e))).take(2).collect();
    assert_eq!(sacks, [(5001, &[SackBlock { start: 6001, end: 7001 }][..]), (5001, &[SackBlock { start: 6001, end: 8001 }][..])]);
}

#[test]
fn recording_changes_nothing() {
    let on = run(DUMBBELL, &[]);
    let off = run(DUMBBELL, &[("trace.packets", "none")]);
    assert!(off.packets.is_none());
    assert_eq!(on.digest, off.digest);
    assert_eq!(on.events, off.events);
}

#[test]
fn a_full_log_stops_and_warns() {
    let r = run(DUMBBELL, &[("trace.max_packet_events", "1000")]);
    let log = r.packets.as_ref().unwrap();
    let stop = log.stopped_at().expect("stopped");
    assert!(log.events().len() <= 1000);
    assert!(log.events().iter().all(|e| e.t < stop));
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].starts_with(&format!("packet trace stopped at {:.6} s: it reached trace.max_packet_events = 1000 events", stop.as_secs_f64())), "{}", r.warnings[0]);
    // What it holds is exactly the unbounded log's events before the stop.
    let all = run(DUMBBELL, &[]);
    let before: Vec<_> = all.packets.as_ref().unwrap().events().iter().filter(|e| e.t < stop).copied().collect();
    assert_eq!(log.events(), &before[..]);
}

#[test]
fn a_log_short_of_memory_stops_warns_and_changes_nothing() {
    // 2 MiB of memory for the log: a share of 341.3 KiB, which holds 4096 events and the SACK
    // table's first 1024 blocks (272 KiB), not 8192 events.
    let mut sc = common::scenario(DUMBBELL, &[]);
    sc.trace.packet_memory = MemorySource::Fixed(2 << 20);
    let mut sim = Simulation::new(&sc);
    sim.run();
    let r = sim.finish();
    let log = r.packets.as_ref().unwrap();
    let stop = log.stopped_at().expect("stopped");
    assert!(matches!(log.memory_stop(), Some(MemoryStop::Share { events: 4096, .. })), "{:?}", log.memory_stop());
    assert_eq!(r.warnings.len(), 1);
    let w = &r.warnings[0];
    assert!(w.starts_with(&format!("packet trace stopped at {:.6} s: the log (4096 events, 272.0 KiB) would outgrow the memory available (1.7 MiB of 2.0 MiB): grown to ", stop.as_secs_f64())), "{w}");
    assert!(w.ends_with(&format!("; {} later events were not recorded and events from that instant on are left out", log.missed())), "{w}");
    // What it holds is exactly the unbounded log's events before the stop, SACK blocks too.
    let all = run(DUMBBELL, &[]);
    let full = all.packets.as_ref().unwrap();
    let before: Vec<_> = full.events().iter().filter(|e| e.t < stop).collect();
    assert_eq!(log.events().len(), before.len());
    for (a, b) in log.events().iter().zip(before) {
        assert_eq!((a.t, a.uid, a.kind, a.seq, a.ack, log.sack_blocks(a)), (b.t, b.uid, b.kind, b.seq, b.ack, full.sack_blocks(b)));
    }
    // The tap never changes the run: the same results as without a trace.
    let off = run(DUMBBELL, &[("trace.packets", "none")]);
    assert_eq!((r.digest, r.events), (off.digest, off.events));
    assert_eq!(serde_json::to_value(&r.flows).unwrap(), serde_json::to_value(&off.flows).unwrap());
    assert_eq!(serde_json::to_value(&r.links).unwrap(), serde_json::to_value(&off.links).unwrap());
}

#[test]
fn selections_keep_their_flows_and_links() {
    let r = run(DUMBBELL, &[("trace.packets", r#"{ flows = [1], links = ["bottleneck"] }"#)]);
    let log = r.packets.as_ref().unwrap();
    assert!(!log.events().is_empty());
    assert!(log.events().iter().all(|e| e.flow == 1 && e.link == 0));
}

#[test]
fn time_series_traces_are_bounded_too() {
    // Flow 0's seven variables (cwnd, ssthresh, srtt, in flight, received, RTT samples, acked)
    // and the bottleneck's queue share 80 points: 10 each.
    let r = run(DUMBBELL, &[("trace.packets", "none"), ("trace.flows", "[0]"), ("trace.links", r#"["bottleneck"]"#), ("trace.max_points", "80")]);
    assert_eq!(r.traces.len(), 8);
    assert!(r.traces.values().all(|t| t.t.len() <= 10));
    assert_eq!(r.traces["flow/0/cwnd"].t.len(), 10);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("each traced variable holds at most 10 points, its share of trace.max_points = 80"), "{}", r.warnings[0]);
    let free = run(DUMBBELL, &[("trace.packets", "none"), ("trace.flows", "[0]"), ("trace.links", r#"["bottleneck"]"#)]);
    assert_eq!(&free.traces["flow/0/cwnd"].t[..10], &r.traces["flow/0/cwnd"].t[..]);
}

#[test]
fn the_pcapng_file_holds_each_links_transmissions_and_the_drops() {
    use pcap_file::pcapng::{Block, PcapNgReader};
    let r = run(DUMBBELL, &[]);
    let log = r.packets.as_ref().unwrap();
    let mut buf = Vec::new();
    let written = pcapng::write(log, &mut buf).unwrap();
    let mut reader = PcapNgReader::new(&buf[..]).unwrap();
    let mut per_if = vec![0u64; r.links.len() + 1];
    let mut idbs = 0;
    while let Some(b) = reader.next_block() {
        match b.unwrap() {
            Block::InterfaceDescription(_) => idbs += 1,
            Block::EnhancedPacket(p) => per_if[p.interface_id as usize] += 1,
            _ => {}
        }
    }
    assert_eq!(idbs, r.links.len() + 1);
    for (i, l) in r.links.iter().enumerate() {
        assert_eq!(per_if[i], count(log, |e| e.link == i as u32 && e.kind == EventKind::Dequeued), "{}", l.link);
    }
    assert_eq!(per_if[r.links.len()], count(log, |e| e.kind == EventKind::Dropped));
    assert_eq!(written.wire + written.drops, per_if.iter().sum::<u64>());
}

#[test]
fn atm_frames_lost_at_the_switch_port_are_dropped_on_the_bottleneck() {
    let text = include_str!("../../../scenarios/kota-geo.toml");
    let r = run(text, &[("topology.pairs", "4"), ("run.duration", "20s"), ("app.kind", "bulk"), ("switch.policy", "ubr"), ("switch.buffer", "200cells"), ("tcp.mss", "1024"), ("trace.packets", "all")]);
    let log = r.packets.as_ref().unwrap();
    let bn = &r.links[0];
    assert_eq!(bn.link, "bottleneck");
    let lost = count(log, |e| e.kind == EventKind::Dropped && e.reason == DropReason::AtmFrame && e.link == 0);
    // Frames dropped whole are reported when a later frame of their VC completes, so some
    // may still be pending at the end: at most the port's whole drops plus the frames
    // discarded at reassembly.
    assert!(lost > 0 && lost <= bn.drops_queue_full + bn.frames_discarded.unwrap(), "{lost} frames lost, link {bn:?}");
    // Each host's frames are queued and sent as cells on its access link.
    let src0 = r.links.iter().position(|l| l.link == "src0->r1").unwrap() as u32;
    assert_eq!(count(log, |e| e.link == src0 && e.kind == EventKind::Queued), r.links[src0 as usize].packets);
    assert!(count(log, |e| e.kind == EventKind::Received && e.dir == Dir::Data) > 0);
    let mut buf = Vec::new();
    let w = pcapng::write(log, &mut buf).unwrap();
    assert_eq!(w.drops, count(log, |e| e.kind == EventKind::Dropped));
}
