//! What travels: TCP segments inside IP packets.
//!
//! Sequence numbers are 64-bit and never wrap (2^64 bytes is beyond any simulated run), which
//! keeps comparisons plain; the initial sequence number is 0, the SYN occupies sequence 0, so
//! the first data byte has sequence 1 and data offset 0 ("data offset" = seq - 1).

/// Index of a TCP connection (half-connection pair) in the world, dense from 0.
pub type FlowId = u32;
/// Index of a node in the world, dense from 0.
pub type NodeId = u32;

/// IP header bytes (no options), as counted by the seeds (seed 000 4.3).
pub const IP_HEADER: u32 = 20;
/// TCP header bytes. By default no option bytes are counted (window scale, SACK-permitted and
/// SACK blocks alike). ns-2 counted no options in its 40-byte header either, except SACK
/// blocks: its SACK sink adds 8 bytes per block to the ACK (`tcp-sink.cc`, `Sacker::
/// append_ack()`: `ch->size() += sack_index * 8`, no option header), which
/// [`Segment::wire_bytes`] models with `sack_option_bytes` (tcp/ns2.rs).
pub const TCP_HEADER: u32 = 20;
/// ns-2's bytes per SACK block on an ACK (two 4-byte edges).
pub const NS2_SACK_BLOCK_BYTES: u32 = 8;

/// Segment flag bits.
pub mod flags {
    pub const SYN: u8 = 1;
    pub const ACK: u8 = 2;
    pub const FIN: u8 = 4;
}

/// One SACK block: the bytes `[start, end)` in sequence space (RFC 2018: left edge, right edge).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// The SACK blocks carried by one ACK: at most 3 (RFC 2018 with the timestamp option absent
/// leaves room for 4; the seeds' ns-2 sink sent 3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first byte (or of the SYN/FIN).
    pub seq: u64,
    /// Cumulative acknowledgement: next byte expected (valid when `flags & ACK`).
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    /// `flags::SYN | flags::ACK | flags::FIN`.
    pub flags: u8,
    /// The 16-bit advertised window field as sent (scaled by the peer's shift unless SYN).
    pub window: u16,
    /// Window-scale option (SYN segments only).
    pub wscale: Option<u8>,
    /// SACK-permitted option (SYN segments only).
    pub sack_permitted: bool,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    /// Which transmission of these bytes this is: 0 for the first, 1 for the first
    /// retransmission... Not on the wire; used by statistics and scripted losses.
    pub tx_count: u16,
}

impl Segment {
    #[inline]
    pub fn is_syn(&self) -> bool {
        self.flags & flags::SYN != 0
    }
    #[inline]
    pub fn is_fin(&self) -> bool {
        self.flags & flags::FIN != 0
    }
    #[inline]
    pub fn has_ack(&self) -> bool {
        self.flags & flags::ACK != 0
    }
    /// The SACK blocks carried.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.n_sack as usize]
    }
    /// Sequence space consumed: payload plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.is_syn() as u64 + self.is_fin() as u64
    }
    /// IP datagram size in bytes.
    pub fn ip_bytes(&self) -> u32 {
        self.len + IP_HEADER + TCP_HEADER
    }
    /// IP datagram size, with ns-2's 8 bytes per SACK block when `sack_option_bytes`.
    #[inline]
    pub fn wire_bytes(&self, sack_option_bytes: bool) -> u32 {
        self.ip_bytes() + if sack_option_bytes { self.n_sack as u32 * NS2_SACK_BLOCK_BYTES } else { 0 }
    }
}

/// Direction of a packet within a connection: `Data` from the sending TCP to the receiving
/// TCP, `Ack` back.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Data,
    Ack,
}

/// An IP packet carrying one TCP segment.
#[derive(Clone, Debug)]
pub struct Packet {
    /// Unique per run, in creation order.
    pub uid: u64,
    pub flow: FlowId,
    pub dir: Dir,
    pub src: NodeId,
    pub dst: NodeId,
    /// IP datagram bytes (payload + 40).
    pub bytes: u32,
    pub seg: Segment,
    /// Set by a link's bit-error model; the receiving node discards the packet and counts it.
    pub corrupted: bool,
}
