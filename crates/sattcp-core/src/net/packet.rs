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

/// `repr(C)`, the header fields first in [`Header`]'s order: a packet's header is then the
/// segment's first 32 bytes, copied as a block both ways (`header`, `Header::with_blocks`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Segment {
    /// Sequence number of the first byte (or of the SYN/FIN).
    pub seq: u64,
    /// Cumulative acknowledgement: next byte expected (valid when `flags & ACK`).
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    /// The 16-bit advertised window field as sent (scaled by the peer's shift unless SYN).
    pub window: u16,
    /// Which transmission of these bytes this is: 0 for the first, 1 for the first
    /// retransmission... Not on the wire; used by statistics and scripted losses.
    pub tx_count: u16,
    /// `flags::SYN | flags::ACK | flags::FIN`.
    pub flags: u8,
    /// Window-scale option (SYN segments only).
    pub wscale: Option<u8>,
    /// SACK-permitted option (SYN segments only).
    pub sack_permitted: bool,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

/// The flag tests and sequence length shared by [`Segment`] and [`Header`] (same field names).
macro_rules! tcp_flag_accessors {
    () => {
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
        /// Sequence space consumed: payload plus one for SYN and for FIN.
        pub fn seq_len(&self) -> u64 {
            self.len as u64 + self.is_syn() as u64 + self.is_fin() as u64
        }
    };
}

impl Segment {
    tcp_flag_accessors!();
    /// The SACK blocks carried.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.n_sack as usize]
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

/// The TCP header fields of a segment as a packet carries them: everything of [`Segment`] but
/// its SACK blocks, which the world's packet slab keeps out of line (only ACKs with SACK blocks
/// use them), so that a [`Packet`] fits one 64-byte cache line (issue 15: at 10,000 flows and
/// more the packets in flight spread over hundreds of MB and every packet touched is a cache
/// miss; a 112-byte packet with its three 16-byte blocks inline spanned two or three lines).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Header {
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub window: u16,
    pub tx_count: u16,
    pub flags: u8,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// Number of SACK blocks the segment carries (kept beside the packet).
    pub n_sack: u8,
}

impl Header {
    tcp_flag_accessors!();
    /// The whole segment, with its SACK blocks (`sack`: at least `n_sack` of them).
    pub fn segment(&self, sack: &[SackBlock]) -> Segment {
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let n = self.n_sack as usize;
        blocks[..n].copy_from_slice(&sack[..n]);
        self.with_blocks(blocks)
    }
    /// The whole segment with these blocks (the first `n_sack` of them are its own).
    #[inline]
    pub fn with_blocks(&self, sack: [SackBlock; MAX_SACK_BLOCKS]) -> Segment {
        Segment { seq: self.seq, ack: self.ack, len: self.len, flags: self.flags, window: self.window, wscale: self.wscale, sack_permitted: self.sack_permitted, n_sack: self.n_sack, sack, tx_count: self.tx_count }
    }
}

impl Segment {
    /// The header a packet carries (the SACK blocks travel beside it).
    #[inline]
    pub fn header(&self) -> Header {
        Header { seq: self.seq, ack: self.ack, len: self.len, flags: self.flags, window: self.window, wscale: self.wscale, sack_permitted: self.sack_permitted, n_sack: self.n_sack, tx_count: self.tx_count }
    }
}

/// An IP packet carrying one TCP segment: its header here, its SACK blocks (if any) in a
/// [`SackPool`] at `sack_at`. Aligned to a cache line and no bigger than one (checked by
/// a test below), so that touching a packet in flight costs one line.
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// Unique per run, in creation order.
    pub uid: u64,
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// IP datagram bytes (payload + 40).
    pub bytes: u32,
    pub seg: Header,
    pub dir: Dir,
    /// Set by a link's bit-error model; the receiving node discards the packet and counts it.
    pub corrupted: bool,
    /// Where the world's [`SackPool`] keeps the SACK blocks (when `seg.n_sack > 0`).
    pub(crate) sack_at: u32,
}

/// The SACK blocks of the packets in flight, out of line (see [`Header`]): written and read
/// only for the ACKs that carry some, reusing freed entries, so it stays as small as the
/// SACK-carrying ACKs in flight.
#[derive(Default)]
pub struct SackPool {
    blocks: Vec<[SackBlock; MAX_SACK_BLOCKS]>,
    free: Vec<u32>,
}

impl SackPool {
    /// Keeps `blocks`; returns where (the packet's `sack_at`).
    #[cold]
    pub(crate) fn store(&mut self, blocks: &[SackBlock; MAX_SACK_BLOCKS]) -> u32 {
        if let Some(j) = self.free.pop() {
            self.blocks[j as usize] = *blocks;
            j
        } else {
            self.blocks.push(*blocks);
            (self.blocks.len() - 1) as u32
        }
    }
    /// `p` leaves the network: its blocks' entry is free again.
    #[inline]
    pub(crate) fn release(&mut self, p: &Packet) {
        if p.seg.n_sack > 0 {
            self.free.push(p.sack_at);
        }
    }
    /// The SACK blocks `p` carries.
    pub fn blocks(&self, p: &Packet) -> &[SackBlock] {
        if p.seg.n_sack == 0 {
            &[]
        } else {
            &self.blocks[p.sack_at as usize][..p.seg.n_sack as usize]
        }
    }
    /// The whole segment `p` carries.
    #[inline]
    pub fn segment(&self, p: &Packet) -> Segment {
        let sack = if p.seg.n_sack == 0 { [SackBlock::default(); MAX_SACK_BLOCKS] } else { self.blocks[p.sack_at as usize] };
        p.seg.with_blocks(sack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_fits_one_cache_line() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<Packet>(), 64);
        assert_eq!((size_of::<Header>(), offset_of!(Segment, sack)), (32, 32), "the header is the segment's first 32 bytes");
        assert_eq!(offset_of!(Segment, n_sack), offset_of!(Header, n_sack));
        assert_eq!(std::mem::align_of::<Packet>(), 64);
    }

    #[test]
    fn header_and_blocks_give_back_the_segment() {
        let blocks = [SackBlock { start: 3001, end: 4001 }, SackBlock { start: 6001, end: 9001 }, SackBlock::default()];
        let seg = Segment { seq: 1, ack: 1001, len: 0, flags: flags::ACK, window: 65535, n_sack: 2, sack: blocks, tx_count: 0, ..Default::default() };
        let h = seg.header();
        assert_eq!(h.segment(&blocks), seg);
        assert_eq!(h.segment(seg.sack_blocks()).sack_blocks(), &blocks[..2]);
        let syn = Segment { flags: flags::SYN, window: 65535, wscale: Some(6), sack_permitted: true, ..Default::default() };
        assert_eq!(syn.header().segment(&[]), syn, "no blocks: none needed");
        assert_eq!((syn.header().seq_len(), syn.header().is_syn()), (1, true));
    }

    #[test]
    fn the_sack_pool_keeps_blocks_only_for_packets_that_carry_some_and_reuses_them() {
        let mut pool = SackPool::default();
        let blocks = [SackBlock { start: 3001, end: 4001 }, SackBlock::default(), SackBlock::default()];
        let ack = Segment { seq: 1, ack: 1001, flags: flags::ACK, n_sack: 1, sack: blocks, ..Default::default() };
        let p = Packet { uid: 0, flow: 0, src: 0, dst: 1, bytes: 40, seg: ack.header(), dir: Dir::Ack, corrupted: false, sack_at: pool.store(&ack.sack) };
        assert_eq!((pool.segment(&p), pool.blocks(&p)), (ack, &blocks[..1]));
        pool.release(&p);
        assert_eq!(pool.store(&[SackBlock::default(); MAX_SACK_BLOCKS]), p.sack_at, "the freed entry again");
        let plain = Packet { seg: Segment { seq: 1, ack: 1001, flags: flags::ACK, ..Default::default() }.header(), ..p.clone() };
        assert_eq!((pool.blocks(&plain), pool.segment(&plain).n_sack), (&[][..], 0), "no blocks: the pool is not read");
        pool.release(&plain);
        assert!(pool.free.is_empty(), "a packet without blocks frees nothing");
    }
}
