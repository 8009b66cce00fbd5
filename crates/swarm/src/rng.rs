//! Deterministic random numbers that never change between versions of simrob.
//!
//! Two generators: [`Rng`], a sequential xoshiro256++ stream seeded with SplitMix64, and
//! [`hash_u01`], a counter-based generator — a pure function of `(seed, stream, entity,
//! counter)` — used by per-robot systems so that a robot's random draws do not depend on
//! the order (or the thread) in which robots are processed. Both are written here rather
//! than taken from a crate so that a recorded seed replays identically forever.

/// One step of SplitMix64: a bijective 64-bit mixer.
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in `[0, 1)` that depends only on its four arguments.
#[inline]
pub fn hash_u01(seed: u64, stream: u64, entity: u64, counter: u64) -> f64 {
    let h = splitmix64(
        splitmix64(splitmix64(seed ^ stream.wrapping_mul(0xA24B_AED4_963E_E407)) ^ entity)
            ^ counter.wrapping_mul(0x9FB2_1C65_1E98_DF25),
    );
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A sequential pseudo-random generator (xoshiro256++).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded from `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut s = [0u64; 4];
        for v in &mut s {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            *v = splitmix64(x);
        }
        Rng { s }
    }

    /// The next 64 random bits.
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

    /// A uniform number in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xoshiro256++ (seeded from SplitMix64 started one step on), the SplitMix64 step and
    /// the counter-based `hash_u01` pinned: seeds recorded today replay forever.
    #[test]
    fn generators_are_pinned() {
        let first = |mut r: Rng| [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            first(Rng::new(0)),
            [0x58f24f57e97e3f07, 0x5f9a9d6f9a653406, 0x6534ee33d1fd29d7]
        );
        assert_eq!(
            first(Rng::new(1)),
            [0xfc06d5f275a73fd8, 0x95fabd803316fcb6, 0xed4c75f0ff4f444a]
        );
        assert_eq!(
            first(Rng::new(42)),
            [0xefdb3abe2d004720, 0x74285db8cad01896, 0xe6026692c15933c2]
        );
        assert_eq!(
            first(Rng::new(u64::MAX)),
            [0xb4b9b3de17c5a2e8, 0xb0ab3f68e465772a, 0x88bf1614a925e713]
        );
        let mut r = Rng::new(42);
        assert_eq!(r.next_f64().to_bits(), 0x3fedfb6757c5a008);
        assert_eq!(r.below(1), 0);
        assert_eq!(r.below(7), 6);
        assert_eq!(r.below(1000), 229);
        assert_eq!(r.below(u64::MAX), 12378599043576580818);
        assert_eq!(splitmix64(0), 0xe220a8397b1dcdaf);
        assert_eq!(splitmix64(1), 0x910a2dec89025cc1);
        assert_eq!(splitmix64(42), 0xbdd732262feb6e95);
        assert_eq!(splitmix64(u64::MAX), 0xe4d971771b652c20);
        assert_eq!(hash_u01(0, 0, 0, 0).to_bits(), 0x3fc1c13ade1c7e5c);
        assert_eq!(hash_u01(1, 2, 3, 4).to_bits(), 0x3fe19855cd36acfb);
        assert_eq!(
            hash_u01(u64::MAX, u64::MAX, u64::MAX, u64::MAX).to_bits(),
            0x3fd8bd78cd22a90e
        );
    }

    #[test]
    fn streams_are_stable_and_uniform() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mean: f64 = (0..10_000).map(|i| hash_u01(1, 2, 3, i)).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02);
        assert!((0..1000).all(|i| (0.0..1.0).contains(&hash_u01(9, 9, i, 0))));
        assert_ne!(hash_u01(1, 0, 0, 0), hash_u01(2, 0, 0, 0));
    }
}
