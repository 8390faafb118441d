//! Packets, links, queues and nodes of the IP network.

pub mod packet;
