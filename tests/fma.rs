//! `Val::fma` (CUDA's `fma`, Numba's `cuda.fma`): `a * b + c` rounded once,
//! on every backend, for floats of each width and for integers (wrapping);
//! the printed CUDA compiles with NVRTC.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::kernel::Kernel;
use lazyfuse::DType;

fn fused(dtype: DType) -> Kernel {
    Kernel::build(&format!("fused_{dtype}"), |k| {
        let a = k.array("a", dtype, 1);
        let b = k.array("b", dtype, 1);
        let c = k.array("c", dtype, 1);
        let out = k.array_mut("out", dtype, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(a.len(0)), |k| {
            k.store(&out, &i, a.at(&i).fma(b.at(&i), c.at(&i)));
        });
    })
    .unwrap()
}

#[test]
fn fma_rounds_once_on_every_backend() {
    // 1 + 2^-12 squared is 1 + 2^-11 + 2^-24: a float32 product rounds the
    // last term away, the fused one keeps it against the -1 - 2^-11.
    let e = 2f32.powi(-12);
    let (a, b, c) = (
        vec![1.0 + e, 3.0],
        vec![1.0 + e, -2.0],
        vec![-1.0 - 2.0 * e, 0.5],
    );
    let want: Vec<f32> = (0..2).map(|i| a[i].mul_add(b[i], c[i])).collect();
    assert_eq!(want[0], 2f32.powi(-24));
    for cx in common::backends() {
        let got = run::<f32>(&cx, DType::F32, [a.clone(), b.clone(), c.clone()]);
        assert_eq!(got, want, "{}", cx.backend_name());
        let got = run::<i32>(
            &cx,
            DType::I32,
            [vec![i32::MAX, 7], vec![2, -3], vec![5, 1]],
        );
        let want = [i32::MAX.wrapping_mul(2).wrapping_add(5), -20];
        assert_eq!(got, want, "{}", cx.backend_name());
    }
}

/// `fused(dtype)` over two elements of each operand.
fn run<T: lazyfuse::Element>(
    cx: &lazyfuse::Context,
    dtype: DType,
    operands: [Vec<T>; 3],
) -> Vec<T> {
    let args: Vec<_> = operands
        .into_iter()
        .map(|v| cx.from_vec(v, &[2]).unwrap())
        .collect();
    let out = cx.zeros(&[2], dtype);
    fused(dtype)
        .launch(
            cx,
            1u32,
            32u32,
            &[
                (&args[0]).into(),
                (&args[1]).into(),
                (&args[2]).into(),
                (&out).into(),
            ],
        )
        .unwrap()[0]
        .to_vec::<T>()
        .unwrap()
}

#[test]
fn the_printed_cuda_of_fma_compiles_with_nvrtc() {
    if !common::nvrtc_or_skip("the_printed_cuda_of_fma_compiles_with_nvrtc") {
        return;
    }
    for dtype in [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I64,
        DType::Bool,
    ] {
        let kernel = fused(dtype);
        for arch in ["sm_80", "sm_90"] {
            common::compiles_without_spills(kernel.name(), &kernel.cuda_source(), arch);
        }
    }
}
