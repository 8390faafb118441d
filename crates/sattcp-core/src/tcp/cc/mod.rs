//! Congestion control: how the window grows and how far it shrinks (ns-3's
//! `TcpCongestionOps`, Linux's `tcp_congestion_ops`). A controller never writes the window: it
//! returns decisions ([`Reduction`], a grown cwnd, a [`Control`]) that the sender applies
//! (STYLE.md).
//!
//! The hooks, in the order the sender calls them:
//!
//! | hook | when | returns |
//! |---|---|---|
//! | [`Cc::on_ack`] | an ACK of new data outside fast recovery (the recovery may veto) | the grown cwnd |
//! | [`Cc::on_rate_sample`] | every ACK after the above, with the delivery-rate sample ([`RateEvent`]), if [`Cc::uses_rate_samples`] | a [`Control`]: cwnd and/or pacing rate to apply |
//! | [`Cc::on_dupack_loss`] | fast retransmit (entry into fast recovery) | [`Reduction`] |
//! | [`Cc::on_recovery_exit`] | leaving fast recovery or the loss state of a timeout | a window to apply, or none |
//! | [`Cc::on_timeout`] | retransmission timeout with data outstanding | [`Reduction`] |
//! | [`Cc::on_idle_restart`] | the timer found the connection idle for an RTO (slow-start restart) | the cwnd to restart with |
//!
//! Reno AIMD, CUBIC and Hybla use only the classic hooks (growth and the two reductions);
//! their other hooks change nothing. Rate-based controllers use [`Cc::on_rate_sample`]: BBR
//! (`bbr.rs`) sets cwnd and a pacing rate (tcp/pacing.rs) there on every ACK; Westwood+
//! (`westwood.rs`) only measures, then uses its estimate in the reductions.

pub mod bbr;
pub mod cubic;
pub mod hybla;
pub mod hystart;
pub mod reno;
pub mod westwood;

use super::config::CcKind;
use super::rate::RateSample;
use super::recovery::CongState;
use crate::time::SimTime;

/// What a controller sees of one ACK of new data.
#[derive(Copy, Clone, Debug)]
pub struct AckSample {
    pub now: SimTime,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// The smoothed RTT after this ACK, if any sample exists.
    pub srtt: Option<SimTime>,
}

/// What a controller sees on every ACK (Linux `cong_control(sk, rs)`).
#[derive(Copy, Clone, Debug)]
pub struct RateEvent {
    pub now: SimTime,
    /// The delivery-rate sample of this ACK (check [`RateSample::is_valid`]).
    pub rs: RateSample,
    /// `C.delivered`: bytes delivered so far, this ACK included.
    pub delivered: u64,
    /// Bytes in flight after this ACK (sent, not cumulatively ACKed, not SACKed).
    pub in_flight: u64,
    /// The congestion state after this ACK.
    pub state: CongState,
    /// The smoothed RTT (the sender's coarse estimator), if any sample exists.
    pub srtt: Option<SimTime>,
}

/// What a controller decides on an ACK: fields left `None` stay as they are.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Control {
    /// The new cwnd in bytes.
    pub cwnd: Option<u64>,
    /// The new pacing rate in bytes per second (tcp/pacing.rs).
    pub pacing_rate: Option<u64>,
    /// The new ssthresh in bytes (HyStart++ ending slow start).
    pub ssthresh: Option<u64>,
}

/// The sender's congestion window and slow-start threshold, in bytes. Only the sender and,
/// during loss recovery, the recovery algorithm (window inflation) write it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

/// What a controller decides on a congestion signal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    pub ssthresh: u64,
    pub cwnd: u64,
}

/// The congestion controller of one sender (static dispatch, STYLE.md).
#[derive(Clone, Debug)]
pub enum Cc {
    RenoAimd(reno::RenoAimd),
    Cubic(cubic::Cubic),
    Hybla(hybla::Hybla),
    Bbr(Box<bbr::Bbr>),
    Westwood(westwood::Westwood),
}

impl Cc {
    pub fn new(kind: CcKind) -> Self {
        match kind {
            CcKind::RenoAimd => Cc::RenoAimd(Default::default()),
            CcKind::Cubic => Cc::Cubic(Default::default()),
            CcKind::CubicHystart => Cc::Cubic(cubic::Cubic::with_hystart()),
            CcKind::Hybla => Cc::Hybla(hybla::Hybla::default()),
            CcKind::Bbr => Cc::Bbr(Default::default()),
            CcKind::Westwood => Cc::Westwood(Default::default()),
            CcKind::WestwoodLinux => Cc::Westwood(westwood::Westwood::linux()),
        }
    }

    /// This controller with ns-2's fractional window arithmetic (tcp/ns2.rs `window_arith`;
    /// Reno AIMD only: the others keep bytes).
    pub fn with_ns2_window(self, on: bool) -> Self {
        match self {
            Cc::RenoAimd(_) if on => Cc::RenoAimd(reno::RenoAimd::ns2()),
            c => c,
        }
    }

    /// The cwnd after an ACK of new data outside loss recovery.
    #[inline]
    pub fn on_ack(&mut self, w: &Window, s: &AckSample) -> u64 {
        match self {
            Cc::RenoAimd(c) => c.on_ack(w, s.acked),
            Cc::Cubic(c) => c.on_ack(w, s),
            Cc::Hybla(c) => c.on_ack(w, s),
            Cc::Bbr(c) => c.on_ack(w),
            Cc::Westwood(c) => c.on_ack(w, s.acked),
        }
    }

    /// Whether the controller reads delivery-rate samples (the sender computes them only
    /// then, or when `TcpConfig::rate_samples` asks).
    pub fn uses_rate_samples(&self) -> bool {
        match self {
            Cc::RenoAimd(_) | Cc::Hybla(_) => false,
            Cc::Cubic(c) => c.uses_rate_samples(),
            Cc::Bbr(_) | Cc::Westwood(_) => true,
        }
    }

    /// Whether a timeout leaves ssthresh as it is where it was already reduced in this window
    /// of data (a timeout during fast recovery, or again before anything sent before the last
    /// timeout is acknowledged), as Linux's `tcp_enter_loss` does ("Reduce ssthresh if it has
    /// not yet been made inside this window") and RFC 5681 §3.1's note asks for a segment
    /// already retransmitted by the timer. True for the controllers whose reference is Linux's
    /// (CUBIC, Hybla): they computed ssthresh from the one-segment window of the first timeout,
    /// 2 segments after every repeated one; Linux's Westwood+ raises `CA_EVENT_LOSS`, which
    /// sets ssthresh from its estimate, only then. Reno AIMD keeps its recoveries' rules (ns-2's
    /// halve the window again, seeds' study; RFC 5681's FlightSize gives the same ssthresh
    /// again); BBR keeps ssthresh at every timeout, and the papers' Westwood+ sets it from its
    /// bandwidth estimate at each.
    pub fn holds_ssthresh_within_a_window(&self) -> bool {
        match self {
            Cc::Cubic(_) | Cc::Hybla(_) => true,
            Cc::Westwood(c) => c.is_linux(),
            Cc::RenoAimd(_) | Cc::Bbr(_) => false,
        }
    }

    /// Whether the SACK recoveries keep the scoreboard's SACK information until the cumulative
    /// ACK passes it, across recovery phases and timeouts (Linux; RFC 2018 §8 allows forgetting
    /// it, and ns-2's Sack1 forgot it at every new ACK outside recovery and at a timeout). True
    /// for BBR, which has no ns-2 counterpart and whose published behaviour is Linux's: it keeps
    /// its window through losses, so its windows carry hundreds of holes whose SACK blocks the
    /// receiver reports only once (issue 14). The classic controllers keep ns-2's behaviour
    /// (the seeds' study).
    pub fn keeps_sack_info(&self) -> bool {
        matches!(self, Cc::Bbr(_))
    }

    /// Every ACK, after growth, with its delivery-rate sample. The classic controllers
    /// decide nothing here.
    #[inline]
    pub fn on_rate_sample(&mut self, w: &Window, ev: &RateEvent) -> Control {
        match self {
            Cc::RenoAimd(_) | Cc::Hybla(_) => Control::default(),
            Cc::Cubic(c) => c.on_rate_sample(w, ev),
            Cc::Bbr(c) => c.on_rate_sample(w, ev),
            Cc::Westwood(c) => {
                c.on_rate_sample(ev);
                Control::default()
            }
        }
    }

    /// Fast recovery ended (`from` = `CongState::Recovery`) or the loss state of a timeout did
    /// (`Loss`): a window to apply, or `None` to keep it as the recovery left it (the classic
    /// controllers).
    pub fn on_recovery_exit(&mut self, w: &Window, from: CongState) -> Option<Reduction> {
        match self {
            Cc::RenoAimd(_) | Cc::Cubic(_) | Cc::Hybla(_) => None,
            Cc::Bbr(c) => c.on_recovery_exit(w).map(|cwnd| Reduction { ssthresh: w.ssthresh, cwnd }),
            Cc::Westwood(c) => c.on_recovery_exit(w, from),
        }
    }

    /// Linux `tcp_init_cwnd_reduction()`'s call of the controller's `ssthresh` hook when a tail
    /// loss probe repaired a loss (`tcp_process_tlp_ack()`; only BBR's senders probe): BBR
    /// saves its cwnd (`bbr_ssthresh()` -> `bbr_save_cwnd()`) and changes nothing else.
    pub fn on_cwnd_reduction(&mut self, w: &Window) {
        if let Cc::Bbr(c) = self {
            c.on_cwnd_reduction(w);
        }
    }

    /// The connection was idle for an RTO (ns-2 `slow_start_restart_`, RFC 5681 §4.1):
    /// the cwnd to restart with; `restart` is the configured initial window.
    pub fn on_idle_restart(&mut self, w: &Window, restart: u64) -> u64 {
        match self {
            Cc::RenoAimd(_) | Cc::Cubic(_) | Cc::Hybla(_) | Cc::Westwood(_) => restart,
            Cc::Bbr(c) => c.on_idle_restart(w),
        }
    }

    /// Fast retransmit: `basis` is the amount the recovery halves (ns-2: the window in whole
    /// segments; RFC 5681 (4): FlightSize).
    pub fn on_dupack_loss(&mut self, w: &Window, basis: u64) -> Reduction {
        match self {
            Cc::RenoAimd(c) => c.on_dupack_loss(w, basis),
            Cc::Cubic(c) => c.on_dupack_loss(w, basis),
            Cc::Hybla(c) => c.on_dupack_loss(w, basis),
            Cc::Bbr(c) => c.on_dupack_loss(w, basis),
            Cc::Westwood(c) => c.on_dupack_loss(w, basis),
        }
    }

    /// Retransmission timeout. `reduces`: the sender will apply the ssthresh returned (false
    /// where [`holds_ssthresh_within_a_window`](Self::holds_ssthresh_within_a_window) keeps it).
    pub fn on_timeout(&mut self, w: &Window, basis: u64, reduces: bool) -> Reduction {
        match self {
            Cc::RenoAimd(c) => c.on_timeout(w, basis),
            Cc::Cubic(c) => c.on_timeout(w, basis),
            Cc::Hybla(c) => c.on_timeout(w, basis),
            Cc::Bbr(c) => c.on_timeout(w, basis),
            Cc::Westwood(c) => c.on_timeout(w, reduces),
        }
    }
}
