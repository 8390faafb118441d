//! The CPU time of the calling thread, shared by the bench examples (`#[path]`-included: a
//! file in a subfolder of examples/ is not an example of its own).

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
