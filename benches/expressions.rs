//! The expression suite of the CPU backend against a hand-written fused
//! Rust loop over slices with rayon on the same thread count, measured in
//! the same run (absolute times on shared machines are noise; compare the
//! ratios).
//!
//! - `hand`: one pass, writing into a preallocated output (or reducing);
//! - `lazyfuse/read_into`: build the expression, demand it into a
//!   preallocated output (the last kernel writes there directly);
//! - `lazyfuse/to_vec`: build and demand a new `Vec`;
//! - `unfused`: the same with `fusion(false)` (one kernel per operation).
//!
//! E3's `hand` loop calls std's scalar math; the harness (`lazyfuse-bench`)
//! also compares E3 with a hand loop on glibc's vectorised math (libmvec).
//!
//! Run: `cargo bench --bench expressions` (`-- E1` for one case).

#![allow(clippy::expect_used)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lazyfuse::{Array, Context};
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 10_000_000;
const THREADS: usize = 2;

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1.0 + (s >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

struct Inputs {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

fn contexts() -> [(&'static str, Context); 2] {
    [
        (
            "lazyfuse",
            Context::builder()
                .backend("cpu")
                .threads(THREADS)
                .build()
                .expect("cpu"),
        ),
        (
            "unfused",
            Context::builder()
                .backend("cpu")
                .fusion(false)
                .threads(THREADS)
                .build()
                .expect("cpu"),
        ),
    ]
}

fn elementwise(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("pool");
    let x = Inputs {
        a: data(N, 1),
        b: data(N, 2),
        c: data(N, 3),
    };
    let mut out = vec![0f32; N];
    type Build = fn(&Array, &Array, &Array) -> Array;
    type Hand = fn(f32, f32, f32) -> f32;
    let cases: [(&str, Build, Hand); 3] = [
        ("E1 a*b+c", |a, b, c| a * b + c, |a, b, c| a * b + c),
        (
            "E2 sqrt(b*b-4ac)",
            |a, b, c| (b * b - 4.0 * a * c).sqrt(),
            |a, b, c| (b * b - 4.0 * a * c).sqrt(),
        ),
        (
            "E3 12 ops with sin, cos, exp, tanh",
            |a, b, c| {
                ((a + 1.5) * b - c) / (a + 2.0) * 0.5 + a.sin() * b.cos() - (-c).exp()
                    + (a * b).tanh()
            },
            |a, b, c| {
                ((a + 1.5) * b - c) / (a + 2.0) * 0.5 + a.sin() * b.cos() - (-c).exp()
                    + (a * b).tanh()
            },
        ),
    ];
    for (name, build, hand) in cases {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes((4 * 4 * N) as u64));
        group.sample_size(20);
        group.bench_function(BenchmarkId::new("hand", N), |bench| {
            bench.iter(|| {
                pool.install(|| {
                    out.par_chunks_mut(1 << 15)
                        .zip(x.a.par_chunks(1 << 15))
                        .zip(x.b.par_chunks(1 << 15))
                        .zip(x.c.par_chunks(1 << 15))
                        .for_each(|(((o, a), b), c)| {
                            for (((o, &a), &b), &c) in o.iter_mut().zip(a).zip(b).zip(c) {
                                *o = hand(a, b, c);
                            }
                        })
                });
                black_box(&out);
            })
        });
        for (label, cx) in contexts() {
            let (a, b, cc) = (
                cx.from_slice(&x.a),
                cx.from_slice(&x.b),
                cx.from_slice(&x.c),
            );
            group.bench_function(BenchmarkId::new(format!("{label}/read_into"), N), |bench| {
                bench.iter(|| build(&a, &b, &cc).read_into(&mut out).expect("eval"))
            });
            if label == "lazyfuse" {
                group.bench_function(BenchmarkId::new(format!("{label}/to_vec"), N), |bench| {
                    bench.iter(|| black_box(build(&a, &b, &cc).to_vec::<f32>().expect("eval")))
                });
            }
        }
        group.finish();
    }
}

fn reductions(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("pool");
    let x = Inputs {
        a: data(N, 1),
        b: data(N, 2),
        c: Vec::new(),
    };
    let mut group = c.benchmark_group("E4 sum((a-b)**2)");
    group.throughput(Throughput::Bytes((2 * 4 * N) as u64));
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("hand", N), |bench| {
        bench.iter(|| {
            let s: f32 = pool.install(|| {
                x.a.par_chunks(1 << 15)
                    .zip(x.b.par_chunks(1 << 15))
                    .map(|(a, b)| a.iter().zip(b).map(|(a, b)| (a - b) * (a - b)).sum::<f32>())
                    .sum()
            });
            black_box(s)
        })
    });
    for (label, cx) in contexts() {
        let (a, b) = (cx.from_slice(&x.a), cx.from_slice(&x.b));
        group.bench_function(BenchmarkId::new(label, N), |bench| {
            bench.iter(|| black_box((&a - &b).pow(2.0).sum().item::<f32>().expect("eval")))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("E5 max(abs(a-b))");
    group.throughput(Throughput::Bytes((2 * 4 * N) as u64));
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("hand", N), |bench| {
        bench.iter(|| {
            let s: f32 = pool.install(|| {
                x.a.par_chunks(1 << 15)
                    .zip(x.b.par_chunks(1 << 15))
                    .map(|(a, b)| {
                        a.iter()
                            .zip(b)
                            .map(|(a, b)| (a - b).abs())
                            .fold(f32::NEG_INFINITY, f32::max)
                    })
                    .reduce(|| f32::NEG_INFINITY, f32::max)
            });
            black_box(s)
        })
    });
    for (label, cx) in contexts() {
        let (a, b) = (cx.from_slice(&x.a), cx.from_slice(&x.b));
        group.bench_function(BenchmarkId::new(label, N), |bench| {
            bench.iter(|| black_box((&a - &b).abs().max().item::<f32>().expect("eval")))
        });
    }
    group.finish();

    let side = 3000;
    let xm = data(side * side, 4);
    let r = data(side, 5);
    let k = data(side, 6);
    let mut out = vec![0f32; side];
    let mut group = c.benchmark_group("E6 (X + r*k).sum_axis(0)");
    group.throughput(Throughput::Bytes((4 * side * side) as u64));
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("hand", side), |bench| {
        bench.iter(|| {
            pool.install(|| {
                out.par_chunks_mut(256).enumerate().for_each(|(chunk, o)| {
                    let j0 = chunk * 256;
                    o.fill(0.0);
                    for i in 0..side {
                        let row = &xm[i * side + j0..i * side + j0 + o.len()];
                        for (j, (acc, &v)) in o.iter_mut().zip(row).enumerate() {
                            *acc += v + r[j0 + j] * k[i];
                        }
                    }
                })
            });
            black_box(&out);
        })
    });
    for (label, cx) in contexts() {
        let xa = cx.from_vec(xm.clone(), &[side, side]).expect("shape");
        let ra = cx.from_slice(&r);
        let ka = cx.from_vec(k.clone(), &[side, 1]).expect("shape");
        group.bench_function(BenchmarkId::new(label, side), |bench| {
            bench.iter(|| {
                (&xa + &ra * &ka)
                    .sum_axis(0)
                    .read_into(&mut out)
                    .expect("eval")
            })
        });
    }
    group.finish();
}

/// Small arrays: a repeated (cache-hit) evaluation of E1 including building
/// the expression and demanding the result.
fn latency(c: &mut Criterion) {
    let cx = Context::builder()
        .backend("cpu")
        .threads(THREADS)
        .build()
        .expect("cpu");
    let mut group = c.benchmark_group("E1 latency");
    for n in [100usize, 1000] {
        let (va, vb, vc) = (data(n, 1), data(n, 2), data(n, 3));
        let (a, b, cc) = (cx.from_slice(&va), cx.from_slice(&vb), cx.from_slice(&vc));
        group.bench_function(BenchmarkId::new("hand", n), |bench| {
            bench.iter(|| {
                let out: Vec<f32> = va
                    .iter()
                    .zip(&vb)
                    .zip(&vc)
                    .map(|((a, b), c)| a * b + c)
                    .collect();
                black_box(out)
            })
        });
        group.bench_function(BenchmarkId::new("lazyfuse build+to_vec", n), |bench| {
            bench.iter(|| black_box((&a * &b + &cc).to_vec::<f32>().expect("eval")))
        });
    }
    group.finish();
}

criterion_group!(benches, elementwise, reductions, latency);
criterion_main!(benches);
