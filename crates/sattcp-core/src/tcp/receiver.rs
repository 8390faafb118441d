//! The data-receiving end of a half-connection. PLACEHOLDER: cumulative ACKs, no SACK, used only
//! until the real receiver lands.

use super::config::TcpConfig;
use crate::net::packet::{flags, Segment};
use crate::time::SimTime;

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ReceiverStats {
    pub segments_received: u64,
    /// Payload bytes that arrived again after already being received.
    pub duplicate_bytes: u64,
}

pub struct TcpReceiver {
    cfg: TcpConfig,
    rcv_nxt: u64,
    stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(cfg: TcpConfig) -> Self {
        TcpReceiver { cfg, rcv_nxt: 0, stats: ReceiverStats::default() }
    }
    pub fn on_segment(&mut self, _now: SimTime, seg: &Segment, out: &mut Vec<Segment>) {
        if seg.is_syn() {
            self.rcv_nxt = 1;
            out.push(Segment { seq: 0, ack: 1, flags: flags::SYN | flags::ACK, window: self.cfg.rcv_window_field, wscale: Some(self.cfg.window_scale), ..Default::default() });
            return;
        }
        self.stats.segments_received += 1;
        if seg.seq == self.rcv_nxt {
            self.rcv_nxt += seg.len as u64;
        } else if seg.seq < self.rcv_nxt {
            self.stats.duplicate_bytes += seg.len as u64;
        }
        out.push(Segment { seq: 1, ack: self.rcv_nxt, flags: flags::ACK, window: self.cfg.rcv_window_field, ..Default::default() });
    }
    pub fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Segment>) {}
    pub fn poll_at(&self) -> Option<SimTime> {
        None
    }
    /// Data bytes delivered in order to the application (highest in-order byte received).
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt.saturating_sub(1)
    }
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
}
