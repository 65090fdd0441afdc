//! Matrix products (`lazyfuse::matmul`, Python's `@`) on the CPU backend,
//! f32, square matrices of 128, 512 and 1024, against in the same run:
//!
//! - `hand`: `matrixmultiply::sgemm` called directly, rows split in two
//!   over a rayon pool of the same thread count (the library the backend
//!   calls, without the engine around it);
//! - `multiply_sum`: `(a[:, :, None] * b[None]).sum(axis=1)`, one fused
//!   multiply-and-sum kernel (what `@` was before the GEMM routine).
//!
//! Each lazyfuse measurement builds the product and demands it into a
//! preallocated buffer. Run: `cargo bench --bench matmul`.

#![allow(clippy::expect_used)]

mod common;

use common::{context, pool, THREADS};
use criterion::{criterion_group, criterion_main, Criterion};
use lazyfuse::matmul;
use rayon::prelude::*;
use std::hint::black_box;

fn data(n: usize, shift: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i + shift) * 7919) % 1000) as f32 * 1e-3)
        .collect()
}

fn products(c: &mut Criterion) {
    let cx = context();
    let pool = pool();
    for n in [128usize, 512, 1024] {
        let (x, y) = (data(n * n, 0), data(n * n, 5));
        let (a, b) = (
            cx.from_slice(&x).reshape(&[n, n]),
            cx.from_slice(&y).reshape(&[n, n]),
        );
        let mut out = vec![0f32; n * n];
        let mut group = c.benchmark_group(format!("matmul_{n}"));
        group.bench_function("hand", |bench| {
            let rows = n.div_ceil(THREADS);
            bench.iter(|| {
                pool.install(|| {
                    out.par_chunks_mut(rows * n).enumerate().for_each(|(t, c)| {
                        let m = c.len() / n;
                        let a = &x[t * rows * n..];
                        // SAFETY: `a` holds at least m rows of n, `y` n×n
                        // and `c` m×n elements, all row-major.
                        unsafe {
                            matrixmultiply::sgemm(
                                m,
                                n,
                                n,
                                1.0,
                                a.as_ptr(),
                                n as isize,
                                1,
                                y.as_ptr(),
                                n as isize,
                                1,
                                0.0,
                                c.as_mut_ptr(),
                                n as isize,
                                1,
                            );
                        }
                    })
                });
                black_box(&out);
            })
        });
        group.bench_function("lazyfuse", |bench| {
            bench.iter(|| {
                matmul(&a, &b)
                    .expect("builds")
                    .read_into(&mut out)
                    .expect("runs");
                black_box(&out);
            })
        });
        group.bench_function("multiply_sum", |bench| {
            bench.iter(|| {
                let products = &a.reshape(&[n, n, 1]) * &b.reshape(&[1, n, n]);
                products.sum_axis(1).read_into(&mut out).expect("runs");
                black_box(&out);
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = products
}
criterion_main!(benches);
