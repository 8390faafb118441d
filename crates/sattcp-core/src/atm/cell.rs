//! The ATM cell as the simulator sees it: which VC, which AAL5 frame, where in the frame.

/// Index of a virtual circuit, dense from 0 (one per TCP half-connection direction, chosen by
/// the world builder). Per-VC state lives in plain `Vec`s indexed by it.
pub type VcId = u32;

/// One 53-byte cell. 24 bytes, `Copy`: cells are moved by value, never allocated one by one.
///
/// `frame` identifies the AAL5 frame (the engine uses the IP packet's `uid`); it is simulator
/// bookkeeping, not a header field: switches decide frame boundaries only from the end-of-frame
/// bit (the AAL5 "SDU type" bit of the PTI field, ITU-T I.361), as real ones do.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub vc: VcId,
    /// Index of this cell within its frame, from 0.
    pub index: u32,
    pub frame: u64,
    flags: u8,
}

const EOF: u8 = 1;
const CORRUPTED: u8 = 2;

impl Cell {
    /// Cell `index` of an `n_cells`-cell frame; the last one is marked end-of-frame.
    #[inline]
    pub fn of_frame(vc: VcId, frame: u64, index: u32, n_cells: u32) -> Cell {
        debug_assert!(index < n_cells);
        Cell { vc, index, frame, flags: if index + 1 == n_cells { EOF } else { 0 } }
    }
    /// A cell with explicit end-of-frame flag (for hand-built tests and odd sources).
    #[inline]
    pub fn new(vc: VcId, frame: u64, index: u32, eof: bool) -> Cell {
        Cell { vc, index, frame, flags: if eof { EOF } else { 0 } }
    }
    /// Last cell of its AAL5 frame (PTI "end of SDU").
    #[inline]
    pub fn is_eof(&self) -> bool {
        self.flags & EOF != 0
    }
    /// Damaged by a bit error on some link; the AAL5 CRC-32 of its frame will fail.
    #[inline]
    pub fn is_corrupted(&self) -> bool {
        self.flags & CORRUPTED != 0
    }
    #[inline]
    pub fn corrupt(&mut self) {
        self.flags |= CORRUPTED;
    }
}

/// The cells of one frame, in order, without allocating.
pub fn frame_cells(vc: VcId, frame: u64, n_cells: u32) -> impl ExactSizeIterator<Item = Cell> {
    (0..n_cells).map(move |i| Cell::of_frame(vc, frame, i, n_cells))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_is_small_and_marks_its_last() {
        assert!(std::mem::size_of::<Cell>() <= 24);
        let cells: Vec<Cell> = frame_cells(3, 77, 3).collect();
        assert_eq!(cells.iter().map(|c| c.is_eof()).collect::<Vec<_>>(), [false, false, true]);
        let mut c = cells[1];
        assert!(!c.is_corrupted());
        c.corrupt();
        assert!(c.is_corrupted() && !c.is_eof());
    }
}
