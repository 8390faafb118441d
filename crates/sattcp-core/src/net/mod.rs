//! The network: packets, links with drop-tail queues, hops (what queues a packet onto a link:
//! an IP link, an ATM switch port), nodes with their routes, the topology builder, and the
//! packet taps used by packet traces.

pub mod atm_hop;
pub mod hop;
pub mod link;
pub mod packet;
pub mod schedule;
pub mod tap;
pub mod topology;
