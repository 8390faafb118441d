//! The scenario file as written (TOML or a Python dict): serde structs whose unit-bearing
//! fields are kept as written ("45Mbps", 9180, 1e-5) until validation converts them.
//!
//! Unknown keys are collected (not fatal at this stage) so that every one can be reported
//! with its path, together with every invalid value. Each top-level field of [`RawScenario`]
//! is read on its own (`scenario::raw_from_tree`), so a value of the wrong type in one section
//! hides nothing in the others.

use serde::{Deserialize, Serialize};

/// A value that may carry a unit: `"45Mbps"`, `9180`, `1e-5`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Val {
    Int(i64),
    Float(f64),
    Str(String),
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Int(i) => write!(f, "{i}"),
            // Debug keeps the point of a whole float ("1024.0"), so that a float where an
            // integer belongs shows as one.
            Val::Float(x) => write!(f, "{x:?}"),
            Val::Str(s) => write!(f, "{s:?}"),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawScenario {
    pub name: Option<String>,
    pub description: Option<String>,
    pub run: RawRun,
    pub topology: RawTopology,
    pub links: RawLinks,
    pub switch: RawSwitch,
    pub tcp: RawTcp,
    pub app: RawApp,
    pub loss: Vec<RawLoss>,
    pub trace: RawTrace,
    /// A path hop whose delay follows a constellation's geometry (docs/leo.md).
    pub constellation: Option<RawConstellation>,
    /// Seed 004's satellite system (`topology.kind = "gateway"`).
    pub gateway: Option<super::validate::gateway::RawGateway>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawRun {
    pub duration: Option<Val>,
    pub seed: Option<i64>,
    pub chain_hops: Option<bool>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawTopology {
    /// "dumbbell" (default), "path" or "graph".
    pub kind: Option<String>,
    /// Source/sink pairs of the dumbbell.
    pub pairs: Option<i64>,
    /// Graph: the node names.
    pub nodes: Option<Vec<String>>,
    /// Graph: the flows as "source->destination" node names; flow i is the i-th.
    pub flows: Option<Vec<String>>,
    /// Graph: the link whose C the metrics use ("a->b"; default the slowest link).
    pub bottleneck: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawLink {
    pub rate: Option<Val>,
    /// Rate left for ATM cells after physical framing (OC-3: 155.52 Mbps line, 149.76 Mbps
    /// of cells after SONET overhead, seed 000 §4.2.1). Defaults to `rate`.
    pub payload_rate: Option<Val>,
    pub delay: Option<Val>,
    pub ber: Option<Val>,
    /// Drop-tail queue at the sending end of this link (bytes, packets or "bdp" multiple), with
    /// the rules of `switch.buffer`. Not for ATM switches, whose `switch.buffer` governs.
    pub queue: Option<Val>,
    /// A moving link: delay (and optionally rate, ber) from these instants on (docs/leo.md).
    pub schedule: Option<Vec<RawScheduleEntry>>,
    /// Graph links only: the nodes it joins (both directions: "from->to" and "to->from").
    pub from: Option<String>,
    pub to: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawLinks {
    /// Dumbbell: every host's link to its router (both directions).
    pub access: Option<RawLink>,
    /// Dumbbell: the router-to-router link (both directions).
    pub bottleneck: Option<RawLink>,
    /// Path topology: the hops from sender to receiver, in order.
    pub path: Option<Vec<RawLink>>,
    /// Graph topology: duplex links between named nodes.
    pub graph: Option<Vec<RawLink>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawSwitch {
    /// "droptail" (IP routers, default) or "atm" (cell-level ATM switches, UBR+).
    pub kind: Option<String>,
    /// Buffer of the port feeding the bottleneck (each direction).
    pub buffer: Option<Val>,
    pub policy: Option<String>,
    #[serde(rename = "R")]
    pub r: Option<f64>,
    #[serde(rename = "Z")]
    pub z: Option<f64>,
    /// ATM: drop the rest of a frame that lost a cell (default true).
    pub partial_packet_discard: Option<bool>,
}

/// Declares [`RawTcp`] (the `[tcp]` table) and [`RawTcpGroup`] (one `[[tcp.groups]]` entry: the
/// same keys, each overriding `[tcp]` for the group's flows) from one list of fields.
macro_rules! raw_tcp {
    ($($(#[$doc:meta])* pub $field:ident: $ty:ty,)*) => {
        #[derive(Clone, Debug, Default, Serialize, Deserialize)]
        #[serde(default)]
        pub struct RawTcp {
            $($(#[$doc])* pub $field: $ty,)*
            /// Per-flow settings: each group names its flows and overrides any key above.
            pub groups: Option<Vec<RawTcpGroup>>,
        }

        /// `[[tcp.groups]]`: `flows = [0, 2]` and any `[tcp]` key, which overrides `[tcp]` for
        /// those flows.
        #[derive(Clone, Debug, Default, Serialize, Deserialize)]
        #[serde(default)]
        pub struct RawTcpGroup {
            /// The flows (data flow indices, as in `[[loss]]` and `[trace]`) this group sets.
            pub flows: Option<Vec<i64>>,
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl RawTcp {
            /// `[tcp]` with the keys `g` gives replaced by `g`'s (no groups).
            /// A group that names a flavour does not inherit `[tcp]`'s recovery and cc (a
            /// flavour is that pair).
            pub fn with_group(&self, g: &RawTcpGroup) -> RawTcp {
                let mut t = RawTcp { $($field: g.$field.clone().or_else(|| self.$field.clone()),)* groups: None };
                if g.flavor.is_some() {
                    t.recovery = g.recovery.clone();
                    t.cc = g.cc.clone();
                }
                t
            }
        }

        impl RawTcpGroup {
            /// The group of `flows` with the keys of `t`.
            pub fn from_tcp(flows: Option<Vec<i64>>, t: RawTcp) -> RawTcpGroup {
                RawTcpGroup { flows, $($field: t.$field,)* }
            }

            /// The `[tcp]` keys this group gives.
            pub fn given(&self) -> Vec<&'static str> {
                let mut v = Vec::new();
                $(if self.$field.is_some() {
                    v.push(stringify!($field));
                })*
                v
            }
        }
    };
}

raw_tcp! {
    pub flavor: Option<String>,
    pub recovery: Option<String>,
    pub cc: Option<String>,
    pub mss: Option<Val>,
    /// The 16-bit advertised window field (default 65535).
    pub window: Option<Val>,
    pub window_scale: Option<i64>,
    pub ssthresh: Option<Val>,
    pub initial_cwnd: Option<i64>,
    pub send_buffer: Option<Val>,
    /// Receive buffer: its free space is the advertised window ("unlimited": the fixed
    /// `window` field and an application that reads at once).
    pub receive_buffer: Option<Val>,
    pub delayed_ack: Option<bool>,
    pub delack_timeout: Option<Val>,
    pub sws_avoidance: Option<bool>,
    pub piggyback_acks: Option<bool>,
    /// "sample", "all_acked" or "new_ack" (tcp/config.rs `BackoffReset`); default from the
    /// recovery.
    pub rto_backoff_reset: Option<String>,
    /// "ns2" or "ns3" (tcp/config.rs `RttEstimatorKind`); default from the recovery.
    pub rtt_estimator: Option<String>,
    /// Linux's tail loss probe; default on under BBR (the only senders with RACK).
    pub tlp: Option<bool>,
    pub timer_granularity: Option<Val>,
    pub initial_rto: Option<Val>,
    pub min_rto: Option<Val>,
    pub max_rto: Option<Val>,
    pub sack: Option<bool>,
    pub dupack_threshold: Option<i64>,
    pub fin: Option<bool>,
    /// Slow-start restart after an idle RTO (ns-2's default, true).
    pub slow_start_restart: Option<bool>,
    /// "default" or "ns2" (ns-2.35's agents as its test suites set them, tcp/ns2.rs).
    pub profile: Option<String>,
    /// The ns-2 compatibility switches one by one (over the profile).
    pub ns2: Option<RawNs2>,
}

/// `[tcp.ns2]`: tcp/ns2.rs `Ns2Compat`, field by field.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawNs2 {
    pub window_arith: Option<bool>,
    /// "on", "off", "timeout_only" or "ns3".
    pub bug_fix: Option<String>,
    pub exit_fast_retrans: Option<bool>,
    pub newreno_changes: Option<i64>,
    pub newreno_changes1: Option<bool>,
    pub partial_window_deflation: Option<bool>,
    pub exit_recovery_fix: Option<bool>,
    pub singledup: Option<bool>,
    pub sack_old_code: Option<bool>,
    pub sack_dupack_needs_news: Option<bool>,
    pub rfc2988_rto: Option<bool>,
    pub syn_timeout_ssthresh: Option<bool>,
    pub tick_phase: Option<Val>,
    pub random_tick_phase: Option<bool>,
    pub sack_option_bytes: Option<bool>,
    pub precision_reduce: Option<bool>,
    pub drop_tail_ns2: Option<bool>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawApp {
    /// "bulk" (default), "transfer", "www", "pingpong".
    pub kind: Option<String>,
    /// Transfer size.
    pub bytes: Option<Val>,
    /// When the flows start.
    pub start: Option<Val>,
    /// Start flow i at start + i * stagger.
    pub stagger: Option<Val>,
    /// WWW: time from one batch of requests to the next (10 s in the seeds).
    pub think_time: Option<Val>,
    /// WWW: "staggered" (first batch at a random time in [0, think_time)) or "zero".
    pub first_batch: Option<String>,
    /// WWW: how the Poisson(5) draws are truncated to 1..9: "clamp" or "resample".
    pub truncation: Option<String>,
    /// WWW: bytes of one request (128 in the seeds).
    pub request_bytes: Option<Val>,
    /// WWW: gaps between the requests of a batch are uniform in [gap_min, gap_max).
    pub gap_min: Option<Val>,
    pub gap_max: Option<Val>,
    /// Ping-pong (NetPIPE): the first and last block sizes of the schedule.
    pub first_block: Option<Val>,
    pub last_block: Option<Val>,
    /// Ping-pong: NetPIPE's -p, bytes each scheduled size is also tried below and above.
    pub perturbation: Option<i64>,
    /// Ping-pong: trials per block size (one round trip each unless `nrepeat` says more).
    pub repeats: Option<i64>,
    /// Ping-pong: round trips per trial, a number or "netpipe" (NetPIPE's own choice).
    pub nrepeat: Option<Val>,
    /// Ping-pong: explicit block sizes (instead of first/last/perturbation).
    pub blocks: Option<Vec<Val>>,
}

/// A scripted loss: drop the packet of `flow` carrying data offset `offset` (0-based byte
/// offset of the segment's first byte) on its `transmission`-th sending (0 = first).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawLoss {
    pub flow: Option<i64>,
    pub offset: Option<Val>,
    pub transmission: Option<i64>,
    /// Data segments dropped (`segment` k = the k-th MSS-sized segment), as an alternative to
    /// `offset`.
    pub segment: Option<i64>,
    /// Where the packet is dropped: "sender" (default: as the sending host puts it on the wire)
    /// or a link's name (where the packet would enter that link's queue; counted on that link).
    pub at: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawTrace {
    /// Flows whose cwnd, ssthresh and srtt are recorded on change.
    pub flows: Option<Vec<i64>>,
    /// Links (by name) whose queue length is recorded on change.
    pub links: Option<Vec<String>>,
    /// Packet events recorded: "all", "none" or { flows, links } (read by `trace::spec`).
    pub packets: Option<toml::Value>,
    /// Bound of the packet log, in events.
    pub max_packet_events: Option<i64>,
    /// Bound of the time-series traces (flows' cwnd..., links' queues), in points.
    pub max_points: Option<i64>,
}

/// One entry of a link's schedule: from `at` on, the link has this delay (or no path when
/// `up = false`), and this rate and BER if given.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawScheduleEntry {
    pub at: Option<Val>,
    pub delay: Option<Val>,
    pub rate: Option<Val>,
    pub ber: Option<Val>,
    pub up: Option<bool>,
}

/// A ground station.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawStation {
    pub name: Option<String>,
    /// Degrees, north positive.
    pub lat: Option<f64>,
    /// Degrees, east positive.
    pub lon: Option<f64>,
    /// Height above the spherical Earth, km.
    pub alt_km: Option<f64>,
}

/// A Walker-delta shell.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawShell {
    pub altitude_km: Option<f64>,
    pub inclination_deg: Option<f64>,
    pub planes: Option<i64>,
    pub per_plane: Option<i64>,
    pub phasing: Option<i64>,
}

/// `[constellation]`: the ground-to-ground path of one `links.path` hop through a
/// constellation, recomputed every `step`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawConstellation {
    /// Index of the `links.path` hop (both directions) whose delay follows the geometry.
    pub hop: Option<i64>,
    /// A Walker-delta shell, or
    pub shell: Option<RawShell>,
    /// TLE text (two or three lines per satellite), with
    pub tle: Option<String>,
    /// the names of the satellites of `tle` to use (default: all), and
    pub satellites: Option<Vec<String>>,
    /// the UTC instant of simulated time 0 (default: the latest epoch in `tle`).
    pub start: Option<String>,
    pub from: Option<RawStation>,
    pub to: Option<RawStation>,
    /// Ground relays for bent-pipe paths (Handley 2019).
    pub relays: Option<Vec<RawStation>>,
    pub min_elevation_deg: Option<f64>,
    /// Reconfiguration step ("15s").
    pub step: Option<Val>,
    /// "isl" or "bentpipe".
    pub routing: Option<String>,
    /// Which satellites a ground station may use: "least_delay" or "highest_elevation".
    pub attach: Option<String>,
    /// Constellation time at simulated time 0 (a Walker shell's epoch is t = 0).
    pub offset: Option<Val>,
    /// How long the link is down from each handover ("0s").
    pub handover_outage: Option<Val>,
    /// Bit error rate during that interval instead of no path.
    pub handover_ber: Option<Val>,
    /// The hop's rate as a step function of the route's lowest elevation.
    pub rate_by_elevation: Option<Vec<RawElevationRate>>,
}

/// An entry of `constellation.rate_by_elevation`: the rate of routes whose lowest ground leg
/// is at or above `elevation_deg` (up to the next entry's).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RawElevationRate {
    pub elevation_deg: Option<f64>,
    pub rate: Option<Val>,
}
