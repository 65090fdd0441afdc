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
    let mut measured = measure_interleaved(budget, &mut [(cx, &mut f)])?;
    measured.pop().ok_or_else(|| "no measurement".into())
}

/// A function to time, with the context whose statistics it reports.
pub type Timed<'a, 'f> = (Option<&'a Context>, &'f mut dyn FnMut() -> Result<()>);

/// How long each function runs in a row before the next takes its turn.
pub const BURST: Duration = Duration::from_millis(5);

/// [`measure`] for several functions together: each warms up, then they
/// take turns within `budget` for each — a burst of repeats of about
/// [`BURST`] each (f0 f0 f0, f1 f1 f1, f0 f0 f0, …) — so that all of them
/// see the same stretch of a machine whose memory bandwidth drifts, while
/// data that fits the caches stays there within a burst. One [`Measured`]
/// per function, in order.
pub fn measure_interleaved(budget: Budget, runs: &mut [Timed<'_, '_>]) -> Result<Vec<Measured>> {
    let reset = |cx: Option<&Context>| {
        if let Some(cx) = cx {
            cx.reset_stats();
        }
    };
    let read = |cx: Option<&Context>| cx.map(|cx| cx.stats()).unwrap_or_default();
    let mut firsts = Vec::with_capacity(runs.len());
    for (cx, f) in runs.iter_mut() {
        reset(*cx);
        let start = Instant::now();
        f()?;
        firsts.push((start.elapsed().as_secs_f64(), read(*cx)));
    }
    let per_run = firsts.iter().map(|(t, _)| *t).fold(1e-7, f64::max);
    let wanted = (budget.target.as_secs_f64() / per_run).ceil() as usize;
    let repeats = wanted
        .max(budget.min_repeats)
        .min(budget.max_repeats)
        .max(1);
    let fastest = firsts.iter().map(|(t, _)| *t).fold(f64::INFINITY, f64::min);
    let burst = ((BURST.as_secs_f64() / fastest.max(1e-7)).ceil() as usize).clamp(1, repeats);
    let mut samples = vec![Vec::with_capacity(repeats); runs.len()];
    let mut done = 0;
    while done < repeats {
        let count = burst.min(repeats - done);
        for ((cx, f), samples) in runs.iter_mut().zip(&mut samples) {
            for i in done..done + count {
                if i + 1 == repeats {
                    reset(*cx);
                }
                let start = Instant::now();
                f()?;
                samples.push(start.elapsed().as_secs_f64());
            }
        }
        done += count;
    }
    Ok(runs
        .iter()
        .zip(firsts)
        .zip(&mut samples)
        .map(|(((cx, _), (first_s, first)), samples)| Measured {
            timing: Timing {
                median_s: median(samples),
                min_s: samples.iter().copied().fold(f64::INFINITY, f64::min),
                first_s,
                repeats,
            },
            first,
            steady: read(*cx),
        })
        .collect())
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
