//! Parameters of one TCP half-connection, already validated and in engine units.

use crate::time::SimTime;

/// How holes are found and repaired (ns-3's `TcpRecoveryOps`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryKind {
    /// Timeout only, then slow start from one segment ("Vanilla", seed 001 §2).
    Timeout,
    /// Tahoe as ns-2's `Agent/TCP`: fast retransmit on the third duplicate ACK, then slow
    /// start from one segment going back N (no fast recovery).
    Tahoe,
    /// RFC 2581 fast retransmit and fast recovery.
    Reno,
    /// NewReno as in ns-2.1b3 with Hoe's changes (seed 001 §2.1).
    NewrenoNs2,
    /// RFC 6582 NewReno.
    NewrenoRfc6582,
    /// NewReno as ns-3.44 runs it without SACK (its guessed SACK marks; recovery/newreno_ns3.rs).
    NewrenoNs3,
    /// SACK as in seed 001 §2.2.1 (Fall and Floyd 1996).
    SackFallFloyd,
    /// RFC 6675 conservative SACK-based loss recovery.
    SackRfc6675,
}

/// How the window grows and shrinks (ns-3's `TcpCongestionOps`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    /// Slow start and congestion avoidance with multiplicative decrease (RFC 5681), counted
    /// per ACK as ns-2's `opencwnd()` did (seed 001 used ns-2.1b3).
    RenoAimd,
    /// CUBIC, RFC 9438 (without HyStart).
    Cubic,
    /// CUBIC with HyStart++ (RFC 9406) in the initial slow start.
    CubicHystart,
    /// TCP Hybla (Caini and Firrincieli 2004), RTT0 = 25 ms.
    Hybla,
    /// BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00, Linux `tcp_bbr.c`), paced.
    Bbr,
    /// TCP Westwood+ (Grieco and Mascolo 2004) with the papers' reaction to losses.
    Westwood,
    /// TCP Westwood+ with Linux's reaction to losses (`tcp_westwood.c`; cc/westwood.rs).
    WestwoodLinux,
}

/// A seed flavour name as the pair (loss recovery, congestion control) it stands for
/// (STYLE.md; seed 001 §2). SACK flavours also need `TcpConfig::sack = true`: use
/// [`TcpConfig::with_flavor`], which sets it.
///
/// | name | recovery | cc |
/// |---|---|---|
/// | `vanilla` | Timeout | RenoAimd |
/// | `tahoe` | Tahoe | RenoAimd |
/// | `reno` | Reno | RenoAimd |
/// | `newreno` | NewrenoNs2 | RenoAimd |
/// | `sack` | SackFallFloyd | RenoAimd |
/// | `newreno_rfc6582` | NewrenoRfc6582 | RenoAimd |
/// | `newreno_ns3` | NewrenoNs3 | RenoAimd |
/// | `sack_rfc6675` | SackRfc6675 | RenoAimd |
///
/// Any of these names followed by `/reno`, `/cubic`, `/cubic_hystart`, `/hybla`, `/bbr`,
/// `/westwood` or `/westwood_linux` picks that
/// congestion control instead (`"sack/cubic"`, `"newreno/hybla"`, `"sack_rfc6675/bbr"`).
pub fn flavor(name: &str) -> Option<(RecoveryKind, CcKind)> {
    let (name, cc) = match name.split_once('/') {
        None => (name, CcKind::RenoAimd),
        Some((n, "reno")) => (n, CcKind::RenoAimd),
        Some((n, "cubic")) => (n, CcKind::Cubic),
        Some((n, "cubic_hystart")) => (n, CcKind::CubicHystart),
        Some((n, "hybla")) => (n, CcKind::Hybla),
        Some((n, "bbr")) => (n, CcKind::Bbr),
        Some((n, "westwood")) => (n, CcKind::Westwood),
        Some((n, "westwood_linux")) => (n, CcKind::WestwoodLinux),
        Some(_) => return None,
    };
    let r = match name {
        "vanilla" => RecoveryKind::Timeout,
        "tahoe" => RecoveryKind::Tahoe,
        "reno" => RecoveryKind::Reno,
        "newreno" => RecoveryKind::NewrenoNs2,
        "sack" => RecoveryKind::SackFallFloyd,
        "newreno_rfc6582" => RecoveryKind::NewrenoRfc6582,
        "newreno_ns3" => RecoveryKind::NewrenoNs3,
        "sack_rfc6675" => RecoveryKind::SackRfc6675,
        _ => return None,
    };
    Some((r, cc))
}

impl RecoveryKind {
    /// True for the recoveries that read SACK blocks (they need SACK negotiated).
    pub fn uses_sack(self) -> bool {
        matches!(self, RecoveryKind::SackFallFloyd | RecoveryKind::SackRfc6675)
    }

    /// The RTO backoff rule that goes with this recovery when `tcp.rto_backoff_reset` is not
    /// given: ns-3's for `newreno_ns3` (it exists to compare with ns-3), ns-2's otherwise.
    pub fn default_backoff_reset(self) -> BackoffReset {
        match self {
            RecoveryKind::NewrenoNs3 => BackoffReset::NewAck,
            _ => BackoffReset::Sample,
        }
    }

    /// The RTT estimator that goes with this recovery when `tcp.rtt_estimator` is not given:
    /// ns-3's for `newreno_ns3`, ns-2's otherwise.
    pub fn default_rtt_estimator(self) -> RttEstimatorKind {
        match self {
            RecoveryKind::NewrenoNs3 => RttEstimatorKind::Ns3,
            _ => RttEstimatorKind::Ns2,
        }
    }
}

/// How the sender measures the RTT and computes the RTO (`tcp.rtt_estimator`; tcp/rtt.rs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttEstimatorKind {
    /// ns-2's `TcpAgent`: one timed segment per round trip, counted in `timer_granularity`
    /// ticks, RTO = (SRTT + 4 RTTVAR) ticks, at least two ticks and `min_rto` (the seeds').
    Ns2,
    /// ns-3.44's `TcpSocketBase` with `RttMeanDeviation`, without timestamps: a sample from
    /// every ACK of new data (Karn's rule), in nanoseconds, RTO = max(SRTT + max(G, 4 RTTVAR),
    /// `min_rto`) with G = `timer_granularity` (ns-3's ClockGranularity).
    Ns3,
    /// Linux's (`tcp_rtt_estimator()`, `tcp_set_rto()`, `tcp_ack_update_rtt()`), without
    /// timestamps: a sample from every ACK that newly acknowledges or SACKs a segment sent once
    /// (none when it acknowledges a retransmission, Karn), RTO = SRTT + RTTVAR where RTTVAR
    /// is at least `min_rto` (Linux's TCP_RTO_MIN) and follows the largest deviation of the
    /// last round trip, rounded up to `timer_granularity` (a jiffy), doubled per timeout up to
    /// `max_rto` (tcp/rtt.rs).
    Linux,
}

/// When the retransmission timer's exponential backoff is forgotten (`tcp.rto_backoff_reset`).
/// A new RTT sample always clears it (an estimate measured after the timeout replaces the
/// backed-off one); the rules differ in what else does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackoffReset {
    /// Only an RTT sample (Karn and Partridge 1987: the backoff is kept until a segment sent
    /// after the timeout is acknowledged without ambiguity; ns-2 `newack()`: `t_backoff_ = 1`
    /// when the timed segment is acknowledged, and NewReno's `partialnewack()`; RFC 6298 §5
    /// after (5.7): a new measurement may "collapse" the backed-off RTO).
    Sample,
    /// Also an ACK that leaves nothing outstanding (Linux 2.2 with timestamps,
    /// `tcp_ack_saw_tstamp`: `if (tp->retransmits) { if (tp->packets_out == 0) { ...
    /// tp->backoff = 0; tcp_set_rto(tp); }`).
    AllAcked,
    /// Also every new ACK that restarts the timer (ns-3.44 `TcpSocketBase::NewAck(ack,
    /// resetRTO)`: `m_rto = Max(m_rtt->GetEstimate() + Max(m_clockGranularity,
    /// m_rtt->GetVariation() * 4), m_minRto)` before re-arming; every new ACK but the later
    /// partial ACKs of a NewReno recovery, `NewAck(ackNumber, m_isFirstPartialAck)`).
    NewAck,
}

#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Advertised window field (at most 65535) and the window-scale shift (0..=14): the usable
    /// receive window is `rcv_window_field << window_scale` (seed 000 §4.2.2: 65535 << 6 =
    /// 4,194,240 bytes).
    pub rcv_window_field: u16,
    pub window_scale: u8,
    /// Send buffer in bytes (`None`: unlimited). Limits the bytes sent and not acknowledged;
    /// `TcpSender::app_write` also counts written-but-unsent bytes against it.
    pub snd_buf: Option<u64>,
    /// Receive buffer in bytes (`None`: the seeds' receiver, which advertises the fixed
    /// `rcv_window_field` and whose application reads at once). With a buffer the advertised
    /// window is its free space (tcp/receiver.rs) and the application reads with
    /// `TcpReceiver::app_read`.
    pub rcv_buf: Option<u64>,
    /// Initial slow-start threshold in bytes.
    pub initial_ssthresh: u64,
    /// Initial congestion window in segments.
    pub initial_cwnd: u32,
    /// Delayed ACKs (off in the seeds: "segments are ACKed as soon as they are received").
    pub delayed_ack: bool,
    pub delack_timeout: SimTime,
    /// Silly-window-syndrome avoidance (off in the seeds).
    pub sws_avoidance: bool,
    /// A pending delayed ACK leaves at once when the host sends data on the reverse
    /// half-connection of its pair, ahead of that data: the ACK a one-connection TCP would carry
    /// on its next data segment (world: `piggyback`). Off: the two halves are independent.
    pub piggyback_acks: bool,
    /// What clears the RTO backoff besides an RTT sample ([`BackoffReset`]; the scenario's
    /// default follows the recovery, [`RecoveryKind::default_backoff_reset`]).
    pub backoff_reset: BackoffReset,
    /// The RTT estimator ([`RttEstimatorKind`]; the scenario's default follows the recovery,
    /// [`RecoveryKind::default_rtt_estimator`]).
    pub rtt_estimator: RttEstimatorKind,
    /// Retransmission-timer tick (100 ms in the seeds); with the ns-3 estimator, ns-3's clock
    /// granularity in the RTO.
    pub timer_granularity: SimTime,
    pub initial_rto: SimTime,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    /// Ask for SACK-permitted in the SYN.
    pub sack: bool,
    pub recovery: RecoveryKind,
    pub cc: CcKind,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Close with a FIN when a finite transfer has been sent.
    pub fin: bool,
    /// Slow-start restart after idle (ns-2 `slow_start_restart_`, on by default in ns-2): the
    /// retransmission timer keeps running after the last ACK, and if it expires with nothing
    /// outstanding, cwnd returns to the initial window (ssthresh kept, no backoff).
    pub slow_start_restart: bool,
    /// Compute delivery-rate samples (tcp/rate.rs) even if the congestion controller does not
    /// use them (for traces and tests; BBR turns them on itself).
    pub rate_samples: bool,
    /// The ns-2 compatibility switches (tcp/ns2.rs); the default is our behaviour.
    pub ns2: super::ns2::Ns2Compat,
    /// Linux's tail loss probe (RFC 8985 §7; docs/tcp.md, "Tail loss probe (BBR)"). It needs
    /// RACK, which only senders under a controller that keeps SACK information as Linux does
    /// have (BBR, `Cc::keeps_sack_info`): elsewhere it does nothing (the scenario refuses
    /// `tcp.tlp = true` there).
    pub tlp: bool,
}

impl TcpConfig {
    /// This configuration with the named flavour's recovery and congestion control; SACK
    /// flavours also turn `sack` on, and the RTO backoff rule and the RTT estimator follow the recovery (as the
    /// scenario's defaults do). `None` for an unknown name.
    pub fn with_flavor(mut self, name: &str) -> Option<Self> {
        let (r, c) = flavor(name)?;
        self.recovery = r;
        self.cc = c;
        self.sack = r.uses_sack();
        self.backoff_reset = r.default_backoff_reset();
        self.rtt_estimator = r.default_rtt_estimator();
        Some(self)
    }

    /// The usable receive window in bytes.
    pub fn rcv_window(&self) -> u64 {
        (self.rcv_window_field as u64) << self.window_scale
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1024,
            rcv_window_field: 65535,
            window_scale: 0,
            snd_buf: None,
            rcv_buf: None,
            initial_ssthresh: 65535,
            initial_cwnd: 1,
            delayed_ack: false,
            delack_timeout: SimTime::from_millis(100),
            sws_avoidance: false,
            piggyback_acks: false,
            backoff_reset: BackoffReset::Sample,
            rtt_estimator: RttEstimatorKind::Ns2,
            timer_granularity: SimTime::from_millis(100),
            initial_rto: SimTime::from_secs(3),
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_secs(64),
            sack: false,
            recovery: RecoveryKind::Reno,
            cc: CcKind::RenoAimd,
            dupack_threshold: 3,
            fin: false,
            slow_start_restart: true,
            rate_samples: false,
            ns2: Default::default(),
            tlp: true,
        }
    }
}
