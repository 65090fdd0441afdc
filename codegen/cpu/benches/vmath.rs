//! lazyfuse's vectorised `sin`, `cos`, `exp`, `log` and `tanh` (`cpu::vmath`)
//! against the `wide` crate's (the well-kept alternative: portable SIMD
//! types with polynomial math; it has no `tanh`) and std's scalar libm
//! calls, over 2^16 arguments (in cache) on one thread. Throughput is in
//! elements per second.
//!
//! `wide` picks its instruction set when compiled: run with
//! `RUSTFLAGS="-C target-cpu=native"` to give it AVX2 and FMA, which
//! lazyfuse detects at run time either way.
//!
//! Run: `cargo bench -p lazyfuse-cpu --bench vmath`. Accuracy is
//! checked by `vmath`'s tests, not here; the comparison with `wide`'s
//! accuracy is in docs/cpu.md.

#![allow(clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lazyfuse_core::UnaryOp;
use lazyfuse_cpu::vmath::VectorMath;
use wide::{f32x8, f64x4};

const N: usize = 1 << 16;

/// Arguments in `[-scale, scale]` (or `(0, 2000]` for `log`), from an LCG.
fn arguments(op: UnaryOp, scale: f64) -> Vec<f64> {
    let mut state = 12345u64;
    (0..N)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            match op {
                UnaryOp::Log => (unit + 1.0) * 1e3 + 1e-3,
                _ => unit * scale,
            }
        })
        .collect()
}

/// `op` on a `wide` vector; `None` for `tanh`, which `wide` lacks.
macro_rules! wide_op {
    ($v:ty, $op:expr, $x:expr) => {
        match $op {
            UnaryOp::Sin => Some($x.sin()),
            UnaryOp::Cos => Some($x.cos()),
            UnaryOp::Exp => Some($x.exp()),
            UnaryOp::Log => Some($x.ln()),
            _ => None::<$v>,
        }
    };
}

/// `op` by std's scalar function.
macro_rules! std_op {
    ($op:expr, $x:expr) => {
        match $op {
            UnaryOp::Sin => $x.sin(),
            UnaryOp::Cos => $x.cos(),
            UnaryOp::Exp => $x.exp(),
            UnaryOp::Log => $x.ln(),
            _ => $x.tanh(),
        }
    };
}

fn functions(c: &mut Criterion) {
    let cases = [
        ("sin", UnaryOp::Sin, 100.0),
        ("cos", UnaryOp::Cos, 100.0),
        ("exp", UnaryOp::Exp, 80.0),
        ("log", UnaryOp::Log, 0.0),
        ("tanh", UnaryOp::Tanh, 10.0),
    ];
    for (name, op, scale) in cases {
        let x64 = arguments(op, scale);
        let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        let (mut o32, mut o64) = (vec![0f32; N], vec![0f64; N]);
        let mut group = c.benchmark_group(format!("vmath {name}"));
        group.throughput(Throughput::Elements(N as u64));

        group.bench_function(BenchmarkId::new("lazyfuse", "f32"), |b| {
            b.iter(|| assert!(f32::apply(op, black_box(&x32), &mut o32)))
        });
        group.bench_function(BenchmarkId::new("lazyfuse", "f64"), |b| {
            b.iter(|| assert!(f64::apply(op, black_box(&x64), &mut o64)))
        });
        if wide_op!(f32x8, op, f32x8::ONE).is_some() {
            group.bench_function(BenchmarkId::new("wide", "f32"), |b| {
                b.iter(|| {
                    for (o, x) in o32.chunks_exact_mut(8).zip(black_box(&x32).chunks_exact(8)) {
                        let v = f32x8::from(<[f32; 8]>::try_from(x).expect("8 lanes"));
                        if let Some(r) = wide_op!(f32x8, op, v) {
                            o.copy_from_slice(&r.to_array());
                        }
                    }
                })
            });
            group.bench_function(BenchmarkId::new("wide", "f64"), |b| {
                b.iter(|| {
                    for (o, x) in o64.chunks_exact_mut(4).zip(black_box(&x64).chunks_exact(4)) {
                        let v = f64x4::from(<[f64; 4]>::try_from(x).expect("4 lanes"));
                        if let Some(r) = wide_op!(f64x4, op, v) {
                            o.copy_from_slice(&r.to_array());
                        }
                    }
                })
            });
        }
        group.bench_function(BenchmarkId::new("std", "f32"), |b| {
            b.iter(|| {
                for (o, &x) in o32.iter_mut().zip(black_box(&x32)) {
                    *o = std_op!(op, x);
                }
            })
        });
        group.bench_function(BenchmarkId::new("std", "f64"), |b| {
            b.iter(|| {
                for (o, &x) in o64.iter_mut().zip(black_box(&x64)) {
                    *o = std_op!(op, x);
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, functions);
criterion_main!(benches);
