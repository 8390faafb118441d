//! A tiny deterministic network for TCP tests, independent of the engine: one sender and one
//! receiver joined by a bottleneck (rate, FIFO without limit, one-way propagation delay) for
//! data and a delay line for ACKs, with a scripted drop function that sees every data segment
//! (by data offset and transmission count) before it enters the bottleneck.
//!
//! It records a trace of the sender's congestion state (a [`Snap`] at every change of state,
//! partial ACK, timeout) and every data segment's fate, and checks that the receiver delivers
//! every byte exactly once and in order.
//!
//! With a finite receive buffer (`TcpConfig::rcv_buf`) the receiving application reads
//! everything available after each receiver event, except while paused by
//! [`Net::pause_reading`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::recovery::CongState;
use super::{TcpConfig, TcpReceiver, TcpSender};
use crate::net::packet::Segment;
use crate::time::{Rate, SimTime};

#[derive(Copy, Clone, Debug)]
pub struct Path {
    pub rate: Rate,
    /// One-way propagation delay (each direction).
    pub delay: SimTime,
    /// Drop-tail limit of the bottleneck FIFO in packets (the one in service included);
    /// `None`: unlimited.
    pub queue_limit: Option<usize>,
}

impl Path {
    /// Seed 000's GEO path: a 45 Mbps T3 and 275 ms one way (550 ms RTT).
    pub fn geo() -> Self {
        Path { rate: Rate::mbps(45), delay: SimTime::from_millis(275), queue_limit: None }
    }
    pub fn rtt(&self) -> SimTime {
        self.delay.times(2)
    }
}

/// A data segment's identity as a drop script sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SegId {
    /// Data offset of the first byte (seq - 1).
    pub offset: u64,
    pub len: u32,
    /// 0 = first transmission.
    pub tx_count: u16,
}

/// What the sender looked like at a notable instant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Snap {
    pub t: SimTime,
    pub what: &'static str,
    pub state: CongState,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub snd_una: u64,
}

#[derive(Clone, Debug)]
enum Ev {
    Data(Segment),
    Ack(Segment),
    SenderTimer,
    ReceiverTimer,
    /// The receiving application resumes reading.
    AppRead,
}

pub struct Net {
    pub now: SimTime,
    pub path: Path,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    drop: Box<dyn FnMut(SegId) -> bool>,
    events: BinaryHeap<Reverse<(SimTime, u64, usize)>>,
    payloads: Vec<Option<Ev>>,
    seq: u64,
    link_free_at: SimTime,
    /// Finish times of the packets in the bottleneck FIFO.
    queue: std::collections::VecDeque<SimTime>,
    /// Data segments dropped by the FIFO limit.
    pub queue_drops: u64,
    sender_timer: Option<SimTime>,
    receiver_timer: Option<SimTime>,
    /// Every data segment sent: (time, id), and whether it was dropped.
    pub sent: Vec<(SimTime, SegId, bool)>,
    pub snaps: Vec<Snap>,
    /// ACKs as the receiver emitted them.
    pub acks: Vec<(SimTime, Segment)>,
    /// (time, cwnd, ssthresh) at every change, for plots.
    pub cwnd_trace: Vec<(SimTime, u64, u64)>,
    delivered_to: u64,
    /// Indices (in emission order, the SYN-ACK is 0) of receiver segments to drop.
    pub drop_acks: Vec<usize>,
    /// When the receiver's in-order delivery passed each offset, recorded lazily.
    pub deliveries: Vec<(SimTime, u64)>,
    /// The receiving application does not read during `[from, until)`.
    pub read_pause: Option<(SimTime, SimTime)>,
}

impl Net {
    pub fn new(path: Path, cfg: TcpConfig, drop: impl FnMut(SegId) -> bool + 'static) -> Self {
        Net {
            now: SimTime::ZERO,
            path,
            sender: TcpSender::new(cfg.clone()),
            receiver: TcpReceiver::new(cfg),
            drop: Box::new(drop),
            events: BinaryHeap::new(),
            payloads: Vec::new(),
            seq: 0,
            link_free_at: SimTime::ZERO,
            queue: Default::default(),
            queue_drops: 0,
            sender_timer: None,
            receiver_timer: None,
            sent: Vec::new(),
            snaps: Vec::new(),
            acks: Vec::new(),
            cwnd_trace: Vec::new(),
            delivered_to: 0,
            drop_acks: Vec::new(),
            deliveries: Vec::new(),
            read_pause: None,
        }
    }

    /// The receiving application stops reading at `from` and resumes at `until` (finite
    /// receive buffer only).
    pub fn pause_reading(&mut self, from: SimTime, until: SimTime) {
        self.read_pause = Some((from, until));
        self.push(until, Ev::AppRead);
    }

    /// Connects and offers `bytes` (then closes if the config asks for a FIN).
    pub fn start(&mut self, bytes: u64) {
        let mut out = Vec::new();
        self.sender.connect(self.now, &mut out);
        self.sender.app_send(self.now, bytes, &mut out);
        self.sender.close(self.now, &mut out);
        self.after_sender(out);
    }

    fn push(&mut self, t: SimTime, ev: Ev) {
        self.payloads.push(Some(ev));
        self.events.push(Reverse((t, self.seq, self.payloads.len() - 1)));
        self.seq += 1;
    }

    fn after_sender(&mut self, out: Vec<Segment>) {
        for seg in out {
            if seg.len > 0 || seg.is_fin() {
                let id = SegId { offset: seg.seq - 1, len: seg.len, tx_count: seg.tx_count };
                let dropped = (self.drop)(id);
                self.sent.push((self.now, id, dropped));
                if dropped {
                    continue;
                }
            }
            // Bottleneck FIFO: drop-tail at the limit, else serialise after the previous
            // packet, then propagate.
            while self.queue.front().is_some_and(|&t| t <= self.now) {
                self.queue.pop_front();
            }
            if self.path.queue_limit.is_some_and(|l| self.queue.len() >= l) {
                self.queue_drops += 1;
                if let Some(last) = self.sent.last_mut() {
                    last.2 = true;
                }
                continue;
            }
            let start = self.now.max(self.link_free_at);
            self.link_free_at = start + self.path.rate.tx_time(seg.ip_bytes() as u64);
            self.queue.push_back(self.link_free_at);
            let t = self.link_free_at + self.path.delay;
            self.push(t, Ev::Data(seg));
        }
        if let Some(t) = self.sender.poll_at() {
            if self.sender_timer != Some(t) {
                self.sender_timer = Some(t);
                self.push(t, Ev::SenderTimer);
            }
        }
        self.snap_if_changed();
    }

    fn after_receiver(&mut self, mut out: Vec<Segment>) {
        if !self.read_pause.is_some_and(|(a, b)| a <= self.now && self.now < b) {
            self.receiver.app_read(self.now, u64::MAX, &mut out);
        }
        for seg in out {
            self.acks.push((self.now, seg));
            if self.drop_acks.contains(&(self.acks.len() - 1)) {
                continue;
            }
            let t = self.now + self.path.rate.tx_time(seg.ip_bytes() as u64) + self.path.delay;
            self.push(t, Ev::Ack(seg));
        }
        if let Some(t) = self.receiver.poll_at() {
            if self.receiver_timer != Some(t) {
                self.receiver_timer = Some(t);
                self.push(t, Ev::ReceiverTimer);
            }
        }
        while let Some((from, to)) = self.receiver.take_deliveries() {
            assert_eq!(from, self.delivered_to, "in-order delivery must be contiguous: every byte once, in order");
            self.delivered_to = to;
            self.deliveries.push((self.now, to));
        }
    }

    fn snap_if_changed(&mut self) {
        let s = &self.sender;
        let last = self.snaps.last().copied();
        let st = s.stats();
        let (timeouts, partials) = (st.timeouts, st.partial_acks);
        let what = match last {
            _ if timeouts > self.count("timeout") => "timeout",
            Some(l) if s.state() != l.state && s.state() == CongState::Recovery => "enter",
            Some(l) if l.state == CongState::Recovery && s.state() != CongState::Recovery => "exit",
            _ if partials > self.count("partial") => "partial",
            None if s.state() == CongState::Recovery => "enter",
            _ => "",
        };
        if !what.is_empty() {
            self.snaps.push(Snap { t: self.now, what, state: s.state(), cwnd: s.cwnd(), ssthresh: s.ssthresh(), snd_una: s.snd_una() });
        }
        if self.cwnd_trace.last().is_none_or(|&(_, c, t)| (c, t) != (s.cwnd(), s.ssthresh())) {
            self.cwnd_trace.push((self.now, s.cwnd(), s.ssthresh()));
        }
    }

    fn count(&self, what: &str) -> u64 {
        self.snaps.iter().filter(|s| s.what == what).count() as u64
    }

    /// Runs one event; false when none is left.
    pub fn step(&mut self) -> bool {
        let Some(Reverse((t, _, i))) = self.events.pop() else { return false };
        self.now = t;
        let ev = self.payloads[i].take().expect("event run twice");
        let mut out = Vec::new();
        match ev {
            Ev::Data(seg) => {
                self.receiver.on_segment(t, &seg, &mut out);
                self.after_receiver(out);
            }
            Ev::Ack(seg) => {
                self.sender.on_segment(t, &seg, &mut out);
                self.after_sender(out);
            }
            Ev::SenderTimer => {
                if self.sender_timer == Some(t) {
                    self.sender_timer = None;
                    self.sender.on_timer(t, &mut out);
                    self.after_sender(out);
                }
            }
            Ev::AppRead => self.after_receiver(out),
            Ev::ReceiverTimer => {
                if self.receiver_timer == Some(t) {
                    self.receiver_timer = None;
                    self.receiver.on_timer(t, &mut out);
                    self.after_receiver(out);
                }
            }
        }
        true
    }

    /// Runs until the sender has everything acknowledged or `limit` passes. Returns whether
    /// the transfer completed.
    pub fn run_to_completion(&mut self, limit: SimTime) -> bool {
        while self.now <= limit {
            if self.sender.all_acked() && self.sender.snd_max() > 1 {
                return true;
            }
            if !self.step() {
                break;
            }
        }
        self.sender.all_acked()
    }

    pub fn run_until(&mut self, limit: SimTime) {
        while let Some(Reverse((t, _, _))) = self.events.peek() {
            if *t > limit {
                break;
            }
            self.step();
        }
        self.now = self.now.max(limit);
    }

    /// When in-order delivery first reached data offset `offset` (exclusive end).
    pub fn delivered_at(&self, offset: u64) -> Option<SimTime> {
        self.deliveries.iter().find(|&&(_, to)| to >= offset).map(|&(t, _)| t)
    }

    pub fn delivered(&self) -> u64 {
        self.delivered_to
    }

    /// Snapshots with the given label.
    pub fn snaps_of(&self, what: &str) -> Vec<Snap> {
        self.snaps.iter().filter(|s| s.what == what).copied().collect()
    }

    /// The cwnd trace as CSV (`t_s,cwnd,ssthresh`).
    pub fn cwnd_csv(&self) -> String {
        let mut s = String::from("t_s,cwnd,ssthresh\n");
        for (t, c, th) in &self.cwnd_trace {
            s.push_str(&format!("{:.6},{},{}\n", t.as_secs_f64(), c, th));
        }
        s
    }
}

/// Socket buffers end to end on the test network.
#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    /// A receive buffer of 1 MB (window scale 6: the field is at most 4 MB).
    const RCV_BUF: u64 = 1_000_000;

    fn buffered_cfg() -> TcpConfig {
        TcpConfig { mss: MSS as u32, window_scale: 6, rcv_buf: Some(RCV_BUF), initial_ssthresh: 1 << 40, initial_cwnd: 2, ..Default::default() }
    }

    /// A receive buffer of B bytes limits a bulk flow over round-trip time R to B/R: on the
    /// 45 Mbps GEO path (R = 550 ms) a 1 MB buffer gives 1.82 MB/s, a third of the link.
    #[test]
    fn a_receive_buffer_limits_throughput_to_buffer_over_rtt() {
        let mut net = Net::new(Path::geo(), buffered_cfg(), |_| false);
        net.start(30_000_000);
        assert!(net.run_to_completion(SimTime::from_secs(60)));
        let (t1, t2) = (net.delivered_at(10_000_000).unwrap(), net.delivered_at(30_000_000).unwrap());
        let rate = 20_000_000.0 / (t2 - t1).as_secs_f64();
        let expect = RCV_BUF as f64 / Path::geo().rtt().as_secs_f64();
        assert!((rate / expect - 1.0).abs() < 0.02, "{rate:.0} B/s against B/R = {expect:.0} B/s");
        assert_eq!(net.sender.stats().segments_retransmitted, 0);
    }

    /// The reader stops for 10 s: the buffer fills, the window closes, the persist timer
    /// probes (backing off), and when the reader resumes its window update restarts the
    /// transfer, which completes with every byte delivered once and in order.
    #[test]
    fn a_reader_that_stops_and_resumes_is_recovered_from_by_the_persist_timer() {
        let mut net = Net::new(Path::geo(), buffered_cfg(), |_| false);
        let (stop, resume) = (SimTime::from_secs(5), SimTime::from_secs(15));
        net.pause_reading(stop, resume);
        net.start(20_000_000);
        net.run_until(SimTime::from_secs(14));
        assert!(net.sender.in_persist(), "the window is closed");
        assert_eq!(net.sender.peer_window(), 0);
        let probes = net.sender.stats().window_probes;
        assert!((2..=5).contains(&probes), "probes backing off from the RTO: {probes}");
        let stalled = net.receiver.received();
        assert!(stalled <= RCV_BUF + net.receiver.delivered(), "no more than the buffer waits unread");
        assert!(net.run_to_completion(SimTime::from_secs(120)), "the transfer completes");
        assert_eq!(net.delivered(), 20_000_000);
        assert!(net.delivered_at(stalled + 1).unwrap() >= resume, "nothing new before the reader resumed");
        assert_eq!((net.sender.stats().timeouts, net.sender.stats().fast_retransmits), (0, 0));
    }
}
