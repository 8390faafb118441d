//! Raw scenario -> validated [`Scenario`], collecting every problem with its path.

use super::raw::{RawApp, RawLink, RawScenario, RawTcp, Val};
use super::{Problem, ScenarioError};
use crate::app::www::{FirstBatch, Truncation, WwwParams};
use crate::atm::{buffer_cells, cells_for_tcp_payload, DropPolicy, SEED_R, SEED_Z};
use crate::net::packet::{IP_HEADER, TCP_HEADER};
use crate::tcp::{config::flavor, BackoffReset, CcKind, RecoveryKind, RttEstimatorKind, TcpConfig};
use crate::time::{parse_duration, parse_rate, parse_size, scaled_u64, Rate, SimTime, Size};

/// The rule of a byte count (a bdp multiple) beyond a u64: `tcp.ssthresh`'s and a drop-tail queue's.
const TOO_MANY_BYTES: &str = "too large (at most 2^64 - 1 bytes)";

/// A scenario keyword: an enum each of whose values has one name in scenario files. Parsing
/// (`Ctx::keyword`) and the allowed names in error messages both come from [`Keyword::ALL`]
/// and [`Keyword::name`], which [`keywords!`] declares together from one list (`name` is an
/// exhaustive match: a variant added without a name does not compile).
pub trait Keyword: Copy + 'static {
    /// Every value, in the order messages list them.
    const ALL: &'static [Self];
    /// The value's name in scenario files.
    fn name(self) -> &'static str;
    /// The value named `s`.
    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == s)
    }
    /// Every name, in order.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|k| k.name()).collect()
    }
}

/// `keywords!(Enum { Variant = "name", ... })`: implements [`Keyword`] for a unit enum.
macro_rules! keywords {
    ($t:ident { $($v:ident = $n:literal),+ $(,)? }) => {
        impl Keyword for $t {
            const ALL: &'static [Self] = &[$($t::$v),+];
            fn name(self) -> &'static str {
                match self {
                    $($t::$v => $n),+
                }
            }
        }
    };
}

/// `topology.kind`: the kinds of [`Topology`] ([`Topology::kind`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TopologyKind {
    Dumbbell,
    Path,
    Graph,
    Gateway,
}
keywords!(TopologyKind { Dumbbell = "dumbbell", Path = "path", Graph = "graph", Gateway = "gateway" });

/// `switch.kind`: the kinds of [`SwitchKind`] ([`SwitchKind::name_of`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SwitchKindName {
    DropTail,
    Atm,
}
keywords!(SwitchKindName { DropTail = "droptail", Atm = "atm" });

/// `tcp.profile`: the defaults a TCP configuration starts from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TcpProfile {
    /// `TcpConfig::default()`.
    Default,
    /// ns-2.35's (`tcp::ns2::Ns2Compat::profile_ns235`).
    Ns2,
}
keywords!(TcpProfile { Default = "default", Ns2 = "ns2" });

// Keywords of enums defined with the models they select.
use crate::orbit::route::{Attach, Mode};
keywords!(Mode { Isl = "isl", BentPipe = "bentpipe" });
keywords!(Attach { LeastDelay = "least_delay", HighestElevation = "highest_elevation" });
keywords!(FirstBatch { Staggered = "staggered", AtZero = "zero" });
keywords!(Truncation { Clamp = "clamp", Resample = "resample" });
keywords!(BackoffReset { Sample = "sample", AllAcked = "all_acked", NewAck = "new_ack" });
keywords!(RttEstimatorKind { Ns2 = "ns2", Ns3 = "ns3", Linux = "linux" });

mod moving;
pub use moving::{fill_constellation, ConstellationRun};

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
    /// A moving link's delay (rate, BER) over time; `delay` is then its initial delay.
    pub schedule: Option<crate::net::schedule::Schedule>,
}

#[path = "gateway.rs"]
pub mod gateway;

#[derive(Clone, Debug, serde::Serialize)]
pub enum Topology {
    /// N sources -> R1 -> bottleneck -> R2 -> N sinks (the seeds' configuration).
    Dumbbell { pairs: u32, access: LinkSpec, bottleneck: LinkSpec },
    /// One flow over a chain of hops with routers between them.
    Path { hops: Vec<LinkSpec> },
    /// Seed 004's satellite system: servers, terrestrial links, the SGW, the satellite link and
    /// its return channel, the clients (`[gateway]`, scenario/gateway.rs).
    Gateway(Box<gateway::GatewaySpec>),
    /// Named nodes joined by duplex links; flows between chosen nodes; static routes by
    /// shortest path (`net::topology::shortest_paths`).
    Graph(Box<Graph>),
}

/// A validated graph topology.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Graph {
    pub nodes: Vec<String>,
    /// (from, to, link): each a duplex link, named "from->to" and "to->from".
    pub links: Vec<(u32, u32, LinkSpec)>,
    /// (source, destination) of each flow.
    pub flows: Vec<(u32, u32)>,
    /// Index in `links` of the bottleneck (its forward direction).
    pub bottleneck: usize,
}

impl Graph {
    /// Shortest-path delay from `a` to `b` (by delay, then hop count), if connected.
    pub fn path_delay(&self, a: u32, b: u32) -> Option<SimTime> {
        crate::net::topology::shortest_paths(self.nodes.len(), &self.directed(), b)[a as usize].map(|(d, _)| d)
    }

    /// The one-way links in engine order: (from, to, delay) for "from->to" then "to->from".
    pub fn directed(&self) -> Vec<(u32, u32, SimTime)> {
        self.links.iter().flat_map(|(a, b, l)| [(*a, *b, l.delay), (*b, *a, l.delay)]).collect()
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum SwitchKind {
    /// IP routers with FIFO drop-tail queues.
    DropTail,
    /// ATM switches, cell by cell, with a UBR+ drop policy (seed 000 §3).
    Atm { policy: DropPolicy },
}

impl SwitchKind {
    /// Its `switch.kind`.
    pub fn name_of(&self) -> SwitchKindName {
        match self {
            SwitchKind::DropTail => SwitchKindName::DropTail,
            SwitchKind::Atm { .. } => SwitchKindName::Atm,
        }
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct SwitchSpec {
    pub kind: SwitchKind,
    /// Buffer of the port feeding the bottleneck, each direction.
    pub buffer: Size,
    /// ATM: the buffer in cells (Table 3 conversion of a bdp multiple).
    pub buffer_cells: u64,
    /// ATM, frame-aware policies: partial packet discard (atm/port.rs).
    pub partial_packet_discard: bool,
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum AppSpec {
    /// A persistent sender with always more to send.
    Bulk { start: SimTime, stagger: SimTime },
    /// A fixed-size transfer.
    Transfer { bytes: u64, start: SimTime, stagger: SimTime },
    /// The seeds' WWW client/server pairs (seed 000 §4.1-4.2): requests one way, files back.
    Www { params: Box<WwwParams> },
    /// NetPIPE's ping-pong (seed 003, `app::pingpong`) on host pair 0.
    PingPong(PingPongSpec),
}

/// `app.kind`: the kinds of [`AppSpec`] ([`AppSpec::kind`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppKind {
    Bulk,
    Transfer,
    Www,
    PingPong,
}
keywords!(AppKind { Bulk = "bulk", Transfer = "transfer", Www = "www", PingPong = "pingpong" });

impl AppSpec {
    /// Its `app.kind`.
    pub fn kind(&self) -> AppKind {
        match self {
            AppSpec::Bulk { .. } => AppKind::Bulk,
            AppSpec::Transfer { .. } => AppKind::Transfer,
            AppSpec::Www { .. } => AppKind::Www,
            AppSpec::PingPong(_) => AppKind::PingPong,
        }
    }
}

/// `[app] kind = "pingpong"`: NetPIPE's schedule of block sizes (or an explicit list) and the
/// round trips per size.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PingPongSpec {
    pub first_block: u64,
    pub last_block: u64,
    pub perturbation: u64,
    pub repeats: u32,
    /// Round trips per trial (`app.nrepeat`); None: one.
    pub nrepeat: Option<crate::app::pingpong::NRepeat>,
    /// Explicit sizes (`app.blocks`), replacing the schedule.
    pub blocks: Option<Vec<u64>>,
}

impl PingPongSpec {
    /// The block sizes, in the order they run.
    pub fn sizes(&self) -> Vec<u64> {
        self.schedule().into_iter().map(|(size, _)| size).collect()
    }

    /// The block sizes with NetPIPE's increment at each (the schedule's; for an explicit list,
    /// each size's step from the one before, the first's from the 1-byte warm-up, at least 1).
    pub fn schedule(&self) -> Vec<(u64, u64)> {
        match &self.blocks {
            Some(b) => b.iter().scan(1u64, |prev, &n| Some((n, n.saturating_sub(std::mem::replace(prev, n)).max(1)))).collect(),
            None => crate::app::pingpong::netpipe_schedule(self.first_block, self.last_block, self.perturbation),
        }
    }

    /// The schedule's round trips and the bytes they carry one way on `topology`
    /// ([`crate::app::pingpong::schedule_work`]: an upper bound, retransmissions aside). NetPIPE's
    /// `tlast` (for `nrepeat = "netpipe"`) is at least the path's propagation delay plus the
    /// block's bits at its slowest line rate where the topology fixes them (a dumbbell's pair, a
    /// path, neither with a moving link); elsewhere its floor is 0, and each size's bound is
    /// NetPIPE's largest `nrepeat`.
    pub fn work(&self, topology: &Topology) -> (u64, u64) {
        let fixed = |links: &[&LinkSpec]| -> Option<(SimTime, Rate)> {
            if links.iter().any(|l| l.schedule.is_some()) {
                return None;
            }
            let delay = links.iter().fold(SimTime::ZERO, |t, l| t + l.delay);
            links.iter().map(|l| l.rate).min_by_key(|r| r.as_bps()).map(|rate| (delay, rate))
        };
        let path = match topology {
            Topology::Dumbbell { access, bottleneck, .. } => fixed(&[access, bottleneck, access]),
            Topology::Path { hops } => fixed(&hops.iter().collect::<Vec<_>>()),
            Topology::Gateway(_) | Topology::Graph(_) => None,
        };
        let floor = |bytes: u64| path.map_or(SimTime::ZERO, |(delay, rate)| delay + rate.tx_time(bytes));
        crate::app::pingpong::schedule_work(&self.schedule(), self.repeats, self.nrepeat.unwrap_or(crate::app::pingpong::NRepeat::Fixed(1)), floor)
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct LossSpec {
    pub flow: u32,
    /// Data offset (0-based) of the first byte of the segment to drop.
    pub offset: u64,
    /// Which transmission of that segment (0 = the first).
    pub transmission: u16,
    /// Where it is dropped: `None` at the sending host, or the name of the link into whose
    /// queue it would have entered.
    pub at: Option<String>,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TraceSpec {
    pub flows: Vec<u32>,
    pub links: Vec<String>,
    /// Packet events recorded (`trace::spec`), at most `max_packet_events` of them.
    pub packets: Option<crate::trace::PacketFilter>,
    pub max_packet_events: u64,
    /// Where the packet log reads the memory available (`trace::memory`): the machine's. Not a
    /// scenario key; tests fix it (and `sattcp._core.Simulation(packet_log_memory=...)`).
    #[serde(skip)]
    pub packet_memory: crate::trace::memory::MemorySource,
    /// Points the time-series traces hold together at most.
    pub max_points: u64,
}

/// A validated scenario: every value in engine units, every rule checked.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub duration: SimTime,
    pub seed: u64,
    /// `run.chain_hops`: a packet crosses a hop that only one link feeds without an event of
    /// its own (`net::topology::single_feeders`); same results, fewer events.
    pub chain_hops: bool,
    pub topology: Topology,
    pub switch: SwitchSpec,
    /// The `[tcp]` configuration: every flow's unless a group sets it.
    pub tcp: TcpConfig,
    /// `[[tcp.groups]]`, in order, each merged over `[tcp]`.
    pub tcp_groups: Vec<TcpConfig>,
    /// Data flow index -> its group in `tcp_groups`.
    pub tcp_of_flow: std::collections::BTreeMap<u32, usize>,
    pub app: AppSpec,
    pub losses: Vec<LossSpec>,
    pub trace: TraceSpec,
    /// The path `[constellation]` computed, for the run's traces.
    pub constellation: Option<ConstellationRun>,
    /// Keys given that this scenario's kinds do not use (`app.bytes` with a bulk application:
    /// a `--set app.kind = "bulk"` over a transfer keeps the file's `app.bytes`), each as
    /// "PATH: why: ignored"; the run's warnings repeat them, so that none is lost in silence.
    pub ignored: Vec<String>,
    /// Values valid but doubtful (a TLE set used far from its epoch), each as "PATH: why": the
    /// run's warnings repeat them after [`Scenario::ignored`].
    pub notes: Vec<String>,
}

/// Longest `run.duration` accepted: a run of centuries could never finish.
pub const MAX_DURATION: SimTime = SimTime::from_secs(1_000_000);

/// Most hops in a path topology: every router keeps a route to every node, so the engine's
/// memory grows with the square of the hop count.
pub const MAX_HOPS: usize = 1000;

impl Topology {
    /// Its `topology.kind`.
    pub fn kind(&self) -> TopologyKind {
        match self {
            Topology::Dumbbell { .. } => TopologyKind::Dumbbell,
            Topology::Path { .. } => TopologyKind::Path,
            Topology::Gateway(_) => TopologyKind::Gateway,
            Topology::Graph(_) => TopologyKind::Graph,
        }
    }

    /// The bottleneck link: the dumbbell's router-to-router link, or a path's slowest hop
    /// (`None` for a path without hops, which validation rejects).
    pub fn bottleneck(&self) -> Option<&LinkSpec> {
        match self {
            Topology::Dumbbell { bottleneck, .. } => Some(bottleneck),
            Topology::Path { hops } => hops.iter().min_by_key(|h| h.rate),
            Topology::Gateway(g) => Some(&g.satellite),
            Topology::Graph(g) => g.links.get(g.bottleneck).map(|l| &l.2),
        }
    }

    /// The bottleneck's line rate (1 bps when there is none, so that nothing divides by 0).
    pub fn bottleneck_rate(&self) -> Rate {
        self.bottleneck().map_or(Rate(1), |l| l.rate)
    }

    /// Round-trip propagation delay used for "bdp" sizes. For the dumbbell this is twice the
    /// bottleneck's delay: the seeds neglect the 5 us access links (seed 000 §4.2.1: "RTTs
    /// due to propagation delay are 10ms, 200ms and 550ms"), which gives their ssthresh of
    /// 3,093,750 bytes at GEO exactly. For a path it is twice the sum of the hops' delays.
    pub fn rtt_prop(&self) -> SimTime {
        match self {
            Topology::Dumbbell { bottleneck, .. } => bottleneck.delay.times(2),
            Topology::Path { hops } => hops.iter().fold(SimTime::ZERO, |a, h| a + h.delay).times(2),
            // The satellite round trip plus the first server's terrestrial round trip.
            Topology::Gateway(g) => g.sat_rtt() + g.servers.first().map_or(SimTime::ZERO, |s| s.delay.times(2)),
            // A graph: twice the shortest-path delay of its first flow.
            Topology::Graph(g) => g.flows.first().and_then(|&(a, b)| g.path_delay(a, b)).unwrap_or(SimTime::ZERO).times(2),
        }
    }

    /// Bandwidth-delay product in bytes: the bottleneck's line `rate` x [`Self::rtt_prop`]
    /// (saturating). This one serves the default ssthresh, "bdp" byte counts and drop-tail
    /// buffers. ATM switch buffers given as a bdp multiple are converted in cells instead, by
    /// `atm::bdp_cells` at the bottleneck's `payload_rate` (the cell rate after SONET framing,
    /// Table 3 of seed 000); both rates are the same unless `payload_rate` is given.
    pub fn bdp_bytes(&self) -> u64 {
        self.bottleneck_rate().bytes_in(self.rtt_prop())
    }

    /// The names the engine gives its links, in the engine's order (the names `trace.links`
    /// and the per-link results use). Dumbbell with N pairs: "bottleneck", "bottleneck-rev",
    /// then for each pair i "src{i}->r1", "r1->src{i}", "r2->dst{i}", "dst{i}->r2". Path with
    /// H hops: "hop{i}", "hop{i}-rev" for each hop i.
    pub fn link_names(&self) -> Vec<String> {
        match self {
            Topology::Dumbbell { pairs, .. } => {
                let mut names = vec!["bottleneck".to_string(), "bottleneck-rev".to_string()];
                for i in 0..*pairs {
                    names.extend([format!("src{i}->r1"), format!("r1->src{i}"), format!("r2->dst{i}"), format!("dst{i}->r2")]);
                }
                names
            }
            Topology::Path { hops } => (0..hops.len()).flat_map(|i| [format!("hop{i}"), format!("hop{i}-rev")]).collect(),
            Topology::Gateway(g) => gateway::link_names(g),
            Topology::Graph(g) => {
                let n = |i: u32| &g.nodes[i as usize];
                g.links.iter().flat_map(|(a, b, _)| [format!("{}->{}", n(*a), n(*b)), format!("{}->{}", n(*b), n(*a))]).collect()
            }
        }
    }
}

impl Scenario {
    /// Number of TCP connections (flows).
    pub fn flows(&self) -> u32 {
        match &self.topology {
            Topology::Dumbbell { pairs, .. } => *pairs,
            Topology::Path { .. } => 1,
            Topology::Gateway(g) => g.servers.len() as u32,
            Topology::Graph(g) => g.flows.len() as u32,
        }
    }

    /// A ping-pong run's round trips and the bytes they carry each way at most
    /// ([`PingPongSpec::work`] on this topology); None for other applications.
    pub fn pingpong_work(&self) -> Option<(u64, u64)> {
        match &self.app {
            AppSpec::PingPong(pp) => Some(pp.work(&self.topology)),
            _ => None,
        }
    }

    /// The TCP configuration of data flow (host pair) `flow`: its `[[tcp.groups]]` entry's, or
    /// `[tcp]`.
    pub fn tcp_for(&self, flow: u32) -> &TcpConfig {
        self.tcp_of_flow.get(&flow).map_or(&self.tcp, |&g| &self.tcp_groups[g])
    }

    /// The bottleneck's line rate: see [`Topology::bottleneck_rate`].
    pub fn bottleneck_rate(&self) -> Rate {
        self.topology.bottleneck_rate()
    }

    /// See [`Topology::rtt_prop`].
    pub fn rtt_prop(&self) -> SimTime {
        self.topology.rtt_prop()
    }

    /// See [`Topology::bdp_bytes`] (line rate, not the ATM cell rate).
    pub fn bdp_bytes(&self) -> u64 {
        self.topology.bdp_bytes()
    }
}

/// Collects problems while converting.
struct Ctx {
    problems: Vec<Problem>,
    /// Paths whose value could not be read (a type error, already reported), or was derived
    /// from a value already reported invalid ([`Ctx::poison`]): validation sees their defaults
    /// or a meaningless value, so problems at or under them would be consequences, not findings.
    unread: Vec<String>,
    /// Every `*.queue` that [`Ctx::link`] read, in that order: (its path, its size, the value
    /// as written), for the drop-tail rules of [`section_switch`].
    queues: Vec<(String, Size, String)>,
    /// Values derived from the bandwidth-delay product (a size in bdp, given or by default):
    /// (path, the value as written with what it came to and from which keys, [`Bdp::shown`]),
    /// shown as `got` by every problem at that path ([`Ctx::err`]), so that a rule broken by
    /// the derived value names the keys it came from (`links.bottleneck.delay = 0s`).
    derived: Vec<(String, String)>,
    /// Keys given that the scenario's kinds do not use ([`Ctx::ignore`]), for the run's warnings.
    ignored: Vec<String>,
    /// Valid values whose results the run should warn of ([`Ctx::note`]).
    notes: Vec<String>,
}

/// `path` is `at` or lies under it ("tcp.mss" under "tcp").
fn at_or_under(path: &str, at: &str) -> bool {
    path == at || (path.starts_with(at) && path[at.len()..].starts_with('.'))
}

/// Splits a message in the "rule, got VALUE" form that some checks outside this module
/// return ("must be in (0, 1], got 1.5") into its rule and value.
fn split_got(msg: &str) -> (String, String) {
    match msg.rsplit_once(", got ") {
        Some((rule, got)) => (rule.to_string(), got.to_string()),
        None => (msg.to_string(), String::new()),
    }
}

impl Ctx {
    /// `path` was given but this scenario's kinds do not use it: a warning of the run, not a
    /// problem ([`Scenario::ignored`]).
    fn ignore(&mut self, path: &str, why: &str) {
        self.ignored.push(format!("{path}: {why}: ignored"));
    }

    /// `path`'s value is valid but its results doubtful: a warning of the run, not a problem
    /// ([`Scenario::notes`]).
    fn note(&mut self, path: &str, why: &str) {
        self.notes.push(format!("{path}: {why}"));
    }

    fn err(&mut self, path: &str, rule: impl Into<String>, got: impl Into<String>) {
        if self.unread.iter().any(|u| at_or_under(path, u)) {
            return;
        }
        let got = match self.derived.iter().rev().find(|(p, _)| p == path) {
            Some((_, shown)) => shown.clone(),
            None => got.into(),
        };
        self.problems.push(Problem { path: path.into(), rule: rule.into(), got });
    }

    /// The value at `path` is `shown` derived from the bdp (see [`Ctx::derived`]).
    fn derive(&mut self, path: &str, shown: String) {
        self.derived.push((path.to_string(), shown));
    }

    /// Whether anything at, under or above `path` is invalid or unread: checks that combine
    /// it with other values would only repeat that problem (or invent one from a default).
    fn bad(&self, path: &str) -> bool {
        let related = |p: &str| at_or_under(p, path) || at_or_under(path, p);
        self.problems.iter().any(|p| related(&p.path)) || self.unread.iter().any(|u| related(u))
    }

    /// Whether `path` as a whole is invalid or unread: a problem at it or above it (problems
    /// under it, in its parts, do not count).
    fn bad_whole(&self, path: &str) -> bool {
        self.problems.iter().any(|p| at_or_under(path, &p.path)) || self.unread.iter().any(|u| at_or_under(path, u))
    }

    /// The value at `path` was derived from one already reported invalid (a size in bdp of a
    /// bandwidth-delay product computed from an invalid link): it is not judged, as if unread.
    fn poison(&mut self, path: &str) {
        self.unread.push(path.to_string());
    }

    /// The rules of a drop-tail queue, shared by `switch.buffer` and every `links.*.queue`:
    /// sizes in bytes, packets or a bdp multiple (cells are for ATM ports), holding at least
    /// one packet of MSS + 40 bytes. A size in bytes is not judged against an invalid MSS, nor
    /// a bdp multiple against an unknown bdp: that would only repeat their problem.
    fn droptail_queue(&mut self, path: &str, size: Size, got: &str, mss: u32, bdp: Bdp) {
        let packet = (mss + IP_HEADER + TCP_HEADER) as u64;
        let mss_ok = !self.bad("tcp.mss");
        let too_small = match size {
            Size::Bytes(b) => b < packet && mss_ok,
            Size::Packets(p) => p < 1,
            Size::Bdp(_) if !bdp.known => false,
            Size::Bdp(k) => {
                if scaled_u64(k, bdp.bytes as f64).is_none() {
                    // `as u64` would saturate at 2^64 - 1 bytes and take it for a buffer
                    // (tcp.ssthresh's rule, `Ctx::bytes`).
                    self.err(path, TOO_MANY_BYTES, got);
                    return;
                }
                // (Rounded down here, where `Ctx::bytes` rounds: a queue holds whole bytes.)
                let bytes = (k * bdp.bytes as f64) as u64;
                self.derive(path, bdp.shown(got, bytes, "bytes"));
                bytes < packet && mss_ok
            }
            Size::Cells(_) => {
                self.err(path, "cells are for ATM switches; give bytes, packets or a bdp multiple", got);
                false
            }
        };
        if too_small {
            self.err(path, format!("must hold at least one packet ({packet} bytes at MSS {mss})"), got);
        }
    }

    /// The keyword at `path` (`default` if absent); None after reporting an unknown name with
    /// the allowed ones ("must be \"a\", \"b\" or \"c\"", from [`Keyword::names`]).
    fn keyword<K: Keyword>(&mut self, path: &str, v: Option<&str>, default: K) -> Option<K> {
        let Some(s) = v else { return Some(default) };
        let k = K::from_name(s);
        if k.is_none() {
            self.err(path, one_of(&K::names()), format!("{s:?}"));
        }
        k
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

    /// A duration that must be > 0: 0 and a negative one are reported with that rule (not the
    /// general ">= 0" of `parse_duration`) and the value as written, and leave `default`.
    fn positive_duration(&mut self, path: &str, v: Option<&Val>, default: SimTime) -> SimTime {
        if let Some(Val::Str(s)) = v {
            if parse_duration(s).is_err_and(|e| e == crate::time::NOT_NEGATIVE) || parse_duration(s) == Ok(SimTime::ZERO) {
                self.err(path, "must be > 0", format!("{s:?}"));
                return default;
            }
        }
        self.duration(path, v, default)
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

    /// A byte count: integer or size string in bytes ("bdp" allowed when `bdp` is given). A
    /// multiple of an unknown bdp is poisoned (`Ctx::poison`) and None.
    fn bytes(&mut self, path: &str, v: Option<&Val>, bdp: Option<Bdp>) -> Option<u64> {
        let got = v.map(|v| v.to_string()).unwrap_or_default();
        match self.size(path, v)? {
            Size::Bytes(b) => Some(b),
            Size::Bdp(k) => match bdp {
                Some(bdp) if !bdp.known => {
                    self.poison(path);
                    None
                }
                // `as u64` would saturate silently at u64::MAX (`scaled_u64` checks first).
                Some(bdp) => match scaled_u64(k, bdp.bytes as f64) {
                    Some(bytes) => {
                        self.derive(path, bdp.shown(&got, bytes, "bytes"));
                        Some(bytes)
                    }
                    None => {
                        self.err(path, TOO_MANY_BYTES, got);
                        None
                    }
                },
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
            Some(x) => self.within(path, x, lo, hi, "").unwrap_or(default),
        }
    }

    /// `x` if it lies in `lo..=hi`, else None after reporting "must be between LO and HI"
    /// (`unit` after it: "", " km"): the range rule of every number, optional or required.
    fn within<T: PartialOrd + std::fmt::Display>(&mut self, path: &str, x: T, lo: T, hi: T, unit: &str) -> Option<T> {
        if x >= lo && x <= hi {
            return Some(x);
        }
        self.err(path, format!("must be between {lo} and {hi}{unit}"), x.to_string());
        None
    }

    /// A number that must be given, in `lo..=hi`: absent, "is required (LO to HI)"; given
    /// outside, [`Ctx::within`]'s rule. None after reporting either.
    fn required<T: PartialOrd + std::fmt::Display>(&mut self, path: &str, v: Option<T>, lo: T, hi: T, unit: &str) -> Option<T> {
        match v {
            None => {
                self.err(path, format!("is required ({lo} to {hi}{unit})"), "");
                None
            }
            Some(x) => self.within(path, x, lo, hi, unit),
        }
    }

    fn link(&mut self, path: &str, l: Option<&RawLink>) -> LinkSpec {
        let Some(l) = l else {
            // Its rate is not reported missing as well: one problem, one line.
            self.err(path, "is required (a table with rate and delay)", "");
            return LinkSpec { rate: Rate(1), payload_rate: Rate(1), delay: SimTime::ZERO, ber: 0.0, queue: None, schedule: None };
        };
        let rate = self.rate(&format!("{path}.rate"), l.rate.as_ref());
        let payload_rate = match &l.payload_rate {
            None => rate,
            Some(v) => self.rate(&format!("{path}.payload_rate"), Some(v)),
        };
        if payload_rate > rate && !self.bad(&format!("{path}.rate")) {
            self.err(&format!("{path}.payload_rate"), "must not exceed the link's rate", l.payload_rate.as_ref().map(|v| v.to_string()).unwrap_or_default());
        }
        let schedule = l.schedule.as_ref().and_then(|s| self.schedule(&format!("{path}.schedule"), s));
        if l.schedule.is_some() && l.delay.is_some() {
            self.err(&format!("{path}.delay"), format!("is set by {path}.schedule; remove one"), l.delay.as_ref().map(|v| v.to_string()).unwrap_or_default());
        }
        let delay = schedule.as_ref().map_or_else(|| self.duration(&format!("{path}.delay"), l.delay.as_ref(), SimTime::ZERO), |s| s.initial_delay());
        let ber = self.float(&format!("{path}.ber"), l.ber.as_ref(), 0.0, 0.0, 1.0);
        let queue = self.size(&format!("{path}.queue"), l.queue.as_ref());
        if let (Some(size), Some(v)) = (queue, &l.queue) {
            self.queues.push((format!("{path}.queue"), size, v.to_string()));
        }
        LinkSpec { rate, payload_rate, delay, ber, queue, schedule }
    }
}

/// The first few of `names` (`what`: "links", "nodes"), and how many there are if more ("a, b,
/// c, ... (10 links)").
fn few_names(names: &[String], what: &str) -> String {
    let few: Vec<&str> = names.iter().take(6).map(|n| n.as_str()).collect();
    let more = if names.len() > few.len() { format!(", ... ({} {what})", names.len()) } else { String::new() };
    format!("{}{more}", few.join(", "))
}

/// The `[tcp]` section (`p` = "tcp") or one `[[tcp.groups]]` entry merged over it (`p` =
/// "tcp.groups.N"): a TCP configuration; `bdp` serves the default ssthresh and "bdp" sizes.
fn section_tcp(c: &mut Ctx, p: &str, t: &RawTcp, bdp: Bdp) -> TcpConfig {
    let mut tcp = TcpConfig::default();
    // tcp/ns2.rs: ns-2.35's switches and timers; the keys below override them.
    if c.keyword(&format!("{p}.profile"), t.profile.as_deref(), TcpProfile::Default) == Some(TcpProfile::Ns2) {
        tcp = crate::tcp::ns2::Ns2Compat::profile_ns235(tcp);
    }
    let flavor_name = t.flavor.as_deref().unwrap_or("reno");
    let by_flavor = flavor(flavor_name);
    match by_flavor {
        Some((rec, cc)) => {
            tcp.recovery = rec;
            tcp.cc = cc;
        }
        None => c.err(
            &format!("{p}.flavor"),
            format!("must be one of {}, optionally with /{} (\"sack/cubic\")", FLAVORS.join(", "), variant_names::<CcKind>().iter().map(|n| if *n == "reno_aimd" { "reno" } else { n }).collect::<Vec<_>>().join(" or /")),
            format!("{flavor_name:?}"),
        ),
    }
    if let Some(r) = &t.recovery {
        match serde_json::from_value::<RecoveryKind>(serde_json::Value::String(r.clone())) {
            Ok(k) => tcp.recovery = k,
            Err(_) => c.err(&format!("{p}.recovery"), format!("must be one of {}", variant_names::<RecoveryKind>().join(", ")), format!("{r:?}")),
        }
    }
    if let Some(cc) = &t.cc {
        match serde_json::from_value::<CcKind>(serde_json::Value::String(cc.clone())) {
            Ok(k) => tcp.cc = k,
            Err(_) => c.err(&format!("{p}.cc"), format!("must name a congestion control ({})", variant_names::<CcKind>().join(", ")), format!("{cc:?}")),
        }
    }
    // A flavour names a (recovery, cc) pair: an explicit part that disagrees is a contradiction.
    if let (Some(name), Some((rec, cc))) = (&t.flavor, by_flavor) {
        if t.recovery.is_some() && tcp.recovery != rec && !c.bad(&format!("{p}.recovery")) {
            c.err(&format!("{p}.recovery"), format!("contradicts {p}.flavor = {name:?} (whose recovery is {}); give one or the other", variant_name(rec)), format!("{:?}", t.recovery.as_deref().unwrap_or("")));
        }
        if t.cc.is_some() && tcp.cc != cc && !c.bad(&format!("{p}.cc")) {
            c.err(&format!("{p}.cc"), format!("contradicts {p}.flavor = {name:?} (whose congestion control is {}); give one or the other", variant_name(cc)), format!("{:?}", t.cc.as_deref().unwrap_or("")));
        }
    }
    tcp.sack = t.sack.unwrap_or(matches!(tcp.recovery, RecoveryKind::SackFallFloyd | RecoveryKind::SackRfc6675));
    if !tcp.sack && matches!(tcp.recovery, RecoveryKind::SackFallFloyd | RecoveryKind::SackRfc6675) {
        c.err(&format!("{p}.sack"), "SACK recovery needs the SACK option", "false");
    }
    match &t.mss {
        None => {}
        Some(Val::Int(m)) if *m > 0 && *m <= 65_495 => tcp.mss = *m as u32,
        Some(v) => c.err(&format!("{p}.mss"), "must be an integer number of bytes between 1 and 65495", v.to_string()),
    }
    match &t.window {
        None => {}
        Some(Val::Int(w)) if *w > 0 && *w <= 65_535 => tcp.rcv_window_field = *w as u16,
        Some(v) => c.err(&format!("{p}.window"), "is the 16-bit advertised window field: an integer between 1 and 65535 (use tcp.window_scale for more)", v.to_string()),
    }
    // RFC 7323 (2.3): the shift count is limited to 14.
    tcp.window_scale = c.int(&format!("{p}.window_scale"), t.window_scale, 0, 0, 14) as u8;
    tcp.initial_ssthresh = match &t.ssthresh {
        None => bdp.bytes.max(2 * tcp.mss as u64),
        Some(Val::Str(s)) if s == "bdp" => {
            if bdp.known {
                c.derive(&format!("{p}.ssthresh"), bdp.shown("\"bdp\"", bdp.bytes, "bytes"));
            } else {
                c.poison(&format!("{p}.ssthresh"));
            }
            bdp.bytes
        }
        v => c.bytes(&format!("{p}.ssthresh"), v.as_ref(), Some(bdp)).unwrap_or(65_535),
    };
    // 0 as given, or a bdp multiple of a valid bdp (one of an invalid bdp is poisoned).
    if tcp.initial_ssthresh == 0 {
        c.err(&format!("{p}.ssthresh"), "must be > 0", "0");
    }
    tcp.initial_cwnd = c.int(&format!("{p}.initial_cwnd"), t.initial_cwnd, tcp.initial_cwnd as i64, 1, 1000) as u32;
    tcp.snd_buf = match &t.send_buffer {
        None => None,
        Some(Val::Str(s)) if s == "unlimited" => None,
        v => c.bytes(&format!("{p}.send_buffer"), v.as_ref(), Some(bdp)),
    };
    if tcp.snd_buf.is_some_and(|b| b < tcp.mss as u64) && !c.bad(&format!("{p}.mss")) {
        c.err(&format!("{p}.send_buffer"), "must hold at least one segment (MSS)", tcp.snd_buf.unwrap().to_string());
    }
    tcp.rcv_buf = match &t.receive_buffer {
        None => None,
        Some(Val::Str(s)) if s == "unlimited" => None,
        v => c.bytes(&format!("{p}.receive_buffer"), v.as_ref(), Some(bdp)),
    };
    if let Some(b) = tcp.rcv_buf.filter(|_| !c.bad(&format!("{p}.mss")) && !c.bad(&format!("{p}.window_scale"))) {
        // tcp/receiver.rs: a buffer under one window-scale unit advertises zero forever.
        let unit = 1u64 << tcp.window_scale;
        if b < tcp.mss as u64 || b < unit {
            c.err(&format!("{p}.receive_buffer"), format!("must hold at least one segment (MSS {}) and one window-scale unit ({unit} bytes at window_scale {})", tcp.mss, tcp.window_scale), b.to_string());
        }
    }
    tcp.delayed_ack = t.delayed_ack.unwrap_or(false);
    tcp.delack_timeout = c.duration(&format!("{p}.delack_timeout"), t.delack_timeout.as_ref(), tcp.delack_timeout);
    tcp.sws_avoidance = t.sws_avoidance.unwrap_or(false);
    tcp.piggyback_acks = t.piggyback_acks.unwrap_or(false);
    // tcp/config.rs `BackoffReset`: the recovery's rule unless given.
    let reset = tcp.recovery.default_backoff_reset();
    tcp.backoff_reset = c.keyword(&format!("{p}.rto_backoff_reset"), t.rto_backoff_reset.as_deref(), reset).unwrap_or(reset);
    // tcp/config.rs `RttEstimatorKind`: likewise, except under BBR, whose loss handling is
    // Linux's (`Cc::keeps_sack_info`, RACK): Linux's estimator (docs/tcp.md, the RTO).
    let est = if tcp.cc == CcKind::Bbr { RttEstimatorKind::Linux } else { tcp.recovery.default_rtt_estimator() };
    tcp.rtt_estimator = c.keyword(&format!("{p}.rtt_estimator"), t.rtt_estimator.as_deref(), est).unwrap_or(est);
    // Linux's tail loss probe (docs/tcp.md, "Tail loss probe (BBR)"): on where RACK is, that is
    // under BBR; elsewhere the probe would have no RACK to find the losses its ACK reveals,
    // so it is refused rather than half-modelled.
    tcp.tlp = t.tlp.unwrap_or(tcp.cc == CcKind::Bbr);
    if tcp.tlp && tcp.cc != CcKind::Bbr {
        c.err(&format!("{p}.tlp"), "the tail loss probe needs RACK, which only BBR's senders have (tcp.flavor \"<recovery>/bbr\")".to_string(), "true".to_string());
    }
    tcp.timer_granularity = c.positive_duration(&format!("{p}.timer_granularity"), t.timer_granularity.as_ref(), tcp.timer_granularity);
    if t.profile.as_deref() == Some("ns2") {
        // ns-2's boot_time_ is a fraction of its own tick (tcp/ns2.rs); tcp.ns2.tick_phase overrides.
        tcp.ns2.tick_phase = crate::tcp::ns2::Ns2Compat::boot_time(tcp.timer_granularity);
    }
    // A timeout of 0 never backs off (0 x 2^k): before the first RTT sample (ns-3's estimator
    // does not raise it to min_rto) or capped at 0, the sender retransmitted at the same instant
    // for ever and the run hung (a review helper's finding). min_rto may be 0.
    tcp.initial_rto = c.positive_duration(&format!("{p}.initial_rto"), t.initial_rto.as_ref(), tcp.initial_rto);
    tcp.min_rto = c.duration(&format!("{p}.min_rto"), t.min_rto.as_ref(), tcp.min_rto);
    tcp.max_rto = c.positive_duration(&format!("{p}.max_rto"), t.max_rto.as_ref(), tcp.max_rto);
    if tcp.min_rto > tcp.max_rto && !c.bad(&format!("{p}.min_rto")) && !c.bad(&format!("{p}.max_rto")) {
        c.err(&format!("{p}.min_rto"), format!("must not exceed {p}.max_rto"), tcp.min_rto.to_string());
    }
    tcp.dupack_threshold = c.int(&format!("{p}.dupack_threshold"), t.dupack_threshold, 3, 1, 1000) as u32;
    tcp.fin = t.fin.unwrap_or(false);
    tcp.slow_start_restart = t.slow_start_restart.unwrap_or(tcp.slow_start_restart);
    if let Some(n) = &t.ns2 {
        let w = &mut tcp.ns2;
        let set = |v: &mut bool, x: Option<bool>| *v = x.unwrap_or(*v);
        set(&mut w.window_arith, n.window_arith);
        match n.bug_fix.as_deref() {
            None => {}
            Some("on") => w.bug_fix = crate::tcp::ns2::BugFix::On,
            Some("off") => w.bug_fix = crate::tcp::ns2::BugFix::Off,
            Some("timeout_only") => w.bug_fix = crate::tcp::ns2::BugFix::TimeoutOnly,
            Some("ns3") => w.bug_fix = crate::tcp::ns2::BugFix::Ns3,
            Some(o) => c.err(&format!("{p}.ns2.bug_fix"), "must be \"on\", \"off\", \"timeout_only\" or \"ns3\"", format!("{o:?}")),
        }
        set(&mut w.exit_fast_retrans, n.exit_fast_retrans);
        w.newreno_changes = c.int(&format!("{p}.ns2.newreno_changes"), n.newreno_changes, w.newreno_changes as i64, 0, 1) as u8;
        set(&mut w.newreno_changes1, n.newreno_changes1);
        set(&mut w.partial_window_deflation, n.partial_window_deflation);
        set(&mut w.exit_recovery_fix, n.exit_recovery_fix);
        set(&mut w.singledup, n.singledup);
        set(&mut w.sack_old_code, n.sack_old_code);
        set(&mut w.sack_dupack_needs_news, n.sack_dupack_needs_news);
        set(&mut w.rfc2988_rto, n.rfc2988_rto);
        set(&mut w.syn_timeout_ssthresh, n.syn_timeout_ssthresh);
        let phase = w.tick_phase;
        w.tick_phase = c.duration(&format!("{p}.ns2.tick_phase"), n.tick_phase.as_ref(), phase);
        set(&mut w.sack_option_bytes, n.sack_option_bytes);
        set(&mut w.precision_reduce, n.precision_reduce);
        set(&mut w.random_tick_phase, n.random_tick_phase);
        set(&mut w.drop_tail_ns2, n.drop_tail_ns2);
    }
    tcp
}

/// Flavour names accepted by `tcp::config::flavor` (a test checks each one parses and that
/// together they reach every recovery).
pub const FLAVORS: [&str; 8] = ["vanilla", "tahoe", "reno", "newreno", "sack", "newreno_rfc6582", "newreno_ns3", "sack_rfc6675"];

/// Most entries in `app.blocks`, and most repeats: a schedule beyond these would never finish.
const MAX_PINGPONG_BLOCKS: usize = 100_000;
const MAX_PINGPONG_REPEATS: i64 = 1_000_000;
/// The largest block: 2^40 bytes (a terabyte per block is already far beyond any run).
const MAX_PINGPONG_BLOCK: u64 = 1 << 40;

/// `[app] kind = "pingpong"` (docs/netpipe.md): sizes > 0, first_block <= last_block, at
/// least one repeat, one connection (host pair 0; more pairs are refused rather than left idle), and no
/// key of the other kinds. `app.blocks` overrides the schedule's keys (which are still
/// checked, so that `--set app.blocks=[...]` on a scenario that sets them just works).
fn section_pingpong(c: &mut Ctx, a: &RawApp, topology: &Topology) -> PingPongSpec {
    let block = |c: &mut Ctx, path: &str, v: Option<&Val>, default: u64| -> u64 {
        let Some(b) = c.bytes(path, v, None) else { return default };
        if b == 0 {
            c.err(path, "must be > 0 (a block of at least one byte)", v.map(|v| v.to_string()).unwrap_or_default());
            default
        } else if b > MAX_PINGPONG_BLOCK {
            c.err(path, format!("must be at most {MAX_PINGPONG_BLOCK} bytes"), v.map(|v| v.to_string()).unwrap_or_default());
            default
        } else {
            b
        }
    };
    let first_block = block(c, "app.first_block", a.first_block.as_ref(), 1);
    let last_block = block(c, "app.last_block", a.last_block.as_ref(), 65_536);
    if first_block > last_block && !c.bad("app.first_block") && !c.bad("app.last_block") {
        c.err("app.first_block", format!("must be <= app.last_block ({last_block})"), first_block.to_string());
    }
    let perturbation = c.int("app.perturbation", a.perturbation, crate::app::pingpong::NETPIPE_PERTURBATION as i64, 0, 1_000_000) as u64;
    let repeats = c.int("app.repeats", a.repeats, crate::app::pingpong::NETPIPE_TRIALS as i64, 1, MAX_PINGPONG_REPEATS) as u32;
    let nrepeat = match &a.nrepeat {
        None => None,
        Some(Val::Int(n)) if (1..=MAX_PINGPONG_REPEATS).contains(n) => Some(crate::app::pingpong::NRepeat::Fixed(*n as u32)),
        Some(Val::Str(s)) if s == "netpipe" => Some(crate::app::pingpong::NRepeat::NetPipe),
        Some(v) => {
            c.err("app.nrepeat", format!("must be an integer between 1 and {MAX_PINGPONG_REPEATS} or \"netpipe\""), v.to_string());
            None
        }
    };
    let blocks = a.blocks.as_ref().map(|list| {
        if list.is_empty() {
            c.err("app.blocks", "must list at least one block size", "[]");
        } else if list.len() > MAX_PINGPONG_BLOCKS {
            c.err("app.blocks", format!("must list at most {MAX_PINGPONG_BLOCKS} sizes"), list.len().to_string());
        }
        let sizes = list.iter().enumerate().map(|(i, v)| block(c, &format!("app.blocks.{i}"), Some(v), 1)).collect::<Vec<u64>>();
        // NetPIPE's sizes only grow, and the table has one row per size: a size repeated or
        // out of order is a typo (seed 003 Table 1 lists them increasing).
        for i in 1..sizes.len() {
            let path = format!("app.blocks.{i}");
            if sizes[i] <= sizes[i - 1] && !c.bad(&path) && !c.bad(&format!("app.blocks.{}", i - 1)) {
                c.err(&path, format!("must be larger than app.blocks.{} ({}): sizes increase, each once", i - 1, sizes[i - 1]), sizes[i].to_string());
            }
        }
        sizes
    });
    let other = [("app.bytes", a.bytes.is_some()), ("app.start", a.start.is_some()), ("app.stagger", a.stagger.is_some())];
    for (key, present) in other.into_iter().chain(www_keys(a)) {
        if present {
            c.err(key, "does not apply to app.kind = \"pingpong\"", "");
        }
    }
    let pairs = match topology {
        Topology::Dumbbell { pairs, .. } => Some(*pairs),
        Topology::Path { .. } => Some(1),
        Topology::Graph(g) => Some(g.flows.len() as u32),
        Topology::Gateway(_) => None,
    };
    // What to change: a graph's connections are its flows, not pairs.
    let one = if matches!(topology, Topology::Graph(_)) { "one flow (topology.flows = [\"a->b\"])" } else { "one pair (topology.pairs = 1)" };
    match pairs {
        Some(1) => {}
        Some(n) if !c.bad("topology") => c.err("app.kind", format!("pingpong runs one connection: the topology must have {one}, not {n}"), "\"pingpong\""),
        Some(_) => {}
        None => c.err("app.kind", "pingpong runs between two hosts of a dumbbell, path or graph topology, not topology.kind = \"gateway\"", "\"pingpong\""),
    }
    PingPongSpec { first_block, last_block, perturbation, repeats, nrepeat, blocks }
}

/// The WWW workload's keys, each with whether the scenario gives it.
fn www_keys(a: &RawApp) -> [(&'static str, bool); 6] {
    [
        ("app.think_time", a.think_time.is_some()),
        ("app.first_batch", a.first_batch.is_some()),
        ("app.truncation", a.truncation.is_some()),
        ("app.request_bytes", a.request_bytes.is_some()),
        ("app.gap_min", a.gap_min.is_some()),
        ("app.gap_max", a.gap_max.is_some()),
    ]
}

/// The WWW workload's keys given with a bulk or transfer application.
fn www_keys_absent(c: &mut Ctx, a: &RawApp) {
    for (key, _) in www_keys(a).into_iter().filter(|&(_, present)| present) {
        c.ignore(key, "applies to app.kind = \"www\"");
    }
}

/// The ping-pong keys given with another kind of application.
fn pingpong_keys_absent(c: &mut Ctx, a: &RawApp) {
    for (key, present) in [
        ("app.first_block", a.first_block.is_some()),
        ("app.last_block", a.last_block.is_some()),
        ("app.perturbation", a.perturbation.is_some()),
        ("app.repeats", a.repeats.is_some()),
        ("app.nrepeat", a.nrepeat.is_some()),
        ("app.blocks", a.blocks.is_some()),
    ] {
        if present {
            c.err(key, "applies to app.kind = \"pingpong\"", "");
        }
    }
}

/// The names of an enum's variants as serde spells them (derived from the enum: its
/// deserialiser lists them when given a name it does not know).
pub fn variant_names<T: serde::de::DeserializeOwned>() -> Vec<String> {
    let msg = match serde_json::from_value::<T>(serde_json::Value::String("\u{0}".into())) {
        Err(e) => e.to_string(),
        Ok(_) => String::new(),
    };
    let list = msg.split_once("expected one of ").map(|(_, l)| l).or_else(|| msg.split_once("expected ").map(|(_, l)| l)).unwrap_or("");
    list.split(", ").map(|n| n.trim().trim_matches('`').to_string()).filter(|n| !n.is_empty()).collect()
}

/// The name serde gives a variant.
pub fn variant_name<T: serde::Serialize>(v: T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}


/// Most nodes in a graph topology: every node keeps a route to every node.
pub const MAX_GRAPH_NODES: usize = 1000;

/// "must be \"a\", \"b\" or \"c\"" from a list of names.
pub fn one_of(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("must be {} or {last}", rest.join(", ")),
        Some((last, _)) => format!("must be {last}"),
        None => "must be given".into(),
    }
}

/// Graph keys given to another kind of topology.
fn graph_keys_absent(c: &mut Ctx, raw: &RawScenario) {
    for (key, given) in [("topology.nodes", raw.topology.nodes.is_some()), ("topology.flows", raw.topology.flows.is_some()), ("topology.bottleneck", raw.topology.bottleneck.is_some())] {
        if given {
            c.err(key, "only for topology.kind = \"graph\"", "");
        }
    }
}

/// `topology.kind = "graph"`: nodes, `[[links.graph]]`, flows, bottleneck. Checks unknown and
/// duplicate node names, self-loops, flows between nodes no path joins, each with its path.
fn section_graph(c: &mut Ctx, raw: &RawScenario) -> Topology {
    let t = &raw.topology;
    if t.pairs.is_some() {
        c.err("topology.pairs", "a graph's flows are topology.flows", "");
    }
    let nodes = t.nodes.clone().unwrap_or_default();
    if nodes.is_empty() {
        c.err("topology.nodes", "is required for a graph topology (a list of node names)", "");
    } else if nodes.len() > MAX_GRAPH_NODES {
        c.err("topology.nodes", format!("must have at most {MAX_GRAPH_NODES} nodes (every node keeps a route to every node)"), format!("{} nodes", nodes.len()));
    }
    for (i, n) in nodes.iter().enumerate() {
        if nodes[..i].contains(n) {
            c.err(&format!("topology.nodes.{i}"), "duplicate node name", format!("{n:?}"));
        } else if n.is_empty() || n.contains("->") {
            c.err(&format!("topology.nodes.{i}"), "must be a non-empty name without \"->\"", format!("{n:?}"));
        }
    }
    // Names are not looked up in a list of nodes that is itself wrong (missing, a name
    // repeated or malformed): a link to the node that a typo renamed would repeat that one
    // problem. (A link or flow from a name to the same name is wrong whatever the list.)
    let nodes_ok = !c.bad("topology.nodes");
    let node = |c: &mut Ctx, path: &str, name: Option<&String>| -> Option<u32> {
        match name {
            None => {
                c.err(path, "is required (a node name)", "");
                None
            }
            Some(n) => match nodes.iter().position(|x| x == n) {
                Some(i) => Some(i as u32),
                None => {
                    if nodes_ok {
                        c.err(path, format!("must name a node of topology.nodes: {}", few_names(&nodes, "nodes")), format!("{n:?}"));
                    }
                    None
                }
            },
        }
    };
    let mut links = Vec::new();
    match &raw.links.graph {
        Some(ls) if !ls.is_empty() => {
            for (i, l) in ls.iter().enumerate() {
                let p = format!("links.graph.{i}");
                let spec = c.link(&p, Some(l));
                let (a, b) = (node(c, &format!("{p}.from"), l.from.as_ref()), node(c, &format!("{p}.to"), l.to.as_ref()));
                if let (Some(a), Some(b)) = (a, b) {
                    if a == b {
                        c.err(&format!("{p}.to"), "must differ from from (a link joins two nodes)", format!("{:?}", nodes[b as usize]));
                    } else {
                        links.push((a, b, spec));
                    }
                }
            }
        }
        _ => c.err("links.graph", "is required for a graph topology (a list of links with from, to, rate and delay)", ""),
    }
    let mut g = Graph { nodes: nodes.clone(), links, flows: Vec::new(), bottleneck: 0 };
    let complete = !c.bad("links.graph") && !c.bad("topology.nodes");
    match &t.flows {
        Some(fs) if !fs.is_empty() => {
            let dir = g.directed();
            for (i, f) in fs.iter().enumerate() {
                let p = format!("topology.flows.{i}");
                let Some((a, b)) = f.split_once("->") else {
                    c.err(&p, "must be \"source->destination\" (two node names)", format!("{f:?}"));
                    continue;
                };
                let (Some(a), Some(b)) = (node(c, &p, Some(&a.to_string())), node(c, &p, Some(&b.to_string()))) else { continue };
                if a == b {
                    c.err(&p, "source and destination must differ", format!("{f:?}"));
                } else if complete && crate::net::topology::shortest_paths(nodes.len(), &dir, b)[a as usize].is_none() {
                    c.err(&p, format!("no path joins {:?} to {:?}", nodes[a as usize], nodes[b as usize]), format!("{f:?}"));
                } else {
                    g.flows.push((a, b));
                }
            }
        }
        _ => c.err("topology.flows", "is required for a graph topology (a list of \"source->destination\" node names)", ""),
    }
    g.bottleneck = match &t.bottleneck {
        // The slowest link, the first of equals.
        None => g.links.iter().enumerate().min_by_key(|(_, l)| l.2.rate).map_or(0, |(i, _)| i),
        Some(name) => {
            let names = Topology::Graph(Box::new(g.clone())).link_names();
            match names.iter().position(|n| n == name) {
                Some(i) => i / 2,
                None => {
                    if complete {
                        c.err("topology.bottleneck", format!("must name a link: {}", few_names(&names, "links")), format!("{name:?}"));
                    }
                    0
                }
            }
        }
    };
    Topology::Graph(Box::new(g))
}

/// Checks every rule; on success every field is in engine units.
pub fn validate(raw: &RawScenario, seed_override: Option<u64>) -> Result<Scenario, ScenarioError> {
    validate_read(raw, seed_override, &[])
}

/// [`validate`] of a scenario some of whose values could not be read: `unread` are the dotted
/// paths of those values (type errors, reported by the caller), which `raw` holds at their
/// defaults. No problem is reported at or under them, nor from checks that combine them with
/// other values, so that every problem returned is one the user wrote.
///
/// One function per section, called in this order (later sections judge their values against
/// the earlier ones'): [`section_run`], [`section_topology`] (with `gateway::validate` for
/// `[gateway]`, [`section_graph`]), `moving::constellation` (`[constellation]`),
/// [`section_links`], [`section_tcp`] and [`section_tcp_groups`], [`section_switch`],
/// [`section_app`], [`section_loss`], [`section_trace`].
pub fn validate_read(raw: &RawScenario, seed_override: Option<u64>, unread: &[String]) -> Result<Scenario, ScenarioError> {
    let mut c = Ctx { problems: Vec::new(), unread: unread.to_vec(), queues: Vec::new(), derived: Vec::new(), ignored: Vec::new(), notes: Vec::new() };
    // Links cannot be judged against a topology whose kind is unknown.
    if c.bad("topology.kind") {
        c.unread.push("links".into());
    }
    let (duration, seed) = section_run(&mut c, raw, seed_override);
    let (kind, mut topology) = section_topology(&mut c, raw);
    let constellation = moving::constellation(&mut c, raw.constellation.as_ref(), raw.links.path.as_ref(), &mut topology, duration);
    section_links(&mut c, raw, kind);
    let bdp = Bdp::of(&c, &topology);
    // TCP: [tcp], then each [[tcp.groups]] entry over it (problems only for the keys it gives).
    let tcp = section_tcp(&mut c, "tcp", &raw.tcp, bdp);
    let flows = Flows::of(&c, &topology);
    let (tcp_groups, tcp_of_flow) = section_tcp_groups(&mut c, raw, bdp, flows);
    let switch = section_switch(&mut c, raw, &topology, &tcp, bdp);
    let app = section_app(&mut c, raw, &topology);
    let names = link_names(&c, raw, &topology);
    let losses = section_loss(&mut c, raw, &Judged { link_names: names.as_deref(), flows, tcp: &tcp, tcp_groups: &tcp_groups, tcp_of_flow: &tcp_of_flow, switch: &switch.kind, app: &app });
    let trace = section_trace(&mut c, raw, names.as_deref(), flows, &app);

    if !c.problems.is_empty() || !c.unread.is_empty() {
        return Err(ScenarioError { problems: c.problems });
    }
    Ok(Scenario {
        name: raw.name.clone().unwrap_or_else(|| "scenario".into()),
        duration,
        seed,
        chain_hops: raw.run.chain_hops.unwrap_or(false),
        topology,
        switch,
        tcp,
        tcp_groups,
        tcp_of_flow,
        app,
        losses,
        trace,
        constellation,
        ignored: c.ignored,
        notes: c.notes,
    })
}

/// The data flows (host pairs) a topology carries, for the sections that name flows.
#[derive(Copy, Clone)]
struct Flows {
    count: i64,
    /// Whether the topology could be read whole (else flow numbers are not judged).
    known: bool,
}

impl Flows {
    fn of(c: &Ctx, topology: &Topology) -> Flows {
        let count = match topology {
            Topology::Dumbbell { pairs, .. } => *pairs as i64,
            Topology::Path { .. } => 1,
            // Split TCP has two flows a connection: the terrestrial legs, then the satellite legs.
            Topology::Gateway(g) if g.scheme == gateway::Scheme::SplitTcp => 2 * g.servers.len() as i64,
            Topology::Gateway(g) => g.servers.len() as i64,
            Topology::Graph(g) => g.flows.len() as i64,
        };
        let known = !c.bad("topology")
            && match topology {
                // A list of servers refused whole is empty; an unknown scheme is left at "sgw".
                Topology::Gateway(_) => !c.bad_whole("gateway.servers") && !c.bad("gateway.scheme"),
                _ => true,
            };
        Flows { count, known }
    }
}

/// The topology's link names ([`Topology::link_names`]) to judge names against, None unless
/// they are the ones the user wrote: a graph link between unknown nodes is left out, a list
/// of hops or servers refused whole is empty.
fn link_names(c: &Ctx, raw: &RawScenario, topology: &Topology) -> Option<Vec<String>> {
    let known = !c.bad("topology")
        && match topology {
            Topology::Dumbbell { .. } => true,
            Topology::Path { .. } => !c.bad_whole("links.path"),
            Topology::Gateway(_) => !c.bad_whole("gateway.servers"),
            Topology::Graph(_) => {
                let n = raw.links.graph.as_ref().map_or(0, |l| l.len());
                !c.bad_whole("links.graph") && (0..n).all(|i| !c.bad(&format!("links.graph.{i}.from")) && !c.bad(&format!("links.graph.{i}.to")))
            }
        };
    known.then(|| topology.link_names())
}

/// The bandwidth-delay product that "bdp" sizes and the default ssthresh derive from
/// ([`Topology::bdp_bytes`]), and whether it is known: one computed from values already
/// reported invalid (a bottleneck rate left at 1 bps, a hop whose delay the constellation
/// could not compute) would make every size given in bdp look too small, blaming keys the
/// user got right.
#[derive(Copy, Clone)]
struct Bdp {
    bytes: u64,
    known: bool,
    /// What it is the product of, for messages ([`Bdp::shown`]).
    rate: Rate,
    rtt: SimTime,
    kind: TopologyKind,
}

impl Bdp {
    fn of(c: &Ctx, topology: &Topology) -> Bdp {
        // Where `Topology::bottleneck` and `Topology::rtt_prop` read their rates and delays
        // (whole tables: a problem anywhere in them counts).
        let inputs: &[&str] = match topology {
            Topology::Dumbbell { .. } => &["links.bottleneck"],
            Topology::Path { .. } => &["links.path", "constellation"],
            Topology::Gateway(_) => &["gateway.satellite", "gateway.return", "gateway.servers"],
            Topology::Graph(_) => &["topology.nodes", "topology.flows", "topology.bottleneck", "links.graph"],
        };
        Bdp { bytes: topology.bdp_bytes(), known: !c.bad("topology.kind") && !inputs.iter().any(|p| c.bad(p)), rate: topology.bottleneck_rate(), rtt: topology.rtt_prop(), kind: topology.kind() }
    }

    /// The keys it is the product of, and their values ([`Topology::rtt_prop`]), at `rate`
    /// (the line rate; an ATM buffer's cells are counted at the cell rate).
    fn product(&self, rate: Rate, rate_key: &str) -> String {
        let half = SimTime(self.rtt.0 / 2);
        match self.kind {
            TopologyKind::Dumbbell => format!("links.bottleneck.{rate_key} x 2 x links.bottleneck.delay = {rate} x 2 x {half}"),
            TopologyKind::Path => format!("the slowest hop's {rate_key} x 2 x the hops' delays (links.path) = {rate} x 2 x {half}"),
            TopologyKind::Graph => format!("the {rate_key} of topology.bottleneck x 2 x the first flow's delay (links.graph) = {rate} x 2 x {half}"),
            TopologyKind::Gateway => format!("gateway.satellite.{rate_key} x (the satellite round trip + 2 x gateway.servers.0.delay) = {rate} x {}", self.rtt),
        }
    }

    /// A value given as a bdp multiple (`written`: as written, or which default), what it came
    /// to and where from: `"bdp" = 0 bytes (bdp = links.bottleneck.rate x 2 x
    /// links.bottleneck.delay = 45Mbps x 2 x 0s)`.
    fn shown(&self, written: &str, n: u64, unit: &str) -> String {
        self.shown_at(written, n, unit, self.rate)
    }

    /// [`Bdp::shown`] of a count at another rate than the line rate (an ATM port's cells at
    /// the cell rate, `payload_rate`).
    /// A count of `u64::MAX` is one that saturated (a multiple beyond 2^64 units), shown as such
    /// rather than as a number nobody wrote.
    fn shown_at(&self, written: &str, n: u64, unit: &str, rate: Rate) -> String {
        let rate_key = if rate == self.rate { "rate" } else { "payload_rate" };
        let n = if n == u64::MAX { "more than 2^64 - 1".to_string() } else { n.to_string() };
        format!("{written} = {n} {unit} (bdp = {})", self.product(rate, rate_key))
    }
}

/// The sections validated before the scripted losses, against which they are judged.
struct Judged<'a> {
    /// See [`link_names`].
    link_names: Option<&'a [String]>,
    flows: Flows,
    tcp: &'a TcpConfig,
    tcp_groups: &'a [TcpConfig],
    tcp_of_flow: &'a std::collections::BTreeMap<u32, usize>,
    switch: &'a SwitchKind,
    app: &'a AppSpec,
}

/// `[run]`: the duration and the seed (`seed_override`, the CLI's `--seed`, wins).
fn section_run(c: &mut Ctx, raw: &RawScenario, seed_override: Option<u64>) -> (SimTime, u64) {
    let duration = c.positive_duration("run.duration", raw.run.duration.as_ref(), SimTime::from_secs(100));
    if let Some(given) = &raw.run.duration {
        if !c.bad("run.duration") && duration > MAX_DURATION {
            c.err("run.duration", format!("must be at most {MAX_DURATION} (11.6 days of simulated time)"), given.to_string());
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
    (duration, seed)
}

/// `[topology]`: its kind (None if unknown, reported) and the topology of that kind, with its
/// links (`[links]` for dumbbell, path and graph; `[gateway]` for the gateway).
fn section_topology(c: &mut Ctx, raw: &RawScenario) -> (Option<TopologyKind>, Topology) {
    let kind = c.keyword("topology.kind", raw.topology.kind.as_deref(), TopologyKind::Dumbbell);
    let topology = match kind {
        Some(TopologyKind::Dumbbell) => {
            graph_keys_absent(c, raw);
            let pairs = c.int("topology.pairs", raw.topology.pairs, 1, 1, 100_000) as u32;
            if raw.links.path.is_some() {
                c.err("links.path", "only for topology.kind = \"path\"", "");
            }
            Topology::Dumbbell { pairs, access: c.link("links.access", raw.links.access.as_ref()), bottleneck: c.link("links.bottleneck", raw.links.bottleneck.as_ref()) }
        }
        Some(TopologyKind::Path) => {
            graph_keys_absent(c, raw);
            if raw.topology.pairs.is_some_and(|p| p != 1) {
                c.err("topology.pairs", "a path topology carries one flow", raw.topology.pairs.unwrap().to_string());
            }
            let hops = match &raw.links.path {
                Some(h) if h.len() > MAX_HOPS => {
                    c.err("links.path", format!("must have at most {MAX_HOPS} hops (the engine's routing tables grow with the square of the hop count)"), format!("{} hops", h.len()));
                    vec![]
                }
                Some(h) if !h.is_empty() => h.iter().enumerate().map(|(i, l)| c.link(&format!("links.path.{i}"), Some(l))).collect(),
                _ => {
                    c.err("links.path", "is required for a path topology (a list of hops with rate and delay)", "");
                    vec![]
                }
            };
            Topology::Path { hops }
        }
        Some(TopologyKind::Gateway) => {
            // The gateway's checks in bytes need the MSS, validated with [tcp] below (None: it
            // is invalid or unread, and reported there).
            let mss = match &raw.tcp.mss {
                None => Some(TcpConfig::default().mss),
                Some(Val::Int(m)) if *m > 0 && *m <= 65_495 => Some(*m as u32),
                Some(_) => None,
            }
            .filter(|_| !c.bad("tcp.mss"));
            for (key, present) in [("topology.pairs", raw.topology.pairs.is_some()), ("links", raw.links.access.is_some() || raw.links.bottleneck.is_some() || raw.links.path.is_some())] {
                if present {
                    c.err(key, "does not apply to topology.kind = \"gateway\" (its links are in [gateway])", "");
                }
            }
            Topology::Gateway(Box::new(gateway::validate(c, raw.gateway.as_ref(), mss)))
        }
        Some(TopologyKind::Graph) => section_graph(c, raw),
        None => Topology::Path { hops: vec![] },
    };
    (kind, topology)
}

/// `[links]`: the keys that belong to one kind of topology given to another (each link's own
/// values are judged by `Ctx::link` where the topology reads it).
fn section_links(c: &mut Ctx, raw: &RawScenario, kind: Option<TopologyKind>) {
    // Only graph links join named nodes.
    for (table, links) in [("links.access", raw.links.access.as_slice()), ("links.bottleneck", raw.links.bottleneck.as_slice())].into_iter().chain([("links.path", raw.links.path.as_deref().unwrap_or(&[]))]) {
        for (i, l) in links.iter().enumerate() {
            let p = if table == "links.path" { format!("{table}.{i}") } else { table.to_string() };
            for (key, v) in [("from", &l.from), ("to", &l.to)] {
                if v.is_some() {
                    c.err(&format!("{p}.{key}"), "only for [[links.graph]] (topology.kind = \"graph\")", "");
                }
            }
        }
    }
    if raw.links.graph.is_some() && kind != Some(TopologyKind::Graph) {
        c.err("links.graph", "only for topology.kind = \"graph\"", "");
    }
    // (An unknown kind is reported as such, not judged as another.)
    if raw.gateway.is_some() && kind.is_some() && kind != Some(TopologyKind::Gateway) {
        c.ignore("gateway", "applies to topology.kind = \"gateway\"");
    }
}

/// `[[tcp.groups]]`: each entry merged over `[tcp]` ([`section_tcp`], problems only for the
/// keys it gives) and the flows it sets; returns the groups' configurations and each grouped
/// flow's group.
fn section_tcp_groups(c: &mut Ctx, raw: &RawScenario, bdp: Bdp, flows: Flows) -> (Vec<TcpConfig>, std::collections::BTreeMap<u32, usize>) {
    let (nflows, flows_known) = (flows.count, flows.known);
    let mut tcp_groups = Vec::new();
    let mut tcp_of_flow = std::collections::BTreeMap::new();
    for (i, g) in raw.tcp.groups.iter().flatten().enumerate() {
        let p = format!("tcp.groups.{i}");
        let mut scratch = Ctx { problems: Vec::new(), unread: c.unread.clone(), queues: Vec::new(), derived: Vec::new(), ignored: Vec::new(), notes: Vec::new() };
        let cfg = section_tcp(&mut scratch, &p, &raw.tcp.with_group(g), bdp);
        let given = g.given();
        for pr in scratch.problems {
            // Problems of keys inherited from [tcp] were reported there.
            if given.iter().any(|k| at_or_under(&pr.path, &format!("{p}.{k}"))) {
                c.problems.push(pr);
            }
        }
        match &g.flows {
            None => c.err(&format!("{p}.flows"), "is required (the flows this group sets, such as [0, 2])", ""),
            Some(fs) => {
                for (j, &f) in fs.iter().enumerate() {
                    if flows_known && (f < 0 || f >= nflows) {
                        c.err(&format!("{p}.flows.{j}"), format!("must name a flow between 0 and {}", nflows - 1), f.to_string());
                    } else if let Some(other) = tcp_of_flow.insert(f as u32, i) {
                        c.err(&format!("{p}.flows.{j}"), format!("flow {f} is already set by tcp.groups.{other}"), f.to_string());
                    }
                }
            }
        }
        tcp_groups.push(cfg);
    }
    (tcp_groups, tcp_of_flow)
}

/// `[switch]`: the kind of the routers or switches, the buffer of the port feeding the
/// bottleneck, ATM's drop policy; and the drop-tail rules of every `links.*.queue`.
fn section_switch(c: &mut Ctx, raw: &RawScenario, topology: &Topology, tcp: &TcpConfig, bdp: Bdp) -> SwitchSpec {
    // An unreadable switch.kind leaves its default, against which every switch rule would
    // judge the wrong kind of switch.
    if c.bad("switch.kind") {
        c.unread.push("switch".into());
    }
    let buffer = c.size("switch.buffer", raw.switch.buffer.as_ref()).unwrap_or(Size::Bdp(1.0));
    // The default (1 bdp) is checked too: on a short path it may not hold one packet.
    let buffer_ok = !c.bad("switch.buffer");
    let buffer_got = raw.switch.buffer.as_ref().map(|v| v.to_string()).unwrap_or_default();
    // What a bdp multiple's derivation names: the value as written, or the default's.
    let buffer_written = if raw.switch.buffer.is_some() { buffer_got.clone() } else { "the default \"1bdp\"".to_string() };
    // The queues links.*.queue (gateway.*.queue) set, with the value as written.
    let link_queues = std::mem::take(&mut c.queues);
    let mut buffer_cells_n = 0;
    let kind = match c.keyword("switch.kind", raw.switch.kind.as_deref(), SwitchKindName::DropTail) {
        Some(SwitchKindName::DropTail) => {
            for (key, present) in [("switch.policy", raw.switch.policy.is_some()), ("switch.R", raw.switch.r.is_some()), ("switch.Z", raw.switch.z.is_some()), ("switch.partial_packet_discard", raw.switch.partial_packet_discard.is_some())] {
                if present {
                    c.err(key, "applies to ATM switches (switch.kind = \"atm\")", "");
                }
            }
            // A gateway topology has no switch: its queues are the links' own.
            if buffer_ok && !matches!(topology, Topology::Gateway(_)) {
                c.droptail_queue("switch.buffer", buffer, &buffer_written, tcp.mss, bdp);
            }
            if !c.bad("switch.kind") {
                for (path, size, got) in &link_queues {
                    c.droptail_queue(path, *size, got, tcp.mss, bdp);
                }
            }
            SwitchKind::DropTail
        }
        Some(SwitchKindName::Atm) => {
            if !matches!(topology, Topology::Dumbbell { .. }) && !c.bad("topology.kind") {
                c.err("switch.kind", "ATM switches are modelled on the dumbbell topology", "\"atm\"");
            }
            if let Topology::Dumbbell { access, bottleneck, .. } = &topology {
                for (key, l) in [("links.access.schedule", access), ("links.bottleneck.schedule", bottleneck)] {
                    if l.schedule.is_some() {
                        c.err(key, "moving links are IP links (not with switch.kind = \"atm\")", "");
                    }
                }
            }
            let r = raw.switch.r.unwrap_or(SEED_R);
            let z = raw.switch.z.unwrap_or(SEED_Z);
            let name = raw.switch.policy.as_deref().unwrap_or("ubr");
            let policy = match DropPolicy::from_name(name, r, z) {
                Ok(p) => p,
                Err(e) => {
                    // validate() names the parameter first ("R: must be in (0, 1], got 1.5").
                    match e.split_once(": ") {
                        Some(("R", msg)) => {
                            let (rule, got) = split_got(msg);
                            c.err("switch.R", rule, got)
                        }
                        Some(("Z", msg)) => {
                            let (rule, got) = split_got(msg);
                            c.err("switch.Z", rule, got)
                        }
                        _ => c.err("switch.policy", e, format!("{name:?}")),
                    }
                    DropPolicy::TailDrop
                }
            };
            for (path, _, got) in &link_queues {
                match path.as_str() {
                    "links.bottleneck.queue" => c.err(path, "does not apply to ATM switches: switch.buffer governs the ATM ports", got),
                    "links.access.queue" => c.err(path, "does not apply to ATM switches: the ATM model has no queues on the access links", got),
                    _ => {} // a path topology, already rejected for ATM
                }
            }
            // Cells at the cell rate (payload_rate), as Table 3 of seed 000; see Topology::bdp_bytes.
            let cell_rate = topology.bottleneck().map_or(Rate(1), |l| l.payload_rate);
            buffer_cells_n = buffer_cells(buffer, topology.rtt_prop(), cell_rate, tcp.mss as u64);
            if matches!(buffer, Size::Bdp(_)) && bdp.known {
                c.derive("switch.buffer", bdp.shown_at(&buffer_written, buffer_cells_n, "cells", cell_rate));
            }
            let frame = cells_for_tcp_payload(tcp.mss as u64);
            // Cells from packets or bytes need a valid MSS; from a bdp multiple, a valid bdp too.
            let inputs_ok = !c.bad("tcp.mss") && (bdp.known || !matches!(buffer, Size::Bdp(_)));
            if buffer_cells_n < frame && inputs_ok {
                c.err("switch.buffer", format!("must hold at least one frame ({frame} cells at MSS {})", tcp.mss), buffer_got.clone());
            }
            if buffer_cells_n > u32::MAX as u64 {
                c.err("switch.buffer", "must be at most 2^32 - 1 cells", buffer_got.clone());
            }
            SwitchKind::Atm { policy }
        }
        None => SwitchKind::DropTail,
    };
    if matches!(kind, SwitchKind::DropTail) && !c.bad("switch.kind") {
        // The cell rate after framing: read only by ATM ports (another one was ignored in
        // silence). Equal to the rate it changes nothing, as a resolved scenario gives it.
        let links: Vec<(String, &LinkSpec)> = match topology {
            Topology::Dumbbell { access, bottleneck, .. } => vec![("links.access".into(), access), ("links.bottleneck".into(), bottleneck)],
            Topology::Path { hops } => hops.iter().enumerate().map(|(i, h)| (format!("links.path.{i}"), h)).collect(),
            _ => Vec::new(),
        };
        for (p, _) in links.into_iter().filter(|(_, l)| l.payload_rate != l.rate) {
            c.ignore(&format!("{p}.payload_rate"), "applies to ATM switches (switch.kind = \"atm\")");
        }
    }
    SwitchSpec { kind, buffer, buffer_cells: buffer_cells_n, partial_packet_discard: raw.switch.partial_packet_discard.unwrap_or(true) }
}

/// `[app]`: which application drives the flows, with its parameters.
fn section_app(c: &mut Ctx, raw: &RawScenario, topology: &Topology) -> AppSpec {
    let start = c.duration("app.start", raw.app.start.as_ref(), SimTime::ZERO);
    let stagger = c.duration("app.stagger", raw.app.stagger.as_ref(), SimTime::ZERO);
    let kind = c.keyword("app.kind", raw.app.kind.as_deref(), AppKind::Bulk);
    if matches!(kind, Some(AppKind::Bulk | AppKind::Transfer)) {
        // Given to a bulk or transfer application, these were ignored without a word. Not
        // errors: overrides cannot remove a key, and `--set app.kind=bulk` over a file that
        // sets them is a fair request.
        www_keys_absent(c, &raw.app);
        if kind == Some(AppKind::Bulk) && raw.app.bytes.is_some() {
            c.ignore("app.bytes", "applies to app.kind = \"transfer\" (a bulk source never runs out)");
        }
    }
    let app = match kind {
        Some(AppKind::Bulk) => AppSpec::Bulk { start, stagger },
        Some(AppKind::Transfer) => match c.bytes("app.bytes", raw.app.bytes.as_ref(), None) {
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
        Some(AppKind::Www) => AppSpec::Www { params: Box::new(section_www(c, raw)) },
        Some(AppKind::PingPong) => AppSpec::PingPong(section_pingpong(c, &raw.app, topology)),
        None => AppSpec::Bulk { start, stagger },
    };
    if matches!(app, AppSpec::Www { .. }) && !matches!(topology, Topology::Dumbbell { .. }) && !c.bad("topology.kind") {
        c.err("app.kind", "WWW client/server pairs need topology.kind = \"dumbbell\"", "\"www\"");
    }
    // An unknown kind is not judged as the default (bulk) it was left at.
    if !matches!(app, AppSpec::PingPong(_)) && !c.bad("app.kind") {
        pingpong_keys_absent(c, &raw.app);
    } else if raw.run.chain_hops == Some(true) {
        // Chained hops commit a packet's later hops when it enters the first; a run that
        // ends before those instants would keep them in its link figures.
        c.err("run.chain_hops", "not with app.kind = \"pingpong\" (it ends the run early)", "true");
    }
    app
}

/// `[app] kind = "www"`: the seeds' WWW workload parameters (`app::www::WwwParams`, whose own
/// `validate` judges them together), and no key of the other kinds.
fn section_www(c: &mut Ctx, raw: &RawScenario) -> WwwParams {
    let mut p = WwwParams::default();
    p.think_time = c.positive_duration("app.think_time", raw.app.think_time.as_ref(), p.think_time);
    p.gap_min = c.duration("app.gap_min", raw.app.gap_min.as_ref(), p.gap_min);
    p.gap_max = c.duration("app.gap_max", raw.app.gap_max.as_ref(), p.gap_max);
    if let Some(f) = c.keyword("app.first_batch", raw.app.first_batch.as_deref(), FirstBatch::Staggered) {
        p.first_batch = f;
    }
    if c.keyword("app.truncation", raw.app.truncation.as_deref(), Truncation::Clamp) == Some(Truncation::Resample) {
        p.batch.truncation = Truncation::Resample;
        p.size_index.truncation = Truncation::Resample;
    }
    if let Some(v) = raw.app.request_bytes.as_ref() {
        match c.bytes("app.request_bytes", Some(v), None) {
            // The model's own rule (WwwParams::validate), here with the value as written: the
            // schema said ">= 0", and the model's "must be > 0" came without it.
            Some(0) => c.err("app.request_bytes", "must be > 0 (a server answers once it has read a request's bytes)", v.to_string()),
            Some(b) => p.request_bytes = b,
            None => {}
        }
    }
    for (key, present) in [("app.bytes", raw.app.bytes.is_some()), ("app.start", raw.app.start.is_some()), ("app.stagger", raw.app.stagger.is_some())] {
        if present {
            c.err(key, "does not apply to app.kind = \"www\"", "");
        }
    }
    if let Err(e) = p.validate() {
        // Some of its rules end in ", got VALUE": the value goes to `got`. A key already
        // reported was left at its default, which its rule would judge instead.
        let (rule, got) = split_got(&e.rule);
        let path = format!("app.{}", e.path);
        if !c.bad(&path) {
            c.err(&path, rule, got);
        }
    }
    p
}

/// `[[loss]]`: scripted losses, each a data segment of a flow (by offset or segment index)
/// and its transmission, dropped at the sender or where it would enter a named link.
fn section_loss(c: &mut Ctx, raw: &RawScenario, j: &Judged<'_>) -> Vec<LossSpec> {
    let (nflows, flows_known) = (j.flows.count, j.flows.known);
    let (tcp, tcp_groups, tcp_of_flow, app, kind) = (j.tcp, j.tcp_groups, j.tcp_of_flow, j.app, j.switch);
    // Scripted losses.
    // Offsets are checked against the MSS and the transfer size only when both could be read
    // and the application is one whose segments start at multiples of the MSS.
    let transfer_bytes = match &app {
        AppSpec::Transfer { bytes, .. } => Some(*bytes),
        _ => None,
    };
    let loss_checks_ok = matches!(app, AppSpec::Bulk { .. } | AppSpec::Transfer { .. }) && !c.bad("tcp.mss") && !c.bad("app.kind") && !c.bad("app.bytes");
    let mut losses = Vec::new();
    for (i, l) in raw.loss.iter().enumerate() {
        let p = format!("loss.{i}");
        let flow = if flows_known { c.int(&format!("{p}.flow"), l.flow, 0, 0, nflows - 1) as u32 } else { 0 };
        // The flow's own MSS (its [[tcp.groups]] entry may set one, perhaps an invalid one).
        let mss = tcp_of_flow.get(&flow).map_or(tcp.mss, |&g: &usize| tcp_groups[g].mss);
        let loss_checks_ok = loss_checks_ok && tcp_of_flow.get(&flow).is_none_or(|g| !c.bad(&format!("tcp.groups.{g}.mss")));
        let transmission = c.int(&format!("{p}.transmission"), l.transmission, 0, 0, 1000) as u16;
        let offset = match (&l.offset, l.segment) {
            (Some(_), Some(_)) => {
                c.err(&p, "give offset or segment, not both", "");
                0
            }
            (Some(v), None) => {
                let path = format!("{p}.offset");
                let offset = c.bytes(&path, Some(v), None).unwrap_or(0);
                // Bulk and transfer senders start their data segments at multiples of the MSS,
                // so any other offset would never match a segment and the loss never happen.
                if !offset.is_multiple_of(mss as u64) && loss_checks_ok {
                    c.err(&path, format!("must be a multiple of tcp.mss ({}): data segments start at multiples of the MSS (or give segment instead)", mss), v.to_string());
                } else if transfer_bytes.is_some_and(|b| offset >= b) && loss_checks_ok {
                    c.err(&path, format!("must be less than app.bytes ({}): the transfer has no data there", transfer_bytes.unwrap()), v.to_string());
                }
                offset
            }
            (None, Some(k)) if k >= 0 => {
                let offset = (k as u64).saturating_mul(mss as u64);
                if let Some(b) = transfer_bytes.filter(|&b| offset >= b && loss_checks_ok) {
                    c.err(&format!("{p}.segment"), format!("must be less than {}: the transfer of app.bytes ({b}) has that many segments of tcp.mss ({})", b.div_ceil(mss as u64), mss), k.to_string());
                }
                offset
            }
            (None, Some(k)) => {
                c.err(&format!("{p}.segment"), "must be >= 0", k.to_string());
                0
            }
            (None, None) => {
                c.err(&p, "needs offset (data byte offset) or segment (segment index)", "");
                0
            }
        };
        let at = match l.at.as_deref() {
            None | Some("sender") => None,
            Some(name) => {
                let path = format!("{p}.at");
                if matches!(kind, SwitchKind::Atm { .. }) {
                    c.err(&path, "a scripted loss at a link needs drop-tail IP links (switch.kind = \"droptail\"); ATM ports drop cells", format!("{name:?}"));
                } else if let Some(names) = j.link_names.filter(|names| !names.iter().any(|n| n == name)) {
                    c.err(&path, format!("must be \"sender\" or name a link of the topology: {}", few_names(names, "links")), format!("{name:?}"));
                }
                Some(name.to_string())
            }
        };
        losses.push(LossSpec { flow, offset, transmission, at });
    }
    losses
}

/// `[trace]`: the flows and links whose time series are recorded, the packet trace
/// (`trace::spec`), and the bounds of both.
fn section_trace(c: &mut Ctx, raw: &RawScenario, link_names: Option<&[String]>, flows: Flows, app: &AppSpec) -> TraceSpec {
    let (nflows, flows_known) = (flows.count, flows.known);
    let mut trace = TraceSpec::default();
    for (i, &f) in raw.trace.flows.iter().flatten().enumerate() {
        if (f < 0 || f >= nflows) && flows_known {
            c.err(&format!("trace.flows.{i}"), format!("must name a flow between 0 and {}", nflows - 1), f.to_string());
        } else {
            trace.flows.push(f as u32);
        }
    }
    trace.links = raw.trace.links.clone().unwrap_or_default();
    // Names are checked only against a topology that could be read whole (a path that failed
    // validation has no hops, hence no names).
    if let Some(names) = link_names.filter(|n| !n.is_empty()) {
        for (i, name) in trace.links.iter().enumerate() {
            if !names.contains(name) {
                c.err(&format!("trace.links.{i}"), format!("must name a link of the topology: {}", few_names(names, "links")), format!("{name:?}"));
            }
        }
    }

    let all_flows = nflows as u64 * if matches!(app, AppSpec::Www { .. } | AppSpec::PingPong(_)) { 2 } else { 1 };
    match crate::trace::spec::packets(raw.trace.packets.as_ref(), (flows_known && !c.bad("app.kind")).then_some(all_flows), link_names) {
        Ok(f) => trace.packets = f,
        Err(ps) => ps.into_iter().for_each(|p| c.err(&p.path, p.rule, p.got)),
    }
    trace.max_packet_events = c.int("trace.max_packet_events", raw.trace.max_packet_events, crate::trace::DEFAULT_MAX_EVENTS as i64, 0, i64::MAX) as u64;
    trace.max_points = c.int("trace.max_points", raw.trace.max_points, crate::metrics::result::DEFAULT_MAX_POINTS as i64, 0, i64::MAX) as u64;
    trace
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, parse_override_value};

    /// Two pairs over the GEO bottleneck, MSS 1024 (packets of 1064 bytes, 23 cells).
    const GEO2: &str = r#"
        [run]
        duration = "10s"
        [topology]
        pairs = 2
        [links.access]
        rate = "155.52Mbps"
        delay = "5us"
        [links.bottleneck]
        rate = "45Mbps"
        delay = "275ms"
        [tcp]
        mss = 1024
    "#;

    /// Two hops, the second the slower: 10 Mbps then 2 Mbps, 30 ms one way.
    const PATH2: &str = r#"
        [topology]
        kind = "path"
        [tcp]
        mss = 1024
        [[links.path]]
        rate = "10Mbps"
        delay = "10ms"
        [[links.path]]
        rate = "2Mbps"
        delay = "20ms"
    "#;

    #[track_caller]
    fn scenario(text: &str, overrides: &[(&str, &str)]) -> Scenario {
        let ov: Vec<_> = overrides.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect();
        match load(text, &ov, None) {
            Ok((s, _)) => s,
            Err(e) => panic!("expected a valid scenario, got {e}"),
        }
    }

    /// Every problem, as the user reads it: "path: rule, got VALUE".
    #[track_caller]
    fn problems(text: &str, overrides: &[(&str, &str)]) -> Vec<String> {
        let ov: Vec<_> = overrides.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect();
        match load(text, &ov, None) {
            Ok(_) => panic!("expected a ScenarioError"),
            Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[track_caller]
    fn assert_only(text: &str, overrides: &[(&str, &str)], want: &str) {
        assert_eq!(problems(text, overrides), [want]);
    }

    #[test]
    fn run_duration_is_bounded() {
        assert_eq!(scenario(GEO2, &[("run.duration", "1000000s")]).duration, MAX_DURATION);
        assert_only(GEO2, &[("run.duration", "1000001s")], "run.duration: must be at most 1000000s (11.6 days of simulated time), got \"1000001s\"");
        assert_only(GEO2, &[("run.duration", "1e12s")], "run.duration: too large (at most 18446744073s, u64 nanoseconds), got \"1e12s\"");
        assert_only(GEO2, &[("run.duration", "0s")], "run.duration: must be > 0, got \"0s\"");
        // Negative: the same rule, not the general ">= 0" of a duration.
        assert_only(GEO2, &[("run.duration", "-1s")], "run.duration: must be > 0, got \"-1s\"");
        assert_only(GEO2, &[("tcp.timer_granularity", "-100ms")], "tcp.timer_granularity: must be > 0, got \"-100ms\"");
        assert_only(GEO2, &[("links.bottleneck.delay", "-1ms")], "links.bottleneck.delay: must be >= 0, got \"-1ms\"");
    }

    #[test]
    fn a_duration_below_one_nanosecond_is_refused_for_every_key() {
        // Was "run.duration: must be > 0" for 1e-12s (rounded to 0 ns) while 0.5ns ran as 1 ns,
        // and a delay of 1e-12s was no delay at all: one rule, in parse_duration, for every key.
        for (key, v) in [("run.duration", "1e-12s"), ("run.duration", "0.5ns"), ("links.bottleneck.delay", "1e-12s"), ("links.access.delay", "0.5ns"), ("tcp.timer_granularity", "0.4ns"), ("tcp.min_rto", "1e-10s"), ("app.start", "0.1ns")] {
            assert_only(GEO2, &[(key, v)], &format!("{key}: must be at least 1ns (simulated time counts whole nanoseconds), got \"{v}\""));
        }
        let s = scenario(GEO2, &[("links.bottleneck.delay", "1e-9s"), ("run.duration", "1ns"), ("switch.buffer", "100pkt")]);
        assert_eq!((s.topology.bottleneck().unwrap().delay, s.duration), (SimTime(1), SimTime(1)));
        // 0 stays what each key allows.
        assert_eq!(scenario(GEO2, &[("links.bottleneck.delay", "0ns"), ("tcp.ssthresh", "100000"), ("switch.buffer", "100pkt")]).rtt_prop(), SimTime::ZERO);
    }

    #[test]
    fn every_duration_that_must_be_positive_says_so_with_the_value_as_written() {
        // tcp.timer_granularity said "got 0s" whatever was written; gateway.timer_granularity
        // likewise, and ">= 0" of a negative one, as did app.think_time and constellation.step.
        assert_only(GEO2, &[("tcp.timer_granularity", "0ms")], "tcp.timer_granularity: must be > 0, got \"0ms\"");
        let www = ("app.kind", "www");
        assert_only(GEO2, &[www, ("app.think_time", "-1s")], "app.think_time: must be > 0, got \"-1s\"");
        assert_only(GEO2, &[www, ("app.think_time", "0s")], "app.think_time: must be > 0, got \"0s\"");
        // The default an invalid think_time leaves is not judged against gap_max.
        assert_only(GEO2, &[www, ("app.think_time", "0s"), ("app.gap_max", "2s")], "app.think_time: must be > 0, got \"0s\"");
        let single = include_str!("../../../../scenarios/zhou-single.toml");
        assert_only(single, &[("gateway.timer_granularity", "0ms")], "gateway.timer_granularity: must be > 0, got \"0ms\"");
        assert_only(single, &[("gateway.timer_granularity", "-10ms")], "gateway.timer_granularity: must be > 0, got \"-10ms\"");
        assert_only(LEO, &[("constellation.step", "-15s")], "constellation.step: must be > 0, got \"-15s\"");
    }

    #[test]
    fn a_request_of_no_bytes_is_refused_with_its_value() {
        // The schema said ">= 0" and the model refused 0 with "app.request_bytes: must be > 0",
        // no value given.
        let www = ("app.kind", "www");
        let rule = "app.request_bytes: must be > 0 (a server answers once it has read a request's bytes)";
        assert_only(GEO2, &[www, ("app.request_bytes", "0")], &format!("{rule}, got 0"));
        assert_only(GEO2, &[www, ("app.request_bytes", "0B")], &format!("{rule}, got \"0B\""));
        scenario(GEO2, &[www, ("app.request_bytes", "1B")]);
    }

    #[test]
    fn each_problem_states_its_value_once() {
        assert_only(GEO2, &[("links.bottleneck.rate", "45Mbs")], "links.bottleneck.rate: unknown rate unit \"Mbs\" (use bps, kbps, Mbps or Gbps), got \"45Mbs\"");
        assert_only(GEO2, &[("links.bottleneck.rate", "1e400Mbps")], "links.bottleneck.rate: too large (at most 18446744073Gbps, u64 bits per second), got \"1e400Mbps\"");
        assert_only(GEO2, &[("links.access.rate", "0Mbps")], "links.access.rate: must be > 0, got \"0Mbps\"");
        let atm = [("switch.kind", "atm"), ("switch.policy", "sd")];
        assert_only(GEO2, &[atm[0], atm[1], ("switch.R", "1.5")], "switch.R: must be in (0, 1], got 1.5");
        assert_only(GEO2, &[atm[0], atm[1], ("switch.Z", "0.0")], "switch.Z: must be in (0, 1], got 0");
        assert_only(GEO2, &[("tcp.ssthresh", "1e300bdp")], "tcp.ssthresh: too large (at most 2^64 - 1 bytes), got \"1e300bdp\"");
    }

    #[test]
    fn a_value_derived_from_the_bdp_names_the_keys_it_came_from() {
        // links.bottleneck.delay = 0s is valid (an explicit ssthresh and buffer run), but makes
        // the bdp 0: tcp.ssthresh = "bdp" said "must be > 0, got 0", and nothing named the delay.
        let explicit = [("tcp.ssthresh", "100000"), ("switch.buffer", "100pkt")];
        assert_eq!(scenario(GEO2, &[&explicit[..], &[("links.bottleneck.delay", "0s")]].concat()).bdp_bytes(), 0);
        let zero = ("links.bottleneck.delay", "0s");
        assert_eq!(
            problems(GEO2, &[zero, ("tcp.ssthresh", "bdp"), ("switch.buffer", "1bdp")]),
            [
                "tcp.ssthresh: must be > 0, got \"bdp\" = 0 bytes (bdp = links.bottleneck.rate x 2 x links.bottleneck.delay = 45Mbps x 2 x 0s)",
                "switch.buffer: must hold at least one packet (1064 bytes at MSS 1024), got \"1bdp\" = 0 bytes (bdp = links.bottleneck.rate x 2 x links.bottleneck.delay = 45Mbps x 2 x 0s)",
            ]
        );
        // The same for every size in bdp: multiples, buffers, queues, a group's, the default
        // switch.buffer (which said nothing of its value), an ATM buffer in cells.
        let bdp0 = "= 0 bytes (bdp = links.bottleneck.rate x 2 x links.bottleneck.delay = 45Mbps x 2 x 0s)";
        let ex = explicit[0];
        assert_only(GEO2, &[zero, ("tcp.ssthresh", "0.5bdp"), explicit[1]], &format!("tcp.ssthresh: must be > 0, got \"0.5bdp\" {bdp0}"));
        assert_only(GEO2, &[zero, ex, explicit[1], ("tcp.send_buffer", "2bdp")], &format!("tcp.send_buffer: must hold at least one segment (MSS), got \"2bdp\" {bdp0}"));
        assert_only(
            GEO2,
            &[zero, ex, explicit[1], ("tcp.receive_buffer", "1bdp")],
            &format!("tcp.receive_buffer: must hold at least one segment (MSS 1024) and one window-scale unit (1 bytes at window_scale 0), got \"1bdp\" {bdp0}"),
        );
        assert_only(GEO2, &[zero, ex, explicit[1], ("links.access.queue", "1bdp")], &format!("links.access.queue: must hold at least one packet (1064 bytes at MSS 1024), got \"1bdp\" {bdp0}"));
        assert_only(GEO2, &[zero, ex], &format!("switch.buffer: must hold at least one packet (1064 bytes at MSS 1024), got the default \"1bdp\" {bdp0}"));
        let group = GEO2.to_string() + "\n[[tcp.groups]]\nflows = [1]\nssthresh = \"bdp\"\n";
        assert_only(&group, &[zero, ex, explicit[1]], &format!("tcp.groups.0.ssthresh: must be > 0, got \"bdp\" {bdp0}"));
        let atm = [("switch.kind", "atm"), ("links.bottleneck.payload_rate", "40Mbps"), ("switch.buffer", "1bdp")];
        assert_only(
            GEO2,
            &[&[zero, ex][..], &atm[..]].concat(),
            "switch.buffer: must hold at least one frame (23 cells at MSS 1024), got \"1bdp\" = 0 cells (bdp = links.bottleneck.payload_rate x 2 x links.bottleneck.delay = 40Mbps x 2 x 0s)",
        );
        // A value given in bytes shows as given.
        assert_only(GEO2, &[zero, ex, ("switch.buffer", "100B")], "switch.buffer: must hold at least one packet (1064 bytes at MSS 1024), got \"100B\"");
    }

    #[test]
    fn a_missing_link_is_one_problem() {
        assert_eq!(problems("[topology]\npairs = 1\n", &[]), ["links.access: is required (a table with rate and delay)", "links.bottleneck: is required (a table with rate and delay)"]);
    }

    #[test]
    fn link_queues_follow_the_switch_buffer_rules() {
        assert_only(GEO2, &[("links.bottleneck.queue", "100B")], "links.bottleneck.queue: must hold at least one packet (1064 bytes at MSS 1024), got \"100B\"");
        assert_only(GEO2, &[("links.access.queue", "0pkt")], "links.access.queue: must hold at least one packet (1064 bytes at MSS 1024), got \"0pkt\"");
        assert_only(GEO2, &[("links.access.queue", "10cells")], "links.access.queue: cells are for ATM switches; give bytes, packets or a bdp multiple, got \"10cells\"");
        assert_only(GEO2, &[("switch.buffer", "1000B")], "switch.buffer: must hold at least one packet (1064 bytes at MSS 1024), got \"1000B\"");
        scenario(GEO2, &[("links.bottleneck.queue", "1064B"), ("links.access.queue", "1pkt")]);
        // A packet count is judged even beside an invalid rate; a bdp multiple is not.
        let bad_rate = ("links.bottleneck.rate", "45Mbs");
        assert_eq!(problems(GEO2, &[bad_rate, ("links.access.queue", "0pkt")]).len(), 2);
        assert_eq!(problems(GEO2, &[bad_rate, ("links.access.queue", "1e-9bdp")]).len(), 1);
        // Each hop of a path: 1e-6 bdp of the 2 Mbps x 60 ms path is 0.015 bytes.
        let tiny_hop = PATH2.replace("delay = \"20ms\"", "delay = \"20ms\"\n        queue = \"1e-6bdp\"");
        assert_only(&tiny_hop, &[], "links.path.1.queue: must hold at least one packet (1064 bytes at MSS 1024), got \"1e-6bdp\" = 0 bytes (bdp = the slowest hop's rate x 2 x the hops' delays (links.path) = 2Mbps x 2 x 30ms)");
    }

    #[test]
    fn atm_ports_have_no_link_queues() {
        let atm = ("switch.kind", "atm");
        assert_only(GEO2, &[atm, ("links.bottleneck.queue", "100pkt")], "links.bottleneck.queue: does not apply to ATM switches: switch.buffer governs the ATM ports, got \"100pkt\"");
        assert_only(GEO2, &[atm, ("links.access.queue", "100pkt")], "links.access.queue: does not apply to ATM switches: the ATM model has no queues on the access links, got \"100pkt\"");
    }

    #[test]
    fn huge_atm_buffer_is_too_large_not_wrapped() {
        // 5614226457215950848 x 23 cells wraps to 8192 in u64 arithmetic.
        let atm = ("switch.kind", "atm");
        assert_only(GEO2, &[atm, ("switch.buffer", "5614226457215950848pkt")], "switch.buffer: must be at most 2^32 - 1 cells, got \"5614226457215950848pkt\"");
        // A multiple beyond 2^64 cells saturates; the message says so instead of printing
        // 18446744073709551615 cells, a number nobody wrote.
        let got = problems(GEO2, &[atm, ("switch.buffer", "1e30bdp")]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].starts_with("switch.buffer: must be at most 2^32 - 1 cells, got \"1e30bdp\" = more than 2^64 - 1 cells (bdp = "), "{got:?}");
    }

    #[test]
    fn huge_droptail_buffer_is_too_large_not_saturated() {
        // It used to become a queue of 2^64 - 1 bytes without a word, while tcp.ssthresh of the
        // same size was refused.
        assert_only(GEO2, &[("switch.buffer", "1e30bdp")], "switch.buffer: too large (at most 2^64 - 1 bytes), got \"1e30bdp\"");
        assert_only(GEO2, &[("links.bottleneck.queue", "1e30bdp")], "links.bottleneck.queue: too large (at most 2^64 - 1 bytes), got \"1e30bdp\"");
        // A large multiple within the bound is still a (practically endless) queue.
        assert!(load(GEO2, &[("switch.buffer".to_string(), parse_override_value("1e6bdp"))], None).is_ok());
    }

    #[test]
    fn link_names_are_the_engines() {
        let names = scenario(GEO2, &[]).topology.link_names();
        let want = ["bottleneck", "bottleneck-rev", "src0->r1", "r1->src0", "r2->dst0", "dst0->r2", "src1->r1", "r1->src1", "r2->dst1", "dst1->r2"];
        assert_eq!(names, want);
        assert_eq!(scenario(PATH2, &[]).topology.link_names(), ["hop0", "hop0-rev", "hop1", "hop1-rev"]);
    }

    #[test]
    fn trace_links_must_name_links() {
        assert_eq!(scenario(GEO2, &[("trace.links", r#"["bottleneck", "dst1->r2"]"#)]).trace.links, ["bottleneck", "dst1->r2"]);
        assert_only(
            GEO2,
            &[("trace.links", r#"["bottleneck", "nope"]"#)],
            "trace.links.1: must name a link of the topology: bottleneck, bottleneck-rev, src0->r1, r1->src0, r2->dst0, dst0->r2, ... (10 links), got \"nope\"",
        );
        assert_only(PATH2, &[("trace.links", r#"["hop2"]"#)], "trace.links.0: must name a link of the topology: hop0, hop0-rev, hop1, hop1-rev, got \"hop2\"");
    }

    #[test]
    fn scripted_losses_must_hit_a_segment() {
        let loss = |body: &str| format!("{GEO2}\n        [[loss]]\n        {body}\n");
        assert_eq!(scenario(&loss("offset = 2048"), &[]).losses[0].offset, 2048);
        assert_only(&loss("offset = 1000"), &[], "loss.0.offset: must be a multiple of tcp.mss (1024): data segments start at multiples of the MSS (or give segment instead), got 1000");
        // A transfer of 10 segments: offsets 0..=9216, segments 0..=9.
        let transfer = [("app.kind", "transfer"), ("app.bytes", "10240")];
        assert_eq!(scenario(&loss("offset = 9216"), &transfer).losses[0].offset, 9216);
        assert_only(&loss("offset = 10240"), &transfer, "loss.0.offset: must be less than app.bytes (10240): the transfer has no data there, got 10240");
        assert_only(&loss("segment = 10"), &transfer, "loss.0.segment: must be less than 10: the transfer of app.bytes (10240) has that many segments of tcp.mss (1024), got 10");
    }

    #[test]
    fn scripted_losses_happen_at_the_sender_or_a_named_link() {
        let loss = |at: &str| format!("{GEO2}\n        [[loss]]\n        segment = 2\n        at = {at}\n");
        assert_eq!(scenario(&loss("\"sender\""), &[]).losses[0].at, None);
        assert_eq!(scenario(&loss("\"bottleneck\""), &[]).losses[0].at.as_deref(), Some("bottleneck"));
        assert_only(&loss("\"r3\""), &[], "loss.0.at: must be \"sender\" or name a link of the topology: bottleneck, bottleneck-rev, src0->r1, r1->src0, r2->dst0, dst0->r2, ... (10 links), got \"r3\"");
        assert_only(
            &loss("\"bottleneck\""),
            &[("switch.kind", "atm")],
            "loss.0.at: a scripted loss at a link needs drop-tail IP links (switch.kind = \"droptail\"); ATM ports drop cells, got \"bottleneck\"",
        );
    }

    #[test]
    fn a_flavour_and_an_explicit_part_that_disagrees_is_an_error_naming_both() {
        scenario(GEO2, &[("tcp.flavor", "sack"), ("tcp.recovery", "sack_fall_floyd")]);
        scenario(GEO2, &[("tcp.recovery", "newreno_rfc6582"), ("tcp.cc", "cubic")]);
        assert_only(GEO2, &[("tcp.flavor", "reno"), ("tcp.recovery", "sack_rfc6675")], "tcp.recovery: contradicts tcp.flavor = \"reno\" (whose recovery is reno); give one or the other, got \"sack_rfc6675\"");
        assert_only(GEO2, &[("tcp.flavor", "sack/cubic"), ("tcp.cc", "hybla")], "tcp.cc: contradicts tcp.flavor = \"sack/cubic\" (whose congestion control is cubic); give one or the other, got \"hybla\"");
    }

    /// One bad value per section: the problem names its field, and where the value is one
    /// of a list, every allowed value (the list from the section's keyword enum).
    #[test]
    fn a_bad_value_in_each_section_names_its_field_and_the_allowed_values() {
        let names = |k: &[&str]| one_of(k);
        // [run]
        assert_only(GEO2, &[("run.seed", "-1")], "run.seed: must be >= 0, got -1");
        // [tcp]
        assert_only(GEO2, &[("tcp.profile", "\"ns3\"")], "tcp.profile: must be \"default\" or \"ns2\", got \"ns3\"");
        // [topology]
        let want = format!("topology.kind: {}, got \"ring\"", names(&TopologyKind::names()));
        assert_eq!(want, "topology.kind: must be \"dumbbell\", \"path\", \"graph\" or \"gateway\", got \"ring\"");
        assert_only(GEO2, &[("topology.kind", "\"ring\"")], &want);
        assert_only(GEO2, &[("topology.pairs", "0")], "topology.pairs: must be between 1 and 100000, got 0");
        // [links]
        assert_only(GEO2, &[("links.bottleneck.ber", "2")], "links.bottleneck.ber: must be in [0, 1), got 2");
        assert_only(&format!("{GEO2}\n[[links.graph]]\nrate = \"1Mbps\""), &[], "links.graph: only for topology.kind = \"graph\"");
        // [switch]
        let want = format!("switch.kind: {}, got \"wfq\"", names(&SwitchKindName::names()));
        assert_eq!(want, "switch.kind: must be \"droptail\" or \"atm\", got \"wfq\"");
        assert_only(GEO2, &[("switch.kind", "\"wfq\"")], &want);
        assert_only(GEO2, &[("switch.buffer", "\"3cells\"")], "switch.buffer: cells are for ATM switches; give bytes, packets or a bdp multiple, got \"3cells\"");
        // [trace]
        assert_only(GEO2, &[("trace.flows", "[0, 2]")], "trace.flows.1: must name a flow between 0 and 1, got 2");
        assert_only(GEO2, &[("trace.links", "[\"bottleneck\", \"r9\"]")], "trace.links.1: must name a link of the topology: bottleneck, bottleneck-rev, src0->r1, r1->src0, r2->dst0, dst0->r2, ... (10 links), got \"r9\"");
        // [[loss]]
        let lossy = |body: &str| format!("{GEO2}\n[[loss]]\n{body}\n");
        assert_only(&lossy("flow = 0\nsegment = 3\nat = \"r9\""), &[], "loss.0.at: must be \"sender\" or name a link of the topology: bottleneck, bottleneck-rev, src0->r1, r1->src0, r2->dst0, dst0->r2, ... (10 links), got \"r9\"");
        assert_only(&lossy("segment = 3\nflow = 2"), &[], "loss.0.flow: must be between 0 and 1, got 2");
        // [constellation]
        let leo = format!(
            "{PATH2}\n[constellation]\nshell = {{ altitude_km = 550, inclination_deg = 53, planes = 72, per_plane = 22, phasing = 1 }}\n\
             from = {{ name = \"Paris\", lat = 48.8566, lon = 2.3522 }}\nto = {{ name = \"Moscow\", lat = 55.7558, lon = 37.6173 }}\nhop = 0\nrouting = \"laser\"\n"
        )
        .replace("delay = \"10ms\"\n", "");
        let want = format!("constellation.routing: {}, got \"laser\"", names(&Mode::names()));
        assert_eq!(want, "constellation.routing: must be \"isl\" or \"bentpipe\", got \"laser\"");
        assert_only(&leo, &[], &want);
        // [gateway]: its scheme names from gateway::Scheme::ALL.
        let single = include_str!("../../../../scenarios/zhou-single.toml");
        let schemes: Vec<String> = gateway::Scheme::ALL.iter().map(|s| format!("{:?}", s.name())).collect();
        assert_only(single, &[("gateway.scheme", "\"pep\"")], &format!("gateway.scheme: must be one of {}, got \"pep\"", schemes.join(", ")));
    }

    #[test]
    fn app_values_name_their_field_and_the_allowed_values() {
        // [app]
        let want = format!("app.kind: {}, got \"ftp\"", one_of(&AppKind::names()));
        assert!(AppKind::names().iter().all(|n| want.contains(&format!("{n:?}"))));
        assert_only(GEO2, &[("app.kind", "\"ftp\"")], &want);
        let www = [("app.kind", "\"www\"")];
        assert_only(GEO2, &[www[0], ("app.first_batch", "\"late\"")], "app.first_batch: must be \"staggered\" or \"zero\", got \"late\"");
        assert_only(GEO2, &[www[0], ("app.truncation", "\"round\"")], "app.truncation: must be \"clamp\" or \"resample\", got \"round\"");
        assert_eq!(want, "app.kind: must be \"bulk\", \"transfer\", \"www\" or \"pingpong\", got \"ftp\"");
    }

    #[test]
    fn name_lists_come_from_the_enums() {
        assert_eq!(variant_names::<RecoveryKind>(), ["timeout", "tahoe", "reno", "newreno_ns2", "newreno_rfc6582", "newreno_ns3", "sack_fall_floyd", "sack_rfc6675"]);
        assert_only(GEO2, &[("tcp.cc", "bbr9")], &format!("tcp.cc: must name a congestion control ({}), got \"bbr9\"", variant_names::<CcKind>().join(", ")));
        // Every flavour name parses, and together they reach every recovery.
        let reached: Vec<String> = FLAVORS.iter().map(|f| variant_name(flavor(f).expect(f).0)).collect();
        let mut all = variant_names::<RecoveryKind>();
        all.sort();
        let mut reached_sorted = reached.clone();
        reached_sorted.sort();
        assert_eq!(reached_sorted, all);
    }

    #[test]
    fn tcp_groups_set_their_flows_and_report_only_their_own_problems() {
        let groups = |body: &str| format!("{GEO2}\n        [[tcp.groups]]\n        {body}\n");
        let s = scenario(&groups("flows = [1]\n        flavor = \"sack\"\n        mss = 512"), &[("tcp.flavor", "reno"), ("tcp.delayed_ack", "true")]);
        assert_eq!(s.tcp_for(0).recovery, RecoveryKind::Reno);
        assert_eq!(s.tcp_for(1).recovery, RecoveryKind::SackFallFloyd);
        assert!(s.tcp_for(1).sack, "a SACK flavour in a group turns SACK on");
        assert_eq!((s.tcp_for(0).mss, s.tcp_for(1).mss), (1024, 512));
        assert!(s.tcp_for(1).delayed_ack, "keys the group does not give come from [tcp]");
        assert_only(&groups("flows = [2]"), &[], "tcp.groups.0.flows.0: must name a flow between 0 and 1, got 2");
        assert_only(&groups("mss = 512"), &[], "tcp.groups.0.flows: is required (the flows this group sets, such as [0, 2])");
        assert_only(&groups("flows = [0]\n        mss = 0"), &[], "tcp.groups.0.mss: must be an integer number of bytes between 1 and 65495, got 0");
        // A problem of [tcp] is reported once, not again for each group inheriting it.
        assert_only(&groups("flows = [0]\n        flavor = \"sack\""), &[("tcp.window_scale", "15")], "tcp.window_scale: must be between 0 and 14, got 15");
        let two = format!("{}\n        [[tcp.groups]]\n        flows = [1]\n", groups("flows = [1, 0]"));
        assert_only(&two, &[], "tcp.groups.1.flows.0: flow 1 is already set by tcp.groups.0, got 1");
    }

    #[test]
    fn receive_buffers_hold_a_segment_and_a_scale_unit() {
        assert_eq!(scenario(GEO2, &[("tcp.receive_buffer", "64KB")]).tcp.rcv_buf, Some(64_000));
        assert_eq!(scenario(GEO2, &[("tcp.receive_buffer", "unlimited")]).tcp.rcv_buf, None);
        assert_only(GEO2, &[("tcp.receive_buffer", "1000")], "tcp.receive_buffer: must hold at least one segment (MSS 1024) and one window-scale unit (1 bytes at window_scale 0), got 1000");
        assert_only(GEO2, &[("tcp.receive_buffer", "2000"), ("tcp.window_scale", "14")], "tcp.receive_buffer: must hold at least one segment (MSS 1024) and one window-scale unit (16384 bytes at window_scale 14), got 2000");
    }

    /// Two hosts and a router; one flow.
    const GRAPH: &str = r#"
        [topology]
        kind = "graph"
        nodes = ["a", "r", "b"]
        flows = ["a->b"]
        [[links.graph]]
        from = "a"
        to = "r"
        rate = "10Mbps"
        delay = "5ms"
        [[links.graph]]
        from = "r"
        to = "b"
        rate = "2Mbps"
        delay = "20ms"
    "#;

    #[test]
    fn graphs_are_checked_with_field_paths() {
        let s = scenario(GRAPH, &[]);
        assert_eq!(s.topology.link_names(), ["a->r", "r->a", "r->b", "b->r"]);
        assert_eq!(s.rtt_prop(), SimTime::from_millis(50));
        assert_eq!(s.topology.bottleneck().unwrap().rate, Rate(2_000_000), "the slowest link by default");
        assert_only(GRAPH, &[("topology.nodes", r#"["a", "r", "b", "a"]"#)], "topology.nodes.3: duplicate node name, got \"a\"");
        assert_only(&GRAPH.replace("to = \"b\"", "to = \"x\""), &[], "links.graph.1.to: must name a node of topology.nodes: a, r, b, got \"x\"");
        assert_only(GRAPH, &[("topology.flows", r#"["a->z"]"#)], "topology.flows.0: must name a node of topology.nodes: a, r, b, got \"z\"");
        let seven = r#"["a", "r", "b", "n3", "n4", "n5", "n6"]"#;
        let errs = problems(GRAPH, &[("topology.nodes", seven), ("topology.flows", r#"["a->z"]"#)]);
        assert!(errs.iter().any(|e| e == "topology.flows.0: must name a node of topology.nodes: a, r, b, n3, n4, n5, ... (7 nodes), got \"z\""), "{errs:?}");
        assert_only(GRAPH, &[("topology.nodes", r#"["a", "r", "b", "island"]"#), ("topology.flows", r#"["a->b", "island->a"]"#)], "topology.flows.1: no path joins \"island\" to \"a\", got \"island->a\"");
        assert_only(GRAPH, &[("topology.bottleneck", "a->b")], "topology.bottleneck: must name a link: a->r, r->a, r->b, b->r, got \"a->b\"");
        assert_only(GRAPH, &[("switch.kind", "atm")], "switch.kind: ATM switches are modelled on the dumbbell topology, got \"atm\"");
        assert_only(GEO2, &[("topology.nodes", r#"["a"]"#)], "topology.nodes: only for topology.kind = \"graph\"");
        // Keys of another kind, which were ignored without a word (a helper's review,
        // 2026-11-29): said in `ignored`, which the run's warnings repeat.
        assert_eq!(scenario(GEO2, &[("gateway.buffer", "1000")]).ignored, ["gateway: applies to topology.kind = \"gateway\": ignored"]);
        assert_eq!(scenario(GEO2, &[("links.bottleneck.payload_rate", "\"40Mbps\"")]).ignored,
                   ["links.bottleneck.payload_rate: applies to ATM switches (switch.kind = \"atm\"): ignored"]);
        assert!(scenario(GEO2, &[("links.bottleneck.payload_rate", "\"40Mbps\""), ("switch.kind", "\"atm\""), ("switch.buffer", "\"1bdp\"")]).ignored.is_empty());
        assert_eq!(scenario(GEO2, &[("app.bytes", "\"1KB\"")]).ignored, ["app.bytes: applies to app.kind = \"transfer\" (a bulk source never runs out): ignored"]);
        for (key, v) in [("app.think_time", "\"5s\""), ("app.first_batch", "\"staggered\""), ("app.truncation", "\"resample\""), ("app.request_bytes", "300"), ("app.gap_min", "\"1ms\""), ("app.gap_max", "\"200ms\"")] {
            let want = [format!("{key}: applies to app.kind = \"www\": ignored")];
            assert_eq!(scenario(GEO2, &[(key, v)]).ignored, want);
            assert_eq!(scenario(GEO2, &[("app.kind", "\"transfer\""), ("app.bytes", "\"1KB\""), (key, v)]).ignored, want);
            assert!(scenario(GEO2, &[("app.kind", "\"www\""), (key, v)]).ignored.is_empty());
        }
        let t = scenario(GEO2, &[("app.kind", "\"transfer\""), ("app.bytes", "\"1KB\"")]);
        assert!(matches!(t.app, AppSpec::Transfer { bytes: 1000, .. }) && t.ignored.is_empty());
        assert_only(GEO2, &[("links.access.from", "a")], "links.access.from: only for [[links.graph]] (topology.kind = \"graph\")");
        assert_only(GEO2, &[("topology.kind", "ring")], "topology.kind: must be \"dumbbell\", \"path\", \"graph\" or \"gateway\", got \"ring\"");
    }

    /// `[gateway]` keys that the chosen scheme does not read were ignored without a word (the
    /// run and its digest the same with or without them; a review of 2026-11-29): each given
    /// one is now a warning naming the schemes that read it, from schema.rs's "when" column.
    /// Defaults never warn, and a key the scheme reads never does.
    #[test]
    fn gateway_keys_the_scheme_does_not_read_are_ignored_with_a_warning() {
        let single = include_str!("../../../../scenarios/zhou-single.toml");
        let sgw = "gateway.scheme = \"sgw\"";
        let split = "gateway.scheme = \"sgw\" or \"split_tcp\"";
        let queued = "gateway.scheme = \"split_tcp\" or \"e2e\"";
        let warn = |key: &str, when: &str| format!("{key}: applies to {when}: ignored");
        // The file gives buffer, semantics and ack_every.
        assert!(scenario(single, &[]).ignored.is_empty());
        assert_eq!(scenario(single, &[("gateway.scheme", "split_tcp")]).ignored, [warn("gateway.semantics", sgw), warn("gateway.ack_every", sgw)]);
        assert_eq!(scenario(single, &[("gateway.scheme", "e2e")]).ignored, [warn("gateway.buffer", split), warn("gateway.semantics", sgw), warn("gateway.ack_every", sgw)]);
        // The review's case: every sgw key under e2e.
        let e2e = [("gateway.scheme", "e2e"), ("gateway.ack_pacing", "true"), ("gateway.timer_copies", "5"), ("gateway.client_buffer", "512"), ("gateway.ack_delay", "100ms"), ("gateway.timer_granularity", "1ms"), ("gateway.initial_rto", "2s")];
        let got = scenario(single, &e2e).ignored;
        for (key, when) in [("gateway.ack_pacing", sgw), ("gateway.timer_copies", sgw), ("gateway.client_buffer", split), ("gateway.ack_delay", sgw), ("gateway.timer_granularity", sgw), ("gateway.initial_rto", sgw)] {
            assert!(got.contains(&warn(key, when)), "{key}: {got:?}");
        }
        // A peak rate instead of the buffer, under e2e; and neither: e2e needs no SGW buffer.
        let peak = single.replace("buffer = \"41KB\"", "peak_rate = \"1bps\"");
        assert_eq!(scenario(&peak, &[("gateway.scheme", "e2e"), ("gateway.semantics", "normal"), ("gateway.ack_every", "tcp")]).ignored[0], warn("gateway.peak_rate", split));
        let none = single.replace("buffer = \"41KB\"\nsemantics = \"modified\"\nack_every = 1\n", "");
        assert!(scenario(&none, &[("gateway.scheme", "e2e")]).ignored.is_empty());
        assert_only(&none, &[("gateway.scheme", "split_tcp")], "gateway.buffer: is required (bytes per connection), or gateway.peak_rate");
        // The satellite queue: not under sgw, whose scheduler keeps none.
        assert_eq!(scenario(single, &[("gateway.satellite.queue", "2pkt")]).ignored, [warn("gateway.satellite.queue", queued)]);
        assert!(scenario(single, &[("gateway.satellite.queue", "2pkt"), ("gateway.scheme", "e2e"), ("gateway.buffer", "41KB")]).ignored.iter().all(|w| !w.starts_with("gateway.satellite.queue")));
        // Keys every scheme reads never warn; a value still has to be valid where ignored.
        assert!(scenario(single, &[("gateway.scheme", "e2e"), ("gateway.return.queue", "10pkt")]).ignored.iter().all(|w| !w.starts_with("gateway.return")));
        assert_only(single, &[("gateway.scheme", "e2e"), ("gateway.ack_every", "0")], "gateway.ack_every: must be an integer N >= 1 (ACK every N packets) or \"tcp\", got 0");
        // An unknown scheme is the one problem, without warnings derived from it.
        assert_only(single, &[("gateway.scheme", "pep")], "gateway.scheme: must be one of \"sgw\", \"split_tcp\", \"e2e\", got \"pep\"");
    }

    /// Every `[gateway]` key whose schema row names schemes warns under each other scheme, and
    /// only then: the list of given keys in gateway.rs `validate` and the schema agree, and each
    /// row names real schemes.
    #[test]
    fn every_gateway_key_limited_to_some_schemes_warns_under_the_others() {
        let single = include_str!("../../../../scenarios/zhou-single.toml").replace("semantics = \"modified\"\nack_every = 1\n", "");
        let value = |key: &str| match key {
            "gateway.buffer" => "\"41KB\"",
            "gateway.peak_rate" => "\"300kbps\"",
            "gateway.semantics" => "\"normal\"",
            "gateway.ack_every" => "4",
            "gateway.ack_delay" => "\"100ms\"",
            "gateway.ack_pacing" => "true",
            "gateway.client_buffer" => "\"64KB\"",
            "gateway.timer_granularity" => "\"5ms\"",
            "gateway.initial_rto" => "\"2s\"",
            "gateway.timer_copies" => "3",
            "gateway.satellite.queue" => "\"10pkt\"",
            _ => panic!("{key}: a key limited to some schemes without a value in this test (nor, probably, in gateway.rs validate's list)"),
        };
        let mut limited = 0;
        for row in crate::scenario::schema::KEYS.iter().filter(|k| k.key.starts_with("gateway.")) {
            let Some((when, schemes)) = gateway::scheme_condition(row.key) else {
                assert_eq!(row.when, "topology.kind = \"gateway\"", "{}: a when naming schemes must read gateway.scheme = ...", row.key);
                continue;
            };
            limited += 1;
            let named = when.trim_start_matches("gateway.scheme = ").split(" or ").count();
            assert!(!schemes.is_empty() && schemes.len() == named, "{}: {when:?} names a scheme that does not exist", row.key);
            for scheme in gateway::Scheme::ALL {
                // The buffer and the peak rate exclude each other: the file's buffer goes.
                let text = if row.key == "gateway.peak_rate" { single.replace("buffer = \"41KB\"\n", "") } else { single.clone() };
                let sets = [("gateway.scheme", scheme.name()), (row.key, value(row.key))];
                // (Under e2e the file's buffer warns as well: not this key's warning.)
                let ignored: Vec<String> = scenario(&text, &sets).ignored.into_iter().filter(|w| !w.starts_with("gateway.buffer:") || row.key == "gateway.buffer").collect();
                let want: Vec<String> = if schemes.contains(&scheme) { vec![] } else { vec![format!("{}: applies to {when}: ignored", row.key)] };
                assert_eq!(ignored, want, "{} under {}", row.key, scheme.name());
                assert_eq!(gateway::reads(scheme, row.key), want.is_empty());
            }
        }
        assert_eq!(limited, 11, "the keys of the list in gateway.rs validate");
    }

    #[test]
    fn path_hops_are_capped() {
        let hop = "\n        [[links.path]]\n        rate = \"10Mbps\"\n        delay = \"1ms\"";
        let many = format!("[topology]\n        kind = \"path\"{}", hop.repeat(MAX_HOPS + 1));
        assert_only(&many, &[], "links.path: must have at most 1000 hops (the engine's routing tables grow with the square of the hop count), got 1001 hops");
        let most = format!("[topology]\n        kind = \"path\"{}", hop.repeat(MAX_HOPS));
        assert_eq!(scenario(&most, &[]).topology.link_names().len(), 2 * MAX_HOPS);
    }

    #[test]
    fn bdp_in_bytes_uses_the_line_rate_and_atm_cells_the_cell_rate() {
        // OC-3 bottleneck: 155.52 Mbps on the line, 149.76 Mbps of cells.
        let oc3 = [("links.bottleneck.rate", "155.52Mbps"), ("links.bottleneck.payload_rate", "149.76Mbps"), ("switch.kind", "atm"), ("switch.buffer", "1bdp")];
        let s = scenario(GEO2, &oc3);
        let rtt = SimTime::from_millis(550);
        assert_eq!(s.rtt_prop(), rtt);
        assert_eq!(s.bdp_bytes(), Rate(155_520_000).bytes_in(rtt));
        assert_eq!(s.tcp.initial_ssthresh, 10_692_000);
        assert_eq!(s.switch.buffer_cells, crate::atm::bdp_cells(rtt, Rate(149_760_000)));
        // A path's bottleneck is its slowest hop: 2 Mbps x 60 ms = 15,000 bytes.
        assert_eq!(scenario(PATH2, &[]).bdp_bytes(), 15_000);
    }

    #[test]
    fn rto_backoff_reset_follows_the_recovery_unless_given() {
        // tcp/config.rs `BackoffReset`: ns-3's rule for newreno_ns3, ns-2's for the others.
        assert_eq!(scenario(GEO2, &[]).tcp.backoff_reset, BackoffReset::Sample);
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "newreno_ns3")]).tcp.backoff_reset, BackoffReset::NewAck);
        assert_eq!(scenario(GEO2, &[("tcp.recovery", "newreno_ns3"), ("tcp.cc", "cubic")]).tcp.backoff_reset, BackoffReset::NewAck);
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "newreno_ns3"), ("tcp.rto_backoff_reset", "\"sample\"")]).tcp.backoff_reset, BackoffReset::Sample);
        assert_eq!(scenario(GEO2, &[("tcp.rto_backoff_reset", "\"all_acked\"")]).tcp.backoff_reset, BackoffReset::AllAcked);
        // A group that names newreno_ns3 gets its rule; [tcp]'s explicit value is inherited.
        let g = format!("{GEO2}\n        [[tcp.groups]]\n        flows = [1]\n        flavor = \"newreno_ns3\"\n");
        let s = scenario(&g, &[]);
        assert_eq!((s.tcp_for(0).backoff_reset, s.tcp_for(1).backoff_reset), (BackoffReset::Sample, BackoffReset::NewAck));
        assert_eq!(scenario(&g, &[("tcp.rto_backoff_reset", "\"all_acked\"")]).tcp_for(1).backoff_reset, BackoffReset::AllAcked);
        assert_only(GEO2, &[("tcp.rto_backoff_reset", "\"karn\"")], "tcp.rto_backoff_reset: must be \"sample\", \"all_acked\" or \"new_ack\", got \"karn\"");
        // The boolean it replaced is an unknown key whose message names its replacement (schema::RENAMED).
        assert_only(GEO2, &[("tcp.clear_backoff_when_acked", "true")], "tcp.clear_backoff_when_acked: unknown key (replaced by tcp.rto_backoff_reset in b1049f3: true is rto_backoff_reset = \"all_acked\", false is \"sample\")");
    }

    #[test]
    fn rtt_estimator_follows_the_recovery_unless_given() {
        // tcp/config.rs `RttEstimatorKind`: ns-3's for newreno_ns3, ns-2's for the others.
        assert_eq!(scenario(GEO2, &[]).tcp.rtt_estimator, RttEstimatorKind::Ns2);
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "newreno_ns3/cubic")]).tcp.rtt_estimator, RttEstimatorKind::Ns3);
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "newreno_ns3"), ("tcp.rtt_estimator", "\"ns2\"")]).tcp.rtt_estimator, RttEstimatorKind::Ns2);
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "sack"), ("tcp.rtt_estimator", "\"ns3\"")]).tcp.rtt_estimator, RttEstimatorKind::Ns3);
        assert_eq!(scenario(GEO2, &[("tcp.rtt_estimator", "\"linux\"")]).tcp.rtt_estimator, RttEstimatorKind::Linux);
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "sack/bbr")]).tcp.rtt_estimator, RttEstimatorKind::Linux, "BBR's default");
        assert_eq!(scenario(GEO2, &[("tcp.flavor", "sack/bbr"), ("tcp.rtt_estimator", "\"ns2\"")]).tcp.rtt_estimator, RttEstimatorKind::Ns2);
        assert_only(GEO2, &[("tcp.rtt_estimator", "\"bsd\"")], "tcp.rtt_estimator: must be \"ns2\", \"ns3\" or \"linux\", got \"bsd\"");
    }

    /// `tcp.tlp`: on under BBR (the senders with RACK), off elsewhere, refused there if asked.
    #[test]
    fn the_tail_loss_probe_is_bbrs_and_refused_elsewhere() {
        assert!(!scenario(GEO2, &[]).tcp.tlp);
        assert!(scenario(GEO2, &[("tcp.flavor", "sack/bbr")]).tcp.tlp, "BBR's default");
        assert!(!scenario(GEO2, &[("tcp.flavor", "sack/bbr"), ("tcp.tlp", "false")]).tcp.tlp);
        assert!(!scenario(GEO2, &[("tcp.flavor", "sack"), ("tcp.tlp", "false")]).tcp.tlp);
        assert_only(GEO2, &[("tcp.flavor", "sack"), ("tcp.tlp", "true")], "tcp.tlp: the tail loss probe needs RACK, which only BBR's senders have (tcp.flavor \"<recovery>/bbr\"), got true");
    }

    #[test]
    fn ns2_profile_and_its_switches_one_by_one() {
        use crate::tcp::ns2::{BugFix, Ns2Compat};
        let s = scenario(GEO2, &[("tcp.profile", "ns2"), ("tcp.flavor", "tahoe")]);
        assert_eq!(s.tcp.ns2, Ns2Compat::ns235());
        assert_eq!((s.tcp.recovery, s.tcp.initial_cwnd, s.tcp.min_rto, s.tcp.timer_granularity), (RecoveryKind::Tahoe, 2, SimTime::from_secs(1), SimTime::from_millis(10)));
        // A key overrides the profile; a switch alone leaves the others at our defaults.
        assert_eq!(scenario(GEO2, &[("tcp.profile", "ns2"), ("tcp.min_rto", "200ms")]).tcp.min_rto, SimTime::from_millis(200));
        let one = scenario(GEO2, &[("tcp.ns2.singledup", "true"), ("tcp.ns2.bug_fix", "on"), ("tcp.ns2.tick_phase", "3ms")]).tcp.ns2;
        assert_eq!(one, Ns2Compat { singledup: true, bug_fix: BugFix::On, tick_phase: SimTime::from_millis(3), ..Ns2Compat::default() });
        assert_eq!(scenario(GEO2, &[]).tcp.ns2, Ns2Compat::default());
        assert_only(GEO2, &[("tcp.profile", "ns3")], "tcp.profile: must be \"default\" or \"ns2\", got \"ns3\"");
        assert_only(GEO2, &[("tcp.ns2.bug_fix", "maybe")], "tcp.ns2.bug_fix: must be \"on\", \"off\", \"timeout_only\" or \"ns3\", got \"maybe\"");
        assert!(problems(GEO2, &[("tcp.ns2.newreno_changes", "2")])[0].starts_with("tcp.ns2.newreno_changes: "));
        assert!(problems(GEO2, &[("tcp.ns2.bogus", "true")])[0].contains("tcp.ns2.bogus"));
    }

    const LEO: &str = include_str!("../../../../scenarios/leo-paris-moscow-isl.toml");
    const DIAMOND: &str = include_str!("../../../../scenarios/graph-diamond.toml");

    /// A constellation that cannot be computed leaves its hop without a delay, hence a bdp of
    /// 0: the sizes given in bdp (tcp.ssthresh, the default switch.buffer, links.path.0.queue)
    /// are not judged against it.
    #[test]
    fn a_constellation_problem_is_not_repeated_as_bdp_problems() {
        assert_only(LEO, &[("constellation.step", "0s")], "constellation.step: must be > 0, got \"0s\"");
        assert_only(LEO, &[("constellation.shell.altitude_km", "5")], "constellation.shell.altitude_km: must be between 100 and 100000 km, got 5");
        assert_only(LEO, &[("constellation.from.lat", "95")], "constellation.from.lat: must be between -90 and 90 degrees, got 95");
        assert_only(LEO, &[("constellation.routing", "laser")], "constellation.routing: must be \"isl\" or \"bentpipe\", got \"laser\"");
        // The steps are not counted against the default of an invalid run.duration.
        assert_only(LEO, &[("run.duration", "-1s"), ("constellation.step", "0.1ms")], "run.duration: must be > 0, got \"-1s\"");
        // An invalid link rate or delay likewise, on every kind of topology.
        let single = include_str!("../../../../scenarios/zhou-single.toml");
        assert_only(single, &[("gateway.satellite.rate", "0Mbps"), ("tcp.ssthresh", "bdp")], "gateway.satellite.rate: must be > 0, got \"0Mbps\"");
        assert_only(GEO2, &[("links.bottleneck.delay", "-1ms"), ("tcp.send_buffer", "0.5bdp")], "links.bottleneck.delay: must be >= 0, got \"-1ms\"");
        assert_only(GEO2, &[("topology.kind", "dumbel"), ("tcp.ssthresh", "bdp")], "topology.kind: must be \"dumbbell\", \"path\", \"graph\" or \"gateway\", got \"dumbel\"");
    }

    #[test]
    fn a_number_out_of_range_names_the_range_and_only_a_missing_one_is_required() {
        // Was "constellation.shell.planes: is required, between 1 and 10000, got 0", and the
        // file's phasing = 1 was judged against the 1 plane left in place of the 0.
        assert_only(LEO, &[("constellation.shell.planes", "0")], "constellation.shell.planes: must be between 1 and 10000, got 0");
        assert_only(LEO, &[("constellation.shell.per_plane", "10001")], "constellation.shell.per_plane: must be between 1 and 10000, got 10001");
        assert_only(LEO, &[("constellation.shell.planes", "99999999999999999999")], "constellation.shell.planes: is beyond TOML's integers (-2^63 to 2^63 - 1); allowed: 1 to 10000, got 99999999999999999999");
        assert_only(LEO, &[("constellation.shell.inclination_deg", "200")], "constellation.shell.inclination_deg: must be between 0 and 180 degrees, got 200");
        assert_only(LEO, &[("constellation.to.lon", "-181")], "constellation.to.lon: must be between -180 and 180 degrees, got -181");
        assert_only(LEO, &[("constellation.to.alt_km", "101")], "constellation.to.alt_km: must be between 0 and 100 km, got 101");
        // Phasing is judged against a valid number of planes.
        assert_only(LEO, &[("constellation.shell.phasing", "72")], "constellation.shell.phasing: must be between 0 and planes - 1 = 71, got 72");
        // Absent, each is required, with its range.
        assert_only(&LEO.replace("planes = 72, ", ""), &[], "constellation.shell.planes: is required (1 to 10000)");
        assert_only(&LEO.replace("altitude_km = 550, ", ""), &[], "constellation.shell.altitude_km: is required (100 to 100000 km)");
        assert_only(&LEO.replace("lat = 48.8566, ", ""), &[], "constellation.from.lat: is required (-90 to 90 degrees)");
    }

    /// Every problem that is not a consequence of another is still listed beside it.
    #[test]
    fn independent_problems_beside_an_unknown_bdp_are_all_listed() {
        assert_eq!(
            problems(LEO, &[("constellation.step", "0s"), ("switch.buffer", "0pkt"), ("tcp.window_scale", "15")]),
            [
                "constellation.step: must be > 0, got \"0s\"",
                "tcp.window_scale: must be between 0 and 14, got 15",
                "switch.buffer: must hold at least one packet (1500 bytes at MSS 1460), got \"0pkt\"",
            ]
        );
        // An ssthresh of 0 as given is wrong whatever the bdp.
        assert_eq!(problems(LEO, &[("constellation.step", "0s"), ("tcp.ssthresh", "0")]), ["constellation.step: must be > 0, got \"0s\"", "tcp.ssthresh: must be > 0, got 0"]);
        // A problem in the access links leaves the bottleneck's bdp known, and judged.
        assert_eq!(
            problems(GEO2, &[("links.access.ber", "2"), ("switch.buffer", "1e-9bdp")]),
            ["links.access.ber: must be in [0, 1), got 2", "switch.buffer: must hold at least one packet (1064 bytes at MSS 1024), got \"1e-9bdp\" = 0 bytes (bdp = links.bottleneck.rate x 2 x links.bottleneck.delay = 45Mbps x 2 x 275ms)"]
        );
    }

    /// A node renamed to the name of another: the links and flows that named it are not
    /// reported as well.
    #[test]
    fn a_duplicate_node_is_one_problem() {
        let dup = DIAMOND.replace(r#""r3", "b", "d"]"#, r#""r3", "b", "a"]"#);
        assert_only(&dup, &[], "topology.nodes.6: duplicate node name, got \"a\"");
        assert_only(DIAMOND, &[("topology.nodes", r#"["a", "c", "r1", "r1", "r3", "b", "d"]"#)], "topology.nodes.3: duplicate node name, got \"r1\"");
        assert_only(DIAMOND, &[("topology.nodes", "[]")], "topology.nodes: is required for a graph topology (a list of node names)");
        // Renamed everywhere: the link between the two r2s is wrong on its own.
        assert_eq!(problems(&DIAMOND.replace("\"r3\"", "\"r2\""), &[]), ["topology.nodes.4: duplicate node name, got \"r2\"", "links.graph.4.to: must differ from from (a link joins two nodes), got \"r2\""]);
        // Beside an independent problem.
        assert_eq!(problems(&dup, &[("tcp.mss", "0")]), ["topology.nodes.6: duplicate node name, got \"a\"", "tcp.mss: must be an integer number of bytes between 1 and 65495, got 0"]);
    }

    /// Checks that combine two values are not made with one left at its default because it
    /// was invalid.
    #[test]
    fn checks_combining_values_skip_an_invalid_one() {
        let single = include_str!("../../../../scenarios/zhou-single.toml");
        // The gateway's sizes against an invalid tcp.mss (validated after the gateway).
        assert_only(single, &[("tcp.mss", "0"), ("gateway.buffer", "1000")], "tcp.mss: must be an integer number of bytes between 1 and 65495, got 0");
        assert_only(single, &[("tcp.mss", "0"), ("gateway.client_buffer", "1000")], "tcp.mss: must be an integer number of bytes between 1 and 65495, got 0");
        // Flows against an unknown gateway scheme (split TCP has two flows a connection).
        assert_only(single, &[("gateway.scheme", "splt"), ("trace.flows", "[1]")], "gateway.scheme: must be one of \"sgw\", \"split_tcp\", \"e2e\", got \"splt\"");
        // A payload rate against an invalid rate.
        assert_only(GEO2, &[("links.bottleneck.rate", "45Mbs"), ("links.bottleneck.payload_rate", "40Mbps")], "links.bottleneck.rate: unknown rate unit \"Mbs\" (use bps, kbps, Mbps or Gbps), got \"45Mbs\"");
        // min_rto against an invalid max_rto.
        assert_only(GEO2, &[("tcp.max_rto", "-1s"), ("tcp.min_rto", "100s")], "tcp.max_rto: must be > 0, got \"-1s\"");
        // A timeout of 0 never backs off: the run would retransmit at one instant for ever.
        assert_only(GEO2, &[("tcp.initial_rto", "0s")], "tcp.initial_rto: must be > 0, got \"0s\"");
        assert_only(GEO2, &[("tcp.max_rto", "0s"), ("tcp.min_rto", "0s")], "tcp.max_rto: must be > 0, got \"0s\"");
        assert!(load(GEO2, &[("tcp.min_rto".to_string(), parse_override_value("0s"))], None).is_ok(), "min_rto may be 0");
        // The keys of one application against a misspelt kind.
        let want = format!("app.kind: {}, got \"pingpnog\"", one_of(&AppKind::names()));
        assert_only(GEO2, &[("app.kind", "pingpnog"), ("app.first_block", "1"), ("app.last_block", "100")], &want);
        // An application or a switch against an unknown kind of topology.
        let kind = "topology.kind: must be \"dumbbell\", \"path\", \"graph\" or \"gateway\", got \"dumbel\"";
        assert_only(GEO2, &[("topology.kind", "dumbel"), ("app.kind", "www")], kind);
        assert_only(GEO2, &[("topology.kind", "dumbel"), ("switch.kind", "atm")], kind);
        // A scripted loss's offset against the invalid MSS of its flow's group.
        let group = format!("{GEO2}\n        [[tcp.groups]]\n        flows = [1]\n        mss = 0\n        [[loss]]\n        flow = 1\n        offset = 1000\n");
        assert_only(&group, &[], "tcp.groups.0.mss: must be an integer number of bytes between 1 and 65495, got 0");
        // Link names against a graph that lost a link to an unknown node.
        let lost = format!("{DIAMOND}\n[trace]\nlinks = [\"r1->r2\", \"r2->b\"]\n").replacen("to = \"b\"", "to = \"B\"", 1);
        assert_only(&lost, &[], "links.graph.5.to: must name a node of topology.nodes: a, c, r1, r2, r3, b, ... (7 nodes), got \"B\"");
    }

    /// Each queue is judged under its own path, also when a link before it was left out of the
    /// graph (they were matched by position in the graph's links).
    #[test]
    fn a_link_queue_keeps_its_path_beside_a_link_left_out() {
        let text = DIAMOND.replacen("to = \"b\"", "to = \"B\"", 1).replacen("to = \"d\"", "to = \"d\"\nqueue = \"0pkt\"", 1);
        assert_eq!(
            problems(&text, &[]),
            [
                "links.graph.5.to: must name a node of topology.nodes: a, c, r1, r2, r3, b, ... (7 nodes), got \"B\"",
                "links.graph.6.queue: must hold at least one packet (1500 bytes at MSS 1460), got \"0pkt\"",
            ]
        );
    }
}
