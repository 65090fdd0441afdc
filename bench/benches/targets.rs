//! The CPU backend's performance targets (issue 4) as criterion benches,
//! each beside its reference measured in the same run: the harness's
//! hand-written fused rayon loops (`lazyfuse_bench::reference`, on the same
//! thread count, into a preallocated output), the same expression with
//! `fusion(false)`, or the same engine on another size or thread count.
//! Every group sets its throughput in bytes, so criterion prints GB/s. The
//! cases are those of the harness (`CaseId::formula` gives each one).
//!
//! | group | target |
//! | --- | --- |
//! | `E1`, `E2`, `E4`, `E5`, `E6` | `lazyfuse` ≤ 1.10 × `hand` (f32 and f64, N = 1e7) |
//! | `E3` | `lazyfuse` ≤ 1.5 × `hand` (libmvec where it loads); `unfused` ≥ 3 × `lazyfuse` |
//! | `E1 latency` | `lazyfuse` ≤ 5 µs at N = 1000, building the expression included |
//! | `E1 scaling` | GB/s at 3e7 ≥ 90 % of GB/s at 1e6 (compare with `hand`: 1e6 runs from this machine's L3) |
//! | `E3 threads` | 2 threads ≥ 1.6 × the throughput of 1 |
//!
//! Run: `cargo bench -p lazyfuse-bench --bench targets` (`-- E3` for one group).

#![allow(clippy::expect_used)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lazyfuse::Context;
use lazyfuse_bench::cases::{CaseId, HostInputs, LazyInputs};
use lazyfuse_bench::types::BenchElem;
use rayon::ThreadPool;

/// Worker threads of every measurement but `E3 threads`.
const THREADS: usize = 2;
/// Elements of the large cases.
const N: usize = 10_000_000;

/// A CPU context on `threads` threads, fused or not.
fn cpu(threads: usize, fusion: bool) -> Context {
    Context::builder()
        .backend("cpu")
        .threads(threads)
        .fusion(fusion)
        .build()
        .expect("the cpu backend is always available")
}

/// A rayon pool of `threads` threads for the hand loops.
fn pool(threads: usize) -> ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool")
}

/// What a bench function runs.
enum Runner<'a> {
    /// The hand-written fused loop on this pool.
    Hand(&'a ThreadPool),
    /// lazyfuse on this context: build the expression, demand it into the
    /// preallocated output.
    Lazyfuse(&'a Context),
}

/// Benches `case` on `n` elements of `T` with each runner, named
/// `<name>/<dtype>` (or `<name>/<n>` when `by_size`).
fn bench_case<T: BenchElem>(
    c: &mut Criterion,
    group: &str,
    case: CaseId,
    n: usize,
    runners: &[(&str, Runner)],
    by_size: bool,
) {
    let host = HostInputs::<T>::new(n, case == CaseId::E6);
    let mut out = vec![T::from_f64(0.0); host.output_len(case)];
    let mut group = c.benchmark_group(group);
    group
        .throughput(Throughput::Bytes(host.bytes(case)))
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (name, runner) in runners {
        let id = if by_size {
            BenchmarkId::new(*name, n)
        } else {
            BenchmarkId::new(*name, T::ID.name())
        };
        match runner {
            Runner::Hand(pool) => {
                group.bench_function(id, |b| b.iter(|| host.hand(case, pool, &mut out)));
            }
            Runner::Lazyfuse(cx) => {
                let lazy = LazyInputs::new(cx, &host).expect("inputs");
                group.bench_function(id, |b| {
                    b.iter(|| lazy.run(case, &mut out).expect("evaluation"))
                });
            }
        }
    }
    group.finish();
}

/// E1, E2, E4, E5, E6 at N = 1e7: lazyfuse against the hand loop.
fn memory_bound(c: &mut Criterion) {
    let (pool, cx) = (pool(THREADS), cpu(THREADS, true));
    let runners = [
        ("hand", Runner::Hand(&pool)),
        ("lazyfuse", Runner::Lazyfuse(&cx)),
    ];
    for case in [CaseId::E1, CaseId::E2, CaseId::E4, CaseId::E5, CaseId::E6] {
        bench_case::<f32>(c, case.label(), case, N, &runners, false);
        bench_case::<f64>(c, case.label(), case, N, &runners, false);
    }
}

/// E3 at N = 1e7: lazyfuse against the vectorised hand loop and against
/// itself unfused.
fn compute_bound(c: &mut Criterion) {
    let (pool, cx, unfused) = (pool(THREADS), cpu(THREADS, true), cpu(THREADS, false));
    let runners = [
        ("hand", Runner::Hand(&pool)),
        ("lazyfuse", Runner::Lazyfuse(&cx)),
        ("unfused", Runner::Lazyfuse(&unfused)),
    ];
    bench_case::<f32>(c, "E3", CaseId::E3, N, &runners, false);
    bench_case::<f64>(c, "E3", CaseId::E3, N, &runners, false);
}

/// E1 on 1000 elements, building the expression and demanding the result
/// each time (the compiled kernel comes from the cache).
fn latency(c: &mut Criterion) {
    let (pool, cx) = (pool(THREADS), cpu(THREADS, true));
    let runners = [
        ("hand", Runner::Hand(&pool)),
        ("lazyfuse", Runner::Lazyfuse(&cx)),
    ];
    bench_case::<f32>(c, "E1 latency", CaseId::E1, 1000, &runners, true);
}

/// E1's throughput at 1e6 and 3e7 elements, lazyfuse and the hand loop.
fn scaling(c: &mut Criterion) {
    let (pool, cx) = (pool(THREADS), cpu(THREADS, true));
    let runners = [
        ("hand", Runner::Hand(&pool)),
        ("lazyfuse", Runner::Lazyfuse(&cx)),
    ];
    for n in [1_000_000, 30_000_000] {
        bench_case::<f32>(c, "E1 scaling", CaseId::E1, n, &runners, true);
    }
}

/// E3 on 1 and on 2 threads.
fn threads(c: &mut Criterion) {
    let (one, two) = (cpu(1, true), cpu(2, true));
    let runners = [
        ("lazyfuse 1 thread", Runner::Lazyfuse(&one)),
        ("lazyfuse 2 threads", Runner::Lazyfuse(&two)),
    ];
    bench_case::<f32>(c, "E3 threads", CaseId::E3, N, &runners, false);
}

criterion_group!(
    benches,
    memory_bound,
    compute_bound,
    latency,
    scaling,
    threads
);
criterion_main!(benches);
