//! Congestion control: how the window grows and how far it shrinks (ns-3's
//! `TcpCongestionOps`). A controller never writes the window: it returns decisions
//! ([`Reduction`], a grown cwnd) that the sender applies (STYLE.md).

pub mod cubic;
pub mod hybla;
pub mod reno;

use super::config::CcKind;
use crate::time::SimTime;

/// What a controller sees of one ACK of new data.
#[derive(Copy, Clone, Debug)]
pub struct AckSample {
    pub now: SimTime,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// The smoothed RTT after this ACK, if any sample exists.
    pub srtt: Option<SimTime>,
}

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
    Cubic(cubic::Cubic),
    Hybla(hybla::Hybla),
}

impl Cc {
    pub fn new(kind: CcKind) -> Self {
        match kind {
            CcKind::RenoAimd => Cc::RenoAimd(Default::default()),
            CcKind::Cubic => Cc::Cubic(Default::default()),
            CcKind::Hybla => Cc::Hybla(hybla::Hybla),
        }
    }

    /// This controller with ns-2's fractional window arithmetic (tcp/ns2.rs `window_arith`;
    /// Reno AIMD only: the others keep bytes).
    pub fn with_ns2_window(self, on: bool) -> Self {
        match self {
            Cc::RenoAimd(_) if on => Cc::RenoAimd(reno::RenoAimd::ns2()),
            c => c,
        }
    }

    /// The cwnd after an ACK of new data outside loss recovery.
    #[inline]
    pub fn on_ack(&mut self, w: &Window, s: &AckSample) -> u64 {
        match self {
            Cc::RenoAimd(c) => c.on_ack(w, s.acked),
            Cc::Cubic(c) => c.on_ack(w, s),
            Cc::Hybla(c) => c.on_ack(w, s),
        }
    }

    /// Fast retransmit: `basis` is the amount the recovery halves (ns-2: the window in whole
    /// segments; RFC 5681 (4): FlightSize).
    pub fn on_dupack_loss(&mut self, w: &Window, basis: u64) -> Reduction {
        match self {
            Cc::RenoAimd(c) => c.on_dupack_loss(w, basis),
            Cc::Cubic(c) => c.on_dupack_loss(w, basis),
            Cc::Hybla(c) => c.on_dupack_loss(w, basis),
        }
    }

    /// Retransmission timeout.
    pub fn on_timeout(&mut self, w: &Window, basis: u64) -> Reduction {
        match self {
            Cc::RenoAimd(c) => c.on_timeout(w, basis),
            Cc::Cubic(c) => c.on_timeout(w, basis),
            Cc::Hybla(c) => c.on_timeout(w, basis),
        }
    }
}
