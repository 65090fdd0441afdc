//! Generalized ufuncs (Numba's `@guvectorize`) on every backend, checked
//! against plain Rust loops: every layout form, broadcast loop dimensions,
//! empty loop and core dimensions, several dtypes, `out=`, `par_range`;
//! bad layouts, signatures and calls are errors; every gufunc kernel's
//! printed CUDA compiles with NVRTC. The gufuncs are the `gufuncs`
//! example's (`examples/gufuncs/library.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../examples/gufuncs/library.rs"]
mod library;

use lazyfuse::{half::f16, Array, Context, DType, Error, GUfunc};

fn matmul_loop(a: &[f64], b: &[f64], (m, n, p): (usize, usize, usize)) -> Vec<f64> {
    let mut out = vec![0.0; m * p];
    for i in 0..m {
        for j in 0..p {
            out[i * p + j] = (0..n).fold(0.0, |acc, l| acc + a[i * n + l] * b[l * p + j]);
        }
    }
    out
}

#[test]
fn doubled_in_every_dtype_with_and_without_an_output_array() {
    let doubled = library::doubled().unwrap();
    for cx in common::backends() {
        let name = cx.backend_name();
        let host: Vec<f32> = (0..24).map(|i| i as f32 - 7.0).collect();
        let a = cx.from_slice(&host).reshape(&[2, 3, 4]);
        let want: Vec<f32> = host.iter().map(|v| v * 2.0).collect();
        assert_eq!(
            doubled.call(&[&a]).unwrap()[0].to_vec::<f32>().unwrap(),
            want,
            "{name}"
        );
        assert_eq!(doubled.call(&[&a]).unwrap()[0].shape(), [2, 3, 4]);

        let before = cx.ones_like(&a);
        let out = before.clone();
        let earlier = &out + 1.0f32; // built from out's old value
        doubled.call_into(&[&a], &[&out]).unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), want, "{name}");
        assert_eq!(
            earlier.to_vec::<f32>().unwrap(),
            vec![2.0; 24],
            "{name}: the old value stays"
        );
        assert_eq!(
            before.to_vec::<f32>().unwrap(),
            vec![1.0; 24],
            "{name}: an earlier clone stays"
        );

        let f64s = a.astype(DType::F64);
        let got = doubled.call(&[&f64s]).unwrap().remove(0);
        assert_eq!(got.dtype(), DType::F64);
        assert_eq!(
            got.to_vec::<f64>().unwrap(),
            want.iter().map(|&v| v as f64).collect::<Vec<_>>()
        );
        let ints = a.astype(DType::I32);
        let got = doubled.call(&[&ints]).unwrap().remove(0);
        assert_eq!(
            got.to_vec::<i32>().unwrap(),
            want.iter().map(|&v| v as i32).collect::<Vec<_>>()
        );
        let halves = a.astype(DType::F16);
        let got = doubled.call(&[&halves]).unwrap().remove(0);
        assert_eq!(
            got.to_vec::<f16>().unwrap(),
            want.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>(),
            "{name}"
        );
        // An i8 input has no loop of its own: it casts safely to f32's.
        let small = a.astype(DType::I8);
        assert_eq!(doubled.call(&[&small]).unwrap()[0].dtype(), DType::F32);
    }
}

#[test]
fn batched_matmul_broadcasts_loop_dimensions() {
    let matmul = library::matmul().unwrap();
    let (m, n, p) = (2, 3, 4);
    let a_host: Vec<f64> = (0..3 * m * n).map(|i| (i % 5) as f64 - 1.5).collect();
    let b_host: Vec<f64> = (0..4 * n * p).map(|i| (i % 7) as f64 * 0.25).collect();
    for cx in common::backends() {
        let name = cx.backend_name();
        // Loop shapes (3, 1) and (4,) broadcast to (3, 4).
        let a = cx.from_slice(&a_host).reshape(&[3, 1, m, n]);
        let b = cx.from_slice(&b_host).reshape(&[4, n, p]);
        let out = matmul.call(&[&a, &b]).unwrap().remove(0);
        assert_eq!(out.shape(), [3, 4, m, p], "{name}");
        let got = out.to_vec::<f64>().unwrap();
        for i in 0..3 {
            for j in 0..4 {
                let want = matmul_loop(
                    &a_host[i * m * n..][..m * n],
                    &b_host[j * n * p..][..n * p],
                    (m, n, p),
                );
                let start = (i * 4 + j) * m * p;
                assert_eq!(
                    got[start..start + m * p],
                    want[..],
                    "{name}: element ({i}, {j})"
                );
            }
        }
        // One matrix against a batch: a 0-d loop shape broadcasts too.
        let single = cx.from_slice(&a_host[..m * n]).reshape(&[m, n]);
        let out = matmul.call(&[&single, &b]).unwrap().remove(0);
        assert_eq!(out.shape(), [4, m, p]);
        let got = out.to_vec::<f64>().unwrap();
        assert_eq!(
            got[m * p..2 * m * p],
            matmul_loop(&a_host[..m * n], &b_host[n * p..2 * n * p], (m, n, p))[..],
            "{name}"
        );
    }
}

#[test]
fn moving_average_takes_a_zero_d_core_and_fuses_with_the_work_around_it() {
    let moving = library::moving_average().unwrap();
    let rows: Vec<f64> = (0..60).map(|i| ((i * 7) % 11) as f64).collect();
    for cx in common::backends() {
        let name = cx.backend_name();
        let x = cx.from_slice(&rows).reshape(&[6, 10]);
        let window = cx.from_slice(&[4i64]).reshape(&[]);
        let averaged = moving.call(&[&(&x * 1.0), &window]).unwrap().remove(0);
        let total = (&averaged * 2.0).sum();
        let want: Vec<f64> = rows
            .chunks(10)
            .flat_map(|row| library::moving_average_loop(row, 4))
            .collect();
        assert_eq!(averaged.to_vec::<f64>().unwrap(), want, "{name}");
        let want_total: f64 = want.iter().map(|v| v * 2.0).sum();
        assert!(
            (total.item::<f64>().unwrap() - want_total).abs() < 1e-9,
            "{name}"
        );
        // One window per row: the `()` core broadcasts along the loop.
        let windows = cx.from_slice(&[1i64, 2, 3, 4, 5, 6]);
        let got = moving.call(&[&x, &windows]).unwrap()[0]
            .to_vec::<f64>()
            .unwrap();
        for (r, row) in rows.chunks(10).enumerate() {
            assert_eq!(
                got[r * 10..][..10],
                library::moving_average_loop(row, r + 1)[..],
                "{name}"
            );
        }
    }
}

#[test]
fn par_reduce_norms_rows_of_any_length_and_min_max_has_two_outputs() {
    let norm = library::norm().unwrap();
    let min_max = library::min_max().unwrap();
    for cx in common::backends() {
        let name = cx.backend_name();
        for (rows, len) in [(1, 10_000), (5, 7), (3, 0), (0, 5), (2, 300)] {
            let host: Vec<f64> = (0..rows * len)
                .map(|i| ((i * 13) % 17) as f64 - 8.0)
                .collect();
            let x = cx.from_slice(&host).reshape(&[rows, len]);
            let got = norm.call(&[&x]).unwrap().remove(0);
            assert_eq!(got.shape(), [rows]);
            let got = got.to_vec::<f64>().unwrap();
            for (r, row) in host.chunks(len.max(1)).take(rows).enumerate() {
                let want = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                let want = if len == 0 { 0.0 } else { want };
                assert!(
                    (got[r] - want).abs() <= 1e-12 * want,
                    "{name} {rows}x{len} row {r}"
                );
            }
        }
        let host: Vec<i32> = (0..3 * 50).map(|i| (i * 37) % 101 - 50).collect();
        let x = cx.from_slice(&host).reshape(&[3, 50]);
        let outs = min_max.call(&[&x]).unwrap();
        assert_eq!(outs.len(), 2);
        let lo = outs[0].to_vec::<i32>().unwrap();
        let hi = outs[1].to_vec::<i32>().unwrap();
        for (r, row) in host.chunks(50).enumerate() {
            assert_eq!(lo[r], *row.iter().min().unwrap(), "{name}");
            assert_eq!(hi[r], *row.iter().max().unwrap(), "{name}");
        }
    }
}

#[test]
fn empty_loop_and_core_dimensions() {
    let doubled = library::doubled().unwrap();
    let dot = library::dot().unwrap();
    for cx in common::backends() {
        let name = cx.backend_name();
        let none = cx.zeros(&[0, 3, 4], DType::F32);
        let out = doubled.call(&[&none]).unwrap().remove(0);
        assert_eq!(out.shape(), [0, 3, 4]);
        assert!(out.to_vec::<f32>().unwrap().is_empty(), "{name}");
        let empty_core = cx.zeros(&[5, 0], DType::F64);
        let got = dot.call(&[&empty_core, &empty_core]).unwrap().remove(0);
        assert_eq!(got.to_vec::<f64>().unwrap(), vec![0.0; 5], "{name}");
    }
}

#[test]
fn explain_shows_the_gufunc_as_a_user_kernel_launch() {
    let cx = Context::sim();
    let x = cx.from_slice(&[3.0f64, 4.0]);
    let norm = library::norm().unwrap().call(&[&x]).unwrap().remove(0);
    let text = norm.explain();
    assert!(text.contains("norm_f64_f64"), "{text}");
    assert!(text.contains("user kernel"), "{text}");
    assert_eq!(norm.item::<f64>().unwrap(), 5.0);
}

fn invalid_message(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(e) => e.to_string(),
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn bad_layouts_signatures_and_calls_are_errors() {
    let body = |_: &mut lazyfuse::kernel::KernelScope, _: &[lazyfuse::kernel::ArrayParam]| {};
    for (layout, signature, expected) in [
        ("(m,n)->", "void(f32[:,:])", "column 8"),
        (
            "(m,n)->(m,n)",
            "void(f32[:,:], f32[:])",
            "gives it 2 core dimensions",
        ),
        ("(m,n)->(m,n)", "void(f32[:,:])", "has 1 arguments"),
        (
            "(n)->()",
            "void(flaot32[:], f32)",
            "'flaot32' is not a dtype",
        ),
        ("(n)->()", "f32[:], f32", "expected '('"),
    ] {
        let message = invalid_message(GUfunc::build("g", layout, &[signature], body));
        assert!(
            message.contains(expected),
            "{layout} {signature}: {message}"
        );
    }
    assert!(invalid_message(GUfunc::build(
        "no good",
        "(n)->()",
        &["void(f32[:], f32)"],
        body
    ))
    .contains("identifier"));

    let cx = Context::sim();
    let matmul = library::matmul().unwrap();
    let a = cx.zeros(&[2, 3], DType::F32);
    let b = cx.zeros(&[4, 5], DType::F32);
    let message = invalid_message(matmul.call(&[&a, &b]));
    assert!(
        message.contains("'n'")
            && message.contains("3")
            && message.contains("4")
            && message.contains("input 0")
            && message.contains("input 1"),
        "{message}"
    );
    assert!(invalid_message(matmul.call(&[&a])).contains("takes 2 inputs, got 1"));
    let ints = cx.zeros(&[2, 3], DType::I64);
    let f32_only = GUfunc::build("total", "(n)->()", &["void(f32[:], f32)"], |k, args| {
        k.store(&args[1], (), args[0].at(0i64));
    })
    .unwrap();
    let message = invalid_message(f32_only.call(&[&ints]));
    assert!(
        message.contains("no signature takes inputs (i64)"),
        "{message}"
    );
    let flat = cx.zeros(&[3], DType::F32);
    assert!(invalid_message(matmul.call(&[&flat, &b])).contains("at least 2 dimensions"));
    let loops = cx.zeros(&[2, 3, 3], DType::F32);
    let other = cx.zeros(&[3, 3, 3], DType::F32);
    assert!(invalid_message(matmul.call(&[&loops, &other])).contains("could not be broadcast"));

    let doubled = library::doubled().unwrap();
    let x = cx.zeros(&[2, 3], DType::F32);
    let wrong_shape = cx.zeros(&[3, 2], DType::F32);
    assert!(invalid_message(doubled.call_into(&[&x], &[&wrong_shape])).contains("'m'"));
    let wrong_dtype = cx.zeros(&[2, 3], DType::F64);
    assert!(invalid_message(doubled.call_into(&[&x], &[&wrong_dtype])).contains("writes f32"));
    let batch = cx.zeros(&[4, 2, 3], DType::F32);
    assert!(invalid_message(doubled.call_into(&[&batch], &[&x])).contains("loop dimensions"));
    assert!(invalid_message(doubled.call_into(&[&x], &[])).contains("has 1 outputs, got 0"));
    let invalid = x.reshape(&[7]);
    assert!(invalid_message(doubled.call(&[&invalid])).contains("reshape"));
}

#[test]
fn setting_an_outer_local_inside_par_range_is_an_error() {
    let message = invalid_message(GUfunc::build(
        "racy_sum",
        "(n)->()",
        &["void(f64[:], f64)"],
        |k, args| {
            let (x, out) = (&args[0], &args[1]);
            let total = k.local(0.0f64);
            k.par_range(0i64, x.len(0), |k, i| k.set(&total, total.get() + x.at(&i)));
            k.store(out, (), total.get());
        },
    ));
    assert!(message.contains("par_reduce"), "{message}");
}

#[test]
fn par_range_writes_each_element_from_one_iteration() {
    let scale = GUfunc::build(
        "scale_rows",
        "(n),()->(n)",
        &["void(f32[:], f32, f32[:])"],
        |k, args| {
            let (x, factor, out) = (&args[0], &args[1], &args[2]);
            let f = k.let_(factor.at(()));
            k.par_range(0i64, x.len(0), |k, i| k.store(out, &i, x.at(&i) * &f));
        },
    )
    .unwrap();
    for cx in common::backends() {
        let host: Vec<f32> = (0..2 * 1000).map(|i| i as f32).collect();
        let x = cx.from_slice(&host).reshape(&[2, 1000]);
        let factors = cx.from_slice(&[2.0f32, -1.0]);
        let got = scale.call(&[&x, &factors]).unwrap()[0]
            .to_vec::<f32>()
            .unwrap();
        let want: Vec<f32> = host
            .iter()
            .enumerate()
            .map(|(i, v)| v * if i < 1000 { 2.0 } else { -1.0 })
            .collect();
        assert_eq!(got, want, "{}", cx.backend_name());
    }
}

#[test]
fn gufuncs_and_assign_keep_their_arrays_lazy() {
    let cx = Context::sim();
    let a = cx.from_slice(&[1.0f32, 2.0]).reshape(&[1, 2]);
    let out = cx.empty_like(&a);
    library::doubled()
        .unwrap()
        .call_into(&[&a], &[&out])
        .unwrap();
    assert_eq!(
        cx.stats().kernel_launches,
        0,
        "nothing runs before a demand"
    );
    let sum: Array = out.sum();
    assert_eq!(sum.item::<f32>().unwrap(), 6.0);
    let wrong = cx.zeros(&[2], DType::F32);
    assert!(out.assign(&wrong).is_err());
    assert!(out.assign(&out.astype(DType::F64)).is_err());
    out.assign(&(&out * 0.5f32)).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), [1.0, 2.0]);
}

#[test]
fn the_printed_cuda_of_every_gufunc_kernel_compiles_with_nvrtc() {
    use lazyfuse::codegen::device::nvrtc::{self, Target};
    match nvrtc::load() {
        Ok(()) => {}
        Err(e) if std::env::var("LAZYFUSE_REQUIRE_NVRTC").as_deref() == Ok("1") => {
            panic!("NVRTC is required here: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED the_printed_cuda_of_every_gufunc_kernel_compiles_with_nvrtc: {e}");
            return;
        }
    }
    let mut compiled_kernels = 0;
    for gufunc in library::all().unwrap() {
        for kernel in gufunc.built().kernels() {
            let source = kernel.cuda_source();
            let compiled = nvrtc::compile(kernel.name(), &source, &Target::Cubin("sm_80".into()))
                .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
            let report = nvrtc::resources(&compiled.log);
            assert_eq!(report.len(), 1, "{}", compiled.log);
            assert_eq!(
                (report[0].spill_stores, report[0].spill_loads),
                (0, 0),
                "{}: {report:?}",
                kernel.name()
            );
            compiled_kernels += 1;
        }
    }
    assert!(compiled_kernels >= 12, "{compiled_kernels}");
}

#[test]
fn the_cpu_backend_compiles_kernels_without_barriers_and_says_so() {
    let cx = Context::builder()
        .backend("cpu")
        .jit(lazyfuse::JitMode::Auto)
        .build()
        .unwrap();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape(&[2, 2]);
    let doubled = library::doubled().unwrap().call(&[&a]).unwrap().remove(0);
    let text = doubled.explain();
    assert!(text.contains("compiled code (JIT)"), "{text}");
    assert_eq!(doubled.to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0, 8.0]);

    // par_reduce needs a block in lockstep on a device; the CPU runs the
    // body one loop element per thread, compiled.
    let x = cx.from_slice(&[3.0f64, 4.0]);
    let norm = library::norm().unwrap().call(&[&x]).unwrap().remove(0);
    let text = norm.explain();
    assert!(text.contains("one thread per loop element"), "{text}");
    assert_eq!(norm.item::<f64>().unwrap(), 5.0);

    // f16 has no compiled form: the simulator runs it, and says why.
    let halves = a.astype(DType::F16);
    let text = library::doubled().unwrap().call(&[&halves]).unwrap()[0].explain();
    assert!(
        text.contains("simulator") && text.contains("dtype"),
        "{text}"
    );
}

#[test]
fn the_simulator_reports_two_par_range_iterations_writing_one_element() {
    let last = GUfunc::build("last", "(n)->()", &["void(f32[:], f32)"], |k, args| {
        let (x, out) = (&args[0], &args[1]);
        // Wrong: every iteration writes the one output element.
        k.par_range(0i64, x.len(0), |k, i| k.store(out, (), x.at(&i)));
    })
    .unwrap();
    let cx = Context::sim();
    let x = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let err = last.call(&[&x]).unwrap()[0]
        .to_vec::<f32>()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("out0[0]") && err.contains("par_range") && err.contains("thread 0"),
        "{err}"
    );
}
