//! Named, seeded random streams.
//!
//! Every source of randomness asks for its own stream by name (`"flow/17/think"`,
//! `"link/bottleneck/fwd/errors"`). A stream's state is derived from a stable hash of
//! (master seed, name), so adding a flow leaves every other flow's draws unchanged
//! (DESIGN.md, "Decisions"). The generator is xoshiro256++ (Blackman and Vigna, 2019),
//! seeded through SplitMix64; both are written here so that results never depend on a
//! dependency's version.

/// 64-bit FNV-1a: a stable hash of a stream name (the same on every platform and release).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    // FNV offset basis and prime for 64 bits (Fowler, Noll, Vo).
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// SplitMix64 step (Steele, Lea, Flood 2014), used to expand a seed into generator state.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The factory of named streams for one run.
#[derive(Clone, Debug)]
pub struct RngFactory {
    master: u64,
}

impl RngFactory {
    pub fn new(master_seed: u64) -> Self {
        RngFactory { master: master_seed }
    }

    pub fn master_seed(&self) -> u64 {
        self.master
    }

    /// The stream called `name`: the same (seed, name) always gives the same draws.
    pub fn stream(&self, name: &str) -> Rng {
        let mut sm = self.master ^ fnv1a64(name.as_bytes()).rotate_left(17);
        // Mix once more so that seeds differing in one bit give unrelated streams.
        let _ = splitmix64(&mut sm);
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s }
    }
}

/// A xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1), 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in [0, n), without modulo bias (Lemire's method). `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut l = m as u64;
        if l < n {
            let t = n.wrapping_neg() % n;
            while l < t {
                m = (self.next_u64() as u128) * (n as u128);
                l = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the logarithm is finite.
        -mean * libm::log(1.0 - self.uniform())
    }

    /// Poisson with mean `lambda` by Knuth's multiplication method (fine for small means such
    /// as the seeds' 5). Uses libm so that results match on every platform.
    pub fn poisson(&mut self, lambda: f64) -> u64 {
        let l = libm::exp(-lambda);
        let mut k = 0u64;
        let mut p = 1.0;
        loop {
            p *= self.uniform();
            if p <= l {
                return k;
            }
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_same_draws_other_names_independent() {
        let f = RngFactory::new(42);
        let a: Vec<u64> = (0..5).map({
            let mut r = f.stream("flow/1");
            move |_| r.next_u64()
        }).collect();
        let b: Vec<u64> = (0..5).map({
            let mut r = f.stream("flow/1");
            move |_| r.next_u64()
        }).collect();
        assert_eq!(a, b);
        let mut c = f.stream("flow/2");
        assert_ne!(a[0], c.next_u64());
        let mut d = RngFactory::new(43).stream("flow/1");
        assert_ne!(a[0], d.next_u64());
    }

    #[test]
    fn uniform_and_below_in_range() {
        let mut r = RngFactory::new(1).stream("t");
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            sum += u;
            assert!(r.below(9) < 9);
        }
        assert!((sum / 100_000.0 - 0.5).abs() < 0.01);
    }

    #[test]
    fn poisson_mean() {
        let mut r = RngFactory::new(7).stream("p");
        let n = 200_000;
        let mean = (0..n).map(|_| r.poisson(5.0) as f64).sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.03, "{mean}");
    }
}
