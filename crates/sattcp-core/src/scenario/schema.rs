//! The scenario's keys, one row each: type, unit, default, allowed values and meaning.
//!
//! This table is the reference documentation of the scenario file: `docs/scenario.md` is
//! generated from it (`scripts/gen_scenario_doc.py`, through `sattcp._core.schema()`), and the
//! tests below fail when the raw serde structs (`raw.rs`) accept a key this table does not
//! list, or the other way round, or when a default written here is not the one validation
//! applies. Adding a key to the scenario therefore means adding its row here.

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;

/// The default of a key.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Dflt {
    /// The key must be given (where it applies).
    Required,
    /// Absent unless given; what absence means is in the row's meaning. The resolved scenario
    /// leaves it out.
    None,
    /// This value, written as a TOML literal ("100s" with its quotes is written `"100s"`).
    Value(&'static str),
    /// Computed from other keys, as described.
    Computed(&'static str),
}

/// One key of the scenario file.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Key {
    /// Dotted path. `links.<link>.` stands for each of [`LINK_TABLES`]; `[]` marks the entries
    /// of a list of tables (`loss[].flow` is `flow` in each `[[loss]]`).
    pub key: &'static str,
    /// What is written: integer, number, boolean, string, duration, rate, size, list.
    pub ty: &'static str,
    /// Unit or accepted unit suffixes ("" for none).
    pub unit: &'static str,
    pub default: Dflt,
    /// Allowed values or range.
    pub allowed: &'static str,
    /// When the key applies ("" for always).
    pub when: &'static str,
    /// One line.
    pub meaning: &'static str,
}

/// The link tables that `links.<link>.` stands for.
pub const LINK_TABLES: [&str; 4] = ["links.access", "links.bottleneck", "links.path[]", "links.graph[]"];

const GW: &str = "topology.kind = \"gateway\"";
// `[gateway]` keys that only some schemes read (scenario/gateway.rs `scheme_condition` reads
// these: the other schemes ignore them with a run warning).
const GW_SGW: &str = "gateway.scheme = \"sgw\"";
const GW_SPLIT: &str = "gateway.scheme = \"sgw\" or \"split_tcp\"";
const GW_QUEUED: &str = "gateway.scheme = \"split_tcp\" or \"e2e\"";
const PP: &str = "app.kind = \"pingpong\"";
const DURATION_UNITS: &str = "ns, us, ms, s, min";
const RATE_UNITS: &str = "bps, kbps, Mbps, Gbps";
const BYTE_UNITS: &str = "B, KB, MB, GB, KiB, MiB (an integer is bytes)";

macro_rules! key {
    ($key:expr, $ty:expr, $unit:expr, $default:expr, $allowed:expr, $when:expr, $meaning:expr) => {
        Key { key: $key, ty: $ty, unit: $unit, default: $default, allowed: $allowed, when: $when, meaning: $meaning }
    };
}

/// Every key of the scenario file, in the order of the documentation.
pub const KEYS: &[Key] = &[
    key!("name", "string", "", Dflt::Value("\"scenario\""), "", "", "Name of the scenario, carried by its results."),
    key!("description", "string", "", Dflt::None, "", "", "Free text; no effect on the run."),
    // [run]
    key!("run.duration", "duration", DURATION_UNITS, Dflt::Value("\"100s\""), "> 0 and <= 1000000s", "", "Simulated time of the run."),
    key!("run.seed", "integer", "", Dflt::Value("1"), "0 to 2^63 - 1 in a file (`--seed` or `--set run.seed=` give up to 2^64 - 1)", "", "Master seed of the named random streams."),
    key!("run.chain_hops", "boolean", "", Dflt::Value("false"), "not with `app.kind = \"pingpong\"`", "", "A packet crosses a drop-tail link that only one other link feeds (a dumbbell's far access links, a path's later hops) without an event of its own: its outcome there is computed when it enters the feeder. Same results, fewer engine events (so another `digest` and `events`); off while a packet trace is recorded. Fewer events are not less time: 8-12% less CPU time on a one-pair dumbbell (`geo-bulk.toml`), where whole paths chain, but more where many flows share a path (a dumbbell: +10-13% at 100 flows, +57% at 100,000; bench/README.md, hop chaining). docs/architecture.md, hop chaining."),
    // [topology]
    key!("topology.kind", "string", "", Dflt::Value("\"dumbbell\""), "`dumbbell`, `path`, `graph`, `gateway`", "", "N sources -> router -> bottleneck -> router -> N sinks, one flow over a chain of hops (`[[links.path]]`), named nodes joined by `[[links.graph]]` with `topology.flows`, or seed 004's satellite gateway system (`[gateway]`)."),
    key!("topology.pairs", "integer", "", Dflt::Value("1"), "1 to 100000 (a path: 1)", "", "Source/sink pairs of the dumbbell, one TCP connection each."),
    key!("topology.nodes", "list of strings", "", Dflt::None, "distinct names without `->`, at most 1000", "topology.kind = \"graph\"", "The graph's nodes (hosts and routers alike)."),
    key!("topology.flows", "list of strings", "", Dflt::None, "`\"source->destination\"` node names joined by some path", "topology.kind = \"graph\"", "The graph's flows, flow i the i-th; routes are shortest paths by delay (then fewest hops, then the lowest link)."),
    key!("topology.bottleneck", "string", "", Dflt::Computed("the slowest link"), "a link name (`a->b`)", "topology.kind = \"graph\"", "The link whose C (maximum TCP goodput) the metrics use; efficiency and fairness count the data flows whose route crosses it (on a graph some may not)."),
    // [links.access], [links.bottleneck], [[links.path]]
    key!("links.<link>.from", "string", "", Dflt::None, "a node of topology.nodes", "`[[links.graph]]` only", "Graph links: one end; the link is duplex, named `from->to` and `to->from`."),
    key!("links.<link>.to", "string", "", Dflt::None, "a node of topology.nodes, not from", "`[[links.graph]]` only", "Graph links: the other end."),
    key!("links.<link>.rate", "rate", RATE_UNITS, Dflt::Required, "> 0", "dumbbell: access and bottleneck; path: each hop", "Line rate of the link (each direction)."),
    key!("links.<link>.payload_rate", "rate", RATE_UNITS, Dflt::Computed("the link's `rate`"), "> 0 and <= rate", "", "Rate left for ATM cells after physical framing (OC-3: 149.76 of 155.52 Mbps, seed 000 §4.2.1)."),
    key!("links.<link>.delay", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0", "", "One-way propagation delay."),
    key!("links.<link>.ber", "number", "", Dflt::Value("0.0"), "[0, 1)", "", "Bit error rate; a packet with a bit error is dropped at the receiving end."),
    key!("links.<link>.queue", "size", "B, KB, ..., pkt, bdp", Dflt::None, "holds at least one packet (MSS + 40 bytes); at most 2^64 - 1 bytes", "drop-tail switches", "Drop-tail queue at the sending end of the link; absent: `switch.buffer` on the bottleneck, unlimited elsewhere."),
    // links.<link>.schedule: moving links (docs/leo.md)
    key!("links.<link>.schedule[].at", "duration", DURATION_UNITS, Dflt::None, "required in each entry; the first at 0s, then increasing", "a moving link (drop-tail IP links)", "From this instant on, the entry's delay (rate, BER) is in force; the link's own `delay` is then not given."),
    key!("links.<link>.schedule[].delay", "duration", DURATION_UNITS, Dflt::None, ">= 0; required unless `up = false`", "a moving link", "One-way delay of packets whose transmission ends in this interval (packets in flight keep theirs, so a drop can reorder)."),
    key!("links.<link>.schedule[].rate", "rate", RATE_UNITS, Dflt::None, "> 0", "a moving link", "Line rate from this entry on (absent: unchanged), for packets offered from then."),
    key!("links.<link>.schedule[].ber", "number", "", Dflt::None, "[0, 1)", "a moving link", "Bit error rate from this entry on (absent: unchanged)."),
    key!("links.<link>.schedule[].up", "boolean", "", Dflt::None, "true, false", "a moving link", "false: no path in this interval; packets whose transmission ends then are dropped (`no_route`). Absent: true."),
    // [switch]
    key!("switch.kind", "string", "", Dflt::Value("\"droptail\""), "`droptail`, `atm`", "", "IP routers with FIFO drop-tail queues, or cell-level ATM switches with a UBR+ drop policy (seed 000 §3)."),
    key!("switch.buffer", "size", "B, KB, ..., pkt, cells (ATM), bdp", Dflt::Value("\"1bdp\""), "holds one packet (drop-tail) or one frame of cells (ATM); at most 2^64 - 1 bytes (drop-tail) or 2^32 - 1 cells (ATM)", "", "Buffer of the port feeding the bottleneck, each direction; `bdp` = bottleneck rate x round-trip propagation delay."),
    key!("switch.policy", "string", "", Dflt::Value("\"ubr\""), "`ubr`, `ppd`, `epd`, `sd`, `fba`", "switch.kind = \"atm\"", "Drop policy of the ATM ports: plain UBR tail drop, partial/early packet discard, selective drop, fair buffer allocation."),
    key!("switch.R", "number", "", Dflt::Value("0.8"), "(0, 1]", "switch.kind = \"atm\"", "Drop threshold of EPD, SD and FBA as a fraction of the buffer (seed 000 §4.2.3)."),
    key!("switch.Z", "number", "", Dflt::Value("0.8"), "(0, 1]", "switch.kind = \"atm\"", "The per-VC parameter Z of SD and FBA (seed 000 §4.2.3)."),
    key!("switch.partial_packet_discard", "boolean", "", Dflt::Value("true"), "", "switch.kind = \"atm\"", "Frame-aware policies (EPD, SD, FBA) drop the rest of a frame that lost a cell; false: its later cells are still buffered and sent when there is room (issue 11's WAN-gap candidate)."),
    // [tcp]
    key!("tcp.groups[].flows", "list of integers", "", Dflt::Required, "flow indices, each in one group at most", "", "Per-flow TCP settings: each `[[tcp.groups]]` entry names its flows (a WWW pair's request half follows its pair) and may give any `[tcp]` key below, which overrides `[tcp]` for those flows."),
    key!("tcp.flavor", "string", "", Dflt::Value("\"reno\""), "`vanilla`, `tahoe`, `reno`, `newreno`, `sack`, `newreno_rfc6582`, `newreno_ns3`, `sack_rfc6675`, optionally `/reno`, `/cubic`, `/cubic_hystart`, `/hybla`, `/bbr`, `/westwood`, `/westwood_linux`", "", "A (loss recovery, congestion control) pair by name (seed 001 §2); `recovery` and `cc` override its parts."),
    key!("tcp.recovery", "string", "", Dflt::Computed("from `tcp.flavor`"), "`timeout`, `tahoe`, `reno`, `newreno_ns2`, `newreno_rfc6582`, `newreno_ns3`, `sack_fall_floyd`, `sack_rfc6675`", "", "Loss recovery."),
    key!("tcp.cc", "string", "", Dflt::Computed("from `tcp.flavor`"), "`reno_aimd`, `cubic`, `cubic_hystart`, `hybla`, `bbr`, `westwood`, `westwood_linux`", "", "Congestion control."),
    key!("tcp.mss", "integer", "bytes", Dflt::Value("1024"), "1 to 65495", "", "Maximum segment size (TCP payload bytes)."),
    key!("tcp.window", "integer", "bytes", Dflt::Value("65535"), "1 to 65535", "", "The 16-bit advertised window field; the receive window is `window << window_scale`."),
    key!("tcp.window_scale", "integer", "", Dflt::Value("0"), "0 to 14 (RFC 7323)", "", "Window scale shift."),
    key!("tcp.ssthresh", "size", BYTE_UNITS, Dflt::Computed("max(1 bdp, 2 x MSS)"), "> 0; `\"bdp\"` or `\"Xbdp\"` allowed", "", "Initial slow-start threshold."),
    key!("tcp.initial_cwnd", "integer", "segments", Dflt::Value("1"), "1 to 1000", "", "Initial congestion window (one segment after a lost SYN or SYN-ACK: RFC 5681 §3.1)."),
    key!("tcp.send_buffer", "size", BYTE_UNITS, Dflt::Value("\"unlimited\""), "`\"unlimited\"` or at least one MSS; `\"Xbdp\"` allowed", "", "Send buffer (bytes the application may have queued beyond what is acknowledged)."),
    key!("tcp.receive_buffer", "size", BYTE_UNITS, Dflt::Value("\"unlimited\""), "`\"unlimited\"` or at least one MSS and 2^window_scale bytes; `\"Xbdp\"` allowed", "", "Receive buffer: the advertised window is its free space (zero window and persist timer when the application stops reading); unlimited: the fixed `window` and an application that reads at once."),
    key!("tcp.delayed_ack", "boolean", "", Dflt::Value("false"), "", "", "Delayed ACKs (off in the seeds: every segment is acknowledged at once)."),
    key!("tcp.delack_timeout", "duration", DURATION_UNITS, Dflt::Value("\"100ms\""), ">= 0", "", "Delayed-ACK timer."),
    key!("tcp.sws_avoidance", "boolean", "", Dflt::Value("false"), "", "", "Silly-window-syndrome avoidance (off in the seeds)."),
    key!("tcp.rto_backoff_reset", "string", "", Dflt::Computed("`new_ack` for the recovery `newreno_ns3`, else `sample`"), "`sample`, `all_acked`, `new_ack`", "", "What forgets the retransmission timer's exponential backoff besides a new RTT sample (which always does): nothing else (`sample`: Karn's rule, ns-2), an ACK that leaves nothing outstanding (`all_acked`: Linux 2.2 with timestamps, tcp_ack_saw_tstamp), or every new ACK that restarts the timer (`new_ack`: ns-3's TcpSocketBase::NewAck). docs/tcp.md, the RTO."),
    key!("tcp.rtt_estimator", "string", "", Dflt::Computed("`linux` under BBR, `ns3` for the recovery `newreno_ns3`, else `ns2`"), "`ns2`, `ns3`, `linux`", "", "How the RTT is measured and the RTO computed: ns-2's TcpAgent (one timed segment per round trip in timer_granularity ticks, RTO = SRTT + 4 RTTVAR ticks, at least two ticks and min_rto), ns-3.44's TcpSocketBase with RttMeanDeviation without timestamps (a sample from every ACK of new data whose oldest newly acknowledged segment was sent once, in nanoseconds; RTO = max(SRTT + max(timer_granularity, 4 RTTVAR), min_rto), doubled per timeout up to max_rto) or Linux's without timestamps (a sample from every ACK that newly acknowledges or SACKs a segment sent once, none when it acknowledges a retransmission; RTO = SRTT + RTTVAR, RTTVAR at least min_rto and following the largest deviation of the last round trip, rounded up to timer_granularity, doubled per timeout up to max_rto). docs/tcp.md, the RTO."),
    key!("tcp.tlp", "boolean", "", Dflt::Computed("`true` under BBR, else `false`"), "`true` only under BBR", "", "Linux's tail loss probe (RFC 8985 §7, tcp_schedule_loss_probe and tcp_send_loss_probe): in the open state with SACK, a probe 2 SRTT + 2 ms after the last send (2 SRTT + 200 ms with one segment out; never after the RTO would fire) sends one new segment beyond cwnd, or else resends the last one, so that a lost tail is found by its ACK instead of the retransmission timer. It needs RACK, which only BBR's senders have. docs/tcp.md, \"Tail loss probe (BBR)\"."),
    key!("tcp.piggyback_acks", "boolean", "", Dflt::Value("false"), "", "", "A client/server pair (WWW, ping-pong) is two half-connections; true: a receiver's pending delayed ACK leaves at once, just ahead of the data its host sends on the reverse half, as the ACK a single connection carries on that data. False: the halves are independent (the seeds' model)."),
    key!("tcp.timer_granularity", "duration", DURATION_UNITS, Dflt::Value("\"100ms\""), "> 0", "", "Tick of the retransmission timer (100 ms in the seeds); with `rtt_estimator = \"ns3\"`, ns-3's ClockGranularity (the RTO's floor above SRTT)."),
    key!("tcp.initial_rto", "duration", DURATION_UNITS, Dflt::Value("\"3s\""), "> 0", "", "Retransmission timeout before the first RTT sample."),
    key!("tcp.min_rto", "duration", DURATION_UNITS, Dflt::Value("\"200ms\""), "<= max_rto", "", "Lower bound of the retransmission timeout."),
    key!("tcp.max_rto", "duration", DURATION_UNITS, Dflt::Value("\"64s\""), "> 0; >= min_rto", "", "Upper bound of the retransmission timeout."),
    key!("tcp.sack", "boolean", "", Dflt::Computed("true for the SACK recoveries, else false"), "true with a SACK recovery", "", "Negotiate the SACK option."),
    key!("tcp.dupack_threshold", "integer", "ACKs", Dflt::Value("3"), "1 to 1000", "", "Duplicate ACKs that trigger fast retransmit."),
    key!("tcp.fin", "boolean", "", Dflt::Value("false"), "", "", "Close with a FIN when a finite transfer has been sent."),
    key!("tcp.slow_start_restart", "boolean", "", Dflt::Value("true"), "", "", "Slow-start restart after an idle RTO (ns-2's default)."),
    key!("tcp.profile", "string", "", Dflt::Value("\"default\""), "`default`, `ns2`", "", "`ns2`: ns-2.35's agents as its test-suite-tcpVariants sets them (every `tcp.ns2` switch, tcpTick_ 10 ms, minrto_ 1 s, rtxcur_init_ 6 s, maxrto_ 60 s, windowInit_ 2); explicit keys override it (docs/tcp.md)."),
    key!("tcp.ns2.window_arith", "boolean", "", Dflt::Value("false"), "", "", "ns-2's fractional window in packets (cwnd_ += 1/cwnd_; cwnd_ = int(window()/2) at a fast retransmit)."),
    key!("tcp.ns2.bug_fix", "string", "", Dflt::Value("\"timeout_only\""), "`timeout_only`, `on`, `off`, `ns3`", "", "ns-2 bugFix_: which RECOVER blocks a new fast retransmit (ours: only a timeout's; `ns3`: a timeout's until snd_una >= RECOVER, ns-3.44's test)."),
    key!("tcp.ns2.exit_fast_retrans", "boolean", "", Dflt::Value("false"), "", "", "ns-2 exitFastRetrans_: duplicates inflate the window only in a recovery actually entered."),
    key!("tcp.ns2.newreno_changes", "integer", "", Dflt::Value("1"), "0 or 1", "", "ns-2 NewReno newreno_changes_: 1 Hoe's flywheel (the seeds'), 0 the inflated window sends (2 per ACK)."),
    key!("tcp.ns2.newreno_changes1", "boolean", "", Dflt::Value("false"), "", "", "ns-2 NewReno newreno_changes1_: only the first partial ACK restarts the timer."),
    key!("tcp.ns2.partial_window_deflation", "boolean", "", Dflt::Value("false"), "", "", "ns-2 NewReno partial_window_deflation_ (RFC 2582)."),
    key!("tcp.ns2.exit_recovery_fix", "boolean", "", Dflt::Value("false"), "", "", "ns-2 NewReno exit_recovery_fix_: cwnd = min(ssthresh, outstanding) on leaving recovery."),
    key!("tcp.ns2.singledup", "boolean", "", Dflt::Value("false"), "", "", "ns-2 singledup_: limited transmit (RFC 3042) on the first two duplicate ACKs."),
    key!("tcp.ns2.sack_old_code", "boolean", "", Dflt::Value("true"), "", "", "ns-2 Sack1 oldCode_: PIPE = cwnd - 3 (true, seed 001) or packets outstanding - 3."),
    key!("tcp.ns2.sack_dupack_needs_news", "boolean", "", Dflt::Value("false"), "", "", "ns-2 Sack1 CheckUpdate(): outside recovery a duplicate ACK counts only if it SACKs new data (sack_rfc6675 always counts so: RFC 6675 §2)."),
    key!("tcp.ns2.rfc2988_rto", "boolean", "", Dflt::Value("false"), "", "", "ns-2 rfc2988_: an RTO below min_rto becomes min_rto before the backoff multiplies."),
    key!("tcp.ns2.syn_timeout_ssthresh", "boolean", "", Dflt::Value("false"), "", "", "ns-2 timeout() on a lost SYN (packet 0): ssthresh = 2 segments (the window after it is one segment in every profile, RFC 5681 §3.1)."),
    key!("tcp.ns2.tick_phase", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0 (taken modulo the tick)", "", "ns-2 boot_time_: phase of the RTT tick grid."),
    key!("tcp.ns2.sack_option_bytes", "boolean", "", Dflt::Value("false"), "", "", "ns-2's SACK sink adds 8 bytes per SACK block to the ACK."),
    key!("tcp.ns2.random_tick_phase", "boolean", "", Dflt::Value("false"), "", "", "ns-2 boot_time_ per sender: tick phase uniform in [0, tick) from the stream tcp/boot_time (overrides tick_phase)."),
    key!("tcp.ns2.precision_reduce", "boolean", "", Dflt::Value("false"), "", "", "ns-2 precisionReduce_: a fast retransmit halves the fractional window (cwnd_ = windowd()/2); needs window_arith."),
    key!("tcp.ns2.drop_tail_ns2", "boolean", "", Dflt::Value("false"), "", "", "ns-2's DropTail limit N = N - 1 waiting + 1 in service (ours: N waiting)."),
    // [app]
    key!("app.kind", "string", "", Dflt::Value("\"bulk\""), "`bulk`, `transfer`, `www`, `pingpong`", "", "Persistent senders, one fixed-size transfer per flow, the seeds' WWW client/server pairs (seed 000 §4.1), or NetPIPE's ping-pong (seed 003, docs/netpipe.md)."),
    key!("app.bytes", "size", BYTE_UNITS, Dflt::Required, "> 0", "app.kind = \"transfer\"", "Size of each transfer."),
    key!("app.start", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0", "app.kind = \"bulk\" or \"transfer\"", "When the first flow starts."),
    key!("app.stagger", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0", "app.kind = \"bulk\" or \"transfer\"", "Flow i starts at start + i x stagger."),
    key!("app.think_time", "duration", DURATION_UNITS, Dflt::Value("\"10s\""), "> 0 and > 8 x gap_max", "app.kind = \"www\"", "Time from one batch of requests to the next."),
    key!("app.first_batch", "string", "", Dflt::Value("\"staggered\""), "`staggered`, `zero`", "app.kind = \"www\"", "First batch at a random time in [0, think_time), or every client at t = 0."),
    key!("app.truncation", "string", "", Dflt::Value("\"clamp\""), "`clamp`, `resample`", "app.kind = \"www\"", "How the Poisson(5) draws are brought into 1..9."),
    key!("app.request_bytes", "size", BYTE_UNITS, Dflt::Value("128"), "> 0", "app.kind = \"www\"", "Bytes of one request."),
    key!("app.gap_min", "duration", DURATION_UNITS, Dflt::Value("\"100ms\""), "<= gap_max", "app.kind = \"www\"", "Gaps between the requests of a batch are uniform in [gap_min, gap_max)."),
    key!("app.gap_max", "duration", DURATION_UNITS, Dflt::Value("\"500ms\""), ">= gap_min", "app.kind = \"www\"", "See gap_min."),
    key!("app.first_block", "size", BYTE_UNITS, Dflt::Value("1"), "> 0 and <= last_block", PP, "First block size of NetPIPE's schedule (NPtcp -l)."),
    key!("app.last_block", "size", BYTE_UNITS, Dflt::Value("65536"), ">= first_block", PP, "Last block size of the schedule (NPtcp -u); sizes up to last_block + perturbation are run, as NetPIPE does."),
    key!("app.perturbation", "integer", "bytes", Dflt::Value("3"), "0 to 1000000", PP, "NetPIPE's -p: each size whose increment exceeds perturbation + 1 is also tried this many bytes below and above."),
    key!("app.repeats", "integer", "", Dflt::Value("7"), "1 to 1000000", PP, "Trials per block size (NetPIPE's TRIALS = 7), each of app.nrepeat round trips; the transfer time of a trial is its duration / (2 nrepeat), and mean, minimum and variance are over the trials."),
    key!("app.nrepeat", "integer or string", "", Dflt::None, "1 to 1000000, or `netpipe`", PP, "Round trips per trial. Absent: 1 (each trial one round trip). `netpipe`: NetPIPE's own choice per size, max(RUNTM / (previous size / (previous size - increment + 1) x tlast), repeats) with RUNTM = 0.25 s and tlast the previous size's best trial time (docs/netpipe.md)."),
    key!("app.blocks", "list of sizes", BYTE_UNITS, Dflt::None, "each > 0, at most 100000 entries", PP, "Explicit block sizes, in this order; replaces first_block, last_block and perturbation."),
    // [[loss]]
    key!("loss[].flow", "integer", "", Dflt::Value("0"), "0 to flows - 1", "", "Flow whose segment is dropped."),
    key!("loss[].offset", "size", BYTE_UNITS, Dflt::None, "a multiple of tcp.mss; less than app.bytes", "", "Data offset (0-based) of the segment to drop; give `offset` or `segment`."),
    key!("loss[].segment", "integer", "segments", Dflt::None, ">= 0", "", "Index of the MSS-sized segment to drop (offset = segment x MSS); give `offset` or `segment`."),
    key!("loss[].transmission", "integer", "", Dflt::Value("0"), "0 to 1000", "", "Which transmission of that segment is dropped (0 = the first)."),
    key!("loss[].at", "string", "", Dflt::Value("\"sender\""), "`sender` or a link's name (drop-tail IP links only)", "", "Where the packet is dropped: as the sending host puts it on the wire, or where it would enter that link's queue (counted on that link as a scripted drop)."),
    // [constellation] (docs/leo.md)
    key!("constellation.hop", "integer", "", Dflt::Computed("0 when links.path has one hop"), "0 to hops - 1", "topology.kind = \"path\"", "The links.path hop (both directions) whose delay follows the constellation; its own `delay` is not given."),
    key!("constellation.shell.altitude_km", "number", "km", Dflt::Required, "100 to 100000", "a Walker shell (give `shell` or `tle`)", "Altitude of the circular orbits above the 6371 km sphere."),
    key!("constellation.shell.inclination_deg", "number", "degrees", Dflt::Required, "0 to 180", "a Walker shell", "Inclination of the orbital planes."),
    key!("constellation.shell.planes", "integer", "", Dflt::Required, "1 to 10000", "a Walker shell", "Orbital planes, ascending nodes spread over 360 degrees (Walker delta)."),
    key!("constellation.shell.per_plane", "integer", "", Dflt::Required, "1 to 10000", "a Walker shell", "Satellites per plane, evenly spaced."),
    key!("constellation.shell.phasing", "integer", "", Dflt::Computed("1 (0 with one plane)"), "0 to planes - 1", "a Walker shell", "Walker's F: plane p is advanced by p x F x 360 / (planes x per_plane) degrees."),
    key!("constellation.tle", "string", "", Dflt::None, "TLE lines (two per satellite, an optional name line before)", "a TLE set (give `shell` or `tle`)", "Satellites propagated with SGP4; bent-pipe routing only."),
    key!("constellation.satellites", "list of strings", "", Dflt::None, "names in `tle`", "a TLE set", "The satellites of `tle` to use (absent: all)."),
    key!("constellation.start", "string", "", Dflt::None, "UTC, e.g. \"2024-01-01T00:00:00Z\"", "a TLE set", "The instant of simulated time 0 (absent: the latest epoch in `tle`)."),
    key!("constellation.from.name", "string", "", Dflt::Computed("\"from\""), "", "", "Name of the source ground station (traces, messages)."),
    key!("constellation.from.lat", "number", "degrees", Dflt::Required, "-90 to 90", "", "Latitude of the source ground station (spherical Earth)."),
    key!("constellation.from.lon", "number", "degrees", Dflt::Required, "-180 to 180", "", "Longitude of the source ground station, east positive."),
    key!("constellation.from.alt_km", "number", "km", Dflt::Value("0.0"), "0 to 100", "", "Height of the source ground station above the sphere."),
    key!("constellation.to.name", "string", "", Dflt::Computed("\"to\""), "", "", "Name of the destination ground station."),
    key!("constellation.to.lat", "number", "degrees", Dflt::Required, "-90 to 90", "", "Latitude of the destination ground station."),
    key!("constellation.to.lon", "number", "degrees", Dflt::Required, "-180 to 180", "", "Longitude of the destination ground station."),
    key!("constellation.to.alt_km", "number", "km", Dflt::Value("0.0"), "0 to 100", "", "Height of the destination ground station."),
    key!("constellation.relays[].name", "string", "", Dflt::Computed("\"relay{i}\""), "", "", "Name of a ground relay."),
    key!("constellation.relays[].lat", "number", "degrees", Dflt::Required, "-90 to 90", "", "Latitude of a ground relay (bent-pipe hops may go down to it and up again, Handley 2019)."),
    key!("constellation.relays[].lon", "number", "degrees", Dflt::Required, "-180 to 180", "", "Longitude of a ground relay."),
    key!("constellation.relays[].alt_km", "number", "km", Dflt::Value("0.0"), "0 to 100", "", "Height of a ground relay."),
    key!("constellation.min_elevation_deg", "number", "degrees", Dflt::Value("25.0"), "[0, 90)", "", "A ground station uses satellites at or above this elevation (Starlink shell 1: 25)."),
    key!("constellation.step", "duration", DURATION_UNITS, Dflt::Value("\"15s\""), "> 0; at most 200000 steps per run", "", "Reconfiguration interval: the route and its delay are recomputed at each multiple and held in between (Starlink: 15 s)."),
    key!("constellation.routing", "string", "", Dflt::Computed("`isl` for a shell, `bentpipe` for a TLE set"), "`isl`, `bentpipe`", "", "Inter-satellite links of the +Grid, or every satellite hop straight down to a ground station (the destination or a relay)."),
    key!("constellation.attach", "string", "", Dflt::Value("\"least_delay\""), "`least_delay`, `highest_elevation`", "", "Which satellites a ground station (end or relay) may use: any it sees at or above `min_elevation_deg`, the route minimising the delay end to end, or only the one highest in its sky, the route minimising the delay between those (docs/leo.md)."),
    key!("constellation.offset", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0", "", "Constellation time at simulated time 0 (shells start at their epoch; TLE sets at `start`)."),
    key!("constellation.handover_outage", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0, < step", "", "At each handover (the route's nodes change from one step to the next, both connected) the link is down this long from the change: packets whose transmission ends then are dropped (`no_route`), packets in flight arrive. 0: a handover loses nothing (docs/leo.md)."),
    key!("constellation.handover_ber", "number", "", Dflt::None, "0 to 1; needs handover_outage > 0", "", "During each handover interval (`handover_outage`) the link keeps the new route's path and corrupts bits at this rate instead of having no path; the hop's own `ber` after it (absent: no path in the interval; docs/leo.md)."),
    key!("constellation.rate_by_elevation[].elevation_deg", "number", "degrees", Dflt::Required, "0 to 90, increasing; the first at most min_elevation_deg", "", "From this elevation of the route's lowest ground-satellite leg up to the next entry's, the hop's rate is this entry's `rate` (absent list: the hop's own rate throughout; docs/leo.md)."),
    key!("constellation.rate_by_elevation[].rate", "rate", RATE_UNITS, Dflt::Required, "> 0", "", "The hop's line rate (both directions) while the route's lowest leg is in this entry's elevation band, applied at each step as a schedule entry's `rate`."),
    // [gateway] (topology.kind = "gateway", seed 004, docs/gateway.md)
    key!("gateway.scheme", "string", "", Dflt::Value("\"sgw\""), "`sgw`, `split_tcp`, `e2e`", GW, "Seed 004's split connections with the rate-based satellite protocol, TCP splitting with TCP on both legs, or end-to-end TCP."),
    key!("gateway.buffer", "size", BYTE_UNITS, Dflt::None, ">= tcp.mss", GW_SPLIT, "Per-connection SGW buffer (receive and send in one, seed 004 figure 2); give `buffer` or `peak_rate` (end-to-end TCP has no SGW buffer)."),
    key!("gateway.peak_rate", "rate", RATE_UNITS, Dflt::None, "<= the satellite rate", GW_SPLIT, "Static peak rate per connection: buffer = peak rate x (satellite RTT + its terrestrial RTT) (seed 004 §II.A)."),
    key!("gateway.semantics", "string", "", Dflt::Value("\"modified\""), "`modified`, `normal`", GW_SGW, "SACKed segments leave the SGW buffer at once and survive timeouts (seed 004 §IV), or stay until cumulatively acknowledged (RFC 2018). Split TCP's satellite leg is a standard TCP, whose acknowledged bytes alone leave the SGW buffer (as `normal`)."),
    key!("gateway.ack_every", "integer or string", "packets", Dflt::Value("\"tcp\""), "N >= 1, or `tcp`", GW_SGW, "The client acknowledges every N packets in or out of order (seed 004 §V.A.2), or every other in-order and every out-of-order packet."),
    key!("gateway.ack_delay", "duration", DURATION_UNITS, Dflt::Value("\"500ms\""), ">= 0", GW_SGW, "The client acknowledges a partial count after this long (the seed names no timer; RFC 1122's delayed-ACK bound)."),
    key!("gateway.ack_pacing", "boolean", "", Dflt::Value("false"), "", GW_SGW, "Spread the room freed by a satellite ACK over the ACK inter-arrival time toward the server (seed 004 §IV)."),
    key!("gateway.client_buffer", "size", BYTE_UNITS, Dflt::Value("262144"), ">= tcp.mss", GW_SPLIT, "Each client's receive buffer (seed 004 §V.B: 256 KB); its window is counted in segments under `sgw`; under `split_tcp` the client TCP's receive buffer (`e2e` clients take `tcp.receive_buffer`)."),
    key!("gateway.timer_granularity", "duration", DURATION_UNITS, Dflt::Value("\"10ms\""), "> 0", GW_SGW, "Granularity of the satellite leg's retransmission timer (finer than TCP's, seed 004 §III.B)."),
    key!("gateway.initial_rto", "duration", DURATION_UNITS, Dflt::Value("\"1s\""), ">= 0", GW_SGW, "The satellite leg's timeout before its first RTT sample."),
    key!("gateway.timer_copies", "integer", "", Dflt::Value("2"), "1 to 10", GW_SGW, "Copies of the missing segment sent when the satellite timer expires (seed 004 §III.B: two)."),
    key!("gateway.satellite.rate", "rate", RATE_UNITS, Dflt::Required, "> 0", GW, "Rate of the satellite link from the SGW to the clients."),
    key!("gateway.satellite.delay", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0", GW, "One-way delay SGW to clients (seed 004: satellite RTT 500 ms)."),
    key!("gateway.satellite.ber", "number", "", Dflt::Value("0.0"), "[0, 1)", GW, "Bit error rate of the satellite link."),
    key!("gateway.satellite.queue", "size", "B, KB, ..., pkt, bdp", Dflt::None, "holds one packet", GW_QUEUED, "Drop-tail queue onto the satellite link (the sgw scheme's scheduler keeps none); absent: unlimited."),
    key!("gateway.satellite.payload_rate", "rate", RATE_UNITS, Dflt::None, "not accepted", GW, "ATM links only: refused here."),
    key!("gateway.return.rate", "rate", RATE_UNITS, Dflt::Value("\"1Mbps\""), "> 0", GW, "Rate of the return channel from the clients (not given by seed 004; the default does not limit its experiments)."),
    key!("gateway.return.delay", "duration", DURATION_UNITS, Dflt::Computed("gateway.satellite.delay"), ">= 0", GW, "One-way delay of the return channel."),
    key!("gateway.return.ber", "number", "", Dflt::Value("0.0"), "[0, 1)", GW, "Bit error rate of the return channel."),
    key!("gateway.return.queue", "size", "B, KB, ..., pkt, bdp", Dflt::None, "holds one packet", GW, "Drop-tail queue onto the return channel; absent: unlimited."),
    key!("gateway.return.payload_rate", "rate", RATE_UNITS, Dflt::None, "not accepted", GW, "ATM links only: refused here."),
    key!("gateway.servers[].rate", "rate", RATE_UNITS, Dflt::Required, "> 0", GW, "Rate of server i's link to the SGW (one entry per connection)."),
    key!("gateway.servers[].delay", "duration", DURATION_UNITS, Dflt::Value("\"0s\""), ">= 0", GW, "One-way delay server i to SGW (its terrestrial RTT is twice this)."),
    key!("gateway.servers[].ber", "number", "", Dflt::Value("0.0"), "[0, 1)", GW, "Bit error rate of server i's link."),
    key!("gateway.servers[].queue", "size", "B, KB, ..., pkt, bdp", Dflt::None, "holds one packet", GW, "Drop-tail queue onto server i's link (each direction); absent: unlimited."),
    key!("gateway.satellite.from", "string", "", Dflt::None, "not accepted", GW, "Graph links only: refused here."),
    key!("gateway.satellite.to", "string", "", Dflt::None, "not accepted", GW, "Graph links only: refused here."),
    key!("gateway.return.from", "string", "", Dflt::None, "not accepted", GW, "Graph links only: refused here."),
    key!("gateway.return.to", "string", "", Dflt::None, "not accepted", GW, "Graph links only: refused here."),
    key!("gateway.servers[].from", "string", "", Dflt::None, "not accepted", GW, "Graph links only: refused here."),
    key!("gateway.servers[].to", "string", "", Dflt::None, "not accepted", GW, "Graph links only: refused here."),
    key!("gateway.satellite.schedule[].at", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.satellite.schedule[].delay", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.satellite.schedule[].rate", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.satellite.schedule[].ber", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.satellite.schedule[].up", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.return.schedule[].at", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.return.schedule[].delay", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.return.schedule[].rate", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.return.schedule[].ber", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.return.schedule[].up", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.servers[].schedule[].at", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.servers[].schedule[].delay", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.servers[].schedule[].rate", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.servers[].schedule[].ber", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.servers[].schedule[].up", "-", "", Dflt::None, "not accepted", GW, "Moving links are not modelled on a gateway topology: refused here."),
    key!("gateway.servers[].payload_rate", "rate", RATE_UNITS, Dflt::None, "not accepted", GW, "ATM links only: refused here."),
    // [trace]
    key!("trace.flows", "list of integers", "", Dflt::Value("[]"), "flow indices", "", "Flows whose cwnd, ssthresh and srtt are recorded on change."),
    key!("trace.links", "list of strings", "", Dflt::Value("[]"), "link names: bottleneck, bottleneck-rev, src{i}->r1, ... (path: hop{i}, hop{i}-rev)", "", "Links whose queue length is recorded on change."),
    key!("trace.max_points", "integer", "points", Dflt::Value("10000000"), ">= 0", "", "Bound of the time series together (16 bytes a point), shared equally by the traced variables; a full one stops recording and the run warns (docs/traces.md)."),
    key!("trace.packets", "string or table", "", Dflt::Value("\"none\""), "\"all\", \"none\", { flows = [...], links = [...] }", "", "Packet events recorded (sent, queued, dequeued, dropped, received): RunResult.packets, pcapng files (docs/traces.md)."),
    key!("trace.max_packet_events", "integer", "events", Dflt::Value("5000000"), ">= 0", "", "Bound of the packet log (64 bytes an event); a full log, or one whose storage would outgrow its share of the memory available, stops recording and the run warns (docs/traces.md, Bounds)."),
];

/// The concrete keys a row stands for (`links.<link>.rate` -> one per link table).
pub fn expand(key: &str) -> Vec<String> {
    match key.strip_prefix("links.<link>.") {
        Some(rest) => LINK_TABLES.iter().map(|t| format!("{t}.{rest}")).collect(),
        // Every [tcp] key may also be given in a [[tcp.groups]] entry.
        None => match key.strip_prefix("tcp.").filter(|r| !r.starts_with("groups[]")) {
            Some(rest) => vec![key.to_string(), format!("tcp.groups[].{rest}")],
            None => vec![key.to_string()],
        },
    }
}

/// A key renamed or removed since the project began, and what replaces it. Found by diffing the
/// keys of every version of this table and of the raw structs (`git log -p --
/// crates/sattcp-core/src/scenario/schema.rs`, `.../raw.rs`): only one key has left so far.
pub struct Renamed {
    /// The old key, in this table's notation.
    pub old: &'static str,
    /// The key that replaces it, or "" if none does.
    pub new: &'static str,
    /// How an old value is written now.
    pub how: &'static str,
    /// The commit that renamed or removed it.
    pub commit: &'static str,
}

/// Every key renamed or removed, with its replacement (an unknown key's message names it).
pub const RENAMED: &[Renamed] = &[Renamed {
    old: "tcp.clear_backoff_when_acked",
    new: "tcp.rto_backoff_reset",
    how: "true is rto_backoff_reset = \"all_acked\", false is \"sample\"",
    commit: "b1049f3",
}];

/// A problem path in this table's notation: list indices become `[]` ("loss.2.flow" ->
/// "loss[].flow", "tcp.groups.0.mss" -> "tcp.groups[].mss").
fn schema_notation(path: &str) -> String {
    let mut out = String::new();
    for seg in path.split('.') {
        if !out.is_empty() && !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out += "[]";
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out += seg;
        }
    }
    out
}

/// The row of the key at `path` (dotted, list indices as numbers: "tcp.groups.0.mss",
/// "trace.flows.1" for an element of the list `trace.flows`), if the table lists it.
pub fn row(path: &str) -> Option<&'static Key> {
    let key = schema_notation(path);
    let list = key.strip_suffix("[]");
    KEYS.iter().find(|k| expand(k.key).iter().any(|e| *e == key || Some(e.as_str()) == list))
}

/// The path of a key beside `path` (the same table, list entries keeping their index): `path`
/// with its last segment replaced by `name`.
fn sibling(path: &str, name: &str) -> String {
    match path.rsplit_once('.') {
        Some((parent, _)) => format!("{parent}.{name}"),
        None => name.to_string(),
    }
}

/// Most edits between a key as typed and a known key for the known key to be suggested: one per
/// three characters typed, at least one (rustc's rule for "did you mean", `find_best_match_for_name`
/// in rustc_span/src/edit_distance.rs: `max(lookup.len(), 3) / 3`). A wrong suggestion misleads
/// more than none, so this is kept tight.
fn max_edits(typed: &str) -> usize {
    typed.chars().count().max(3) / 3
}

/// The names in `names` within [`max_edits`] of `typed` (optimal string alignment distance, case
/// ignored), the closest only, at most two, in the order of `names`.
pub fn closest<'a, S: AsRef<str>>(typed: &str, names: &'a [S]) -> Vec<&'a str> {
    let typed_lc = typed.to_lowercase();
    let mut close: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (strsim::osa_distance(&typed_lc, &n.as_ref().to_lowercase()), n.as_ref()))
        .filter(|(d, _)| *d <= max_edits(typed))
        .collect();
    // Stable: equally close names keep their order.
    close.sort_by_key(|(d, _)| *d);
    let best = close.first().map(|&(d, _)| d);
    close.into_iter().filter(|&(d, _)| Some(d) == best).take(2).map(|(_, n)| n).collect()
}

/// Known keys close to the unknown key at `path` (dotted, list indices as numbers), best first, at
/// most two, written as the user would write them at that place ("links.path.0.rate"). First the
/// keys valid in the same table within [`max_edits`] (optimal string alignment distance, so a
/// swap of two letters is one edit; case ignored); failing that, the one key elsewhere with
/// exactly this name (`run.mss` -> `tcp.mss`).
pub fn suggestions(path: &str) -> Vec<String> {
    let key = schema_notation(path);
    let (parent, typed) = match key.rsplit_once('.') {
        Some((p, t)) => (p, t),
        None => ("", key.as_str()),
    };
    let typed_lc = typed.to_lowercase();
    let prefix = if parent.is_empty() { String::new() } else { format!("{parent}.") };
    // The names valid at this place, in the table's order.
    let mut names: Vec<String> = Vec::new();
    for k in KEYS.iter().flat_map(|k| expand(k.key)) {
        let Some(rest) = k.strip_prefix(&prefix) else { continue };
        let name = rest.split('.').next().unwrap_or(rest);
        let name = name.strip_suffix("[]").unwrap_or(name);
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    let close = closest(typed, &names);
    if !close.is_empty() {
        return close.iter().map(|n| sibling(path, n)).collect();
    }
    // A key put in the wrong table: the name exists exactly once elsewhere (rows, not their
    // expansions, so `tcp.mss` counts once for [tcp] and [[tcp.groups]]; link rows left out, as
    // they name no one table).
    let elsewhere: Vec<&str> = KEYS
        .iter()
        .map(|k| k.key)
        .filter(|k| !k.contains("[]") && !k.starts_with("links.<link>.") && k.rsplit('.').next().is_some_and(|n| n.to_lowercase() == typed_lc))
        .collect();
    match elsewhere[..] {
        [one] if one != key => vec![one.to_string()],
        _ => Vec::new(),
    }
}

/// The rule of an unknown key's problem: "unknown key", with the key that replaced it if it was
/// renamed ([`RENAMED`]), else with the known keys it is close to ([`suggestions`]), if any.
pub fn unknown_key_rule(path: &str) -> String {
    let key = schema_notation(path);
    if let Some(r) = RENAMED.iter().find(|r| expand(r.old).contains(&key)) {
        let new_name = r.new.rsplit('.').next().unwrap_or(r.new);
        return if r.new.is_empty() {
            format!("unknown key (removed in {}: {})", r.commit, r.how)
        } else {
            format!("unknown key (replaced by {} in {}: {})", sibling(path, new_name), r.commit, r.how)
        };
    }
    let meant = suggestions(path);
    if meant.iter().any(|m| m == path) {
        // Read as nested tables the path is a known key, so a key of the path held a dot: a
        // quoted key (`"tcp.flavor" = ...` at the top level) is one name, not tcp then flavor.
        let (table, name) = path.rsplit_once('.').unwrap_or(("", path));
        return format!("unknown key (a quoted key with a dot is one name: write {path} = ... unquoted, or {name} = ... under [{table}])");
    }
    unknown_key_meaning(&meant)
}

/// "unknown key", with the one or two keys the user most likely meant, if any (the rule's
/// wording wherever a key is unknown: the scenario's keys, `trace.packets`).
pub fn unknown_key_meaning<S: std::fmt::Display>(meant: &[S]) -> String {
    match meant {
        [] => "unknown key".to_string(),
        [a] => format!("unknown key (did you mean {a}?)"),
        [a, b, ..] => format!("unknown key (did you mean {a} or {b}?)"),
    }
}

/// The keys the raw serde structs accept, as dotted paths (`[]` for list entries), found by
/// running their `Deserialize` against a probe that records every field it is asked for.
pub fn accepted_keys() -> Vec<String> {
    let mut out = Vec::new();
    // The probe answers every request, so this cannot fail; a failure would show as a
    // missing key in the tests.
    let _ = <super::raw::RawScenario as serde::Deserialize>::deserialize(Probe { path: String::new(), out: &mut out });
    out
}

/// A `Deserializer` that hands every struct all of its fields, each with a placeholder value,
/// and records the dotted path of every leaf value it is asked for.
struct Probe<'a> {
    path: String,
    out: &'a mut Vec<String>,
}

#[derive(Debug)]
struct ProbeError(String);

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ProbeError {}
impl de::Error for ProbeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ProbeError(msg.to_string())
    }
}

impl Probe<'_> {
    fn leaf(&mut self) {
        // A list of plain values is one key ("trace.flows"), not one per element.
        let p = self.path.strip_suffix("[]").unwrap_or(&self.path).to_string();
        if !self.out.contains(&p) {
            self.out.push(p);
        }
    }
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = ProbeError;

    fn deserialize_any<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, ProbeError> {
        self.leaf();
        v.visit_i64(0)
    }
    fn deserialize_bool<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, ProbeError> {
        self.leaf();
        v.visit_bool(false)
    }
    fn deserialize_i64<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, ProbeError> {
        self.leaf();
        v.visit_i64(0)
    }
    fn deserialize_f64<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, ProbeError> {
        self.leaf();
        v.visit_f64(0.0)
    }
    fn deserialize_str<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, ProbeError> {
        self.leaf();
        v.visit_str("")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ProbeError> {
        self.deserialize_str(v)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ProbeError> {
        v.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ProbeError> {
        v.visit_seq(OneElement { path: format!("{}[]", self.path), out: self.out, done: false })
    }
    fn deserialize_struct<V: Visitor<'de>>(self, _name: &'static str, fields: &'static [&'static str], v: V) -> Result<V::Value, ProbeError> {
        v.visit_map(Fields { prefix: self.path, fields, next: 0, out: self.out })
    }
    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u32 u64 u128 f32 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct map enum identifier ignored_any
    }
}

struct OneElement<'a> {
    path: String,
    out: &'a mut Vec<String>,
    done: bool,
}

impl<'de> SeqAccess<'de> for OneElement<'_> {
    type Error = ProbeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, ProbeError> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        seed.deserialize(Probe { path: self.path.clone(), out: self.out }).map(Some)
    }
}

struct Fields<'a> {
    prefix: String,
    fields: &'static [&'static str],
    next: usize,
    out: &'a mut Vec<String>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = ProbeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ProbeError> {
        match self.fields.get(self.next) {
            Some(f) => seed.deserialize(IntoDeserializer::<ProbeError>::into_deserializer(*f)).map(Some),
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ProbeError> {
        let f = self.fields[self.next];
        self.next += 1;
        let path = if self.prefix.is_empty() { f.to_string() } else { format!("{}.{f}", self.prefix) };
        seed.deserialize(Probe { path, out: self.out })
    }
}

#[cfg(test)]
/// The leaf keys of a resolved scenario in the schema's notation (`loss[].flow`).
fn leaf_keys(v: &serde_json::Value, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaf_keys(x, &p, out);
            }
        }
        // An empty list of tables (`loss = []`) has no keys; an empty list of values is one.
        serde_json::Value::Array(a) if a.is_empty() && !KEYS.iter().any(|k| expand(k.key).contains(&prefix.to_string())) => {}
        serde_json::Value::Array(a) if a.iter().any(|x| x.is_object()) => {
            for x in a {
                leaf_keys(x, &format!("{prefix}[]"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::resolve::resolve;
    use std::collections::BTreeSet;

    const WHERE: &str = "crates/sattcp-core/src/scenario/schema.rs (KEYS)";
    const REGEN: &str = "then regenerate the reference: `.venv/bin/python scripts/gen_scenario_doc.py` (writes docs/scenario.md)";

    fn documented() -> BTreeSet<String> {
        KEYS.iter().flat_map(|k| expand(k.key)).collect()
    }

    #[test]
    fn every_accepted_key_is_documented_and_every_documented_key_accepted() {
        let accepted: BTreeSet<String> = accepted_keys().into_iter().collect();
        let documented = documented();
        let missing: Vec<_> = accepted.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&accepted).collect();
        assert!(
            missing.is_empty(),
            "the scenario accepts keys that {WHERE} does not list: {missing:?}.\nAdd one row per key to KEYS, e.g.\n    key!(\"{}\", \"type\", \"unit\", Dflt::Value(\"default as TOML\"), \"allowed values\", \"when it applies\", \"one-line meaning\"),\n(keys of links.access/bottleneck/path[] are written once as links.<link>.KEY); {REGEN}.",
            missing[0]
        );
        assert!(extra.is_empty(), "{WHERE} lists keys the scenario does not accept (raw.rs): {extra:?}. Remove their rows, {REGEN}.");
        let mut seen = BTreeSet::new();
        for k in KEYS {
            assert!(seen.insert(k.key), "{WHERE}: {} is listed twice", k.key);
            assert!(!k.meaning.is_empty() && !k.ty.is_empty(), "{WHERE}: {} needs a type and a meaning", k.key);
        }
    }

    #[test]
    fn the_resolved_scenario_carries_every_key_with_a_default() {
        let mut carried = BTreeSet::new();
        for (_, r) in crate::scenario::resolve::tests::variants() {
            leaf_keys(&r.to_json(), "", &mut carried);
        }
        for k in KEYS.iter().filter(|k| k.default != Dflt::None) {
            for key in expand(k.key) {
                assert!(
                    carried.contains(&key),
                    "{key} has a default in {WHERE} ({:?}) but no resolved scenario carries it: fill it in `fill_defaults` (crates/sattcp-core/src/scenario/resolve.rs), mark it Dflt::None if its absence is its meaning, or add a scenario using it to resolve::tests::variants()",
                    k.default
                );
            }
        }
        // And nothing the schema does not know.
        let documented = documented();
        let unknown: Vec<_> = carried.difference(&documented).collect();
        assert!(unknown.is_empty(), "the resolved scenario has keys {WHERE} does not list: {unknown:?}");
    }

    /// The defaults written in the table are those validation applies: a scenario with only
    /// the required keys, resolved, has each default's value.
    #[test]
    fn documented_defaults_are_the_applied_ones() {
        let base = "[links.access]\nrate = \"10Mbps\"\n[links.bottleneck]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n";
        let minimal = [
            base.to_string(),
            format!("{base}[switch]\nkind = \"atm\"\n"),
            format!("{base}[app]\nkind = \"www\"\n"),
            format!("{base}[app]\nkind = \"pingpong\"\n"),
            format!("{base}[app]\nkind = \"transfer\"\nbytes = 1000\n[[loss]]\nsegment = 0\n"),
            "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n".to_string(),
            "[run]\nduration = \"10s\"\n[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"1Mbps\"\n[constellation]\nshell = { altitude_km = 550, inclination_deg = 53, planes = 72, per_plane = 22 }\nfrom = { lat = 48.86, lon = 2.35 }\nto = { lat = 55.76, lon = 37.62 }\nrelays = [{ lat = 52.52, lon = 13.40 }]\n".to_string(),
            "[topology]\nkind = \"gateway\"\n[gateway]\nbuffer = \"41KB\"\n[gateway.satellite]\nrate = \"600kbps\"\n[[gateway.servers]]\nrate = \"1Mbps\"\n".to_string(),
        ];
        let mut checked = BTreeSet::new();
        for text in &minimal {
            let r = resolve(text, &[], None).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let json = r.to_json();
            let written = serde_json::to_value(text.parse::<toml::Table>().unwrap()).unwrap();
            for k in KEYS {
                let Dflt::Value(d) = k.default else { continue };
                for key in expand(k.key) {
                    let Some(got) = lookup(&json, &key) else { continue };
                    // Keys written in the minimal scenario are not defaults.
                    if lookup(&written, &key).is_some() {
                        continue;
                    }
                    let want = crate::scenario::parse_override_value(d);
                    let want = serde_json::to_value(&want).unwrap();
                    assert_eq!(got, &want, "{WHERE}: the default of {key} is written {d}, validation applies {got}");
                    checked.insert(key);
                }
            }
        }
        for k in KEYS.iter().filter(|k| matches!(k.default, Dflt::Value(_))) {
            assert!(expand(k.key).iter().any(|key| checked.contains(key)), "the default of {} was never checked: add a minimal scenario where it applies", k.key);
        }
    }

    const GEO: &str = "[links.access]\nrate = \"10Mbps\"\n[links.bottleneck]\nrate = \"1Mbps\"\ndelay = \"250ms\"\n";

    /// Every problem of `text` with `overrides`, as the user reads it ("path: rule, got VALUE").
    #[track_caller]
    fn shown(text: &str, overrides: &[(&str, &str)]) -> Vec<String> {
        let o: Vec<(String, toml::Value)> = overrides.iter().map(|(k, v)| (k.to_string(), crate::scenario::parse_override_value(v))).collect();
        match crate::scenario::load(text, &o, None) {
            Ok(_) => panic!("{text} {overrides:?} was accepted"),
            Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn a_typo_in_a_key_of_a_top_level_table_names_the_key_meant() {
        assert_eq!(shown(&format!("{GEO}[tcp]\nflavour = \"sack\"\n"), &[]), ["tcp.flavour: unknown key (did you mean tcp.flavor?)"]);
        // A quoted dotted key at the top level: one name, which the path shows as tcp.flavor
        // (it read "did you mean tcp.flavor?").
        assert_eq!(shown(&format!("\"tcp.flavor\" = \"sack\"\n{GEO}"), &[]),
                   ["tcp.flavor: unknown key (a quoted key with a dot is one name: write tcp.flavor = ... unquoted, or flavor = ... under [tcp])"]);
        assert_eq!(shown(GEO, &[("tcp.flavour", "sack")]), ["tcp.flavour: unknown key (did you mean tcp.flavor?)"]);
        // Two letters swapped are one edit; case is ignored.
        assert_eq!(shown(GEO, &[("tcp.initail_cwnd", "2")]), ["tcp.initail_cwnd: unknown key (did you mean tcp.initial_cwnd?)"]);
        assert_eq!(shown(GEO, &[("switch.r", "0.5")]), ["switch.r: unknown key (did you mean switch.R?)"]);
        // A misspelt table, and the two keys equally close.
        assert_eq!(shown(&format!("{GEO}[tpc]\nmss = 512\n"), &[]), ["tpc: unknown key (did you mean tcp?)"]);
        assert_eq!(shown(GEO, &[("app.repeat", "3")]), ["app.repeat: unknown key (did you mean app.repeats or app.nrepeat?)"]);
        // Nothing close in its table, but the name is a key of another one.
        assert_eq!(shown(GEO, &[("run.mss", "512")]), ["run.mss: unknown key (did you mean tcp.mss?)"]);
    }

    #[test]
    fn a_typo_in_a_nested_table_suggests_among_the_keys_of_that_table() {
        assert_eq!(shown(GEO, &[("links.bottleneck.rat", "\"2Mbps\"")]), ["links.bottleneck.rat: unknown key (did you mean links.bottleneck.rate?)"]);
        assert_eq!(shown(GEO, &[("links.access.dealy", "\"1ms\"")]), ["links.access.dealy: unknown key (did you mean links.access.delay?)"]);
        assert_eq!(shown(GEO, &[("links.botleneck.rate", "\"2Mbps\"")]), ["links.botleneck: unknown key (did you mean links.bottleneck?)"]);
        assert_eq!(shown(GEO, &[("tcp.ns2.bugfix", "\"on\"")]), ["tcp.ns2.bugfix: unknown key (did you mean tcp.ns2.bug_fix?)"]);
        // `rate` is a key of the links, not of [tcp]: nothing is suggested there.
        assert_eq!(shown(GEO, &[("tcp.rat", "1")]), ["tcp.rat: unknown key"]);
    }

    #[test]
    fn a_typo_in_a_list_entry_keeps_the_entry_index() {
        let text = format!("{GEO}[app]\nkind = \"transfer\"\nbytes = 10000\n[[loss]]\nsegment = 1\n[[loss]]\nsegmnt = 2\n");
        assert_eq!(shown(&text, &[]), ["loss.1.segmnt: unknown key (did you mean loss.1.segment?)", "loss.1: needs offset (data byte offset) or segment (segment index)"]);
        let text = format!("{GEO}[topology]\npairs = 2\n[[tcp.groups]]\nflows = [1]\nflavour = \"sack\"\n");
        assert_eq!(shown(&text, &[]), ["tcp.groups.0.flavour: unknown key (did you mean tcp.groups.0.flavor?)"]);
        let text = "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"1Mbps\"\ndelay = \"100ms\"\n[[links.path]]\nrate = \"1Mbps\"\ndelya = \"1ms\"\n";
        assert_eq!(shown(text, &[]), ["links.path.1.delya: unknown key (did you mean links.path.1.delay?)"]);
    }

    #[test]
    fn a_renamed_key_names_its_replacement_and_the_commit() {
        assert_eq!(
            shown(GEO, &[("tcp.clear_backoff_when_acked", "true")]),
            ["tcp.clear_backoff_when_acked: unknown key (replaced by tcp.rto_backoff_reset in b1049f3: true is rto_backoff_reset = \"all_acked\", false is \"sample\")"]
        );
        let text = format!("{GEO}[topology]\npairs = 2\n[[tcp.groups]]\nflows = [1]\nclear_backoff_when_acked = false\n");
        assert_eq!(
            shown(&text, &[]),
            ["tcp.groups.0.clear_backoff_when_acked: unknown key (replaced by tcp.groups.0.rto_backoff_reset in b1049f3: true is rto_backoff_reset = \"all_acked\", false is \"sample\")"]
        );
        // Each replacement is a key of today's table, each old key is not.
        let documented = documented();
        for r in RENAMED {
            assert!(!documented.contains(r.old), "{} is renamed but still listed", r.old);
            assert!(r.new.is_empty() || documented.contains(r.new), "{} replaces {} but is not a key", r.new, r.old);
        }
    }

    #[test]
    fn a_key_far_from_every_key_gets_no_suggestion() {
        assert_eq!(shown(GEO, &[("tcp.colour", "1")]), ["tcp.colour: unknown key"]);
        assert_eq!(shown(&format!("colour = 1\n{GEO}"), &[]), ["colour: unknown key"]);
        assert_eq!(shown(GEO, &[("links.bottleneck.bandwidth", "\"2Mbps\"")]), ["links.bottleneck.bandwidth: unknown key"]);
        assert_eq!(shown(GEO, &[("constellation.bogus", "1")]).first().map(String::as_str), Some("constellation.bogus: unknown key"));
        // Three edits in a six-letter name are more than the two allowed.
        assert_eq!(shown(GEO, &[("tcp.flvr", "\"sack\"")]), ["tcp.flvr: unknown key"]);
    }

    fn lookup<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
        let mut v = v;
        for part in key.split('.') {
            v = match part.strip_suffix("[]") {
                Some(name) => v.get(name)?.get(0)?,
                None => v.get(part)?,
            };
        }
        Some(v)
    }
}
