//! Hop chaining (`run.chain_hops`, issue 15): a packet crosses a drop-tail link that only one
//! other link feeds without an engine event of its own (`net::topology::single_feeders`,
//! `World::chain`). Every figure of the result must be the one the run without chaining gives:
//! per-flow and per-link tables, summary, time-series traces, application sections, warnings.
//! Only the engine's event count and the digest of the events popped differ.
//!
//! Each case runs twice, off and on, and compares the whole JSON result but `events` and
//! `digest` (top level and summary). The cases cover what a chained hop must reproduce: queues
//! that build and overflow on the chained link (finite access buffers), bit errors on the
//! feeder and on the chained link, scripted losses where a packet enters a chained link,
//! delayed-ACK timers that fall on the same nanosecond as chained arrivals (round rates and
//! delays), the WWW workload (segments of every size), moving links next to fixed ones, graphs,
//! the gateway system, traced flows and links, and ATM ports (never chained: same digest).

mod common;

use sattcp_core::metrics::result::RunResult;
use serde_json::Value;

const GEO_BULK: &str = include_str!("../../../scenarios/geo-bulk.toml");
const DUMBBELL: &str = include_str!("../../../scenarios/geo-dumbbell-droptail.toml");
const THREE_LOSSES: &str = include_str!("../../../scenarios/geo-three-losses.toml");
const DIAMOND: &str = include_str!("../../../scenarios/graph-diamond.toml");
const KOTA_GEO: &str = include_str!("../../../scenarios/kota-geo.toml");
const KOTA_WAN: &str = include_str!("../../../scenarios/kota-wan.toml");
const STARLINK: &str = include_str!("../../../scenarios/modern-starlink.toml");
const LEO_BENTPIPE: &str = include_str!("../../../scenarios/leo-paris-moscow-bentpipe.toml");
const MIXED: &str = include_str!("../../../scenarios/mixed-flavours.toml");
const ZHOU: &str = include_str!("../../../scenarios/zhou-single.toml");

/// Three hops, round figures: 8 Mbps access hops around a 1 Mbps middle hop, MSS 960 (1,000
/// bytes on the wire: 1 ms and 8 ms of serialisation), delays in whole milliseconds, delayed
/// ACKs with a 100 ms timer, so that many events fall on the same nanosecond.
const ROUND_PATH: &str = r#"
name = "round-path"
[run]
duration = "20s"
[topology]
kind = "path"
[[links.path]]
rate = "8Mbps"
delay = "2ms"
[[links.path]]
rate = "1Mbps"
delay = "40ms"
queue = "12pkt"
[[links.path]]
rate = "8Mbps"
delay = "2ms"
[tcp]
flavor = "newreno"
mss = 960
delayed_ack = true
delack_timeout = "100ms"
[app]
kind = "bulk"
[trace]
flows = [0]
links = ["hop1", "hop2"]
"#;

/// `text` with `sets` run without and with chaining; panics at the first differing figure.
/// Returns the two results (off, on).
#[track_caller]
fn same(text: &str, sets: &[(&str, &str)]) -> (RunResult, RunResult) {
    let off = common::run(text, &[sets, &[("run.chain_hops", "false")]].concat());
    let on = common::run(text, &[sets, &[("run.chain_hops", "true")]].concat());
    let strip = |r: &RunResult| {
        let mut v = serde_json::to_value(r).expect("serialisable");
        let o = v.as_object_mut().unwrap();
        o.remove("events");
        o.remove("digest");
        o.get_mut("summary").unwrap().as_object_mut().unwrap().remove("events");
        v
    };
    let (a, b) = (strip(&off), strip(&on));
    if a != b {
        panic!("{}", first_difference("", &a, &b).unwrap_or_else(|| "results differ".into()));
    }
    (off, on)
}

/// Where two JSON values first differ (path: off vs on).
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let vb = y.get(k).unwrap_or(&Value::Null);
                if let Some(d) = first_difference(&format!("{path}.{k}"), va, vb) {
                    return Some(d);
                }
            }
            y.keys().find(|k| !x.contains_key(*k)).map(|k| format!("{path}.{k}: only with chaining"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x.iter().zip(y).enumerate().find_map(|(i, (va, vb))| first_difference(&format!("{path}[{i}]"), va, vb)),
        _ if a != b => Some(format!("{path}: off {a}, on {b}")),
        _ => None,
    }
}

/// Both runs agree and chaining saved events.
#[track_caller]
fn fewer(text: &str, sets: &[(&str, &str)]) -> (u64, u64) {
    let (off, on) = same(text, sets);
    assert!(on.events < off.events, "no event saved: {} off, {} on", off.events, on.events);
    assert_ne!(on.digest, off.digest);
    (off.events, on.events)
}

#[test]
fn one_flow_dumbbell_crosses_the_bottleneck_and_the_far_link_in_one_event() {
    // One pair: the bottleneck is fed by the source's access link alone, the far access link
    // by the bottleneck. A segment and its ACK: 6 hop events without chaining, 2 with.
    let (off, on) = fewer(GEO_BULK, &[("run.duration", "\"20s\"")]);
    let r = common::run(GEO_BULK, &[("run.duration", "\"20s\""), ("run.chain_hops", "true")]);
    assert_eq!(r.events, on);
    // The hop events per packet drop from 3 to 1 each way (timers are the rest).
    assert!((on as f64) < 0.4 * off as f64, "{off} -> {on}");
}

#[test]
fn dumbbells_with_competing_flows_agree() {
    fewer(DUMBBELL, &[("topology.pairs", "10"), ("run.duration", "\"20s\""), ("tcp.flavor", "sack")]);
    fewer(DUMBBELL, &[("topology.pairs", "10"), ("run.duration", "\"20s\""), ("tcp.flavor", "vanilla")]);
    fewer(DUMBBELL, &[("topology.pairs", "10"), ("run.duration", "\"20s\""), ("tcp.profile", "ns2"), ("tcp.ns2.random_tick_phase", "true")]);
    fewer(MIXED, &[("run.duration", "\"20s\"")]);
}

#[test]
fn chained_links_that_queue_drop_and_corrupt_agree() {
    // Slow access links with small buffers: the far access link (chained) queues and drops;
    // bit errors on the access links and the bottleneck (a packet corrupted on the feeder is
    // not chained: the far node discards it).
    let sets = [
        ("topology.pairs", "4"),
        ("run.duration", "\"20s\""),
        ("links.access.rate", "\"6Mbps\""),
        ("links.access.queue", "\"8pkt\""),
        ("links.access.ber", "1e-6"),
        ("links.bottleneck.ber", "1e-7"),
        ("links.bottleneck.delay", "\"10ms\""),
        ("tcp.mss", "1024"),
        ("tcp.flavor", "newreno"),
        ("trace.flows", "[0, 3]"),
        ("trace.links", "[\"r2->dst0\", \"r1->src1\", \"bottleneck\"]"),
    ];
    let (off, on) = same(DUMBBELL, &sets);
    let link = |name: &str| off.links.iter().find(|l| l.link == name).unwrap();
    assert!(link("r2->dst0").drops_corrupted > 0 && link("bottleneck").drops_corrupted > 0, "{:?} {:?}", link("r2->dst0"), link("bottleneck"));
    assert!(on.events < off.events);
    // A chained hop slower than its feeder: its queue builds and overflows.
    let path = "[{ rate = \"8Mbps\", delay = \"2ms\" }, { rate = \"4Mbps\", delay = \"40ms\", ber = 1e-7 }, { rate = \"1Mbps\", delay = \"2ms\", queue = \"3pkt\", ber = 2e-7 }]";
    let (off, on) = same(ROUND_PATH, &[("links.path", path)]);
    let hop2 = off.links.iter().find(|l| l.link == "hop2").unwrap();
    assert!(hop2.drops_queue_full > 0 && hop2.drops_corrupted > 0, "{hop2:?}");
    assert!(hop2.peak_queue_packets == Some(3));
    assert!(on.events < off.events);
}

#[test]
fn round_figures_and_delayed_acks_agree() {
    let (off, on) = fewer(ROUND_PATH, &[]);
    // Three hops each way, the two later ones chained.
    assert!((on as f64) < 0.6 * off as f64, "{off} -> {on}");
    fewer(ROUND_PATH, &[("tcp.flavor", "sack"), ("links.path", "[{ rate = \"8Mbps\", delay = \"2ms\" }, { rate = \"1Mbps\", delay = \"40ms\", queue = \"5pkt\" }, { rate = \"1Mbps\", delay = \"2ms\", queue = \"3pkt\" }]")]);
}

#[test]
fn scripted_losses_on_a_chained_link_agree() {
    // geo-three-losses is one hop; here three with the drops where packets enter hop 2.
    let path = "[{ rate = \"100Mbps\", delay = \"1ms\" }, { rate = \"45Mbps\", delay = \"275ms\" }, { rate = \"100Mbps\", delay = \"1ms\" }]";
    let text = THREE_LOSSES.replace("segment = 200\n", "segment = 200\nat = \"hop2\"\n").replace("segment = 203\n", "segment = 203\nat = \"hop1\"\n");
    let (off, on) = same(&text, &[("links.path", path)]);
    assert_eq!(off.links.iter().map(|l| l.drops_scripted).sum::<u64>(), 3);
    assert!(on.events < off.events);
    // One hop: nothing to chain, the same run.
    let (off, on) = same(THREE_LOSSES, &[("tcp.flavor", "newreno")]);
    assert_eq!((off.events, &off.digest), (on.events, &on.digest));
}

#[test]
fn www_over_drop_tail_routers_agrees() {
    // Requests and files of every size both ways through the same routers.
    let ip = |text: &str| -> String {
        let atm_only = ["policy =", "R =", "Z =", "buffer ="];
        text.lines().filter(|l| !atm_only.iter().any(|k| l.starts_with(k))).map(|l| if l.starts_with("kind = \"atm\"") { "kind = \"droptail\"\nbuffer = \"1bdp\"" } else { l }).collect::<Vec<_>>().join("\n")
    };
    fewer(&ip(KOTA_WAN), &[("topology.pairs", "20"), ("run.duration", "\"10s\"")]);
    fewer(&ip(KOTA_GEO), &[("topology.pairs", "20"), ("run.duration", "\"20s\""), ("tcp.flavor", "sack")]);
}

#[test]
fn graphs_moving_links_and_the_gateway_agree() {
    fewer(DIAMOND, &[("run.duration", "\"10s\"")]);
    // The moving bottleneck of a one-pair dumbbell: nothing next to it chains, the rest runs
    // as before (its traces included).
    same(STARLINK, &[("run.duration", "\"20s\""), ("trace.flows", "[0]"), ("trace.links", "[\"bottleneck\"]")]);
    same(LEO_BENTPIPE, &[("run.duration", "\"20s\"")]);
    same(ZHOU, &[("run.duration", "\"20s\"")]);
}

#[test]
fn atm_ports_are_never_chained() {
    let (off, on) = same(KOTA_GEO, &[("topology.pairs", "10"), ("run.duration", "\"10s\"")]);
    assert_eq!((off.events, &off.digest), (on.events, &on.digest));
}

#[test]
fn chaining_stays_off_while_packets_are_traced() {
    // A packet trace sees every hop's events at their instants: the run is the unchained one.
    let sets = [("run.duration", "\"5s\""), ("trace.packets", "\"all\"")];
    let off = common::run(GEO_BULK, &[&sets[..], &[("run.chain_hops", "false")]].concat());
    let on = common::run(GEO_BULK, &[&sets[..], &[("run.chain_hops", "true")]].concat());
    assert_eq!((off.events, &off.digest), (on.events, &on.digest));
}

#[test]
#[ignore = "a sweep for evidence: cargo test --release -p sattcp-core --test chain -- --ignored"]
fn sweep_of_seeds_flavours_and_round_figures_agrees() {
    let mut saved = (0u64, 0u64);
    for seed in 1..=6 {
        for flavor in ["reno", "sack", "newreno", "vanilla"] {
            for (rate, delay, mss) in [("8Mbps", "\"2ms\"", "960"), ("10Mbps", "\"1ms\"", "1460"), ("100Mbps", "\"5us\"", "1024")] {
                for delack in ["true", "false"] {
                    let sets = [
                        ("run.seed", seed.to_string()),
                        ("tcp.flavor", flavor.into()),
                        ("links.access.rate", format!("\"{rate}\"")),
                        ("links.access.delay", delay.into()),
                        ("links.access.queue", "\"10pkt\"".into()),
                        ("links.bottleneck.rate", "\"4Mbps\"".into()),
                        ("links.bottleneck.delay", "\"20ms\"".into()),
                        ("tcp.mss", mss.into()),
                        ("tcp.delayed_ack", delack.into()),
                        ("topology.pairs", "8".into()),
                        ("run.duration", "\"30s\"".into()),
                    ];
                    let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    let (off, on) = same(DUMBBELL, &sets);
                    saved.0 += off.events;
                    saved.1 += on.events;
                }
            }
        }
        let ip = KOTA_WAN.replace("kind = \"atm\"", "kind = \"droptail\"\nbuffer = \"1bdp\"").lines().filter(|l| !["policy =", "R =", "Z =", "buffer = \"531"].iter().any(|k| l.starts_with(k))).collect::<Vec<_>>().join("\n");
        same(&ip, &[("run.seed", &seed.to_string()), ("topology.pairs", "50"), ("run.duration", "\"30s\"")]);
        for flavor in ["reno", "sack"] {
            let (off, on) = same(ROUND_PATH, &[("run.seed", &seed.to_string()), ("tcp.flavor", flavor), ("links.path", "[{ rate = \"8Mbps\", delay = \"2ms\" }, { rate = \"2Mbps\", delay = \"100ms\", ber = 1e-6 }, { rate = \"1Mbps\", delay = \"2ms\", queue = \"4pkt\" }]")]);
            saved.0 += off.events;
            saved.1 += on.events;
        }
    }
    eprintln!("events: {} off, {} on", saved.0, saved.1);
}

#[test]
fn the_ping_pong_refuses_chaining() {
    // It ends the run early (AppCx::end_run): hops chained ahead of that end would count.
    let text = include_str!("../../../scenarios/netpipe-e1.toml");
    let ov = vec![("run.chain_hops".to_string(), sattcp_core::scenario::parse_override_value("true"))];
    let err = sattcp_core::scenario::load(text, &ov, None).expect_err("refused");
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(err.problems[0].path, "run.chain_hops");
    assert!(err.problems[0].rule.contains("pingpong"), "{err}");
}
