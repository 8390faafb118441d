//! The run's result: per-flow and per-link figures, the study's metrics, warnings.

use super::World;
use crate::app::Role;
use crate::metrics::fairness::study_metrics;
use crate::app::AppReport;
use crate::metrics::result::{FlowResult, LinkResult, RunResult, Summary};
use crate::net::hop::{Hop, HopId, Via};
use crate::net::link::Link;
use crate::net::packet::NodeId;
use crate::time::SimTime;

fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A link's figures at the end of the run (`end`).
pub(crate) fn link_result(l: &Link, end: SimTime) -> LinkResult {
    LinkResult {
            link: l.name.clone(),
            from: l.from,
            to: l.to,
            rate_bps: l.rate.as_bps(),
            delay_s: l.delay.as_secs_f64(),
            utilization: l.utilization(end),
            packets: l.stats.packets,
            bytes: l.stats.bytes,
            drops_queue_full: l.stats.drops_queue_full,
            drops_corrupted: l.stats.drops_corrupted,
            drops_scripted: l.stats.drops_scripted,
            peak_queue_packets: Some(l.stats.peak_queue_packets),
            peak_queue_bytes: l.stats.peak_queue_bytes,
            mean_queue_bytes: l.mean_queue_bytes(end),
            drops_by_reason: [("queue_full", l.stats.drops_queue_full), ("corrupted", l.stats.drops_corrupted), ("scripted", l.stats.drops_scripted)]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            cells: None,
            cells_arrived: None,
            cells_dropped: None,
            cells_corrupted: None,
            cells_buffered: None,
            peak_queue_cells: None,
            mean_queue_cells: None,
            frames_discarded: None,
            reordered: None,
    }
}

/// Whether data sent from `src` to `dst` crosses hop `target`, following the routes (which do
/// not change during a run). Only link hops are followed, those of a graph or a path; at any
/// other hop (an ATM switch port, a gateway's own model) it answers yes, as it does without a
/// route: on those topologies every data flow crosses the bottleneck.
fn crosses(w: &World, src: NodeId, dst: NodeId, target: HopId) -> bool {
    let mut node = src;
    for _ in 0..=w.nodes.len() {
        if node == dst {
            return false;
        }
        let via = w.nodes[node as usize].route(dst);
        if via == Via::NONE || via.hop == target {
            return true;
        }
        let hop = &w.hops[via.hop as usize];
        match hop {
            Hop::Link(_) | Hop::Moving(_) => node = w.links[hop.out_link() as usize].to,
            _ => return true,
        }
    }
    true
}

/// Closes the statistics at the end of the run and assembles the result. `capacity_bps` is C,
/// the bottleneck hop's maximum TCP goodput (`Hop::capacity_bps`).
pub(super) fn result(mut w: World, name: String, seed: u64, events: u64, digest: u64, capacity_bps: f64, reports: Vec<AppReport>) -> RunResult {
    let end = w.duration;
    let secs = end.as_secs_f64();
    for l in &mut w.links {
        l.finish(end);
        if let Some(tr) = l.trace.take() {
            w.traces.insert(format!("link/{}/queue_packets", l.name), tr);
        }
    }
    // Traces that reached their bounds (docs/traces.md) say so in the warnings.
    let mut packets = w.tap.take().and_then(|t| t.into_packet_log());
    let mut trace_warnings: Vec<String> = crate::metrics::result::traces_warning(w.traces.iter(), w.max_points).into_iter().collect();
    if let Some(log) = &mut packets {
        log.finish(end);
        trace_warnings.extend(log.warning());
    }
    let mut flows: Vec<FlowResult> = w
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let s = f.sender.stats();
            let delivered = f.receiver.delivered();
            FlowResult {
                flow: i as u32,
                role: f.role.name(),
                fair_share_bps: None,
                src: f.src,
                dst: f.dst,
                scheduled_bytes: f.scheduled,
                bytes_sent: s.bytes_sent,
                bytes_retransmitted: s.bytes_retransmitted,
                segments_sent: s.segments_sent,
                segments_retransmitted: s.segments_retransmitted,
                timeouts: s.timeouts,
                fast_retransmits: s.fast_retransmits,
                loss_probes: f.sender.loss_probes(),
                loss_probe_recoveries: f.sender.loss_probe_recoveries(),
                delivered_bytes: delivered,
                throughput_bps: delivered as f64 * 8.0 / secs,
                duplicate_bytes: f.receiver.stats().duplicate_bytes,
                completed_at_s: f.completed_at.map(|t| t.as_secs_f64()),
                final_cwnd: f.sender.cwnd(),
                final_ssthresh: f.sender.ssthresh(),
                final_srtt_s: f.sender.srtt().map(|t| t.as_secs_f64()),
            }
        })
        .collect();
    for h in &mut w.hops {
        h.close(end, &mut w.links);
    }
    let mut links: Vec<LinkResult> = w.links.iter().map(|l| link_result(l, end)).collect();
    // Hops that keep their own figures (ATM ports, in cells) write them into their output
    // link's result.
    for h in &w.hops {
        h.report(&mut links[h.out_link() as usize], end);
    }
    // Applications that carry traffic on their own model of a link replace its figures, add
    // their series, sections, and end-to-end data.
    let mut app_data: Vec<(u64, u64)> = Vec::new();
    let mut sections = std::collections::BTreeMap::new();
    for r in reports {
        for lr in r.links {
            match links.iter_mut().find(|l| l.link == lr.link) {
                Some(l) => *l = lr,
                None => links.push(lr),
            }
        }
        w.traces.extend(r.traces);
        app_data.extend(r.data);
        trace_warnings.extend(r.warnings);
        if let Some((k, v)) = r.section {
            sections.insert(k, v);
        }
    }
    // The study's metrics (seed 000 §4.3) over the data flows that cross the bottleneck: x_i
    // their throughputs, S_i what their sources scheduled per second of simulated time. (On a
    // graph a flow may not cross it; counted, its goodput made the efficiency of
    // scenarios/graph-diamond.toml 1.99.)
    let data: Vec<usize> = (0..flows.len()).filter(|&i| w.flows[i].role == Role::Data && crosses(&w, w.flows[i].src, w.flows[i].dst, w.bottleneck)).collect();
    let mut tputs: Vec<f64> = data.iter().map(|&i| flows[i].throughput_bps).collect();
    let mut sched: Vec<f64> = data.iter().map(|&i| flows[i].scheduled_bytes as f64 * 8.0 / secs).collect();
    tputs.extend(app_data.iter().map(|&(d, _)| d as f64 * 8.0 / secs));
    sched.extend(app_data.iter().map(|&(_, s)| s as f64 * 8.0 / secs));
    let m = study_metrics(capacity_bps, &tputs, &sched);
    for (k, &i) in data.iter().enumerate() {
        flows[i].fair_share_bps = Some(m.shares[k]);
    }
    let total: f64 = tputs.iter().sum();
    let summary = Summary {
        flows: tputs.len() as u32,
        sim_time_s: secs,
        total_throughput_bps: total,
        capacity_bps,
        efficiency: m.efficiency,
        fairness: m.fairness,
        jain_fairness: m.jain,
        timeouts: flows.iter().map(|f| f.timeouts).sum(),
        fast_retransmits: flows.iter().map(|f| f.fast_retransmits).sum(),
        bytes_retransmitted: flows.iter().map(|f| f.bytes_retransmitted).sum(),
        drops_queue_full: links.iter().map(|l| l.drops_queue_full).sum(),
        drops_corrupted: links.iter().map(|l| l.drops_corrupted).sum(),
    };
    RunResult {
        sattcp_version: env!("CARGO_PKG_VERSION"),
        name,
        seed,
        events,
        digest: format!("{digest:016x}"),
        summary,
        flows,
        links,
        traces: w.traces,
        sections,
        warnings: w
            .scenario_warnings
            .iter()
            .cloned()
            .chain(w.losses.iter().chain(w.link_losses.iter().map(|(_, l)| l)).map(|l| {
                let at = l.at.as_ref().map(|n| format!(" through link {n}")).unwrap_or_default();
                format!("scripted loss never happened: flow {} did not send data offset {} a {} time (transmission {}){at}", l.flow, l.offset, ordinal(l.transmission as u64 + 1), l.transmission)
            }))
            .chain(trace_warnings)
            .collect(),
        packets,
    }
}
