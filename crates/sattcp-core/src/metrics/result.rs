//! What a run returns: per-flow and per-link tables, a summary, traces, and the identity of
//! the run (scenario, seed, events, digest). Serialised as one JSON document (README, "--json").

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    pub flow: u32,
    /// "data" (the flows the study's metrics cover) or "request" (WWW requests).
    pub role: &'static str,
    pub src: u32,
    pub dst: u32,
    /// Bytes the application handed to TCP (for a bulk source: what TCP could take).
    pub scheduled_bytes: u64,
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    pub segments_sent: u64,
    pub segments_retransmitted: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Tail loss probes sent, and the losses they repaired (Linux's TCPLossProbes and
    /// TCPLossProbeRecovery; 0 for every flow without the probe, which only BBR's senders
    /// have: docs/tcp.md, "Tail loss probe (BBR)").
    pub loss_probes: u64,
    pub loss_probe_recoveries: u64,
    /// Highest in-order data byte received by the receiver (seed 000 §4.3).
    pub delivered_bytes: u64,
    /// delivered_bytes x 8 / simulated time.
    pub throughput_bps: f64,
    /// Bytes that reached the receiver again after already being received.
    pub duplicate_bytes: u64,
    /// When a fixed-size transfer was completely delivered (seconds), if it was.
    pub completed_at_s: Option<f64>,
    pub final_cwnd: u64,
    pub final_ssthresh: u64,
    pub final_srtt_s: Option<f64>,
    /// Max-min fair share e_i of a data flow (seed 000 §4.3).
    pub fair_share_bps: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkResult {
    pub link: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_s: f64,
    /// Fraction of the simulated time the transmitter was busy.
    pub utilization: f64,
    pub packets: u64,
    pub bytes: u64,
    pub drops_queue_full: u64,
    pub drops_corrupted: u64,
    pub drops_scripted: u64,
    /// Peak of the packets waiting (None on ATM links, whose buffers hold cells).
    pub peak_queue_packets: Option<u64>,
    pub peak_queue_bytes: u64,
    /// Time-weighted mean of the bytes waiting.
    pub mean_queue_bytes: f64,
    /// Losses by named reason. IP links, in packets: queue_full, corrupted, scripted. ATM
    /// links, in cells: cells_buffer_full, cells_ppd, cells_epd, cells_selective_drop,
    /// cells_fba, cells_corrupted.
    pub drops_by_reason: BTreeMap<String, u64>,
    // ATM links only (None elsewhere). On them `packets`, `drops_queue_full` and
    // `drops_corrupted` count frames (IP packets): frames that left the switch port, frames
    // dropped whole or cut short at the port, frames discarded at reassembly for a corrupted
    // cell; `bytes`, `peak_queue_bytes` and `mean_queue_bytes` count 53-byte cells.
    /// Cells sent on the link.
    pub cells: Option<u64>,
    /// Cells that arrived at the switch port feeding the link (= sent + dropped + buffered).
    pub cells_arrived: Option<u64>,
    pub cells_dropped: Option<u64>,
    /// Cells corrupted by bit errors on the link.
    pub cells_corrupted: Option<u64>,
    /// Cells still buffered at the end of the run.
    pub cells_buffered: Option<u64>,
    pub peak_queue_cells: Option<u64>,
    pub mean_queue_cells: Option<f64>,
    /// Frames discarded at reassembly (a cell lost or corrupted).
    pub frames_discarded: Option<u64>,
    /// Moving links only (None elsewhere: a link of fixed delay delivers in order): packets
    /// that arrived before a packet sent earlier on the link (a fall in delay, `net::schedule`).
    pub reordered: Option<u64>,
}

/// Default bound of the time-series traces (`trace.max_points`): 10 million points of 16 bytes
/// (t, v) is 160 MB, shared equally by the traced variables.
pub const DEFAULT_MAX_POINTS: u64 = 10_000_000;

/// A variable recorded on change: instants (seconds) and values, at most `cap` points (past
/// them the trace stops and remembers when).
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    pub t: Vec<f64>,
    pub v: Vec<f64>,
    #[serde(skip)]
    pub cap: usize,
    /// When a change first found the trace full.
    #[serde(skip)]
    pub stopped_at: Option<f64>,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::with_cap(usize::MAX)
    }
}

impl Trace {
    pub fn with_cap(cap: usize) -> Self {
        Trace { t: Vec::new(), v: Vec::new(), cap, stopped_at: None }
    }

    /// Appends (t, v) whatever the last value (samples, where equal consecutive values are
    /// data), unless the trace is full.
    #[inline]
    pub fn push_sample(&mut self, t: f64, v: f64) {
        if self.t.len() >= self.cap {
            self.stopped_at.get_or_insert(t);
            return;
        }
        self.t.push(t);
        self.v.push(v);
    }

    /// Appends (t, v) if v differs from the last value recorded and the trace is not full.
    #[inline]
    pub fn record(&mut self, t: f64, v: f64) {
        if self.v.last() != Some(&v) {
            if self.t.len() >= self.cap {
                self.stopped_at.get_or_insert(t);
                return;
            }
            self.t.push(t);
            self.v.push(v);
        }
    }
}

/// The run's warning when traces filled up: `traces` by name, `max_points` shared by them.
pub fn traces_warning<'a>(traces: impl Iterator<Item = (&'a String, &'a Trace)>, max_points: u64) -> Option<String> {
    let full: Vec<(&String, f64, usize)> = traces.filter_map(|(k, t)| t.stopped_at.map(|s| (k, s, t.cap))).collect();
    let first = full.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(format!(
        "{} time-series trace(s) stopped recording, the first ({}) at {:.6} s: each traced variable holds at most {} points, its share of trace.max_points = {max_points}",
        full.len(),
        first.0,
        first.1,
        first.2
    ))
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub flows: u32,
    pub sim_time_s: f64,
    /// Sum of the data flows' throughputs.
    pub total_throughput_bps: f64,
    /// Maximum TCP goodput of the bottleneck after header overheads: rate x MSS / (MSS + 40)
    /// for IP links.
    pub capacity_bps: f64,
    /// total_throughput_bps / capacity_bps.
    pub efficiency: f64,
    /// F = (sum x_i/e_i)^2 / (N sum (x_i/e_i)^2), e_i the max-min fair shares (seed 000 §4.3);
    /// sources that scheduled nothing are left out (None if none is left).
    pub fairness: Option<f64>,
    /// Jain's fairness index of the data flows' throughputs.
    pub jain_fairness: Option<f64>,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub bytes_retransmitted: u64,
    pub drops_queue_full: u64,
    pub drops_corrupted: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub sattcp_version: &'static str,
    pub name: String,
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Digest of the event sequence (hex): equal digests mean identical runs.
    pub digest: String,
    pub summary: Summary,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub traces: BTreeMap<String, Trace>,
    /// Sections that applications add at the top level of the result (`gateway` for seed
    /// 004's systems: per-connection end-to-end figures).
    #[serde(flatten)]
    pub sections: BTreeMap<String, serde_json::Value>,
    /// Things the user asked for that did not happen (e.g. a scripted loss that never matched
    /// a segment). The CLI prints them on stderr.
    pub warnings: Vec<String>,
    /// The packet trace (`trace.packets`), finished: not part of the JSON document (it goes to
    /// Python as columns and to pcapng files, `trace::pcapng`).
    #[serde(skip)]
    pub packets: Option<crate::trace::PacketLog>,
}
