//! Loss recovery: how holes are found and repaired (ns-3's `TcpRecoveryOps`). Each algorithm
//! answers three events (a new cumulative ACK, a duplicate ACK, a retransmission timeout) by
//! returning an [`Out`] that says whether to enter or leave fast recovery and what to
//! retransmit; the sender applies it and alone changes the congestion state ([`CongState`]).
//! While in fast recovery an algorithm also owns window inflation (Reno's `dupwnd`, SACK's
//! PIPE) and chooses what the sender may send ([`Gate`]). The window *reduction* itself is the
//! congestion controller's decision (`Cc::on_dupack_loss`), asked through [`Cx::reduce`].

pub mod newreno_ns2;
pub mod newreno_ns3;
pub mod newreno_rfc6582;
pub mod reno;
pub mod sack_ff;
pub mod sack_rfc6675;
pub mod tahoe;
pub mod timeout;

use super::cc::{Cc, Reduction, Window};
use super::config::RecoveryKind;
use super::ns2::{BugFix, Ns2Compat};
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
    /// The ns-2 compatibility switches (tcp/ns2.rs).
    pub ns2: &'a Ns2Compat,
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
        self.may_fast_retransmit_ns2(true)
    }
    /// [`may_fast_retransmit`](Self::may_fast_retransmit) under the `bug_fix` switch
    /// (tcp/ns2.rs). `recover_lives_on` says whether RECOVER set by a fast retransmit still
    /// blocks after the recovery ended (ns-2 Tahoe, Reno, NewReno); ns-2's Sack1 clears it
    /// (`recover_ = 0`) when its recovery ends, so only a timeout's RECOVER blocks.
    pub fn may_fast_retransmit_ns2(&self, recover_lives_on: bool) -> bool {
        if self.state == CongState::Recovery || self.dupacks != self.dup_thresh {
            return false;
        }
        let recovered = self.snd_una > self.recover;
        match self.ns2.bug_fix {
            BugFix::TimeoutOnly => !self.after_timeout || recovered,
            BugFix::Ns3 => !self.after_timeout || self.snd_una >= self.recover,
            BugFix::Off => true,
            // ns-2 `dupack_action()`: `recovered || (bugfix_ss_ && highest_ack_ == 0)`, the
            // latter letting the first data packet be fast-retransmitted.
            BugFix::On => recovered || self.snd_una <= 1 || (!recover_lives_on && !self.after_timeout),
        }
    }
    /// ns-2 `send_one()` (`singledup_`, RFC 3042 limited transmit) on the first and second
    /// duplicate ACKs: one more segment in sequence if `t_seqno_ <= highest_ack_ + wnd_`,
    /// the application has data, and `t_seqno_ <= highest_ack_ + cwnd_ + dupacks_`.
    pub fn limited_transmit(&self, out: &mut Out) {
        if !self.ns2.singledup || self.dupacks == 0 || self.dupacks >= self.dup_thresh {
            return;
        }
        let mss = self.mss();
        let after = self.snd_nxt + mss - self.snd_una;
        let data = self.new_data || self.snd_nxt < self.snd_max;
        if data && after <= self.rwnd && after <= self.win.cwnd + self.dupacks as u64 * mss {
            out.force_new = 1;
        }
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
        if self.ns2.window_arith {
            // ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`: `cwnd_ = halfwin` with no
            // floor (only `ssthresh_` is raised to 2): a window of 3 leaves cwnd = 1. (ns-2
            // would even reach 0 from a window of 1; we keep one segment.)
            if self.ns2.precision_reduce {
                // `precisionReduce_`: `halfwin = windowd() / 2`, the fractional window.
                let windowd = self.win.cwnd.min(self.rwnd);
                return Reduction { ssthresh: floor(r.ssthresh), cwnd: (windowd / 2).max(mss) };
            }
            return Reduction { ssthresh: floor(r.ssthresh), cwnd: (basis / 2 / mss).max(1) * mss };
        }
        Reduction { ssthresh: floor(r.ssthresh), cwnd: floor(r.cwnd) }
    }
    /// Reno-style window inflation on a duplicate ACK (RFC 2581 (3.2) steps 3-4): the extra
    /// window is the threshold's worth of segments on the third duplicate ACK (ns-2 sets
    /// `dupwnd_ = NUMDUPACKS` even when the fast retransmit is suppressed), then one segment
    /// per further duplicate ACK.
    pub fn inflate(&self, dupwnd: &mut u64, in_recovery: bool) {
        // ns-2 `exitFastRetrans_`: only a recovery actually entered is inflated.
        if self.ns2.exit_fast_retrans && !in_recovery {
            return;
        }
        if self.dupacks == self.dup_thresh {
            *dupwnd = self.dup_thresh as u64 * self.mss();
        } else if self.dupacks > self.dup_thresh {
            *dupwnd += self.mss();
        }
    }
    /// Enters fast retransmit as ns-2's Reno, NewReno and SACK agents do (RFC 2581 (3.2)
    /// steps 1-3, ns-2 `closecwnd(1)`): applies [`reduce_ns2`](Self::reduce_ns2) to the window,
    /// retransmits the first unacknowledged segment and restarts the timer. Returns the
    /// reduction applied.
    pub fn fast_retransmit_ns2(&mut self, out: &mut Out) -> Reduction {
        let r = self.reduce_ns2();
        self.win.ssthresh = r.ssthresh;
        self.win.cwnd = r.cwnd;
        out.enter = true;
        out.retransmit = Some(self.snd_una);
        out.timer = TimerAction::Restart;
        r
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
    /// Tahoe's fast retransmit (ns-2 `Agent/TCP` `dupack_action()`, the window already cut
    /// by the recovery): RECOVER = highest sent, go back to `snd_una` in slow start as after a
    /// timeout (`reset_rtx_timer(0, 0)`: timer restarted, not backed off, timing stopped).
    pub go_back_n: bool,
}

/// What the sender may send now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Send in sequence from `snd_nxt` while `snd_nxt + len - snd_una <= min(cwnd + extra, rwnd)`.
    Window { extra: u64 },
    /// As `Window`, at most `max` segments for this event (ns-2 `send_much(0, 0, maxburst)`).
    Burst { extra: u64, max: u32 },
    /// Ask [`Recovery::pick`] for each segment (SACK recoveries in fast recovery).
    Pipe,
    /// Send nothing (ns-2.1b3 NewReno sends only forced segments in fast recovery).
    Closed,
}

impl Gate {
    /// The SACK recoveries' gate: PIPE decides during fast recovery, the window otherwise.
    pub fn pipe_in_recovery(state: CongState) -> Gate {
        if state == CongState::Recovery {
            Gate::Pipe
        } else {
            Gate::Window { extra: 0 }
        }
    }
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
    Tahoe(tahoe::Tahoe),
    Reno(reno::Reno),
    NewrenoNs2(newreno_ns2::NewrenoNs2),
    NewrenoRfc6582(newreno_rfc6582::NewrenoRfc6582),
    NewrenoNs3(newreno_ns3::NewrenoNs3),
    SackFallFloyd(sack_ff::SackFallFloyd),
    SackRfc6675(sack_rfc6675::SackRfc6675),
}

macro_rules! dispatch {
    ($self:ident, $r:ident => $e:expr) => {
        match $self {
            Recovery::Timeout($r) => $e,
            Recovery::Tahoe($r) => $e,
            Recovery::Reno($r) => $e,
            Recovery::NewrenoNs2($r) => $e,
            Recovery::NewrenoRfc6582($r) => $e,
            Recovery::NewrenoNs3($r) => $e,
            Recovery::SackFallFloyd($r) => $e,
            Recovery::SackRfc6675($r) => $e,
        }
    };
}

impl Recovery {
    pub fn new(kind: RecoveryKind) -> Self {
        match kind {
            RecoveryKind::Timeout => Recovery::Timeout(Default::default()),
            RecoveryKind::Tahoe => Recovery::Tahoe(Default::default()),
            RecoveryKind::Reno => Recovery::Reno(Default::default()),
            RecoveryKind::NewrenoNs2 => Recovery::NewrenoNs2(Default::default()),
            RecoveryKind::NewrenoRfc6582 => Recovery::NewrenoRfc6582(Default::default()),
            RecoveryKind::NewrenoNs3 => Recovery::NewrenoNs3(Default::default()),
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
    /// RACK found `len` bytes of retransmissions lost during fast recovery (tcp/rack.rs, BBR
    /// only): Fall & Floyd's PIPE counts them out (RFC 6675's `SetPipe()` recomputes itself from
    /// the scoreboard's marks at its next update).
    pub fn on_retransmission_lost(&mut self, len: u64, mss: u64) {
        if let Recovery::SackFallFloyd(r) = self {
            r.on_retransmission_lost(len, mss)
        }
    }
    /// Under BBR, fast recovery once a segment is marked lost (Linux `tcp_time_to_recover()`;
    /// `SackFallFloyd::enter_on_lost`), from RACK's reordering timer.
    pub fn enter_on_lost(&mut self, cx: &mut Cx, out: &mut Out) {
        if let Recovery::SackFallFloyd(r) = self {
            r.enter_on_lost(cx, out)
        }
    }
    /// A segment chosen by [`Recovery::pick`] was sent.
    pub fn on_pipe_sent(&mut self, len: u64) {
        if let Recovery::SackFallFloyd(r) = self {
            r.on_pipe_sent(len)
        }
    }
    /// The recovery's estimate of the bytes in flight during fast recovery (ns-2's PIPE in
    /// segments, RFC 6675 `SetPipe()`), or `None` for the recoveries that keep none.
    pub fn pipe_bytes(&self, mss: u64) -> Option<u64> {
        match self {
            Recovery::SackFallFloyd(r) => Some(r.pipe.max(0) as u64 * mss),
            Recovery::SackRfc6675(r) => Some(r.pipe()),
            _ => None,
        }
    }
    /// After a timeout, whether go-back-N skips segments SACKed since (RFC 6675 §5.1).
    pub fn skips_sacked_after_timeout(&self) -> bool {
        matches!(self, Recovery::SackRfc6675(_))
    }
    /// Whether, outside recovery, an ACK counts as a duplicate only if its SACK blocks report
    /// data not SACKed before: RFC 6675 §2's definition of a duplicate acknowledgment (a
    /// duplicate caused by a needlessly retransmitted segment, e.g. go-back-N resending data
    /// received before a timeout, does not count). The other recoveries take RFC 5681's
    /// (ns-2 Sack1's rule is `tcp.ns2.sack_dupack_needs_news`).
    pub fn dupack_needs_sack_news(&self) -> bool {
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

/// Each recovery driven against a bare window and scoreboard, without a network: 20 segments
/// of 1000 bytes outstanding ([1, 20001)), cwnd 20 segments.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::SackBlock;
    use crate::tcp::config::CcKind;

    const MSS: u64 = 1000;

    struct Bare {
        rec: Recovery,
        win: Window,
        cc: Cc,
        sb: Scoreboard,
        snd_una: u64,
        snd_max: u64,
        dupacks: u32,
        recover: u64,
        /// The last RECOVER was a timeout's (the sender's `after_timeout`).
        after_timeout: bool,
        state: CongState,
        ns2: Ns2Compat,
    }

    fn bare(kind: RecoveryKind) -> Bare {
        let mut sb = Scoreboard::default();
        for i in 0..20 {
            sb.push(1 + i * MSS, 1 + (i + 1) * MSS, false, SimTime::ZERO);
        }
        Bare { rec: Recovery::new(kind), win: Window { cwnd: 20 * MSS, ssthresh: 1 << 30, mss: MSS }, cc: Cc::new(CcKind::RenoAimd), sb, snd_una: 1, snd_max: 20 * MSS + 1, dupacks: 0, recover: 0, after_timeout: false, state: CongState::Open, ns2: Ns2Compat::default() }
    }

    impl Bare {
        fn cx(&mut self, acked: u64) -> Cx<'_> {
            Cx { now: SimTime::ZERO, win: &mut self.win, cc: &mut self.cc, sb: &mut self.sb, snd_una: self.snd_una, snd_nxt: self.snd_max, snd_max: self.snd_max, rwnd: 1 << 30, dupacks: self.dupacks, dup_thresh: 3, recover: self.recover, after_timeout: self.after_timeout, acked, state: self.state, new_data: true, ns2: &self.ns2 }
        }
        fn settle(&mut self, o: &Out) {
            if o.enter {
                self.state = CongState::Recovery;
                self.recover = self.snd_max;
            }
            if o.exit {
                self.state = CongState::Open;
            }
        }
        /// A duplicate ACK SACKing segment `sacked` (index), if given.
        fn dup(&mut self, sacked: Option<u64>) -> Out {
            if let Some(i) = sacked {
                self.sb.sack(&[SackBlock { start: 1 + i * MSS, end: 1 + (i + 1) * MSS }]);
            }
            if self.cc.keeps_sack_info() && self.state != CongState::Recovery && self.sb.sacked_bytes() >= 3 * MSS {
                // The sender's RACK under BBR (tcp/rack.rs): with three segments SACKed its
                // reordering window is zero, so every hole sent before them is lost.
                self.sb.mark_holes_lost();
            }
            self.dupacks += 1;
            let mut o = Out { rtt_sample: true, ..Default::default() };
            let (mut rec, mut cx) = (self.rec.clone(), self.cx(0));
            rec.on_dupack(&mut cx, &mut o);
            self.rec = rec;
            self.settle(&o);
            o
        }
        fn ack(&mut self, ack: u64) -> Out {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            self.sb.ack(ack);
            let mut o = Out { rtt_sample: true, grow: self.state != CongState::Recovery, ..Default::default() };
            let (mut rec, mut cx) = (self.rec.clone(), self.cx(acked));
            rec.on_new_ack(&mut cx, &mut o);
            self.rec = rec;
            if !o.keep_dupacks {
                self.dupacks = 0;
            }
            self.settle(&o);
            o
        }
        fn pick(&mut self) -> Option<Pick> {
            let mut rec = self.rec.clone();
            let p = rec.pick(&self.cx(0));
            self.rec = rec;
            p
        }
    }

    #[test]
    fn timeout_only_ignores_duplicates() {
        let mut b = bare(RecoveryKind::Timeout);
        for _ in 0..10 {
            assert_eq!(b.dup(None), Out { rtt_sample: true, ..Default::default() });
        }
        assert_eq!(b.win.cwnd, 20 * MSS);
    }

    /// A timeout at snd_max = 20001, then go-back-N's needless retransmissions draw three
    /// duplicates acknowledging exactly 20001, everything sent before the timeout.
    #[test]
    fn bug_fix_ns3_passes_a_timeouts_recover_once_everything_before_it_is_acknowledged() {
        let mut b = bare(RecoveryKind::NewrenoNs2);
        (b.recover, b.snd_max, b.dupacks) = (20 * MSS + 1, 30 * MSS + 1, 3);
        for (bug_fix, at_recover) in [(BugFix::TimeoutOnly, false), (BugFix::On, false), (BugFix::Ns3, true)] {
            b.ns2.bug_fix = bug_fix;
            for (snd_una, want) in [(20 * MSS, false), (20 * MSS + 1, at_recover), (20 * MSS + 2, true)] {
                b.snd_una = snd_una;
                let mut cx = b.cx(0);
                cx.after_timeout = true;
                assert_eq!(cx.may_fast_retransmit(), want, "{bug_fix:?}, snd_una {snd_una}");
            }
        }
    }

    /// ns-2 `bugFix_` on: a fast retransmit's RECOVER still blocks Tahoe, Reno and NewReno
    /// (`recover_lives_on`), not Sack1, which clears it when its recovery ends; a timeout's
    /// RECOVER blocks both; the first data packet may always be fast-retransmitted.
    #[test]
    fn bug_fix_on_blocks_before_a_fast_retransmits_recover_only_where_recover_lives_on() {
        let mut b = bare(RecoveryKind::SackFallFloyd);
        b.ns2.bug_fix = BugFix::On;
        (b.recover, b.snd_una, b.dupacks) = (20 * MSS + 1, 5 * MSS + 1, 3);
        let cx = b.cx(0);
        assert_eq!((cx.may_fast_retransmit_ns2(true), cx.may_fast_retransmit_ns2(false)), (false, true));
        let mut cx = b.cx(0);
        cx.after_timeout = true;
        assert_eq!((cx.may_fast_retransmit_ns2(true), cx.may_fast_retransmit_ns2(false)), (false, false));
        b.snd_una = 1;
        let mut cx = b.cx(0);
        cx.after_timeout = true;
        assert_eq!((cx.may_fast_retransmit_ns2(true), cx.may_fast_retransmit_ns2(false)), (true, true));
    }

    /// ns-2 `singledup_`: on the first duplicate ACK one more segment goes out in sequence if
    /// the application has data or, with none, if `snd_nxt` is below `snd_max` (after a
    /// go-back-N there is sent data to send again).
    #[test]
    fn limited_transmit_without_new_data_sends_only_below_snd_max() {
        let mut b = bare(RecoveryKind::Reno);
        b.ns2.singledup = true;
        b.dupacks = 1;
        for (snd_nxt, want) in [(5 * MSS + 1, 1), (20 * MSS + 1, 0)] {
            let mut cx = b.cx(0);
            (cx.new_data, cx.snd_nxt) = (false, snd_nxt);
            let mut o = Out::default();
            cx.limited_transmit(&mut o);
            assert_eq!(o.force_new, want, "snd_nxt {snd_nxt}, snd_max 20001");
        }
    }

    /// What the sender's effective window adds in fast recovery (ns-2's `dupwnd_`): ns-2
    /// NewReno inflates as Reno does, the threshold's worth on entering, then one segment per
    /// duplicate; the others grant none.
    #[test]
    fn newreno_ns2_reports_its_inflation_as_reno_does() {
        let mut b = bare(RecoveryKind::NewrenoNs2);
        for _ in 0..3 {
            b.dup(None);
        }
        assert_eq!(b.rec.inflation(), 3 * MSS);
        b.dup(None);
        assert_eq!(b.rec.inflation(), 4 * MSS);
        let mut b = bare(RecoveryKind::NewrenoRfc6582);
        for _ in 0..4 {
            b.dup(None);
        }
        assert_eq!((b.state, b.rec.inflation()), (CongState::Recovery, 0), "RFC 6582 inflates cwnd itself");
    }

    /// The bytes in flight a rate-based controller sees in fast recovery: the SACK recoveries'
    /// PIPE (ns-2 Sack1 counts segments), none for the others (the sender then counts).
    #[test]
    fn pipe_bytes_is_the_sack_recoveries_pipe_in_bytes() {
        let mut b = bare(RecoveryKind::SackFallFloyd);
        for i in 1..=3 {
            b.dup(Some(i));
        }
        assert_eq!(b.rec.pipe_bytes(MSS), Some(17 * MSS), "PIPE = 20 - 3 segments");
        let mut b = bare(RecoveryKind::SackRfc6675);
        b.sb.sack(&[SackBlock { start: 1001, end: 3001 }]);
        assert!(b.dup(Some(3)).enter);
        b.sb.on_retransmit(1, SimTime::ZERO);
        b.dup(Some(5));
        assert_eq!(b.rec.pipe_bytes(MSS), Some(16 * MSS), "15 unSACKed segments not lost + the retransmission");
        let mut b = bare(RecoveryKind::NewrenoNs2);
        for _ in 0..3 {
            b.dup(None);
        }
        assert_eq!((b.state, b.rec.pipe_bytes(MSS)), (CongState::Recovery, None));
    }

    /// RFC 6675 §5.1: after a timeout only the RFC 6675 recovery skips SACKed segments in its
    /// go-back-N; the others (ns-2 Sack1 included) resend them.
    #[test]
    fn only_rfc6675_skips_sacked_segments_after_a_timeout() {
        use RecoveryKind::*;
        let skipping: Vec<RecoveryKind> = [Timeout, Tahoe, Reno, NewrenoNs2, NewrenoRfc6582, NewrenoNs3, SackFallFloyd, SackRfc6675].into_iter().filter(|&k| Recovery::new(k).skips_sacked_after_timeout()).collect();
        assert_eq!(skipping, [SackRfc6675]);
    }

    #[test]
    fn reno_inflates_per_duplicate_and_deflates_on_new_ack() {
        let mut b = bare(RecoveryKind::Reno);
        assert!(!b.dup(None).enter);
        b.dup(None);
        let o = b.dup(None);
        assert!(o.enter);
        assert_eq!(o.retransmit, Some(1));
        assert_eq!(o.timer, TimerAction::Restart);
        assert_eq!((b.win.cwnd, b.win.ssthresh, b.rec.inflation()), (10 * MSS, 10 * MSS, 3 * MSS));
        b.dup(None);
        assert_eq!(b.rec.inflation(), 4 * MSS);
        // Any new ACK ends fast recovery (RFC 2581 (3.2) step 5), even a partial one.
        let o = b.ack(5001);
        assert!(o.exit && o.grow && o.retransmit.is_none());
        assert_eq!(b.rec.inflation(), 0);
    }

    #[test]
    fn newreno_ns2_partial_ack_retransmits_and_keeps_the_flywheel() {
        let mut b = bare(RecoveryKind::NewrenoNs2);
        for _ in 0..3 {
            b.dup(None);
        }
        assert_eq!(b.state, CongState::Recovery);
        assert_eq!(b.rec.gate(b.state, b.dupacks), Gate::Closed, "nothing sent by the window in the phase");
        assert_eq!(b.dup(None).force_new, 0, "4th duplicate");
        assert_eq!(b.dup(None).force_new, 1, "5th duplicate: one new segment");
        assert_eq!(b.dup(None).force_new, 0);
        assert_eq!(b.dup(None).force_new, 1);
        let o = b.ack(5001);
        assert_eq!(o, Out { retransmit: Some(5001), timer: TimerAction::Restart, keep_dupacks: true, ..Default::default() });
        assert_eq!((b.win.cwnd, b.rec.inflation(), b.dupacks), (10 * MSS, 0, 7));
        assert_eq!(b.dup(None).force_new, 0, "8th duplicate");
        assert_eq!(b.dup(None).force_new, 1, "the rhythm goes on across the partial ACK");
        let o = b.ack(20001);
        assert!(o.exit && o.grow && o.retransmit.is_none());
        assert_eq!(b.rec.gate(b.state, b.dupacks), Gate::Window { extra: 0 });
    }

    /// ns-2 NewReno's flywheel (`newreno_changes_ 1`) is in the branch `dupacks_ > numdupacks_
    /// && (!exitFastRetrans_ || last_cwnd_action_ == CWND_ACTION_DUPACK)`: with
    /// `exitFastRetrans_` only a fast recovery actually entered sends the new segment; without
    /// it (ns-2.1b3) the 5th duplicate sends one even when `bugFix_` refused the fast retransmit.
    #[test]
    fn newreno_ns2_flywheel_without_a_recovery_only_without_exit_fast_retrans() {
        for (exit_fast_retrans, refused, want) in [(false, false, 1), (true, false, 1), (false, true, 1), (true, true, 0)] {
            let mut b = bare(RecoveryKind::NewrenoNs2);
            b.ns2.exit_fast_retrans = exit_fast_retrans;
            if refused {
                // bugFix_: three duplicates below a fast retransmit's RECOVER do nothing.
                b.ns2.bug_fix = BugFix::On;
                (b.snd_una, b.recover) = (5 * MSS + 1, 20 * MSS + 1);
            }
            let forced: Vec<u32> = (0..5).map(|_| b.dup(None).force_new).collect();
            assert_eq!(b.state == CongState::Recovery, !refused);
            assert_eq!(forced, [0, 0, 0, 0, want], "exitFastRetrans_ {exit_fast_retrans}, fast retransmit refused {refused}");
        }
    }

    /// ns-2 NewReno `exit_recovery_fix_`: the ACK that ends fast recovery sets `cwnd_ =
    /// min(ssthresh_, maxseq_ - seqno + 1)` (the packets outstanding plus one), but only inside
    /// `if (dupwnd_ > 0)`: after a partial ACK has zeroed `dupwnd_` cwnd stays ssthresh.
    #[test]
    fn newreno_ns2_exit_recovery_fix_caps_cwnd_at_the_outstanding_only_while_inflated() {
        for (fix, partial_first, want) in [(true, false, 6 * MSS), (true, true, 10 * MSS), (false, false, 10 * MSS)] {
            let mut b = bare(RecoveryKind::NewrenoNs2);
            b.ns2.exit_recovery_fix = fix;
            for _ in 0..3 {
                b.dup(None);
            }
            assert_eq!((b.win.ssthresh, b.rec.inflation()), (10 * MSS, 3 * MSS));
            if partial_first {
                b.ack(5 * MSS + 1);
                assert_eq!(b.rec.inflation(), 0, "ns-2 zeroes dupwnd_ on a partial ACK");
            }
            // Five new segments went out during the recovery: 5 outstanding beyond RECOVER.
            b.snd_max = 25 * MSS + 1;
            let o = b.ack(20 * MSS + 1);
            assert!(o.exit && o.grow);
            assert_eq!(b.win.cwnd, want, "exit_recovery_fix {fix}, partial ACK first {partial_first}: min(10, 5 + 1) segments only with dupwnd_ > 0");
        }
    }

    /// ns-2 NewReno with `partial_window_deflation_`, in recovery after five duplicate ACKs
    /// (cwnd 10 segments, `dupwnd_` 5).
    fn ns2_deflating_after_five_duplicates() -> Bare {
        let mut b = bare(RecoveryKind::NewrenoNs2);
        b.ns2.partial_window_deflation = true;
        for _ in 0..5 {
            b.dup(None);
        }
        b
    }

    /// ns-2 NewReno `partial_window_deflation_` (`partialnewack()`): a partial ACK of `deflate`
    /// packets takes `deflate - 1` off `dupwnd_` if `dupwnd_ > deflate`; otherwise cwnd loses
    /// `deflate - dupwnd_`, at least 1 packet remains, and `dupwnd_ = 1` flags the recovery.
    #[test]
    fn newreno_ns2_partial_window_deflation_takes_from_dupwnd_then_from_cwnd() {
        let mut b = ns2_deflating_after_five_duplicates();
        assert_eq!((b.win.cwnd, b.rec.inflation()), (10 * MSS, 5 * MSS));
        let o = b.ack(2 * MSS + 1);
        assert_eq!((o.retransmit, o.timer), (Some(2 * MSS + 1), TimerAction::Restart));
        assert_eq!((b.win.cwnd, b.rec.inflation()), (10 * MSS, 4 * MSS), "dupwnd_ 5 - (2 - 1)");
        b.ack(8 * MSS + 1);
        assert_eq!((b.win.cwnd, b.rec.inflation()), (8 * MSS, MSS), "cwnd_ 10 - (6 - 4), dupwnd_ = 1");
        b.ack(18 * MSS + 1);
        assert_eq!((b.win.cwnd, b.rec.inflation()), (MSS, MSS), "cwnd_ 8 - (10 - 1) < 1: cwnd_ = 1");
    }

    #[test]
    fn newreno_ns2_partial_window_deflation_of_less_than_a_segment_inflates_by_the_difference() {
        // ns-2 counts whole packets; in bytes a partial ACK of half a segment deflates by
        // (acked - 1 packet) < 0, i.e. adds the other half (was an overflow panic in debug builds).
        let mut b = ns2_deflating_after_five_duplicates();
        b.ack(MSS / 2 + 1);
        assert_eq!((b.win.cwnd, b.rec.inflation()), (10 * MSS, 5 * MSS + MSS / 2), "dupwnd_ 5 - (1/2 - 1)");
    }

    #[test]
    fn newreno_rfc6582_partial_window_deflation_and_impatient_timer() {
        let mut b = bare(RecoveryKind::NewrenoRfc6582);
        for _ in 0..3 {
            b.dup(None);
        }
        assert_eq!((b.win.cwnd, b.win.ssthresh), (13 * MSS, 10 * MSS), "ssthresh + 3 SMSS");
        b.dup(None);
        assert_eq!(b.win.cwnd, 14 * MSS);
        let o = b.ack(4001);
        assert_eq!((o.retransmit, o.timer), (Some(4001), TimerAction::Restart));
        assert_eq!(b.win.cwnd, 11 * MSS, "14 - 4 acknowledged + 1");
        let o = b.ack(6001);
        assert_eq!((o.retransmit, o.timer), (Some(6001), TimerAction::Keep), "only the first partial ACK resets the timer");
        let o = b.ack(20001);
        assert!(o.exit && !o.grow);
        assert_eq!(b.win.cwnd, 2 * MSS, "min(ssthresh, max(FlightSize, SMSS) + SMSS) with nothing in flight");
    }

    #[test]
    fn newreno_ns3_guessed_marks_outrun_the_recovery_and_start_the_next_on_one_duplicate() {
        let mut b = bare(RecoveryKind::NewrenoNs3);
        b.dup(None);
        b.dup(None);
        let o = b.dup(None);
        assert_eq!((o.enter, o.retransmit, o.timer), (true, Some(1), TimerAction::Default), "the timer keeps running");
        assert_eq!((b.win.ssthresh, b.win.cwnd), (9500, 9500), "(20 segments - 1 marked) / 2");
        assert_eq!(b.rec.gate(b.state, 3), Gate::Window { extra: MSS }, "one mark on entering");
        // Ten new segments go out during the recovery; 25 more duplicates mark 25 segments,
        // past RECOVER (20001).
        b.snd_max = 30 * MSS + 1;
        for _ in 0..25 {
            b.dup(None);
        }
        assert_eq!(b.rec.gate(b.state, 28), Gate::Window { extra: 26 * MSS });
        let o = b.ack(2 * MSS + 1);
        assert_eq!((o.retransmit, o.timer, o.exit), (Some(2001), TimerAction::Restart, false), "first partial ACK");
        let o = b.ack(3 * MSS + 1);
        assert_eq!((o.retransmit, o.timer), (Some(3001), TimerAction::Keep), "later partial ACKs leave the timer");
        // The full ACK: 25 marks cover 4001..29000; 16 go with the 17 segments acknowledged,
        // the one on the new head (20001) moves on to 29001 and marks the head lost.
        let o = b.ack(20 * MSS + 1);
        assert!(o.exit && o.grow);
        assert_eq!(o.retransmit, Some(20001), "the head marked lost is sent at once");
        assert_eq!(b.rec.gate(b.state, 0), Gate::Window { extra: 9 * MSS }, "marks outlive the recovery");
        // One duplicate (a needless retransmission's) finds the head lost: a new recovery.
        let o = b.dup(None);
        assert!(o.enter);
        assert_eq!(b.win.ssthresh, 2 * MSS, "(10 segments - 9 marked) / 2, at least 2; no room for a 10th mark");
        // A timeout takes ssthresh from the bytes in flight without the marks, then forgets them.
        b.state = CongState::Recovery;
        let mut rec = b.rec.clone();
        assert_eq!(rec.on_timeout(&mut b.cx(0)), MSS);
        assert_eq!(rec.gate(CongState::Recovery, 0), Gate::Window { extra: 0 });
        // In CA_LOSS duplicates do nothing, whatever their number.
        b.rec = rec;
        b.state = CongState::Loss;
        for _ in 0..5 {
            assert!(!b.dup(None).enter);
        }
    }

    /// ns-3 without SACK, outside recovery: an ACK whose new head carries no guessed mark is an
    /// ordinary ACK (`DiscardUpTo` finds the head not SACKed): nothing marked lost, nothing
    /// resent, the window grows.
    #[test]
    fn newreno_ns3_an_ack_without_marks_is_an_ordinary_ack() {
        let mut b = bare(RecoveryKind::NewrenoNs3);
        let o = b.ack(2 * MSS + 1);
        assert_eq!(o, Out { rtt_sample: true, grow: true, ..Default::default() });
        assert_eq!(b.rec.gate(b.state, 0), Gate::Window { extra: 0 });
        assert!(!b.dup(None).enter, "no lost head: one duplicate is only a duplicate");
    }

    /// ns-3 `TcpTxBuffer::DiscardUpTo` after a recovery whose marks ran past RECOVER: an ACK of
    /// one segment that finds its new head marked moves the mark on (`AddRenoSack`, here with no
    /// segment left to take it) and marks the head lost (`MarkHeadAsLost`), which is resent at
    /// once. `IsLost(m_highRxAckMark)` then needs a SACKed segment above the head: with the last
    /// mark gone one duplicate starts nothing, the third does.
    #[test]
    fn newreno_ns3_a_mark_on_the_new_head_moves_on_and_without_marks_above_a_lost_head_waits_for_three() {
        let mut b = bare(RecoveryKind::NewrenoNs3);
        for _ in 0..3 {
            b.dup(None);
        }
        // Two new segments go out during the recovery; 20 more duplicates mark up to 22001.
        b.snd_max = 22 * MSS + 1;
        for _ in 0..20 {
            b.dup(None);
        }
        assert_eq!(b.rec.gate(b.state, 23), Gate::Window { extra: 21 * MSS }, "every segment after the head");
        // The full ACK: 19 marks leave with the 20 segments, the one on 20001 moves to 21001.
        let o = b.ack(20 * MSS + 1);
        assert_eq!((o.exit, o.retransmit), (true, Some(20 * MSS + 1)));
        assert_eq!(b.rec.gate(b.state, 0), Gate::Window { extra: MSS });
        // One segment acknowledged finds the head (21001) marked: no segment after it to move
        // the mark to; the head is lost and resent.
        let o = b.ack(21 * MSS + 1);
        assert_eq!(o, Out { rtt_sample: true, grow: true, retransmit: Some(21 * MSS + 1), ..Default::default() });
        assert_eq!(b.rec.gate(b.state, 0), Gate::Window { extra: 0 });
        assert!(!b.dup(None).enter, "a lost head with no mark above it is not IsLost()");
        assert!(!b.dup(None).enter);
        assert!(b.dup(None).enter, "the third duplicate");
    }

    /// ns-3 `ProcessAck` in `CA_LOSS`: below `m_recover` every new ACK grows the window
    /// (`IncreaseWindow(segsAcked)`); the ACK that leaves `CA_LOSS` grows it by `(ackNumber -
    /// m_recover) / segmentSize` segments, none unless it covers a whole segment beyond RECOVER.
    #[test]
    fn newreno_ns3_leaving_ca_loss_grows_only_by_whole_segments_beyond_recover() {
        for (ack, grow) in [(10 * MSS + 1, true), (20 * MSS + 1, false), (20 * MSS + 501, false), (21 * MSS + 1, true)] {
            let mut b = bare(RecoveryKind::NewrenoNs3);
            (b.state, b.recover, b.after_timeout, b.snd_max) = (CongState::Loss, 20 * MSS + 1, true, 30 * MSS + 1);
            let o = b.ack(ack);
            assert_eq!((o.grow, o.retransmit), (grow, None), "ack {ack}, RECOVER 20001");
        }
    }

    /// ns-3 `TcpSocketBase::DupAck` after a timeout: `m_highRxAckMark >= m_recover` lets the
    /// third duplicate enter recovery as soon as the timeout's RECOVER is acknowledged exactly
    /// (tcp/ns2.rs `BugFix::Ns3`).
    #[test]
    fn newreno_ns3_third_duplicate_after_a_timeout_enters_at_exactly_recover() {
        let mut b = bare(RecoveryKind::NewrenoNs3);
        (b.snd_una, b.recover, b.after_timeout) = (5 * MSS + 1, 5 * MSS + 1, true);
        assert!(!b.dup(None).enter);
        assert!(!b.dup(None).enter);
        assert!(b.dup(None).enter);
    }

    /// ns-3 `ReTxTimeout` in `CA_LOSS`: ssthresh from `BytesInFlight()`, which after the last
    /// timeout's `SetSentListLost()` counts only what go-back-N has resent since (`snd_nxt -
    /// snd_una`), not everything outstanding.
    #[test]
    fn newreno_ns3_a_timeout_in_ca_loss_halves_what_go_back_n_resent() {
        let mut b = bare(RecoveryKind::NewrenoNs3);
        (b.state, b.recover, b.after_timeout) = (CongState::Loss, 20 * MSS + 1, true);
        let mut rec = b.rec.clone();
        let mut cx = b.cx(0);
        cx.snd_nxt = 4 * MSS + 1;
        assert_eq!(rec.on_timeout(&mut cx), 4 * MSS, "four segments resent of 20 outstanding");
    }

    #[test]
    fn sack_fall_floyd_pipe_holes_then_new_data() {
        let mut b = bare(RecoveryKind::SackFallFloyd);
        // Segments 0 and 5 lost; 1, 2, 3 SACKed by three duplicates.
        for i in 1..=3 {
            b.dup(Some(i));
        }
        assert_eq!(b.state, CongState::Recovery);
        assert_eq!(b.rec.gate(b.state, 3), Gate::Pipe);
        let Recovery::SackFallFloyd(r) = &b.rec else { unreachable!() };
        assert_eq!((r.pipe, b.win.cwnd), (17, 10 * MSS), "PIPE = 20 - 3, CWND = 10");
        b.sb.on_retransmit(1, SimTime::ZERO); // the fast retransmission the sender sends
        b.dup(Some(4));
        for i in 6..=12 {
            b.dup(Some(i));
        }
        let Recovery::SackFallFloyd(r) = &b.rec else { unreachable!() };
        assert_eq!(r.pipe, 9, "one per duplicate");
        // PIPE < CWND: the hole at segment 5 first, then new data.
        assert_eq!(b.pick(), Some(Pick::Hole(5001)));
        b.sb.on_retransmit(5001, SimTime::ZERO);
        b.rec.on_pipe_sent(MSS);
        assert_eq!(b.pick(), None, "PIPE = 10 = CWND");
        // Partial ACK up to the hole: PIPE - 2.
        let o = b.ack(5001);
        assert_eq!((o.timer, o.rtt_sample, o.grow), (TimerAction::Restart, false, false));
        let Recovery::SackFallFloyd(r) = &b.rec else { unreachable!() };
        assert_eq!(r.pipe, 8);
        assert_eq!(b.pick(), Some(Pick::New), "no hole left below the highest SACK");
        let o = b.ack(20001);
        assert!(o.exit && !o.grow);
        assert_eq!(b.win.cwnd, 10 * MSS);
    }

    /// Under BBR Fall & Floyd's PIPE is Linux's `tcp_packets_in_flight()`: a hole marked lost
    /// is out of flight until it is resent (`tcp_xmit_retransmit_queue()` sends while that
    /// count is below cwnd). Twenty segments out, 0-5 lost, 6-19 SACKed by fourteen duplicate
    /// ACKs (the fast retransmit of segment 0 on the third), cwnd 4 segments (BBR's PROBE_RTT,
    /// or losses taken off it): Linux has one segment in flight, the fast retransmission, and
    /// resends holes until four are out. Fall & Floyd's PIPE (17 at the fast retransmit, less
    /// one per further duplicate ACK: 6) kept the lost holes in flight, sent nothing, and the
    /// retransmission timer fired. Reno AIMD keeps ns-2's PIPE.
    #[test]
    fn sack_fall_floyd_under_bbr_counts_lost_holes_out_of_flight() {
        for (cc, want) in [(CcKind::Bbr, vec![1001, 2001, 3001]), (CcKind::RenoAimd, vec![])] {
            let mut b = bare(RecoveryKind::SackFallFloyd);
            b.cc = Cc::new(cc);
            for i in 6..20 {
                if b.dup(Some(i)).retransmit == Some(1) {
                    b.sb.on_retransmit(1, SimTime::ZERO); // the fast retransmission the sender sends
                }
            }
            assert_eq!(b.state, CongState::Recovery);
            b.sb.assert_counts();
            b.win.cwnd = 4 * MSS;
            let mut sent = vec![];
            while let Some(Pick::Hole(seq)) = b.pick() {
                b.sb.on_retransmit(seq, SimTime::ZERO);
                b.rec.on_pipe_sent(MSS);
                sent.push(seq);
            }
            assert_eq!(sent, want, "{cc:?}");
            if cc == CcKind::Bbr {
                assert_eq!(b.sb.in_flight_linux(), 4 * MSS, "the four retransmissions");
                b.sb.assert_counts();
            } else {
                assert_eq!(b.rec.pipe_bytes(MSS), Some(6 * MSS), "ns-2's PIPE: 17 - 11 duplicate ACKs");
            }
        }
    }

    /// Under BBR fast recovery starts when a segment is marked lost (Linux
    /// `tcp_time_to_recover()`: `lost_out`, RACK's marks), whatever the duplicate ACKs and
    /// whatever RECOVER a timeout left: after the loss state, with `snd_una` at the timeout's
    /// RECOVER, one duplicate ACK and the head marked lost, BBR enters and resends it; ns-2's
    /// Sack1 (Reno AIMD) waits for the third duplicate ACK and then for an ACK beyond RECOVER
    /// (`bugFix_`). Three duplicate ACKs without a mark do not start BBR's (RACK decides).
    #[test]
    fn sack_fall_floyd_under_bbr_enters_on_a_lost_mark_whatever_the_duplicates() {
        for (cc, want) in [(CcKind::Bbr, Some(1)), (CcKind::RenoAimd, None)] {
            let mut b = bare(RecoveryKind::SackFallFloyd);
            b.cc = Cc::new(cc);
            b.ns2.bug_fix = BugFix::On;
            (b.recover, b.after_timeout) = (1, true);
            b.sb.sack(&[SackBlock { start: 2001, end: 3001 }]);
            b.sb.mark_lost(1);
            let o = b.dup(None);
            assert_eq!((o.enter, o.retransmit), (want.is_some(), want), "{cc:?}");
        }
        let mut b = bare(RecoveryKind::SackFallFloyd);
        b.cc = Cc::new(CcKind::Bbr);
        for _ in 0..3 {
            assert!(!b.dup(None).enter);
        }
    }

    /// ns-2 Sack1 forgets its scoreboard at every new ACK outside fast recovery
    /// (`ClearScoreBoard()`); under a controller that keeps SACK information (BBR, issue 14)
    /// the table keeps what the receiver reported.
    #[test]
    fn sack_fall_floyd_forgets_sacks_at_a_new_ack_outside_recovery_except_under_bbr() {
        for (cc, kept) in [(CcKind::RenoAimd, 0), (CcKind::Bbr, 2 * MSS)] {
            let mut b = bare(RecoveryKind::SackFallFloyd);
            b.cc = Cc::new(cc);
            b.sb.sack(&[SackBlock { start: 5 * MSS + 1, end: 7 * MSS + 1 }]);
            b.ack(2 * MSS + 1);
            assert_eq!(b.sb.sacked_bytes(), kept, "{cc:?}");
        }
    }

    /// A retransmission sent before a recovery episode starts may still be in flight. ns-2's
    /// Sack1 (and our RFC 6675 as written) clear every `retransmitted` mark on entering, so
    /// the hole is resent; under BBR the mark stays, as Linux keeps TCPCB_SACKED_RETRANS until
    /// the segment is acknowledged or RACK or a timeout finds it lost, and the segment is
    /// neither resent as a hole nor counted among the losses (`rs->losses`).
    #[test]
    fn a_new_episode_keeps_a_retransmission_in_flight_under_bbr_only() {
        for kind in [RecoveryKind::SackFallFloyd, RecoveryKind::SackRfc6675] {
            for (cc, kept) in [(CcKind::RenoAimd, false), (CcKind::Bbr, true)] {
                let mut b = bare(kind);
                b.cc = Cc::new(cc);
                b.sb.on_retransmit(2001, SimTime::ZERO); // resent in an earlier episode
                for i in 5..=7 {
                    b.dup(Some(i));
                }
                assert_eq!(b.state, CongState::Recovery, "{kind:?} {cc:?}");
                let e = *b.sb.get(2001).unwrap();
                assert_eq!(e.retransmitted, kept, "{kind:?} {cc:?}");
                if kept {
                    assert!(!e.lost, "{kind:?}: a retransmission in flight is not a loss");
                }
            }
        }
    }

    /// seed 001 §2.2.1: with no hole left below the highest SACK, Sack1 sends new data only if
    /// the application has some and the receiver's window takes one more segment (`snd_max +
    /// MSS - snd_una <= rwnd`).
    #[test]
    fn sack_fall_floyd_sends_new_data_only_if_there_is_some_and_the_receivers_window_takes_it() {
        let mut b = bare(RecoveryKind::SackFallFloyd);
        for i in 1..=3 {
            b.dup(Some(i));
        }
        b.sb.on_retransmit(1, SimTime::ZERO);
        b.win.cwnd = 20 * MSS; // PIPE 17 < CWND 20
        for (new_data, rwnd, want) in [(true, 21 * MSS, Some(Pick::New)), (true, 21 * MSS - 1, None), (false, 21 * MSS, None)] {
            let mut rec = b.rec.clone();
            let mut cx = b.cx(0);
            (cx.new_data, cx.rwnd) = (new_data, rwnd);
            assert_eq!(rec.pick(&cx), want, "new data {new_data}, rwnd {rwnd}, 20 segments outstanding");
        }
    }

    #[test]
    fn sack_rfc6675_enters_on_is_lost_and_sends_by_pipe() {
        let mut b = bare(RecoveryKind::SackRfc6675);
        // One duplicate ACK that SACKs three segments: IsLost(HighACK + 1) holds.
        b.sb.sack(&[SackBlock { start: 1001, end: 3001 }]);
        let o = b.dup(Some(3));
        assert!(o.enter);
        assert_eq!(o.retransmit, Some(1));
        assert_eq!((b.win.cwnd, b.win.ssthresh), (10 * MSS, 10 * MSS), "FlightSize / 2");
        b.sb.on_retransmit(1, SimTime::ZERO);
        // pipe = 16 unSACKed, not lost + 1 retransmitted = 17 segments > cwnd: wait.
        assert_eq!(b.pick(), None);
        for i in 4..=11 {
            b.dup(Some(i));
        }
        // Now 11 SACKed; segments 12..19 in flight (8) + the retransmission: pipe 9 < 10.
        assert_eq!(b.pick(), Some(Pick::New));
    }

    /// RFC 6675 §2 counts as a duplicate an ACK that SACKs new data even if it also advances
    /// the cumulative ACK, so §5 (2.2) applies to a new ACK: with DupThresh segments SACKed
    /// above the new head, IsLost(HighACK + 1) enters recovery at once; with two it does not.
    #[test]
    fn sack_rfc6675_a_new_ack_that_proves_its_new_head_lost_enters_recovery() {
        for (sacked, enter) in [(3, true), (2, false)] {
            let mut b = bare(RecoveryKind::SackRfc6675);
            b.sb.sack(&[SackBlock { start: 5 * MSS + 1, end: (5 + sacked) * MSS + 1 }]);
            let o = b.ack(2 * MSS + 1);
            assert_eq!((o.enter, o.retransmit), (enter, enter.then_some(2 * MSS + 1)), "{sacked} segments SACKed above the head");
            if enter {
                assert_eq!((b.win.ssthresh, b.win.cwnd), (9 * MSS, 9 * MSS), "(4.2) FlightSize 18 segments / 2");
            }
        }
    }

    /// RFC 6675 puts no RecoveryPoint guard on a new recovery after a fast recovery (only after
    /// an RTO, §5.1): once the ACK of RecoveryPoint has ended one, the next DupThresh
    /// duplicates start the next, even with HighACK exactly at the old RecoveryPoint.
    #[test]
    fn sack_rfc6675_three_duplicates_at_the_last_recovery_point_start_a_new_recovery() {
        let mut b = bare(RecoveryKind::SackRfc6675);
        (b.snd_una, b.recover) = (5 * MSS + 1, 5 * MSS + 1);
        b.sb.ack(5 * MSS + 1);
        assert!(!b.dup(Some(6)).enter);
        assert!(!b.dup(Some(7)).enter);
        let o = b.dup(Some(8));
        assert_eq!((o.enter, o.retransmit), (true, Some(5 * MSS + 1)));
    }

    /// RFC 6675 §5.1: after an RTO a new recovery MUST NOT start until HighACK >= the
    /// RecoveryPoint the RTO set (HighData then; `recover` is the octet after it). One octet
    /// short, DupThresh duplicates do nothing; with HighACK exactly there, they start one.
    #[test]
    fn sack_rfc6675_after_a_timeout_recovers_again_once_highack_reaches_the_recovery_point() {
        for (una, enter) in [(5 * MSS, false), (5 * MSS + 1, true)] {
            let mut b = bare(RecoveryKind::SackRfc6675);
            (b.snd_una, b.recover, b.after_timeout) = (una, 5 * MSS + 1, true);
            b.sb.ack(una);
            assert!(!b.dup(Some(6)).enter);
            assert!(!b.dup(Some(7)).enter);
            let o = b.dup(Some(8));
            assert_eq!((o.enter, o.retransmit), (enter, enter.then_some(una)), "snd_una {una}, recover {}", 5 * MSS + 1);
        }
    }

    /// RFC 6675 §5 (4.3)-(4.4): right after entering, SetPipe() counts the unSACKed segments
    /// not lost and the retransmission of the first (HighRxt covers it).
    #[test]
    fn sack_rfc6675_pipe_on_entering_counts_the_fast_retransmission() {
        let mut b = bare(RecoveryKind::SackRfc6675);
        b.sb.sack(&[SackBlock { start: 1001, end: 3001 }]);
        assert!(b.dup(Some(3)).enter);
        assert_eq!(b.rec.pipe_bytes(MSS), Some(17 * MSS), "segments 5-20 and the retransmission of segment 1");
    }

    /// RFC 6675 §5 (C): each segment sent adds its length to pipe (C.4), and the sender goes on
    /// while cwnd - pipe >= 1 SMSS (C.5); NextSeg() rule 2 sends new data only if the
    /// receiver's window takes one more segment, else rule 3 resends an unSACKed segment.
    #[test]
    fn sack_rfc6675_sends_while_cwnd_minus_pipe_allows_and_new_data_within_the_receivers_window() {
        let mut b = rfc6675_one_hole_repaired_cwnd_20();
        for (rwnd, want) in [(21 * MSS, Pick::New), (21 * MSS - 1, Pick::Hole(4 * MSS + 1))] {
            let mut rec = b.rec.clone();
            let mut cx = b.cx(0);
            cx.rwnd = rwnd;
            assert_eq!(rec.pick(&cx), Some(want), "rwnd {rwnd}, 20 segments outstanding");
        }
        let picks: Vec<Option<Pick>> = (0..5).map(|_| b.pick()).collect();
        assert_eq!(picks, [Some(Pick::New), Some(Pick::New), Some(Pick::New), Some(Pick::New), None], "pipe 16 -> 20 = cwnd");
        assert_eq!(b.rec.pipe_bytes(MSS), Some(20 * MSS));
    }

    /// RFC 2018 §8: after a timeout the sender forgets the SACKed bits (the receiver may have
    /// reneged); under BBR (`Cc::keeps_sack_info`, issue 14) the table is kept, as Linux does.
    #[test]
    fn sack_rfc6675_a_timeout_forgets_sacks_except_under_bbr() {
        for (cc, kept) in [(CcKind::RenoAimd, 0), (CcKind::Bbr, 2 * MSS)] {
            let mut b = bare(RecoveryKind::SackRfc6675);
            b.cc = Cc::new(cc);
            b.sb.sack(&[SackBlock { start: 5 * MSS + 1, end: 7 * MSS + 1 }]);
            let mut rec = b.rec.clone();
            assert_eq!(rec.on_timeout(&mut b.cx(0)), 20 * MSS, "RFC 5681 (4): FlightSize");
            assert_eq!(b.sb.sacked_bytes(), kept, "{cc:?}");
        }
    }

    /// RFC 6675 recovery entered on segments 2-3 SACKed, segment 1 resent, cwnd 20 segments,
    /// then segment 5 SACKed: segment 4 has one SACKed segment above it, so IsLost() is false
    /// and nothing more is lost; pipe = 15 unSACKed in flight + the retransmission = 16.
    fn rfc6675_one_hole_repaired_cwnd_20() -> Bare {
        let mut b = bare(RecoveryKind::SackRfc6675);
        b.sb.sack(&[SackBlock { start: 1001, end: 3001 }]);
        assert!(b.dup(Some(3)).enter);
        b.sb.on_retransmit(1, SimTime::ZERO);
        b.win.cwnd = 20 * MSS;
        b.dup(Some(5));
        b
    }

    #[test]
    fn sack_rfc6675_next_seg_rule_3_sends_an_unsacked_segment_not_yet_lost_when_no_new_data() {
        let mut b = rfc6675_one_hole_repaired_cwnd_20();
        let Recovery::SackRfc6675(r) = &b.rec else { unreachable!() };
        assert_eq!(r.pipe(), 16 * MSS);
        let (mut with_new, mut without_new) = (b.rec.clone(), b.rec.clone());
        // NextSeg() rule 1: nothing lost left; rule 2: new data if the application has some.
        assert_eq!(with_new.pick(&b.cx(0)), Some(Pick::New));
        // Rule 3: else the first unSACKed segment below HighSACK.
        let mut cx = b.cx(0);
        cx.new_data = false;
        assert_eq!(without_new.pick(&cx), Some(Pick::Hole(4001)));
    }
}
