//! The fixed cost of a demand: E1 `a*b + c` on 1,000 f32 elements, the
//! kernel cached, in its parts:
//!
//! - `build`: building the expression alone (two graph nodes);
//! - `read_into`: demanding a built expression into a preallocated buffer
//!   (a fresh `a*b + c` each time, since a demanded value is memoised);
//! - `build + read_into`: both, what a loop over small arrays pays;
//! - `build + to_vec`: the same, the result in a new `Vec`;
//! - `inputs + build + read_into`: with the three inputs copied into new
//!   arrays each time (`from_slice`);
//! - `hand`: the same loop written by hand (one thread: 1,000 elements run
//!   on the calling thread in lazyfuse too).
//!
//! Run: `cargo bench --bench demand`. For a profile of where the time goes:
//! `cargo bench --bench demand --no-run`, then
//! `perf record -g <the bench binary> --bench --profile-time 10 'build + read_into'`.

#![allow(clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use lazyfuse::Context;
use std::hint::black_box;

const N: usize = 1000;

fn demand(c: &mut Criterion) {
    let cx = Context::builder()
        .backend("cpu")
        .threads(2)
        .build()
        .expect("the cpu backend");
    let a = cx.from_slice(&vec![1.5f32; N]);
    let b = cx.from_slice(&vec![2.5f32; N]);
    let d = cx.from_slice(&vec![0.5f32; N]);
    let mut out = vec![0.0f32; N];
    // Warm the program and kernel caches.
    (&a * &b + &d).read_into(&mut out).expect("E1");
    let mut group = c.benchmark_group("E1 demand, 1000 f32");
    let (ha, hb, hd) = (vec![1.5f32; N], vec![2.5f32; N], vec![0.5f32; N]);
    group.bench_function("hand", |bench| {
        bench.iter(|| {
            for (((o, x), y), z) in out.iter_mut().zip(&ha).zip(&hb).zip(&hd) {
                *o = x * y + z;
            }
            black_box(&mut out);
        })
    });
    group.bench_function("build", |bench| bench.iter(|| black_box(&a * &b + &d)));
    group.bench_function("read_into", |bench| {
        bench.iter_batched(
            || &a * &b + &d,
            |e| e.read_into(&mut out).expect("E1"),
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("build + read_into", |bench| {
        bench.iter(|| (&a * &b + &d).read_into(&mut out).expect("E1"))
    });
    group.bench_function("build + to_vec", |bench| {
        bench.iter(|| black_box((&a * &b + &d).to_vec::<f32>().expect("E1")))
    });
    group.bench_function("inputs + build + read_into", |bench| {
        bench.iter(|| {
            let (a, b, d) = (cx.from_slice(&ha), cx.from_slice(&hb), cx.from_slice(&hd));
            (&a * &b + &d).read_into(&mut out).expect("E1")
        })
    });
    group.finish();
}

criterion_group!(benches, demand);
criterion_main!(benches);
