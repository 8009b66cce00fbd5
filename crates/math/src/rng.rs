//! Seeded pseudo-random numbers whose streams are part of recorded runs.
//!
//! Written here rather than taken from a crate so that a recorded seed replays identically
//! forever, on every platform: changing any output of this module changes recorded runs. The
//! tests pin each generator's first outputs.
//!
//! | generator | what it is | used for |
//! |---|---|---|
//! | [`SplitMix64`] | Steele, Lea and Flood's SplitMix64 (γ = `0x9E3779B97F4A7C15`, Stafford's "Mix13" output) | FutRob's simulated radio; seeding the others |
//! | [`splitmix64`], [`mix64`] | one SplitMix64 step as a function of its state; its output function | stream and agent seeds (trials, session), a benchmark's hashing |
//! | [`Xoshiro256StarStar`] | Blackman and Vigna's xoshiro256** seeded by four SplitMix64 outputs from the seed | humanoid soccer: motion noise, cameras, trials' hand placement |
//! | [`Xoshiro256PlusPlus`] | xoshiro256++ seeded by four SplitMix64 outputs from the seed plus γ (as the swarm always seeded it) | the swarm, the coordination comparisons |
//! | [`hash_u01`] | a counter-based generator: SplitMix64 steps over `(seed, stream, entity, counter)` | per-robot draws that do not depend on processing order |
//!
//! Every generator has the same methods: `next_u64`, `next_f64` (uniform in `[0, 1)`, the top
//! 53 bits), `below(n)` (uniform in `0..n`, by multiply-shift), `chance(p)` and
//! `normal(mean, sd)` (Box–Muller), the last two drawing nothing when the answer needs no
//! randomness.

/// SplitMix64's increment γ (the golden ratio in 64 bits).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function (Stafford's "Mix13"): a bijective 64-bit mixer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One step of SplitMix64 from state `z`: its output `mix64(z + γ)`. The same value as
/// `SplitMix64::new(z).next_u64()`.
#[inline]
pub fn splitmix64(z: u64) -> u64 {
    mix64(z.wrapping_add(GAMMA))
}

/// The top 53 bits of `x` as a uniform number in `[0, 1)`.
#[inline]
fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform number in `[0, 1)` that depends only on its four arguments (a counter-based
/// generator built from [`splitmix64`]).
#[inline]
pub fn hash_u01(seed: u64, stream: u64, entity: u64, counter: u64) -> f64 {
    let h = splitmix64(
        splitmix64(splitmix64(seed ^ stream.wrapping_mul(0xA24B_AED4_963E_E407)) ^ entity)
            ^ counter.wrapping_mul(0x9FB2_1C65_1E98_DF25),
    );
    unit_f64(h)
}

/// The methods every generator derives from its `next_u64`.
macro_rules! derived_methods {
    () => {
        /// A uniform number in `[0, 1)` (the top 53 bits of [`Self::next_u64`]).
        pub fn next_f64(&mut self) -> f64 {
            unit_f64(self.next_u64())
        }

        /// A uniform integer in `0..n` (`n > 0`), by multiply-shift of one draw.
        pub fn below(&mut self, n: u64) -> u64 {
            ((self.next_u64() as u128 * n as u128) >> 64) as u64
        }

        /// True with probability `p` (no draw is consumed when `p` ≤ 0, so a noise-free
        /// profile leaves the stream untouched).
        pub fn chance(&mut self, p: f64) -> bool {
            p > 0.0 && self.next_f64() < p
        }

        /// A normal deviate with mean `mean` and standard deviation `sd` (Box–Muller, two
        /// draws). With `sd` ≤ 0 it returns `mean` and consumes no draw.
        pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
            if sd <= 0.0 {
                return mean;
            }
            let u1 = 1.0 - self.next_f64(); // (0, 1]
            let u2 = self.next_f64();
            mean + sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        }
    };
}

/// SplitMix64: a 64-bit state advanced by γ, each output [`mix64`] of the new state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator with state `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix64(self.0)
    }

    derived_methods!();
}

/// The xoshiro256 state transition shared by `**` and `++`.
#[inline]
fn xoshiro256_advance(s: &mut [u64; 4]) {
    let t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3].rotate_left(45);
}

/// Four outputs of a SplitMix64 started at `state`.
fn splitmix_state(state: u64) -> [u64; 4] {
    let mut sm = SplitMix64::new(state);
    [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()]
}

/// xoshiro256**, its state the first four outputs of a [`SplitMix64`] started at the seed.
/// Cloning it forks an identical stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xoshiro256StarStar {
    s: [u64; 4],
}

impl Xoshiro256StarStar {
    /// A generator seeded from `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Xoshiro256StarStar {
            s: splitmix_state(seed),
        }
    }

    /// A generator for one stream of a run: the same `(seed, stream)` always gives the same
    /// numbers, and different streams are independent (a robot's motion noise, its camera…).
    pub fn for_stream(seed: u64, stream: u64) -> Self {
        Xoshiro256StarStar::new(splitmix64(
            seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03),
        ))
    }

    /// The internal state (for save files).
    pub fn state(&self) -> [u64; 4] {
        self.s
    }

    /// A generator continuing from a saved [`Xoshiro256StarStar::state`]. An all-zero state
    /// (which xoshiro cannot leave) is replaced by the generator of seed 0.
    pub fn from_state(s: [u64; 4]) -> Self {
        if s == [0; 4] {
            Xoshiro256StarStar::new(0)
        } else {
            Xoshiro256StarStar { s }
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        xoshiro256_advance(&mut self.s);
        result
    }

    derived_methods!();
}

/// xoshiro256++, its state four outputs of a [`SplitMix64`] started at the seed plus γ (the
/// swarm's seeding since its first recorded run: one SplitMix64 step further than
/// [`Xoshiro256StarStar::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xoshiro256PlusPlus {
    s: [u64; 4],
}

impl Xoshiro256PlusPlus {
    /// A generator seeded from `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Xoshiro256PlusPlus {
            s: splitmix_state(seed.wrapping_add(GAMMA)),
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        xoshiro256_advance(&mut self.s);
        result
    }

    derived_methods!();
}

#[cfg(test)]
mod tests {
    /// The tests of soccer's generator, moved here unchanged (it was `SimRng`).
    mod starstar {
        use super::super::Xoshiro256StarStar as SimRng;

        /// xoshiro256** (SplitMix64-seeded) pinned: seeds recorded today replay forever.
        #[test]
        fn xoshiro256starstar_is_pinned() {
            let first = |mut r: SimRng| [r.next_u64(), r.next_u64(), r.next_u64()];
            assert_eq!(
                first(SimRng::new(0)),
                [0x99ec5f36cb75f2b4, 0xbf6e1f784956452a, 0x1a5f849d4933e6e0]
            );
            assert_eq!(
                first(SimRng::new(1)),
                [0xb3f2af6d0fc710c5, 0x853b559647364cea, 0x92f89756082a4514]
            );
            assert_eq!(
                first(SimRng::new(42)),
                [0x15780b2e0c2ec716, 0x6104d9866d113a7e, 0xae17533239e499a1]
            );
            assert_eq!(
                first(SimRng::new(u64::MAX)),
                [0x8f5520d52a7ead08, 0xc476a018caa1802d, 0x81de31c0d260469e]
            );
            assert_eq!(
                first(SimRng::for_stream(7, 1)),
                [0x43d280f371a01e90, 0x4cd0aa5363aab404, 0x839e50ab650537ee]
            );
            assert_eq!(
                first(SimRng::for_stream(7, 2)),
                [0xc562337499fc0028, 0x06791ffc3d3b7894, 0xa016d231e08ca43d]
            );
            assert_eq!(
                first(SimRng::for_stream(0, 99)),
                [0xeeaab6fd7ee9e3c7, 0x5f66c5f77ddc0b7c, 0xfffc6235b824f24b]
            );
            assert_eq!(first(SimRng::from_state([0; 4])), first(SimRng::new(0)));
            let mut r = SimRng::new(42);
            assert_eq!(r.next_f64().to_bits(), 0x3fb5780b2e0c2ec0);
            assert_eq!(r.normal(1.0, 2.0).to_bits(), 0x3fc5aaa029526080);
            assert_eq!(r.normal(5.0, 0.0), 5.0);
            assert!(!r.chance(0.0));
            assert_eq!(r.next_u64(), 0xecb8ad4703b360a1);
        }

        #[test]
        fn same_seed_same_stream_and_streams_differ() {
            let mut a = SimRng::for_stream(7, 1);
            let mut b = SimRng::for_stream(7, 1);
            let mut c = SimRng::for_stream(7, 2);
            let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
            let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
            let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
            assert_eq!(xa, xb);
            assert_ne!(xa, xc);
        }

        #[test]
        fn normal_has_its_mean_and_spread() {
            let mut r = SimRng::new(42);
            let n = 200_000;
            let xs: Vec<f64> = (0..n).map(|_| r.normal(3.0, 2.0)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            // Standard error of the mean: 2/sqrt(n) = 0.0045; of the sd: about 0.0032.
            assert!((mean - 3.0).abs() < 0.02, "{mean}");
            assert!((var.sqrt() - 2.0).abs() < 0.02, "{}", var.sqrt());
        }

        #[test]
        fn uniform_is_in_range_and_state_round_trips() {
            let mut r = SimRng::new(1);
            for _ in 0..1000 {
                let u = r.next_f64();
                assert!((0.0..1.0).contains(&u));
            }
            let saved = r.state();
            let next = r.next_u64();
            assert_eq!(SimRng::from_state(saved).next_u64(), next);
        }
    }

    /// The tests of the swarm's generators, moved here unchanged (it was `Rng`).
    mod plusplus {
        use super::super::{hash_u01, splitmix64, Xoshiro256PlusPlus as Rng};

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

    /// The tests of FutRob's radio generator, moved here unchanged.
    mod splitmix {
        use super::super::SplitMix64;
        /// SplitMix64 pinned: the radio's losses and jitter replay forever.
        #[test]
        fn splitmix64_is_pinned() {
            let first = |mut r: SplitMix64| [r.next_u64(), r.next_u64(), r.next_u64()];
            assert_eq!(
                first(SplitMix64::new(0)),
                [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f]
            );
            assert_eq!(
                first(SplitMix64::new(1)),
                [0x910a2dec89025cc1, 0xbeeb8da1658eec67, 0xf893a2eefb32555e]
            );
            assert_eq!(
                first(SplitMix64::new(42)),
                [0xbdd732262feb6e95, 0x28efe333b266f103, 0x47526757130f9f52]
            );
            assert_eq!(
                first(SplitMix64::new(u64::MAX)),
                [0xe4d971771b652c20, 0xe99ff867dbf682c9, 0x382ff84cb27281e9]
            );
            let mut r = SplitMix64::new(5);
            assert_eq!(r.next_u64(), 0x63033b0ca389c35a);
            assert_eq!(r.next_f64().to_bits(), 0x3fe812e629b272e6);
        }
    }

    /// `simrob-trials`' stream seeds (`mix`: SplitMix64 from `seed + k·0xBF58476D1CE4E5B9`),
    /// pinned there; the same values through [`super::splitmix64`].
    #[test]
    fn stream_seed_scheme_is_pinned() {
        let mix = |seed: u64, k: u64| {
            super::splitmix64(seed.wrapping_add(k.wrapping_mul(0xBF58_476D_1CE4_E5B9)))
        };
        assert_eq!(mix(0, 0), 0xe220a8397b1dcdaf);
        assert_eq!(mix(1, 2), 0x68d4364de9aee53c);
        assert_eq!(mix(42, 1000), 0x21bfb843330a908a);
        assert_eq!(mix(u64::MAX, 7), 0x91436a5526acc133);
    }

    #[test]
    fn every_generator_has_the_derived_methods() {
        let mut a = super::SplitMix64::new(3);
        let mut b = super::Xoshiro256PlusPlus::new(3);
        let mut c = super::Xoshiro256StarStar::new(3);
        assert!(a.below(10) < 10 && b.below(10) < 10 && c.below(10) < 10);
        assert!(!a.chance(0.0) && !b.chance(-1.0) && !c.chance(0.0));
        assert_eq!(
            (a.normal(2.0, 0.0), b.normal(2.0, 0.0), c.normal(2.0, 0.0)),
            (2.0, 2.0, 2.0)
        );
        assert_eq!(super::mix64(super::GAMMA), super::splitmix64(0));
    }
}
