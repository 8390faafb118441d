//! What the floor measurements of the bench examples share: the CPU time of the calling
//! thread and a cheap random stream (`#[path]`-included: a file in a subfolder of examples/ is
//! not an example of its own).

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
/// Linux's CLOCK_THREAD_CPUTIME_ID (<time.h>).
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// CPU time of this thread, in seconds: on a loaded machine a steadier figure than wall time
/// (declared by hand rather than adding the `libc` crate for one call; Linux x86-64 layout).
pub fn cpu_now() -> f64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a valid pointer to a timespec-shaped struct; the call only writes it.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

/// xorshift64*: a fixed, cheap stream (a floor must not be dominated by its generator; the
/// engine's own generator is made for reproducible simulation draws, not for speed).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let x = &mut self.0;
        *x ^= *x >> 12;
        *x ^= *x << 25;
        *x ^= *x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A draw in [0, n) by multiply-shift (no division in a timed loop).
    #[allow(dead_code)] // used by memfloor, not by bench
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
}
