//! "Vanilla" TCP (seed 001 §2): slow start and congestion avoidance only. Duplicate ACKs are
//! ignored; every loss waits for the retransmission timer, after which the sender goes back
//! to the first unacknowledged segment and slow-starts from one segment.

use super::{CongState, Cx, Gate, Out};

#[derive(Clone, Debug, Default)]
pub struct TimeoutOnly;

impl TimeoutOnly {
    pub fn on_new_ack(&mut self, _cx: &mut Cx, _out: &mut Out) {}
    pub fn on_dupack(&mut self, _cx: &mut Cx, _out: &mut Out) {}
    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // ns-2 `closecwnd(0)`: ssthresh = window() / 2.
        cx.ns2_window(0)
    }
    pub fn gate(&self, _state: CongState, _dupacks: u32) -> Gate {
        Gate::Window { extra: 0 }
    }
}
