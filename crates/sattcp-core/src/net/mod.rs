//! Packets, links, queues and nodes of the IP network.

pub mod link;
pub mod packet;
