//! Generalized ufuncs and user kernels on the CPU backend (compiled, not
//! simulated) against hand-written rayon loops on the same thread count,
//! measured in the same run (compare the ratios):
//!
//! - `dot`: `(n),(n)->()` over 10^5 rows of 64 f32;
//! - `norm`: `(n)->()` with `par_reduce` over one row of 10^7 f32;
//! - `increment`: the tutorials' `increment_by_one` kernel over 10^7 f32.
//!
//! Each lazyfuse measurement builds the call and demands it into a
//! preallocated buffer. Run: `cargo bench --bench gufuncs`.

#![allow(clippy::expect_used)]

#[path = "../examples/gufuncs/library.rs"]
mod library;
#[path = "../examples/kernels/tutorial.rs"]
#[allow(dead_code)]
mod tutorial;

mod common;

use common::{context, pool};
use criterion::{criterion_group, criterion_main, Criterion};
use lazyfuse::Array;
use rayon::prelude::*;
use std::hint::black_box;

fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1000) as f32 * 1e-3).collect()
}

fn dot(c: &mut Criterion) {
    let (rows, len) = (100_000, 64);
    let (x, y) = (data(rows * len), data(rows * len + 3)[3..].to_vec());
    let cx = context();
    let (a, b) = (
        cx.from_slice(&x).reshape(&[rows, len]),
        cx.from_slice(&y).reshape(&[rows, len]),
    );
    let gufunc = library::dot().expect("dot builds");
    let pool = pool();
    let mut out = vec![0f32; rows];
    let mut group = c.benchmark_group("dot");
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            pool.install(|| {
                out.par_iter_mut().enumerate().for_each(|(r, o)| {
                    let (xs, ys) = (&x[r * len..][..len], &y[r * len..][..len]);
                    *o = xs.iter().zip(ys).fold(0.0, |acc, (p, q)| acc + p * q);
                })
            });
            black_box(&out);
        })
    });
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| {
            let result: Array = gufunc.call(&[&a, &b]).expect("call").remove(0);
            result.read_into(&mut out).expect("runs");
            black_box(&out);
        })
    });
    group.finish();
}

fn norm(c: &mut Criterion) {
    let n = 10_000_000;
    let x = data(n);
    let cx = context();
    let a = cx.from_slice(&x);
    let gufunc = library::norm().expect("norm builds");
    let pool = pool();
    let mut group = c.benchmark_group("norm");
    group.sample_size(20);
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            let squares: f64 = pool.install(|| {
                x.par_chunks(1 << 16)
                    .map(|chunk| {
                        chunk
                            .iter()
                            .map(|&v| f64::from(v) * f64::from(v))
                            .sum::<f64>()
                    })
                    .sum()
            });
            black_box(squares.sqrt() as f32)
        })
    });
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| {
            let result: Array = gufunc.call(&[&a]).expect("call").remove(0);
            black_box(result.item::<f32>().expect("runs"))
        })
    });
    group.finish();
}

fn increment(c: &mut Criterion) {
    let n = 10_000_000;
    let x = data(n);
    let cx = context();
    let a = cx.from_slice(&x);
    let kernel = tutorial::increment_by_one().expect("kernel builds");
    let pool = pool();
    let mut out = vec![0f32; n];
    let mut group = c.benchmark_group("increment");
    group.sample_size(20);
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            pool.install(|| {
                out.par_iter_mut().zip(&x).for_each(|(o, v)| *o = v + 1.0);
            });
            black_box(&out);
        })
    });
    let blocks = n.div_ceil(256) as u32;
    group.bench_function("lazyfuse", |bench| {
        bench.iter(|| {
            let result = kernel
                .launch(&cx, blocks, 256u32, &[(&a).into()])
                .expect("launch")
                .remove(0);
            result.read_into(&mut out).expect("runs");
            black_box(&out);
        })
    });
    group.finish();
}

criterion_group!(benches, dot, norm, increment);
criterion_main!(benches);
