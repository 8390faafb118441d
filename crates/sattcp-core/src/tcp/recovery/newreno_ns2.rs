//! NewReno as ns-2.1b3 implemented it with Hoe's changes (seed 001 §2.1; Hoe 1996;
//! ns-2.1b3 `NewRenoTcpAgent` with `newreno_changes_ = 1`):
//!
//! - third duplicate ACK: RECOVER = highest sequence sent, ssthresh = cwnd = window/2 (whole
//!   segments), retransmit the first unacknowledged segment, restart the timer, `dupwnd = 3`;
//! - in the fast-retransmit phase the sender sends nothing by its window: each further
//!   duplicate ACK inflates `dupwnd`, and every second one (the 5th, 7th, ...) sends exactly one
//!   new segment beyond RECOVER "to keep the flywheel going" (Hoe);
//! - a partial ACK (new data acknowledged, RECOVER not reached) retransmits the next expected
//!   segment at once, resets cwnd to ssthresh (`dupwnd = 0`, no window growth), and restarts
//!   the retransmission timer (the seed resets it on *every* partial ACK); the duplicate-ACK
//!   count is not reset, so the flywheel keeps its rhythm;
//! - the ACK of RECOVER ends the phase: cwnd = ssthresh, then the usual opening and sending.
//!
//! None of RFC 2582's modifications (partial window deflation, "bugfix" against multiple fast
//! retransmits within one window) are present; a timeout still blocks fast retransmit until
//! its RECOVER is acknowledged (ns-2 `bug_fix_`, default on). Hoe's other change, the initial
//! ssthresh set to the path's bandwidth-delay product, is the scenario's `initial_ssthresh`
//! (seed 000 §4.2.2 sets it for every flavour).

use super::{CongState, Cx, Gate, Out, TimerAction};

/// Hoe 1996 / seed 001 §2.1: one new segment for every two duplicate ACKs.
const DUPACKS_PER_NEW_SEGMENT: u32 = 2;

#[derive(Clone, Debug, Default)]
pub struct NewrenoNs2 {
    /// ns-2 `dupwnd_` in bytes.
    pub dupwnd: u64,
}

impl NewrenoNs2 {
    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        self.dupwnd = 0;
        if cx.state != CongState::Recovery {
            return;
        }
        if cx.snd_una >= cx.recover {
            // seed 001 §2.1: "acknowledges all segments including RECOVER ... exits the fast
            // retransmit phase, sets its CWND to SSTHRESH" (cwnd already is), then opencwnd().
            out.exit = true;
            out.grow = true;
        } else {
            // seed 001 §2.1: a partial ACK retransmits the next expected segment, resets CWND
            // to SSTHRESH and (our choice per the seed) resets the retransmit timer.
            out.retransmit = Some(cx.snd_una);
            out.timer = TimerAction::Restart;
            out.grow = false;
            out.rtt_sample = false;
            out.keep_dupacks = true;
        }
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.may_fast_retransmit() {
            cx.fast_retransmit_ns2(out);
        }
        cx.inflate(&mut self.dupwnd);
        // Hoe's flywheel: ns-2 `if (newreno_changes_ > 0 && (dupacks_ % 2) == 1)`.
        if cx.dupacks > cx.dup_thresh && cx.dupacks % DUPACKS_PER_NEW_SEGMENT == 1 {
            out.force_new = 1;
        }
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // ns-2 NewReno clears dupwnd_ before TcpAgent::timeout() halves window().
        self.dupwnd = 0;
        cx.ns2_window(0)
    }

    pub fn gate(&self, _state: CongState, dupacks: u32) -> Gate {
        // ns-2.1b3 with newreno_changes_: `if (dupacks_ == 0) send(...)`, nothing otherwise.
        if dupacks == 0 {
            Gate::Window { extra: self.dupwnd }
        } else {
            Gate::Closed
        }
    }
}
