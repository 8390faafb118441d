//! The discrete-event engine: event queue, scheduler and random streams.

pub mod queue;
pub mod rng;

/// Asks the CPU to bring the cache line at `p` closer (a hint: no effect on results). The
/// event loop prefetches what the next event will read while it runs the current one, so
/// that with many flows its cache misses overlap (issue 15, bench/README.md). Only on x86-64
/// (a no-op elsewhere: other targets' prefetch intrinsics are not stable).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults and never changes memory, whatever the
    // address (an index past the end of a vector is harmless).
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
