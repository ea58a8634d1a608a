//! Seeded random-number substreams.
//!
//! **Models:** one master seed per run; every consumer (request order,
//! per-link loss, per-flow jitter, ...) draws from its own named substream,
//! so adding a new consumer never shifts the numbers another one sees.
//! The generator is xoshiro256** seeded through SplitMix64 (Blackman and
//! Vigna), small, fast and identical on every platform. Exponential draws
//! (the gaps of a Poisson process) take the logarithm in integer
//! arithmetic, not from the platform's maths library, for the same reason.
//! **Not modelled:** cryptographic quality (not needed).

/// SplitMix64 step: used to expand seeds.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a hash of a substream name.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3))
}

/// ln 2 with 64 fractional bits.
const LN2_Q64: u128 = 0xB172_17F7_D1CF_79AB;

/// `−log2(k / 2^64)` with 32 fractional bits, for `k ≥ 1`: the integer part
/// from the leading zeros, the fraction bit by bit by repeated squaring of
/// the mantissa in [1, 2).
fn neg_log2_q32(k: u64) -> u64 {
    let lz = k.leading_zeros();
    // k = 2^(63 − lz) · m with m in [1, 2), held with 63 fractional bits.
    let mut m = u128::from(k << lz);
    let mut frac = 0u64;
    for bit in (0..32).rev() {
        m = (m * m) >> 63;
        if m >> 64 != 0 {
            m >>= 1;
            frac |= 1 << bit;
        }
    }
    // −log2(k / 2^64) = 64 − (63 − lz) − log2(m).
    ((1 + u64::from(lz)) << 32) - frac
}

/// A deterministic pseudo-random generator (xoshiro256**).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The substream `name` of master seed `seed`.
    pub fn substream(seed: u64, name: &str) -> Self {
        let mut sm = seed ^ fnv1a(name);
        Rng { s: [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)] }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` (Lemire's multiply-and-reject, unbiased).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "empty range");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform float in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Exponentially distributed integer with mean `mean` (a Poisson
    /// process's gaps, an M/M/1 queue's waits): `⌊mean · −ln U⌋` for `U`
    /// uniform in (0, 1], computed in integer arithmetic (32 fractional bits)
    /// so that every platform draws the same numbers.
    pub fn exponential(&mut self, mean: u64) -> u64 {
        // U = k / 2^64 with k in [1, 2^64); −ln U = −log2(U) · ln 2.
        let k = self.next_u64().max(1);
        let neg_ln = (u128::from(neg_log2_q32(k)) * LN2_Q64) >> 64;
        ((u128::from(mean) * neg_ln) >> 32).min(u128::from(u64::MAX)) as u64
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }

    /// A uniformly random cyclic permutation of `0..n` (Sattolo's
    /// algorithm): element `i` goes to `p[i]`, and none goes to itself.
    pub fn cycle(&mut self, n: u32) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n).collect();
        for i in (1..n as usize).rev() {
            let j = self.below(i as u64) as usize;
            p.swap(i, j);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_repeat_exactly() {
        let a: Vec<u64> = {
            let mut r = Rng::substream(7, "order");
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::substream(7, "order");
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
    }

    #[test]
    fn substreams_differ_by_name_and_seed() {
        let first = |seed, name| Rng::substream(seed, name).next_u64();
        assert_ne!(first(7, "order"), first(7, "loss"));
        assert_ne!(first(7, "order"), first(8, "order"));
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::substream(1, "t");
        let mut seen = [false; 6];
        for _ in 0..1000 {
            seen[r.below(6) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn a_cycle_is_a_permutation_without_fixed_points() {
        let mut r = Rng::substream(3, "c");
        let p = r.cycle(50);
        assert!(p.iter().enumerate().all(|(i, &j)| i as u32 != j));
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<u32>>());
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut r = Rng::substream(3, "s");
        let mut v: Vec<u32> = (0..50).collect();
        r.shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }

    #[test]
    fn integer_log2_is_exact_at_powers_of_two_and_close_between() {
        assert_eq!(neg_log2_q32(1 << 63), 1 << 32);
        assert_eq!(neg_log2_q32(1), 64 << 32);
        // 3 / 4: −log2(0.75) = 0.415037499...
        let x = neg_log2_q32(3 << 62) as f64 / (1u64 << 32) as f64;
        assert!((x - 0.415_037_499_278_843_8).abs() < 1e-9, "{x}");
    }

    #[test]
    fn exponential_has_its_mean_and_its_tail() {
        let mut r = Rng::substream(5, "e");
        let n = 200_000;
        let xs: Vec<u64> = (0..n).map(|_| r.exponential(1_000_000)).collect();
        let mean = xs.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 1e6).abs() < 1e4, "{mean}");
        // P(X > 3·mean) = e^−3 ≈ 0.0498.
        let tail = xs.iter().filter(|&&x| x > 3_000_000).count() as f64 / n as f64;
        assert!((tail - 0.0498).abs() < 0.003, "{tail}");
        assert_eq!(r.exponential(0), 0);
    }

    #[test]
    fn unit_is_in_zero_one() {
        let mut r = Rng::substream(9, "u");
        assert!((0..1000).map(|_| r.unit()).all(|x| (0.0..1.0).contains(&x)));
    }
}
