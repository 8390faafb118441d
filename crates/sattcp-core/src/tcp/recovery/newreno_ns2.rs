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
//! By default none of RFC 2582's modifications (partial window deflation, "bugfix" against
//! multiple fast retransmits within one window) are present; a timeout still blocks fast
//! retransmit until its RECOVER is acknowledged. Hoe's other change, the initial ssthresh set
//! to the path's bandwidth-delay product, is the scenario's `initial_ssthresh` (seed 000
//! §4.2.2 sets it for every flavour).
//!
//! The ns-2 switches (tcp/ns2.rs) give ns-2.35's variants: `newreno_changes = 0` (ns-2.35's
//! default: no flywheel; from the third duplicate on, and after partial ACKs, the inflated
//! window sends at most two segments per ACK), `newreno_changes1` (only the first partial ACK
//! restarts the timer), `partial_window_deflation` and `exit_recovery_fix` (RFC 2582), and
//! `bug_fix`, `exit_fast_retrans`, `singledup` as for Reno.

use super::{CongState, Cx, Gate, Out, TimerAction};

/// Hoe 1996 / seed 001 §2.1: one new segment for every two duplicate ACKs.
const DUPACKS_PER_NEW_SEGMENT: u32 = 2;
/// ns-2.35 `NewRenoTcpAgent::recv()` with `newreno_changes_ == 0`: `send_much(0, 0, 2)`.
const NEWRENO_CHANGES0_MAXBURST: u32 = 2;

#[derive(Clone, Debug, Default)]
pub struct NewrenoNs2 {
    /// ns-2 `dupwnd_` in bytes.
    pub dupwnd: u64,
    /// With ns-2 `newreno_changes_ 0` (tcp/ns2.rs): the duplicate count from which the
    /// inflated window sends in bursts of two (the threshold); 0 = never (`newreno_changes_ 1`).
    burst_from: u32,
    /// ns-2 `firstpartial_`: a partial ACK has already restarted the timer in this recovery.
    first_partial: bool,
}

impl NewrenoNs2 {
    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.state != CongState::Recovery {
            self.dupwnd = 0;
            return;
        }
        if cx.snd_una >= cx.recover {
            // seed 001 §2.1: "acknowledges all segments including RECOVER ... exits the fast
            // retransmit phase, sets its CWND to SSTHRESH" (cwnd already is), then opencwnd().
            if cx.ns2.exit_recovery_fix && self.dupwnd > 0 {
                // ns-2 `exit_recovery_fix_`: cwnd_ = min(ssthresh_, maxseq_ - seqno + 1).
                let outstanding = cx.snd_max - cx.snd_una + cx.mss();
                cx.win.cwnd = cx.win.ssthresh.min(outstanding);
            }
            self.dupwnd = 0;
            self.first_partial = false;
            out.exit = true;
            out.grow = true;
        } else {
            // seed 001 §2.1: a partial ACK retransmits the next expected segment, resets CWND
            // to SSTHRESH and (our choice per the seed) resets the retransmit timer.
            if cx.ns2.partial_window_deflation {
                // ns-2 `partialnewack()`: deflate by the data acknowledged, less one packet.
                let (mss, deflate) = (cx.mss(), cx.acked);
                if self.dupwnd > deflate {
                    // dupwnd_ - (acked - 1 packet), in that order: acked may be under a packet.
                    self.dupwnd = self.dupwnd + mss - deflate;
                } else {
                    cx.win.cwnd = cx.win.cwnd.saturating_sub(deflate - self.dupwnd).max(mss);
                    self.dupwnd = mss; // "leave dupwnd_ > 0 to flag the fast recovery phase"
                }
            } else {
                self.dupwnd = 0;
            }
            out.retransmit = Some(cx.snd_una);
            // ns-2 `partialnewack_helper()`: with `newreno_changes1_` only the first partial
            // ACK calls newtimer().
            out.timer = if cx.ns2.newreno_changes1 && self.first_partial { TimerAction::Keep } else { TimerAction::Restart };
            self.first_partial = true;
            out.grow = false;
            out.rtt_sample = false;
            out.keep_dupacks = true;
        }
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        self.burst_from = if cx.ns2.newreno_changes == 0 { cx.dup_thresh } else { 0 };
        if cx.may_fast_retransmit() {
            cx.fast_retransmit_ns2(out);
            self.first_partial = false;
        }
        cx.inflate(&mut self.dupwnd, cx.state == CongState::Recovery || out.enter);
        // Hoe's flywheel: ns-2 `if (newreno_changes_ > 0 && (dupacks_ % 2) == 1)`.
        if cx.ns2.newreno_changes > 0 && cx.dupacks > cx.dup_thresh && cx.dupacks % DUPACKS_PER_NEW_SEGMENT == 1 && (cx.state == CongState::Recovery || !cx.ns2.exit_fast_retrans) {
            out.force_new = 1;
        }
        cx.limited_transmit(out);
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // ns-2 NewReno clears dupwnd_ before TcpAgent::timeout() halves window().
        self.dupwnd = 0;
        cx.ns2_window(0)
    }

    pub fn gate(&self, _state: CongState, dupacks: u32) -> Gate {
        // ns-2.1b3 with newreno_changes_: `if (dupacks_ == 0) send(...)`, nothing otherwise;
        // ns-2.35 with newreno_changes_ 0 also `else if (dupacks_ > numdupacks_ - 1)
        // send_much(0, 0, 2)`.
        if dupacks == 0 {
            Gate::Window { extra: self.dupwnd }
        } else if self.burst_from > 0 && dupacks >= self.burst_from {
            Gate::Burst { extra: self.dupwnd, max: NEWRENO_CHANGES0_MAXBURST }
        } else {
            Gate::Closed
        }
    }
}
