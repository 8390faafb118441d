//! The seeds' WWW client/server pairs as applications (the model is in [`super::www`]): the
//! client's requests travel on a request flow, the server's files on a data flow (two one-way
//! TCPs, as ns-2 modelled a connection). The server is infinitely fast: requests delivered in
//! order reach it at once and it appends each requested file to its data flow.

use super::www::{WwwClient, WwwParams, WwwServer};
use super::{App, AppCx, Interest, Role, Setup};
use crate::net::packet::FlowId;

pub struct WwwPair {
    client: WwwClient,
    server: WwwServer,
    req_flow: FlowId,
    data_flow: FlowId,
    /// Request bytes already handed to the server.
    seen: u64,
}

impl App for WwwPair {
    fn interest(&self) -> Interest {
        Interest { delivered: true, acked: false }
    }

    fn start(&mut self, cx: &mut AppCx<'_>) {
        // The pair's persistent connection (HTTP/1.1, seed 000 §4.1) is opened when its client
        // first needs it, at its first request (both half-connections then), and stays open.
        if let Some(first) = self.client.next_request_at() {
            cx.open_at(self.req_flow, first);
            cx.open_at(self.data_flow, first);
            cx.set_timer(Some(first));
        }
    }

    fn on_timer(&mut self, cx: &mut AppCx<'_>) {
        let now = cx.now();
        let mut bytes = 0;
        while let Some(r) = self.client.pop_request(now) {
            bytes += r.bytes;
        }
        cx.set_timer(self.client.next_request_at().map(|t| t.max(now)));
        if bytes > 0 {
            cx.write(self.req_flow, bytes);
        }
    }

    fn on_delivered(&mut self, cx: &mut AppCx<'_>, flow: FlowId, delivered: u64) {
        if flow != self.req_flow || delivered <= self.seen {
            return;
        }
        // Each requested file is scheduled on the data flow at once.
        let file_bytes = self.server.on_request_bytes(delivered - self.seen);
        self.seen = delivered;
        if file_bytes > 0 {
            cx.write(self.data_flow, file_bytes);
        }
    }
}

/// Servers are the sources (left), clients the sinks (right): files cross the bottleneck
/// forward, requests backward. Data flows are 0..N so that flow i is server i's throughput
/// x_i; request flows are N..2N; application i is pair i.
pub fn install(setup: &mut Setup<'_>, params: &WwwParams) {
    let endpoints = setup.endpoints;
    let data: Vec<FlowId> = endpoints.iter().enumerate().map(|(i, &(src, dst))| setup.flow_of(i as u32, Role::Data, src, dst)).collect();
    for (i, &(src, dst)) in endpoints.iter().enumerate() {
        // The request half of pair i has pair i's TCP settings.
        let req = setup.flow_of(i as u32, Role::Request, dst, src);
        let client = WwwClient::for_index(params, setup.rngs, i);
        let server = WwwServer::for_index(params, setup.rngs, i);
        setup.app(Box::new(WwwPair { client, server, req_flow: req, data_flow: data[i], seen: 0 }), &[req, data[i]]);
    }
}
