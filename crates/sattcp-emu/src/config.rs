//! What to emulate: an `[emulate]` section, or the bottleneck of a simulator scenario.
//!
//! An emulate scenario is a TOML file whose only table is `[emulate]` (plus `name` and
//! `description`); its link keys are the simulator's (`rate`, `delay`, `ber`, `queue`, with the
//! same units and parsers) and it adds what only a real stack has (`mtu`, `cc`, `sysctl`):
//!
//! ```toml
//! [emulate]
//! rate = "2.048Mbps"   # each direction
//! delay = "200ms"      # one way: RTT = 2 x delay + serialisation
//! ber = 1e-7           # per bit on the wire
//! queue = "100pkt"     # drop-tail, packets or bytes ("64KB"), "531cells" with ATM framing
//! framing = "atm"      # "ip" (default): the rate carries IP packets; "atm": AAL5 + LLC/SNAP in 53-byte cells
//! mtu = 1500           # of the TUN devices
//! seed = 1             # of the bit-error streams
//! cc = "cubic"         # net.ipv4.tcp_congestion_control in both namespaces
//! [emulate.sysctl]     # any other per-namespace net.* sysctl
//! "net.ipv4.tcp_sack" = 0
//! ```
//!
//! A file without `[emulate]` is read as a simulator scenario (`sattcp run`'s schema, checked
//! by the simulator's own validator) and its bottleneck is emulated: the dumbbell's bottleneck or
//! a path's slowest hop, with ATM framing when `switch.kind = "atm"` (at the link's
//! `payload_rate`, the cell rate), its queue or else `switch.buffer`. A moving bottleneck
//! (`links.*.schedule`, or the hop a `[constellation]` drives) keeps its delay schedule, time 0
//! being the emulator's start (issue 14); a schedule that changes the rate or the bit error rate
//! is refused (the emulated link has one rate and one error stream). `--set emulate.cc=bbr`
//! chooses the kernel congestion control for a simulator scenario too (the only `emulate.*`
//! key it takes).
//!
//! Bad input gives every problem at once, each with its field path, rule and value, as the
//! simulator's scenarios do ([`sattcp_core::scenario::Problem`]).

use sattcp_core::atm::aal5::{wire_bytes_for_ip, CELL_BYTES};
use sattcp_core::net::link::QueueLimit;
use sattcp_core::net::packet::{IP_HEADER, TCP_HEADER};
use sattcp_core::net::schedule::Schedule;
use sattcp_core::scenario::validate::SwitchKind;
use sattcp_core::scenario::{self, Problem, ScenarioError};
use sattcp_core::time::{parse_duration, parse_rate, parse_size, Size};
use sattcp_core::{Rate, SimTime};
use std::collections::BTreeMap;

/// Default queue: Linux's default `txqueuelen` for an Ethernet device (1000 packets), so that
/// a scenario without a queue loses nothing a real host would not.
pub const DEFAULT_QUEUE_PACKETS: u64 = 1000;
/// Default MTU of the TUN devices: Ethernet's (RFC 894), as seed 003's LAN hosts had.
pub const DEFAULT_MTU: u32 = 1500;
/// Smallest MTU IPv4 allows (RFC 791: every host must accept 68-byte datagrams).
pub const MIN_MTU: u32 = 68;
/// Largest IPv4 datagram.
pub const MAX_MTU: u32 = 65_535;

/// How packets are carried on the emulated link.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Framing {
    /// The rate carries IP packets as they are.
    Ip,
    /// Each IP packet becomes an AAL5 frame with LLC/SNAP in 53-byte cells
    /// (`atm::aal5::wire_bytes_for_ip`); the rate carries cells.
    Atm,
}

impl Framing {
    /// Bytes on the wire for an IP packet of `ip_bytes`.
    #[inline]
    pub fn wire_bytes(self, ip_bytes: u64) -> u64 {
        match self {
            Framing::Ip => ip_bytes,
            Framing::Atm => wire_bytes_for_ip(ip_bytes),
        }
    }
}

/// A validated emulation: the link model of each direction (both the same) and the kernel
/// settings of the two namespaces.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EmuConfig {
    pub name: String,
    /// Bits per second on the wire (cells with ATM framing).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay_ns: u64,
    pub ber: f64,
    /// Drop-tail limit: packets waiting, or wire bytes waiting.
    pub queue_packets: Option<u64>,
    pub queue_bytes: Option<u64>,
    pub framing: Framing,
    pub mtu: u32,
    pub seed: u64,
    /// Congestion control of both namespaces (`None`: the kernel's default).
    pub cc: Option<String>,
    /// Other per-namespace sysctls, by name (sorted).
    pub sysctl: BTreeMap<String, String>,
    /// Where the link came from: "emulate" or "links.bottleneck" / "links.path.N".
    pub source: String,
    /// The one-way delay over time of a moving bottleneck (net/schedule.rs), replacing
    /// `delay_ns` (which is then its delay at time 0).
    pub schedule: Option<Schedule>,
}

impl EmuConfig {
    pub fn rate(&self) -> Rate {
        Rate(self.rate_bps)
    }
    pub fn delay(&self) -> SimTime {
        SimTime(self.delay_ns)
    }
    pub fn queue_limit(&self) -> QueueLimit {
        match (self.queue_packets, self.queue_bytes) {
            (_, Some(b)) => QueueLimit::Bytes(b),
            (Some(p), None) => QueueLimit::Packets(p),
            (None, None) => QueueLimit::Packets(DEFAULT_QUEUE_PACKETS),
        }
    }
}

/// The keys of `[emulate]`.
const KEYS: [&str; 9] = ["rate", "delay", "ber", "queue", "framing", "mtu", "seed", "cc", "sysctl"];

/// TOML text plus `--set` overrides -> a validated emulation, or every problem found.
pub fn load(text: &str, overrides: &[(String, toml::Value)]) -> Result<EmuConfig, ScenarioError> {
    if scenario::merged_tree(text, &[])?.contains_key("emulate") {
        // `--set emulate.sysctl.NAME=V` names one sysctl however the file writes it: merged as
        // nested tables beside the file's quoted `"NAME"`, both stood and the file's won (its
        // key sorts after `net`), so the override was silently lost. The table is read by
        // name first, then each such override replaces its name.
        let (sys, rest): (Vec<_>, Vec<_>) = overrides.iter().cloned().partition(|(k, _)| k.starts_with("emulate.sysctl."));
        let mut tree = scenario::merged_tree(text, &rest)?;
        if !sys.is_empty() {
            if let Some(toml::Value::Table(e)) = tree.get_mut("emulate") {
                let mut by_name = toml::Table::new();
                if let Some(toml::Value::Table(t)) = e.get("sysctl") {
                    let mut named = Vec::new();
                    sysctl_names("", t, &mut named);
                    by_name.extend(named.into_iter().map(|(k, v)| (k, v.clone())));
                }
                if e.get("sysctl").is_none_or(|v| v.is_table()) {
                    for (k, v) in sys {
                        by_name.insert(k["emulate.sysctl.".len()..].to_string(), v);
                    }
                    e.insert("sysctl".into(), toml::Value::Table(by_name));
                }
            }
        }
        return from_section(&tree);
    }
    // A simulator scenario: `--set emulate.cc=...` chooses the namespaces' congestion control
    // (the scenario's link is emulated, so no other `emulate.*` key applies); every other
    // override is the simulator's.
    let (emu, sim): (Vec<_>, Vec<_>) = overrides.iter().cloned().partition(|(k, _)| k == "emulate" || k.starts_with("emulate."));
    from_simulator(text, &sim, &emu)
}

/// `emulate.cc`: a kernel module name (letters, digits, `_`); whether this kernel has it is
/// checked when the namespaces are made (`sattcp emulate`).
fn parse_cc(c: &mut Ctx, v: Option<&toml::Value>) -> Option<String> {
    match v {
        None => None,
        Some(toml::Value::String(s)) if !s.is_empty() && s.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_') => Some(s.clone()),
        Some(v) => {
            c.err("emulate.cc", "must be the name of a kernel congestion control (reno, cubic, bbr, ...)", v.to_string());
            None
        }
    }
}

#[derive(Default)]
struct Ctx {
    problems: Vec<Problem>,
}

impl Ctx {
    fn err(&mut self, path: &str, rule: impl Into<String>, got: impl Into<String>) {
        self.problems.push(Problem { path: path.into(), rule: rule.into(), got: got.into() });
    }
    /// A string with a unit, parsed by `parse`; numbers are accepted where `bare` allows.
    fn unit<T>(&mut self, path: &str, v: Option<&toml::Value>, parse: impl Fn(&str) -> Result<T, String>) -> Option<T> {
        let v = v?;
        let text = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(x) => x.to_string(),
            other => {
                self.err(path, "must be a string with a unit", other.to_string());
                return None;
            }
        };
        match parse(&text) {
            Ok(x) => Some(x),
            Err(rule) => {
                self.err(path, rule, v.to_string());
                None
            }
        }
    }
}

fn from_section(tree: &toml::Table) -> Result<EmuConfig, ScenarioError> {
    let mut c = Ctx::default();
    for key in tree.keys() {
        if !["name", "description", "emulate"].contains(&key.as_str()) {
            c.err(key, "unknown key (an emulate scenario has only [emulate], name and description; without [emulate] the file is read as a simulator scenario)", "");
        }
    }
    let name = match tree.get("name") {
        None => "emulate".to_string(),
        Some(toml::Value::String(s)) => s.clone(),
        Some(v) => {
            c.err("name", "must be a string", v.to_string());
            String::new()
        }
    };
    let Some(toml::Value::Table(e)) = tree.get("emulate") else {
        c.err("emulate", "must be a table", tree["emulate"].to_string());
        return Err(ScenarioError { problems: c.problems });
    };
    for key in e.keys() {
        if !KEYS.contains(&key.as_str()) {
            c.err(&format!("emulate.{key}"), format!("unknown key (known: {})", KEYS.join(", ")), "");
        }
    }
    let rate = c.unit("emulate.rate", e.get("rate"), parse_rate);
    if e.get("rate").is_none() {
        c.err("emulate.rate", "is required (e.g. \"2.048Mbps\")", "");
    }
    let delay = c.unit("emulate.delay", e.get("delay"), parse_duration).unwrap_or(SimTime::ZERO);
    let ber = match e.get("ber") {
        None => 0.0,
        Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
            Some(x) if (0.0..1.0).contains(&x) => x,
            _ => {
                c.err("emulate.ber", "must be a number in [0, 1) (bit error rate per bit)", v.to_string());
                0.0
            }
        },
    };
    let framing = match e.get("framing") {
        None => Framing::Ip,
        Some(toml::Value::String(s)) if s == "ip" => Framing::Ip,
        Some(toml::Value::String(s)) if s == "atm" => Framing::Atm,
        Some(v) => {
            c.err("emulate.framing", "must be \"ip\" or \"atm\"", v.to_string());
            Framing::Ip
        }
    };
    let mtu = match e.get("mtu") {
        None => DEFAULT_MTU,
        Some(toml::Value::Integer(i)) if (MIN_MTU as i64..=MAX_MTU as i64).contains(i) => *i as u32,
        Some(v) => {
            c.err("emulate.mtu", format!("must be an integer between {MIN_MTU} and {MAX_MTU}"), v.to_string());
            DEFAULT_MTU
        }
    };
    let seed = match e.get("seed") {
        None => 1,
        Some(toml::Value::Integer(i)) if *i >= 0 => *i as u64,
        Some(v) => {
            c.err("emulate.seed", "must be an integer >= 0", v.to_string());
            1
        }
    };
    let cc = parse_cc(&mut c, e.get("cc"));
    let mut sysctl = BTreeMap::new();
    match e.get("sysctl") {
        None => {}
        Some(toml::Value::Table(t)) => {
            let mut named = Vec::new();
            sysctl_names("", t, &mut named);
            for (k, v) in named {
                let path = format!("emulate.sysctl.{k}");
                if !k.starts_with("net.") || !k.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch)) {
                    c.err(&path, "must be a per-namespace sysctl (net.*)", "");
                    continue;
                }
                let val = match v {
                    toml::Value::String(s) if !s.contains(['\n', '\0']) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    other => {
                        c.err(&path, "must be an integer or a string", other.to_string());
                        continue;
                    }
                };
                if sysctl.contains_key(&k) {
                    // Quoted ("net.ipv4.x" = ...) and as dotted keys (net.ipv4.x = ...): which?
                    c.err(&path, "is given twice (as a quoted name and as dotted keys)", val);
                    continue;
                }
                sysctl.insert(k, val);
            }
        }
        Some(v) => c.err("emulate.sysctl", "must be a table of sysctl = value", v.to_string()),
    }
    let queue = c.unit("emulate.queue", e.get("queue"), parse_size);
    let (queue_packets, queue_bytes) = match (queue, rate) {
        (None, _) => (Some(DEFAULT_QUEUE_PACKETS), None),
        (Some(size), Some(rate)) => resolve_queue(&mut c, "emulate.queue", size, framing, mtu, rate, delay, e.get("queue")),
        (Some(_), None) => (None, None),
    };
    if !c.problems.is_empty() {
        return Err(ScenarioError { problems: c.problems });
    }
    Ok(EmuConfig {
        name,
        rate_bps: rate.expect("checked above").as_bps(),
        delay_ns: delay.as_nanos(),
        ber,
        queue_packets,
        queue_bytes,
        framing,
        mtu,
        seed,
        cc,
        sysctl,
        source: "emulate".into(),
        schedule: None,
    })
}

/// The sysctls of `[emulate.sysctl]` by their dotted names: TOML's unquoted dotted keys
/// (`net.ipv4.tcp_sack = 0`) and `--set emulate.sysctl.net.ipv4.tcp_sack=0` give nested tables
/// (net -> ipv4 -> tcp_sack), which name the same sysctl as the quoted `"net.ipv4.tcp_sack"`.
fn sysctl_names<'a>(prefix: &str, t: &'a toml::Table, out: &mut Vec<(String, &'a toml::Value)>) {
    for (k, v) in t {
        let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(inner) => sysctl_names(&name, inner, out),
            _ => out.push((name, v)),
        }
    }
}

/// A queue size in the emulator's units; a byte limit must hold one full-size packet, as the
/// simulator requires of its buffers.
#[allow(clippy::too_many_arguments)]
fn resolve_queue(c: &mut Ctx, path: &str, size: Size, framing: Framing, mtu: u32, rate: Rate, delay: SimTime, given: Option<&toml::Value>) -> (Option<u64>, Option<u64>) {
    let got = given.map(|v| v.to_string()).unwrap_or_default();
    let bytes = match size {
        Size::Packets(0) => {
            c.err(path, "must be at least 1 packet", got);
            return (None, None);
        }
        Size::Packets(n) => return (Some(n), None),
        Size::Bytes(b) => b,
        Size::Cells(n) if framing == Framing::Atm => n.saturating_mul(CELL_BYTES),
        Size::Cells(_) => {
            c.err(path, "a queue in cells needs framing = \"atm\"", got);
            return (None, None);
        }
        // The bandwidth-delay product of the emulated path: rate x (2 x one-way delay).
        Size::Bdp(x) => (x * rate.bytes_in(delay.times(2)) as f64).round() as u64,
    };
    let full = framing.wire_bytes(mtu as u64);
    if bytes < full {
        c.err(path, format!("must hold at least one full-size packet ({full} bytes on the wire for the MTU of {mtu})"), got);
        return (None, None);
    }
    (None, Some(bytes))
}

/// The bottleneck of a simulator scenario, validated by the simulator's own loader.
fn from_simulator(text: &str, overrides: &[(String, toml::Value)], emulate: &[(String, toml::Value)]) -> Result<EmuConfig, ScenarioError> {
    let mut c = Ctx::default();
    let mut cc = None;
    for (k, v) in emulate {
        if k == "emulate.cc" {
            cc = parse_cc(&mut c, Some(v));
        } else {
            c.err(k, "a simulator scenario's link is emulated as it is: only emulate.cc (the namespaces' congestion control) can be set", v.to_string());
        }
    }
    let sc = match scenario::load(text, overrides, None) {
        Ok((sc, _)) => sc,
        Err(mut e) => {
            e.problems.extend(c.problems);
            return Err(e);
        }
    };
    let (source, link) = match &sc.topology {
        scenario::Topology::Dumbbell { bottleneck, .. } => ("links.bottleneck".to_string(), bottleneck),
        scenario::Topology::Path { hops } => {
            let i = (0..hops.len()).min_by_key(|&i| hops[i].rate).expect("validated: a path has hops");
            (format!("links.path.{i}"), &hops[i])
        }
        // Seed 004's system: its satellite link is the one to emulate.
        scenario::Topology::Gateway(g) => ("gateway.satellite".to_string(), &g.satellite),
        scenario::Topology::Graph(g) => (format!("links.graph.{}", g.bottleneck), &g.links[g.bottleneck].2),
    };
    let atm = matches!(sc.switch.kind, SwitchKind::Atm { .. });
    let framing = if atm { Framing::Atm } else { Framing::Ip };
    let rate = if atm { link.payload_rate } else { link.rate };
    // The scenario's packets keep their size: a full segment and its IP and TCP headers.
    let mtu = sc.tcp.mss + IP_HEADER + TCP_HEADER;
    if mtu < MIN_MTU {
        c.err("tcp.mss", format!("the emulated link's MTU is tcp.mss + {} (IP and TCP headers), at least {MIN_MTU} (IPv4): must be >= {}", IP_HEADER + TCP_HEADER, MIN_MTU - IP_HEADER - TCP_HEADER), sc.tcp.mss.to_string());
    }
    let (queue_packets, queue_bytes) = if atm {
        (None, Some(sc.switch.buffer_cells.saturating_mul(CELL_BYTES)))
    } else {
        let size = link.queue.unwrap_or(sc.switch.buffer);
        resolve_queue(&mut c, &format!("{source}.queue"), size, framing, mtu, rate, link.delay, None)
    };
    if link.schedule.as_ref().is_some_and(|s| s.varies_rate_or_ber()) {
        if sc.constellation.as_ref().is_some_and(|cr| cr.rates.is_some()) {
            c.err("constellation.rate_by_elevation", "the emulator follows the constellation's delays only (one rate): remove it", "");
        } else if sc.constellation.as_ref().is_some_and(|cr| cr.handover_ber.is_some()) {
            c.err("constellation.handover_ber", "the emulator follows the constellation's delays only (one bit-error stream): remove it", "");
        } else {
            c.err(&format!("{source}.schedule"), "the emulator follows a schedule's delays only (one rate, one bit-error stream): remove rate and ber from its entries", "");
        }
    }
    if !c.problems.is_empty() {
        return Err(ScenarioError { problems: c.problems });
    }
    Ok(EmuConfig {
        schedule: link.schedule.clone(),
        name: sc.name.clone(),
        rate_bps: rate.as_bps(),
        delay_ns: link.delay.as_nanos(),
        ber: link.ber,
        queue_packets,
        queue_bytes,
        framing,
        mtu,
        seed: sc.seed,
        cc,
        sysctl: BTreeMap::new(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED_003: &str = "[emulate]\nrate = \"2.048Mbps\"\ndelay = \"200ms\"\nframing = \"atm\"\nqueue = \"531cells\"\ncc = \"reno\"\n[emulate.sysctl]\n\"net.ipv4.tcp_sack\" = 0\n";

    #[track_caller]
    fn shown(text: &str, overrides: &[(&str, &str)]) -> Vec<String> {
        let ov: Vec<_> = overrides.iter().map(|(k, v)| (k.to_string(), scenario::parse_override_value(v))).collect();
        match load(text, &ov) {
            Ok(c) => panic!("expected problems, got {c:?}"),
            Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn seed_003_path_loads() {
        let c = load(SEED_003, &[]).unwrap();
        assert_eq!(c.rate(), Rate(2_048_000));
        assert_eq!(c.delay(), SimTime::from_millis(200));
        assert_eq!(c.queue_limit(), QueueLimit::Bytes(531 * 53));
        assert_eq!(c.framing, Framing::Atm);
        assert_eq!(c.cc.as_deref(), Some("reno"));
        assert_eq!(c.sysctl["net.ipv4.tcp_sack"], "0");
        assert_eq!(c.mtu, 1500);
    }

    #[test]
    fn defaults_and_overrides() {
        let c = load("[emulate]\nrate = \"2Mbps\"\n", &[("emulate.delay".into(), toml::Value::String("5ms".into()))]).unwrap();
        assert_eq!(c.queue_limit(), QueueLimit::Packets(DEFAULT_QUEUE_PACKETS));
        assert_eq!(c.delay(), SimTime::from_millis(5));
        assert_eq!((c.ber, c.framing, c.seed), (0.0, Framing::Ip, 1));
        // 0.5 bdp of 2 Mbps x 2 x 100 ms = 25,000 bytes.
        let c = load("[emulate]\nrate = \"2Mbps\"\ndelay = \"100ms\"\nqueue = \"0.5bdp\"\n", &[]).unwrap();
        assert_eq!(c.queue_limit(), QueueLimit::Bytes(25_000));
    }

    #[test]
    fn every_problem_with_its_path() {
        assert_eq!(
            shown("[emulate]\nrate = \"2Mbs\"\ndelay = \"-1ms\"\nber = 2\nframing = \"aal5\"\nmtu = 40\ncc = \"a b\"\ncolour = 1\n[emulate.sysctl]\n\"kernel.panic\" = 1\n", &[]),
            [
                "emulate.colour: unknown key (known: rate, delay, ber, queue, framing, mtu, seed, cc, sysctl)",
                "emulate.rate: unknown rate unit \"Mbs\" (use bps, kbps, Mbps or Gbps), got \"2Mbs\"",
                "emulate.delay: must be >= 0, got \"-1ms\"",
                "emulate.ber: must be a number in [0, 1) (bit error rate per bit), got 2",
                "emulate.framing: must be \"ip\" or \"atm\", got \"aal5\"",
                "emulate.mtu: must be an integer between 68 and 65535, got 40",
                "emulate.cc: must be the name of a kernel congestion control (reno, cubic, bbr, ...), got \"a b\"",
                "emulate.sysctl.kernel.panic: must be a per-namespace sysctl (net.*)",
            ]
        );
        assert_eq!(shown("[emulate]\ndelay = \"1ms\"\n", &[]), ["emulate.rate: is required (e.g. \"2.048Mbps\")"]);
    }

    #[test]
    fn a_sysctl_written_as_dotted_keys_is_one_name() {
        // TOML's unquoted dotted key and `--set emulate.sysctl.net.ipv4.tcp_sack=0` make nested
        // tables (net -> ipv4 -> tcp_sack): the same sysctl as the quoted name, not
        // "emulate.sysctl.net: must be a per-namespace sysctl (net.*)".
        let dotted = load("[emulate]\nrate = \"2Mbps\"\n[emulate.sysctl]\nnet.ipv4.tcp_sack = 0\n\"net.core.rmem_max\" = 4194304\n", &[]).unwrap();
        assert_eq!(dotted.sysctl.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>(), [("net.core.rmem_max", "4194304"), ("net.ipv4.tcp_sack", "0")]);
        let set = load("[emulate]\nrate = \"2Mbps\"\n", &[("emulate.sysctl.net.ipv4.tcp_slow_start_after_idle".into(), toml::Value::Integer(0))]).unwrap();
        assert_eq!(set.sysctl["net.ipv4.tcp_slow_start_after_idle"], "0");
        // `--set` replaces the file's value whether the file quotes the name or not (the quoted
        // one used to win, silently).
        for file in ["\"net.ipv4.tcp_rmem\" = \"4096 131072 6291456\"", "net.ipv4.tcp_rmem = \"4096 131072 6291456\""] {
            let text = format!("[emulate]\nrate = \"2Mbps\"\n[emulate.sysctl]\n{file}\n\"net.core.rmem_max\" = 1\n");
            let set = load(&text, &[("emulate.sysctl.net.ipv4.tcp_rmem".into(), toml::Value::String("4096 67108864 67108864".into()))]).unwrap();
            assert_eq!(set.sysctl["net.ipv4.tcp_rmem"], "4096 67108864 67108864", "{file}");
            assert_eq!(set.sysctl["net.core.rmem_max"], "1", "the file's other sysctls stay");
        }
        // A file naming one sysctl both ways is refused, naming it.
        assert_eq!(shown("[emulate]\nrate = \"2Mbps\"\n[emulate.sysctl]\n\"net.ipv4.tcp_sack\" = 0\nnet.ipv4.tcp_sack = 1\n", &[]), [
            "emulate.sysctl.net.ipv4.tcp_sack: is given twice (as a quoted name and as dotted keys), got 0",
        ]);
        assert_eq!(shown("[emulate]\nrate = \"2Mbps\"\n[emulate.sysctl]\nkernel.panic = 1\nnet.ipv4 = true\n", &[]), [
            "emulate.sysctl.kernel.panic: must be a per-namespace sysctl (net.*)",
            "emulate.sysctl.net.ipv4: must be an integer or a string, got true",
        ]);
    }

    #[test]
    fn queues_too_small_or_in_the_wrong_unit() {
        assert_eq!(
            shown("[emulate]\nrate = \"2Mbps\"\nqueue = \"1000B\"\n", &[]),
            ["emulate.queue: must hold at least one full-size packet (1500 bytes on the wire for the MTU of 1500), got \"1000B\""]
        );
        // With ATM framing a 1500-byte packet is 32 cells, 1696 bytes.
        assert_eq!(
            shown("[emulate]\nrate = \"2Mbps\"\nframing = \"atm\"\nqueue = \"31cells\"\n", &[]),
            ["emulate.queue: must hold at least one full-size packet (1696 bytes on the wire for the MTU of 1500), got \"31cells\""]
        );
        assert_eq!(shown("[emulate]\nrate = \"2Mbps\"\nqueue = \"10cells\"\n", &[]), ["emulate.queue: a queue in cells needs framing = \"atm\", got \"10cells\""]);
        assert_eq!(shown("[emulate]\nrate = \"2Mbps\"\nqueue = \"0pkt\"\n", &[]), ["emulate.queue: must be at least 1 packet, got \"0pkt\""]);
    }

    #[test]
    fn a_simulator_scenario_gives_its_bottleneck() {
        let text = "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[[links.path]]\nrate = \"2Mbps\"\ndelay = \"250ms\"\nber = 1e-6\nqueue = \"20pkt\"\n";
        let c = load(text, &[]).unwrap();
        assert_eq!((c.source.as_str(), c.rate(), c.delay(), c.ber, c.queue_limit()), ("links.path.1", Rate::mbps(2), SimTime::from_millis(250), 1e-6, QueueLimit::Packets(20)));
        assert_eq!(c.schedule, None);
        // Its problems are the simulator's.
        let p = shown(text, &[("tcp.mss", "0")]);
        assert!(p.iter().any(|p| p.starts_with("tcp.mss")), "{p:?}");
        assert_eq!(shown("name = 3\n[emulate]\nrate = \"1Mbps\"\n[tcp]\nmss = 1\n", &[])[..2], ["tcp: unknown key (an emulate scenario has only [emulate], name and description; without [emulate] the file is read as a simulator scenario)".to_string(), "name: must be a string, got 3".to_string()]);
    }

    #[test]
    fn a_simulator_scenarios_packets_keep_their_size() {
        // The TUN devices' MTU is the scenario's packet size, tcp.mss + 40 (IP and TCP headers):
        // it was 1500 whatever the MSS, so seed 000's 9180-byte segments crossed the emulated
        // link as 1500-byte packets (other cell counts, other goodput) without a word.
        let text = "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"2Mbps\"\ndelay = \"250ms\"\n[tcp]\nmss = 9180\n";
        assert_eq!(load(text, &[]).unwrap().mtu, 9220);
        let set = |k: &str, v: i64| (k.to_string(), toml::Value::Integer(v));
        assert_eq!(load(text, &[set("tcp.mss", 1460)]).unwrap().mtu, 1500);
        // A byte queue must hold one packet of that size.
        let p = shown(&format!("{text}[switch]\nbuffer = \"9000B\"\n"), &[]);
        assert!(p.iter().any(|p| p.contains("must hold at least one") && p.contains("9220")), "{p:?}");
        assert_eq!(shown(text, &[("tcp.mss", "20")]), ["tcp.mss: the emulated link's MTU is tcp.mss + 40 (IP and TCP headers), at least 68 (IPv4): must be >= 28, got 20"]);
    }

    #[test]
    fn a_simulator_scenario_takes_emulate_cc_and_no_other_emulate_key() {
        let text = "[topology]\nkind = \"dumbbell\"\n[links.access]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n[links.bottleneck]\nrate = \"2Mbps\"\ndelay = \"250ms\"\n";
        let set = |k: &str, v: &str| (k.to_string(), toml::Value::String(v.to_string()));
        assert_eq!(load(text, &[]).unwrap().cc, None);
        let c = load(text, &[set("emulate.cc", "bbr"), set("links.bottleneck.delay", "20ms")]).unwrap();
        assert_eq!((c.cc.as_deref(), c.delay()), (Some("bbr"), SimTime::from_millis(20)));
        assert_eq!(shown(text, &[("emulate.cc", "b b")]), ["emulate.cc: must be the name of a kernel congestion control (reno, cubic, bbr, ...), got \"b b\""]);
        assert_eq!(
            shown(text, &[("emulate.delay", "1ms"), ("tcp.mss", "0")]).iter().map(|p| p.split(':').next().unwrap().to_string()).collect::<Vec<_>>(),
            ["tcp.mss", "emulate.delay"]
        );

    }
}
