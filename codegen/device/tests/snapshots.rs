//! Snapshot tests of the printed CUDA C: a handful of representative
//! kernels (element-wise, strided, full reduction, both axis-reduction
//! layouts, a user kernel with shared memory) are printed and compared with
//! the files committed under `codegen/tests/snapshots/`. A change to the
//! printer or the lowering shows up as a diff a reviewer reads.
//!
//! After an intended change: `LAZYFUSE_BLESS=1 cargo test -p
//! lazyfuse-device --test snapshots` rewrites the files; commit them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;

use lazyfuse_core::{Array, DType, ExprGraph, Options, ReferenceEngine, Session};
use lazyfuse_device::{bind, cuda, lower};
use lazyfuse_fusion::{compile, FusionOptions};
use lazyfuse_kernel::{Dim, Kernel, Val};

fn session() -> Session {
    Session::new(Arc::new(ReferenceEngine::new()), Options::default())
}

/// The CUDA C of every kernel computing `array` (no prelude), as the
/// device backends partition it (row programs included).
fn printed(array: &Array) -> String {
    let graph = ExprGraph::from_roots(&[array.node()]);
    let options = FusionOptions {
        row_programs: true,
        ..FusionOptions::default()
    };
    let program = compile(&graph, &options).unwrap();
    program
        .launches
        .iter()
        .map(|launch| {
            let lowered = lower::lower(&launch.kernel, bind::index_type(launch)).unwrap();
            cuda::print_kernels(&lowered)
        })
        .collect()
}

/// One partial sum per block, by a tree in shared memory.
fn block_sum() -> Kernel {
    Kernel::build("block_sum", |k| {
        let a = k.array("a", DType::F32, 1);
        let sums = k.array_mut("sums", DType::F32, 1);
        let shared = k.shared_array(DType::F32, &[256]);
        let tid = k.thread_idx(Dim::X);
        let i = k.grid(1).remove(0);
        k.store_shared(
            &shared,
            &tid,
            Val::select(&i.lt(a.len(0)), a.at(&i), 0.0f32),
        );
        k.syncthreads();
        let stride = k.local(128i64);
        k.while_(stride.get().gt(0i64), |k| {
            k.if_(tid.lt(stride.get()), |k| {
                let sum = shared.at(&tid) + shared.at(&tid + stride.get());
                k.store_shared(&shared, &tid, sum);
            });
            k.syncthreads();
            k.set(&stride, stride.get().floor_div(2i64));
        });
        k.if_(tid.eq(0i64), |k| {
            let block = k.block_idx(Dim::X);
            k.store(&sums, block, shared.at(0i64));
        });
    })
    .unwrap()
}

fn cases() -> Vec<(&'static str, String)> {
    let cx = session();
    // Axes longer than 16: reductions of their own, not unrolled.
    let a = cx.from_vec(vec![1.0f32; 20 * 24], &[20, 24]).unwrap();
    let b = cx.from_vec(vec![2.0f32; 20 * 24], &[20, 24]).unwrap();
    let row = cx.from_vec(vec![3.0f32; 24], &[24]).unwrap();
    let points = cx.from_vec(vec![1.0f32; 10 * 3], &[10, 1, 3]).unwrap();
    let centroids = cx.from_vec(vec![2.0f32; 4 * 3], &[1, 4, 3]).unwrap();
    let mut kernel_text = String::new();
    cuda::print_kernel(&mut kernel_text, block_sum().device_kernel());
    vec![
        ("elementwise", printed(&(&(&a * &b) + 1.0f32))),
        (
            "strided",
            printed(&(&a.transpose() * 2.0f32 + &a.transpose().slice_axis(1, None, None, -1))),
        ),
        ("full_reduction", printed(&((&a - 1.0f32) * &b).sum())),
        ("axis_reduction_last", printed(&(&a + &row).sum_axis(1))),
        ("axis_reduction_leading", printed(&(&a * &b).max_axis(0))),
        ("row_program_softmax", {
            let e = (&a - &a.max_axes(&[1], true)).exp();
            printed(&(&e / &e.sum_axes(&[1], true)))
        }),
        ("row_program_logsumexp", {
            let m = a.max_axes(&[1], true);
            let sum = (&a - &m).exp().sum_axes(&[1], true);
            printed(&(&m + sum.log()))
        }),
        ("column_program_standardise", {
            printed(&((&a - &a.mean_axes(&[0], true)) / a.std_axis(0, 0)))
        }),
        (
            "unrolled_k_means",
            printed(&(&points - &centroids).pow(2.0).sum_axis(-1).argmin_axis(-1)),
        ),
        ("user_kernel_shared_memory", kernel_text),
    ]
}

#[test]
fn the_printed_cuda_matches_the_committed_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let bless = std::env::var_os("LAZYFUSE_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, text) in cases() {
        let path = dir.join(format!("{name}.cu"));
        if bless {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != text {
            differ.push(format!(
                "== {name}: {} differs; printed now:\n{text}",
                path.display()
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{}\n(after an intended change: LAZYFUSE_BLESS=1 cargo test -p lazyfuse-device --test snapshots)",
        differ.join("\n")
    );
}
