//! Applications: what drives the TCP flows. Each application is one [`App`] object owning one
//! or more flows; the event loop knows none of them by name. It calls an application when:
//!
//! - the run starts ([`App::start`]: schedule the opening of its flows, arm a timer),
//! - a flow it owns opens ([`App::on_open`], at the time given to [`AppCx::open_at`]),
//! - its timer comes due ([`App::on_timer`], armed with [`AppCx::set_timer`]),
//! - in-order bytes reach the receiver of one of its flows ([`App::on_delivered`]),
//! - the sender of one of its flows has new bytes acknowledged ([`App::on_acked`]),
//!
//! the last two only if its [`Interest`] says so (a bulk source pays nothing per packet).
//! An application acts through its [`AppCx`]: write bytes to a flow's sender, close it, mark a
//! flow complete, open flows, arm its timer.
//!
//! Finite socket buffers (`tcp.send_buffer`, `tcp.receive_buffer`): [`AppCx::write`] returns
//! the bytes the send buffer accepted and [`App::on_send_space`] is where a writer that was
//! refused resumes; [`App::on_readable`] says bytes wait in a finite receive buffer, and
//! [`AppCx::read`] takes them (by default at once). Unbounded buffers (the default) accept
//! every write and need no reads.
//!
//! Kinds: [`bulk::Bulk`] (bulk and fixed-size transfer sources), [`web::WwwPair`] (the seeds'
//! WWW client/server pair over two half-connections, model in [`www`]), [`pingpong::PingPong`]
//! (NetPIPE's ping-pong, seed 003; its `netpipe` section of the result). A new kind is one file
//! with a type implementing [`App`], added to [`install`] if scenarios name it, or installed by
//! hand with [`Setup::app`] (see the echo application in `tests/apps.rs`).

pub mod bulk;
pub mod pingpong;
pub mod sgw;
pub mod web;
pub mod www;

use crate::engine::rng::RngFactory;
use crate::net::packet::{FlowId, NodeId};
use crate::metrics::result::{LinkResult, Trace};
use crate::scenario::{AppSpec, Scenario, Topology};
use crate::tcp::TcpConfig;
use crate::time::SimTime;
pub use crate::world::AppCx;

/// Index of an application in the world, dense from 0 in the order of [`Setup::app`].
pub type AppId = u32;

/// Which per-packet flow events an application hears about.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Interest {
    /// [`App::on_delivered`].
    pub delivered: bool,
    /// [`App::on_acked`].
    pub acked: bool,
}

/// What a flow carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Data from a source (bulk, transfer, or a WWW server's files): the flows the study's
    /// metrics are about.
    Data,
    /// Requests or other control traffic (a WWW client's requests to its server).
    Request,
    /// One leg of a connection a proxy splits (seed 004's SGW): its bytes are counted once,
    /// end to end, by the application that relays them, not as a data flow of their own.
    Relay,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Request => "request",
            Role::Relay => "relay",
        }
    }
}

/// An application. Every hook has a default that does nothing. (`Send + Sync`: a simulation
/// moves between threads in the Python bindings.)
pub trait App: Send + Sync {
    /// Which per-packet hooks to call.
    fn interest(&self) -> Interest {
        Interest::default()
    }
    /// At time zero, when the world is built: schedule flow openings, arm the timer.
    fn start(&mut self, cx: &mut AppCx<'_>);
    /// `flow` was opened (its SYN is on the wire): typically write the first bytes.
    fn on_open(&mut self, _cx: &mut AppCx<'_>, _flow: FlowId) {}
    /// The timer armed with [`AppCx::set_timer`] came due.
    fn on_timer(&mut self, _cx: &mut AppCx<'_>) {}
    /// The receiver of `flow` now has `delivered` bytes in order (a running total).
    fn on_delivered(&mut self, _cx: &mut AppCx<'_>, _flow: FlowId, _delivered: u64) {}
    /// The sender of `flow` now has `acked` bytes acknowledged (a running total).
    fn on_acked(&mut self, _cx: &mut AppCx<'_>, _flow: FlowId, _acked: u64) {}
    /// Room freed in the send buffer of `flow` after a write was refused in part.
    fn on_send_space(&mut self, _cx: &mut AppCx<'_>, _flow: FlowId) {}
    /// `readable` in-order bytes wait in the (finite) receive buffer of `flow`. By default the
    /// application reads them all at once; one that stops reading lets the window close.
    fn on_readable(&mut self, cx: &mut AppCx<'_>, flow: FlowId, _readable: u64) {
        cx.read(flow, u64::MAX);
    }
    /// Whether the application has finished its work (for tests and reports).
    fn done(&self) -> bool {
        false
    }
    /// The flow this application opens at a time fixed when the run is built, and that time
    /// (a bulk source's `app.start` + its stagger); None where the application decides as it
    /// runs (WWW, request-response). A run warns of such opens at or after its end.
    fn scheduled_open(&self) -> Option<(FlowId, SimTime)> {
        None
    }
    /// At the end of the run (`end`): what the application adds to the result.
    fn report(&mut self, _end: SimTime) -> Option<AppReport> {
        None
    }
}

/// What an application adds to a run's result ([`App::report`]).
#[derive(Default)]
pub struct AppReport {
    /// Figures of links the application carries traffic on with its own model (the SGW's
    /// satellite links): they replace the world links of the same names in the result.
    pub links: Vec<LinkResult>,
    /// Time series, by name.
    pub traces: Vec<(String, Trace)>,
    /// End-to-end data the application delivered, as (delivered bytes, scheduled bytes) per
    /// source: counted in the study's metrics beside the world's data flows.
    pub data: Vec<(u64, u64)>,
    /// A section of the result under this key (e.g. "gateway", "netpipe").
    pub section: Option<(String, serde_json::Value)>,
    /// Things that did not happen as asked (the result's `warnings`).
    pub warnings: Vec<String>,
}

/// A flow declared by an application at build time.
#[derive(Clone, Debug)]
pub struct FlowDecl {
    pub role: Role,
    pub src: NodeId,
    pub dst: NodeId,
    pub app: AppId,
    /// Its TCP configuration (both endpoints).
    pub tcp: TcpConfig,
}

/// Where applications are created: declare flows between hosts, then install the application
/// that owns them.
pub struct Setup<'a> {
    pub scenario: &'a Scenario,
    /// Host pairs (source, sink) of the topology, in order.
    pub endpoints: &'a [(NodeId, NodeId)],
    /// Named random streams of the run (each application takes its own by name).
    pub rngs: &'a RngFactory,
    pub(crate) flows: Vec<FlowDecl>,
    pub(crate) apps: Vec<Box<dyn App>>,
}

impl<'a> Setup<'a> {
    pub(crate) fn new(scenario: &'a Scenario, endpoints: &'a [(NodeId, NodeId)], rngs: &'a RngFactory) -> Self {
        Setup { scenario, endpoints, rngs, flows: Vec::new(), apps: Vec::new() }
    }

    /// A new TCP flow from `src` to `dst` (owned by the next application installed unless
    /// given to another with [`Setup::app`]).
    pub fn flow(&mut self, role: Role, src: NodeId, dst: NodeId) -> FlowId {
        self.flow_with(role, src, dst, self.scenario.tcp.clone())
    }

    /// A new flow for host pair `pair` (the scenario's flow number of that pair), with the TCP
    /// configuration the scenario gives that pair (`[[tcp.groups]]` or `[tcp]`).
    pub fn flow_of(&mut self, pair: u32, role: Role, src: NodeId, dst: NodeId) -> FlowId {
        self.flow_with(role, src, dst, self.scenario.tcp_for(pair).clone())
    }

    /// A new flow with the TCP configuration `tcp`.
    pub fn flow_with(&mut self, role: Role, src: NodeId, dst: NodeId, tcp: TcpConfig) -> FlowId {
        self.flows.push(FlowDecl { role, src, dst, app: u32::MAX, tcp });
        (self.flows.len() - 1) as FlowId
    }

    /// The id the next installed application will have.
    pub fn next_app(&self) -> AppId {
        self.apps.len() as AppId
    }

    /// Installs `app`, owner of `flows` (their events go to it).
    pub fn app(&mut self, app: Box<dyn App>, flows: &[FlowId]) -> AppId {
        let id = self.apps.len() as AppId;
        for &f in flows {
            self.flows[f as usize].app = id;
        }
        self.apps.push(app);
        id
    }
}

/// Installs the applications a scenario's `[app]` names.
pub fn install(setup: &mut Setup<'_>) {
    if let Topology::Gateway(g) = &setup.scenario.topology {
        if g.scheme != crate::scenario::validate::gateway::Scheme::E2e {
            return sgw::install(setup, g);
        }
    }
    match &setup.scenario.app {
        AppSpec::Bulk { start, stagger } => bulk::install(setup, None, *start, *stagger),
        AppSpec::Transfer { bytes, start, stagger } => bulk::install(setup, Some(*bytes), *start, *stagger),
        AppSpec::Www { params } => web::install(setup, params),
        AppSpec::PingPong(pp) => {
            pingpong::PingPong::install(setup, pp.schedule(), pp.repeats, pp.nrepeat.unwrap_or(pingpong::NRepeat::Fixed(1)));
        }
    }
}
