//! A packet log as a pcapng file that Wireshark, tshark and tcptrace open.
//!
//! - One interface per link (`if_name` = the link's name, `if_speed` = its rate), link type
//!   RAW (101: packets start with their IPv4 header), nanosecond timestamps (`if_tsresol` 9) from
//!   the run's start. Each interface carries the link's wire: every packet at the instant its
//!   transmission starts (`dequeued` events), flagged outbound. A packet corrupted by a bit
//!   error on that link is flagged with the EPB link-layer "CRC error" bit and a comment.
//! - One more interface, `drops`, last: every drop (`dropped` events), at its instant, with the
//!   comment `"<link>: <reason>"` (`"node <n>: scripted"` at a sending host; queue_full, corrupted, scripted, atm_frame).
//!   Keeping drops off the links' interfaces leaves each link's capture what a tap on its wire
//!   would see, which is what tcptrace's analysis assumes.
//! - Real IPv4/TCP headers: node n has address 10.0.0.0 + n + 1 ([`node_addr`]); a flow's data
//!   sender uses port 10000 + flow (modulo 55536) and its receiver port 5001 ([`flow_ports`]);
//!   SYNs carry MSS, window-scale and SACK-permitted options, ACKs their SACK blocks (RFC 2018),
//!   each option list padded with NOPs to 32-bit words as stacks send them. Sequence and
//!   acknowledgement numbers are the simulator's (initial sequence number 0) modulo 2^32.
//!   No timestamp option: the simulated TCPs do not use RFC 7323 timestamps.
//! - Headers only: the captured length is the IP and TCP headers, the original length the whole
//!   datagram (IP total length = 20 + TCP header with options + payload: the model itself counts
//!   40 header bytes as ns-2 did, so option bytes make captured lengths a little larger than the
//!   `bytes` column). Checksums are those of the whole datagram with a payload of zeros (a
//!   zero payload adds nothing to the one's-complement sum), so they are correct for it.
//!
//! The container is written by the `pcap-file` crate and the headers built by `etherparse`;
//! only the TCP checksum over a payload that is not materialised is summed here, with
//! etherparse's own 16-bit word sum (`tcp_checksum_matches_etherparse_with_a_real_payload`).

use super::{DropReason, EventKind, PacketEvent, PacketLog};
use crate::net::packet::{flags, Dir, FlowId, NodeId, SackBlock};
use etherparse::{checksum::Sum16BitWords, ip_number, Ipv4Header, TcpHeader, TcpOptionElement};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, PcapError};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// IPv4 time to live written in headers (Linux's default, net.ipv4.ip_default_ttl).
pub const TTL: u8 = 64;
/// The port of every flow's receiving TCP (iperf's).
pub const RECEIVER_PORT: u16 = 5001;
/// The data sender's port of flow 0; flow f uses `SENDER_PORT_BASE + f % SENDER_PORTS`.
pub const SENDER_PORT_BASE: u16 = 10_000;
pub const SENDER_PORTS: u32 = 65_536 - SENDER_PORT_BASE as u32;
/// Largest IPv4 header (20) plus largest TCP header (60): the interfaces' snap length.
pub const SNAPLEN: u32 = 80;
/// pcapng timestamp resolution option value: 10^-9 s (pcap-file writes nanoseconds).
const TSRESOL_NS: u8 = 9;
/// EPB flags (pcapng spec, "epb_flags"): bits 0-1 direction, 2 = outbound.
pub const EPB_OUTBOUND: u32 = 0b10;
/// EPB flags: link-layer-dependent error bit 24, "CRC error".
pub const EPB_CRC_ERROR: u32 = 1 << 24;
/// The name of the interface carrying drops.
pub const DROPS_INTERFACE: &str = "drops";

/// The IPv4 address of node `n`: 10.0.0.0 + n + 1 (node 0 is 10.0.0.1).
pub fn node_addr(n: NodeId) -> [u8; 4] {
    (0x0a00_0000u32.wrapping_add(n.wrapping_add(1) & 0x00ff_ffff)).to_be_bytes()
}

/// (data sender's port, receiver's port) of `flow`.
pub fn flow_ports(flow: FlowId) -> (u16, u16) {
    (SENDER_PORT_BASE + (flow % SENDER_PORTS) as u16, RECEIVER_PORT)
}

/// The TCP options a segment carries, NOP-padded to whole 32-bit words.
fn options(e: &PacketEvent, sacks: &[SackBlock], mss: u16) -> Vec<TcpOptionElement> {
    let mut o = Vec::new();
    if e.flags & flags::SYN != 0 {
        // RFC 9293 3.7.1: MSS on SYNs; RFC 7323 2.2: window scale; RFC 2018 2: SACK-permitted.
        o.push(TcpOptionElement::MaximumSegmentSize(mss));
        if e.wscale != super::NO_WSCALE {
            o.extend([TcpOptionElement::Noop, TcpOptionElement::WindowScale(e.wscale)]);
        }
        if e.sack_permitted {
            o.extend([TcpOptionElement::Noop, TcpOptionElement::Noop, TcpOptionElement::SelectiveAcknowledgementPermitted]);
        }
    }
    if let Some((first, rest)) = sacks.split_first() {
        // RFC 2018 3: kind 5, 2 + 8n bytes; two NOPs put the blocks on word boundaries.
        let edge = |b: &SackBlock| (b.start as u32, b.end as u32);
        let mut more = [None; 3];
        for (m, b) in more.iter_mut().zip(rest) {
            *m = Some(edge(b));
        }
        o.extend([TcpOptionElement::Noop, TcpOptionElement::Noop, TcpOptionElement::SelectiveAcknowledgement(edge(first), more)]);
    }
    o
}

/// The IPv4 and TCP headers of the packet of event `e`, appended to `out`; returns the whole
/// datagram's length (headers + payload).
pub fn write_headers(e: &PacketEvent, sacks: &[SackBlock], log: &PacketLog, out: &mut Vec<u8>) -> u32 {
    let ends = &log.flows[e.flow as usize];
    let (sport, dport) = flow_ports(e.flow);
    let (src, dst, sport, dport) = match e.dir {
        Dir::Data => (node_addr(ends.src), node_addr(ends.dst), sport, dport),
        Dir::Ack => (node_addr(ends.dst), node_addr(ends.src), dport, sport),
    };
    let mut tcp = TcpHeader::new(sport, dport, e.seq as u32, e.window);
    tcp.syn = e.flags & flags::SYN != 0;
    tcp.fin = e.flags & flags::FIN != 0;
    tcp.ack = e.flags & flags::ACK != 0;
    if tcp.ack {
        tcp.acknowledgment_number = e.ack as u32;
    }
    // At most 4 + 4 + 4 (SYN) or 4 + 24 (3 SACK blocks) bytes: always within 40.
    tcp.set_options(&options(e, sacks, ends.mss)).expect("options fit in 40 bytes");
    let tcp_len = tcp.header_len() as u32 + e.len;
    let mut ip = Ipv4Header::new(tcp_len.min(u16::MAX as u32 - 20) as u16, TTL, ip_number::TCP, src, dst).expect("a datagram under 64 KiB");
    ip.identification = e.uid as u16;
    ip.header_checksum = ip.calc_header_checksum();
    tcp.checksum = tcp_checksum(&tcp, src, dst, tcp_len as u16);
    ip.write(out).expect("writing to a Vec");
    tcp.write(out).expect("writing to a Vec");
    20 + tcp_len
}

/// The TCP checksum (RFC 9293 3.1) of `tcp` followed by `tcp_len - header` zero bytes: the
/// pseudo-header with the full TCP length, then the header; zeros add nothing to the sum.
fn tcp_checksum(tcp: &TcpHeader, src: [u8; 4], dst: [u8; 4], tcp_len: u16) -> u16 {
    let mut h = tcp.clone();
    h.checksum = 0;
    Sum16BitWords::new().add_4bytes(src).add_4bytes(dst).add_2bytes([0, ip_number::TCP.0]).add_2bytes(tcp_len.to_be_bytes()).add_slice(&h.to_bytes()).ones_complement().to_be()
}

/// What was written.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Packets on the links' interfaces.
    pub wire: u64,
    /// Packets on the drops interface.
    pub drops: u64,
}

/// Writes `log` (finished: sorted by time) as a pcapng stream.
pub fn write(log: &PacketLog, out: impl Write) -> Result<Written, pcap_file::PcapError> {
    let mut w = PcapNgWriter::new(out)?;
    for l in &log.links {
        let mut idb = InterfaceDescriptionBlock::new(DataLink::RAW, SNAPLEN);
        idb.options = vec![
            InterfaceDescriptionOption::IfName(Cow::Owned(l.name.clone())),
            InterfaceDescriptionOption::IfDescription(Cow::Owned(format!("sattcp link {} from node {} to node {}", l.name, l.from, l.to))),
            InterfaceDescriptionOption::IfSpeed(l.rate_bps),
            InterfaceDescriptionOption::IfTsResol(TSRESOL_NS),
        ];
        w.write_pcapng_block(idb)?;
    }
    let drops_if = log.links.len() as u32;
    let mut idb = InterfaceDescriptionBlock::new(DataLink::RAW, SNAPLEN);
    idb.options = vec![
        InterfaceDescriptionOption::IfName(Cow::Borrowed(DROPS_INTERFACE)),
        InterfaceDescriptionOption::IfDescription(Cow::Borrowed("sattcp: every dropped packet, the comment says where and why")),
        InterfaceDescriptionOption::IfTsResol(TSRESOL_NS),
    ];
    w.write_pcapng_block(idb)?;
    // Packets corrupted on a link: (uid, link). Their transmissions are flagged.
    let corrupted: BTreeSet<(u64, u32)> = log.events().iter().filter(|e| e.kind == EventKind::Dropped && e.reason == DropReason::Corrupted).map(|e| (e.uid, e.link)).collect();
    let mut buf = Vec::with_capacity(SNAPLEN as usize);
    let mut n = Written::default();
    for e in log.events() {
        let (interface_id, options) = match e.kind {
            EventKind::Dequeued if corrupted.contains(&(e.uid, e.link)) => {
                n.wire += 1;
                (e.link, vec![EnhancedPacketOption::Flags(EPB_OUTBOUND | EPB_CRC_ERROR), EnhancedPacketOption::Comment(Cow::Borrowed("corrupted by a bit error; discarded by the receiving node"))])
            }
            EventKind::Dequeued => {
                n.wire += 1;
                (e.link, vec![EnhancedPacketOption::Flags(EPB_OUTBOUND)])
            }
            EventKind::Dropped => {
                n.drops += 1;
                // Where: the link, or for a drop at a host (scripted) the node.
                let place = log.links.get(e.link as usize).map_or_else(|| format!("node {}", e.node), |l| l.name.clone());
                (drops_if, vec![EnhancedPacketOption::Comment(Cow::Owned(format!("{place}: {}", e.reason.name())))])
            }
            _ => continue,
        };
        buf.clear();
        let original_len = write_headers(e, log.sack_blocks(e), log, &mut buf);
        w.write_pcapng_block(EnhancedPacketBlock { interface_id, timestamp: Duration::from_nanos(e.t.0), original_len, data: Cow::Borrowed(&buf), options })?;
    }
    // A buffered writer's last bytes leave at this flush: its error (a full disk) is the
    // caller's, not lost in a drop.
    w.into_inner().flush().map_err(PcapError::IoError)?;
    Ok(n)
}

/// Writes `log` to the file `path` (buffered; the last bytes' error is returned, not dropped).
/// The error is the system's (a full disk: `StorageFull`, with its errno) where writing failed,
/// else `InvalidData` with the encoder's message. Written whole or not at all by the caller
/// (Python's `sattcp.paths.writing`, as every other output file).
pub fn write_file(log: &PacketLog, path: &std::path::Path) -> std::io::Result<Written> {
    write(log, std::io::BufWriter::new(std::fs::File::create(path)?)).map_err(|e| match e {
        PcapError::IoError(io) => io,
        other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Segment;
    use crate::time::SimTime;
    use crate::trace::{FlowEnds, LinkInfo, PacketFilter};
    use etherparse::{Ipv4HeaderSlice, TcpHeaderSlice};

    fn log() -> PacketLog {
        let flows = vec![FlowEnds { src: 0, dst: 3, mss: 1460 }];
        let links = vec![LinkInfo { name: "bottleneck".into(), from: 1, to: 2, rate_bps: 45_000_000 }];
        PacketLog::new(flows, links, &PacketFilter::default(), 100)
    }

    fn syn() -> Segment {
        Segment { seq: 0, flags: flags::SYN, window: 65535, wscale: Some(6), sack_permitted: true, ..Default::default() }
    }

    fn sack_ack() -> Segment {
        let mut s = Segment { seq: 1, ack: 1461, flags: flags::ACK, window: 1024, n_sack: 3, ..Default::default() };
        s.sack = [SackBlock { start: 4381, end: 5841 }, SackBlock { start: 2921, end: 4381 }, SackBlock { start: 7301, end: 8761 }];
        s
    }

    fn headers(seg: &Segment, dir: Dir) -> (Vec<u8>, u32) {
        let mut l = log();
        l.record(SimTime::ZERO, SimTime::ZERO, EventKind::Dequeued, DropReason::None, 0, 0, 0x1_0005, 0, dir, seg);
        let e = l.events()[0];
        let mut out = Vec::new();
        let len = write_headers(&e, l.sack_blocks(&e), &l, &mut out);
        (out, len)
    }

    #[test]
    fn addresses_and_ports() {
        assert_eq!(node_addr(0), [10, 0, 0, 1]);
        assert_eq!(node_addr(299), [10, 0, 1, 44]);
        assert_eq!(flow_ports(0), (10_000, 5001));
        assert_eq!(flow_ports(55_536), (10_000, 5001));
    }

    #[test]
    fn syn_carries_mss_window_scale_and_sack_permitted() {
        let (b, len) = headers(&syn(), Dir::Data);
        // 20 IP + 20 TCP + 12 option bytes, no payload.
        assert_eq!((b.len(), len), (52, 52));
        let ip = Ipv4HeaderSlice::from_slice(&b).unwrap();
        assert_eq!((ip.source(), ip.destination(), ip.total_len(), ip.ttl(), ip.identification()), ([10, 0, 0, 1], [10, 0, 0, 4], 52, 64, 5));
        // The IPv4 header checksum: the one's complement sum of the header's words is 0xffff.
        let sum: u32 = b[..20].chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff);
        let tcp = TcpHeaderSlice::from_slice(&b[20..]).unwrap();
        assert_eq!((tcp.source_port(), tcp.destination_port(), tcp.sequence_number(), tcp.syn(), tcp.ack(), tcp.window_size()), (10_000, 5001, 0, true, false, 65535));
        // Bytes as Linux orders them: MSS 1460 (2, 4, 0x05b4), NOP, WS 6 (3, 3, 6), NOP NOP SACK-perm (4, 2).
        assert_eq!(&b[40..52], &[2, 4, 0x05, 0xb4, 1, 3, 3, 6, 1, 1, 4, 2]);
        assert_eq!(tcp.to_header().calc_checksum_ipv4_raw([10, 0, 0, 1], [10, 0, 0, 4], &[]).unwrap(), tcp.checksum());
    }

    #[test]
    fn ack_carries_its_sack_blocks_from_receiver_to_sender() {
        let (b, len) = headers(&sack_ack(), Dir::Ack);
        // 20 + 20 + NOP NOP + 2 + 3 x 8 = 68.
        assert_eq!((b.len(), len), (68, 68));
        let ip = Ipv4HeaderSlice::from_slice(&b).unwrap();
        assert_eq!((ip.source(), ip.destination()), ([10, 0, 0, 4], [10, 0, 0, 1]));
        let tcp = TcpHeaderSlice::from_slice(&b[20..]).unwrap();
        assert_eq!((tcp.source_port(), tcp.destination_port(), tcp.acknowledgment_number(), tcp.ack()), (5001, 10_000, 1461, true));
        let blocks: Vec<u32> = b[44..68].chunks(4).map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]])).collect();
        assert_eq!(&b[40..44], &[1, 1, 5, 26]);
        assert_eq!(blocks, [4381, 5841, 2921, 4381, 7301, 8761]);
    }

    #[test]
    fn tcp_checksum_matches_etherparse_with_a_real_payload() {
        let seg = Segment { seq: 1 + 3 * 1460, ack: 1, len: 1460, flags: flags::ACK | flags::FIN, window: 512, ..Default::default() };
        let (b, len) = headers(&seg, Dir::Data);
        assert_eq!((b.len(), len), (40, 1500));
        let tcp = TcpHeaderSlice::from_slice(&b[20..]).unwrap();
        assert_eq!(tcp.sequence_number(), 4381);
        assert!(tcp.fin());
        let with_payload = tcp.to_header().calc_checksum_ipv4_raw([10, 0, 0, 1], [10, 0, 0, 4], &[0u8; 1460]).unwrap();
        assert_eq!(tcp.checksum(), with_payload);
        // And the pseudo-header length matters: the header-only checksum differs.
        assert_ne!(tcp.checksum(), tcp.to_header().calc_checksum_ipv4_raw([10, 0, 0, 1], [10, 0, 0, 4], &[]).unwrap());
    }

    #[test]
    fn sequence_numbers_wrap_modulo_2_32() {
        let seg = Segment { seq: (1u64 << 32) + 17, len: 100, ..Default::default() };
        let (b, _) = headers(&seg, Dir::Data);
        assert_eq!(TcpHeaderSlice::from_slice(&b[20..]).unwrap().sequence_number(), 17);
    }

    #[test]
    fn a_write_that_fails_at_the_last_flush_says_so() {
        // /dev/full takes nothing: the buffered bytes fail at the flush, which was dropped.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
        let mut l = log();
        l.finish(SimTime::from_micros(10));
        match write(&l, std::io::BufWriter::new(full)) {
            Err(PcapError::IoError(e)) => assert_eq!(e.raw_os_error(), Some(28), "{e}"),
            other => panic!("expected ENOSPC, got {other:?}"),
        }
    }

    #[test]
    fn file_has_one_interface_per_link_plus_drops_and_marks_drops() {
        use pcap_file::pcapng::{Block, PcapNgReader};
        let mut l = log();
        let d = Segment { seq: 1, ack: 1, len: 1460, flags: flags::ACK, window: 100, ..Default::default() };
        let t = SimTime::from_micros;
        l.record(t(0), t(1), EventKind::Dequeued, DropReason::None, 0, 0, 1, 0, Dir::Data, &d);
        l.record(t(2), t(2), EventKind::Dropped, DropReason::QueueFull, 0, 0, 2, 0, Dir::Data, &d);
        l.record(t(3), t(3), EventKind::Dequeued, DropReason::None, 0, 0, 3, 0, Dir::Data, &d);
        l.record(t(9), t(9), EventKind::Dropped, DropReason::Corrupted, 0, 0, 3, 0, Dir::Data, &d);
        l.record(t(9), t(9), EventKind::Received, DropReason::None, 0, 0, 1, 0, Dir::Data, &d);
        l.finish(t(10));
        let mut buf = Vec::new();
        assert_eq!(write(&l, &mut buf).unwrap(), Written { wire: 2, drops: 2 });
        let mut r = PcapNgReader::new(&buf[..]).unwrap();
        let mut names = Vec::new();
        let mut packets = Vec::new();
        while let Some(b) = r.next_block() {
            match b.unwrap() {
                Block::InterfaceDescription(i) => names.extend(i.options.iter().filter_map(|o| match o {
                    InterfaceDescriptionOption::IfName(n) => Some(n.to_string()),
                    _ => None,
                })),
                Block::EnhancedPacket(p) => packets.push((p.interface_id, p.timestamp.as_nanos() as u64, p.original_len, p.data.len(), p.options.clone().into_iter().map(|o| o.into_owned()).collect::<Vec<_>>())),
                _ => {}
            }
        }
        assert_eq!(names, ["bottleneck", "drops"]);
        let c = |s: &str| EnhancedPacketOption::Comment(Cow::Owned(s.to_string()));
        assert_eq!(
            packets,
            [
                (0, 1000, 1500, 40, vec![EnhancedPacketOption::Flags(EPB_OUTBOUND)]),
                (1, 2000, 1500, 40, vec![c("bottleneck: queue_full")]),
                (0, 3000, 1500, 40, vec![EnhancedPacketOption::Flags(EPB_OUTBOUND | EPB_CRC_ERROR), c("corrupted by a bit error; discarded by the receiving node")]),
                (1, 9000, 1500, 40, vec![c("bottleneck: corrupted")]),
            ]
        );
    }
}
