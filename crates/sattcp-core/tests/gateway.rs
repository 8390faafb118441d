//! Seed 004's satellite gateway in the world: the analytic single-connection throughput and
//! backlog (§II.A), reliability under bit errors for every scheme, bad input.

mod common;

use common::{run, scenario};
use sattcp_core::metrics::result::RunResult;
use sattcp_core::scenario::load;

const SINGLE: &str = include_str!("../../../scenarios/zhou-single.toml");

/// Per connection: (bytes the client holds, completion time) for any scheme.
fn client_bytes(r: &RunResult) -> Vec<(u64, Option<f64>)> {
    match r.sections.get("gateway") {
        Some(g) => g["conns"].as_array().unwrap().iter().map(|c| (c["delivered_bytes"].as_u64().unwrap(), c["completed_at_s"].as_f64())).collect(),
        None => r.flows.iter().filter(|f| f.role == "data").map(|f| (f.delivered_bytes, f.completed_at_s)).collect(),
    }
}

/// Mean of a recorded-on-change series over [a, b) (time-weighted).
fn mean_over(t: &[f64], v: &[f64], a: f64, b: f64) -> f64 {
    let mut acc = 0.0;
    for i in 0..t.len() {
        let start = t[i].max(a);
        let end = t.get(i + 1).copied().unwrap_or(b).min(b);
        if end > start {
            acc += v[i] * (end - start);
        }
    }
    acc / (b - a)
}

/// Value of a recorded-on-change series at time `x`.
fn at(t: &[f64], v: &[f64], x: f64) -> f64 {
    let i = t.partition_point(|&ti| ti <= x);
    if i == 0 { 0.0 } else { v[i - 1] }
}

#[test]
fn single_connection_throughput_and_backlog_follow_the_analysis() {
    // Seed 004 §II.A: throughput = min(SatBW, Buff / (SatRTT + TerrRTT)), backlog =
    // max(0, Buff - SatBW (SatRTT + TerrRTT)); SatBW is the rate left after headers.
    let sat_bw: f64 = 600_000.0 * 512.0 / 552.0;
    // The loop's round trip: propagation (SatRTT 500 ms + TerrRTT 80 ms) plus one 552-byte
    // packet and one 40-byte ACK serialised on each leg (600 kbps and 1 Mbps satellite and
    // return, 1.2 Mbps terrestrial): 11.6 ms.
    let rtt = 0.5 + 0.08 + 552.0 * 8.0 / 600e3 + 40.0 * 8.0 / 1e6 + (552.0 + 40.0) * 8.0 / 1.2e6;
    for buffer in [31_000.0f64, 41_000.0, 50_000.0] {
        let r = run(SINGLE, &[("gateway.buffer", &format!("{buffer}B").replace(".0B", "B")), ("app.kind", "bulk"), ("run.duration", "60s")]);
        let tr = &r.traces["sgw/0/client_segments"];
        // Steady state: from 20 s to 60 s.
        let segs = at(&tr.t, &tr.v, 60.0) - at(&tr.t, &tr.v, 20.0);
        let got = segs * 512.0 * 8.0 / 40.0;
        let want = sat_bw.min(buffer * 8.0 / rtt);
        println!("buffer {buffer}: throughput {got:.0} bps, analytic {want:.0}");
        assert!((got - want).abs() / want < 0.03, "buffer {buffer}: {got} vs {want}");
        let bl = &r.traces["sgw/0/backlog_bytes"];
        let backlog = mean_over(&bl.t, &bl.v, 20.0, 60.0);
        let want_backlog = (buffer - sat_bw / 8.0 * rtt).max(0.0);
        println!("buffer {buffer}: backlog {backlog:.0} B, analytic {want_backlog:.0}");
        assert!((backlog - want_backlog).abs() < 0.03 * buffer, "buffer {buffer}: backlog {backlog} vs {want_backlog}");
    }
}

#[test]
fn every_byte_reaches_its_client_once_in_order_under_bit_errors() {
    for scheme in ["sgw", "split_tcp", "e2e"] {
        for (ber, seed) in [(1e-6, "1"), (1e-5, "2")] {
            let r = run(SINGLE, &[("gateway.scheme", scheme), ("gateway.satellite.ber", &ber.to_string()), ("run.seed", seed), ("run.duration", "600s"), ("app.bytes", "300KB")]);
            let got = client_bytes(&r);
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].0, 300_000, "{scheme} at BER {ber}: the client got {} bytes", got[0].0);
            assert!(got[0].1.is_some(), "{scheme} at BER {ber}: not complete");
            let sat = r.links.iter().find(|l| l.link == "sat").unwrap();
            assert!(sat.drops_corrupted > 0, "{scheme} at BER {ber}: no packet was corrupted");
        }
    }
}

/// A copy the satellite timer queued, or a segment queued as lost, that the client
/// acknowledged before it left made the transmitter panic ("a ready connection has a
/// packet"): with timer_copies = 3 at BER 1e-4 in 8 of 20 seeds of one connection, and with
/// the default two copies for three connections (seed 17). Every seed completes now, every
/// byte delivered once.
#[test]
fn queued_copies_acknowledged_before_they_leave_do_not_stop_the_gateway() {
    let three = "[{rate = \"1.2Mbps\", delay = \"40ms\"}, {rate = \"1.2Mbps\", delay = \"40ms\"}, {rate = \"1.2Mbps\", delay = \"40ms\"}]";
    let cases = [("3", None, ["1", "7", "8", "9", "10"]), ("2", Some(three), ["17", "1", "2", "3", "4"]), ("3", Some(three), ["1", "2", "3", "4", "6"])];
    for (copies, servers, seeds) in cases {
        for seed in seeds {
            let mut sets = vec![("gateway.timer_copies", copies), ("gateway.satellite.ber", "1e-4"), ("app.bytes", "200KB"), ("run.duration", "600s"), ("run.seed", seed)];
            if let Some(s) = servers {
                sets.push(("gateway.servers", s));
            }
            let r = run(SINGLE, &sets);
            let got = client_bytes(&r);
            let n = if servers.is_some() { 3 } else { 1 };
            assert_eq!(got.len(), n);
            for (i, (bytes, done)) in got.iter().enumerate() {
                assert_eq!((*bytes, done.is_some()), (200_000, true), "timer_copies {copies}, {n} servers, seed {seed}: connection {i}");
            }
            // The servers' TCP flows to the SGW carried each byte once too.
            assert!(r.flows.iter().all(|f| f.delivered_bytes == 200_000), "seed {seed}: {:?}", r.flows.iter().map(|f| f.delivered_bytes).collect::<Vec<_>>());
            let sat = r.links.iter().find(|l| l.link == "sat").unwrap();
            assert!(sat.drops_corrupted > 0, "seed {seed}: no packet was corrupted");
        }
    }
}

/// Split TCP over loss-free links retransmits nothing. The terrestrial leg's persist timer
/// sent what a window smaller than a segment took (511 bytes of 41 KB); an ACK that left the
/// SGW before it arrived opened the window further, and the server resent the probe still in
/// flight (3 segments, 552 duplicate bytes in zhou-single); likewise a one-byte zero-window
/// probe that a window update overtook.
///
/// One retransmission remains by design: with a smaller buffer (31 KB) the window closes
/// completely, the one-octet zero-window probe of RFC 9293 §3.8.6.1 reaches a receiver with no
/// room and is refused (not a link's loss: the receiver drops it), and it is resent when the
/// window opens, as BSD does. Those are one-byte segments, and nothing arrives twice.
#[test]
fn split_tcp_on_loss_free_links_retransmits_nothing() {
    for (buffer, app, refused_probes) in [("41KB", "transfer", false), ("41KB", "bulk", false), ("50KB", "transfer", false), ("87KB", "bulk", false), ("31KB", "transfer", true)] {
        let r = run(SINGLE, &[("gateway.scheme", "split_tcp"), ("gateway.buffer", buffer), ("app.kind", app), ("run.duration", "80s")]);
        let case = format!("buffer {buffer}, {app}");
        for l in &r.links {
            assert_eq!((l.drops_queue_full, l.drops_corrupted, l.drops_scripted), (0, 0, 0), "{case}: link {} lost packets", l.link);
        }
        for f in &r.flows {
            let what = format!("{case}: flow {} ({})", f.flow, f.role);
            assert_eq!((f.duplicate_bytes, f.timeouts, f.fast_retransmits), (0, 0, 0), "{what}");
            if refused_probes && f.role == "relay" {
                assert!(f.segments_retransmitted > 0, "{what}: the window no longer closes?");
                assert_eq!(f.bytes_retransmitted, f.segments_retransmitted, "{what}: only one-byte probes are resent");
            } else {
                assert_eq!((f.segments_retransmitted, f.bytes_retransmitted), (0, 0), "{what} retransmitted");
            }
        }
        if app == "transfer" {
            assert_eq!(client_bytes(&r)[0].0, 3_000_000);
        }
    }
}

#[test]
fn bad_gateway_input_names_the_key() {
    let cases = [
        ("gateway.buffer", "100B", "gateway.buffer: must hold at least one segment"),
        ("gateway.ack_every", "0", "gateway.ack_every: must be an integer N >= 1"),
        ("gateway.scheme", "\"pep\"", "gateway.scheme: must be one of"),
        ("gateway.satellite.payload_rate", "\"1Mbps\"", "gateway.satellite.payload_rate: applies to ATM links only"),
    ];
    for (key, value, want) in cases {
        let err = load(SINGLE, &[(key.to_string(), sattcp_core::scenario::parse_override_value(value))], None).unwrap_err().to_string();
        assert!(err.contains(want), "{key} = {value}: {err}");
    }
    let err = load(&SINGLE.replace("buffer = \"41KB\"", "peak_rate = \"900kbps\""), &[], None).unwrap_err().to_string();
    assert!(err.contains("gateway.peak_rate: must not exceed the satellite link's rate"), "{err}");
    // A peak rate within the link sets each buffer from its connection's RTT.
    let sc = scenario(&SINGLE.replace("buffer = \"41KB\"", "peak_rate = \"300kbps\""), &[]);
    let sattcp_core::scenario::Topology::Gateway(g) = &sc.topology else { panic!("a gateway topology") };
    assert_eq!(g.buffers, vec![300_000 / 8 * 58 / 100]);
}


#[test]
fn split_tcp_survives_scripted_losses_of_retransmissions_on_the_satellite_hop() {
    // Split TCP: flow 1 is the satellite leg (SGW -> client). Its segment 10 is dropped on the
    // satellite link at its first, second and third transmission; segment 20 at its first two.
    // (The sgw scheme's own satellite leg is tested with lost retransmissions in
    // pep::sat_sender and pep::gateway, where every 7th transmission, retransmissions
    // included, is lost.)
    // Without the sgw scheme's keys, which split TCP would warn of.
    let mut text = SINGLE.replace("semantics = \"modified\"\nack_every = 1\n", "");
    for (seg, tx) in [(10, 0), (10, 1), (10, 2), (20, 0), (20, 1)] {
        text.push_str(&format!("\n[[loss]]\nflow = 1\nsegment = {seg}\ntransmission = {tx}\nat = \"sat\"\n"));
    }
    let r = run(&text, &[("gateway.scheme", "split_tcp"), ("app.bytes", "200KB"), ("run.duration", "300s")]);
    assert!(r.warnings.is_empty(), "every scripted loss happened: {:?}", r.warnings);
    let sat = r.links.iter().find(|l| l.link == "sat").unwrap();
    assert_eq!(sat.drops_scripted, 5);
    assert_eq!(client_bytes(&r), vec![(200_000, client_bytes(&r)[0].1)]);
    assert!(client_bytes(&r)[0].1.is_some());
    let leg = &r.flows[1];
    assert!(leg.segments_retransmitted >= 5 && leg.timeouts >= 1, "{leg:?}");
}
