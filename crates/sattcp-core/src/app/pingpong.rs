//! NetPIPE's ping-pong (seed 003 §2; NetPIPE 3.7's `netpipe.c`): for each block size of
//! NetPIPE's schedule, several round trips of one block each way on one connection; the block
//! transfer time is half the round trip, as NetPIPE reports it.
//!
//! The connection is two half-connections, as the WWW pair's: `ping` (client to server) and
//! `pong` (server to client). The server writes the block back once all of it has arrived; the
//! client writes the next block when the whole echo is back. Before the first size one 1-byte exchange warms
//! the connection up (NetPIPE's synchronisation), so no recorded round trip waits for a
//! handshake.
//!
//! Each size is measured in `repeats` trials (NetPIPE's `TRIALS`) of `nrepeat` round trips
//! each (one by default); a trial's transfer time is its duration / (2 nrepeat), as NetPIPE's
//! `t = (When() - t0) / ((1 + !streamopt) * nrepeat)`. Per size: the mean trial time,
//! throughput = bits / mean time, the population variance of the trial times, %CDV =
//! standard deviation / mean x 100 (seed 003 §4), and the minimum: NetPIPE's own statistic
//! (it reports the best trial, `bwdata[n].t = MIN(bwdata[n].t, t)`, and NetPIPE 2.x the
//! variance `t2/TRIALS - t1/TRIALS * t1/TRIALS` of the trials).
//!
//! NetPIPE 2.x as the seed ran it (1999-2000: `netpipe.c` and `netpipe.h` v1.7 1999/04/27, read
//! in tmagik/netpipe5-dev at 109bec8, the tree's NetPIPE 2.x files): `TRIALS 7`, `RUNTM 0.25`,
//! `LATENCYREPS 100`; per size `nrepeat = MAX((RUNTM / ((double)args.bufflen / (args.bufflen -
//! inc + 1.0) * tlast)), TRIALS)`, computed before `args.bufflen = len + pert` (so `bufflen` is
//! the previous size, 1 for the first) and truncated to an int, `tlast` being the latency (the
//! mean half round trip of 100 1-byte exchanges) and then the previous size's best trial
//! time. `app.nrepeat = "netpipe"` does exactly that ([`NRepeat::NetPipe`]), with the 1-byte
//! warm-up's half round trip as the latency (on an error-free path every 1-byte exchange takes
//! the same time). Not modelled: the 6-byte `Sync()` exchange before each trial, the 4-byte
//! repeat count before each size, NetPIPE's stop once a size takes over `STOPTM` = 1 s.

use super::{App, AppCx, AppReport, Interest, Role, Setup};
use crate::net::packet::FlowId;
use crate::time::SimTime;
use std::sync::{Arc, Mutex};

/// NetPIPE's default perturbation: each size n is also tried as n - 3 and n + 3 (`-p 3`).
pub const NETPIPE_PERTURBATION: u64 = 3;

/// NetPIPE's block sizes from `start` to `end`: the increment starts at 1 and doubles every
/// second step from the fourth on (1, 2, 3, 4, 6, 8, 12, 16, 24, ...); each size whose
/// increment exceeds `perturbation + 1` is also tried `perturbation` below and above
/// (NetPIPE 3.7 `netpipe.c`, main loop: `if (nq > 2) inc = (nq % 2) ? inc + inc : inc;`).
/// Sizes past `end` by a perturbation are kept, as NetPIPE does (65533, 65536, 65539).
pub fn netpipe_sizes(start: u64, end: u64, perturbation: u64) -> Vec<u64> {
    netpipe_schedule(start, end, perturbation).into_iter().map(|(size, _)| size).collect()
}

/// [`netpipe_sizes`] with the increment NetPIPE holds when it runs each size (the `inc` of its
/// `nrepeat` formula).
pub fn netpipe_schedule(start: u64, end: u64, perturbation: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut inc: u64 = if start > 1 { start / 2 } else { 1 };
    let mut nq: u64 = if start > 1 { 1 } else { 0 };
    let mut len = start.max(1);
    while len <= end {
        if nq > 2 && nq % 2 == 1 {
            inc += inc;
        }
        if perturbation > 0 && inc > perturbation + 1 {
            out.extend([(len - perturbation, inc), (len, inc), (len + perturbation, inc)]);
        } else {
            out.push((len, inc));
        }
        len += inc;
        nq += 1;
    }
    out
}

/// The round trips a schedule makes, warm-up included, and the blocks' bytes they carry one
/// way (the same bytes come back): an upper bound for the run's work estimate
/// (`sattcp.api.estimate_work`), which without it took a ping-pong run for a bulk transfer at
/// line rate until `run.duration`. `tlast_floor(n)` must be at most the transfer time of an
/// `n`-byte block (one way), for `NRepeat::NetPipe`: NetPIPE's `nrepeat` only falls as `tlast`
/// grows, so the floor gives each size's most round trips (the real `tlast` is known only as
/// the run goes). Retransmissions are not counted.
pub fn schedule_work(schedule: &[(u64, u64)], repeats: u32, nrepeat: NRepeat, tlast_floor: impl Fn(u64) -> SimTime) -> (u64, u64) {
    let (mut round_trips, mut bytes) = (1u64, WARM_UP_BYTES);
    let mut prev = WARM_UP_BYTES;
    for &(size, inc) in schedule {
        let per_trial = match nrepeat {
            NRepeat::Fixed(n) => n.max(1),
            NRepeat::NetPipe => netpipe_nrepeat(prev, inc, tlast_floor(prev), repeats.max(1)),
        };
        let n = u64::from(repeats.max(1)) * u64::from(per_trial);
        round_trips = round_trips.saturating_add(n);
        bytes = bytes.saturating_add(n.saturating_mul(size));
        prev = size;
    }
    (round_trips, bytes)
}

/// The measurements of one block size.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Block {
    pub bytes: u64,
    /// Round trips per trial.
    pub nrepeat: u32,
    /// Block transfer times, one per trial: the trial's duration / (2 nrepeat), in whole ns
    /// (round trip / 2 when nrepeat = 1).
    pub times: Vec<SimTime>,
}

impl Block {
    /// Mean transfer time, s (the sum in integer nanoseconds, then one division).
    pub fn mean_s(&self) -> f64 {
        let sum: u128 = self.times.iter().map(|t| t.as_nanos() as u128).sum();
        sum as f64 / self.times.len() as f64 / 1e9
    }
    /// The shortest transfer time, s, in the same arithmetic as [`Block::mean_s`] (so that
    /// equal times give min = mean exactly).
    pub fn min_s(&self) -> f64 {
        self.times.iter().min().map_or(0.0, |t| t.as_nanos() as f64 / 1e9)
    }
    /// Population variance of the transfer time, s^2 (NetPIPE 2.x: t2/TRIALS - (t1/TRIALS)^2),
    /// from exact integer sums, so equal times give exactly 0: (n Σt² - (Σt)²) / n², in ns².
    pub fn variance_s2(&self) -> f64 {
        let n = self.times.len() as u128;
        if n == 0 {
            return 0.0;
        }
        let sum: u128 = self.times.iter().map(|t| t.as_nanos() as u128).sum();
        let sq: u128 = self.times.iter().map(|t| (t.as_nanos() as u128).pow(2)).sum();
        // n Σt² >= (Σt)² (Cauchy-Schwarz); times under 2^40 ns (18 min) keep n Σt² < 2^128
        // for n < 2^40, and a saturating product keeps a longer one from wrapping.
        let num = n.saturating_mul(sq).saturating_sub(sum.saturating_mul(sum));
        num as f64 / (n * n) as f64 / 1e18
    }
    /// Throughput in bits per second at the mean transfer time.
    pub fn throughput_bps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.mean_s()
    }
    /// Coefficient of delay variation, percent (seed 003 §4: sd / mean x 100).
    pub fn cdv_pct(&self) -> f64 {
        libm::sqrt(self.variance_s2()) / self.mean_s() * 100.0
    }
}

/// Where the results go (shared with whoever reads them after the run).
pub type Results = Arc<Mutex<Vec<Block>>>;

/// NetPIPE's `TRIALS`: each size is measured in 7 trials (NetPIPE 2.x `netpipe.h` v1.7, and
/// 3.7's FINAL build that Debian ships). Our default `app.repeats` (module docs, docs/netpipe.md).
pub const NETPIPE_TRIALS: u32 = 7;

/// NetPIPE's `RUNTM`: the time a trial aims at, 0.25 s (NetPIPE 2.x `netpipe.h` v1.7; 3.7's
/// FINAL build too).
pub const NETPIPE_RUNTM_S: f64 = 0.25;

/// The most round trips a trial may take (`app.nrepeat`'s bound).
const MAX_NREPEAT: u32 = 1_000_000;

/// Round trips per trial (`app.nrepeat`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum NRepeat {
    /// This many, every size (1: each trial is one round trip, the default).
    Fixed(u32),
    /// NetPIPE's own choice per size (module docs): `max(RUNTM / (prev / (prev - inc + 1) x
    /// tlast), trials)`, truncated.
    NetPipe,
}

impl NRepeat {
    /// As written in a scenario (the resolved scenario).
    pub fn to_val(self) -> crate::scenario::raw::Val {
        use crate::scenario::raw::Val;
        match self {
            NRepeat::Fixed(n) => Val::Int(n as i64),
            NRepeat::NetPipe => Val::Str("netpipe".into()),
        }
    }
}

/// NetPIPE's `nrepeat` for the next size (netpipe.c 2.x and 3.x, main loop): `prev` is the size
/// run before it (1 before the first), `inc` the schedule's increment at it, `tlast` the
/// previous size's best trial time (at first the latency), `trials` the floor (`TRIALS`).
/// C's `MAX(double, int)` then the conversion to `int`: a negative or zero ratio (a step of
/// more than double) gives `trials`.
pub fn netpipe_nrepeat(prev: u64, inc: u64, tlast: SimTime, trials: u32) -> u32 {
    let ratio = prev as f64 / (prev as f64 - inc as f64 + 1.0);
    let x = NETPIPE_RUNTM_S / (ratio * tlast.as_nanos() as f64 / 1e9);
    // MAX(x, TRIALS); NaN (0/0) and negatives fall to TRIALS; the cast saturates.
    if x > trials as f64 {
        (x as u32).min(MAX_NREPEAT)
    } else {
        trials
    }
}

enum Phase {
    WarmUp,
    /// Round trip `rt` of trial `repeat` of size `index`.
    Size { index: usize, repeat: u32, rt: u32 },
    Done,
}

/// The ping-pong application.
pub struct PingPong {
    ping: FlowId,
    pong: FlowId,
    sizes: Vec<u64>,
    /// NetPIPE's increment at each size (for `NRepeat::NetPipe`).
    incs: Vec<u64>,
    repeats: u32,
    nrepeat: NRepeat,
    /// Round trips per trial of the size in progress.
    cur_nrepeat: u32,
    /// NetPIPE's `tlast`: the warm-up's half round trip, then each size's best trial time.
    tlast: SimTime,
    phase: Phase,
    /// Bytes the server has echoed so far (ping bytes delivered and written back).
    echoed: u64,
    /// Pong bytes the client must have for the current block to be back.
    expect_back: u64,
    /// When the current trial's first block was written.
    trial_start: SimTime,
    /// Bytes written by the application but not yet taken by a finite send buffer
    /// (`tcp.send_buffer`), [ping, pong]: the rest of a block waits for room, as a blocking
    /// `write()` in NetPIPE would.
    unwritten: [u64; 2],
    results: Results,
}

/// The warm-up exchange: one byte each way.
const WARM_UP_BYTES: u64 = 1;

impl PingPong {
    /// Declares the two half-connections between host pair 0 and installs the application;
    /// returns where its results will be.
    /// `schedule`: each size with NetPIPE's increment at it ([`netpipe_schedule`]).
    pub fn install(setup: &mut Setup<'_>, schedule: Vec<(u64, u64)>, repeats: u32, nrepeat: NRepeat) -> Results {
        let (client, server) = setup.endpoints[0];
        let ping = setup.flow_of(0, Role::Data, client, server);
        let pong = setup.flow_of(0, Role::Request, server, client);
        let results: Results = Arc::new(Mutex::new(Vec::new()));
        let (sizes, incs) = schedule.into_iter().unzip();
        let app = PingPong {
            ping,
            pong,
            sizes,
            incs,
            repeats: repeats.max(1),
            nrepeat,
            cur_nrepeat: 1,
            tlast: SimTime::ZERO,
            phase: Phase::WarmUp,
            echoed: 0,
            expect_back: 0,
            trial_start: SimTime::ZERO,
            unwritten: [0, 0],
            results: results.clone(),
        };
        setup.app(Box::new(app), &[ping, pong]);
        results
    }

    fn slot(&self, flow: FlowId) -> usize {
        usize::from(flow == self.pong)
    }

    /// Writes `bytes` more to `flow`, as much as its send buffer takes now.
    fn write(&mut self, cx: &mut AppCx<'_>, flow: FlowId, bytes: u64) {
        let i = self.slot(flow);
        self.unwritten[i] += bytes;
        self.flush(cx, flow);
    }

    fn flush(&mut self, cx: &mut AppCx<'_>, flow: FlowId) {
        let i = self.slot(flow);
        if self.unwritten[i] > 0 {
            self.unwritten[i] -= cx.write(flow, self.unwritten[i]);
        }
    }

    fn send(&mut self, cx: &mut AppCx<'_>, bytes: u64) {
        self.expect_back += bytes;
        self.write(cx, self.ping, bytes);
    }

    /// The echo of the current block is back at `now`: at the end of a trial record its time;
    /// send the next block.
    fn round_done(&mut self, cx: &mut AppCx<'_>) {
        let now = cx.now();
        let next = match self.phase {
            Phase::WarmUp => {
                // NetPIPE's latency, the first tlast: half the 1-byte round trip.
                self.tlast = SimTime((now - self.trial_start).as_nanos() / 2);
                Some((0, 0, 0))
            }
            Phase::Size { index, repeat, rt } if rt + 1 < self.cur_nrepeat => Some((index, repeat, rt + 1)),
            Phase::Size { index, repeat, .. } => {
                let t = SimTime((now - self.trial_start).as_nanos() / (2 * self.cur_nrepeat as u64));
                let mut res = self.results.lock().expect("not poisoned");
                if repeat == 0 {
                    res.push(Block { bytes: self.sizes[index], nrepeat: self.cur_nrepeat, times: Vec::new() });
                }
                let block = res.last_mut().expect("pushed");
                block.times.push(t);
                if repeat + 1 < self.repeats {
                    Some((index, repeat + 1, 0))
                } else {
                    self.tlast = block.times.iter().copied().min().expect("a trial");
                    (index + 1 < self.sizes.len()).then_some((index + 1, 0, 0))
                }
            }
            Phase::Done => None,
        };
        match next {
            Some((index, repeat, rt)) => {
                if repeat == 0 && rt == 0 {
                    self.cur_nrepeat = match self.nrepeat {
                        NRepeat::Fixed(n) => n.max(1),
                        NRepeat::NetPipe => {
                            let prev = if index == 0 { WARM_UP_BYTES } else { self.sizes[index - 1] };
                            netpipe_nrepeat(prev, self.incs[index], self.tlast, self.repeats)
                        }
                    };
                }
                if rt == 0 {
                    self.trial_start = now;
                }
                self.phase = Phase::Size { index, repeat, rt };
                self.send(cx, self.sizes[index]);
            }
            None => self.finish(cx),
        }
    }

    /// The schedule is done: the run ends here, not at `run.duration`.
    fn finish(&mut self, cx: &mut AppCx<'_>) {
        self.phase = Phase::Done;
        cx.complete(self.ping);
        cx.complete(self.pong);
        cx.end_run();
    }

    /// The result's `netpipe` section: one row per block size measured (in the order run).
    pub fn rows(blocks: &[Block]) -> serde_json::Value {
        serde_json::Value::Array(
            blocks
                .iter()
                .map(|b| {
                    serde_json::json!({
                        "bytes": b.bytes,
                        "repeats": b.times.len(),
                        "nrepeat": b.nrepeat,
                        "time_s": b.mean_s(),
                        "min_s": b.min_s(),
                        "variance_s2": b.variance_s2(),
                        "throughput_bps": b.throughput_bps(),
                        "cdv_pct": b.cdv_pct(),
                    })
                })
                .collect(),
        )
    }
}

impl App for PingPong {
    fn interest(&self) -> Interest {
        Interest { delivered: true, acked: false }
    }

    fn start(&mut self, cx: &mut AppCx<'_>) {
        cx.open_at(self.ping, SimTime::ZERO);
        cx.open_at(self.pong, SimTime::ZERO);
    }

    fn on_open(&mut self, cx: &mut AppCx<'_>, flow: FlowId) {
        if flow == self.ping {
            if self.sizes.is_empty() {
                self.finish(cx);
                return;
            }
            self.trial_start = cx.now();
            self.send(cx, WARM_UP_BYTES);
        }
    }

    fn on_delivered(&mut self, cx: &mut AppCx<'_>, flow: FlowId, delivered: u64) {
        if flow == self.ping {
            // The server reads the whole block, then writes it back (NetPIPE's receiver).
            if delivered == self.expect_back {
                self.write(cx, self.pong, delivered - self.echoed);
                self.echoed = delivered;
            }
        } else if delivered == self.expect_back {
            self.round_done(cx);
        }
    }

    fn on_send_space(&mut self, cx: &mut AppCx<'_>, flow: FlowId) {
        self.flush(cx, flow);
    }

    fn done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    fn report(&mut self, end: SimTime) -> Option<AppReport> {
        let blocks = self.results.lock().expect("not poisoned");
        let mut r = AppReport { section: Some(("netpipe".into(), Self::rows(&blocks))), ..AppReport::default() };
        if !self.done() {
            let full = blocks.iter().filter(|b| b.times.len() as u32 == self.repeats).count();
            let partial = match blocks.last() {
                Some(b) if (b.times.len() as u32) < self.repeats => format!(", and {} of {} trials of {} bytes", b.times.len(), self.repeats, b.bytes),
                _ => String::new(),
            };
            r.warnings.push(format!(
                "run.duration ({end}) ended the run before the ping-pong schedule: {full} of {} block sizes done{partial}; the netpipe table holds what finished (raise run.duration)",
                self.sizes.len()
            ));
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load;
    use crate::time::Rate;
    use crate::world::Simulation;

    /// The round trips and bytes (one way, warm-up included) the run's `netpipe` rows record,
    /// and the bound `PingPongSpec::work` gives for the scenario before it runs.
    fn work_recorded_and_bound(text: &str) -> ((u64, u64), (u64, u64)) {
        let sc = load(text, &[], None).unwrap_or_else(|e| panic!("{e}")).0;
        let bound = sc.pingpong_work().expect("a ping-pong scenario");
        let r = crate::run_toml(text, &[], None).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.warnings.is_empty(), "the schedule finished: {:?}", r.warnings);
        let rows = r.sections["netpipe"].as_array().expect("rows").clone();
        let n = |row: &serde_json::Value, k: &str| row[k].as_u64().unwrap_or_else(|| panic!("{k} in {row}"));
        let recorded = rows.iter().fold((1, WARM_UP_BYTES), |(rt, b), row| {
            let trips = n(row, "repeats") * n(row, "nrepeat");
            (rt + trips, b + trips * n(row, "bytes"))
        });
        (recorded, bound)
    }

    #[test]
    fn the_work_bound_holds_the_runs_round_trips() {
        let base = "[run]\nduration = \"20000s\"\n[links.access]\nrate = \"25Mbps\"\ndelay = \"1ms\"\n[links.bottleneck]\nrate = \"2.048Mbps\"\ndelay = \"20ms\"\n[app]\nkind = \"pingpong\"\nlast_block = 8192\nrepeats = 3\n";
        // A fixed nrepeat: the bound is exactly the schedule's.
        let (recorded, bound) = work_recorded_and_bound(&format!("{base}nrepeat = 2\n"));
        assert_eq!(recorded, bound);
        let sizes = netpipe_sizes(1, 8192, NETPIPE_PERTURBATION);
        assert_eq!(bound, (1 + 6 * sizes.len() as u64, 1 + 6 * sizes.iter().sum::<u64>()));
        // NetPIPE's nrepeat: never fewer round trips than the run made, and not far above
        // (the floor is the path's delay, 22 ms, plus the block at 2.048 Mbps; a block's real
        // one-way time adds its headers, the access links and the ACK clocking).
        let (recorded, bound) = work_recorded_and_bound(&format!("{base}nrepeat = \"netpipe\"\n"));
        assert!(recorded.0 > 1 + 3 * sizes.len() as u64, "NetPIPE chose more than one round trip a trial somewhere: {recorded:?}");
        assert!(bound.0 >= recorded.0 && bound.1 >= recorded.1, "bound {bound:?} against the run's {recorded:?}");
        assert!(bound.0 < 2 * recorded.0 && bound.1 < 2 * recorded.1, "bound {bound:?} against the run's {recorded:?}");
        // A path topology: its hops' delays and slowest rate.
        let path = "[run]\nduration = \"20000s\"\n[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n[[links.path]]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n[app]\nkind = \"pingpong\"\nlast_block = 4096\nrepeats = 2\nnrepeat = \"netpipe\"\n";
        let (recorded, bound) = work_recorded_and_bound(path);
        assert!(bound.0 >= recorded.0 && bound.1 >= recorded.1 && bound.0 < 2 * recorded.0, "bound {bound:?} against the run's {recorded:?}");
    }

    #[test]
    fn netpipe_nrepeat_by_hand() {
        // max(trunc(0.25 s / (prev / (prev - inc + 1) x tlast)), TRIALS):
        // the first size after a 1 ms latency: 0.25 / (1/1 x 0.001) = 250.
        assert_eq!(netpipe_nrepeat(1, 1, SimTime::from_millis(1), 7), 250);
        // 6 -> 8 (inc 2) after 1 ms: 0.25 / (6/5 x 0.001) = 208.33 -> 208.
        assert_eq!(netpipe_nrepeat(6, 2, SimTime::from_millis(1), 7), 208);
        // RTT 400 ms (tlast 0.2 s): 0.25 / 0.2 = 1.25 < TRIALS -> 7.
        assert_eq!(netpipe_nrepeat(1, 1, SimTime::from_millis(200), 7), 7);
        // A step of more than double (an explicit list 1 -> 8192): a negative ratio -> TRIALS.
        assert_eq!(netpipe_nrepeat(1, 8191, SimTime::from_millis(1), 7), 7);
        // prev - inc + 1 = 0: an infinite ratio, x = 0 -> TRIALS.
        assert_eq!(netpipe_nrepeat(4, 5, SimTime::from_millis(1), 7), 7);
    }

    #[test]
    fn the_schedule_carries_netpipes_increments() {
        // NetPIPE's loop: `for (len = start; ...; len += inc, nq++) { if (nq > 2) inc = (nq % 2)
        // ? inc + inc : inc; ... }`: the increment doubles as len reaches 4, 8, 16, ..., so the
        // size 4 runs holding inc 2, 8 holding 4, 13/16/19 holding 8.
        let s = netpipe_schedule(1, 64, NETPIPE_PERTURBATION);
        assert_eq!(s[..10], [(1, 1), (2, 1), (3, 1), (4, 2), (6, 2), (8, 4), (12, 4), (13, 8), (16, 8), (19, 8)]);
        assert_eq!(s.iter().map(|&(n, _)| n).collect::<Vec<_>>(), netpipe_sizes(1, 64, NETPIPE_PERTURBATION));
    }

    #[test]
    fn netpipe_schedule_as_nptcp_prints_it() {
        // NPtcp -u 65536 (Debian's netpipe-tcp 3.7.2), first and last sizes.
        let s = netpipe_sizes(1, 65_536, NETPIPE_PERTURBATION);
        assert_eq!(s[..22], [1, 2, 3, 4, 6, 8, 12, 13, 16, 19, 21, 24, 27, 29, 32, 35, 45, 48, 51, 61, 64, 67]);
        assert_eq!(s[s.len() - 6..], [49_149, 49_152, 49_155, 65_533, 65_536, 65_539]);
        assert_eq!(s.len(), 82);
        assert_eq!(netpipe_sizes(1, 16, 0), [1, 2, 3, 4, 6, 8, 12, 16]);
    }

    /// One hop at `rate`, `delay` one way; no delayed ACKs; the receive window `window`; an
    /// initial window of 16 segments, so that slow start never limits.
    fn run(rate: &str, delay: &str, window: u64, mss: u64, sizes: Vec<u64>, repeats: u32) -> Vec<Block> {
        run_ber(rate, delay, 0.0, window, mss, sizes, repeats)
    }

    fn run_ber(rate: &str, delay: &str, ber: f64, window: u64, mss: u64, sizes: Vec<u64>, repeats: u32) -> Vec<Block> {
        let text = format!(
            "[run]\nduration = \"3000s\"\n[topology]\nkind = \"path\"\n[[links.path]]\nrate = \"{rate}\"\ndelay = \"{delay}\"\nber = {ber:e}\n[switch]\nbuffer = \"1000pkt\"\n[tcp]\nmss = {mss}\nwindow = {window}\ndelayed_ack = false\ninitial_cwnd = 16\n"
        );
        let sc = load(&text, &[], None).unwrap_or_else(|e| panic!("{e}")).0;
        let mut out = None;
        let schedule = sizes.iter().map(|&n| (n, n)).collect();
        let mut sim = Simulation::with_apps(&sc, |s| out = Some(PingPong::install(s, schedule, repeats, NRepeat::Fixed(1))));
        sim.run();
        assert!(sim.app(0).done(), "every block echoed within the run");
        let r = out.unwrap();
        let v = r.lock().unwrap().clone();
        v
    }

    #[test]
    fn one_byte_takes_half_the_rtt_plus_serialisation() {
        // 2.048 Mbps, 200 ms one way (seed 003 Table 1, RTT 400 ms). One way a 1-byte block is
        // a 41-byte segment queued behind the 40-byte ACK its host just sent for the segment
        // that triggered it: 200 ms + tx(40) + tx(41) = 200 ms + 156.25 us + 160.16 us.
        let blocks = run("2.048Mbps", "200ms", 65_535, 1460, vec![1], 3);
        let r = Rate::bps(2_048_000);
        let expected = SimTime::from_millis(200) + r.tx_time(40) + r.tx_time(41);
        assert_eq!(blocks[0].times, vec![expected; 3]);
        assert!((blocks[0].mean_s() - 0.200316).abs() < 1e-6, "{}", blocks[0].mean_s());
        assert_eq!(blocks[0].variance_s2(), 0.0);
        assert_eq!(blocks[0].cdv_pct(), 0.0);
        // Seed 003 Table 1: "1 byte takes about 0.2045 s" (their path added ~4 ms of LANs and
        // ATM switching).
    }

    #[test]
    fn a_block_larger_than_the_window_is_window_limited() {
        // Window 8 KB (8 segments of 1024), RTT 400 ms, 2.048 Mbps: the window, not the rate,
        // limits (8 KB / 0.4 s = 164 kbit/s << 2 Mbps). A block of k windows leaves in k
        // bursts, each released when the ACK of the previous burst's first segment is back:
        // one cycle = 2 x 200 ms + tx(1064-byte segment) + tx(40-byte ACK) = 404.3 ms. One-way
        // time (k - 1) cycles + 200 ms + tx(8 segments), so throughput -> window / RTT.
        let w = 8192u64;
        let blocks = run("2.048Mbps", "200ms", w, 1024, vec![1, 8 * w, 32 * w], 2);
        let tx = |bytes: f64| bytes * 8.0 / 2.048e6;
        for b in &blocks[1..] {
            let k = (b.bytes / w) as f64;
            let t = (k - 1.0) * (0.4 + tx(1064.0) + tx(40.0)) + 0.2 + tx(8.0 * 1064.0);
            assert!((b.mean_s() / t - 1.0).abs() < 1e-3, "{} bytes: {} s, expected {t}", b.bytes, b.mean_s());
        }
        let big = &blocks[2];
        let limit = w as f64 * 8.0 / 0.4;
        assert!((big.throughput_bps() / limit - 1.0).abs() < 0.03, "{} vs {limit}", big.throughput_bps());
        assert!(big.throughput_bps() < limit * 32.0 / 31.0 * 1.01);
    }

    #[test]
    fn a_full_window_block_is_one_burst() {
        // A block of exactly one window (8 segments): one burst, no second round trip. One way
        // = 200 ms + tx(40-byte ACK of the previous echo, queued ahead) + tx(8 x 1064-byte
        // segments) = 233.40625 ms, exactly, each repeat.
        let blocks = run("2.048Mbps", "200ms", 8192, 1024, vec![8192], 2);
        let r = Rate::bps(2_048_000);
        let one_way = SimTime::from_millis(200) + r.tx_time(40) + r.tx_time(8 * 1064);
        assert_eq!(one_way.as_nanos(), 233_406_250);
        assert_eq!(blocks[0].times, vec![one_way; 2]);
    }

    #[test]
    fn every_block_comes_back_whole_under_bit_errors() {
        // BER 1e-5 (about 8% of 1064-byte segments lost) on a 20 ms RTT: the run ends, every
        // size has all its repeats, and errors make the transfer times vary (%CDV > 0).
        let sizes = netpipe_sizes(1, 16_384, NETPIPE_PERTURBATION);
        let blocks = run_ber("2.048Mbps", "10ms", 1e-5, 65_535, 1024, sizes.clone(), 3);
        assert_eq!(blocks.iter().map(|b| b.bytes).collect::<Vec<_>>(), sizes);
        assert!(blocks.iter().all(|b| b.times.len() == 3));
        assert!(blocks.iter().any(|b| b.cdv_pct() > 10.0), "some size hit a loss");
    }
}
