//! Loss recovery: how holes are found and repaired (ns-3's `TcpRecoveryOps`). Each algorithm
//! answers three events (a new cumulative ACK, a duplicate ACK, a retransmission timeout) by
//! returning an [`Out`] that says whether to enter or leave fast recovery and what to
//! retransmit; the sender applies it and alone changes the congestion state ([`CongState`]).
//! While in fast recovery an algorithm also owns window inflation (Reno's `dupwnd`, SACK's
//! PIPE) and chooses what the sender may send ([`Gate`]). The window *reduction* itself is the
//! congestion controller's decision (`Cc::on_dupack_loss`), asked through [`Cx::reduce`].

pub mod newreno_ns2;
pub mod newreno_rfc6582;
pub mod reno;
pub mod sack_ff;
pub mod sack_rfc6675;
pub mod timeout;

use super::cc::{Cc, Reduction, Window};
use super::config::RecoveryKind;
use super::scoreboard::Scoreboard;
use crate::time::SimTime;

/// The sender's congestion state (Linux/ns-3 `TcpCongState_t`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CongState {
    /// Nothing abnormal.
    Open,
    /// Duplicate ACKs seen, fewer than the threshold.
    Disorder,
    /// Fast retransmit done; repairing holes until RECOVER is acknowledged.
    Recovery,
    /// A retransmission timeout fired; slow start until RECOVER is acknowledged.
    Loss,
}

/// What the sender lets a recovery see and change for one event.
pub struct Cx<'a> {
    pub now: SimTime,
    pub win: &'a mut Window,
    pub cc: &'a mut Cc,
    pub sb: &'a mut Scoreboard,
    /// After this ACK.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Peer's receive window in bytes.
    pub rwnd: u64,
    /// Consecutive duplicate ACKs, this one included.
    pub dupacks: u32,
    pub dup_thresh: u32,
    /// RECOVER: `snd_max` when the last fast retransmit or timeout happened.
    pub recover: u64,
    /// The last recovery was started by a timeout (ns-2 `recover_cause_ == 2`).
    pub after_timeout: bool,
    /// Bytes newly acknowledged by this ACK.
    pub acked: u64,
    pub state: CongState,
    /// Whether data beyond `snd_max` is waiting to be sent.
    pub new_data: bool,
}

impl Cx<'_> {
    pub fn mss(&self) -> u64 {
        self.win.mss
    }
    /// Bytes sent and not cumulatively acknowledged (RFC 5681 FlightSize).
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    /// The fast-retransmit test shared by every recovery (RFC 5681 (3.2) step 2; ns-2
    /// `bug_fix_`, RFC 6582 §3.2 step 2): the duplicate-ACK threshold is reached, and a timeout
    /// is not still being recovered from (the ACK must pass the RECOVER of that timeout).
    pub fn may_fast_retransmit(&self) -> bool {
        self.state != CongState::Recovery && self.dupacks == self.dup_thresh && (!self.after_timeout || self.snd_una > self.recover)
    }
    /// ns-2's window in whole segments: `window() = min(int(cwnd_) + extra, int(wnd_))`.
    pub fn ns2_window(&self, extra: u64) -> u64 {
        let mss = self.mss();
        ((self.win.cwnd + extra).min(self.rwnd) / mss) * mss
    }
    /// Asks the congestion controller how far to reduce on a fast retransmit, halving `basis`.
    pub fn reduce(&mut self, basis: u64) -> Reduction {
        self.cc.on_dupack_loss(self.win, basis)
    }
    /// ns-2 `closecwnd(1)` on a fast retransmit: the controller's reduction of the window,
    /// rounded down to whole segments as ns-2 counted windows in packets (`cwnd_ = window()/2`).
    pub fn reduce_ns2(&mut self) -> Reduction {
        let basis = self.ns2_window(0);
        let r = self.reduce(basis);
        let mss = self.mss();
        let floor = |b: u64| (b / mss).max(super::cc::reno::MIN_SSTHRESH_SEGMENTS) * mss;
        Reduction { ssthresh: floor(r.ssthresh), cwnd: floor(r.cwnd) }
    }
}

/// What happens to the retransmission timer after an ACK.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TimerAction {
    /// New data acknowledged: restart it (or stop it if nothing is outstanding); a duplicate
    /// ACK leaves it alone (ns-2 `newtimer()`, RFC 6298 (5.3)).
    #[default]
    Default,
    Restart,
    /// Leave it running even though new data was acknowledged (RFC 6582 §3.2 step 5: only
    /// the first partial ACK resets the timer).
    Keep,
}

/// A recovery's answer to one event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Out {
    /// Enter fast recovery (counts a fast retransmit; RECOVER := snd_max).
    pub enter: bool,
    /// Leave fast recovery.
    pub exit: bool,
    /// Retransmit the segment starting here now, whatever the window.
    pub retransmit: Option<u64>,
    /// Send this many new segments now, whatever the window (ns-2.1b3 NewReno's flywheel).
    pub force_new: u32,
    pub timer: TimerAction,
    /// Let the congestion controller grow cwnd for this ACK (preset by the sender: a new ACK
    /// outside fast recovery).
    pub grow: bool,
    /// Take an RTT sample from this ACK (preset true); false = ns-2's partial-ACK handling,
    /// which only clears the backoff.
    pub rtt_sample: bool,
    /// Do not reset the duplicate-ACK counter on this new ACK (ns-2 NewReno's partial ACKs).
    pub keep_dupacks: bool,
}

/// What the sender may send now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Send in sequence from `snd_nxt` while `snd_nxt + len - snd_una <= min(cwnd + extra, rwnd)`.
    Window { extra: u64 },
    /// Ask [`Recovery::pick`] for each segment (SACK recoveries in fast recovery).
    Pipe,
    /// Send nothing (ns-2.1b3 NewReno sends only forced segments in fast recovery).
    Closed,
}

/// One segment chosen by a pipe-gated recovery.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Retransmit the scoreboard entry starting here.
    Hole(u64),
    /// Send the next new segment.
    New,
}

/// The loss recovery of one sender (static dispatch, STYLE.md).
#[derive(Clone, Debug)]
pub enum Recovery {
    Timeout(timeout::TimeoutOnly),
    Reno(reno::Reno),
    NewrenoNs2(newreno_ns2::NewrenoNs2),
    NewrenoRfc6582(newreno_rfc6582::NewrenoRfc6582),
    SackFallFloyd(sack_ff::SackFallFloyd),
    SackRfc6675(sack_rfc6675::SackRfc6675),
}

macro_rules! dispatch {
    ($self:ident, $r:ident => $e:expr) => {
        match $self {
            Recovery::Timeout($r) => $e,
            Recovery::Reno($r) => $e,
            Recovery::NewrenoNs2($r) => $e,
            Recovery::NewrenoRfc6582($r) => $e,
            Recovery::SackFallFloyd($r) => $e,
            Recovery::SackRfc6675($r) => $e,
        }
    };
}

impl Recovery {
    pub fn new(kind: RecoveryKind) -> Self {
        match kind {
            RecoveryKind::Timeout => Recovery::Timeout(Default::default()),
            RecoveryKind::Reno => Recovery::Reno(Default::default()),
            RecoveryKind::NewrenoNs2 => Recovery::NewrenoNs2(Default::default()),
            RecoveryKind::NewrenoRfc6582 => Recovery::NewrenoRfc6582(Default::default()),
            RecoveryKind::SackFallFloyd => Recovery::SackFallFloyd(Default::default()),
            RecoveryKind::SackRfc6675 => Recovery::SackRfc6675(Default::default()),
        }
    }

    /// An ACK that advanced `snd_una` (already applied to `cx` and the scoreboard).
    #[inline]
    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        dispatch!(self, r => r.on_new_ack(cx, out))
    }
    /// A duplicate ACK (`cx.dupacks` already counts it; its SACK blocks are applied).
    #[inline]
    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        dispatch!(self, r => r.on_dupack(cx, out))
    }
    /// The retransmission timer fired with data outstanding. Returns the amount the
    /// congestion controller halves (ns-2: `window()`, RFC 5681 (4): FlightSize); the sender
    /// then applies the controller's timeout reduction and goes back to `snd_una`.
    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        dispatch!(self, r => r.on_timeout(cx))
    }
    pub fn gate(&self, state: CongState, dupacks: u32) -> Gate {
        dispatch!(self, r => r.gate(state, dupacks))
    }
    /// The next segment to send under [`Gate::Pipe`], or `None` to stop.
    pub fn pick(&mut self, cx: &Cx) -> Option<Pick> {
        match self {
            Recovery::SackFallFloyd(r) => r.pick(cx),
            Recovery::SackRfc6675(r) => r.pick(cx),
            _ => None,
        }
    }
    /// A segment chosen by [`Recovery::pick`] was sent.
    pub fn on_pipe_sent(&mut self, len: u64) {
        if let Recovery::SackFallFloyd(r) = self {
            r.on_pipe_sent(len)
        }
    }
    /// After a timeout, whether go-back-N skips segments SACKed since (RFC 6675 §5.1).
    pub fn skips_sacked_after_timeout(&self) -> bool {
        matches!(self, Recovery::SackRfc6675(_))
    }
    /// Extra window the recovery currently grants (ns-2 `dupwnd_`), for reporting.
    pub fn inflation(&self) -> u64 {
        match self {
            Recovery::Reno(r) => r.dupwnd,
            Recovery::NewrenoNs2(r) => r.dupwnd,
            _ => 0,
        }
    }
}
