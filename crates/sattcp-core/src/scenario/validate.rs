//! Raw scenario -> validated [`Scenario`], collecting every problem with its path.

use super::raw::{RawLink, RawScenario, Val};
use super::{Problem, ScenarioError};
use crate::app::www::{FirstBatch, Truncation, WwwParams};
use crate::atm::{buffer_cells, cells_for_tcp_payload, DropPolicy, SEED_R, SEED_Z};
use crate::net::packet::{IP_HEADER, TCP_HEADER};
use crate::tcp::{config::flavor, CcKind, RecoveryKind, TcpConfig};
use crate::time::{parse_duration, parse_rate, parse_size, Rate, SimTime, Size};

/// A validated link.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LinkSpec {
    pub rate: Rate,
    /// Cell rate on ATM links (the line rate less physical framing).
    pub payload_rate: Rate,
    pub delay: SimTime,
    pub ber: f64,
    /// Drop-tail queue limit at the sending end (`None`: the switch buffer for the bottleneck,
    /// effectively unlimited elsewhere).
    pub queue: Option<Size>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum Topology {
    /// N sources -> R1 -> bottleneck -> R2 -> N sinks (the seeds' configuration).
    Dumbbell { pairs: u32, access: LinkSpec, bottleneck: LinkSpec },
    /// One flow over a chain of hops with routers between them.
    Path { hops: Vec<LinkSpec> },
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum SwitchKind {
    /// IP routers with FIFO drop-tail queues.
    DropTail,
    /// ATM switches, cell by cell, with a UBR+ drop policy (seed 000 §3).
    Atm { policy: DropPolicy },
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct SwitchSpec {
    pub kind: SwitchKind,
    /// Buffer of the port feeding the bottleneck, each direction.
    pub buffer: Size,
    /// ATM: the buffer in cells (Table 3 conversion of a bdp multiple).
    pub buffer_cells: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum AppSpec {
    /// A persistent sender with always more to send.
    Bulk { start: SimTime, stagger: SimTime },
    /// A fixed-size transfer.
    Transfer { bytes: u64, start: SimTime, stagger: SimTime },
    /// The seeds' WWW client/server pairs (seed 000 §4.1-4.2): requests one way, files back.
    Www { params: Box<WwwParams> },
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct LossSpec {
    pub flow: u32,
    /// Data offset (0-based) of the first byte of the segment to drop.
    pub offset: u64,
    /// Which transmission of that segment (0 = the first).
    pub transmission: u16,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TraceSpec {
    pub flows: Vec<u32>,
    pub links: Vec<String>,
}

/// A validated scenario: every value in engine units, every rule checked.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub duration: SimTime,
    pub seed: u64,
    pub topology: Topology,
    pub switch: SwitchSpec,
    pub tcp: TcpConfig,
    pub app: AppSpec,
    pub losses: Vec<LossSpec>,
    pub trace: TraceSpec,
}

impl Scenario {
    /// Number of TCP connections (flows).
    pub fn flows(&self) -> u32 {
        match &self.topology {
            Topology::Dumbbell { pairs, .. } => *pairs,
            Topology::Path { .. } => 1,
        }
    }

    /// The bottleneck's rate (slowest hop).
    pub fn bottleneck_rate(&self) -> Rate {
        match &self.topology {
            Topology::Dumbbell { bottleneck, .. } => bottleneck.rate,
            Topology::Path { hops } => hops.iter().map(|h| h.rate).min().unwrap_or(Rate(1)),
        }
    }

    /// Round-trip propagation delay used for "bdp" sizes. For the dumbbell this is twice the
    /// bottleneck's delay: the seeds neglect the 5 us access links (seed 000 §4.2.1: "RTTs
    /// due to propagation delay are 10ms, 200ms and 550ms"), which gives their ssthresh of
    /// 3,093,750 bytes at GEO exactly. For a path it is twice the sum of the hops' delays.
    pub fn rtt_prop(&self) -> SimTime {
        rtt_prop(&self.topology)
    }

    /// Bandwidth-delay product in bytes (bottleneck rate x round-trip propagation delay).
    pub fn bdp_bytes(&self) -> u64 {
        self.bottleneck_rate().bytes_in(self.rtt_prop())
    }
}

fn rtt_prop(t: &Topology) -> SimTime {
    match t {
        Topology::Dumbbell { bottleneck, .. } => bottleneck.delay.times(2),
        Topology::Path { hops } => hops.iter().fold(SimTime::ZERO, |a, h| a + h.delay).times(2),
    }
}

/// Collects problems while converting.
struct Ctx {
    problems: Vec<Problem>,
}

impl Ctx {
    fn err(&mut self, path: &str, rule: impl Into<String>, got: impl Into<String>) {
        self.problems.push(Problem { path: path.into(), rule: rule.into(), got: got.into() });
    }

    fn duration(&mut self, path: &str, v: Option<&Val>, default: SimTime) -> SimTime {
        match v {
            None => default,
            Some(Val::Str(s)) => parse_duration(s).unwrap_or_else(|e| {
                self.err(path, e, format!("{s:?}"));
                default
            }),
            Some(v) => {
                self.err(path, "must be a duration with a unit, such as \"275ms\"", v.to_string());
                default
            }
        }
    }

    fn rate(&mut self, path: &str, v: Option<&Val>) -> Rate {
        match v {
            None => {
                self.err(path, "is required (a rate such as \"45Mbps\")", "");
                Rate(1)
            }
            Some(Val::Str(s)) => parse_rate(s).unwrap_or_else(|e| {
                self.err(path, e, format!("{s:?}"));
                Rate(1)
            }),
            Some(v) => {
                self.err(path, "must be a rate with a unit, such as \"45Mbps\"", v.to_string());
                Rate(1)
            }
        }
    }

    fn float(&mut self, path: &str, v: Option<&Val>, default: f64, lo: f64, hi: f64) -> f64 {
        let x = match v {
            None => return default,
            Some(Val::Int(i)) => *i as f64,
            Some(Val::Float(x)) => *x,
            Some(Val::Str(s)) => match s.trim().parse::<f64>() {
                Ok(x) => x,
                Err(_) => {
                    self.err(path, "must be a number", format!("{s:?}"));
                    return default;
                }
            },
        };
        if !(x >= lo && x < hi) {
            self.err(path, format!("must be in [{lo}, {hi})"), v.unwrap().to_string());
            return default;
        }
        x
    }

    fn size(&mut self, path: &str, v: Option<&Val>) -> Option<Size> {
        match v? {
            Val::Int(i) if *i >= 0 => Some(Size::Bytes(*i as u64)),
            Val::Str(s) => match parse_size(s) {
                Ok(sz) => Some(sz),
                Err(e) => {
                    self.err(path, e, format!("{s:?}"));
                    None
                }
            },
            other => {
                self.err(path, "must be a size such as \"9180B\", \"100pkt\" or \"0.5bdp\"", other.to_string());
                None
            }
        }
    }

    /// A byte count: integer or size string in bytes ("bdp" allowed when `bdp` is given).
    fn bytes(&mut self, path: &str, v: Option<&Val>, bdp: Option<u64>) -> Option<u64> {
        let got = v.map(|v| v.to_string()).unwrap_or_default();
        match self.size(path, v)? {
            Size::Bytes(b) => Some(b),
            Size::Bdp(k) => match bdp {
                Some(bdp) => Some((k * bdp as f64).round() as u64),
                None => {
                    self.err(path, "must be in bytes here", got);
                    None
                }
            },
            _ => {
                self.err(path, "must be in bytes (B, KB, MB...)", got);
                None
            }
        }
    }

    fn int(&mut self, path: &str, v: Option<i64>, default: i64, lo: i64, hi: i64) -> i64 {
        match v {
            None => default,
            Some(x) if x >= lo && x <= hi => x,
            Some(x) => {
                self.err(path, format!("must be between {lo} and {hi}"), x.to_string());
                default
            }
        }
    }

    fn link(&mut self, path: &str, l: Option<&RawLink>) -> LinkSpec {
        let empty = RawLink::default();
        let l = match l {
            Some(l) => l,
            None => {
                self.err(path, "is required (a table with rate and delay)", "");
                &empty
            }
        };
        let rate = self.rate(&format!("{path}.rate"), l.rate.as_ref());
        let payload_rate = match &l.payload_rate {
            None => rate,
            Some(v) => self.rate(&format!("{path}.payload_rate"), Some(v)),
        };
        if payload_rate > rate {
            self.err(&format!("{path}.payload_rate"), "must not exceed the link's rate", l.payload_rate.as_ref().map(|v| v.to_string()).unwrap_or_default());
        }
        LinkSpec {
            rate,
            payload_rate,
            delay: self.duration(&format!("{path}.delay"), l.delay.as_ref(), SimTime::ZERO),
            ber: self.float(&format!("{path}.ber"), l.ber.as_ref(), 0.0, 0.0, 1.0),
            queue: self.size(&format!("{path}.queue"), l.queue.as_ref()),
        }
    }
}

/// Checks every rule; on success every field is in engine units.
pub fn validate(raw: &RawScenario, seed_override: Option<u64>) -> Result<Scenario, ScenarioError> {
    let mut c = Ctx { problems: Vec::new() };

    let duration = c.duration("run.duration", raw.run.duration.as_ref(), SimTime::from_secs(100));
    if let Some(given) = &raw.run.duration {
        if duration == SimTime::ZERO && !c.problems.iter().any(|p| p.path == "run.duration") {
            c.err("run.duration", "must be > 0", given.to_string());
        }
    }
    let seed = match (seed_override, raw.run.seed) {
        (Some(s), _) => s,
        (None, Some(s)) if s >= 0 => s as u64,
        (None, Some(s)) => {
            c.err("run.seed", "must be >= 0", s.to_string());
            0
        }
        (None, None) => 1,
    };

    let kind = raw.topology.kind.as_deref().unwrap_or("dumbbell");
    let topology = match kind {
        "dumbbell" => {
            let pairs = c.int("topology.pairs", raw.topology.pairs, 1, 1, 100_000) as u32;
            if raw.links.path.is_some() {
                c.err("links.path", "only for topology.kind = \"path\"", "");
            }
            Topology::Dumbbell { pairs, access: c.link("links.access", raw.links.access.as_ref()), bottleneck: c.link("links.bottleneck", raw.links.bottleneck.as_ref()) }
        }
        "path" => {
            if raw.topology.pairs.is_some_and(|p| p != 1) {
                c.err("topology.pairs", "a path topology carries one flow", raw.topology.pairs.unwrap().to_string());
            }
            let hops = match &raw.links.path {
                Some(h) if !h.is_empty() => h.iter().enumerate().map(|(i, l)| c.link(&format!("links.path.{i}"), Some(l))).collect(),
                _ => {
                    c.err("links.path", "is required for a path topology (a list of hops with rate and delay)", "");
                    vec![]
                }
            };
            Topology::Path { hops }
        }
        other => {
            c.err("topology.kind", "must be \"dumbbell\" or \"path\"", format!("{other:?}"));
            Topology::Path { hops: vec![] }
        }
    };
    let bdp = {
        let rate = match &topology {
            Topology::Dumbbell { bottleneck, .. } => bottleneck.rate,
            Topology::Path { hops } => hops.iter().map(|h| h.rate).min().unwrap_or(Rate(1)),
        };
        rate.bytes_in(rtt_prop(&topology))
    };

    // TCP.
    let t = &raw.tcp;
    let mut tcp = TcpConfig::default();
    let flavor_name = t.flavor.as_deref().unwrap_or("reno");
    match flavor(flavor_name) {
        Some((rec, cc)) => {
            tcp.recovery = rec;
            tcp.cc = cc;
        }
        None => c.err("tcp.flavor", "must be one of vanilla, reno, newreno, sack, newreno_rfc6582, sack_rfc6675, optionally with /cubic or /hybla (\"sack/cubic\")", format!("{flavor_name:?}")),
    }
    if let Some(r) = &t.recovery {
        match serde_json::from_value::<RecoveryKind>(serde_json::Value::String(r.clone())) {
            Ok(k) => tcp.recovery = k,
            Err(_) => c.err("tcp.recovery", "must be one of timeout, reno, newreno_ns2, newreno_rfc6582, sack_fall_floyd, sack_rfc6675", format!("{r:?}")),
        }
    }
    if let Some(cc) = &t.cc {
        match serde_json::from_value::<CcKind>(serde_json::Value::String(cc.clone())) {
            Ok(k) => tcp.cc = k,
            Err(_) => c.err("tcp.cc", "must name a congestion control (reno_aimd, cubic, hybla)", format!("{cc:?}")),
        }
    }
    tcp.sack = t.sack.unwrap_or(matches!(tcp.recovery, RecoveryKind::SackFallFloyd | RecoveryKind::SackRfc6675));
    if !tcp.sack && matches!(tcp.recovery, RecoveryKind::SackFallFloyd | RecoveryKind::SackRfc6675) {
        c.err("tcp.sack", "SACK recovery needs the SACK option", "false");
    }
    match &t.mss {
        None => {}
        Some(Val::Int(m)) if *m > 0 && *m <= 65_495 => tcp.mss = *m as u32,
        Some(v) => c.err("tcp.mss", "must be an integer number of bytes between 1 and 65495", v.to_string()),
    }
    match &t.window {
        None => {}
        Some(Val::Int(w)) if *w > 0 && *w <= 65_535 => tcp.rcv_window_field = *w as u16,
        Some(v) => c.err("tcp.window", "is the 16-bit advertised window field: an integer between 1 and 65535 (use tcp.window_scale for more)", v.to_string()),
    }
    // RFC 7323 (2.3): the shift count is limited to 14.
    tcp.window_scale = c.int("tcp.window_scale", t.window_scale, 0, 0, 14) as u8;
    tcp.initial_ssthresh = match &t.ssthresh {
        None => bdp.max(2 * tcp.mss as u64),
        Some(Val::Str(s)) if s == "bdp" => bdp,
        v => c.bytes("tcp.ssthresh", v.as_ref(), Some(bdp)).unwrap_or(65_535),
    };
    // Checks against a rate or MSS already reported invalid would only repeat that problem.
    if tcp.initial_ssthresh == 0 && !c.problems.iter().any(|p| p.path.starts_with("links.") || p.path == "tcp.mss") {
        c.err("tcp.ssthresh", "must be > 0", "0");
    }
    tcp.initial_cwnd = c.int("tcp.initial_cwnd", t.initial_cwnd, 1, 1, 1000) as u32;
    tcp.snd_buf = match &t.send_buffer {
        None => None,
        Some(Val::Str(s)) if s == "unlimited" => None,
        v => c.bytes("tcp.send_buffer", v.as_ref(), Some(bdp)),
    };
    if tcp.snd_buf.is_some_and(|b| b < tcp.mss as u64) {
        c.err("tcp.send_buffer", "must hold at least one segment (MSS)", tcp.snd_buf.unwrap().to_string());
    }
    tcp.delayed_ack = t.delayed_ack.unwrap_or(false);
    tcp.delack_timeout = c.duration("tcp.delack_timeout", t.delack_timeout.as_ref(), tcp.delack_timeout);
    tcp.sws_avoidance = t.sws_avoidance.unwrap_or(false);
    tcp.timer_granularity = c.duration("tcp.timer_granularity", t.timer_granularity.as_ref(), tcp.timer_granularity);
    if tcp.timer_granularity == SimTime::ZERO {
        c.err("tcp.timer_granularity", "must be > 0", "0s");
    }
    tcp.initial_rto = c.duration("tcp.initial_rto", t.initial_rto.as_ref(), tcp.initial_rto);
    tcp.min_rto = c.duration("tcp.min_rto", t.min_rto.as_ref(), tcp.min_rto);
    tcp.max_rto = c.duration("tcp.max_rto", t.max_rto.as_ref(), tcp.max_rto);
    if tcp.min_rto > tcp.max_rto {
        c.err("tcp.min_rto", "must not exceed tcp.max_rto", tcp.min_rto.to_string());
    }
    tcp.dupack_threshold = c.int("tcp.dupack_threshold", t.dupack_threshold, 3, 1, 1000) as u32;
    tcp.fin = t.fin.unwrap_or(false);

    // Switch (the port feeding the bottleneck).
    let inputs_ok = !c.problems.iter().any(|p| p.path.starts_with("links.") || p.path == "tcp.mss");
    let skind = raw.switch.kind.as_deref().unwrap_or("droptail");
    let buffer = c.size("switch.buffer", raw.switch.buffer.as_ref()).unwrap_or(Size::Bdp(1.0));
    let buffer_got = raw.switch.buffer.as_ref().map(|v| v.to_string()).unwrap_or_default();
    let rtt = rtt_prop(&topology);
    let bottleneck_rate = match &topology {
        Topology::Dumbbell { bottleneck, .. } => bottleneck.payload_rate,
        Topology::Path { hops } => hops.iter().map(|h| h.rate).min().unwrap_or(Rate(1)),
    };
    let mut buffer_cells_n = 0;
    let kind = match skind {
        "droptail" => {
            for (key, present) in [("switch.policy", raw.switch.policy.is_some()), ("switch.R", raw.switch.r.is_some()), ("switch.Z", raw.switch.z.is_some())] {
                if present {
                    c.err(key, "applies to ATM switches (switch.kind = \"atm\")", "");
                }
            }
            let packet = (tcp.mss + IP_HEADER + TCP_HEADER) as u64;
            let too_small = match buffer {
                Size::Bytes(b) => b < packet,
                Size::Packets(p) => p < 1,
                Size::Bdp(k) => ((k * bdp as f64) as u64) < packet,
                Size::Cells(_) => {
                    c.err("switch.buffer", "cells are for ATM switches; give bytes, packets or a bdp multiple", buffer_got.clone());
                    false
                }
            };
            if too_small && inputs_ok {
                c.err("switch.buffer", format!("must hold at least one packet ({packet} bytes at MSS {})", tcp.mss), buffer_got.clone());
            }
            SwitchKind::DropTail
        }
        "atm" => {
            if !matches!(topology, Topology::Dumbbell { .. }) {
                c.err("switch.kind", "ATM switches are modelled on the dumbbell topology", "\"atm\"");
            }
            let r = raw.switch.r.unwrap_or(SEED_R);
            let z = raw.switch.z.unwrap_or(SEED_Z);
            let name = raw.switch.policy.as_deref().unwrap_or("ubr");
            let policy = match DropPolicy::from_name(name, r, z) {
                Ok(p) => p,
                Err(e) => {
                    // validate() names the parameter first ("R: must be in (0, 1], got 1.5").
                    match e.split_once(": ") {
                        Some(("R", rule)) => c.err("switch.R", rule, ""),
                        Some(("Z", rule)) => c.err("switch.Z", rule, ""),
                        _ => c.err("switch.policy", e, format!("{name:?}")),
                    }
                    DropPolicy::TailDrop
                }
            };
            buffer_cells_n = buffer_cells(buffer, rtt, bottleneck_rate, tcp.mss as u64);
            let frame = cells_for_tcp_payload(tcp.mss as u64);
            if buffer_cells_n < frame && inputs_ok {
                c.err("switch.buffer", format!("must hold at least one frame ({frame} cells at MSS {})", tcp.mss), buffer_got.clone());
            }
            if buffer_cells_n > u32::MAX as u64 {
                c.err("switch.buffer", "must be at most 2^32 - 1 cells", buffer_got.clone());
            }
            SwitchKind::Atm { policy }
        }
        other => {
            c.err("switch.kind", "must be \"droptail\" or \"atm\"", format!("{other:?}"));
            SwitchKind::DropTail
        }
    };

    // Application.
    let start = c.duration("app.start", raw.app.start.as_ref(), SimTime::ZERO);
    let stagger = c.duration("app.stagger", raw.app.stagger.as_ref(), SimTime::ZERO);
    let app = match raw.app.kind.as_deref().unwrap_or("bulk") {
        "bulk" => AppSpec::Bulk { start, stagger },
        "transfer" => match c.bytes("app.bytes", raw.app.bytes.as_ref(), None) {
            Some(b) if b > 0 => AppSpec::Transfer { bytes: b, start, stagger },
            Some(_) => {
                c.err("app.bytes", "must be > 0", "0");
                AppSpec::Bulk { start, stagger }
            }
            None => {
                if raw.app.bytes.is_none() {
                    c.err("app.bytes", "is required for a transfer", "");
                }
                AppSpec::Bulk { start, stagger }
            }
        },
        "www" => {
            let mut p = WwwParams::default();
            p.think_time = c.duration("app.think_time", raw.app.think_time.as_ref(), p.think_time);
            p.gap_min = c.duration("app.gap_min", raw.app.gap_min.as_ref(), p.gap_min);
            p.gap_max = c.duration("app.gap_max", raw.app.gap_max.as_ref(), p.gap_max);
            match raw.app.first_batch.as_deref() {
                None | Some("staggered") => p.first_batch = FirstBatch::Staggered,
                Some("zero") => p.first_batch = FirstBatch::AtZero,
                Some(o) => c.err("app.first_batch", "must be \"staggered\" or \"zero\"", format!("{o:?}")),
            }
            match raw.app.truncation.as_deref() {
                None | Some("clamp") => {}
                Some("resample") => {
                    p.batch.truncation = Truncation::Resample;
                    p.size_index.truncation = Truncation::Resample;
                }
                Some(o) => c.err("app.truncation", "must be \"clamp\" or \"resample\"", format!("{o:?}")),
            }
            if raw.app.request_bytes.is_some() {
                p.request_bytes = c.bytes("app.request_bytes", raw.app.request_bytes.as_ref(), None).unwrap_or(p.request_bytes);
            }
            for (key, present) in [("app.bytes", raw.app.bytes.is_some()), ("app.start", raw.app.start.is_some()), ("app.stagger", raw.app.stagger.is_some())] {
                if present {
                    c.err(key, "does not apply to app.kind = \"www\"", "");
                }
            }
            if let Err(e) = p.validate() {
                c.err(&format!("app.{}", e.path), e.rule, "");
            }
            AppSpec::Www { params: Box::new(p) }
        }
        other => {
            c.err("app.kind", "must be \"bulk\", \"transfer\" or \"www\"", format!("{other:?}"));
            AppSpec::Bulk { start, stagger }
        }
    };
    if matches!(app, AppSpec::Www { .. }) && !matches!(topology, Topology::Dumbbell { .. }) {
        c.err("app.kind", "WWW client/server pairs need topology.kind = \"dumbbell\"", "\"www\"");
    }

    // Scripted losses.
    let nflows = match &topology {
        Topology::Dumbbell { pairs, .. } => *pairs as i64,
        Topology::Path { .. } => 1,
    };
    let mut losses = Vec::new();
    for (i, l) in raw.loss.iter().enumerate() {
        let p = format!("loss.{i}");
        let flow = c.int(&format!("{p}.flow"), l.flow, 0, 0, nflows - 1) as u32;
        let transmission = c.int(&format!("{p}.transmission"), l.transmission, 0, 0, 1000) as u16;
        let offset = match (&l.offset, l.segment) {
            (Some(_), Some(_)) => {
                c.err(&p, "give offset or segment, not both", "");
                0
            }
            (Some(v), None) => c.bytes(&format!("{p}.offset"), Some(v), None).unwrap_or(0),
            (None, Some(k)) if k >= 0 => k as u64 * tcp.mss as u64,
            (None, Some(k)) => {
                c.err(&format!("{p}.segment"), "must be >= 0", k.to_string());
                0
            }
            (None, None) => {
                c.err(&p, "needs offset (data byte offset) or segment (segment index)", "");
                0
            }
        };
        losses.push(LossSpec { flow, offset, transmission });
    }

    let mut trace = TraceSpec::default();
    for (i, &f) in raw.trace.flows.iter().flatten().enumerate() {
        if f < 0 || f >= nflows {
            c.err(&format!("trace.flows.{i}"), format!("must name a flow between 0 and {}", nflows - 1), f.to_string());
        } else {
            trace.flows.push(f as u32);
        }
    }
    trace.links = raw.trace.links.clone().unwrap_or_default();

    if !c.problems.is_empty() {
        return Err(ScenarioError { problems: c.problems });
    }
    Ok(Scenario {
        name: raw.name.clone().unwrap_or_else(|| "scenario".into()),
        duration,
        seed,
        topology,
        switch: SwitchSpec { kind, buffer, buffer_cells: buffer_cells_n },
        tcp,
        app,
        losses,
        trace,
    })
}
