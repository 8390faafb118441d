//! Congestion control: how the window grows and how far it shrinks (ns-3's
//! `TcpCongestionOps`). A controller never writes the window: it returns decisions
//! ([`Reduction`], a grown cwnd) that the sender applies (STYLE.md).

pub mod reno;

use super::config::CcKind;

/// The sender's congestion window and slow-start threshold, in bytes. Only the sender and,
/// during loss recovery, the recovery algorithm (window inflation) write it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

/// What a controller decides on a congestion signal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    pub ssthresh: u64,
    pub cwnd: u64,
}

/// The congestion controller of one sender (static dispatch, STYLE.md).
#[derive(Clone, Debug)]
pub enum Cc {
    RenoAimd(reno::RenoAimd),
}

impl Cc {
    pub fn new(kind: CcKind) -> Self {
        match kind {
            CcKind::RenoAimd => Cc::RenoAimd(reno::RenoAimd),
        }
    }

    /// The cwnd after an ACK that acknowledged `acked` new bytes outside loss recovery.
    #[inline]
    pub fn on_ack(&mut self, w: &Window, acked: u64) -> u64 {
        match self {
            Cc::RenoAimd(c) => c.on_ack(w, acked),
        }
    }

    /// Fast retransmit: `basis` is the amount the recovery halves (ns-2: the window in whole
    /// segments; RFC 5681 (4): FlightSize).
    pub fn on_dupack_loss(&mut self, w: &Window, basis: u64) -> Reduction {
        match self {
            Cc::RenoAimd(c) => c.on_dupack_loss(w, basis),
        }
    }

    /// Retransmission timeout.
    pub fn on_timeout(&mut self, w: &Window, basis: u64) -> Reduction {
        match self {
            Cc::RenoAimd(c) => c.on_timeout(w, basis),
        }
    }
}
