//! Bulk and fixed-size transfer sources: one per host pair, each owning one data flow that
//! opens at `start + i x stagger` and writes all its bytes (a bulk source: more than any run
//! can carry), as fast as a finite send buffer accepts them.

use super::{App, AppCx, Interest, Role, Setup};
use crate::net::packet::FlowId;
use crate::time::SimTime;

/// What a bulk source offers: more than any run can carry, without overflowing counters.
pub const BULK_BYTES: u64 = u64::MAX / 4;

/// A source on one flow.
pub struct Bulk {
    flow: FlowId,
    at: SimTime,
    /// A fixed-size transfer: its size (then closed, with a FIN if tcp.fin).
    bytes: Option<u64>,
    /// Bytes not yet accepted by a finite send buffer.
    pending: u64,
    done: bool,
}

impl Bulk {
    /// Writes what is pending; a transfer closes once all is written.
    fn write(&mut self, cx: &mut AppCx<'_>) {
        self.pending -= cx.write(self.flow, self.pending);
        if self.pending == 0 && self.bytes.is_some() {
            // A fixed-size transfer has nothing more: a FIN follows if tcp.fin.
            cx.close(self.flow);
        }
    }
}

impl App for Bulk {
    fn interest(&self) -> Interest {
        Interest { delivered: self.bytes.is_some(), acked: false }
    }

    fn start(&mut self, cx: &mut AppCx<'_>) {
        cx.open_at(self.flow, self.at);
    }

    fn scheduled_open(&self) -> Option<(FlowId, SimTime)> {
        Some((self.flow, self.at))
    }

    fn on_open(&mut self, cx: &mut AppCx<'_>, _flow: FlowId) {
        self.write(cx);
    }

    fn on_send_space(&mut self, cx: &mut AppCx<'_>, _flow: FlowId) {
        if self.pending > 0 {
            self.write(cx);
        }
    }

    fn on_delivered(&mut self, cx: &mut AppCx<'_>, flow: FlowId, delivered: u64) {
        if !self.done && self.bytes.is_some_and(|b| delivered >= b) {
            self.done = true;
            cx.complete(flow);
        }
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// One source per host pair: flow i from pair i's source to its sink.
pub fn install(setup: &mut Setup<'_>, bytes: Option<u64>, start: SimTime, stagger: SimTime) {
    let endpoints = setup.endpoints;
    for (i, &(src, dst)) in endpoints.iter().enumerate() {
        let flow = setup.flow_of(i as u32, Role::Data, src, dst);
        setup.app(Box::new(Bulk { flow, at: start + stagger.times(i as u64), bytes, pending: bytes.unwrap_or(BULK_BYTES), done: false }), &[flow]);
    }
}
