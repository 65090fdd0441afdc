//! The NumPy operations of issue 18 on the CPU backend against hand-written
//! rayon loops on the same thread count, measured in the same run (compare
//! the ratios), 10^7 f32 each:
//!
//! - `argmax`: `argmax(abs(a - b))` against one fused parallel pass keeping
//!   the first largest (value, index);
//! - `var`: `var(a)` against a two-pass parallel loop (mean, then squared
//!   deviations);
//! - `cumsum`: `cumsum(a * b)` against a two-pass parallel scan (chunk
//!   totals, then each chunk from its carry);
//! - `random`: `sum(random_uniform(10^8))`, in numbers per second, against
//!   a parallel sum of 10^8 stored f32 (the speed of reading them instead)
//!   and a hand-written parallel loop of the same generator (16 counters at
//!   a time, compiled for the baseline instruction set).
//!
//! Each lazyfuse measurement builds the expression and demands it.
//! Run: `cargo bench --bench numpy_ops`.

#![allow(clippy::expect_used)]

mod common;

use common::{context, pool};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lazyfuse::core::philox;
use lazyfuse::DType;
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 10_000_000;
const CHUNK: usize = 1 << 16;

fn data(n: usize, shift: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i + shift) * 7919) % 1000) as f32 * 1e-3)
        .collect()
}

/// `sum(f(x))` over a slice in 16 lanes, so that the compiler vectorises
/// it (a plain `iter().sum()` of floats must add in order, one at a time).
fn lane_sum(xs: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0f32; 16];
    let mut blocks = xs.chunks_exact(16);
    for block in &mut blocks {
        for (lane, &v) in lanes.iter_mut().zip(block) {
            *lane += f(v);
        }
    }
    let tail: f32 = blocks.remainder().iter().map(|&v| f(v)).sum();
    lanes.iter().sum::<f32>() + tail
}

/// The first index of the largest value (NaN wins), of one chunk.
fn first_largest(values: impl Iterator<Item = f32>, start: usize) -> (f32, usize) {
    let mut best = (f32::NEG_INFINITY, start);
    for (i, v) in values.enumerate() {
        if v > best.0 || (v.is_nan() && !best.0.is_nan()) {
            best = (v, start + i);
        }
    }
    best
}

fn argmax(c: &mut Criterion) {
    let (x, y) = (data(N, 0), data(N, 3));
    let cx = context();
    let (a, b) = (cx.from_slice(&x), cx.from_slice(&y));
    let pool = pool();
    let mut group = c.benchmark_group("argmax");
    group.sample_size(20);
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            let best = pool.install(|| {
                x.par_chunks(CHUNK)
                    .zip(y.par_chunks(CHUNK))
                    .enumerate()
                    .map(|(k, (xs, ys))| {
                        let diffs = xs.iter().zip(ys).map(|(p, q)| (p - q).abs());
                        first_largest(diffs, k * CHUNK)
                    })
                    .reduce(
                        || (f32::NEG_INFINITY, usize::MAX),
                        |l, r| {
                            if r.0 > l.0 || (r.0.is_nan() && !l.0.is_nan()) {
                                r
                            } else {
                                l
                            }
                        },
                    )
            });
            black_box(best.1)
        })
    });
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| {
            let index = (&a - &b).abs().argmax();
            black_box(index.item::<i64>().expect("runs"))
        })
    });
    group.finish();
}

fn var(c: &mut Criterion) {
    let x = data(N, 0);
    let cx = context();
    let a = cx.from_slice(&x);
    let pool = pool();
    let mut group = c.benchmark_group("var");
    group.sample_size(20);
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            let variance = pool.install(|| {
                let sum: f32 = x.par_chunks(CHUNK).map(|c| lane_sum(c, |v| v)).sum();
                let mean = sum / N as f32;
                let squares: f32 = x
                    .par_chunks(CHUNK)
                    .map(|c| lane_sum(c, |v| (v - mean) * (v - mean)))
                    .sum();
                squares / N as f32
            });
            black_box(variance)
        })
    });
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| black_box(a.var(0).item::<f32>().expect("runs")))
    });
    group.finish();
}

fn cumsum(c: &mut Criterion) {
    let (x, y) = (data(N, 0), data(N, 3));
    let cx = context();
    let (a, b) = (cx.from_slice(&x), cx.from_slice(&y));
    let pool = pool();
    let mut out = vec![0f32; N];
    let mut group = c.benchmark_group("cumsum");
    group.sample_size(20);
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            pool.install(|| {
                let totals: Vec<f32> = x
                    .par_chunks(CHUNK)
                    .zip(y.par_chunks(CHUNK))
                    .map(|(xs, ys)| xs.iter().zip(ys).map(|(p, q)| p * q).sum())
                    .collect();
                let carries: Vec<f32> = totals
                    .iter()
                    .scan(0.0, |acc, t| {
                        let carry = *acc;
                        *acc += t;
                        Some(carry)
                    })
                    .collect();
                out.par_chunks_mut(CHUNK)
                    .zip(x.par_chunks(CHUNK).zip(y.par_chunks(CHUNK)))
                    .zip(carries)
                    .for_each(|((o, (xs, ys)), carry)| {
                        let mut acc = carry;
                        for ((o, p), q) in o.iter_mut().zip(xs).zip(ys) {
                            acc += p * q;
                            *o = acc;
                        }
                    });
            });
            black_box(&out);
        })
    });
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| {
            (&a * &b).cumsum(0).read_into(&mut out).expect("runs");
            black_box(&out);
        })
    });
    group.finish();
}

fn random(c: &mut Criterion) {
    let n = 100_000_000;
    let cx = context();
    let stored = data(n, 0);
    let pool = pool();
    let mut group = c.benchmark_group("random");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("hand_sum_of_stored", |bench| {
        bench.iter(|| {
            let sum: f32 =
                pool.install(|| stored.par_chunks(CHUNK).map(|c| lane_sum(c, |v| v)).sum());
            black_box(sum)
        })
    });
    group.bench_function("hand_philox", |bench| {
        bench.iter(|| {
            let sum: f32 = pool.install(|| {
                (0..n.div_ceil(CHUNK) as u64)
                    .into_par_iter()
                    .map(|chunk| {
                        let start = chunk * CHUNK as u64;
                        let mut lanes = [0f32; 16];
                        for block in (start..(start + CHUNK as u64).min(n as u64)).step_by(16) {
                            let counters: [u64; 16] = std::array::from_fn(|i| block + i as u64);
                            let bits = philox::bits_lanes(&counters, 0);
                            for (lane, b) in lanes.iter_mut().zip(bits) {
                                *lane += (b >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
                            }
                        }
                        lanes.iter().sum::<f32>()
                    })
                    .sum()
            });
            black_box(sum)
        })
    });
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| {
            let sum = cx.random_uniform(&[n], DType::F32, 0).sum();
            black_box(sum.item::<f32>().expect("runs"))
        })
    });
    group.finish();
}

criterion_group!(benches, argmax, var, cumsum, random);
criterion_main!(benches);
