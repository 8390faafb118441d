//! Applications are parts: a toy echo application, defined here and nowhere else, runs over a
//! scenario's topology without the event loop knowing it (issue 9).

mod common;

use common::scenario;
use sattcp_core::app::{App, AppCx, Interest, Role, Setup};
use sattcp_core::net::packet::FlowId;
use sattcp_core::{SimTime, Simulation};
use std::sync::{Arc, Mutex};

/// One 10 Mbps hop, 20 ms one way; no delayed ACKs.
const PATH: &str = r#"
    [run]
    duration = "10s"
    [topology]
    kind = "path"
    [[links.path]]
    rate = "10Mbps"
    delay = "20ms"
    [switch]
    buffer = "100pkt"
    [tcp]
    mss = 1460
"#;

/// A client sends a message of `size` bytes on `ping`; the server writes every byte it
/// receives back on `pong`; when the whole echo is back, the client sends the next message,
/// `rounds` times. Records when each echo was complete.
struct Echo {
    ping: FlowId,
    pong: FlowId,
    size: u64,
    rounds: u32,
    echoed: u64,
    done_at: Arc<Mutex<Vec<SimTime>>>,
}

impl App for Echo {
    fn interest(&self) -> Interest {
        Interest { delivered: true, acked: false }
    }

    fn start(&mut self, cx: &mut AppCx<'_>) {
        cx.open_at(self.ping, SimTime::ZERO);
        cx.open_at(self.pong, SimTime::ZERO);
    }

    fn on_open(&mut self, cx: &mut AppCx<'_>, flow: FlowId) {
        if flow == self.ping {
            cx.write(self.ping, self.size);
        }
    }

    fn on_delivered(&mut self, cx: &mut AppCx<'_>, flow: FlowId, delivered: u64) {
        if flow == self.ping {
            // The server echoes what arrived.
            cx.write(self.pong, delivered - self.echoed);
            self.echoed = delivered;
        } else {
            let mut done = self.done_at.lock().unwrap();
            if delivered == self.size * (done.len() as u64 + 1) {
                done.push(cx.now());
                if (done.len() as u32) < self.rounds {
                    cx.write(self.ping, self.size);
                }
            }
        }
    }

    fn done(&self) -> bool {
        self.done_at.lock().unwrap().len() as u32 == self.rounds
    }
}

#[test]
fn a_toy_echo_application_runs_without_the_event_loop_knowing_it() {
    let sc = scenario(PATH, &[]);
    let done_at = Arc::new(Mutex::new(Vec::new()));
    let d = done_at.clone();
    let mut sim = Simulation::with_apps(&sc, move |s: &mut Setup<'_>| {
        let (client, server) = s.endpoints[0];
        let ping = s.flow(Role::Data, client, server);
        let pong = s.flow(Role::Request, server, client);
        s.app(Box::new(Echo { ping, pong, size: 1000, rounds: 20, echoed: 0, done_at: d }), &[ping, pong]);
    });
    sim.run();
    assert!(sim.app(0).done(), "all 20 rounds completed in 10 s");
    let t = done_at.lock().unwrap().clone();
    // After the first round (which waits for both handshakes), each round is one data segment
    // each way, each queued behind the ACK its host just sent for the segment that triggered
    // it: 2 x (40 bytes = 32 us + 1040 bytes = 832 us at 10 Mbps + 20 ms) = 41.728 ms exactly.
    for w in t.windows(2) {
        assert_eq!(w[1] - w[0], SimTime(41_728_000), "rounds at {t:?}");
    }
    assert_eq!(sim.receiver(0).delivered(), 20_000);
    assert_eq!(sim.receiver(1).delivered(), 20_000);
    let r = sim.finish();
    assert_eq!(r.flows[1].role, "request");
    assert_eq!(r.flows[0].scheduled_bytes, 20_000);
}
