//! The data-sending end of a half-connection. PLACEHOLDER: a fixed-window go-back-N sender
//! used only until the real sender (RTO, recovery, congestion control) lands.

use super::config::TcpConfig;
use crate::net::packet::{flags, Segment};
use crate::time::SimTime;

/// Counters of one sender.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SenderStats {
    /// Payload bytes sent, first transmissions and retransmissions.
    pub bytes_sent: u64,
    /// Payload bytes retransmitted.
    pub bytes_retransmitted: u64,
    pub segments_sent: u64,
    pub segments_retransmitted: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
}

pub struct TcpSender {
    cfg: TcpConfig,
    established: bool,
    offered: u64,
    snd_una: u64,
    snd_nxt: u64,
    rto_at: Option<SimTime>,
    stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: TcpConfig) -> Self {
        TcpSender { cfg, established: false, offered: 0, snd_una: 1, snd_nxt: 1, rto_at: None, stats: SenderStats::default() }
    }
    /// Opens the connection: emits the SYN.
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        out.push(Segment { seq: 0, flags: flags::SYN, window: self.cfg.rcv_window_field, wscale: Some(self.cfg.window_scale), sack_permitted: self.cfg.sack, ..Default::default() });
        self.rto_at = Some(now + self.cfg.initial_rto);
    }
    /// The application offers `bytes` more bytes.
    pub fn app_send(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        self.offered = self.offered.saturating_add(bytes);
        self.transmit(now, out);
    }
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment, out: &mut Vec<Segment>) {
        if seg.is_syn() {
            self.established = true;
        } else if seg.ack > self.snd_una {
            self.snd_una = seg.ack;
        }
        self.rto_at = if self.snd_una < self.snd_nxt { Some(now + self.cfg.initial_rto) } else { None };
        self.transmit(now, out);
    }
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.rto_at.is_some_and(|t| t <= now) {
            self.stats.timeouts += 1;
            self.snd_nxt = self.snd_una;
            self.rto_at = None;
            self.transmit(now, out);
        }
    }
    fn transmit(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if !self.established {
            return;
        }
        let wnd = self.cfg.initial_ssthresh.min(self.cfg.rcv_window());
        let end = 1 + self.offered;
        while self.snd_nxt < end && self.snd_nxt - self.snd_una < wnd {
            let len = (end - self.snd_nxt).min(self.cfg.mss as u64) as u32;
            out.push(Segment { seq: self.snd_nxt, ack: 1, len, flags: flags::ACK, window: self.cfg.rcv_window_field, ..Default::default() });
            self.stats.bytes_sent += len as u64;
            self.stats.segments_sent += 1;
            self.snd_nxt += len as u64;
            if self.rto_at.is_none() {
                self.rto_at = Some(now + self.cfg.initial_rto);
            }
        }
    }
    pub fn poll_at(&self) -> Option<SimTime> {
        self.rto_at
    }
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    pub fn cwnd(&self) -> u64 {
        self.cfg.initial_ssthresh
    }
    pub fn ssthresh(&self) -> u64 {
        self.cfg.initial_ssthresh
    }
    pub fn srtt(&self) -> Option<SimTime> {
        None
    }
    /// Data bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una - 1
    }
    /// True when every byte offered so far has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una == 1 + self.offered
    }
}
