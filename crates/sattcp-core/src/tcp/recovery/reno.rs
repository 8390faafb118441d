//! Reno fast retransmit and fast recovery (RFC 2581 §3.2; seed 001 §2), as ns-2.1b3's
//! `RenoTcpAgent` did it:
//!
//! - third duplicate ACK: ssthresh = cwnd = window/2 in whole segments, retransmit the first
//!   unacknowledged segment, restart the timer, inflate the window by the three duplicates
//!   (`dupwnd = 3`);
//! - each further duplicate ACK inflates the window by one segment (new data flows when the
//!   inflated window passes the flight);
//! - the first ACK of new data deflates the window (`dupwnd = 0`, cwnd = ssthresh), leaves
//!   fast recovery and opens cwnd as any new ACK does.
//!
//! A second loss in the same window therefore needs a second fast retransmit (another
//! halving) when enough duplicates come back, or else the timer.

use super::{CongState, Cx, Gate, Out};

#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// ns-2 `dupwnd_`: window inflation in bytes (one segment per duplicate ACK).
    pub dupwnd: u64,
}

impl Reno {
    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        // RFC 2581 (3.2) step 5: "deflate" the window; ns-2 then calls opencwnd().
        self.dupwnd = 0;
        if cx.state == CongState::Recovery {
            out.exit = true;
            out.grow = true;
        }
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.may_fast_retransmit() {
            // RFC 2581 (3.2) steps 1-3 (ns-2 `closecwnd(1)`).
            cx.fast_retransmit_ns2(out);
        }
        cx.inflate(&mut self.dupwnd, cx.state == CongState::Recovery || out.enter);
        cx.limited_transmit(out);
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // ns-2 `RenoTcpAgent::timeout()` clears dupwnd_ before TcpAgent::timeout() halves
        // window(): the inflation is not counted.
        self.dupwnd = 0;
        cx.ns2_window(0)
    }

    pub fn gate(&self, _state: CongState, _dupacks: u32) -> Gate {
        // ns-2 ran send_much() only when dupacks_ == 0 or >= NUMDUPACKS - 1; the window cannot
        // open on the first duplicates anyway, so the window alone decides.
        Gate::Window { extra: self.dupwnd }
    }
}
