//! The WWW workload of the main study (seed 000 §4.1-4.2, seed 001 §4-5): HTTP/1.1 clients
//! that send pipelined batches of 128-byte requests over one persistent TCP connection, and
//! infinitely fast servers that answer each request with a file whose size is drawn from five
//! SPECweb96-like classes.
//!
//! Both halves are passive (STYLE.md, "passive state machines"): they own a random stream and
//! no clock. The engine asks a [`WwwClient`] when its next request is due
//! ([`WwwClient::next_request_at`]) and collects it with [`WwwClient::pop_request`]; it hands
//! the bytes a server's TCP receives to [`WwwServer::on_request_bytes`], which answers how many
//! response bytes to append to the send buffer. Every random draw happens in a fixed order on
//! the object's own named stream (`"www/client/17"`, `"www/server/17"`), so the workload of one
//! pair does not depend on how the engine interleaves calls, nor on how many other pairs exist.
//!
//! Where the seeds are silent we chose, and `docs/workload.md` explains why:
//! - the Poisson draws are truncated to 1..9 by clamping ([`Truncation::Clamp`]);
//! - class 0's nine sizes are 0.1 KB .. 0.9 KB (102, 204, ..., 921 bytes, as in SPECweb96),
//!   and 1 KB = 1024 bytes, each class's step being ten times the previous one;
//! - the 10 s think time runs from one batch start to the next;
//! - each client starts its first batch at a uniform random offset within the first think
//!   period ([`FirstBatch::Staggered`]).

use std::fmt;

use crate::engine::rng::{Rng, RngFactory};
use crate::time::SimTime;

/// seed 000 §4.1.3: the time between batches is "a constant, 10 seconds"; seed 000 §4.2:
/// "A client makes 1 to 9 requests ... every 10 seconds", so it runs from batch start to batch
/// start.
pub const THINK_TIME: SimTime = SimTime::from_secs(10);
/// seed 000 §4.1.3: "1 to 9 requests for a single document, Poisson distributed around a mean
/// of 5".
pub const BATCH_MEAN: f64 = 5.0;
pub const BATCH_MIN: u32 = 1;
pub const BATCH_MAX: u32 = 9;
/// seed 000 §4.1.3: requests "are separated by a random time interval between 100ms to 500 ms".
pub const GAP_MIN: SimTime = SimTime::from_millis(100);
pub const GAP_MAX: SimTime = SimTime::from_millis(500);
/// seed 000 §4.2.2: "A WWW client asks its TCP to send a 128 byte packet as a request".
pub const REQUEST_BYTES: u64 = 128;
/// seed 000 Table 2 / seed 001 Table 1: frequency of access of classes 0-4, per mille
/// (20 %, 28 %, 40 %, 11.2 %, 0.8 %). Integer weights make the class draw exact.
pub const CLASS_WEIGHTS_PER_MILLE: [u32; 5] = [200, 280, 400, 112, 8];
/// seed 000 §4.1.2: "There are nine discrete sizes in each class".
pub const SIZES_PER_CLASS: usize = 9;
/// seed 000 §4.1.2: "one of these nine file sizes is selected according to a Poisson
/// distribution with mean 5".
pub const SIZE_INDEX_MEAN: f64 = 5.0;
/// Our choice: 1 KB = 1024 bytes (SPECweb96's file set is built on 1024-byte kilobytes).
pub const KB: u64 = 1024;

/// How a Poisson draw is brought into `min..=max`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Truncation {
    /// Values below `min` become `min`, values above `max` become `max` (the default). The
    /// simplest code for "1 to 9" (`if (n < 1) n = 1; if (n > 9) n = 9;`, our judgement of what
    /// the seeds' simulator did); it keeps the mean at 4.95, closest to the seeds' "mean of 5"
    /// and "around 120 KB".
    Clamp,
    /// Draw again until the value is in range (the conditional distribution; mean 4.85).
    Resample,
}

/// A Poisson distribution truncated to `min..=max`.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize)]
pub struct TruncatedPoisson {
    pub mean: f64,
    pub min: u32,
    pub max: u32,
    pub truncation: Truncation,
}

impl TruncatedPoisson {
    /// The seeds' distribution: Poisson with mean 5, clamped to 1..9.
    pub const SEED: TruncatedPoisson = TruncatedPoisson {
        mean: 5.0,
        min: 1,
        max: 9,
        truncation: Truncation::Clamp,
    };

    /// One draw; the number of uniforms consumed depends only on the values drawn.
    pub fn sample(&self, rng: &mut Rng) -> u32 {
        match self.truncation {
            Truncation::Clamp => {
                (rng.poisson(self.mean)
                    .clamp(self.min as u64, self.max as u64)) as u32
            }
            Truncation::Resample => loop {
                let k = rng.poisson(self.mean);
                if (self.min as u64..=self.max as u64).contains(&k) {
                    return k as u32;
                }
            },
        }
    }

    /// Probabilities of `min, min + 1, ..., max` (index 0 is `min`). For analysis only.
    pub fn pmf(&self) -> Vec<f64> {
        let lambda = self.mean;
        // p_k = e^-lambda lambda^k / k!, built up term by term.
        let mut p = libm::exp(-lambda);
        let mut below = 0.0; // P(K < min)
        let mut inside = Vec::with_capacity((self.max - self.min + 1) as usize);
        for k in 0..=self.max {
            if k > 0 {
                p *= lambda / k as f64;
            }
            if k < self.min {
                below += p;
            } else {
                inside.push(p);
            }
        }
        let in_range: f64 = inside.iter().sum();
        match self.truncation {
            Truncation::Clamp => {
                let above = (1.0 - below - in_range).max(0.0);
                inside[0] += below;
                *inside.last_mut().expect("min <= max") += above;
            }
            Truncation::Resample => inside.iter_mut().for_each(|q| *q /= in_range),
        }
        inside
    }

    /// The mean of the truncated distribution. For analysis only.
    pub fn expected(&self) -> f64 {
        self.pmf()
            .iter()
            .enumerate()
            .map(|(i, p)| (self.min as f64 + i as f64) * p)
            .sum()
    }

    /// Probability that an untruncated draw falls in `min..=max`.
    fn mass_in_range(&self) -> f64 {
        let mut p = libm::exp(-self.mean);
        let mut mass = if self.min == 0 { p } else { 0.0 };
        for k in 1..=self.max {
            p *= self.mean / k as f64;
            if k >= self.min {
                mass += p;
            }
        }
        mass
    }
}

/// When a client starts its first batch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstBatch {
    /// Every client starts at t = 0 (all 100 clients synchronised: a burst every 10 s).
    AtZero,
    /// At a uniform random time in `[0, think_time)`, drawn from the client's stream (the
    /// default; staggered starts avoid an artificial synchronisation of all clients).
    Staggered,
}

/// One class of files: its weight (frequency of access) and its nine sizes in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FileClass {
    pub weight: u32,
    pub sizes: [u64; SIZES_PER_CLASS],
}

/// Every parameter of the WWW model, with the seeds' values as [`Default`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WwwParams {
    /// Time from one batch start to the next.
    pub think_time: SimTime,
    pub first_batch: FirstBatch,
    /// Number of requests in a batch.
    pub batch: TruncatedPoisson,
    /// Gaps between consecutive requests of a batch are uniform in `[gap_min, gap_max)`.
    pub gap_min: SimTime,
    pub gap_max: SimTime,
    /// Bytes of one request, as handed to the client's TCP.
    pub request_bytes: u64,
    /// The file classes; a request falls in class `c` with probability `weight_c / sum`.
    pub classes: Vec<FileClass>,
    /// Which of a class's nine sizes (1-based index into `sizes`).
    pub size_index: TruncatedPoisson,
    /// No batch starts at or after this time (requests of a batch already begun still follow);
    /// `None`: the client runs for ever and the engine stops it.
    pub stop_at: Option<SimTime>,
}

/// The seeds' nine sizes of class `c`: `k * 1024 * 10^c / 10` bytes, `k = 1..9`, i.e. class 0
/// 102..921 bytes (0.1..0.9 KB, rounded down), class 1 1..9 KB, class 2 10..90 KB, class 3
/// 100..900 KB, class 4 1000..9000 KB.
pub fn seed_class_sizes(c: u32) -> [u64; SIZES_PER_CLASS] {
    let step_x10 = KB * 10u64.pow(c); // ten times the step, to keep class 0 in integers
    std::array::from_fn(|i| (i as u64 + 1) * step_x10 / 10)
}

impl Default for WwwParams {
    fn default() -> Self {
        WwwParams {
            think_time: THINK_TIME,
            first_batch: FirstBatch::Staggered,
            batch: TruncatedPoisson {
                mean: BATCH_MEAN,
                min: BATCH_MIN,
                max: BATCH_MAX,
                truncation: Truncation::Clamp,
            },
            gap_min: GAP_MIN,
            gap_max: GAP_MAX,
            request_bytes: REQUEST_BYTES,
            classes: CLASS_WEIGHTS_PER_MILLE
                .iter()
                .enumerate()
                .map(|(c, &weight)| FileClass {
                    weight,
                    sizes: seed_class_sizes(c as u32),
                })
                .collect(),
            size_index: TruncatedPoisson {
                mean: SIZE_INDEX_MEAN,
                min: 1,
                max: SIZES_PER_CLASS as u32,
                truncation: Truncation::Clamp,
            },
            stop_at: None,
        }
    }
}

/// A parameter that breaks a rule; the run cannot start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The field, e.g. `"gap_max"` or `"classes[2].weight"`.
    pub path: String,
    pub rule: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.rule)
    }
}
impl std::error::Error for ParamError {}

fn err(path: impl Into<String>, rule: impl Into<String>) -> Result<(), ParamError> {
    Err(ParamError {
        path: path.into(),
        rule: rule.into(),
    })
}

fn check_poisson(path: &str, p: &TruncatedPoisson) -> Result<(), ParamError> {
    if !(p.mean.is_finite() && p.mean > 0.0) {
        return err(
            format!("{path}.mean"),
            format!("must be finite and > 0, got {}", p.mean),
        );
    }
    if p.min > p.max {
        return err(
            format!("{path}.min"),
            format!("must be <= max ({}), got {}", p.max, p.min),
        );
    }
    // Knuth's method multiplies uniforms down to e^-mean: keep it well away from underflow.
    if p.mean > 500.0 {
        return err(
            format!("{path}.mean"),
            format!("must be <= 500, got {}", p.mean),
        );
    }
    if p.truncation == Truncation::Resample && p.mass_in_range() < 1e-3 {
        return err(
            format!("{path}.truncation"),
            "resample needs at least 0.1 % of the Poisson mass in min..=max",
        );
    }
    Ok(())
}

impl WwwParams {
    /// Checks every rule; the first broken one is returned.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.think_time == SimTime::ZERO {
            return err("think_time", "must be > 0");
        }
        check_poisson("batch", &self.batch)?;
        if self.batch.min == 0 {
            return err(
                "batch.min",
                "must be >= 1 (a batch has at least one request)",
            );
        }
        if self.gap_min > self.gap_max {
            return err(
                "gap_max",
                format!(
                    "must be >= gap_min ({}), got {}",
                    self.gap_min, self.gap_max
                ),
            );
        }
        // A batch must end before the next one starts, so that batches never interleave.
        let longest = self.gap_max.times(self.batch.max as u64 - 1);
        if longest >= self.think_time {
            return err(
                "think_time",
                format!(
                    "must exceed (batch.max - 1) * gap_max = {longest}, got {}",
                    self.think_time
                ),
            );
        }
        if self.request_bytes == 0 {
            return err("request_bytes", "must be > 0");
        }
        if self.classes.is_empty() {
            return err("classes", "must not be empty");
        }
        if self.classes.iter().map(|c| c.weight as u64).sum::<u64>() == 0 {
            return err("classes", "weights must not all be 0");
        }
        if self.classes.iter().map(|c| c.weight as u64).sum::<u64>() > u32::MAX as u64 {
            return err("classes", "weights must sum to at most 2^32 - 1");
        }
        check_poisson("size_index", &self.size_index)?;
        if self.size_index.min == 0 || self.size_index.max as usize > SIZES_PER_CLASS {
            return err(
                "size_index",
                format!("min..=max must lie in 1..={SIZES_PER_CLASS}"),
            );
        }
        Ok(())
    }

    /// Mean number of requests per batch (4.953 for the seeds, clamped).
    pub fn mean_batch_size(&self) -> f64 {
        self.batch.expected()
    }

    /// Mean requested file size in bytes (119,182 for the seeds; "around 120 KB", seed 000
    /// §4.1.2).
    pub fn mean_file_size(&self) -> f64 {
        let total: f64 = self.classes.iter().map(|c| c.weight as f64).sum();
        let pmf = self.size_index.pmf();
        let lo = self.size_index.min as usize;
        self.classes
            .iter()
            .map(|c| {
                let in_class: f64 = pmf
                    .iter()
                    .enumerate()
                    .map(|(i, p)| p * c.sizes[lo + i - 1] as f64)
                    .sum();
                c.weight as f64 / total * in_class
            })
            .sum()
    }

    /// Mean requests per second per client.
    pub fn request_rate(&self) -> f64 {
        self.mean_batch_size() / self.think_time.as_secs_f64()
    }

    /// Mean data a server schedules, in bits per second (seed 000 footnote 1: "on average a
    /// WWW server schedules 60KBps i.e. 480Kbps").
    pub fn offered_load_bps_per_server(&self) -> f64 {
        self.request_rate() * self.mean_file_size() * 8.0
    }

    /// Mean data `n` servers schedule together, in bits per second (47.2 Mbps for the seeds'
    /// 100; the footnote's round figures give 48).
    pub fn offered_load_bps(&self, n_servers: usize) -> f64 {
        self.offered_load_bps_per_server() * n_servers as f64
    }
}

/// The name of client `i`'s random stream.
pub fn client_stream_name(i: usize) -> String {
    format!("www/client/{i}")
}

/// The name of server `i`'s random stream.
pub fn server_stream_name(i: usize) -> String {
    format!("www/server/{i}")
}

/// One request as the client hands it to its TCP.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// When it was due (the engine normally pops it at exactly this time).
    pub at: SimTime,
    /// Batch number, from 0.
    pub batch: u64,
    /// Position in the batch, from 0.
    pub index: u32,
    /// Number of requests in this batch.
    pub batch_len: u32,
    /// Bytes to hand to TCP.
    pub bytes: u64,
}

/// A WWW client: the schedule of its requests.
///
/// Draws, in this order, on its own stream: the first batch's offset (if staggered), then for
/// each batch its size followed by its gaps, one gap drawn as each request but the last is
/// popped.
#[derive(Clone, Debug)]
pub struct WwwClient {
    rng: Rng,
    think_time: SimTime,
    batch: TruncatedPoisson,
    gap_min: SimTime,
    gap_max: SimTime,
    request_bytes: u64,
    stop_at: Option<SimTime>,
    /// When the current batch started.
    batch_start: SimTime,
    /// The current batch's number, length, and the index of the next request in it.
    batch_no: u64,
    batch_len: u32,
    index: u32,
    /// When the next request is due; `None` once `stop_at` is reached.
    next_at: Option<SimTime>,
    requests: u64,
}

impl WwwClient {
    /// A client drawing from `rng`. Panics if `params` are invalid (call
    /// [`WwwParams::validate`] first to get an error instead).
    pub fn new(params: &WwwParams, mut rng: Rng) -> Self {
        if let Err(e) = params.validate() {
            panic!("invalid WWW parameters: {e}");
        }
        let start = match params.first_batch {
            FirstBatch::AtZero => SimTime::ZERO,
            FirstBatch::Staggered => SimTime(rng.below(params.think_time.as_nanos())),
        };
        let mut c = WwwClient {
            rng,
            think_time: params.think_time,
            batch: params.batch,
            gap_min: params.gap_min,
            gap_max: params.gap_max,
            request_bytes: params.request_bytes,
            stop_at: params.stop_at,
            batch_start: start,
            batch_no: 0,
            batch_len: 0,
            index: 0,
            next_at: None,
            requests: 0,
        };
        c.begin_batch(start);
        c
    }

    /// Client `i` of a run, on its stream `"www/client/{i}"`.
    pub fn for_index(params: &WwwParams, rngs: &RngFactory, i: usize) -> Self {
        WwwClient::new(params, rngs.stream(&client_stream_name(i)))
    }

    fn begin_batch(&mut self, start: SimTime) {
        self.batch_start = start;
        self.index = 0;
        if self.stop_at.is_some_and(|stop| start >= stop) {
            self.next_at = None;
            self.batch_len = 0;
        } else {
            self.batch_len = self.batch.sample(&mut self.rng);
            self.next_at = Some(start);
        }
    }

    fn gap(&mut self) -> SimTime {
        let span = self.gap_max.as_nanos() - self.gap_min.as_nanos();
        let extra = if span == 0 { 0 } else { self.rng.below(span) };
        SimTime(self.gap_min.as_nanos() + extra)
    }

    /// When the next request is due (smoltcp's `poll_at`); `None` when there will be no more.
    pub fn next_request_at(&self) -> Option<SimTime> {
        self.next_at
    }

    /// The next request if it is due at or before `now`, advancing the schedule. Call it in a
    /// loop: several requests can be due at once if the engine polls late.
    pub fn pop_request(&mut self, now: SimTime) -> Option<Request> {
        let at = self.next_at.filter(|&t| t <= now)?;
        let req = Request {
            at,
            batch: self.batch_no,
            index: self.index,
            batch_len: self.batch_len,
            bytes: self.request_bytes,
        };
        self.requests += 1;
        self.index += 1;
        if self.index < self.batch_len {
            let gap = self.gap();
            self.next_at = Some(at + gap);
        } else {
            self.batch_no += 1;
            let next = self.batch_start + self.think_time;
            self.begin_batch(next);
        }
        Some(req)
    }

    /// Requests popped so far.
    pub fn requests_sent(&self) -> u64 {
        self.requests
    }
}

/// One file a server decided to send.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FileDraw {
    /// Class, from 0.
    pub class: u8,
    /// Size index within the class, 1..=9.
    pub index: u8,
    pub bytes: u64,
}

/// An infinitely fast WWW server: a file size per request.
///
/// Draws, per request and in this order, on its own stream: the class, then the size index.
#[derive(Clone, Debug)]
pub struct WwwServer {
    rng: Rng,
    /// Cumulative class weights and their total.
    cumulative: Vec<u32>,
    sizes: Vec<[u64; SIZES_PER_CLASS]>,
    size_index: TruncatedPoisson,
    request_bytes: u64,
    /// Bytes of a request received so far but not yet complete.
    partial: u64,
    requests: u64,
    scheduled: u64,
}

impl WwwServer {
    /// A server drawing from `rng`. Panics if `params` are invalid.
    pub fn new(params: &WwwParams, rng: Rng) -> Self {
        if let Err(e) = params.validate() {
            panic!("invalid WWW parameters: {e}");
        }
        let cumulative = params
            .classes
            .iter()
            .scan(0u32, |acc, c| {
                *acc += c.weight;
                Some(*acc)
            })
            .collect();
        WwwServer {
            rng,
            cumulative,
            sizes: params.classes.iter().map(|c| c.sizes).collect(),
            size_index: params.size_index,
            request_bytes: params.request_bytes,
            partial: 0,
            requests: 0,
            scheduled: 0,
        }
    }

    /// Server `i` of a run, on its stream `"www/server/{i}"`.
    pub fn for_index(params: &WwwParams, rngs: &RngFactory, i: usize) -> Self {
        WwwServer::new(params, rngs.stream(&server_stream_name(i)))
    }

    /// Draws the file answering one request and counts it as scheduled.
    pub fn draw_file(&mut self) -> FileDraw {
        let total = *self
            .cumulative
            .last()
            .expect("validated: at least one class");
        let r = self.rng.below(total as u64) as u32;
        let class = self
            .cumulative
            .iter()
            .position(|&c| r < c)
            .expect("r < total");
        let index = self.size_index.sample(&mut self.rng);
        let bytes = self.sizes[class][index as usize - 1];
        self.requests += 1;
        self.scheduled += bytes;
        FileDraw {
            class: class as u8,
            index: index as u8,
            bytes,
        }
    }

    /// The size in bytes of the file answering one request.
    pub fn file_size(&mut self) -> u64 {
        self.draw_file().bytes
    }

    /// Feeds `n` bytes of the request stream received in order (128-byte requests, possibly
    /// split or coalesced by TCP); returns the response bytes to append to the send buffer for
    /// the requests completed by them (pipelined: responses go out in request order).
    pub fn on_request_bytes(&mut self, n: u64) -> u64 {
        let total = self.partial + n;
        let complete = total / self.request_bytes;
        self.partial = total % self.request_bytes;
        (0..complete).map(|_| self.file_size()).sum()
    }

    /// Requests answered so far.
    pub fn requests_served(&self) -> u64 {
        self.requests
    }

    /// Total bytes scheduled so far (S_i times the simulated time, seed 000 §4.3).
    pub fn scheduled_bytes(&self) -> u64 {
        self.scheduled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Upper 0.1 % points of the chi-squared distribution (any standard table, e.g. NIST/SEMATECH
    // e-Handbook of Statistical Methods, §1.3.6.7.4). With fixed seeds the tests are
    // deterministic; the level only says how surprising a failure would be.
    const CHI2_999_DF4: f64 = 18.467;
    const CHI2_999_DF7: f64 = 24.322;
    const CHI2_999_DF8: f64 = 26.124;
    const CHI2_999_DF9: f64 = 27.877;

    fn chi2(observed: &[u64], probs: &[f64]) -> f64 {
        assert_eq!(observed.len(), probs.len());
        let n: u64 = observed.iter().sum();
        observed
            .iter()
            .zip(probs)
            .map(|(&o, &p)| {
                let e = p * n as f64;
                assert!(e >= 5.0, "expected count {e} too small for chi-squared");
                (o as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[track_caller]
    fn assert_chi2(what: &str, observed: &[u64], probs: &[f64], critical: f64) {
        let x = chi2(observed, probs);
        assert!(
            x < critical,
            "{what}: chi2 = {x:.2} >= {critical} (observed {observed:?})"
        );
    }

    fn rngs() -> RngFactory {
        RngFactory::new(20_261_123)
    }

    fn seed_server() -> WwwServer {
        WwwServer::for_index(&WwwParams::default(), &rngs(), 0)
    }

    /// All requests of the first `batches` batches.
    fn requests(client: &mut WwwClient, batches: u64) -> Vec<Request> {
        let mut out = Vec::new();
        while let Some(t) = client.next_request_at() {
            let r = client.pop_request(t).expect("due");
            if r.batch >= batches {
                break;
            }
            out.push(r);
        }
        out
    }

    #[test]
    fn defaults_are_the_seeds() {
        let p = WwwParams::default();
        p.validate().unwrap();
        assert_eq!(p.classes.len(), 5);
        assert_eq!(
            p.classes[0].sizes,
            [102, 204, 307, 409, 512, 614, 716, 819, 921]
        );
        assert_eq!(p.classes[1].sizes[0], 1024);
        assert_eq!(p.classes[1].sizes[8], 9 * 1024);
        assert_eq!(
            p.classes[2].sizes,
            std::array::from_fn(|i| (i as u64 + 1) * 10_240)
        );
        assert_eq!(p.classes[4].sizes[8], 9_216_000);
        let w: Vec<u32> = p.classes.iter().map(|c| c.weight).collect();
        assert_eq!(w, [200, 280, 400, 112, 8]);
    }

    #[test]
    fn truncated_poisson_pmf_by_hand() {
        // Poisson(5): P(0) = e^-5 = 0.006738, P(K >= 10) = 0.031828, P(9) = 0.036266.
        let clamp = TruncatedPoisson::SEED.pmf();
        assert_eq!(clamp.len(), 9);
        assert!((clamp.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(
            (clamp[0] - (0.033690 + 0.006738)).abs() < 1e-5,
            "{}",
            clamp[0]
        );
        assert!(
            (clamp[8] - (0.036266 + 0.031828)).abs() < 1e-5,
            "{}",
            clamp[8]
        );
        assert!((TruncatedPoisson::SEED.expected() - 4.95271).abs() < 1e-4);
        let resample = TruncatedPoisson {
            truncation: Truncation::Resample,
            ..TruncatedPoisson::SEED
        };
        assert!((resample.pmf().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(
            (resample.expected() - 4.84640).abs() < 1e-4,
            "{}",
            resample.expected()
        );
    }

    #[test]
    fn analytic_mean_file_size_and_offered_load() {
        let p = WwwParams::default();
        // sum_c w_c * step_c = 0.2*102.4 + 0.28*1024 + 0.4*10240 + 0.112*102400 + 0.008*1024000
        // = 24064 bytes (23.5 KB), less class 0's rounding; times E[k] = 4.95271.
        let m = p.mean_file_size();
        assert!((m - 119_181.0).abs() < 2.0, "{m}");
        // seed 000 §4.1.2: "average requested file size is around 120 KB".
        assert!((110_000.0..125_000.0).contains(&m));
        let load = p.offered_load_bps(100);
        // seed 000 footnote 1: 48 Mbps, from the round figures 5 requests and 120 KB.
        assert!((load - 47.22e6).abs() < 0.01e6, "{load}");
    }

    #[test]
    fn class_frequencies_chi2() {
        let mut s = seed_server();
        let mut counts = [0u64; 5];
        for _ in 0..200_000 {
            counts[s.draw_file().class as usize] += 1;
        }
        let probs = [0.2, 0.28, 0.4, 0.112, 0.008];
        assert_chi2("classes", &counts, &probs, CHI2_999_DF4);
    }

    #[test]
    fn sizes_within_each_class_chi2() {
        let mut s = seed_server();
        let mut counts = [[0u64; 9]; 5];
        for _ in 0..500_000 {
            let f = s.draw_file();
            assert_eq!(
                f.bytes,
                WwwParams::default().classes[f.class as usize].sizes[f.index as usize - 1]
            );
            counts[f.class as usize][f.index as usize - 1] += 1;
        }
        let pmf = TruncatedPoisson::SEED.pmf();
        for (c, observed) in counts.iter().enumerate() {
            assert_chi2(&format!("sizes of class {c}"), observed, &pmf, CHI2_999_DF8);
        }
    }

    #[test]
    fn batch_sizes_chi2() {
        let mut c = WwwClient::for_index(&WwwParams::default(), &rngs(), 17);
        let mut counts = [0u64; 9];
        let reqs = requests(&mut c, 50_000);
        for r in reqs.iter().filter(|r| r.index == 0) {
            counts[r.batch_len as usize - 1] += 1;
        }
        assert_eq!(counts.iter().sum::<u64>(), 50_000);
        assert_eq!(
            reqs.len() as u64,
            counts
                .iter()
                .enumerate()
                .map(|(i, n)| (i as u64 + 1) * n)
                .sum::<u64>()
        );
        assert_chi2(
            "batch sizes",
            &counts,
            &TruncatedPoisson::SEED.pmf(),
            CHI2_999_DF8,
        );
    }

    #[test]
    fn resample_truncation_matches_its_pmf_chi2() {
        let t = TruncatedPoisson {
            truncation: Truncation::Resample,
            ..TruncatedPoisson::SEED
        };
        let mut rng = rngs().stream("test/resample");
        let mut counts = [0u64; 9];
        for _ in 0..100_000 {
            counts[t.sample(&mut rng) as usize - 1] += 1;
        }
        assert_chi2("resampled Poisson", &counts, &t.pmf(), CHI2_999_DF8);
    }

    #[test]
    fn gaps_uniform_chi2_and_batches_every_think_time() {
        let p = WwwParams::default();
        let mut c = WwwClient::for_index(&p, &rngs(), 3);
        let reqs = requests(&mut c, 20_000);
        let first = reqs[0].at;
        let mut bins = [0u64; 8]; // 50 ms bins over [100, 500) ms
        for w in reqs.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.batch == a.batch {
                assert_eq!(b.index, a.index + 1);
                let gap = (b.at - a.at).as_nanos();
                assert!((100_000_000..500_000_000).contains(&gap), "{gap}");
                bins[((gap - 100_000_000) / 50_000_000) as usize] += 1;
            } else {
                assert_eq!(b.index, 0);
                assert_eq!(
                    b.at,
                    first + THINK_TIME.times(b.batch),
                    "batches start every 10 s"
                );
            }
        }
        assert_chi2("gaps", &bins, &[1.0 / 8.0; 8], CHI2_999_DF7);
    }

    #[test]
    fn staggered_first_batches_uniform_over_think_time() {
        let p = WwwParams::default();
        let f = rngs();
        let mut bins = [0u64; 10];
        for i in 0..2_000 {
            let t = WwwClient::for_index(&p, &f, i).next_request_at().unwrap();
            assert!(t < THINK_TIME);
            bins[(t.as_nanos() / 1_000_000_000) as usize] += 1;
        }
        assert_chi2("first batch offsets", &bins, &[0.1; 10], CHI2_999_DF9);
        let at_zero = WwwParams {
            first_batch: FirstBatch::AtZero,
            ..p
        };
        assert_eq!(
            WwwClient::for_index(&at_zero, &f, 5).next_request_at(),
            Some(SimTime::ZERO)
        );
    }

    #[test]
    fn mean_file_size_matches_analytic() {
        let p = WwwParams::default();
        let mut s = seed_server();
        let n = 1_000_000;
        let (mut sum, mut sum_sq) = (0.0, 0.0);
        for _ in 0..n {
            let b = s.file_size() as f64;
            sum += b;
            sum_sq += b * b;
        }
        let mean = sum / n as f64;
        let se = ((sum_sq / n as f64 - mean * mean) / n as f64).sqrt();
        let expected = p.mean_file_size();
        assert!(
            (mean - expected).abs() < 4.0 * se,
            "mean {mean} vs {expected} (se {se})"
        );
        assert_eq!(s.requests_served(), n);
        assert_eq!(s.scheduled_bytes() as f64, sum);
    }

    #[test]
    fn offered_load_of_100_pairs_matches_analytic() {
        // 100 client/server pairs over 1000 s (100 batches each): load per batch, pair by pair.
        let p = WwwParams {
            stop_at: Some(SimTime::from_secs(1_000)),
            ..WwwParams::default()
        };
        let f = rngs();
        let mut per_batch = Vec::new();
        for i in 0..100 {
            let mut c = WwwClient::for_index(&p, &f, i);
            let mut s = WwwServer::for_index(&p, &f, i);
            let mut bytes = 0u64;
            let mut last_batch = 0;
            while let Some(t) = c.next_request_at() {
                let r = c.pop_request(t).unwrap();
                if r.batch != last_batch {
                    per_batch.push(bytes as f64);
                    bytes = 0;
                    last_batch = r.batch;
                }
                bytes += s.on_request_bytes(r.bytes);
            }
            per_batch.push(bytes as f64);
            assert_eq!(c.requests_sent(), s.requests_served());
        }
        assert_eq!(per_batch.len(), 100 * 100);
        let n = per_batch.len() as f64;
        let mean = per_batch.iter().sum::<f64>() / n;
        let var = per_batch.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let to_bps = 100.0 * 8.0 / THINK_TIME.as_secs_f64(); // 100 servers, one batch per 10 s
        let (load, se) = (mean * to_bps, (var / n).sqrt() * to_bps);
        let expected = p.offered_load_bps(100);
        assert!(
            (load - expected).abs() < 4.0 * se,
            "{load} vs {expected} (se {se})"
        );
    }

    #[test]
    fn server_reassembles_split_and_coalesced_requests() {
        let p = WwwParams::default();
        let mut a = WwwServer::for_index(&p, &rngs(), 9);
        let mut b = a.clone();
        assert_eq!(a.on_request_bytes(100), 0);
        assert_eq!(a.requests_served(), 0);
        let two = a.on_request_bytes(156); // completes requests 1 and 2
        assert_eq!(a.requests_served(), 2);
        assert_eq!(two, b.file_size() + b.file_size());
        assert_eq!(a.on_request_bytes(127), 0);
        assert_eq!(a.on_request_bytes(1), b.file_size());
        assert_eq!(a.scheduled_bytes(), b.scheduled_bytes());
    }

    #[test]
    fn stop_at_ends_the_schedule() {
        let p = WwwParams {
            first_batch: FirstBatch::AtZero,
            stop_at: Some(SimTime::from_secs(100)),
            ..WwwParams::default()
        };
        let mut c = WwwClient::for_index(&p, &rngs(), 1);
        let reqs = requests(&mut c, u64::MAX);
        assert_eq!(
            reqs.last().unwrap().batch,
            9,
            "10 cycles in 100 s (seed 000 §4.2.1)"
        );
        assert_eq!(c.next_request_at(), None);
        assert_eq!(c.pop_request(SimTime::MAX), None);
    }

    #[test]
    fn pop_respects_now_and_catches_up() {
        let p = WwwParams {
            first_batch: FirstBatch::AtZero,
            ..WwwParams::default()
        };
        let mut c = WwwClient::for_index(&p, &rngs(), 2);
        let reference = requests(&mut c.clone(), 3);
        assert_eq!(
            (reference[0].at, reference[0].index, reference[0].bytes),
            (SimTime::ZERO, 0, 128)
        );
        // Not due yet: nothing, and nothing drawn.
        let mut early = c.clone();
        early.pop_request(SimTime::ZERO).unwrap();
        let next = early.next_request_at().unwrap();
        assert_eq!(early.pop_request(next.saturating_sub(SimTime(1))), None);
        assert_eq!(early.pop_request(next), Some(reference[1]));
        // Polling once at 25 s yields every request due by then (batches at 0, 10, 20 s last at
        // most 4 s), with their due times, in order.
        let mut late = Vec::new();
        while let Some(r) = c.pop_request(SimTime::from_secs(25)) {
            late.push(r);
        }
        assert_eq!(late, reference);
        assert_eq!(c.next_request_at(), Some(SimTime::from_secs(30)));
    }

    #[test]
    fn deterministic_and_streams_independent() {
        let p = WwwParams::default();
        let f = rngs();
        let alone: Vec<Request> = requests(&mut WwwClient::for_index(&p, &f, 17), 50);
        let sizes_alone: Vec<u64> = {
            let mut s = WwwServer::for_index(&p, &f, 17);
            (0..200).map(|_| s.file_size()).collect()
        };
        // Add pair 18 and interleave its draws with pair 17's.
        let mut c17 = WwwClient::for_index(&p, &f, 17);
        let mut c18 = WwwClient::for_index(&p, &f, 18);
        let mut s17 = WwwServer::for_index(&p, &f, 17);
        let mut s18 = WwwServer::for_index(&p, &f, 18);
        let mut with_18 = Vec::new();
        let mut sizes_with_18 = Vec::new();
        while with_18.len() < alone.len() {
            let t = c17.next_request_at().unwrap();
            while c18.next_request_at().unwrap() <= t {
                c18.pop_request(t).unwrap();
                s18.file_size();
            }
            with_18.push(c17.pop_request(t).unwrap());
        }
        for _ in 0..200 {
            s18.file_size();
            sizes_with_18.push(s17.file_size());
        }
        assert_eq!(alone, with_18);
        assert_eq!(sizes_alone, sizes_with_18);
        assert_ne!(
            requests(&mut WwwClient::for_index(&p, &f, 18), 1)[0].at,
            alone[0].at
        );
        let other_seed = requests(&mut WwwClient::for_index(&p, &RngFactory::new(1), 17), 1);
        assert_ne!(other_seed[0].at, alone[0].at);
    }

    #[test]
    fn invalid_params_name_their_field() {
        let bad = |f: fn(&mut WwwParams)| {
            let mut p = WwwParams::default();
            f(&mut p);
            p.validate().unwrap_err().path
        };
        assert_eq!(bad(|p| p.think_time = SimTime::ZERO), "think_time");
        assert_eq!(bad(|p| p.think_time = SimTime::from_secs(4)), "think_time");
        assert_eq!(bad(|p| p.gap_max = SimTime::from_millis(50)), "gap_max");
        assert_eq!(bad(|p| p.batch.min = 0), "batch.min");
        assert_eq!(bad(|p| p.batch.mean = f64::NAN), "batch.mean");
        assert_eq!(bad(|p| p.size_index.max = 10), "size_index");
        assert_eq!(
            bad(|p| p.classes.iter_mut().for_each(|c| c.weight = 0)),
            "classes"
        );
        assert_eq!(bad(|p| p.request_bytes = 0), "request_bytes");
        assert_eq!(
            bad(|p| {
                p.size_index.truncation = Truncation::Resample;
                p.size_index.mean = 100.0;
            }),
            "size_index.truncation"
        );
    }
}
