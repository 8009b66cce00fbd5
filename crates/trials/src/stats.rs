//! Success rates and their 95 % intervals.

use serde::Serialize;

use crate::cases::{Case, TrialResult};

/// A success rate with its 95 % Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    /// Trials that succeeded.
    pub successes: u32,
    /// Trials run.
    pub trials: u32,
    /// `successes / trials`, from 0 to 1 (0 when there were no trials).
    pub rate: f64,
    /// Lower end of the 95 % interval, from 0 to 1.
    pub low: f64,
    /// Upper end of the 95 % interval, from 0 to 1.
    pub high: f64,
}

impl Rate {
    /// `successes` out of `trials` (an empty rate is 0 with the interval [0, 1]).
    pub fn new(successes: u32, trials: u32) -> Rate {
        if trials == 0 {
            return Rate {
                successes,
                trials,
                rate: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let z = 1.959_963_984_540_054_f64;
        let n = f64::from(trials);
        let p = f64::from(successes) / n;
        let d = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / d;
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
        Rate {
            successes,
            trials,
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }
}

/// A case's totals: the simulated rate beside the report's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// The case study.
    pub case: Case,
    /// The success rate of the simulated trials.
    pub simulated: Rate,
    /// FutRob's real robots, when the report gives a rate.
    pub paper: Option<Rate>,
    /// Outcomes and how many trials ended so.
    pub outcomes: Vec<(String, u32)>,
}

/// The totals of `results` (all of one case).
pub fn totals(case: Case, results: &[TrialResult]) -> Totals {
    let ok = results.iter().filter(|r| r.success).count() as u32;
    let mut outcomes: Vec<(String, u32)> = Vec::new();
    for r in results {
        match outcomes.iter_mut().find(|(o, _)| *o == r.outcome) {
            Some((_, n)) => *n += 1,
            None => outcomes.push((r.outcome.clone(), 1)),
        }
    }
    Totals {
        case,
        simulated: Rate::new(ok, results.len() as u32),
        paper: case.paper().map(|(s, n)| Rate::new(s, n)),
        outcomes,
    }
}

/// A case's rate over several seeds: the pooled rate with its interval, and how the rate of
/// each seed's trials spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverSeeds {
    /// Every trial of every seed, pooled.
    pub pooled: Rate,
    /// How many seeds.
    pub seeds: u32,
    /// The lowest rate of one seed's trials, from 0 to 1.
    pub min: f64,
    /// The median rate of one seed's trials (the mean of the two middle ones for an even
    /// count), from 0 to 1.
    pub median: f64,
    /// The highest rate of one seed's trials, from 0 to 1.
    pub max: f64,
}

/// The pooled rate and the spread over seeds of `per_seed`: each seed's trials of one case.
pub fn over_seeds(per_seed: &[Vec<TrialResult>]) -> OverSeeds {
    let mut rates: Vec<f64> = per_seed
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| v.iter().filter(|r| r.success).count() as f64 / v.len() as f64)
        .collect();
    rates.sort_by(f64::total_cmp);
    let ok = per_seed.iter().flatten().filter(|r| r.success).count() as u32;
    let n = per_seed.iter().map(Vec::len).sum::<usize>() as u32;
    let median = match rates.len() {
        0 => 0.0,
        k if k % 2 == 1 => rates[k / 2],
        k => (rates[k / 2 - 1] + rates[k / 2]) / 2.0,
    };
    OverSeeds {
        pooled: Rate::new(ok, n),
        seeds: rates.len() as u32,
        min: rates.first().copied().unwrap_or(0.0),
        median,
        max: rates.last().copied().unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_the_textbook_values() {
        // 15 of 30: 0.5 with [0.332, 0.668].
        let r = Rate::new(15, 30);
        assert!(
            (r.low - 0.3315).abs() < 1e-3 && (r.high - 0.6685).abs() < 1e-3,
            "{r:?}"
        );
        let all = Rate::new(8, 8);
        assert_eq!(all.high, 1.0);
        assert!((all.low - 0.6756).abs() < 1e-3, "{all:?}");
    }
}
