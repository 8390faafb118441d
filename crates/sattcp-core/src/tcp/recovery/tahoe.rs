//! Tahoe as ns-2's base agent `Agent/TCP` implements it (`TcpAgent::dupack_action()`,
//! Jacobson 1988, 4.3BSD-Tahoe): on the third duplicate ACK, unless an earlier loss is still
//! being recovered from (`bugFix_`), ssthresh = window/2 in whole segments (at least two),
//! cwnd = one segment, RECOVER = highest sent, the timer restarted without backoff, and the
//! sender goes back to the first unacknowledged segment in slow start, as after a timeout
//! (`slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_ONE)`, `reset_rtx_timer(0, 0)`). There is no
//! fast recovery: further duplicate ACKs do nothing. Timeouts as every flavour.

use super::{CongState, Cx, Gate, Out, TimerAction};
use crate::tcp::cc::reno::MIN_SSTHRESH_SEGMENTS;

#[derive(Clone, Debug, Default)]
pub struct Tahoe;

impl Tahoe {
    pub fn on_new_ack(&mut self, _cx: &mut Cx, _out: &mut Out) {}

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.may_fast_retransmit() {
            // ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_ONE)`: ssthresh_ = int(window()/2),
            // at least 2; cwnd_ = 1.
            let mss = cx.mss();
            let half = cx.ns2_window(0) / 2 / mss;
            cx.win.ssthresh = half.max(MIN_SSTHRESH_SEGMENTS) * mss;
            cx.win.cwnd = mss;
            out.go_back_n = true;
            out.timer = TimerAction::Restart;
        }
        cx.limited_transmit(out);
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        cx.ns2_window(0)
    }

    pub fn gate(&self, _state: CongState, _dupacks: u32) -> Gate {
        Gate::Window { extra: 0 }
    }
}
