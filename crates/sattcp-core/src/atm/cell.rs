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

/// The flag tests shared by [`Cell`] and [`CellSpan`]: end of frame (PTI "end of SDU"; a span's
/// last cell) and damaged by a bit error on some link (the AAL5 CRC-32 of its frame will fail;
/// `corrupt` marks every cell of a span).
macro_rules! cell_flag_accessors {
    () => {
        #[inline]
        pub fn is_eof(&self) -> bool {
            self.flags & EOF != 0
        }
        #[inline]
        pub fn is_corrupted(&self) -> bool {
            self.flags & CORRUPTED != 0
        }
        #[inline]
        pub fn corrupt(&mut self) {
            self.flags |= CORRUPTED;
        }
    };
}

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
    cell_flag_accessors!();
}

/// Consecutive cells of one frame (`count` of them, indices `index..index + count`), as a switch
/// buffer holds them and an output link sends them: one record for a whole run instead of one per
/// cell (issue 15: the cells of a frame usually arrive and leave together). The cells share the
/// corrupted flag; only the last one can carry end-of-frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CellSpan {
    pub vc: VcId,
    /// Index within its frame of the span's first cell.
    pub index: u32,
    pub count: u32,
    /// Flags of the last cell (EOF, corrupted); the others have the same corrupted flag.
    flags: u8,
    pub frame: u64,
}

impl CellSpan {
    /// The span of the single cell `c`.
    #[inline]
    pub fn of(c: Cell) -> CellSpan {
        CellSpan { vc: c.vc, index: c.index, count: 1, flags: c.flags, frame: c.frame }
    }
    cell_flag_accessors!();
    /// Cell `i` of the span (from 0).
    #[inline]
    pub fn cell(&self, i: u32) -> Cell {
        debug_assert!(i < self.count);
        let flags = if i + 1 == self.count { self.flags } else { self.flags & !EOF };
        Cell { vc: self.vc, index: self.index + i, frame: self.frame, flags }
    }
    /// The cells in order.
    pub fn cells(&self) -> impl ExactSizeIterator<Item = Cell> + '_ {
        (0..self.count).map(|i| self.cell(i))
    }
    /// Appends `c` if it is the next cell of the same frame with the same corrupted flag and
    /// the span does not end its frame yet; returns whether it did.
    #[inline]
    pub fn try_extend(&mut self, c: Cell) -> bool {
        let next = !self.is_eof() && c.vc == self.vc && c.frame == self.frame && c.index == self.index + self.count && (c.flags ^ self.flags) & CORRUPTED == 0;
        if next {
            self.count += 1;
            self.flags = c.flags;
        }
        next
    }
    /// Appends `next` if it continues the span (the next cells of the same frame, with the same
    /// corrupted flag, and the span does not end its frame yet); returns whether it did.
    #[inline]
    pub fn try_append(&mut self, next: CellSpan) -> bool {
        let ok = !self.is_eof() && next.vc == self.vc && next.frame == self.frame && next.index == self.index + self.count && (next.flags ^ self.flags) & CORRUPTED == 0;
        if ok {
            self.count += next.count;
            self.flags = next.flags;
        }
        ok
    }
    /// Appends the next `n` cells of the same frame (the caller knows they continue it), the last
    /// of them end-of-frame if `eof`.
    #[inline]
    pub fn extend_by(&mut self, n: u32, eof: bool) {
        debug_assert!(!self.is_eof());
        self.count += n;
        self.flags |= if eof { EOF } else { 0 };
    }
    /// Takes the first cell off the span (which must not be empty).
    #[inline]
    pub fn take_first(&mut self) -> Cell {
        debug_assert!(self.count > 0);
        let c = self.cell(0);
        self.index += 1;
        self.count -= 1;
        c
    }
    /// Splits off the first `n` cells (`0 < n < count`) and returns them.
    #[inline]
    pub fn split_first(&mut self, n: u32) -> CellSpan {
        debug_assert!(n > 0 && n < self.count);
        let head = CellSpan { count: n, flags: self.flags & !EOF, ..*self };
        self.index += n;
        self.count -= n;
        head
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
    fn a_span_holds_the_cells_it_was_built_from() {
        let cells: Vec<Cell> = frame_cells(2, 9, 4).collect();
        let mut s = CellSpan::of(cells[0]);
        assert!(s.try_extend(cells[1]) && s.try_extend(cells[2]));
        assert!(!s.try_extend(cells[1]), "not the next index");
        assert!(!s.try_extend(Cell::of_frame(3, 9, 3, 4)), "another VC");
        let mut damaged = cells[3];
        damaged.corrupt();
        assert!(!s.try_extend(damaged), "another corrupted flag");
        assert!(s.try_extend(cells[3]));
        assert!(s.is_eof() && s.count == 4);
        assert!(!s.try_extend(Cell::of_frame(2, 10, 0, 1)), "a span ends with its frame");
        assert_eq!(s.cells().collect::<Vec<_>>(), cells);
        let head = s.split_first(3);
        assert_eq!(head.cells().chain(s.cells()).collect::<Vec<_>>(), cells);
        assert_eq!(s.take_first(), cells[3]);
        assert_eq!(s.count, 0);
    }

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
