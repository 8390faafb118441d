//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00; Linux `net/ipv4/tcp_bbr.c`, the v1
//! of 2016-2019): a model of the path, the bottleneck bandwidth (a windowed maximum of
//! delivery-rate samples over 10 rounds) and the round-trip propagation time (a windowed
//! minimum over 10 s), drives a pacing rate `pacing_gain x BtlBw` and a cwnd cap
//! `cwnd_gain x BDP`. The state machine:
//!
//! - STARTUP: gains 2/ln 2 = 2.885 until the bandwidth stops growing by 25% for 3 rounds;
//! - DRAIN: pacing gain 1/2.885 until the flight is down to one BDP;
//! - PROBE_BW: pacing gains cycling 5/4, 3/4, 1 x 6, one phase per min RTT, cwnd gain 2;
//! - PROBE_RTT: when the min RTT is 10 s old, cwnd 4 segments for max(200 ms, 1 round).
//!
//! In loss recovery: packet conservation for the first round (cwnd = in flight + delivered),
//! then growth as usual, every ACK first deducting what it marked lost (`rs->losses`); on
//! leaving recovery the cwnd before it is restored (Linux
//! `bbr_set_cwnd_to_recover_or_restore`). A retransmission timeout sets cwnd to one segment
//! (Linux `tcp_enter_loss`); BBR then grows it back by what is delivered. Idle restart keeps
//! cwnd and paces at 1 x BtlBw (draft §4.3.4.4).
//!
//! Choices where Linux is not the draft or does not fit a simulator: counting in bytes
//! (Linux counts packets); no TSO, so the quantization budget is 3 segments; the PROBE_BW
//! phase starts at phase 2 (Linux draws it at random among all but the 3/4 phase: a fixed
//! phase keeps the run deterministic without an RNG stream); the long-term bandwidth sampling
//! for policers (`lt_bw`) is not modelled. Gains are rationals in integer arithmetic. The
//! cwnd target includes Linux 4.19's ACK-aggregation allowance (`extra_acked`).

use super::{Control, RateEvent, Reduction, Window};
use crate::tcp::recovery::CongState;
use crate::time::SimTime;

/// Gains in units of 1/1000 (Linux `BBR_UNIT` is 1/256; 1/1000 keeps the decimal values).
const UNIT: u64 = 1000;
/// Linux `bbr_high_gain` = 2/ln(2) (draft §4.3.1.1: the smallest gain that doubles the
/// delivery rate each round).
const HIGH_GAIN: u64 = 2885;
/// Linux `bbr_drain_gain` = 1/high_gain.
const DRAIN_GAIN: u64 = UNIT * UNIT / HIGH_GAIN;
/// Linux `bbr_cwnd_gain` = 2 in PROBE_BW.
const CWND_GAIN: u64 = 2 * UNIT;
/// Linux `bbr_pacing_gain[]`: the PROBE_BW cycle.
const PACING_GAIN: [u64; CYCLE_LEN] = [UNIT * 5 / 4, UNIT * 3 / 4, UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];
const CYCLE_LEN: usize = 8;
/// The PROBE_BW phase a flow starts in (our choice; Linux draws one at random, never 1).
const FIRST_PHASE: usize = 2;
/// Linux `bbr_bw_rtts` = CYCLE_LEN + 2: the max-bandwidth filter's window in rounds.
const BW_WINDOW_ROUNDS: usize = CYCLE_LEN + 2;
/// Linux `bbr_min_rtt_win_sec`: the min-RTT filter's window.
const MIN_RTT_WINDOW: SimTime = SimTime::from_secs(10);
/// Linux `bbr_probe_rtt_mode_ms`: time at the PROBE_RTT cwnd.
const PROBE_RTT_TIME: SimTime = SimTime::from_millis(200);
/// Linux `bbr_cwnd_min_target`: 4 segments, the PROBE_RTT cwnd and the floor.
const MIN_CWND_SEGMENTS: u64 = 4;
/// Linux `bbr_full_bw_thresh` = 1.25 and `bbr_full_bw_cnt` = 3 rounds.
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
const FULL_BW_ROUNDS: u32 = 3;
/// Linux `bbr_pacing_margin_percent`: pace 1% under the estimate.
const PACING_MARGIN_PERCENT: u64 = 1;
/// Linux `bbr_quantization_budget()`: 3 x the send quantum (here one segment, no TSO).
const QUANTA_SEGMENTS: u64 = 3;
/// Before any RTT sample, Linux assumes 1 ms for the initial pacing rate.
const DEFAULT_RTT: SimTime = SimTime::from_millis(1);
/// Linux `bbr_extra_acked_gain` = 1: the ACK-aggregation allowance added to the cwnd target.
const EXTRA_ACKED_GAIN: u64 = UNIT;
/// Linux `bbr_extra_acked_win_rtts` = 5: the allowance is the largest excess of the last 5-10
/// rounds (two windows of 5, the older dropped when a new one starts).
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Linux `bbr_extra_acked_max_us` = 100 ms: the allowance is at most BtlBw x 100 ms.
const EXTRA_ACKED_MAX_TIME: SimTime = SimTime::from_millis(100);
/// Linux `bbr_ack_epoch_acked_reset_thresh` = 2^20 packets: an epoch that long starts again.
const ACK_EPOCH_RESET_SEGMENTS: u64 = 1 << 20;
/// Linux caps `ack_epoch_acked` at 0xFFFFF packets (its 20-bit field).
const ACK_EPOCH_MAX_SEGMENTS: u64 = 0xFFFFF;

#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    mode: Mode,
    /// Max filter: the largest bandwidth sample (B/s) of each of the last rounds, by round.
    bw_rounds: [(u64, u64); BW_WINDOW_ROUNDS],
    min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_reached: bool,
    pacing_gain: u64,
    cwnd_gain: u64,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    packet_conservation: bool,
    prev_state: CongState,
    idle_restart: bool,
    pacing_rate: Option<u64>,
    init_cwnd: Option<u64>,
    /// PROBE_RTT ended: the next cwnd is at least `prior_cwnd` (Linux `bbr_exit_probe_rtt`).
    restore_cwnd: bool,
    /// The round of the latest sample the max filter took: the filter's window ends there
    /// (Linux's `minmax_running_max` expires samples only when it takes a new one).
    bw_last_round: u64,
    /// Samples of packets sent during PROBE_RTT count as application-limited (Linux sets
    /// `tp->app_limited = delivered + in flight` on every PROBE_RTT ACK: "Ignore low rate
    /// samples during this mode"): a packet whose `prior_delivered` is in `[from, mark]`.
    probe_rtt_app_limited: Option<(u64, u64)>,
    /// ACK aggregation (Linux `bbr_update_ack_aggregation()`, 4.19+): the largest excess of
    /// bytes delivered over BtlBw x time in each of two windows of 5 rounds, the round count of
    /// the current window and which slot it uses, and the current epoch's start and bytes.
    extra_acked: [u64; 2],
    extra_acked_win_rounds: u32,
    extra_acked_win_idx: usize,
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: u64,
}

/// Loss recovery or the loss state of a timeout (Linux `state >= TCP_CA_Recovery`).
fn recovering(s: CongState) -> bool {
    matches!(s, CongState::Recovery | CongState::Loss)
}

impl Default for Bbr {
    fn default() -> Self {
        Bbr {
            mode: Mode::Startup,
            bw_rounds: [(0, 0); BW_WINDOW_ROUNDS],
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_reached: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            packet_conservation: false,
            prev_state: CongState::Open,
            idle_restart: false,
            pacing_rate: None,
            init_cwnd: None,
            restore_cwnd: false,
            bw_last_round: 0,
            probe_rtt_app_limited: None,
            extra_acked: [0; 2],
            extra_acked_win_rounds: 0,
            extra_acked_win_idx: 0,
            ack_epoch_stamp: SimTime::ZERO,
            ack_epoch_acked: 0,
        }
    }
}

impl Bbr {
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// BtlBw: the windowed maximum of the delivery rate, bytes per second: the largest sample
    /// of the `BW_WINDOW_ROUNDS` rounds up to the latest one that gave the filter a sample.
    /// Rounds without a sample (PROBE_RTT, application-limited stretches) age nothing, as in
    /// Linux, where `bbr_max_bw()` reads the `minmax` filter, which expires samples only when
    /// a new one arrives. (Aged by the round count instead, the 200 ms of PROBE_RTT, 10 rounds
    /// of a 20 ms path, emptied the filter of everything but PROBE_RTT's own 4-packet rate.)
    pub fn btl_bw(&self) -> u64 {
        self.bw_rounds.iter().filter(|(r, _)| r + BW_WINDOW_ROUNDS as u64 > self.bw_last_round).map(|&(_, b)| b).max().unwrap_or(0)
    }

    /// Whether the sample is application-limited: the sender says so, or the packet left
    /// while the latest PROBE_RTT's mark was up (Linux `tcp_rate_skb_sent` copies
    /// `tp->app_limited` into each packet; `tcp_rate_gen` clears it once `delivered` passes
    /// it, so exactly the packets sent with `prior_delivered` in `[from, mark]` carry it).
    fn app_limited(&self, rs: &crate::tcp::rate::RateSample) -> bool {
        rs.is_app_limited || self.probe_rtt_app_limited.is_some_and(|(from, mark)| (from..=mark).contains(&rs.prior_delivered))
    }
    pub fn min_rtt(&self) -> Option<SimTime> {
        self.min_rtt
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// `gain x BDP` in bytes (Linux `bbr_bdp()`), or the initial window before any RTT sample.
    fn bdp(&self, gain: u64, w: &Window) -> u64 {
        let Some(rtt) = self.min_rtt else { return self.init_cwnd.unwrap_or(w.cwnd) };
        let bdp = self.btl_bw() as u128 * rtt.as_nanos() as u128 / 1_000_000_000;
        (bdp * gain as u128 / UNIT as u128) as u64
    }

    /// The cwnd target: `gain x BDP` plus the quantization budget (Linux
    /// `bbr_quantization_budget()`: 2 more segments in the 5/4 phase).
    fn target_cwnd(&self, gain: u64, w: &Window) -> u64 {
        let mut t = self.bdp(gain, w) + QUANTA_SEGMENTS * w.mss;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            t += 2 * w.mss;
        }
        t.max(MIN_CWND_SEGMENTS * w.mss)
    }

    fn save_cwnd(&mut self, w: &Window) {
        // Linux bbr_save_cwnd(): the cwnd before recovery or PROBE_RTT.
        self.prior_cwnd = if !recovering(self.prev_state) && self.mode != Mode::ProbeRtt { w.cwnd } else { self.prior_cwnd.max(w.cwnd) };
    }

    /// Linux `bbr_main()`: update the model, the state machine, then pacing rate and cwnd.
    pub fn on_rate_sample(&mut self, w: &Window, ev: &RateEvent) -> Control {
        let init = *self.init_cwnd.get_or_insert(w.cwnd);
        let rs = &ev.rs;
        // Rounds (draft §4.1.1.3): a round ends when a packet sent after the last round's
        // end is delivered. Only a valid sample counts (Linux `bbr_update_bw()`: "Not a valid
        // observation" returns before the round test): a sample shorter than the minimum RTT
        // (tcp/rate.rs) is a packet delivered by its original transmission after a spurious
        // resend overwrote its snapshot; counting those, the go-back-N after a timeout ended a
        // round at nearly every ACK and emptied the 10-round bandwidth filter within
        // milliseconds (issue 14, the lossy MEO path).
        self.round_start = false;
        if rs.is_valid() && rs.acked_sacked > 0 && rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = ev.delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        // BtlBw max filter (draft §4.1.1.5): app-limited samples only if they raise it.
        let app_limited = self.app_limited(rs);
        if rs.is_valid() {
            let bw = rs.rate_bytes_per_sec();
            if !app_limited || bw >= self.btl_bw() {
                let slot = &mut self.bw_rounds[(self.round_count % BW_WINDOW_ROUNDS as u64) as usize];
                if slot.0 != self.round_count {
                    *slot = (self.round_count, 0);
                }
                slot.1 = slot.1.max(bw);
                self.bw_last_round = self.round_count;
            }
        }
        self.update_ack_aggregation(w, ev);
        self.update_cycle_phase(w, ev);
        self.check_full_bw_reached(app_limited);
        self.check_drain(w, ev);
        self.update_min_rtt(w, ev);
        // Pacing rate (Linux bbr_set_pacing_rate): before full bandwidth is reached, only up.
        let bw = self.btl_bw();
        if bw > 0 {
            let rate = (bw as u128 * self.pacing_gain as u128 * (100 - PACING_MARGIN_PERCENT) as u128 / (UNIT as u128 * 100)) as u64;
            if self.full_bw_reached || self.pacing_rate.is_none_or(|p| rate > p) {
                self.pacing_rate = Some(rate);
            }
        } else if self.pacing_rate.is_none() {
            // Linux bbr_init_pacing_rate_from_rtt(): high_gain x initial cwnd / RTT.
            let rtt = ev.srtt.filter(|r| *r > SimTime::ZERO).unwrap_or(DEFAULT_RTT);
            self.pacing_rate = Some((init as u128 * HIGH_GAIN as u128 * 1_000_000_000 / (UNIT as u128 * rtt.as_nanos() as u128)) as u64);
        }
        let cwnd = self.set_cwnd(w, ev, init);
        Control { cwnd: Some(cwnd), pacing_rate: self.pacing_rate, ssthresh: None }
    }

    /// Linux `bbr_set_cwnd()`: the cwnd of [`grow_cwnd`](Self::grow_cwnd), then the caps of its
    /// `done:` label, which every path reaches, packet conservation included: in PROBE_RTT at
    /// most 4 segments (`bbr_cwnd_min_target`).
    fn set_cwnd(&mut self, w: &Window, ev: &RateEvent, init: u64) -> u64 {
        let cwnd = self.grow_cwnd(w, ev, init);
        if self.mode == Mode::ProbeRtt {
            return cwnd.min(MIN_CWND_SEGMENTS * w.mss);
        }
        cwnd
    }

    /// Linux `bbr_set_cwnd()` up to its `done:` label, with
    /// `bbr_set_cwnd_to_recover_or_restore()`.
    fn grow_cwnd(&mut self, w: &Window, ev: &RateEvent, init: u64) -> u64 {
        let acked = ev.rs.acked_sacked;
        let mut cwnd = w.cwnd;
        let in_recovery = recovering(ev.state);
        let was_in_recovery = recovering(self.prev_state);
        if std::mem::take(&mut self.restore_cwnd) {
            cwnd = cwnd.max(self.prior_cwnd);
        }
        if acked == 0 {
            // Linux: "no packet fully ACKed; just apply caps", `prev_ca_state` included: a
            // recovery entered on such an ACK starts packet conservation on the next one.
            return cwnd;
        }
        self.prev_state = ev.state;
        // Linux bbr_set_cwnd_to_recover_or_restore(): "An ACK for P pkts should release at
        // most 2*P packets": first the packets this ACK marked lost are deducted (at least
        // one segment is left), then packet conservation or growth adds what it delivered.
        if ev.rs.losses > 0 {
            cwnd = cwnd.saturating_sub(ev.rs.losses).max(w.mss);
        }
        if in_recovery && !was_in_recovery {
            // Packet conservation for one round.
            self.packet_conservation = true;
            self.next_round_delivered = ev.delivered;
            cwnd = ev.in_flight + acked;
        }
        if self.packet_conservation {
            return cwnd.max(ev.in_flight + acked).max(MIN_CWND_SEGMENTS * w.mss);
        }
        // Linux: bbr_bdp() + bbr_ack_aggregation_cwnd(), then the quantization budget.
        let target = self.target_cwnd(self.cwnd_gain, w) + self.ack_aggregation_cwnd();
        if self.full_bw_reached {
            cwnd = (cwnd + acked).min(target);
        } else if cwnd < target || ev.delivered < init {
            cwnd += acked;
        }
        cwnd.max(MIN_CWND_SEGMENTS * w.mss)
    }

    /// Linux `bbr_update_ack_aggregation()`: how far deliveries run ahead of BtlBw x time since
    /// the epoch started (an epoch restarts whenever they fall behind), the largest excess of a
    /// window of 5 rounds kept, at most cwnd.
    fn update_ack_aggregation(&mut self, w: &Window, ev: &RateEvent) {
        let acked = ev.rs.acked_sacked;
        if acked == 0 || !ev.rs.is_valid() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rounds = (self.extra_acked_win_rounds + 1).min(0x1F);
            if self.extra_acked_win_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_win_rounds = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        // Linux measures the epoch to `tp->delivered_mstamp`, this ACK's time (it delivered).
        let epoch = ev.now.saturating_sub(self.ack_epoch_stamp);
        let mut expected = (self.btl_bw() as u128 * epoch.as_nanos() as u128 / 1_000_000_000) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= ACK_EPOCH_RESET_SEGMENTS * w.mss {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = ev.now;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(ACK_EPOCH_MAX_SEGMENTS * w.mss);
        let extra = (self.ack_epoch_acked - expected).min(w.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// Linux `bbr_ack_aggregation_cwnd()`: once the pipe is full, the largest recent excess
    /// (gain 1), at most BtlBw x 100 ms.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max = (self.btl_bw() as u128 * EXTRA_ACKED_MAX_TIME.as_nanos() as u128 / 1_000_000_000) as u64;
        (EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1]) / UNIT).min(max)
    }

    /// Linux `bbr_update_cycle_phase()`.
    fn update_cycle_phase(&mut self, w: &Window, ev: &RateEvent) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let min_rtt = self.min_rtt.unwrap_or(SimTime::ZERO);
        let full_length = ev.now - self.cycle_stamp > min_rtt;
        let gain = self.pacing_gain;
        let prior_in_flight = ev.rs.prior_in_flight;
        // The flight targets are Linux `bbr_inflight()`: gain x BDP plus the quantization
        // budget (3 segments, 2 more in the 5/4 phase), as for the cwnd.
        let advance = if gain == UNIT {
            full_length
        } else if gain > UNIT {
            // Probing: until the flight reaches 5/4 BDP (or a loss shows the limit).
            full_length && (recovering(ev.state) || prior_in_flight >= self.target_cwnd(gain, w))
        } else {
            // Draining: as soon as the flight is down to one BDP.
            full_length || prior_in_flight <= self.target_cwnd(UNIT, w)
        };
        if advance {
            self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
            self.cycle_stamp = ev.now;
            self.pacing_gain = PACING_GAIN[self.cycle_idx];
        }
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = PACING_GAIN[FIRST_PHASE];
        self.cwnd_gain = CWND_GAIN;
        self.cycle_idx = FIRST_PHASE;
        self.cycle_stamp = now;
    }

    /// Linux `bbr_check_full_bw_reached()`.
    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let bw = self.btl_bw();
        if bw as u128 * UNIT as u128 >= self.full_bw as u128 * FULL_BW_THRESH as u128 {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_ROUNDS;
    }

    /// Linux `bbr_check_drain()`.
    fn check_drain(&mut self, w: &Window, ev: &RateEvent) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.pacing_gain = DRAIN_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && ev.in_flight <= self.target_cwnd(UNIT, w) {
            self.enter_probe_bw(ev.now);
        }
    }

    /// Linux `bbr_update_min_rtt()`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, w: &Window, ev: &RateEvent) {
        let expired = self.min_rtt.is_some() && ev.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = ev.rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = ev.now;
            }
        }
        let entered = expired && !self.idle_restart && self.mode != Mode::ProbeRtt;
        if entered {
            self.save_cwnd(w);
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = UNIT;
            self.cwnd_gain = UNIT;
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Linux: "Ignore low rate samples during this mode" (tp->app_limited).
            let mark = (ev.delivered + ev.in_flight).max(1);
            self.probe_rtt_app_limited = Some(match self.probe_rtt_app_limited {
                Some((from, _)) if !entered => (from, mark),
                _ => (ev.delivered, mark),
            });
            match self.probe_rtt_done {
                None if ev.in_flight <= MIN_CWND_SEGMENTS * w.mss => {
                    self.probe_rtt_done = Some(ev.now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = ev.delivered;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && ev.now > done {
                        self.min_rtt_stamp = ev.now;
                        if self.full_bw_reached {
                            self.enter_probe_bw(ev.now);
                        } else {
                            self.mode = Mode::Startup;
                            self.pacing_gain = HIGH_GAIN;
                            self.cwnd_gain = HIGH_GAIN;
                        }
                        // The cwnd before PROBE_RTT comes back (Linux bbr_exit_probe_rtt()).
                        self.probe_rtt_round_done = false;
                        self.restore_cwnd = true;
                    }
                }
            }
        }
        if ev.rs.acked_sacked > 0 {
            self.idle_restart = false;
        }
    }

    /// The classic growth hook: BBR sets cwnd in [`on_rate_sample`](Self::on_rate_sample).
    pub fn on_ack(&mut self, w: &Window) -> u64 {
        w.cwnd
    }

    /// Fast retransmit: no multiplicative decrease (Linux `bbr_ssthresh()` saves the cwnd and
    /// leaves ssthresh); packet conservation follows on the next ACK.
    pub fn on_dupack_loss(&mut self, w: &Window, _basis: u64) -> Reduction {
        self.save_cwnd(w);
        Reduction { ssthresh: w.cwnd, cwnd: w.cwnd }
    }

    /// Retransmission timeout: cwnd = 1 segment (Linux `tcp_enter_loss()`), the prior cwnd
    /// saved for when the loss state ends.
    ///
    /// Linux `bbr_set_state(sk, TCP_CA_Loss)` also forgets the bandwidth plateau of STARTUP
    /// (`full_bw = 0`: the next round's bandwidth is the new reference, so the 3 rounds
    /// without 25% growth are counted afresh after the timeout) and treats the timeout as the
    /// end of a round (`round_start = 1`, which only its long-term sampling reads before the
    /// next ACK clears it: `lt_bw` is not modelled, see the module docs).
    pub fn on_timeout(&mut self, w: &Window, _basis: u64) -> Reduction {
        self.save_cwnd(w);
        self.prev_state = CongState::Loss;
        self.packet_conservation = false;
        self.full_bw = 0;
        self.round_start = true;
        Reduction { ssthresh: w.ssthresh, cwnd: w.mss }
    }

    /// A tail loss probe repaired a loss (Linux `tcp_process_tlp_ack()` ->
    /// `tcp_init_cwnd_reduction()` -> `bbr_ssthresh()`): the cwnd is saved, ssthresh kept; the
    /// CWR state it enters is left at once (`tcp_try_keep_open()`), before BBR sees the ACK.
    pub fn on_cwnd_reduction(&mut self, w: &Window) {
        self.save_cwnd(w);
    }

    /// Leaving recovery or loss: the cwnd before it, if larger.
    pub fn on_recovery_exit(&mut self, w: &Window) -> Option<u64> {
        self.packet_conservation = false;
        Some(w.cwnd.max(self.prior_cwnd))
    }

    /// Idle restart (draft §4.3.4.4): keep cwnd; pace at 1 x BtlBw in PROBE_BW.
    pub fn on_idle_restart(&mut self, w: &Window) -> u64 {
        self.idle_restart = true;
        if self.mode == Mode::ProbeBw {
            let bw = self.btl_bw();
            if bw > 0 {
                self.pacing_rate = Some(bw * (100 - PACING_MARGIN_PERCENT) / 100);
            }
        }
        w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::rate::RateSample;

    const MSS: u64 = 1000;

    /// A flow in PROBE_BW with BtlBw 1 MB/s and min RTT 100 ms (BDP 100 segments), in `phase`.
    fn probing(phase: usize) -> Bbr {
        let mut b = Bbr { mode: Mode::ProbeBw, min_rtt: Some(SimTime::from_millis(100)), full_bw_reached: true, ..Default::default() };
        b.bw_rounds[0] = (0, 1_000_000);
        b.cycle_idx = phase;
        b.pacing_gain = PACING_GAIN[phase];
        b
    }

    #[track_caller]
    fn ack(b: &mut Bbr, now_ms: u64, prior_in_flight: u64) {
        let w = Window { cwnd: 200 * MSS, ssthresh: u64::MAX, mss: MSS };
        let rs = RateSample { prior_in_flight, ..Default::default() };
        b.update_cycle_phase(&w, &RateEvent { now: SimTime::from_millis(now_ms), rs, delivered: 0, in_flight: prior_in_flight, state: CongState::Open, srtt: None });
    }

    /// An ACK at `now_ms` delivering one segment with a valid sample of `bw` B/s over 100 ms,
    /// sent after the round's end (so a round starts), `in_flight` segments left, in `state`.
    fn round_ack(now_ms: u64, bw: u64, in_flight: u64, state: CongState) -> RateEvent {
        let rs = RateSample { delivered: bw / 10, interval: SimTime::from_millis(100), acked_sacked: MSS, rtt: Some(SimTime::from_millis(100)), prior_in_flight: in_flight * MSS, ..Default::default() };
        RateEvent { now: SimTime::from_millis(now_ms), rs, delivered: 1_000 * MSS, in_flight: in_flight * MSS, state, srtt: Some(SimTime::from_millis(100)) }
    }

    /// Linux `bbr_set_state(sk, TCP_CA_Loss)` sets `full_bw = 0`: after a timeout STARTUP
    /// counts its 3 rounds without 25% growth afresh. A flow 2 rounds into its plateau at
    /// 1 MB/s times out; the next round brings 1 MB/s again, which is now the new reference
    /// (count 0, still STARTUP). Without the reset that round was the third: DRAIN.
    #[test]
    fn a_timeout_restarts_startups_count_of_rounds_without_growth() {
        let mut b = Bbr { min_rtt: Some(SimTime::from_millis(100)), full_bw: 1_000_000, full_bw_count: 2, ..Default::default() };
        b.bw_rounds[0] = (0, 1_000_000);
        let w = Window { cwnd: 200 * MSS, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(b.on_timeout(&w, 0).cwnd, MSS);
        assert_eq!((b.full_bw, b.round_start), (0, true));
        b.on_rate_sample(&Window { cwnd: MSS, ..w }, &round_ack(1_000, 1_000_000, 0, CongState::Loss));
        assert_eq!((b.mode, b.full_bw, b.full_bw_count, b.full_bw_reached), (Mode::Startup, 1_000_000, 0, false));
    }

    /// Linux `bbr_set_cwnd()`: packet conservation jumps to `done:`, where PROBE_RTT's cap of
    /// 4 segments still applies. Entering recovery in PROBE_RTT with 20 segments in flight and
    /// one delivered: conservation asks for 21, PROBE_RTT allows 4 (21 before the fix); the
    /// next ACK of the first round likewise.
    #[test]
    fn probe_rtt_caps_cwnd_at_4_segments_during_packet_conservation() {
        let mut b = Bbr { mode: Mode::ProbeRtt, pacing_gain: UNIT, cwnd_gain: UNIT, ..probing(2) };
        let w = Window { cwnd: 4 * MSS, ssthresh: u64::MAX, mss: MSS };
        let ev = round_ack(1_000, 1_000_000, 20, CongState::Recovery);
        assert_eq!(b.set_cwnd(&w, &ev, 10 * MSS), 4 * MSS);
        assert!(b.packet_conservation);
        b.prev_state = CongState::Recovery;
        assert_eq!(b.set_cwnd(&w, &ev, 10 * MSS), 4 * MSS);
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore()`: "An ACK for P pkts should release at most
    /// 2*P packets": the packets the ACK marked lost (`rs->losses`) come off cwnd before what
    /// it delivered is added. In PROBE_BW after the first round of recovery, cwnd 100
    /// segments below the target: one delivered and 3 lost leave 98 (101 before the fix); in
    /// packet conservation, max(100 - 3, in flight 90 + 1) = 97. An ACK that delivers nothing
    /// changes nothing (Linux: "no packet fully ACKed; just apply caps"). At least one segment
    /// is left.
    #[test]
    fn losses_come_off_cwnd_before_growth() {
        let mut b = probing(2);
        b.prev_state = CongState::Recovery;
        let w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut ev = round_ack(1_000, 1_000_000, 90, CongState::Recovery);
        ev.rs.losses = 3 * MSS;
        assert_eq!(b.set_cwnd(&w, &ev, 10 * MSS), 98 * MSS);
        b.packet_conservation = true;
        assert_eq!(b.set_cwnd(&w, &ev, 10 * MSS), 97 * MSS);
        ev.rs.acked_sacked = 0;
        assert_eq!(b.set_cwnd(&w, &ev, 10 * MSS), 100 * MSS, "nothing delivered");
        b.packet_conservation = false;
        let mut ev = round_ack(1_000, 1_000_000, 0, CongState::Recovery);
        ev.rs.losses = 200 * MSS;
        assert_eq!(b.set_cwnd(&w, &ev, 10 * MSS), 4 * MSS, "one segment left, plus one delivered, then the floor of 4");
    }

    /// Linux keeps `prev_ca_state` on an ACK that delivers nothing (`bbr_set_cwnd()` skips
    /// `bbr_set_cwnd_to_recover_or_restore()`): recovery entered on such an ACK starts packet
    /// conservation (cwnd = in flight + delivered = 51 segments) on the next one that delivers.
    #[test]
    fn packet_conservation_starts_on_the_first_ack_of_recovery_that_delivers() {
        let mut b = Bbr { cwnd_gain: CWND_GAIN, ..probing(2) };
        let w = Window { cwnd: 150 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut nothing = round_ack(1_000, 1_000_000, 50, CongState::Recovery);
        nothing.rs.acked_sacked = 0;
        assert_eq!(b.on_rate_sample(&w, &nothing).cwnd, Some(150 * MSS));
        assert_eq!((b.prev_state, b.packet_conservation), (CongState::Open, false));
        assert_eq!(b.on_rate_sample(&w, &round_ack(1_001, 1_000_000, 50, CongState::Recovery)).cwnd, Some(51 * MSS));
        assert_eq!((b.prev_state, b.packet_conservation), (CongState::Recovery, true));
    }

    /// Linux `bbr_update_ack_aggregation()`: BtlBw 1 MB/s; an ACK at 1 s starts an epoch (1
    /// segment); one at 1.001 s delivers 10 segments where 1 was expected: the epoch restarts
    /// (1 segment delivered, not more than expected) with 10 in excess, which the cwnd target
    /// takes in (2 BDP + 3 quanta + 10 = 213 segments, not 203) until two windows of 5 rounds
    /// have passed without such an excess.
    #[test]
    fn an_ack_burst_above_btlbw_raises_the_cwnd_target_for_5_to_10_rounds() {
        let mut b = Bbr { cwnd_gain: CWND_GAIN, ..probing(2) };
        let w = Window { cwnd: 500 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut ev = round_ack(1_000, 1_000_000, 100, CongState::Open);
        b.update_ack_aggregation(&w, &ev);
        assert_eq!((b.ack_epoch_stamp, b.ack_epoch_acked, b.extra_acked), (SimTime::from_millis(1_000), MSS, [MSS, 0]));
        ev.now = SimTime::from_millis(1_001);
        ev.rs.acked_sacked = 10 * MSS;
        b.update_ack_aggregation(&w, &ev);
        assert_eq!((b.ack_epoch_stamp, b.extra_acked), (SimTime::from_millis(1_001), [10 * MSS, 0]));
        assert_eq!(b.set_cwnd(&w, &round_ack(1_002, 1_000_000, 100, CongState::Open), 10 * MSS), 213 * MSS);
        // Rounds with deliveries at BtlBw: after 5 the other slot, after 10 the first again.
        for r in 1..=10 {
            b.round_start = true;
            let ev = round_ack(1_001 + 100 * r, 1_000_000, 100, CongState::Open);
            b.update_ack_aggregation(&w, &ev);
            assert_eq!(b.ack_aggregation_cwnd() >= 10 * MSS, r < 10, "round {r}");
        }
        assert_eq!(b.set_cwnd(&w, &round_ack(3_000, 1_000_000, 100, CongState::Open), 10 * MSS), 204 * MSS, "203 + the last ACK's segment in excess");
    }

    /// Linux `bbr_is_next_cycle_phase()` compares the flight with `bbr_inflight()`, which adds
    /// the quantization budget to gain x BDP: the 3/4 phase ends once the flight is down to
    /// BDP + 3 segments (103 here, not 100), and the 5/4 phase lasts until 125 + 5.
    #[test]
    fn gain_cycling_compares_the_flight_with_bdp_plus_the_quantization_budget() {
        let mut b = probing(1);
        ack(&mut b, 10, 104 * MSS);
        assert_eq!(b.cycle_idx, 1, "104 segments: still draining");
        ack(&mut b, 20, 103 * MSS);
        assert_eq!(b.cycle_idx, 2, "103 segments = BDP + 3: drained");
        let mut b = probing(0);
        ack(&mut b, 150, 129 * MSS);
        assert_eq!(b.cycle_idx, 0, "129 segments: still probing");
        ack(&mut b, 160, 130 * MSS);
        assert_eq!(b.cycle_idx, 1, "130 segments = 5/4 BDP + 3 + 2");
    }
}
