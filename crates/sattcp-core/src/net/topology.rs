//! The topology builder: from a validated scenario, the nodes (hosts and routers or switches),
//! the one-way links, the hops that queue packets onto them, and every node's routes.
//!
//! - dumbbell: N sources -> R1 -> bottleneck -> R2 -> N sinks, with drop-tail IP routers or
//!   with the seeds' two ATM switches (`switch.kind = "atm"`: each direction of the bottleneck
//!   is an [`AtmHop`] fed by the hosts' access links, one VC per pair);
//! - path: one flow over a chain of hops with routers between them;
//! - graph: named nodes, duplex links, flows between chosen nodes; every node routes by
//!   shortest path ([`shortest_paths`]: least delay, then fewest hops, then the lowest link).
//!
//! Link order (the names and ids results use) is [`Topology::link_names`]; for IP topologies
//! hop i is link i.

use super::atm_hop::{AtmHop, AtmHopSpec};
use super::hop::{Hop, HopId, LinkId, Via};
use super::link::{Link, QueueLimit};
use super::packet::NodeId;
use super::schedule::{MovingFlight, MovingHop, Schedule};
use crate::engine::rng::RngFactory;
use crate::scenario::validate::SwitchKind;
use crate::scenario::{LinkSpec, Scenario, Topology};
use crate::time::{SimTime, Size};

/// A node's static routes.
pub enum Routes {
    /// No routes (a router that packets never reach, such as an ATM dumbbell's).
    None,
    /// Every destination through one hop (a host).
    Default(Via),
    /// Per destination node (routers of a dumbbell or a graph).
    Table(Vec<Via>),
    /// A chain node: toward higher-numbered and lower-numbered nodes (a chain needs no table:
    /// memory stays linear in the number of hops).
    Chain { me: NodeId, up: Via, down: Via },
}

pub struct Node {
    pub routes: Routes,
}

impl Node {
    /// The hop toward `dst` ([`Via::NONE`] if none).
    #[inline]
    pub fn route(&self, dst: NodeId) -> Via {
        match &self.routes {
            Routes::Default(v) => *v,
            Routes::Chain { me, up, down } => {
                if dst > *me {
                    *up
                } else {
                    *down
                }
            }
            Routes::Table(t) => t.get(dst as usize).copied().unwrap_or(Via::NONE),
            Routes::None => Via::NONE,
        }
    }
}

/// What the builder made.
pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub hops: Vec<Hop>,
    /// Host pairs (source, sink) in order, for the applications.
    pub endpoints: Vec<(NodeId, NodeId)>,
    /// The hop whose C the run's metrics use.
    pub bottleneck: HopId,
}

/// Resolves a queue size to a drop-tail limit.
pub(crate) fn queue_limit(size: Size, bdp_bytes: u64, ns2_packets: bool) -> QueueLimit {
    match size {
        Size::Bytes(b) => QueueLimit::Bytes(b),
        // tcp/ns2.rs `drop_tail_ns2`: ns-2's meaning of a packet limit.
        Size::Packets(p) if ns2_packets => QueueLimit::PacketsNs2(p),
        Size::Packets(p) => QueueLimit::Packets(p),
        Size::Bdp(k) => QueueLimit::Bytes((k * bdp_bytes as f64).round() as u64),
        // Validation rejects cells for drop-tail queues.
        Size::Cells(c) => QueueLimit::Bytes(c * 48),
    }
}

pub(crate) const UNLIMITED: QueueLimit = QueueLimit::Packets(u64::MAX);

struct Builder<'a> {
    rngs: &'a RngFactory,
    links: Vec<Link>,
    /// Per link, its schedule if it moves (net::schedule).
    schedules: Vec<Option<Schedule>>,
}

impl Builder<'_> {
    fn link(&mut self, name: String, from: NodeId, to: NodeId, spec: &LinkSpec, limit: QueueLimit) -> LinkId {
        let errors = self.rngs.stream(&format!("link/{name}/errors"));
        self.links.push(Link::new(name, from, to, spec.rate, spec.delay, spec.ber, limit, errors));
        self.schedules.push(spec.schedule.clone());
        (self.links.len() - 1) as LinkId
    }

    /// The hop of each link built so far from `first` on: a moving hop for a link with a
    /// schedule, else a plain link.
    fn link_hops(&mut self, first: u32) -> impl Iterator<Item = Hop> + '_ {
        (first..self.links.len() as u32).map(|l| match self.schedules[l as usize].take() {
            Some(s) => Hop::Moving(Box::new(MovingHop { link: l, flight: MovingFlight::new(s), base_rate: self.links[l as usize].rate })),
            None => Hop::link(l, self.links[l as usize].to),
        })
    }
}

/// Builds the network of `sc`.
pub fn build(sc: &Scenario, rngs: &RngFactory) -> Network {
    let bdp = sc.bdp_bytes();
    let mut b = Builder { rngs, links: Vec::new(), schedules: Vec::new() };
    let ns2 = sc.tcp.ns2.drop_tail_ns2;
    let queue_limit = |size, bdp| queue_limit(size, bdp, ns2);
    let switch_limit = queue_limit(sc.switch.buffer, bdp);
    let mut nodes: Vec<Node> = Vec::new();
    let mut hops: Vec<Hop> = Vec::new();
    let mut endpoints = Vec::new();
    let bottleneck;
    match &sc.topology {
        Topology::Dumbbell { pairs, access, bottleneck: bn } => {
            let n = *pairs;
            let (r1, r2) = (2 * n, 2 * n + 1);
            let total = 2 * n + 2;
            let atm = match sc.switch.kind {
                SwitchKind::Atm { policy } => Some(policy),
                SwitchKind::DropTail => None,
            };
            let access_limit = access.queue.map(|q| queue_limit(q, bdp)).unwrap_or(UNLIMITED);
            // On ATM links the cells travel at the payload rate (after SONET framing).
            let access_atm;
            let access = if atm.is_some() {
                access_atm = LinkSpec { rate: access.payload_rate, ..access.clone() };
                &access_atm
            } else {
                access
            };
            let bn_limit = bn.queue.map(|q| queue_limit(q, bdp)).unwrap_or(switch_limit);
            // Four access links a pair and the bottleneck's two: reserved at once, as a vector
            // grown by doubling left up to half its room unused (a quarter of the links' 1,678
            // bytes per flow at 100,000 flows; bench/README.md "The kernel's share").
            b.links.reserve_exact(4 * n as usize + 2);
            let fwd = b.link("bottleneck".into(), r1, r2, bn, bn_limit);
            let rev = b.link("bottleneck-rev".into(), r2, r1, bn, bn_limit);
            // Per pair: (up, down, out, back) links.
            let mut access_links = Vec::with_capacity(n as usize);
            for i in 0..n {
                let (s, d) = (i, n + i);
                let up = b.link(format!("src{i}->r1"), s, r1, access, access_limit);
                let down = b.link(format!("r1->src{i}"), r1, s, access, access_limit);
                let out = b.link(format!("r2->dst{i}"), r2, d, access, access_limit);
                let back = b.link(format!("dst{i}->r2"), d, r2, access, access_limit);
                access_links.push((up, down, out, back));
                endpoints.push((s, d));
            }
            nodes.extend((0..total).map(|_| Node { routes: Routes::None }));
            match atm {
                None => {
                    hops.extend(b.link_hops(0));
                    let mut t1 = vec![Via::NONE; total as usize];
                    let mut t2 = vec![Via::NONE; total as usize];
                    for (i, &(up, down, out, back)) in access_links.iter().enumerate() {
                        let (s, d) = (i as u32, n + i as u32);
                        nodes[s as usize].routes = Routes::Default(Via::hop(up));
                        nodes[d as usize].routes = Routes::Default(Via::hop(back));
                        t1[s as usize] = Via::hop(down);
                        t1[d as usize] = Via::hop(fwd);
                        t2[d as usize] = Via::hop(out);
                        t2[s as usize] = Via::hop(rev);
                    }
                    nodes[r1 as usize].routes = Routes::Table(t1);
                    nodes[r2 as usize].routes = Routes::Table(t2);
                    bottleneck = fwd;
                }
                Some(policy) => {
                    // Hop 0: switch 1's port onto the bottleneck, fed by the sources' access
                    // links; hop 1: switch 2's port onto the reverse bottleneck. VC i is pair i.
                    for (dir, (out_link, name)) in [(fwd, "bottleneck"), (rev, "bottleneck-rev")].into_iter().enumerate() {
                        let vcs = access_links.iter().map(|&(up, down, out, back)| if dir == 0 { (up, access.rate, out) } else { (back, access.rate, down) }).collect();
                        let spec = AtmHopSpec {
                            capacity: sc.switch.buffer_cells as u32,
                            policy,
                            partial_discard: sc.switch.partial_packet_discard,
                            out_rate: bn.payload_rate,
                            out_delay: bn.delay,
                            out_ber: bn.ber,
                            out_link,
                            egress_rate: access.rate,
                            egress_delay: access.delay,
                            vcs,
                        };
                        let errors = rngs.stream(&format!("atm/{name}/errors"));
                        hops.push(Hop::Atm(Box::new(AtmHop::new(spec, errors).expect("validated ATM parameters"))));
                    }
                    for i in 0..n {
                        nodes[i as usize].routes = Routes::Default(Via { hop: 0, input: i });
                        nodes[(n + i) as usize].routes = Routes::Default(Via { hop: 1, input: i });
                    }
                    bottleneck = 0;
                }
            }
        }
        Topology::Path { hops: specs } => {
            let h = specs.len() as u32;
            nodes.extend((0..=h).map(|i| Node { routes: Routes::Chain { me: i, up: Via::NONE, down: Via::NONE } }));
            for (i, spec) in specs.iter().enumerate() {
                let i = i as u32;
                let limit = spec.queue.map(|q| queue_limit(q, bdp)).unwrap_or(switch_limit);
                let f = b.link(format!("hop{i}"), i, i + 1, spec, limit);
                let r = b.link(format!("hop{i}-rev"), i + 1, i, spec, limit);
                if let Routes::Chain { up, .. } = &mut nodes[i as usize].routes {
                    *up = Via::hop(f);
                }
                if let Routes::Chain { down, .. } = &mut nodes[(i + 1) as usize].routes {
                    *down = Via::hop(r);
                }
            }
            hops.extend(b.link_hops(0));
            endpoints.push((0, h));
            // The slowest hop (the first of equals), forward direction.
            let slowest = specs.iter().enumerate().min_by_key(|(_, s)| s.rate).map_or(0, |(i, _)| i as u32);
            bottleneck = 2 * slowest;
        }
        Topology::Gateway(g) => {
            let n = g.servers.len() as u32;
            let (sgw, vsat) = (n, n + 1);
            let total = 2 * n + 2;
            let limit = |spec: &LinkSpec| spec.queue.map(|q| queue_limit(q, bdp)).unwrap_or(UNLIMITED);
            let mut ups = Vec::new();
            let mut downs = Vec::new();
            for (i, spec) in g.servers.iter().enumerate() {
                ups.push(b.link(format!("srv{i}->sgw"), i as u32, sgw, spec, limit(spec)));
                downs.push(b.link(format!("sgw->srv{i}"), sgw, i as u32, spec, limit(spec)));
            }
            let sat = b.link("sat".into(), sgw, vsat, &g.satellite, limit(&g.satellite));
            let ret = b.link("sat-return".into(), vsat, sgw, &g.return_link, limit(&g.return_link));
            let lan = LinkSpec { rate: crate::scenario::validate::gateway::CLIENT_LAN_RATE, payload_rate: crate::scenario::validate::gateway::CLIENT_LAN_RATE, delay: crate::time::SimTime::ZERO, ber: 0.0, queue: None, schedule: None };
            let mut to_cli = Vec::new();
            let mut from_cli = Vec::new();
            for i in 0..n {
                to_cli.push(b.link(format!("vsat->cli{i}"), vsat, n + 2 + i, &lan, UNLIMITED));
                from_cli.push(b.link(format!("cli{i}->vsat"), n + 2 + i, vsat, &lan, UNLIMITED));
            }
            hops.extend(b.links.iter().enumerate().map(|(l, k)| Hop::link(l as u32, k.to)));
            nodes.extend((0..total).map(|_| Node { routes: Routes::None }));
            let mut t_sgw = vec![Via::NONE; total as usize];
            let mut t_vsat = vec![Via::NONE; total as usize];
            for i in 0..n as usize {
                let (srv, cli) = (i, n as usize + 2 + i);
                nodes[srv].routes = Routes::Default(Via::hop(ups[i]));
                nodes[cli].routes = Routes::Default(Via::hop(from_cli[i]));
                t_sgw[srv] = Via::hop(downs[i]);
                t_sgw[cli] = Via::hop(sat);
                t_vsat[cli] = Via::hop(to_cli[i]);
                t_vsat[srv] = Via::hop(ret);
                endpoints.push((srv as NodeId, cli as NodeId));
            }
            t_vsat[sgw as usize] = Via::hop(ret);
            t_sgw[vsat as usize] = Via::hop(sat);
            nodes[sgw as usize].routes = Routes::Table(t_sgw);
            nodes[vsat as usize].routes = Routes::Table(t_vsat);
            bottleneck = sat;
        }
        Topology::Graph(g) => {
            // Link 2i is "from->to" of g.links[i], link 2i + 1 "to->from"; hop k is link k.
            for (a, z, spec) in &g.links {
                let limit = spec.queue.map(|q| queue_limit(q, bdp)).unwrap_or(switch_limit);
                let (na, nz) = (&g.nodes[*a as usize], &g.nodes[*z as usize]);
                b.link(format!("{na}->{nz}"), *a, *z, spec, limit);
                b.link(format!("{nz}->{na}"), *z, *a, spec, limit);
            }
            hops.extend(b.link_hops(0));
            let n = g.nodes.len();
            let dir = g.directed();
            let mut tables = vec![vec![Via::NONE; n]; n];
            for d in 0..n as u32 {
                let dist = shortest_paths(n, &dir, d);
                for (v, table) in tables.iter_mut().enumerate() {
                    let Some(dv) = dist[v] else { continue };
                    // The first link (lowest index) that starts a shortest path toward d.
                    table[d as usize] = dir
                        .iter()
                        .enumerate()
                        .find(|(_, &(from, to, delay))| from == v as u32 && dist[to as usize].is_some_and(|(dw, hw)| (dw + delay, hw + 1) == dv))
                        .map_or(Via::NONE, |(k, _)| Via::hop(k as HopId));
                }
            }
            nodes.extend(tables.into_iter().map(|t| Node { routes: Routes::Table(t) }));
            endpoints.extend(g.flows.iter().copied());
            bottleneck = 2 * g.bottleneck as HopId;
        }
    }
    Network { nodes, links: b.links, hops, endpoints, bottleneck }
}

/// Shortest paths toward `dst` over one-way links `(from, to, delay)`: for each node, the
/// (total delay, hop count) of its shortest path to `dst` (fewest hops among equal delays),
/// `None` if no path. Dijkstra with a binary heap, O(E log V).
pub fn shortest_paths(n: usize, links: &[(u32, u32, SimTime)], dst: u32) -> Vec<Option<(SimTime, u32)>> {
    use std::cmp::Reverse;
    let mut into: Vec<Vec<(u32, SimTime)>> = vec![Vec::new(); n];
    for &(from, to, delay) in links {
        into[to as usize].push((from, delay));
    }
    let mut dist: Vec<Option<(SimTime, u32)>> = vec![None; n];
    let mut heap = std::collections::BinaryHeap::new();
    dist[dst as usize] = Some((SimTime::ZERO, 0));
    heap.push(Reverse((SimTime::ZERO, 0u32, dst)));
    while let Some(Reverse((d, h, v))) = heap.pop() {
        if dist[v as usize] != Some((d, h)) {
            continue;
        }
        for &(u, delay) in &into[v as usize] {
            let cand = (d + delay, h + 1);
            if dist[u as usize].is_none_or(|cur| cand < cur) {
                dist[u as usize] = Some(cand);
                heap.push(Reverse((cand.0, cand.1, u)));
            }
        }
    }
    dist
}

/// No single feeder (see [`single_feeders`]).
pub const NO_FEEDER: HopId = u32::MAX;

/// Hop chaining (issue 15): for each hop, the one hop that feeds it, where a packet's outcome
/// on it is then already determined when it enters that feeder ([`NO_FEEDER`] otherwise).
///
/// A hop `n` leaving node X has a single feeder `h` when every packet that can enter `n` has
/// just crossed `h` into X: no host at X puts packets on `n` and no other hop brings X a
/// packet that X routes onto `n`. Both must be plain drop-tail links (`Hop::Link`): `h`
/// delivers in the order it sends (one rate, one delay), so the packets reach X, and enter
/// `n`, in the order they entered `h`; the arrival time at X of each is known when it enters
/// `h` (`Link::enqueue`); `n` sees nothing else. Offering a packet to `n` at that future
/// arrival time, as soon as it enters `h`, then calls `n`'s `Link::enqueue` with the same
/// packets, in the same order, at the same times as waiting for the arrival would: its
/// departure (max(arrival, previous departure) + serialisation), drop-tail decision, bit-error
/// draws (its own random stream), statistics and queue trace are the same. Moving links
/// (arrivals may reorder), ATM ports and custom hops are never chained.
///
/// Which packets can enter a hop follows from the routes and the host pairs that exchange
/// packets (`pairs`: each flow's two ends; data one way, ACKs the other): each pair's path is
/// walked in both directions.
pub fn single_feeders(nodes: &[Node], links: &[Link], hops: &[Hop], pairs: impl IntoIterator<Item = (NodeId, NodeId)>) -> Vec<HopId> {
    /// Not reached by any path yet.
    const UNSEEN: HopId = u32::MAX - 1;
    // NO_FEEDER doubles as "fed by a host, a non-link hop, or more than one hop".
    let mut feeder = vec![UNSEEN; hops.len()];
    let merge = |cur: &mut HopId, by: HopId| {
        *cur = if *cur == UNSEEN || *cur == by { by } else { NO_FEEDER };
    };
    let mut walk = |from: NodeId, to: NodeId| {
        let (mut node, mut prev) = (from, NO_FEEDER);
        // A path visits each hop at most once (routes are loop-free); the bound guards anyway.
        for _ in 0..hops.len() {
            if node == to {
                break;
            }
            let via = nodes[node as usize].route(to);
            if via == Via::NONE {
                break;
            }
            merge(&mut feeder[via.hop as usize], prev);
            match &hops[via.hop as usize] {
                Hop::Link(h) => {
                    prev = via.hop;
                    node = links[h.link as usize].to;
                }
                Hop::Moving(m) => {
                    prev = NO_FEEDER;
                    node = links[m.link as usize].to;
                }
                // An ATM port delivers to the far host itself; a custom hop's next node is
                // its own business.
                Hop::Atm(_) | Hop::Custom(_) => break,
            }
        }
    };
    for (a, b) in pairs {
        walk(a, b);
        walk(b, a);
    }
    feeder
        .iter()
        .enumerate()
        .map(|(n, &f)| match (&hops[n], hops.get(f as usize)) {
            (Hop::Link(_), Some(Hop::Link(_))) => f,
            _ => NO_FEEDER,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load;

    const LINKS: &str = "[links.access]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n[links.bottleneck]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n";

    fn feeders(text: &str) -> (Vec<String>, Vec<HopId>) {
        let (sc, _) = load(text, &[], None).expect("valid scenario");
        let rngs = RngFactory::new(1);
        let net = build(&sc, &rngs);
        let f = single_feeders(&net.nodes, &net.links, &net.hops, net.endpoints.iter().copied());
        (net.links.iter().map(|l| l.name.clone()).collect(), f)
    }

    /// (hop name, its feeder's name) for every hop that has one.
    fn named(text: &str) -> Vec<(String, String)> {
        let (names, f) = feeders(text);
        f.iter().enumerate().filter(|(_, &h)| h != NO_FEEDER).map(|(n, &h)| (names[n].clone(), names[h as usize].clone())).collect()
    }

    #[test]
    fn a_dumbbell_chains_the_far_access_links_to_the_bottleneck() {
        // Data: src0 -> r1 -> bottleneck -> r2 -> dst0; ACKs the other way. The links into
        // r1 and r2 are fed by hosts, the bottleneck by two hosts' links: not chained.
        let got = named(&format!("[topology]\npairs = 2\n{LINKS}"));
        let want = [("r1->src0", "bottleneck-rev"), ("r2->dst0", "bottleneck"), ("r1->src1", "bottleneck-rev"), ("r2->dst1", "bottleneck")];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn a_path_chains_every_hop_after_the_first() {
        let text = "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[[links.path]]\nrate = \"2Mbps\"\ndelay = \"250ms\"\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n";
        let want = [("hop0-rev", "hop1-rev"), ("hop1", "hop0"), ("hop1-rev", "hop2-rev"), ("hop2", "hop1")];
        assert_eq!(named(text), want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn a_hop_fed_by_two_links_or_a_host_is_not_chained() {
        // a -> b -> c with flows a->c and b->c: b->c carries a's packets and b's own.
        let text = "[topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\", \"c\"]\nflows = [\"a->c\", \"b->c\"]\n[[links.graph]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\n[[links.graph]]\nfrom = \"b\"\nto = \"c\"\nrate = \"10Mbps\"\n[switch]\nbuffer = \"10pkt\"\n";
        let (names, f) = feeders(text);
        let b_c = names.iter().position(|n| n == "b->c").unwrap();
        let c_b = names.iter().position(|n| n == "c->b").unwrap();
        let b_a = names.iter().position(|n| n == "b->a").unwrap();
        assert_eq!(f[b_c], NO_FEEDER);
        assert_eq!(f[c_b], NO_FEEDER, "c is a host: it originates every packet on c->b");
        // ACKs of a->c only reach b->a from c->b.
        assert_eq!(f[b_a] as usize, c_b);
    }

    #[test]
    fn atm_ports_and_moving_links_are_never_chained() {
        let atm = include_str!("../../../../scenarios/kota-geo.toml").replace("pairs = 100", "pairs = 2");
        let (_, f) = feeders(&atm);
        assert!(f.iter().all(|&h| h == NO_FEEDER));
        let text = "[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[[links.path]]\nrate = \"2Mbps\"\nschedule = [{ at = \"0s\", delay = \"250ms\" }]\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n";
        // hop1 moves (both ways): hop2 and hop0-rev, which it feeds, are not chained, nor
        // is hop1-rev, fed by hop2-rev. Without the schedule, four hops are (previous test).
        assert_eq!(named(text), vec![]);
    }
}
