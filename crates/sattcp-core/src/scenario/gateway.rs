//! The `[gateway]` section: seed 004's satellite system (servers, terrestrial links, the
//! satellite gateway, the satellite link, its return channel, the VSAT clients) and which
//! transport scheme carries it (docs/gateway.md).
//!
//! ```toml
//! [topology]
//! kind = "gateway"
//! [gateway]
//! scheme = "sgw"              # "sgw" (seed 004), "split_tcp" (TCP both legs), "e2e" (end-to-end TCP)
//! buffer = "41KB"             # per connection at the SGW; or peak_rate = "900kbps"
//! [gateway.satellite]
//! rate = "600kbps"
//! delay = "250ms"
//! ber = 1e-6
//! [[gateway.servers]]         # one per connection: the server's link to the SGW
//! rate = "1.2Mbps"
//! delay = "40ms"
//! ```

use super::{Ctx, LinkSpec};
use crate::scenario::raw::{RawLink, Val};
use crate::pep::sat_receiver::{AckPolicy, DEFAULT_ACK_DELAY};
use crate::pep::sat_sender::{DEFAULT_INITIAL_RTO, DEFAULT_TIMER_COPIES, DEFAULT_TIMER_GRANULARITY};
use crate::pep::SackSemantics;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Most connections through one gateway (the scheduler scans them per packet).
pub const MAX_CONNECTIONS: usize = 1000;
/// The return channel's default rate. Seed 004 does not give it; its figure 8 reports the
/// return channel's use, not its capacity, so the default must not limit the experiments.
pub const DEFAULT_RETURN_RATE: &str = "1Mbps";
/// The clients' default receive buffer (seed 004 §V.B: 256 KB).
pub const DEFAULT_CLIENT_BUFFER: u64 = 256 * 1024;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawGateway {
    /// "sgw", "split_tcp" or "e2e".
    pub scheme: Option<String>,
    /// Per-connection SGW buffer in bytes.
    pub buffer: Option<Val>,
    /// Or a static peak rate: buffer = peak rate x (satellite RTT + the connection's
    /// terrestrial RTT) (seed 004 §II.A).
    pub peak_rate: Option<Val>,
    /// "modified" (seed 004 §IV) or "normal".
    pub semantics: Option<String>,
    /// The client acknowledges every N packets (an integer), or "tcp".
    pub ack_every: Option<Val>,
    pub ack_delay: Option<Val>,
    pub ack_pacing: Option<bool>,
    pub client_buffer: Option<Val>,
    pub timer_granularity: Option<Val>,
    pub initial_rto: Option<Val>,
    pub timer_copies: Option<i64>,
    pub satellite: Option<RawLink>,
    #[serde(rename = "return")]
    pub return_link: Option<RawLink>,
    pub servers: Option<Vec<RawLink>>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// Seed 004: split connections, the rate-based reliable protocol on the satellite leg.
    Sgw,
    /// TCP splitting with TCP on both legs (the seed's baseline uses TCP SACK).
    SplitTcp,
    /// End-to-end TCP through the gateway as a router.
    E2e,
}

impl Scheme {
    pub const ALL: [Scheme; 3] = [Scheme::Sgw, Scheme::SplitTcp, Scheme::E2e];
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Sgw => "sgw",
            Scheme::SplitTcp => "split_tcp",
            Scheme::E2e => "e2e",
        }
    }
}

/// The "when" of a `[gateway]` key that only some schemes read begins so in schema.rs:
/// `gateway.scheme = "sgw" or "split_tcp"`.
const SCHEME_WHEN: &str = "gateway.scheme = ";

/// The schemes that read the `[gateway]` key `key`, and the "when" text of its row in schema.rs
/// that names them (`gateway.scheme = "sgw" or "split_tcp"`); `None` for a key that every scheme
/// reads (its row says only `topology.kind = "gateway"`). The schema is the one place that
/// says which scheme reads what: validation warns from it ([`validate`]) and the resolved
/// scenario leaves out from it what the scheme does not read.
pub fn scheme_condition(key: &str) -> Option<(&'static str, Vec<Scheme>)> {
    let when = crate::scenario::schema::row(key)?.when;
    let names = when.strip_prefix(SCHEME_WHEN)?;
    // A name that is not a scheme's is caught by validate.rs's test
    // `every_gateway_key_limited_to_some_schemes_warns_under_the_others`.
    let schemes = names.split(" or ").filter_map(|n| Scheme::ALL.into_iter().find(|s| n.trim_matches('"') == s.name())).collect();
    Some((when, schemes))
}

/// Whether `scheme` reads the `[gateway]` key `key` ([`scheme_condition`]).
pub fn reads(scheme: Scheme, key: &str) -> bool {
    scheme_condition(key).is_none_or(|(_, schemes)| schemes.contains(&scheme))
}

#[derive(Clone, Debug, Serialize)]
pub struct GatewaySpec {
    pub scheme: Scheme,
    /// Per connection (server order), the SGW buffer in bytes.
    pub buffers: Vec<u64>,
    pub semantics: SackSemantics,
    pub ack_policy: AckPolicy,
    pub ack_delay: SimTime,
    pub ack_pacing: bool,
    pub client_buffer: u64,
    pub timer_granularity: SimTime,
    pub initial_rto: SimTime,
    pub timer_copies: u8,
    pub satellite: LinkSpec,
    pub return_link: LinkSpec,
    pub servers: Vec<LinkSpec>,
}

impl GatewaySpec {
    /// Satellite round trip (propagation only).
    pub fn sat_rtt(&self) -> SimTime {
        self.satellite.delay + self.return_link.delay
    }
}

fn one_of<T: Copy>(c: &mut Ctx, path: &str, v: Option<&str>, default: T, all: &[(&str, T)]) -> T {
    match v {
        None => default,
        Some(s) => match all.iter().find(|(n, _)| *n == s) {
            Some(&(_, t)) => t,
            None => {
                let names: Vec<String> = all.iter().map(|(n, _)| format!("{n:?}")).collect();
                c.err(path, format!("must be one of {}", names.join(", ")), format!("{s:?}"));
                default
            }
        },
    }
}

/// Validates `[gateway]` for `topology.kind = "gateway"`; `mss` is tcp.mss, None if that is
/// invalid (reported with `[tcp]`): sizes are then not judged against it.
pub(super) fn validate(c: &mut Ctx, g: Option<&RawGateway>, mss: Option<u32>) -> GatewaySpec {
    let empty = RawGateway::default();
    let g = match g {
        Some(g) => g,
        None => {
            c.err("gateway", "is required for topology.kind = \"gateway\" (a satellite link and the servers' links)", "");
            c.unread.push("gateway".into());
            &empty
        }
    };
    let schemes: Vec<(&str, Scheme)> = Scheme::ALL.iter().map(|s| (s.name(), *s)).collect();
    let scheme = one_of(c, "gateway.scheme", g.scheme.as_deref(), Scheme::Sgw, &schemes);
    let semantics = one_of(c, "gateway.semantics", g.semantics.as_deref(), SackSemantics::Modified, &[("modified", SackSemantics::Modified), ("normal", SackSemantics::Normal)]);
    let satellite = c.link("gateway.satellite", g.satellite.as_ref());
    let return_link = match &g.return_link {
        Some(l) => c.link("gateway.return", Some(l)),
        None => {
            let rate = crate::time::parse_rate(DEFAULT_RETURN_RATE).expect("a valid default");
            LinkSpec { rate, payload_rate: rate, delay: satellite.delay, ber: 0.0, queue: None, schedule: None }
        }
    };
    let servers: Vec<LinkSpec> = match &g.servers {
        Some(s) if s.len() > MAX_CONNECTIONS => {
            c.err("gateway.servers", format!("must have at most {MAX_CONNECTIONS} entries"), format!("{} entries", s.len()));
            vec![]
        }
        Some(s) if !s.is_empty() => s.iter().enumerate().map(|(i, l)| c.link(&format!("gateway.servers.{i}"), Some(l))).collect(),
        _ => {
            c.err("gateway.servers", "is required: a list of the servers' links to the SGW (rate, delay), one per connection", "");
            vec![]
        }
    };
    let mut tables: Vec<(String, Option<&RawLink>)> = vec![("gateway.satellite".into(), g.satellite.as_ref()), ("gateway.return".into(), g.return_link.as_ref())];
    tables.extend(g.servers.iter().flatten().enumerate().map(|(i, l)| (format!("gateway.servers.{i}"), Some(l))));
    for (path, l) in tables {
        if let Some(v) = l.and_then(|l| l.payload_rate.as_ref()) {
            c.err(&format!("{path}.payload_rate"), "applies to ATM links only", v.to_string());
        }
        if l.is_some_and(|l| l.schedule.is_some()) {
            c.err(&format!("{path}.schedule"), "moving links are not modelled on a gateway topology", "");
        }
        for (key, given) in [("from", l.is_some_and(|l| l.from.is_some())), ("to", l.is_some_and(|l| l.to.is_some()))] {
            if given {
                c.err(&format!("{path}.{key}"), "only for [[links.graph]] (a gateway's links join fixed nodes)", "");
            }
        }
    }
    let seg_bytes = mss.unwrap_or(crate::tcp::TcpConfig::default().mss) as u64 + 40;
    let sat_rtt = satellite.delay + return_link.delay;
    let buffers: Vec<u64> = match (&g.buffer, &g.peak_rate) {
        (Some(_), Some(_)) => {
            c.err("gateway.peak_rate", "give gateway.buffer or gateway.peak_rate, not both", "");
            vec![]
        }
        (Some(b), None) => {
            let b = c.bytes("gateway.buffer", Some(b), None).unwrap_or(0);
            if let Some(mss) = mss.filter(|&m| b < m as u64 && !c.bad("gateway.buffer")) {
                c.err("gateway.buffer", format!("must hold at least one segment ({mss} bytes)"), b.to_string());
            }
            vec![b; servers.len()]
        }
        (None, Some(r)) => {
            let peak = c.rate("gateway.peak_rate", Some(r));
            if peak > satellite.rate && !c.bad("gateway.satellite") && !c.bad("gateway.peak_rate") {
                c.err("gateway.peak_rate", format!("must not exceed the satellite link's rate ({})", satellite.rate), r.to_string());
            }
            // Seed 004 §II.A: buffer = peak rate x (SatRTT + TerrRTT), at least one segment.
            servers.iter().map(|s| (peak.bytes_in(sat_rtt + s.delay.times(2))).max(seg_bytes)).collect()
        }
        // End-to-end TCP has no SGW buffer.
        (None, None) if scheme == Scheme::E2e => vec![],
        (None, None) => {
            c.err("gateway.buffer", "is required (bytes per connection), or gateway.peak_rate", "");
            vec![]
        }
    };
    let ack_policy = match &g.ack_every {
        None => AckPolicy::Tcp,
        Some(Val::Str(s)) if s == "tcp" => AckPolicy::Tcp,
        Some(Val::Int(n)) if (1..=65_535).contains(n) => AckPolicy::EveryN(*n as u32),
        Some(v) => {
            c.err("gateway.ack_every", "must be an integer N >= 1 (ACK every N packets) or \"tcp\"", v.to_string());
            AckPolicy::Tcp
        }
    };
    let client_buffer = match &g.client_buffer {
        None => DEFAULT_CLIENT_BUFFER,
        Some(v) => c.bytes("gateway.client_buffer", Some(v), None).unwrap_or(DEFAULT_CLIENT_BUFFER),
    };
    if let Some(mss) = mss.filter(|&m| client_buffer < m as u64 && !c.bad("gateway.client_buffer")) {
        c.err("gateway.client_buffer", format!("must hold at least one segment ({mss} bytes)"), client_buffer.to_string());
    }
    let timer_granularity = c.positive_duration("gateway.timer_granularity", g.timer_granularity.as_ref(), DEFAULT_TIMER_GRANULARITY);
    // Keys given that the chosen scheme does not read: checked as any other, then ignored with
    // a warning naming the schemes that read them (they used to be ignored without a word).
    // Not errors, as `app.bytes` on a bulk source is not: `--set gateway.scheme=e2e` over an
    // `sgw` scenario is a fair request.
    if !c.bad("gateway.scheme") {
        let given = [
            ("gateway.buffer", g.buffer.is_some()),
            ("gateway.peak_rate", g.peak_rate.is_some()),
            ("gateway.semantics", g.semantics.is_some()),
            ("gateway.ack_every", g.ack_every.is_some()),
            ("gateway.ack_delay", g.ack_delay.is_some()),
            ("gateway.ack_pacing", g.ack_pacing.is_some()),
            ("gateway.client_buffer", g.client_buffer.is_some()),
            ("gateway.timer_granularity", g.timer_granularity.is_some()),
            ("gateway.initial_rto", g.initial_rto.is_some()),
            ("gateway.timer_copies", g.timer_copies.is_some()),
            ("gateway.satellite.queue", g.satellite.as_ref().is_some_and(|l| l.queue.is_some())),
        ];
        for (key, _) in given.into_iter().filter(|&(_, given)| given) {
            if let Some((when, _)) = scheme_condition(key).filter(|(_, schemes)| !schemes.contains(&scheme)) {
                c.ignore(key, &format!("applies to {when}"));
            }
        }
    }
    GatewaySpec {
        scheme,
        buffers,
        semantics,
        ack_policy,
        ack_delay: c.duration("gateway.ack_delay", g.ack_delay.as_ref(), DEFAULT_ACK_DELAY),
        ack_pacing: g.ack_pacing.unwrap_or(false),
        client_buffer,
        timer_granularity,
        initial_rto: c.duration("gateway.initial_rto", g.initial_rto.as_ref(), DEFAULT_INITIAL_RTO),
        timer_copies: c.int("gateway.timer_copies", g.timer_copies, DEFAULT_TIMER_COPIES as i64, 1, 10) as u8,
        satellite,
        return_link,
        servers,
    }
}

/// The engine's names of the gateway topology's links: per server "srv{i}->sgw" and
/// "sgw->srv{i}", then "sat" (SGW to the VSAT terminal), "sat-return", and per client
/// "vsat->cli{i}", "cli{i}->vsat". Nodes: servers 0..n, the SGW n, the VSAT terminal n + 1,
/// clients n + 2 + i. Under "sgw" no world packet uses the satellite links: the gateway machine
/// (pep::gateway) carries the satellite leg on its own links of the same specification, whose
/// figures replace these in the results.
pub fn link_names(g: &GatewaySpec) -> Vec<String> {
    let n = g.servers.len();
    let mut names: Vec<String> = (0..n).flat_map(|i| [format!("srv{i}->sgw"), format!("sgw->srv{i}")]).collect();
    names.extend(["sat".to_string(), "sat-return".to_string()]);
    names.extend((0..n).flat_map(|i| [format!("vsat->cli{i}"), format!("cli{i}->vsat")]));
    names
}

/// The clients' links to the VSAT terminal's router (a LAN: seed 004 gives none).
pub const CLIENT_LAN_RATE: crate::time::Rate = crate::time::Rate::mbps(100);
