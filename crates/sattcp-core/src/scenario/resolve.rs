//! The resolved scenario: every key with its effective value, defaults included, in the
//! scenario's own key names, so that a run can be reproduced from its record alone
//! (`sattcp run --print-config`, `RunResult.to_dict()["config"]`, the store's run key).
//!
//! It is the raw scenario as read (values the user wrote are kept as written: `"45Mbps"`,
//! `"0.5bdp"`), with every key left out filled in from the validated [`Scenario`] (its
//! effective value in the key's own form: `"100s"`, `1024`, `"reno_aimd"`). The seed given
//! apart from the file (`--seed`) replaces `run.seed`. Keys that do not apply to the scenario's
//! kinds stay out (`switch.policy` of a drop-tail switch, `app.think_time` of a bulk
//! application), as do the optional keys whose absence is their meaning (`links.*.queue`,
//! `description`): the schema (`schema.rs`) says which.
//!
//! Loading the resolved scenario gives the same [`Scenario`] as the original (tested below).

use super::raw::{RawLink, RawScenario, RawTcp, RawTcpGroup, Val};
use super::validate::{AppSpec, LinkSpec, Scenario, SwitchKind, Topology};
use super::{load, raw_from_tree, ScenarioError};
use crate::app::www::{FirstBatch, Truncation};
use crate::atm::DropPolicy;
use crate::tcp::{CcKind, RecoveryKind, TcpConfig};
use crate::time::{Rate, SimTime};

/// A rate in the largest unit that keeps it exact ("45Mbps", "155520kbps").
fn rate(r: Rate) -> Val {
    let bps = r.0;
    let s = if bps.is_multiple_of(1_000_000_000) {
        format!("{}Gbps", bps / 1_000_000_000)
    } else if bps.is_multiple_of(1_000_000) {
        format!("{}Mbps", bps / 1_000_000)
    } else if bps.is_multiple_of(1_000) {
        format!("{}kbps", bps / 1_000)
    } else {
        format!("{bps}bps")
    };
    Val::Str(s)
}

/// A duration in the largest unit that keeps it exact ("275ms"; [`SimTime`]'s Display).
fn dur(t: SimTime) -> Val {
    Val::Str(t.to_string())
}

fn int(x: u64) -> Val {
    // Byte counts beyond i64 cannot be written in TOML; they stay as a string of bytes.
    i64::try_from(x).map(Val::Int).unwrap_or_else(|_| Val::Str(format!("{x}B")))
}

/// The serde name of a recovery or congestion control ("newreno_ns2", "reno_aimd").
fn serde_name<T: serde::Serialize>(x: &T) -> String {
    match serde_json::to_value(x) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The `tcp.flavor` name of a (recovery, congestion control) pair (the inverse of
/// `tcp::config::flavor`): every pair has one.
pub fn flavor_name(recovery: RecoveryKind, cc: CcKind) -> String {
    let base = match recovery {
        RecoveryKind::Timeout => "vanilla",
        RecoveryKind::Tahoe => "tahoe",
        RecoveryKind::Reno => "reno",
        RecoveryKind::NewrenoNs2 => "newreno",
        RecoveryKind::SackFallFloyd => "sack",
        RecoveryKind::NewrenoRfc6582 => "newreno_rfc6582",
        RecoveryKind::NewrenoNs3 => "newreno_ns3",
        RecoveryKind::SackRfc6675 => "sack_rfc6675",
    };
    match cc {
        CcKind::RenoAimd => base.to_string(),
        CcKind::Cubic => format!("{base}/cubic"),
        CcKind::CubicHystart => format!("{base}/cubic_hystart"),
        CcKind::Hybla => format!("{base}/hybla"),
        CcKind::Bbr => format!("{base}/bbr"),
        CcKind::Westwood => format!("{base}/westwood"),
        CcKind::WestwoodLinux => format!("{base}/westwood_linux"),
    }
}

fn fill<T>(slot: &mut Option<T>, value: T) {
    if slot.is_none() {
        *slot = Some(value);
    }
}

/// Fills the `[tcp]` keys of `tcp` not given with the values of `t`.
fn fill_tcp(tcp: &mut RawTcp, t: &TcpConfig) {
    fill(&mut tcp.flavor, flavor_name(t.recovery, t.cc));
    fill(&mut tcp.recovery, serde_name(&t.recovery));
    fill(&mut tcp.cc, serde_name(&t.cc));
    fill(&mut tcp.mss, Val::Int(t.mss as i64));
    fill(&mut tcp.window, Val::Int(t.rcv_window_field as i64));
    fill(&mut tcp.window_scale, t.window_scale as i64);
    fill(&mut tcp.ssthresh, int(t.initial_ssthresh));
    fill(&mut tcp.initial_cwnd, t.initial_cwnd as i64);
    fill(&mut tcp.send_buffer, t.snd_buf.map_or_else(|| Val::Str("unlimited".into()), int));
    fill(&mut tcp.receive_buffer, t.rcv_buf.map_or_else(|| Val::Str("unlimited".into()), int));
    fill(&mut tcp.delayed_ack, t.delayed_ack);
    fill(&mut tcp.delack_timeout, dur(t.delack_timeout));
    fill(&mut tcp.sws_avoidance, t.sws_avoidance);
    fill(&mut tcp.piggyback_acks, t.piggyback_acks);
    fill(&mut tcp.rto_backoff_reset, serde_name(&t.backoff_reset));
    fill(&mut tcp.rtt_estimator, serde_name(&t.rtt_estimator));
    fill(&mut tcp.tlp, t.tlp);
    fill(&mut tcp.timer_granularity, dur(t.timer_granularity));
    fill(&mut tcp.initial_rto, dur(t.initial_rto));
    fill(&mut tcp.min_rto, dur(t.min_rto));
    fill(&mut tcp.max_rto, dur(t.max_rto));
    fill(&mut tcp.sack, t.sack);
    fill(&mut tcp.dupack_threshold, t.dupack_threshold as i64);
    fill(&mut tcp.fin, t.fin);
    fill(&mut tcp.slow_start_restart, t.slow_start_restart);
    fill(&mut tcp.profile, "default".into());
    let n = &t.ns2;
    let rn = tcp.ns2.get_or_insert_with(Default::default);
    fill(&mut rn.window_arith, n.window_arith);
    fill(&mut rn.bug_fix, serde_name(&n.bug_fix));
    fill(&mut rn.exit_fast_retrans, n.exit_fast_retrans);
    fill(&mut rn.newreno_changes, n.newreno_changes as i64);
    fill(&mut rn.newreno_changes1, n.newreno_changes1);
    fill(&mut rn.partial_window_deflation, n.partial_window_deflation);
    fill(&mut rn.exit_recovery_fix, n.exit_recovery_fix);
    fill(&mut rn.singledup, n.singledup);
    fill(&mut rn.sack_old_code, n.sack_old_code);
    fill(&mut rn.sack_dupack_needs_news, n.sack_dupack_needs_news);
    fill(&mut rn.rfc2988_rto, n.rfc2988_rto);
    fill(&mut rn.syn_timeout_ssthresh, n.syn_timeout_ssthresh);
    fill(&mut rn.tick_phase, dur(n.tick_phase));
    fill(&mut rn.random_tick_phase, n.random_tick_phase);
    fill(&mut rn.sack_option_bytes, n.sack_option_bytes);
    fill(&mut rn.precision_reduce, n.precision_reduce);
    fill(&mut rn.drop_tail_ns2, n.drop_tail_ns2);
}

fn fill_link(raw: &mut RawLink, spec: &LinkSpec) {
    fill(&mut raw.rate, rate(spec.rate));
    fill(&mut raw.payload_rate, rate(spec.payload_rate));
    // A moving link's delay is its schedule's (or its constellation's), not a key.
    if spec.schedule.is_none() {
        fill(&mut raw.delay, dur(spec.delay));
    }
    fill(&mut raw.ber, Val::Float(spec.ber));
    // `queue` absent means "the switch buffer (bottleneck), unlimited (others)": left out.
}

/// A gateway link: as [`fill_link`] without the ATM payload rate, which gateway links refuse.
fn fill_gateway_link(raw: &mut RawLink, spec: &LinkSpec) {
    fill(&mut raw.rate, rate(spec.rate));
    fill(&mut raw.delay, dur(spec.delay));
    fill(&mut raw.ber, Val::Float(spec.ber));
}

/// The gateway's keys; those its scheme does not read (schema.rs's "when") stay out.
fn fill_gateway(r: &mut crate::scenario::validate::gateway::RawGateway, g: &crate::scenario::validate::gateway::GatewaySpec) {
    use crate::pep::sat_receiver::AckPolicy;
    let reads = |key: &str| crate::scenario::validate::gateway::reads(g.scheme, key);
    fill(&mut r.scheme, g.scheme.name().into());
    if reads("gateway.semantics") {
        fill(&mut r.semantics, if g.semantics == crate::pep::SackSemantics::Modified { "modified" } else { "normal" }.into());
    }
    if reads("gateway.ack_every") {
        fill(&mut r.ack_every, match g.ack_policy {
            AckPolicy::Tcp => Val::Str("tcp".into()),
            AckPolicy::EveryN(n) => Val::Int(n as i64),
        });
    }
    if reads("gateway.ack_delay") {
        fill(&mut r.ack_delay, dur(g.ack_delay));
    }
    if reads("gateway.ack_pacing") {
        fill(&mut r.ack_pacing, g.ack_pacing);
    }
    if reads("gateway.client_buffer") {
        fill(&mut r.client_buffer, Val::Int(g.client_buffer as i64));
    }
    if reads("gateway.timer_granularity") {
        fill(&mut r.timer_granularity, dur(g.timer_granularity));
    }
    if reads("gateway.initial_rto") {
        fill(&mut r.initial_rto, dur(g.initial_rto));
    }
    if reads("gateway.timer_copies") {
        fill(&mut r.timer_copies, g.timer_copies as i64);
    }
    fill_gateway_link(r.satellite.get_or_insert_with(RawLink::default), &g.satellite);
    fill_gateway_link(r.return_link.get_or_insert_with(RawLink::default), &g.return_link);
    let servers = r.servers.get_or_insert_with(Vec::new);
    for (raw_s, s) in servers.iter_mut().zip(&g.servers) {
        fill_gateway_link(raw_s, s);
    }
}

/// `raw` (the scenario as read) with every applicable key that was left out set to its
/// effective value in `sc` (the same scenario, validated), and `run.seed` set to the seed
/// that runs.
pub fn fill_defaults(raw: &RawScenario, sc: &Scenario) -> RawScenario {
    let mut r = raw.clone();
    fill(&mut r.name, sc.name.clone());
    fill(&mut r.run.duration, dur(sc.duration));
    // The seed that runs (an override from the command line replaces the file's). TOML has
    // no integers above 2^63 - 1; such a seed is carried by the result's `seed` alone.
    r.run.seed = i64::try_from(sc.seed).ok();
    fill(&mut r.run.chain_hops, sc.chain_hops);

    match &sc.topology {
        Topology::Dumbbell { pairs, access, bottleneck } => {
            fill(&mut r.topology.kind, "dumbbell".into());
            fill(&mut r.topology.pairs, *pairs as i64);
            fill_link(r.links.access.get_or_insert_with(RawLink::default), access);
            fill_link(r.links.bottleneck.get_or_insert_with(RawLink::default), bottleneck);
        }
        Topology::Path { hops } => {
            fill(&mut r.topology.kind, "path".into());
            fill(&mut r.topology.pairs, 1);
            let path = r.links.path.get_or_insert_with(Vec::new);
            for (raw_hop, hop) in path.iter_mut().zip(hops) {
                fill_link(raw_hop, hop);
            }
        }
        Topology::Gateway(g) => {
            fill(&mut r.topology.kind, "gateway".into());
            fill_gateway(r.gateway.get_or_insert_with(Default::default), g);
        }
        Topology::Graph(g) => {
            fill(&mut r.topology.kind, "graph".into());
            let names = sc.topology.link_names();
            fill(&mut r.topology.bottleneck, names[2 * g.bottleneck].clone());
            for (raw_link, (_, _, spec)) in r.links.graph.iter_mut().flatten().zip(&g.links) {
                fill_link(raw_link, spec);
            }
        }
    }

    match sc.switch.kind {
        SwitchKind::DropTail => fill(&mut r.switch.kind, "droptail".into()),
        SwitchKind::Atm { policy } => {
            fill(&mut r.switch.kind, "atm".into());
            let (name, rz) = match policy {
                DropPolicy::TailDrop => ("ubr", None),
                DropPolicy::Ppd => ("ppd", None),
                DropPolicy::Epd { r } => ("epd", Some((r, None))),
                DropPolicy::SelectiveDrop { r, z } => ("sd", Some((r, Some(z)))),
                DropPolicy::Fba { r, z } => ("fba", Some((r, Some(z)))),
            };
            fill(&mut r.switch.policy, name.into());
            // R and Z are read for every ATM policy (and ignored by those without them).
            let (rv, zv) = rz.map_or((crate::atm::SEED_R, crate::atm::SEED_Z), |(rv, zv)| (rv, zv.unwrap_or(crate::atm::SEED_Z)));
            fill(&mut r.switch.r, rv);
            fill(&mut r.switch.z, zv);
            fill(&mut r.switch.partial_packet_discard, sc.switch.partial_packet_discard);
        }
    }
    // The default buffer, as validation reads it (one bandwidth-delay product).
    fill(&mut r.switch.buffer, Val::Str("1bdp".into()));

    if let (Some(c), Some(run)) = (&mut r.constellation, &sc.constellation) {
        super::validate::fill_constellation(c, run);
    }
    fill_tcp(&mut r.tcp, &sc.tcp);
    // Each group with every key its flows run with (nothing left to inherit from [tcp]).
    for (g, cfg) in r.tcp.groups.iter_mut().flatten().zip(&sc.tcp_groups) {
        let mut t = RawTcp::default().with_group(g);
        fill_tcp(&mut t, cfg);
        *g = RawTcpGroup::from_tcp(g.flows.take(), t);
    }

    let app = &mut r.app;
    match &sc.app {
        AppSpec::Bulk { start, stagger } => {
            fill(&mut app.kind, "bulk".into());
            fill(&mut app.start, dur(*start));
            fill(&mut app.stagger, dur(*stagger));
        }
        AppSpec::Transfer { bytes, start, stagger } => {
            fill(&mut app.kind, "transfer".into());
            fill(&mut app.bytes, int(*bytes));
            fill(&mut app.start, dur(*start));
            fill(&mut app.stagger, dur(*stagger));
        }
        AppSpec::Www { params } => {
            fill(&mut app.kind, "www".into());
            fill(&mut app.think_time, dur(params.think_time));
            fill(&mut app.first_batch, match params.first_batch {
                FirstBatch::Staggered => "staggered".into(),
                FirstBatch::AtZero => "zero".into(),
            });
            fill(&mut app.truncation, match params.batch.truncation {
                Truncation::Clamp => "clamp".into(),
                Truncation::Resample => "resample".into(),
            });
            fill(&mut app.request_bytes, int(params.request_bytes));
            fill(&mut app.gap_min, dur(params.gap_min));
            fill(&mut app.gap_max, dur(params.gap_max));
        }
        AppSpec::PingPong(pp) => {
            fill(&mut app.kind, "pingpong".into());
            fill(&mut app.repeats, pp.repeats as i64);
            if let Some(n) = pp.nrepeat {
                fill(&mut app.nrepeat, n.to_val());
            }
            // An explicit list replaces the schedule's keys, which then stay out.
            if pp.blocks.is_none() {
                fill(&mut app.first_block, int(pp.first_block));
                fill(&mut app.last_block, int(pp.last_block));
                fill(&mut app.perturbation, pp.perturbation as i64);
            }
        }
    }

    for l in &mut r.loss {
        fill(&mut l.flow, 0);
        fill(&mut l.transmission, 0);
        fill(&mut l.at, "sender".into());
    }
    fill(&mut r.trace.flows, sc.trace.flows.iter().map(|&f| f as i64).collect());
    fill(&mut r.trace.links, sc.trace.links.clone());
    fill(&mut r.trace.packets, crate::trace::spec::to_value(sc.trace.packets.as_ref()));
    fill(&mut r.trace.max_packet_events, sc.trace.max_packet_events.min(i64::MAX as u64) as i64);
    fill(&mut r.trace.max_points, sc.trace.max_points.min(i64::MAX as u64) as i64);
    r
}

/// A validated scenario with its resolved form.
#[derive(Debug)]
pub struct Resolved {
    pub scenario: Scenario,
    /// The scenario as written, overrides applied (what `scenario_json` carries).
    pub tree: toml::Table,
    /// Every applicable key with its effective value ([`fill_defaults`]).
    pub config: RawScenario,
}

impl Resolved {
    /// The resolved scenario as TOML text, in the order of the schema's sections.
    /// A seed above TOML's integers (2^63 - 1, which sweeps may reach) cannot be `run.seed`:
    /// a first-line comment says to pass it with `--seed`, so that the text does not silently
    /// run with the default seed.
    ///
    /// Keys given for another kind (`app.bytes` on a bulk source, [`Scenario::ignored`]) stay
    /// in the text, as the run reads them, but a first-lines comment names each with why it has
    /// no effect: the text alone would show them as if in effect.
    pub fn to_toml(&self) -> String {
        let text = toml::to_string(&self.config).unwrap_or_else(|e| format!("# cannot write the resolved scenario as TOML: {e}\n"));
        let mut head = String::new();
        if self.config.run.seed.is_none() {
            let seed = self.scenario.seed;
            head += &format!("# run.seed = {seed} is above TOML's largest integer: run this file with --seed {seed}\n");
        }
        for (title, lines) in [("given but without effect", &self.scenario.ignored), ("valid but doubtful", &self.scenario.notes)] {
            if !lines.is_empty() {
                head += &format!("# {title} (the run warns of each):\n");
                for line in lines {
                    head += &format!("#   {line}\n");
                }
            }
        }
        head + &text
    }

    /// The resolved scenario as JSON (keys sorted, keys without a value left out); `run.seed`
    /// is there whatever its size (JSON numbers are not bounded as TOML's are).
    pub fn to_json(&self) -> serde_json::Value {
        let mut j = strip_nulls(serde_json::to_value(&self.config).unwrap_or(serde_json::Value::Null));
        if let Some(run) = j.get_mut("run").and_then(|r| r.as_object_mut()) {
            run.insert("seed".into(), self.scenario.seed.into());
        }
        j
    }
}

fn strip_nulls(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => serde_json::Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, strip_nulls(v))).collect()),
        serde_json::Value::Array(a) => serde_json::Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// [`load`](super::load), returning the resolved scenario as well.
pub fn resolve(text: &str, overrides: &[(String, toml::Value)], seed: Option<u64>) -> Result<Resolved, ScenarioError> {
    let (scenario, tree) = load(text, overrides, seed)?;
    let raw = raw_from_tree(&tree).raw;
    let config = fill_defaults(&raw, &scenario);
    Ok(Resolved { scenario, tree, config })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scenario::parse_override_value;

    fn scenarios_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
    }

    #[track_caller]
    fn resolved(text: &str, overrides: &[(&str, &str)]) -> Resolved {
        let ov: Vec<_> = overrides.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect();
        resolve(text, &ov, None).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The scenario files with the variants that exercise every kind (path, transfer, ATM
    /// policies, WWW options).
    pub(crate) fn variants() -> Vec<(String, Resolved)> {
        let mut out = Vec::new();
        let mut files: Vec<_> = std::fs::read_dir(scenarios_dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            out.push((f.display().to_string(), resolved(&text, &[])));
        }
        let geo = std::fs::read_to_string(scenarios_dir().join("geo-bulk.toml")).unwrap();
        let kota = std::fs::read_to_string(scenarios_dir().join("kota-geo.toml")).unwrap();
        let path = "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[[links.path]]\nrate = \"2Mbps\"\ndelay = \"20ms\"\nqueue = \"20pkt\"\n[[loss]]\nsegment = 3\n[trace]\nflows = [0]\nlinks = [\"hop1\"]\n";
        out.push(("path".into(), resolved(path, &[("app.kind", "transfer"), ("app.bytes", "1MB"), ("tcp.flavor", "sack_rfc6675/cubic")])));
        out.push(("geo transfer".into(), resolved(&geo, &[("app.kind", "transfer"), ("app.bytes", "100000"), ("tcp.send_buffer", "64KB"), ("tcp.ssthresh", "bdp")])));
        out.push(("pingpong".into(), resolved(path, &[("app.kind", "pingpong")])));
        out.push(("kota sd".into(), resolved(&kota, &[("switch.policy", "sd"), ("app.truncation", "resample"), ("app.first_batch", "zero")])));
        out.push(("kota fba".into(), resolved(&kota, &[("switch.policy", "fba"), ("switch.Z", "0.5")])));
        out.push(("kota ubr".into(), resolved(&kota, &[("switch.policy", "ubr")])));
        // Moving links: schedules on each kind of link table.
        let sched = "schedule = [{ at = \"0s\", delay = \"5ms\" }, { at = \"1s\", up = false, rate = \"2Mbps\", ber = 1e-7 }, { at = \"2s\", delay = \"9ms\" }]";
        out.push(("moving dumbbell".into(), resolved(&format!("[links.access]\nrate = \"10Mbps\"\n{sched}\n[links.bottleneck]\nrate = \"5Mbps\"\n{sched}\n"), &[])));
        out.push(("moving path".into(), resolved(&format!("[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"10Mbps\"\n{sched}\n"), &[])));
        let leo = std::fs::read_to_string(scenarios_dir().join("leo-paris-moscow-isl.toml")).unwrap();
        let rates = "[constellation]\nrate_by_elevation = [{ elevation_deg = 25, rate = \"50Mbps\" }, { elevation_deg = 30, rate = \"100Mbps\" }]";
        out.push(("leo rate by elevation".into(), resolved(&leo.replace("[constellation]", rates), &[])));
        // The gateway's other schemes, given only the keys they read.
        let single = std::fs::read_to_string(scenarios_dir().join("zhou-single.toml")).unwrap().replace("semantics = \"modified\"\nack_every = 1\n", "");
        out.push(("gateway split_tcp".into(), resolved(&single, &[("gateway.scheme", "split_tcp"), ("gateway.satellite.queue", "20pkt")])));
        out.push(("gateway e2e".into(), resolved(&single.replace("buffer = \"41KB\"\n", ""), &[("gateway.scheme", "e2e")])));
        out
    }

    /// The resolved scenario of each gateway scheme holds only the `[gateway]` keys that scheme
    /// reads: filled with their defaults, the others would make the resolved text warn of keys
    /// its source never gave.
    #[test]
    fn a_gateway_scheme_resolves_to_the_keys_it_reads() {
        for (name, r) in variants().into_iter().filter(|(n, _)| n.starts_with("gateway ")) {
            assert!(r.scenario.ignored.is_empty(), "{name}: {:?}", r.scenario.ignored);
            let again = resolve(&r.to_toml(), &[], None).unwrap();
            assert!(again.scenario.ignored.is_empty(), "{name}: the resolved text warns: {:?}", again.scenario.ignored);
            let g = &r.to_json()["gateway"];
            for key in ["semantics", "ack_every", "ack_delay", "ack_pacing", "timer_granularity", "initial_rto", "timer_copies"] {
                assert!(g.get(key).is_none(), "{name}: gateway.{key} = {}", g[key]);
            }
            assert_eq!(g.get("client_buffer").is_some(), name == "gateway split_tcp", "{name}");
        }
    }

    #[test]
    fn the_resolved_scenario_loads_to_the_same_scenario() {
        for (name, r) in variants() {
            for text in [r.to_toml(), toml::to_string(&r.to_json()).unwrap()] {
                let again = resolve(&text, &[], None).unwrap_or_else(|e| panic!("{name}: the resolved scenario does not load: {e}\n{text}"));
                assert_eq!(format!("{:?}", again.scenario), format!("{:?}", r.scenario), "{name}:\n{text}");
                // Resolving is idempotent.
                assert_eq!(again.to_json(), r.to_json(), "{name}");
            }
        }
    }

    #[test]
    fn defaults_are_filled_and_written_values_kept() {
        let geo = std::fs::read_to_string(scenarios_dir().join("geo-bulk.toml")).unwrap();
        let r = resolved(&geo, &[("links.bottleneck.rate", "10000kbps")]);
        let j = r.to_json();
        assert_eq!(j["links"]["bottleneck"]["rate"], "10000kbps", "as written");
        assert_eq!(j["run"]["seed"], 1);
        assert_eq!(j["tcp"]["min_rto"], "200ms");
        assert_eq!(j["tcp"]["recovery"], "reno");
        assert_eq!(j["tcp"]["cc"], "reno_aimd");
        assert_eq!(j["tcp"]["send_buffer"], "unlimited");
        assert_eq!(j["switch"]["kind"], "droptail");
        assert!(j["switch"].get("policy").is_none(), "a drop-tail switch has no policy");
        assert!(j["links"]["bottleneck"].get("queue").is_none());
        // A seed above TOML's integers: in the JSON, and named in the TOML's first line.
        let big = resolve(&geo, &[], Some(1 << 63)).unwrap();
        assert_eq!(big.to_json()["run"]["seed"], 1u64 << 63);
        assert!(big.to_toml().starts_with("# run.seed = 9223372036854775808 is above TOML's largest integer: run this file with --seed 9223372036854775808\n"));
        assert!(!resolve(&geo, &[], Some(7)).unwrap().to_toml().starts_with('#'));
        // A key of another kind stays, named in a first-lines comment as without effect; the
        // text loads to the same scenario, which ignores it again.
        let ignored = resolved(&geo, &[("app.bytes", "1000")]);
        let text = ignored.to_toml();
        assert!(text.starts_with("# given but without effect (the run warns of each):\n#   app.bytes: applies to app.kind = \"transfer\" (a bulk source never runs out): ignored\nname = "), "{text}");
        assert!(text.contains("\nbytes = 1000\n"), "{text}");
        assert_eq!(resolve(&text, &[], None).unwrap().scenario.ignored, ignored.scenario.ignored);
        // The seed that runs replaces the file's.
        let ov = [("run.duration".to_string(), parse_override_value("5s"))];
        assert_eq!(resolve(&geo, &ov, Some(7)).unwrap().to_json()["run"]["seed"], 7);
    }

    #[test]
    fn every_flavor_pair_has_a_name() {
        for name in ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675", "sack/cubic", "reno/hybla"] {
            let (r, c) = crate::tcp::config::flavor(name).unwrap();
            assert_eq!(flavor_name(r, c), name);
        }
    }
}
