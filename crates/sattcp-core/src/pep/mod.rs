//! The satellite gateway (SGW) of seed 004 (Zhou, Liu, Baras, "Flow control at satellite
//! gateways", CSHCN TR 2002-19): a performance-enhancing proxy that splits each TCP connection
//! between an Internet server and a VSAT client and carries the satellite leg with a rate-based
//! reliable protocol.
//!
//! The parts are passive state machines (time comes in as an argument, each says when it next
//! needs to run), so that each can be tested alone and the world only glues them together:
//!
//! | part | seed 004 | file |
//! |---|---|---|
//! | round-robin scheduler over the per-connection queues, at the satellite link's rate | §III.A | [`scheduler`] |
//! | loss detection from in-order delivery on the FIFO satellite link | §III.B | [`loss`] |
//! | the satellite-leg sender: one buffer per connection, client window in segments, priority retransmissions, fine timer sending two copies, normal or modified SACK semantics | §II.A, §III, §IV | [`sat_sender`] |
//! | the client: reorder buffer, ACK every N packets, up to four SACK blocks, window in segments | §III.B, §V.A.2 | [`sat_receiver`] |
//! | ACK pacing toward the servers | §IV | [`ack_pacer`] |
//!
//! Sequence numbers on the satellite leg are segment indices (0, 1, 2...): every connection
//! uses the same segment size (§III.A: "Fairness is guaranteed by using the same maximum
//! segment size for all the TCP connections"), segment `k` carries stream bytes
//! `[k * mss, (k + 1) * mss)`, and only the stream's last segment may be shorter.

pub mod ack_pacer;
pub mod gateway;
pub mod loss;
pub mod sat_receiver;
pub mod sat_sender;
pub mod scheduler;

/// Index of a segment on the satellite leg (segment `k` holds bytes `[k mss, (k+1) mss)`).
pub type SegNo = u64;

/// A SACK block in segment numbers: segments `[start, end)` are held by the client.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SegBlock {
    pub start: SegNo,
    pub end: SegNo,
}

/// Up to four SACK blocks per ACK (seed 004 §III.B: "one acknowledgement can carry up to four
/// SACK blocks"; RFC 2018 §3 leaves room for four without the timestamp option).
pub const MAX_SAT_SACK_BLOCKS: usize = 4;

/// An acknowledgement on the satellite return channel.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SatAck {
    /// Next segment expected in order: every segment below it is held by the client.
    pub cum: SegNo,
    /// Number of valid entries in `sack` (most recently changed block first, RFC 2018 §4).
    pub n_sack: u8,
    pub sack: [SegBlock; MAX_SAT_SACK_BLOCKS],
    /// The client's advertised window, counted in segments in the 16-bit field, never scaled
    /// (seed 004 §III.A: "the 16-bit receiver window field is still used but its unit is
    /// maximum segment size rather than byte").
    pub window_segs: u16,
}

impl SatAck {
    pub fn blocks(&self) -> &[SegBlock] {
        &self.sack[..self.n_sack as usize]
    }
}

/// Which SACK semantics the satellite leg uses (seed 004 §IV).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SackSemantics {
    /// RFC 2018: the receiver may renege, so SACKed segments stay in the sender's buffer until
    /// the cumulative ACK passes them, and a timeout clears the SACK state.
    Normal,
    /// Seed 004 §IV: the receiver never reneges and the sender keeps its SACK state across
    /// timeouts, so SACKed segments leave the SGW buffer at once; only corrupted ones stay.
    Modified,
}
