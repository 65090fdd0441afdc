//! Cost of building expression graphs (no evaluation): the issue asks for well
//! under a microsecond per node; and of planning them (snapshot, passes,
//! partitioning, emission): time per node must stay flat from 1,000 to
//! 100,000 nodes. Throughput is reported in nodes per second.
//!
//! Run: `cargo bench --bench graph_build`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lazyfuse::codegen::fusion::{compile, FusionOptions};
use lazyfuse::core::ExprGraph;
use lazyfuse::{Array, Context, Expr, Ufunc};
use std::hint::black_box;

fn chains(c: &mut Criterion) {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32; 1024]);
    let mut group = c.benchmark_group("build_chain");
    for nodes in [1_000u64, 100_000] {
        // Each step adds two nodes: the scalar constant and the operation.
        group.throughput(Throughput::Elements(nodes));
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &nodes, |b, &nodes| {
            b.iter(|| {
                let mut x = a.clone();
                for _ in 0..nodes / 2 {
                    x = &x + 1.0;
                }
                black_box(x)
            })
        });
    }
    group.finish();
}

fn expressions(c: &mut Criterion) {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32; 1024]);
    let b = cx.from_slice(&[2.0f32; 1024]);
    let k = cx.from_slice(&[3.0f32; 1024]);
    let disc = Ufunc::new("discriminant", |[a, b, c]: [Expr; 3]| {
        (b * b - 4.0 * a * c).sqrt()
    });
    let mut group = c.benchmark_group("build_expression");
    group.bench_function("operators: sqrt(b*b - 4*a*c)", |bench| {
        bench.iter(|| black_box((&b * &b - 4.0 * &a * &k).sqrt()))
    });
    group.bench_function("ufunc call: discriminant", |bench| {
        bench.iter(|| black_box(disc.call(&[&a, &b, &k])))
    });
    group.bench_function("reduction: sum((a-b)**2)", |bench| {
        bench.iter(|| black_box((&a - &b).pow(2.0).sum()))
    });
    group.finish();
}

/// Snapshot + simplification + partitioning + emission of `roots`.
fn plan(roots: &[&Array]) -> usize {
    let roots: Vec<_> = roots.iter().map(|a| a.node()).collect();
    let graph = ExprGraph::from_roots(&roots);
    compile(&graph, &FusionOptions::default()).map_or(0, |p| p.launches.len())
}

fn planning(c: &mut Criterion) {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32; 16]);
    let mut group = c.benchmark_group("plan_chain");
    group.sample_size(10);
    for nodes in [1_000u64, 10_000, 100_000] {
        let mut x = a.clone();
        for _ in 0..nodes / 2 {
            x = &x + 1.0;
        }
        group.throughput(Throughput::Elements(nodes));
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &x, |b, x| {
            b.iter(|| black_box(plan(&[x])))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("plan_wide_sum");
    group.sample_size(10);
    for inputs in [1_000u64, 10_000] {
        let arrays: Vec<Array> = (0..inputs)
            .map(|i| cx.from_slice(&[i as f32; 16]))
            .collect();
        let total = arrays.iter().skip(1).fold(arrays[0].clone(), |s, x| &s + x);
        // Each input adds a leaf and an addition.
        group.throughput(Throughput::Elements(2 * inputs));
        group.bench_with_input(BenchmarkId::from_parameter(inputs), &total, |b, total| {
            b.iter(|| black_box(plan(&[total])))
        });
    }
    group.finish();
}

criterion_group!(benches, chains, expressions, planning);
criterion_main!(benches);
