//! AAL5 reassembly at the receiving end of a VC.
//!
//! What a real receiver sees: the cells of each VC in order, and the end-of-frame bit. It
//! collects cells until an end-of-frame cell, then checks the CPCS-PDU trailer: the length field
//! against the cells received, and the CRC-32 over the whole PDU (ITU-T I.363.5). So:
//!
//! - a frame that lost a cell (but not its EOF) fails the length/CRC check and is discarded;
//! - a frame with a corrupted cell fails the CRC and is discarded;
//! - a frame that lost its EOF cell is not delimited: its cells run on into the next frame of the
//!   same VC, and the merged PDU fails the CRC, so *both* frames are lost (the receiver reports
//!   one discarded PDU, ending with the second frame's EOF);
//! - a frame that lost every cell is never seen.
//!
//! The model decides "the CRC would fail" from simulator bookkeeping (frame ids and cell indices)
//! instead of computing a CRC: a merged or incomplete PDU is always discarded (a real CRC-32 would
//! let one in 2^32 through).

use super::cell::{Cell, CellSpan, VcId};

/// Why a PDU was discarded.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DiscardReason {
    /// Cells of more than one frame (an EOF cell was lost): CRC error.
    Merged,
    /// A cell of the frame is missing: length / CRC error.
    MissingCells,
    /// A cell was damaged by a bit error: CRC error.
    Corrupted,
}

/// The result of giving one cell to the reassembler.
#[must_use]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reassembled {
    /// Not an end-of-frame cell: the PDU is still being collected.
    Pending,
    /// Frame `frame` arrived whole and intact: deliver its packet.
    Frame { frame: u64, cells: u32 },
    /// A PDU ended (by the EOF cell of frame `frame`) and was discarded. `first_frame` is the
    /// frame of its first cell (differs from `frame` when frames merged).
    Discarded { frame: u64, first_frame: u64, cells: u32, reason: DiscardReason },
}

#[derive(Copy, Clone, Debug, Default)]
struct Pdu {
    collecting: bool,
    first_frame: u64,
    cells: u32,
    merged: bool,
    missing: bool,
    corrupted: bool,
}

/// Counters of a reassembler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReassemblyStats {
    pub cells: u64,
    pub frames_delivered: u64,
    pub discarded_merged: u64,
    pub discarded_missing: u64,
    pub discarded_corrupted: u64,
}

impl ReassemblyStats {
    pub fn discarded(&self) -> u64 {
        self.discarded_merged + self.discarded_missing + self.discarded_corrupted
    }
}

/// Per-VC AAL5 reassembly. O(1) per cell, no allocation beyond the dense per-VC table.
#[derive(Clone, Debug, Default)]
pub struct Reassembler {
    vcs: Vec<Pdu>,
    stats: ReassemblyStats,
}

impl Reassembler {
    pub fn new() -> Reassembler {
        Reassembler::default()
    }

    pub fn stats(&self) -> &ReassemblyStats {
        &self.stats
    }

    /// Cells of an unfinished PDU held for `vc`.
    pub fn pending_cells(&self, vc: VcId) -> u32 {
        self.vcs.get(vc as usize).map_or(0, |p| if p.collecting { p.cells } else { 0 })
    }

    /// Takes the next cell received on its VC.
    #[inline]
    pub fn receive(&mut self, cell: Cell) -> Reassembled {
        self.receive_span(CellSpan::of(cell))
    }

    /// Takes the next `span.count` cells received on the span's VC, in order: the same as
    /// [`receive`](Self::receive) for each of them (the first cell's checks decide for all:
    /// the others continue it), with the outcome of the last.
    #[inline]
    pub fn receive_span(&mut self, span: CellSpan) -> Reassembled {
        let vc = span.vc as usize;
        if vc >= self.vcs.len() {
            self.vcs.resize(vc + 1, Pdu::default());
        }
        self.stats.cells += span.count as u64;
        let pdu = &mut self.vcs[vc];
        if !pdu.collecting {
            *pdu = Pdu { collecting: true, first_frame: span.frame, ..Pdu::default() };
        }
        if span.frame != pdu.first_frame {
            pdu.merged = true;
        } else if span.index != pdu.cells {
            pdu.missing = true;
        }
        pdu.cells += span.count;
        pdu.corrupted |= span.is_corrupted();
        if !span.is_eof() {
            return Reassembled::Pending;
        }
        pdu.collecting = false;
        let (cells, first_frame) = (pdu.cells, pdu.first_frame);
        let reason = if pdu.merged {
            Some(DiscardReason::Merged)
        } else if pdu.missing {
            Some(DiscardReason::MissingCells)
        } else if pdu.corrupted {
            Some(DiscardReason::Corrupted)
        } else {
            None
        };
        match reason {
            None => {
                self.stats.frames_delivered += 1;
                Reassembled::Frame { frame: span.frame, cells }
            }
            Some(reason) => {
                match reason {
                    DiscardReason::Merged => self.stats.discarded_merged += 1,
                    DiscardReason::MissingCells => self.stats.discarded_missing += 1,
                    DiscardReason::Corrupted => self.stats.discarded_corrupted += 1,
                }
                Reassembled::Discarded { frame: span.frame, first_frame, cells, reason }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cell::frame_cells;
    use super::super::port::{AtmPort, DropPolicy};
    use super::*;
    use crate::time::SimTime;

    /// Feeds cells and returns the outcomes that are not `Pending`.
    #[track_caller]
    fn feed(r: &mut Reassembler, cells: impl IntoIterator<Item = Cell>) -> Vec<Reassembled> {
        cells.into_iter().map(|c| r.receive(c)).filter(|o| *o != Reassembled::Pending).collect()
    }

    proptest::proptest! {
        /// Giving a reassembler runs of consecutive cells of one frame (as a switch port emits
        /// them) gives the outcomes and counters of giving it the same cells one by one, whatever
        /// cells went missing, merged or were damaged.
        #[test]
        fn spans_reassemble_as_their_cells(
            frames in proptest::collection::vec((0u32..3, 1u32..8, proptest::collection::vec(proptest::bool::ANY, 8), 0u32..8, 1u32..4), 1..40),
        ) {
            let (mut by_cell, mut by_span) = (Reassembler::new(), Reassembler::new());
            for (id, (vc, n, keep, damaged, chunk)) in frames.into_iter().enumerate() {
                // The cells of frame `id` that survived, with one damaged cell, cut into spans of
                // at most `chunk` consecutive cells.
                let cells: Vec<Cell> = frame_cells(vc, id as u64, n)
                    .filter(|c| keep[c.index as usize])
                    .map(|mut c| {
                        if c.index == damaged {
                            c.corrupt();
                        }
                        c
                    })
                    .collect();
                let mut spans: Vec<CellSpan> = Vec::new();
                for c in &cells {
                    let extend = spans.last_mut().is_some_and(|s| s.count < chunk && s.try_extend(*c));
                    if !extend {
                        spans.push(CellSpan::of(*c));
                    }
                }
                let want: Vec<Reassembled> = cells.iter().map(|&c| by_cell.receive(c)).filter(|o| *o != Reassembled::Pending).collect();
                let got: Vec<Reassembled> = spans.iter().map(|&s| by_span.receive_span(s)).filter(|o| *o != Reassembled::Pending).collect();
                proptest::prop_assert_eq!(got, want);
                proptest::prop_assert_eq!(by_span.stats(), by_cell.stats());
                proptest::prop_assert_eq!(by_span.pending_cells(vc), by_cell.pending_cells(vc));
            }
        }
    }

    #[test]
    fn whole_frames_are_delivered_per_vc() {
        let mut r = Reassembler::new();
        // Two VCs interleaved cell by cell.
        let a = frame_cells(0, 10, 3);
        let b = frame_cells(1, 20, 2);
        let mixed: Vec<Cell> = a.zip(b.chain(std::iter::once(Cell::of_frame(1, 21, 0, 1)))).flat_map(|(x, y)| [x, y]).collect();
        assert_eq!(
            feed(&mut r, mixed),
            [Reassembled::Frame { frame: 20, cells: 2 }, Reassembled::Frame { frame: 10, cells: 3 }, Reassembled::Frame { frame: 21, cells: 1 }]
        );
        assert_eq!(r.pending_cells(0), 0);
    }

    #[test]
    fn missing_middle_cell_discards_frame() {
        let mut r = Reassembler::new();
        let cells = frame_cells(0, 1, 4).filter(|c| c.index != 1);
        assert_eq!(feed(&mut r, cells), [Reassembled::Discarded { frame: 1, first_frame: 1, cells: 3, reason: DiscardReason::MissingCells }]);
    }

    #[test]
    fn missing_first_cell_discards_frame() {
        let mut r = Reassembler::new();
        let cells = frame_cells(0, 1, 3).skip(1);
        assert_eq!(feed(&mut r, cells), [Reassembled::Discarded { frame: 1, first_frame: 1, cells: 2, reason: DiscardReason::MissingCells }]);
        // The next frame is unaffected.
        assert_eq!(feed(&mut r, frame_cells(0, 2, 2)), [Reassembled::Frame { frame: 2, cells: 2 }]);
    }

    #[test]
    fn lost_eof_merges_two_frames_and_loses_both() {
        let mut r = Reassembler::new();
        let first = frame_cells(0, 1, 3).filter(|c| !c.is_eof());
        let out = feed(&mut r, first.chain(frame_cells(0, 2, 3)));
        assert_eq!(out, [Reassembled::Discarded { frame: 2, first_frame: 1, cells: 5, reason: DiscardReason::Merged }]);
        assert_eq!(r.stats().discarded_merged, 1);
        assert_eq!(r.stats().frames_delivered, 0);
    }

    #[test]
    fn corrupted_cell_discards_frame() {
        let mut r = Reassembler::new();
        let cells = frame_cells(0, 1, 3).map(|mut c| {
            if c.index == 2 {
                c.corrupt();
            }
            c
        });
        assert_eq!(feed(&mut r, cells), [Reassembled::Discarded { frame: 1, first_frame: 1, cells: 3, reason: DiscardReason::Corrupted }]);
    }

    #[test]
    fn frame_cut_by_ppd_is_never_delivered() {
        // VC 0 fills 4 of 5 cells; VC 1's 4-cell frame gets its first cell in, loses the next
        // two to PPD, and its EOF gets in after two departures.
        let mut port = AtmPort::new(5, DropPolicy::Ppd).unwrap();
        let mut r = Reassembler::new();
        let mut out = Vec::new();
        let t = SimTime::ZERO;
        for c in frame_cells(0, 1, 4) {
            assert!(port.arrive(t, c).is_accepted());
        }
        let mut vc1 = frame_cells(1, 2, 4);
        assert!(port.arrive(t, vc1.next().unwrap()).is_accepted());
        assert!(!port.arrive(t, vc1.next().unwrap()).is_accepted());
        for _ in 0..2 {
            out.push(r.receive(port.depart(t).unwrap()));
        }
        assert!(!port.arrive(t, vc1.next().unwrap()).is_accepted());
        assert!(port.arrive(t, vc1.next().unwrap()).is_accepted());
        while let Some(c) = port.depart(t) {
            out.push(r.receive(c));
        }
        out.retain(|o| *o != Reassembled::Pending);
        assert_eq!(
            out,
            [Reassembled::Frame { frame: 1, cells: 4 }, Reassembled::Discarded { frame: 2, first_frame: 2, cells: 2, reason: DiscardReason::MissingCells }]
        );
    }
}
