//! A switch output port with its input links and output link, simulated to the cell but driven
//! by the engine frame by frame.
//!
//! Every cell meets the buffer in time order, with exactly the outcome it would have if each
//! cell were an engine event; but the cell-level interleaving happens inside
//! [`SwitchPort::advance`], so the engine only needs about two events per frame instead of two per
//! cell (seed GEO runs: about 106,000 cells per second on the bottleneck). The pattern is
//! smoltcp's `poll_at` (STYLE.md):
//!
//! ```text
//! frame's first bit reaches the switch on input j  ->  sp.offer(j, now, vc, uid, n); re-read sp.poll_at()
//! wake-up at sp.poll_at()                          ->  sp.advance(now, emit); re-read sp.poll_at()
//! emit(d): cells d.cells left the output link back to back, the last at d.end(); feed a
//! Reassembler (order per VC is all it needs) and schedule the packet's delivery at
//! d.end() + delays when it returns Frame { frame: uid }.
//! ```
//!
//! Inside `advance` the cells go a run at a time (issue 15): the cells of a frame after its
//! first one, whose fate the VC's frame state settles, arrive together up to the next cell of
//! another input (`SwitchPort::arrival_run`); the output takes as many cells of the buffer's
//! front run as start before the next arrival; cells are reported as runs ([`Departed`]). Frame
//! starts (the drop decisions), a full buffer and PPD's end-of-frame cell go cell by cell. The
//! proptests at the bottom compare both with one event per cell.
//!
//! `offer` does not need an `advance` first: everything is processed in time order when
//! `advance` runs, and an offered frame's cells arrive after its `first_bit_at >= now()`. A
//! wake-up scheduled from an earlier `poll_at` that has become stale is harmless (`advance` to a
//! time with nothing due does nothing).
//!
//! `poll_at` is never later than the end of the next EOF cell's transmission, so a frame's
//! completion is always emitted at or before the moment the engine is woken for it. The port
//! may also be advanced later than `poll_at`, by any slack: every frame's last cell then still
//! leaves at or after `poll_at` and is reported at most the slack after it left, with the same
//! cells, times and drops (`driving_late_equals_per_cell_events`); an ATM hop runs its port
//! as late as its egress delay (`net::atm_hop`).
//!
//! Order of simultaneous happenings: the end of an output transmission comes before cell arrivals
//! at the same nanosecond; simultaneous arrivals enter in input order. A cell can start leaving
//! at the instant it arrives (store and forward per cell).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::aal5::{cell_end_time, CellClock, CellRun, CELL_BITS};
use super::cell::{Cell, CellSpan, VcId};
use super::port::{AtmPort, BodyMode, DropReason};
use crate::time::{Rate, SimTime};

/// Index of an input link of a [`SwitchPort`], dense from 0 in the order of `add_input`.
pub type InputId = u32;

#[derive(Copy, Clone, Debug)]
struct PendingFrame {
    vc: VcId,
    frame: u64,
    n_cells: u32,
    next: u32,
    /// The frame's cell i ends its arrival at `cell_end_time(period_start, rate, first_k + i)`.
    period_start: SimTime,
    first_k: u64,
}

#[derive(Clone, Debug)]
struct Input {
    rate: Rate,
    frames: VecDeque<PendingFrame>,
    /// The busy period of the last cell scheduled on this input.
    period_start: SimTime,
    scheduled_in_period: u64,
    tail_end: SimTime,
    /// The arrival of the front frame's next cell (`cell_time` of it), stepped cell by cell.
    cursor: CellRun,
}

impl Input {
    /// Points the cursor at the front frame's next cell and returns its arrival time.
    fn aim(&mut self) -> Option<SimTime> {
        let f = self.frames.front()?;
        self.cursor = CellRun::new(f.period_start, self.rate, f.first_k + f.next as u64);
        Some(self.cursor.end())
    }
}

/// Cells of one frame that left the output link back to back (one busy period, one cell after
/// the other), as [`SwitchPort::advance`] reports them: usually a whole frame at once.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Departed {
    pub cells: CellSpan,
    /// The output link's busy period that sent them, and the place of the first of them in it.
    period_start: SimTime,
    k: u64,
    rate: Rate,
}

impl Departed {
    /// When the last bit of cell `i` (from 0) of the span left the output link.
    #[inline]
    pub fn end_of(&self, i: u32) -> SimTime {
        cell_end_time(self.period_start, self.rate, self.k + i as u64)
    }
    /// When the last bit of the last cell left.
    #[inline]
    pub fn end(&self) -> SimTime {
        self.end_of(self.cells.count - 1)
    }
    /// Each cell with the time its last bit left, in order.
    pub fn cells_with_times(&self) -> impl Iterator<Item = (SimTime, Cell)> + '_ {
        (0..self.cells.count).map(|i| (self.end_of(i), self.cells.cell(i)))
    }
}

/// An [`AtmPort`] fed by input links and drained by an output link, advanced lazily.
#[derive(Clone, Debug)]
pub struct SwitchPort {
    port: AtmPort,
    out: CellClock,
    /// The least time between the ends of two cells sent back to back on the output link
    /// (the cell time rounded down, at least 1 ns).
    out_min_gap: u64,
    /// A cell is in transmission on the output link (the last one of `tx`).
    busy: bool,
    /// Cells that left the buffer for the output link and are not reported yet, back to back:
    /// those whose transmission ended, then the one in transmission if `busy`.
    tx: Option<Departed>,
    inputs: Vec<Input>,
    /// The earliest next cell arrival of all inputs with cells pending, (time, input), kept
    /// out of `arrivals`: while one input's frame arrives and no other input's cell comes
    /// first, its cells follow one another without a heap operation per cell.
    head: Option<(SimTime, InputId)>,
    /// The next cell arrival of every other input with cells pending: (time, input).
    arrivals: BinaryHeap<Reverse<(SimTime, InputId)>>,
    /// Arrival times of the EOF cells still to arrive.
    eof_arrivals: BinaryHeap<Reverse<SimTime>>,
    /// Sequence numbers (in acceptance order) of accepted EOF cells not yet fully sent.
    eofs: VecDeque<u64>,
    accepted: u64,
    started: u64,
    now: SimTime,
}

impl SwitchPort {
    /// A port with buffer and policy `port`, sending on an output link of cell rate `out_rate`.
    pub fn new(port: AtmPort, out_rate: Rate) -> SwitchPort {
        SwitchPort {
            port,
            out: CellClock::new(out_rate),
            out_min_gap: (CELL_BITS * 1_000_000_000 / out_rate.as_bps().max(1)).max(1),
            busy: false,
            tx: None,
            inputs: Vec::new(),
            head: None,
            arrivals: BinaryHeap::new(),
            eof_arrivals: BinaryHeap::new(),
            eofs: VecDeque::new(),
            accepted: 0,
            started: 0,
            now: SimTime::ZERO,
        }
    }

    /// Adds an input link of cell rate `rate` (149.76 Mbps for the seeds' OC-3 access links).
    pub fn add_input(&mut self, rate: Rate) -> InputId {
        self.inputs.push(Input {
            rate,
            frames: VecDeque::new(),
            period_start: SimTime::ZERO,
            scheduled_in_period: 0,
            tail_end: SimTime::ZERO,
            cursor: CellRun::new(SimTime::ZERO, rate, 0),
        });
        (self.inputs.len() - 1) as InputId
    }

    pub fn port(&self) -> &AtmPort {
        &self.port
    }

    /// The time up to which the port has been advanced.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// A frame of `n_cells` cells on VC `vc` starts reaching the switch on `input` at
    /// `first_bit_at` (its first bit; its cells arrive back to back at the input's rate, after
    /// any earlier frame still arriving on that input). `first_bit_at` must not be before
    /// [`now`](Self::now). O(log inputs).
    pub fn offer(&mut self, input: InputId, first_bit_at: SimTime, vc: VcId, frame: u64, n_cells: u32) {
        assert!(n_cells > 0, "a frame has at least one cell");
        assert!(first_bit_at >= self.now, "frame offered at {first_bit_at}, before the port's time {}", self.now);
        let inp = &mut self.inputs[input as usize];
        if first_bit_at > inp.tail_end || inp.scheduled_in_period == 0 {
            inp.period_start = first_bit_at;
            inp.scheduled_in_period = 0;
        }
        let f = PendingFrame { vc, frame, n_cells, next: 0, period_start: inp.period_start, first_k: inp.scheduled_in_period };
        inp.scheduled_in_period += n_cells as u64;
        inp.tail_end = cell_end_time(inp.period_start, inp.rate, inp.scheduled_in_period - 1);
        self.eof_arrivals.push(Reverse(inp.tail_end));
        let was_idle = inp.frames.is_empty();
        inp.frames.push_back(f);
        if was_idle {
            let t = inp.aim().expect("the frame just queued");
            self.push_arrival((t, input));
        }
    }

    /// Adds an input's next cell arrival to the pending ones.
    #[inline]
    fn push_arrival(&mut self, a: (SimTime, InputId)) {
        match self.head {
            Some(h) if h < a => self.arrivals.push(Reverse(a)),
            Some(h) => {
                self.arrivals.push(Reverse(h));
                self.head = Some(a);
            }
            None => self.head = Some(a),
        }
    }

    /// The head input's next arrival is now `next` (or it has no cells left): the new earliest
    /// arrival is that one if it still comes first (ties between inputs go to the lower input,
    /// as the heap orders them), else the heap's top.
    #[inline]
    fn replace_head(&mut self, input: InputId, next: Option<SimTime>) {
        self.head = match next {
            Some(n) => match self.arrivals.peek_mut() {
                Some(mut top) if top.0 < (n, input) => Some(std::mem::replace(&mut *top, Reverse((n, input))).0),
                _ => Some((n, input)),
            },
            None => self.arrivals.pop().map(|r| r.0),
        };
    }

    /// When the engine must next call [`advance`](Self::advance) so that no frame completion is
    /// late: the earlier of the end of the next EOF cell's transmission (if one is buffered) and
    /// the arrival of the next EOF cell. `None` when no frame is pending. O(1).
    pub fn poll_at(&self) -> Option<SimTime> {
        let sending = self.eofs.front().map(|&s| self.out.end_of_next(s + 1 - self.started));
        let arriving = self.eof_arrivals.peek().map(|r| r.0);
        match (sending, arriving) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every cell arrival and departure up to and including `until`, in time order, and
    /// reports through `emit` every cell whose transmission on the output link ended by then,
    /// in order, as runs of one frame's cells sent back to back ([`Departed`]; a run that ends
    /// its frame is reported when its end-of-frame cell has left).
    pub fn advance(&mut self, until: SimTime, mut emit: impl FnMut(Departed)) {
        loop {
            let arr = self.head.map(|h| h.0);
            if self.busy {
                let d = self.out.busy_until();
                if d <= until && arr.is_none_or(|a| d <= a) {
                    self.departures(arr.map_or(until, |a| a.min(until)), &mut emit);
                    continue;
                }
            }
            match arr {
                Some(a) if a <= until => {
                    if !self.arrival_run(until, &mut emit) {
                        self.next_arrival(&mut emit);
                    }
                }
                _ => break,
            }
        }
        // The cells that left by `until` are reported now (all but the one in transmission),
        // as each was when it left: a receiver's bit errors are drawn in that order.
        if let Some(tx) = &mut self.tx {
            let done = tx.cells.count - self.busy as u32;
            if done > 0 {
                let head = Departed { cells: tx.cells.split_first(done), ..*tx };
                tx.k += done as u64;
                emit(head);
            }
        }
        if until > self.now {
            self.now = until;
        }
    }

    /// Every departure that ends at or before `bound`: each cell in transmission ends, the
    /// next buffered one starts.
    #[inline]
    fn departures(&mut self, bound: SimTime, emit: &mut impl FnMut(Departed)) {
        while self.busy && self.out.busy_until() <= bound {
            let t = self.out.busy_until();
            let tx = self.tx.as_ref().expect("a cell in transmission");
            if tx.cells.is_eof() {
                if self.eofs.front() == Some(&(self.started - 1)) {
                    self.eofs.pop_front();
                }
                emit(*tx);
                self.tx = None;
            }
            self.start_next(t, bound, emit);
        }
    }

    /// The output link is free at `t`: the next buffered cells start, back to back, as many of
    /// the front run as start by `bound` (each when the one before it ends), at least one.
    #[inline]
    fn start_next(&mut self, t: SimTime, bound: SimTime, emit: &mut impl FnMut(Departed)) {
        let Some(front) = self.port.front_span() else {
            self.busy = false;
            if let Some(done) = self.tx.take() {
                emit(done);
            }
            return;
        };
        let (n, starts) = self.out.send_back_to_back(t, front.count, bound);
        let cells = self.port.depart_run(n, starts);
        self.started += n as u64;
        self.busy = true;
        // Back to back with the cells in `tx`: more of the same run, or a new run.
        if !self.tx.as_mut().is_some_and(|tx| tx.cells.try_append(cells)) {
            if let Some(done) = self.tx.take() {
                emit(done);
            }
            let (period_start, sent) = self.out.period();
            self.tx = Some(Departed { cells, period_start, k: sent - n as u64, rate: self.out.rate() });
        }
    }

    /// The arrivals of the head input's current frame that need no decision of their own, as one
    /// run: the cells after its first one, from its next cell on, that come before any other
    /// input's next cell and not after `until`, while the VC's frame state settles them (the
    /// buffer accepts them while it has room, or they are dropped with their frame). Departures
    /// due in between run in their place. Returns false, having done nothing, when the next cell
    /// needs the per-cell path ([`next_arrival`](Self::next_arrival)).
    ///
    /// Exactly what `next_arrival` would do cell by cell (the proptests below compare both with
    /// one event per cell), with the cell-level work cut to a few additions: no heap, no
    /// frame-state decision per cell (issue 15: about 11 million cells per 100 s run).
    #[inline]
    fn arrival_run(&mut self, until: SimTime, emit: &mut impl FnMut(Departed)) -> bool {
        let (_, input) = self.head.expect("an arrival");
        // The last time at which a cell of this input still comes before every other input's
        // next cell (ties go to the lower input).
        let limit = match self.arrivals.peek() {
            Some(&Reverse((b, i))) => (if input < i { b } else { SimTime(b.0.saturating_sub(1)) }).min(until),
            None => until,
        };
        let inp = &self.inputs[input as usize];
        let f = *inp.frames.front().expect("a frame arriving");
        if f.next == 0 {
            return false;
        }
        let mut cursor = inp.cursor;
        let mut next = f.next;
        match self.port.body_mode(f.vc) {
            BodyMode::PerCell => return false,
            mode @ (BodyMode::DropAll(_) | BodyMode::DropBody) => {
                // Dropped cells change nothing but counters: count them, whatever departs
                // meanwhile.
                let (reason, end) = match mode {
                    BodyMode::DropAll(r) => (r, f.n_cells),
                    _ => (DropReason::PartialPacketDiscard, f.n_cells - 1),
                };
                while next < end && cursor.end() <= limit {
                    next += 1;
                    if next < f.n_cells {
                        cursor.step();
                    }
                }
                if next == f.next {
                    return false;
                }
                let eof = next == f.n_cells;
                self.port.arrive_dropped_body(f.vc, next - f.next, reason, eof);
                if eof {
                    let _ = self.eof_arrivals.pop();
                }
            }
            BodyMode::AcceptWhileRoom => {
                let capacity = self.port.capacity();
                // All at once, when the cells buffered now keep the output busy until the last of
                // them has arrived (every departure meanwhile takes a cell that was already
                // there, so the arrivals change nothing for the departures), the buffer holds
                // them all and they make no new peak (X only grows by them): then the departures
                // up to the last arrival, then the arrivals, give the per-cell order's outcome.
                if self.busy {
                    let x0 = self.port.occupancy();
                    let (mut ahead, mut n, mut arrivals, mut last) = (cursor, 0u32, 0u128, SimTime::ZERO);
                    while next + n < f.n_cells {
                        let t = ahead.end();
                        if t > limit {
                            break;
                        }
                        arrivals += t.0 as u128;
                        last = t;
                        n += 1;
                        ahead.step();
                    }
                    let busy_until = self.out.busy_until();
                    // At most this many departures end by `last` (consecutive ends are at least
                    // `out_min_gap` apart).
                    let ends = if busy_until > last { 0 } else { 1 + (last.0 - busy_until.0) / self.out_min_gap };
                    let fits = x0 + n <= capacity && x0 + n <= self.port.stats().peak_occupancy;
                    if n > 0 && fits && ends <= x0 as u64 {
                        self.departures(last, emit);
                        let eof = next + n == f.n_cells;
                        self.port.arrive_accepted_run(f.vc, f.frame, next, n, eof, arrivals);
                        if eof {
                            let _ = self.eof_arrivals.pop();
                            self.eofs.push_back(self.accepted + n as u64 - 1);
                        }
                        self.accepted += n as u64;
                        next += n;
                        cursor = ahead;
                    }
                }
                // Else in batches: the cells that arrive before the next departure ends (a
                // departure at the same nanosecond comes first) and fit in the buffer.
                while next < f.n_cells {
                    let t = cursor.end();
                    if t > limit {
                        break;
                    }
                    if self.busy && self.out.busy_until() <= t {
                        self.departures(t, emit);
                    }
                    let room = capacity - self.port.occupancy();
                    if room == 0 {
                        break;
                    }
                    let stop = if self.busy { SimTime(self.out.busy_until().0 - 1).min(limit) } else { t };
                    let (first, mut n, mut arrivals) = (next, 0u32, 0u128);
                    while n < room && next < f.n_cells {
                        let t = cursor.end();
                        if t > stop {
                            break;
                        }
                        arrivals += t.0 as u128;
                        n += 1;
                        next += 1;
                        cursor.step();
                    }
                    let eof = next == f.n_cells;
                    self.port.arrive_accepted_run(f.vc, f.frame, first, n, eof, arrivals);
                    if eof {
                        let _ = self.eof_arrivals.pop();
                        self.eofs.push_back(self.accepted + n as u64 - 1);
                    }
                    self.accepted += n as u64;
                    if !self.busy {
                        self.start_next(t, t, emit);
                    }
                }
                if next == f.next {
                    return false;
                }
            }
        }
        let inp = &mut self.inputs[input as usize];
        let upcoming = if next == f.n_cells {
            inp.frames.pop_front();
            inp.aim()
        } else {
            inp.frames.front_mut().expect("the frame arriving").next = next;
            inp.cursor = cursor;
            Some(cursor.end())
        };
        self.replace_head(input, upcoming);
        true
    }

    // Always inlined into `advance`, its only caller (one call per cell).
    #[inline(always)]
    fn next_arrival(&mut self, emit: &mut impl FnMut(Departed)) {
        let (t, input) = self.head.expect("an arrival");
        let inp = &mut self.inputs[input as usize];
        let f = inp.frames.front_mut().expect("a frame arriving");
        let cell = Cell::of_frame(f.vc, f.frame, f.next, f.n_cells);
        f.next += 1;
        let next = if f.next == f.n_cells {
            inp.frames.pop_front();
            inp.aim()
        } else {
            inp.cursor.step();
            Some(inp.cursor.end())
        };
        self.replace_head(input, next);
        if cell.is_eof() {
            let Reverse(e) = self.eof_arrivals.pop().expect("an EOF arrival");
            debug_assert_eq!(e, t);
        }
        if self.port.arrive(t, cell).is_accepted() {
            if cell.is_eof() {
                self.eofs.push_back(self.accepted);
            }
            self.accepted += 1;
        }
        if !self.busy {
            self.start_next(t, t, emit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::aal5::cells_for_tcp_payload;
    use super::super::port::{DropPolicy, SEED_R, SEED_Z};
    use super::super::reassembly::{Reassembled, Reassembler};
    use super::*;
    use proptest::prelude::*;

    const ACCESS: Rate = Rate(149_760_000);
    const T3: Rate = Rate::mbps(45);

    /// A frame offered to the port: (first bit time, input, vc, frame id, cells).
    type Offer = (SimTime, InputId, VcId, u64, u32);

    /// Reference: every cell arrival and departure as its own event, in the documented order,
    /// straight on an `AtmPort`. Returns the emitted (t_end, cell) and the port.
    fn per_cell_reference(mut port: AtmPort, rates: &[Rate], offers: &[Offer]) -> (Vec<(SimTime, Cell)>, AtmPort) {
        let mut clocks: Vec<CellClock> = rates.iter().map(|&r| CellClock::new(r)).collect();
        let mut arrivals: Vec<(SimTime, InputId, Cell)> = Vec::new();
        for &(at, input, vc, frame, n) in offers {
            let c = &mut clocks[input as usize];
            for i in 0..n {
                let t = c.send(at.max(c.busy_until()));
                arrivals.push((t, input, Cell::of_frame(vc, frame, i, n)));
            }
        }
        arrivals.sort_by_key(|&(t, input, _)| (t, input)); // stable: a frame's cells keep order
        let mut out = CellClock::new(T3);
        let mut in_tx: Option<Cell> = None;
        let mut emitted = Vec::new();
        let mut next = 0;
        while next < arrivals.len() || in_tx.is_some() {
            let a = arrivals.get(next).map(|x| x.0);
            if in_tx.is_some() && a.is_none_or(|a| out.busy_until() <= a) {
                let t = out.busy_until();
                emitted.push((t, in_tx.take().unwrap()));
                in_tx = port.depart(t);
                if in_tx.is_some() {
                    out.send(t);
                }
            } else {
                let (t, _, cell) = arrivals[next];
                next += 1;
                let _ = port.arrive(t, cell);
                if in_tx.is_none() {
                    in_tx = port.depart(t);
                    if in_tx.is_some() {
                        out.send(t);
                    }
                }
            }
        }
        (emitted, port)
    }

    /// Drives a `SwitchPort` as the engine would: wakes only at offers and at `poll_at` plus
    /// `slack` (an ATM hop's wake-ups run as late as its egress delay: `AtmHop`), and counts
    /// the wake-ups that were not offers.
    /// Checks that every EOF cell is emitted by a call whose `until` is at least its own end
    /// time and at most `slack` after it (the wake-up was not late).
    /// Checks that every cell is reported by the call whose `until` its transmission ended by,
    /// and that every reported run was sent back to back.
    /// With `advance_on_offer` false, offers are made without advancing the port first.
    fn lazily_driven(port: AtmPort, rates: &[Rate], offers: &[Offer], advance_on_offer: bool) -> (Vec<(SimTime, Cell)>, SwitchPort, u64) {
        driven_with_slack(port, rates, offers, advance_on_offer, SimTime::ZERO)
    }

    fn driven_with_slack(port: AtmPort, rates: &[Rate], offers: &[Offer], advance_on_offer: bool, slack: SimTime) -> (Vec<(SimTime, Cell)>, SwitchPort, u64) {
        let mut sp = SwitchPort::new(port, T3);
        for &r in rates {
            sp.add_input(r);
        }
        let mut emitted = Vec::new();
        let mut late = 0u64;
        let mut early = 0u64;
        let mut wakes = 0u64;
        let mut next = 0;
        loop {
            let offer_t = offers.get(next).map(|o| o.0);
            let poll = sp.poll_at().map(|t| t + slack);
            let wake = match (offer_t, poll) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            let polled = offer_t.is_none_or(|o| wake < o) || poll == Some(wake);
            wakes += polled as u64;
            if polled || advance_on_offer {
                sp.advance(wake, |d| {
                    for (t, c) in d.cells_with_times() {
                        late += (c.is_eof() && t + slack < wake) as u64;
                        early += (t > wake) as u64;
                        emitted.push((t, c));
                    }
                });
            }
            while let Some(&(at, input, vc, frame, n)) = offers.get(next).filter(|o| o.0 == wake) {
                sp.offer(input, at, vc, frame, n);
                next += 1;
            }
        }
        // Cells after the last EOF (frames without one cannot exist here): drain.
        sp.advance(SimTime::MAX, |d| emitted.extend(d.cells_with_times()));
        assert_eq!(late, 0, "{late} frame completions were emitted late");
        assert_eq!(early, 0, "{early} cells were reported before their transmission ended");
        (emitted, sp, wakes)
    }

    fn policies() -> [DropPolicy; 5] {
        [DropPolicy::TailDrop, DropPolicy::Ppd, DropPolicy::EPD_SEED, DropPolicy::SD_SEED, DropPolicy::Fba { r: SEED_R, z: SEED_Z }]
    }

    fn offers() -> impl Strategy<Value = Vec<Offer>> {
        // Offers at increasing times (gaps of 0..40 us) on 4 inputs, VC = input, 1..30 cells.
        proptest::collection::vec((0u64..40_000, 0u32..4, 1u32..30), 1..60).prop_map(|v| {
            let mut t = 0;
            v.into_iter()
                .enumerate()
                .map(|(i, (gap, input, n))| {
                    t += gap;
                    (SimTime(t), input, input, i as u64, n)
                })
                .collect()
        })
    }

    proptest! {
        /// Lazy driving gives exactly the cells, times and drops of one event per cell.
        #[test]
        fn lazy_driving_equals_per_cell_events(offers in offers(), k in 5u32..200) {
            for policy in policies() {
                let port = || AtmPort::new(k, policy).unwrap();
                let (want, ref_port) = per_cell_reference(port(), &[ACCESS; 4], &offers);
                for advance_on_offer in [true, false] {
                    let (got, sp, _) = lazily_driven(port(), &[ACCESS; 4], &offers, advance_on_offer);
                    prop_assert_eq!(&got, &want, "{:?}", policy);
                    prop_assert_eq!(sp.port().stats(), ref_port.stats());
                }
            }
        }

        /// Driven late (each wake-up up to `slack` after `poll_at`, as an ATM hop does with its
        /// egress delay), the port gives the same cells, times and drops, and still reports every
        /// frame's last cell within `slack` of its end.
        #[test]
        fn driving_late_equals_per_cell_events(offers in offers(), k in 5u32..200, slack_us in 0u64..6_000, partial in proptest::bool::ANY) {
            let rates = [ACCESS, Rate::mbps(20), T3, ACCESS];
            for policy in policies() {
                let port = || AtmPort::new(k, policy).unwrap().with_partial_packet_discard(partial);
                let (want, ref_port) = per_cell_reference(port(), &rates, &offers);
                for advance_on_offer in [true, false] {
                    let (got, sp, _) = driven_with_slack(port(), &rates, &offers, advance_on_offer, SimTime::from_micros(slack_us));
                    prop_assert_eq!(&got, &want, "{:?}", policy);
                    prop_assert_eq!(sp.port().stats(), ref_port.stats());
                    for vc in 0..4 {
                        prop_assert_eq!(sp.port().vc_counters(vc), ref_port.vc_counters(vc));
                    }
                }
            }
        }

        /// The same with partial packet discard off, and with inputs slower than the output or
        /// as fast (a frame's cells then leave with gaps, the output idle in between), so that
        /// every path of the runs of cells (accepted while room, dropped whole, PPD, a full
        /// buffer, an idle output) meets the per-cell reference. Per-VC counters compared too.
        #[test]
        fn runs_of_cells_equal_per_cell_events(offers in offers(), k in 5u32..200, partial in proptest::bool::ANY) {
            let rates = [ACCESS, Rate::mbps(20), T3, ACCESS];
            for policy in policies() {
                let port = || AtmPort::new(k, policy).unwrap().with_partial_packet_discard(partial);
                let (want, ref_port) = per_cell_reference(port(), &rates, &offers);
                let (got, sp, _) = lazily_driven(port(), &rates, &offers, false);
                prop_assert_eq!(&got, &want, "{:?}", policy);
                prop_assert_eq!(sp.port().stats(), ref_port.stats());
                for vc in 0..4 {
                    prop_assert_eq!(sp.port().vc_counters(vc), ref_port.vc_counters(vc));
                    prop_assert_eq!(sp.port().vc_occupancy(vc), ref_port.vc_occupancy(vc));
                }
            }
        }
    }

    #[test]
    fn two_wakeups_per_frame_suffice() {
        // 12 VCs, each offering a frame of MSS 9180 (193 cells) every 20 ms, staggered by 1.7 ms:
        // 12 x 193 cells per 20 ms is 1.09 times the T3 cell rate, so the EPD buffer of 1000
        // cells fills and EPD drops some frames whole.
        let n = cells_for_tcp_payload(9180) as u32;
        let mut offers = Vec::new();
        for round in 0..50u64 {
            for vc in 0..12u32 {
                let at = SimTime::from_millis(20 * round) + SimTime::from_micros(1_700 * vc as u64);
                offers.push((at, vc, vc, round * 100 + vc as u64, n));
            }
        }
        let port = || AtmPort::new(1000, DropPolicy::EPD_SEED).unwrap();
        let (want, _) = per_cell_reference(port(), &[ACCESS; 12], &offers);
        let (got, sp, polls) = lazily_driven(port(), &[ACCESS; 12], &offers, false);
        assert_eq!(got, want);
        let mut rx = Reassembler::new();
        let delivered = got.iter().filter(|(_, c)| matches!(rx.receive(*c), Reassembled::Frame { .. })).count() as u64;
        let frames = offers.len() as u64;
        eprintln!("{frames} frames, {delivered} delivered, {} cells out, {polls} wake-ups besides offers, port {:?}", got.len(), sp.port().stats());
        assert!(polls <= 2 * frames, "{polls} wake-ups for {frames} frames");
        assert!(delivered > frames / 2 && delivered < frames);
    }
}
