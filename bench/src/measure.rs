//! Timing: a warm-up run, then repeats until a time budget is spent; the
//! median is what the reports use. Also the STREAM-style copy bandwidth.

use std::hint::black_box;
use std::time::{Duration, Instant};

use lazyfuse::{Context, Stats};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::Serialize;

use crate::Result;

/// How long to measure one thing.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Stop repeating once the measured repeats add up to this.
    pub target: Duration,
    /// At least this many measured repeats.
    pub min_repeats: usize,
    /// At most this many measured repeats.
    pub max_repeats: usize,
}

impl Budget {
    /// The budget of a full run (`quick = false`) or of `--quick`.
    pub fn new(quick: bool) -> Budget {
        if quick {
            Budget {
                target: Duration::from_millis(40),
                min_repeats: 3,
                max_repeats: 15,
            }
        } else {
            Budget {
                target: Duration::from_millis(400),
                min_repeats: 5,
                max_repeats: 50,
            }
        }
    }

    /// The budget of the latency case: many short evaluations.
    pub fn latency(self) -> Budget {
        Budget {
            target: self.target,
            min_repeats: 50,
            max_repeats: 5000,
        }
    }
}

/// The times of one measurement, in seconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Timing {
    /// The median of the measured repeats.
    pub median_s: f64,
    /// The fastest measured repeat.
    pub min_s: f64,
    /// The warm-up run (compilation and first copies included).
    pub first_s: f64,
    /// Measured repeats.
    pub repeats: usize,
}

/// A timing with the context's statistics of the warm-up run and of the
/// last measured repeat.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// The times.
    pub timing: Timing,
    /// `cx.stats()` of the warm-up run (reset just before it).
    pub first: Stats,
    /// `cx.stats()` of the last measured repeat (reset just before it).
    pub steady: Stats,
}

/// Runs `f` once to warm up, then repeatedly within `budget`. With a
/// context, its statistics are reset before the warm-up and before the last
/// repeat, and read after each.
pub fn measure(
    budget: Budget,
    cx: Option<&Context>,
    mut f: impl FnMut() -> Result<()>,
) -> Result<Measured> {
    let reset = || {
        if let Some(cx) = cx {
            cx.reset_stats();
        }
    };
    let read = || cx.map(|cx| cx.stats()).unwrap_or_default();
    reset();
    let start = Instant::now();
    f()?;
    let first_s = start.elapsed().as_secs_f64();
    let first = read();

    let per_run = first_s.max(1e-7);
    let wanted = (budget.target.as_secs_f64() / per_run).ceil() as usize;
    let repeats = wanted.clamp(budget.min_repeats, budget.max_repeats.max(1));
    let mut samples = Vec::with_capacity(repeats);
    for i in 0..repeats {
        if i + 1 == repeats {
            reset();
        }
        let start = Instant::now();
        f()?;
        samples.push(start.elapsed().as_secs_f64());
    }
    let steady = read();
    Ok(Measured {
        timing: Timing {
            median_s: median(&mut samples),
            min_s: samples.iter().copied().fold(f64::INFINITY, f64::min),
            first_s,
            repeats,
        },
        first,
        steady,
    })
}

/// The median (the mean of the middle two for an even count); NaN if empty.
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// A STREAM-style copy of `n` f32 with rayon on `pool`: the median GB/s,
/// counting the bytes read and written once (2 × 4 × n), as STREAM does.
pub fn copy_bandwidth(pool: &ThreadPool, n: usize, budget: Budget) -> Result<(f64, Timing)> {
    let src = vec![1.0f32; n];
    let mut dst = vec![0.0f32; n];
    let measured = measure(budget, None, || {
        pool.install(|| {
            dst.par_chunks_mut(1 << 16)
                .zip(src.par_chunks(1 << 16))
                .for_each(|(d, s)| d.copy_from_slice(s))
        });
        black_box(&mut dst);
        Ok(())
    })?;
    let bytes = (2 * 4 * n) as f64;
    Ok((bytes / measured.timing.median_s / 1e9, measured.timing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn repeats_stay_in_budget() {
        let budget = Budget {
            target: Duration::from_millis(1),
            min_repeats: 3,
            max_repeats: 5,
        };
        let mut calls = 0;
        let m = measure(budget, None, || {
            calls += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(m.timing.repeats, 5);
        assert_eq!(calls, 6);
    }
}
