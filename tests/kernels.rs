//! User kernels (Numba's `@cuda.jit`): the tutorials' kernels on every
//! backend, checked against plain Rust; launches are lazy graph nodes; the
//! simulator catches races and out-of-bounds accesses; bad launches are
//! errors; the printed CUDA of every kernel compiles with NVRTC. The kernels
//! are the `kernels` example's (`examples/kernels/tutorial.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../examples/kernels/tutorial.rs"]
mod tutorial;

use lazyfuse::kernel::{Kernel, KernelArg, RawKernel, RawParam, Val};
use lazyfuse::{Array, Context, DType, Error};

#[test]
fn increment_by_one_on_every_backend_and_lazily() {
    let kernel = tutorial::increment_by_one().unwrap();
    for cx in common::backends() {
        let n = 1000;
        let a = cx
            .from_vec((0..n).map(|i| i as f32).collect(), &[n])
            .unwrap();
        cx.reset_stats();
        let out = kernel.launch(&cx, 4u32, 256u32, &[(&a).into()]).unwrap();
        assert_eq!(
            cx.stats().kernel_launches,
            0,
            "{}: launches are lazy",
            cx.backend_name()
        );
        let b = &out[0] * 2.0f32;
        let got = b.to_vec::<f32>().unwrap();
        let want: Vec<f32> = (0..n).map(|i| (i as f32 + 1.0) * 2.0).collect();
        assert_eq!(got, want, "{}", cx.backend_name());
        // The old handle keeps its values.
        assert_eq!(a.to_vec::<f32>().unwrap()[1], 1.0);
    }
}

#[test]
fn doubled_with_a_2d_grid() {
    let doubled = tutorial::doubled().unwrap();
    for cx in common::backends() {
        let (rows, cols) = (37usize, 23usize);
        let data: Vec<f64> = (0..rows * cols).map(|i| i as f64 * 0.5).collect();
        let a = cx.from_vec(data.clone(), &[rows, cols]).unwrap();
        let out = cx.zeros(&[rows, cols], DType::F64);
        let result = doubled
            .launch(
                &cx,
                (3u32, 2u32),
                (16u32, 16u32),
                &[(&a).into(), (&out).into()],
            )
            .unwrap();
        let want: Vec<f64> = data.iter().map(|v| v * 2.0).collect();
        assert_eq!(
            result[0].to_vec::<f64>().unwrap(),
            want,
            "{}",
            cx.backend_name()
        );
        assert_eq!(result[0].shape(), &[rows, cols]);
    }
}

#[test]
fn shared_memory_block_sum() {
    let kernel = tutorial::block_sum(false).unwrap();
    for cx in common::backends() {
        let n = 1000;
        let a = cx
            .from_vec((0..n).map(|i| (i % 7) as f32).collect(), &[n])
            .unwrap();
        let sums = cx.zeros(&[4], DType::F32);
        let out = kernel
            .launch(&cx, 4u32, 256u32, &[(&a).into(), (&sums).into()])
            .unwrap();
        let got = out[0].to_vec::<f32>().unwrap();
        let want: Vec<f32> = (0..4)
            .map(|b| {
                (b * 256..((b + 1) * 256).min(n))
                    .map(|i| (i % 7) as f32)
                    .sum()
            })
            .collect();
        assert_eq!(got, want, "{}", cx.backend_name());
    }
}

#[test]
fn a_missing_syncthreads_is_reported_as_a_race() {
    let kernel = tutorial::block_sum(true).unwrap();
    let cx = Context::sim();
    let a = cx.from_vec(vec![1.0f32; 256], &[256]).unwrap();
    let sums = cx.zeros(&[1], DType::F32);
    let out = kernel
        .launch(&cx, 1u32, 256u32, &[(&a).into(), (&sums).into()])
        .unwrap();
    let err = out[0].to_vec::<f32>().unwrap_err().to_string();
    assert!(err.contains("block_sum") && err.contains("race"), "{err}");
    assert!(err.contains("syncthreads"), "{err}");
}

/// Every thread of a block writing one value to one element (`found[0] = 1`,
/// in global or shared memory) is a benign race on a GPU: the simulator
/// accepts it, and reports threads writing different values.
#[test]
fn threads_writing_one_value_to_one_element_are_not_a_race() {
    let flag = |same: bool| {
        Kernel::build(if same { "same_value" } else { "own_value" }, move |k| {
            let out = k.array_mut("out", DType::I64, 1);
            let tile = k.shared_array(DType::I64, &[1]);
            let t = k.thread_idx(lazyfuse::kernel::Dim::X).cast(DType::I64);
            k.store_shared(&tile, 0i64, if same { 1i64.into() } else { t.clone() });
            k.syncthreads();
            k.store(
                &out,
                0i64,
                if same { tile.at(0i64) } else { t } + Val::from(1i64),
            );
        })
        .unwrap()
    };
    for cx in common::backends() {
        let out = cx.zeros(&[1], DType::I64);
        let got = flag(true)
            .launch(&cx, 1u32, 64u32, &[(&out).into()])
            .unwrap();
        assert_eq!(
            got[0].to_vec::<i64>().unwrap(),
            [2],
            "{}",
            cx.backend_name()
        );
    }
    let cx = Context::sim();
    let out = cx.zeros(&[1], DType::I64);
    let got = flag(false)
        .launch(&cx, 1u32, 64u32, &[(&out).into()])
        .unwrap();
    let err = got[0].to_vec::<i64>().unwrap_err().to_string();
    assert!(
        err.contains("own_value")
            && err.contains("a value other than the one thread 0")
            && err.contains("race"),
        "{err}"
    );
}

#[test]
fn an_out_of_bounds_write_names_the_kernel_thread_and_index() {
    let unguarded = Kernel::build("unguarded", |k| {
        let a = k.array_mut("a", DType::I32, 1);
        let i = k.grid(1).remove(0);
        k.store(&a, i, 7i32);
    })
    .unwrap();
    for cx in [Context::sim(), Context::cpu()] {
        let a = cx.zeros(&[100], DType::I32);
        let out = unguarded.launch(&cx, 1u32, 128u32, &[(&a).into()]).unwrap();
        let err = out[0].to_vec::<i32>().unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Device { .. }), "{text}");
        assert!(
            text.contains("unguarded") && text.contains("thread 100"),
            "{text}"
        );
        assert!(text.contains("a[100] outside its 100 elements"), "{text}");
    }
}

#[test]
fn histogram_with_atomics() {
    let kernel = tutorial::histogram().unwrap();
    for cx in common::backends() {
        let n = 5000;
        let values: Vec<i32> = (0..n).map(|i| (i * 7919 % 1013) as i32).collect();
        let data = cx.from_vec(values.clone(), &[n]).unwrap();
        let bins = cx.zeros(&[16], DType::U32);
        let out = kernel
            .launch(&cx, 3u32, 128u32, &[(&data).into(), (&bins).into()])
            .unwrap();
        let mut want = vec![0u32; 16];
        for v in values {
            want[(v % 16) as usize] += 1;
        }
        assert_eq!(
            out[0].to_vec::<u32>().unwrap(),
            want,
            "{}",
            cx.backend_name()
        );
    }
}

#[test]
fn matrix_multiply_with_shared_memory_tiles() {
    let kernel = tutorial::matmul_tiled().unwrap();
    let (m, kk, n) = (13usize, 10usize, 11usize);
    let av: Vec<f32> = (0..m * kk).map(|i| (i % 5) as f32 - 2.0).collect();
    let bv: Vec<f32> = (0..kk * n).map(|i| (i % 3) as f32 + 0.5).collect();
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..kk).map(|p| av[i * kk + p] * bv[p * n + j]).sum();
        }
    }
    for cx in [Context::sim(), Context::cpu()] {
        let a = cx.from_vec(av.clone(), &[m, kk]).unwrap();
        let b = cx.from_vec(bv.clone(), &[kk, n]).unwrap();
        let c = cx.zeros(&[m, n], DType::F32);
        let grid = (n.div_ceil(8) as u32, m.div_ceil(8) as u32);
        let out = kernel
            .launch(
                &cx,
                grid,
                (8u32, 8u32),
                &[(&a).into(), (&b).into(), (&c).into()],
            )
            .unwrap();
        assert_eq!(
            out[0].to_vec::<f32>().unwrap(),
            want,
            "{}",
            cx.backend_name()
        );
    }
}

#[test]
fn launch_results_fuse_with_the_work_around_them_and_stay_on_the_device() {
    let kernel = tutorial::increment_by_one().unwrap();
    let cx = Context::sim();
    let n = 4096;
    let a = cx.from_vec(vec![1.0f32; n], &[n]).unwrap();
    let b = cx.from_vec(vec![2.0f32; n], &[n]).unwrap();
    let pre = &a * &b; // element-wise work before the kernel
    let out = kernel.launch(&cx, 16u32, 256u32, &[(&pre).into()]).unwrap();
    let total = (&out[0] * &b + 1.0f32).sum(); // and after it, fused with the sum
    cx.reset_stats();
    assert_eq!(total.item::<f32>().unwrap(), (3.0 * 2.0 + 1.0) * n as f32);
    let s = cx.stats();
    // a and b uploaded once; pre computed by one fused kernel, then the user
    // kernel, then one fused kernel for the rest; one 4-byte download.
    assert_eq!(
        (s.h2d_copies, s.d2h_copies, s.kernel_launches),
        (2, 1, 3),
        "{s:?}"
    );
}

#[test]
fn bad_launches_are_errors() {
    let kernel = tutorial::increment_by_one().unwrap();
    let cx = Context::cpu();
    let a = cx.from_vec(vec![1.0f32; 10], &[10]).unwrap();
    let f64s = cx.from_vec(vec![1.0f64; 10], &[10]).unwrap();
    let cases: Vec<(Vec<KernelArg<'_>>, (u32, u32), &str)> = vec![
        (vec![], (1, 32), "takes 1 arguments, got 0"),
        (vec![(&f64s).into()], (1, 32), "expected a 1-d f32 array"),
        (vec![1.5f64.into()], (1, 32), "must be an array"),
        (vec![(&a).into()], (1, 2048), "at most 1024"),
        (vec![(&a).into()], (0, 32), "no zero dimension"),
    ];
    for (args, (grid, block), expected) in cases {
        let err = kernel
            .launch(&cx, grid, block, &args)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("increment_by_one") && err.contains(expected),
            "{err}"
        );
    }
    let bad_name = Kernel::build("not a name", |_| {}).unwrap_err().to_string();
    assert!(bad_name.contains("C identifier"), "{bad_name}");
    let read_only = Kernel::build("store_to_input", |k| {
        let a = k.array("a", DType::F32, 1);
        k.store(&a, 0i64, 1.0f32);
    })
    .unwrap_err()
    .to_string();
    assert!(read_only.contains("read-only"), "{read_only}");
}

#[test]
fn raw_cuda_kernels_say_where_they_can_run() {
    let source = r#"extern "C" __global__ void scale(float* x, float s, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= s;
    }"#;
    let raw = RawKernel::new(
        "scale",
        source,
        &[
            RawParam::Array {
                dtype: DType::F32,
                written: true,
            },
            RawParam::Scalar(DType::F32),
            RawParam::Scalar(DType::I32),
        ],
    );
    for cx in [Context::cpu(), Context::sim()] {
        let x: Array = cx.from_vec(vec![1.0f32; 4], &[4]).unwrap();
        let out = raw
            .launch(&cx, 1u32, 32u32, &[(&x).into(), 2.0f32.into(), 4i32.into()])
            .unwrap();
        match out[0].to_vec::<f32>() {
            Err(Error::BackendUnavailable { reason, .. }) => {
                assert!(reason.contains("only the cuda backend"), "{reason}")
            }
            other => panic!(
                "{}: expected BackendUnavailable, got {other:?}",
                cx.backend_name()
            ),
        }
    }
}

fn nvrtc_or_skip(test: &str) -> bool {
    use lazyfuse::codegen::device::nvrtc;
    match nvrtc::load() {
        Ok(()) => true,
        Err(e) if std::env::var("LAZYFUSE_REQUIRE_NVRTC").as_deref() == Ok("1") => {
            panic!("{test}: NVRTC is required here: {e}")
        }
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {e}");
            false
        }
    }
}

#[test]
fn the_printed_cuda_of_every_example_kernel_compiles_with_nvrtc() {
    use lazyfuse::codegen::device::nvrtc::{self, Target};
    if !nvrtc_or_skip("the_printed_cuda_of_every_example_kernel_compiles_with_nvrtc") {
        return;
    }
    let library = [
        lazyfuse::region_kernels(DType::F32, 1).unwrap().to_vec(),
        lazyfuse::region_kernels(DType::F16, 3).unwrap().to_vec(),
        lazyfuse::take_kernels(DType::F64).unwrap(),
        lazyfuse::take_kernels(DType::Bool).unwrap(),
        lazyfuse::scatter_kernels(DType::F32).unwrap(),
        lazyfuse::scatter_kernels(DType::I8).unwrap(),
        vec![
            lazyfuse::sort_kernel(DType::F64).unwrap(),
            lazyfuse::sort_kernel(DType::F16).unwrap(),
            lazyfuse::sort_kernel(DType::Bool).unwrap(),
            lazyfuse::argsort_kernel(DType::F64).unwrap(),
            lazyfuse::argsort_kernel(DType::F16).unwrap(),
            lazyfuse::argsort_kernel(DType::U8).unwrap(),
            lazyfuse::partition_kernel(DType::F64).unwrap(),
            lazyfuse::partition_kernel(DType::I8).unwrap(),
            lazyfuse::sort_stage_kernel(DType::F32).unwrap(),
            lazyfuse::sort_stage_kernel(DType::Bool).unwrap(),
            lazyfuse::argsort_stage_kernel(DType::F64).unwrap(),
            lazyfuse::argsort_stage_kernel(DType::I16).unwrap(),
            lazyfuse::searchsorted_kernel(DType::F64, lazyfuse::Side::Left).unwrap(),
            lazyfuse::searchsorted_kernel(DType::I32, lazyfuse::Side::Right).unwrap(),
            lazyfuse::bincount_kernel(false).unwrap(),
            lazyfuse::bincount_kernel(true).unwrap(),
            lazyfuse::fft_kernel(lazyfuse::ComplexDType::C64).unwrap(),
            lazyfuse::fft_kernel(lazyfuse::ComplexDType::C128).unwrap(),
            lazyfuse::roll_kernel(DType::F32).unwrap(),
            lazyfuse::rfft_kernel(DType::F32, false).unwrap(),
            lazyfuse::rfft_kernel(DType::F64, true).unwrap(),
            lazyfuse::roll_kernel(DType::Bool).unwrap(),
        ],
    ];
    let examples = [
        tutorial::increment_by_one().unwrap(),
        tutorial::doubled().unwrap(),
        tutorial::block_sum(false).unwrap(),
        tutorial::histogram().unwrap(),
        tutorial::matmul_tiled().unwrap(),
        reverse_in_fours(),
    ];
    for kernel in examples.into_iter().chain(library.into_iter().flatten()) {
        let source = kernel.cuda_source();
        let compiled = nvrtc::compile(kernel.name(), &source, &Target::Cubin("sm_80".into()))
            .unwrap_or_else(|e| panic!("{e}"));
        let oldest = nvrtc::supported_archs().unwrap()[0];
        nvrtc::compile(
            kernel.name(),
            &source,
            &Target::Ptx(format!("compute_{oldest}")),
        )
        .unwrap_or_else(|e| panic!("compute_{oldest}: {e}"));
        let report = nvrtc::resources(&compiled.log);
        assert_eq!(report.len(), 1, "{}", compiled.log);
        assert_eq!(
            (report[0].spill_stores, report[0].spill_loads),
            (0, 0),
            "{report:?}"
        );
    }
    let raw = RawKernel::new(
        "scale",
        r#"extern "C" __global__ void scale(float* x, float s, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] *= s;
        }"#,
        &[],
    );
    // The oldest architecture this NVRTC knows (CUDA 13 dropped compute_70).
    let oldest = nvrtc::supported_archs().unwrap()[0];
    raw.compile(&Target::Ptx(format!("compute_{oldest}")))
        .unwrap();
}

#[test]
fn a_value_used_outside_the_block_that_made_it_is_an_error_at_build() {
    // C scoping: a register declared inside `if` does not exist after it;
    // the verifier refuses the kernel before any compiler sees it.
    let result = Kernel::build("escaping", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        let pos = k.grid(1).remove(0);
        let mut inner = None;
        k.if_(pos.lt(a.len(0)), |k| {
            inner = Some(k.let_(a.at(&pos) * 2.0));
        });
        if let Some(inner) = inner {
            k.store(&a, &pos, inner);
        }
    });
    match result {
        Err(e) => assert!(
            e.to_string().contains("outside the block that declares it"),
            "{e}"
        ),
        Ok(_) => panic!("a kernel using a value outside its block was accepted"),
    }
}

/// `x = 2 * a`, `y = a + 1`: a kernel with two outputs.
fn twice_and_next() -> Kernel {
    Kernel::build("twice_and_next", |k| {
        let a = k.array("a", DType::F32, 1);
        let x = k.array_mut("x", DType::F32, 1);
        let y = k.array_mut("y", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(a.len(0)), |k| {
            k.store(&x, &i, a.at(&i) * 2.0);
            k.store(&y, &i, a.at(&i) + 1.0);
        });
    })
    .unwrap()
}

#[test]
fn a_launch_runs_once_whichever_output_is_demanded_first() {
    let kernel = twice_and_next();
    for cx in common::backends() {
        let n = 300;
        let a = cx.arange(0.0, n as f64, 1.0, DType::F32); // generated: the plan materialises it first
        let zeros = cx.zeros(&[n], DType::F32);
        let out = kernel
            .launch(
                &cx,
                2u32,
                256u32,
                &[(&a).into(), (&zeros).into(), (&zeros).into()],
            )
            .unwrap();
        cx.reset_stats();
        let y = out[1].to_vec::<f32>().unwrap();
        let launches = cx.stats().kernel_launches;
        let x = out[0].to_vec::<f32>().unwrap();
        let name = cx.backend_name();
        assert_eq!(
            y,
            (0..n).map(|i| i as f32 + 1.0).collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(
            x,
            (0..n).map(|i| i as f32 * 2.0).collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(
            cx.stats().kernel_launches,
            launches,
            "{name}: the first demand kept the other output"
        );
    }
}

#[test]
fn two_threads_demanding_two_outputs_of_one_launch_run_it_once() {
    let kernel = twice_and_next();
    for cx in [Context::cpu(), Context::sim()] {
        for _ in 0..20 {
            let n = 4096;
            let a = cx.from_vec(vec![3.0f32; n], &[n]).unwrap();
            let out = kernel
                .launch(&cx, 16u32, 256u32, &[(&a).into(), (&a).into(), (&a).into()])
                .unwrap();
            cx.reset_stats();
            let (x, y) = std::thread::scope(|s| {
                let x = s.spawn(|| out[0].to_vec::<f32>().unwrap());
                let y = s.spawn(|| out[1].sum().item::<f32>().unwrap());
                (x.join().unwrap(), y.join().unwrap())
            });
            assert!(x.iter().all(|&v| v == 6.0));
            assert_eq!(y, 4.0 * n as f32);
            // The user kernel once, the sum once.
            assert_eq!(cx.stats().kernel_launches, 2, "{}", cx.backend_name());
        }
    }
}

#[test]
fn views_and_earlier_launches_feed_a_launch_in_one_plan() {
    let doubled = tutorial::doubled().unwrap();
    for cx in common::backends() {
        let (rows, cols) = (5usize, 7usize);
        let m = cx
            .from_vec((0..rows * cols).map(|i| i as f64).collect(), &[rows, cols])
            .unwrap();
        let t = m.transpose(); // a transposed view: the kernel reads it in row-major order
        let out = cx.zeros(&[cols, rows], DType::F64);
        let once = doubled
            .launch(
                &cx,
                (1u32, 1u32),
                (8u32, 8u32),
                &[(&t).into(), (&out).into()],
            )
            .unwrap();
        let twice = doubled
            .launch(
                &cx,
                (1u32, 1u32),
                (8u32, 8u32),
                &[(&once[0]).into(), (&out).into()],
            )
            .unwrap();
        let plan = twice[0].explain();
        let got = twice[0].to_vec::<f64>().unwrap();
        let want: Vec<f64> = (0..cols)
            .flat_map(|c| (0..rows).map(move |r| (r * cols + c) as f64 * 4.0))
            .collect();
        assert_eq!(got, want, "{}\n{plan}", cx.backend_name());
        if cx.backend_name() == "sim" {
            assert!(
                plan.contains("launch user kernel u0") && plan.contains("launch user kernel u1"),
                "{plan}"
            );
        }
    }
}

#[test]
fn a_cached_program_runs_each_new_launch_with_its_own_arguments() {
    let kernel = tutorial::increment_by_one().unwrap();
    let cx = Context::cpu();
    let run = |start: f32| {
        let a = cx.from_vec(vec![start; 64], &[64]).unwrap();
        let out = kernel.launch(&cx, 1u32, 64u32, &[(&a).into()]).unwrap();
        (&out[0] * 2.0f32).to_vec::<f32>().unwrap()
    };
    assert_eq!(run(1.0), vec![4.0; 64]);
    cx.reset_stats();
    assert_eq!(
        run(2.0),
        vec![6.0; 64],
        "the new launch's values, not the cached one's"
    );
    assert_eq!(cx.stats().kernels_compiled, 0, "{:?}", cx.stats());
}

fn reverse_in_fours() -> Kernel {
    Kernel::build("reverse_in_fours", |k| {
        let a = k.array("a", DType::F32, 1);
        let out = k.array_mut("out", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_((&i * 4.0 + 3.0).lt(a.len(0)), |k| {
            let window = k.local_array(DType::F32, &[4]);
            k.for_range(0i64, 4i64, 1i64, |k, j| {
                k.store_local(&window, &j, a.at(&i * 4.0 + &j));
            });
            k.for_range(0i64, 4i64, 1i64, |k, j| {
                k.store(&out, &i * 4.0 + &j, window.at(3.0 - &j));
            });
        });
    })
    .unwrap()
}

#[test]
fn local_arrays_are_per_thread_on_every_backend() {
    let kernel = reverse_in_fours();
    let source = kernel.cuda_source();
    assert!(source.contains("    float local0[4];"), "{source}");
    assert!(!source.contains("__shared__ float local0"), "{source}");
    let host: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let want: Vec<f32> = host
        .chunks(4)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    let run = |cx: &Context| {
        let a = cx.from_slice(&host);
        let out = cx.zeros(&[64], DType::F32);
        kernel
            .launch(cx, 1u32, 32u32, &[(&a).into(), (&out).into()])
            .unwrap()
            .remove(0)
    };
    for cx in common::backends() {
        assert_eq!(
            run(&cx).to_vec::<f32>().unwrap(),
            want,
            "{}",
            cx.backend_name()
        );
    }
    let cx = Context::builder()
        .backend("cpu")
        .jit(lazyfuse::JitMode::Auto)
        .build()
        .unwrap();
    let got = run(&cx);
    assert!(
        got.explain().contains("compiled code (JIT)"),
        "{}",
        got.explain()
    );
}

#[test]
fn a_local_array_index_out_of_range_is_reported() {
    let kernel = Kernel::build("overrun", |k| {
        let out = k.array_mut("out", DType::I32, 1);
        let t = k.local_array(DType::I32, &[2]);
        let i = k.grid(1).remove(0);
        k.store_local(&t, &i, 1i32);
        k.store(&out, &i, t.at(&i));
    })
    .unwrap();
    for cx in [Context::sim(), Context::cpu()] {
        let out = cx.zeros(&[8], DType::I32);
        let got = kernel.launch(&cx, 1u32, 8u32, &[(&out).into()]).unwrap();
        let err = got[0].to_vec::<i32>().unwrap_err().to_string();
        assert!(
            err.contains("local0[2] outside its 2 elements") && err.contains("thread 2"),
            "{err}"
        );
    }
}

#[test]
fn the_simulator_shows_an_element_an_overwriting_kernel_left_unwritten() -> Result<(), Error> {
    // Declared to overwrite its output, but the last thread writes nothing:
    // the simulator's poisoned memory shows it (NaN); the claim is false.
    let half = Kernel::build("half", |k| {
        let out = k.array_mut("out", DType::F64, 1);
        let i = k.thread_idx(lazyfuse::kernel::Dim::X).cast(DType::I64);
        k.if_(i.lt(3i64), |k| k.store(&out, &i, Val::from(1.0)));
    })?
    .overwriting()?;
    let cx = Context::sim();
    let out = cx.zeros(&[4], DType::F64);
    let got = half.launch(cx.session(), 1u32, 4u32, &[KernelArg::from(&out)])?;
    let values = got[0].to_vec::<f64>()?;
    assert_eq!(values[..3], [1.0, 1.0, 1.0]);
    assert!(values[3].is_nan(), "{values:?}");
    assert_eq!(cx.stats().argument_copy_bytes, 0);
    Ok(())
}
