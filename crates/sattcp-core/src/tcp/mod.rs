//! TCP: one implementation with pluggable loss recovery and congestion control (STYLE.md).
//!
//! The two ends are passive state machines (smoltcp style): they own no clock and no queue.
//! The engine hands them segments and the current time, collects the segments they emit into
//! `out`, and asks `poll_at()` when they next need to run (a retransmission or delayed-ACK
//! deadline). Only the engine schedules.
//!
//! A connection is modelled as ns-2's one-way agents were (the seeds used ns-2.1b3): a
//! [`TcpSender`] that sends data and receives pure ACKs, and a [`TcpReceiver`] that receives
//! data and answers with pure ACKs (no piggybacking). A request/response application uses two
//! such half-connections, one each way.
//!
//! Parts: [`rtt`] (RTT/RTO), [`scoreboard`] (sent-but-unacked segments, SACK marks),
//! [`recovery`] (Vanilla, Reno, NewReno, SACK variants), [`cc`] (window growth and cuts, and
//! the hooks a controller sees), [`rate`] (delivery-rate samples), [`pacing`] (the pacer).
//! docs/tcp.md describes each flavour as implemented.

pub mod cc;
pub mod config;
pub mod pacing;
pub mod rack;
pub mod rate;
pub mod ns2;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;

#[cfg(test)]
mod testkit;
#[cfg(test)]
mod signature_tests;

pub use config::{flavor, BackoffReset, CcKind, RecoveryKind, RttEstimatorKind, TcpConfig};
pub use receiver::{ReceiverStats, TcpReceiver};
pub use recovery::CongState;
pub use sender::{SenderStats, TcpSender};
