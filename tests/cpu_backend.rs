//! The CPU backend at sizes around its chunk and task boundaries, in
//! parallel, against the reference evaluator; results independent of the
//! thread count.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod common;

use common::assert_close;
use lazyfuse::core::Kind;
use lazyfuse::{Array, Context, DType, Expr, Reducer, Result};

fn contexts() -> Vec<Context> {
    [1usize, 2, 3]
        .iter()
        .map(|&t| {
            Context::builder()
                .backend("cpu")
                .threads(t)
                .build()
                .expect("cpu")
        })
        .collect()
}

fn reference() -> Context {
    Context::builder()
        .backend("reference")
        .build()
        .expect("reference")
}

fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1.0 + (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// Builds the same expressions on a context.
fn expressions(cx: &Context, n: usize) -> Vec<Array> {
    let a = cx.from_vec(values(n, 1), &[n]).unwrap().astype(DType::F32);
    let b = cx.from_vec(values(n, 2), &[n]).unwrap().astype(DType::F32);
    let c = cx.from_vec(values(n, 3), &[n]).unwrap();
    let rows = 7;
    let m = cx.from_vec(values(rows * n, 4), &[rows, n]).unwrap();
    let r = cx.from_vec(values(n, 5), &[n]).unwrap();
    let k = cx.from_vec(values(rows, 6), &[rows, 1]).unwrap();
    let sumsq = Reducer::new("sumsq", |x: Expr, y: Expr| x + y, 0.0);
    vec![
        &a * &b + c.astype(DType::F32),
        (&b * &b - 4.0 * &a * &a.astype(DType::F64)).abs().sqrt(),
        (&a - &b).pow(2.0).sum(),
        (&a - &b).abs().max(),
        (&m + &r * &k).sum_axis(0),
        (&m + &r * &k).sum_axis(1),
        m.transpose().mean_axis(1),
        m.transpose().min_axis(0),
        (&a.sin() * &b.cos()).sum(),
        cx.arange(0.0, n as f64, 1.0, DType::I64).sum(),
        (&m.astype(DType::F32) * 2.0)
            .reshape(&[n, rows])
            .max_axis(1),
        sumsq.reduce(&(&c * &c)),
        c.gt(1.5).where_(&c, 0.0).sum(),
        (&c.slice_axis(0, None, None, -1) - &c).abs().max(),
        m.slice_axis(1, Some(1), None, 3)
            .slice_axis(0, None, None, -2)
            .sum_axis(1),
        // Many rows, few columns: the rows are split into blocks.
        m.reshape(&[n, rows]).sum_axis(0),
        // Kept positions over several lines of the iteration space.
        (&m.reshape(&[n, rows, 1]) + &cx.arange(0.0, 3.0, 1.0, DType::F64)).sum_axis(0),
        // Short lines: chunks span several, broadcast rows are gathered.
        (&m.reshape(&[n, rows]) - &m.reshape(&[n, rows]).mean_axis(0)) * &k.reshape(&[rows]),
        (cx.arange(0.0, (rows * n) as f64, 1.0, DType::F64)
            .reshape(&[n, rows])
            .transpose()
            + &m.slice_axis(1, None, None, -1))
            .reshape(&[rows * n]),
        // A reduced axis between kept ones.
        (&m.reshape(&[rows, n, 1]) + &cx.arange(0.0, 3.0, 1.0, DType::F64)).sum_axis(1),
        (&m.reshape(&[rows, n, 1]) * &cx.arange(1.0, 4.0, 1.0, DType::F64))
            .astype(DType::F32)
            .max_axis(1)
            .astype(DType::F64),
        // Half-precision min/max run in f32.
        (&a - &b).astype(DType::F16).abs().max().astype(DType::F64),
        m.astype(DType::BF16).min_axis(0).astype(DType::F64),
        m.astype(DType::F16).max_axis(1).astype(DType::F64),
    ]
}

fn read(a: &Array) -> Vec<f64> {
    match a.dtype() {
        DType::F32 => a
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect(),
        DType::F64 => a.to_vec::<f64>().unwrap(),
        DType::I64 => a
            .to_vec::<i64>()
            .unwrap()
            .into_iter()
            .map(|v| v as f64)
            .collect(),
        _ => read(&a.astype(DType::F64)),
    }
}

#[test]
fn large_arrays_match_the_reference_and_do_not_depend_on_threads() -> Result<()> {
    for n in [1usize, 31, 2047, 2048, 2049, 32_768 + 5, 200_003] {
        let want: Vec<Vec<f64>> = expressions(&reference(), n).iter().map(read).collect();
        let mut first: Option<Vec<Vec<f64>>> = None;
        for cx in contexts() {
            let got: Vec<Vec<f64>> = expressions(&cx, n).iter().map(read).collect();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let tolerance: f64 = if i == 0 || i == 1 || i == 3 || i == 7 || i == 9 {
                    0.0
                } else {
                    1e-5
                };
                assert_close(g, w, tolerance.max(if n > 100_000 { 1e-5 } else { 0.0 }));
            }
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(&got, f, "n = {n}: results differ between thread counts"),
            }
        }
    }
    Ok(())
}

#[test]
fn a_kernel_compiles_once_per_structure() -> Result<()> {
    let cx = Context::cpu();
    for n in [10usize, 1000, 100_000] {
        let a = cx.from_vec(vec![1.0f32; n], &[n])?;
        let b = cx.from_vec(vec![2.0f32; n], &[n])?;
        (&a * &b + 1.0).to_vec::<f32>()?;
    }
    let s = cx.stats();
    assert_eq!((s.kernels_compiled, s.kernel_cache_hits), (1, 2), "{s:?}");
    Ok(())
}

#[test]
fn leading_reductions_of_loaded_values_match_the_reference() -> Result<()> {
    // A reduced value that is loaded as it is (no compiled code): whole rows
    // combined a row at a time, with NaN in the floats, inner axes of
    // length 1, reduced blocks in the middle, and rows longer than a chunk.
    let shapes: [(&[usize], &[isize]); 5] = [
        (&[300, 700], &[0]),
        (&[5, 40, 3000], &[1]),
        (&[64, 1, 9], &[0]),
        (&[4, 6, 5, 2], &[0, 1]),
        (&[2, 3, 4, 5], &[1, 2]),
    ];
    let run = |cx: &Context, dtype: DType, shape: &[usize], axes: &[isize]| {
        let n = shape.iter().product();
        let mut data = values(n, 9);
        data.iter_mut().step_by(997).for_each(|v| *v = f64::NAN);
        let x = cx.from_vec(data, shape).unwrap().astype(dtype);
        let x = if dtype == DType::I32 {
            (x * 1000.0).astype(dtype)
        } else {
            x
        };
        [
            x.sum_axes(axes, false),
            x.prod_axes(axes, false),
            x.min_axes(axes, false),
            x.max_axes(axes, true),
        ]
        .iter()
        .map(read)
        .collect::<Vec<_>>()
    };
    // Equal, NaN included: the same bits but for a NaN's sign and payload.
    let bits = |values: &[Vec<f64>]| -> Vec<Vec<u64>> {
        let canonical = |v: &f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
        values
            .iter()
            .map(|v| v.iter().map(canonical).collect())
            .collect()
    };
    for dtype in [DType::F32, DType::F64, DType::I32] {
        for (shape, axes) in shapes {
            let want = run(&reference(), dtype, shape, axes);
            let mut first = None;
            for cx in contexts() {
                let got = run(&cx, dtype, shape, axes);
                for (g, w) in got.iter().zip(&want) {
                    assert_close(g, w, 1e-5);
                }
                match &first {
                    None => first = Some(bits(&got)),
                    Some(f) => assert!(
                        bits(&got) == *f,
                        "{dtype} {shape:?} {axes:?}: thread counts differ"
                    ),
                }
            }
        }
    }
    Ok(())
}

#[test]
fn fills_of_zero_bits_and_of_negative_zero_are_what_they_hold() -> Result<()> {
    // Zero bits come as zeroed memory, with no kernel; -0.0 is not zero
    // bits and keeps its sign.
    let cx = Context::cpu();
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I8,
        DType::U64,
        DType::Bool,
        DType::F16,
    ] {
        let zeros = cx.zeros(&[3, 5000], dtype);
        assert_eq!(read(&zeros), vec![0.0; 15_000], "{dtype}");
        let ones = &cx.zeros(&[5000], dtype) + cx.ones(&[5000], dtype);
        assert_eq!(read(&ones.astype(DType::F64)), vec![1.0; 5000], "{dtype}");
    }
    let negative = cx.full(&[5000], -0.0, DType::F64).to_vec::<f64>()?;
    assert!(negative.iter().all(|v| *v == 0.0 && v.is_sign_negative()));
    Ok(())
}

#[test]
fn integer_division_by_one_number_is_the_references_for_every_integer_dtype() -> Result<()> {
    // The register machine divides by a multiply for one divisor: every
    // sign, the extremes (MIN // -1 wraps), 0 and ±1 (the general loop).
    let (cx, want_cx) = (Context::cpu(), reference());
    let values: Vec<i64> = (-300i64..300)
        .map(|v| v * 7919 % 100_003)
        .chain([i64::MIN, i64::MAX, i64::MIN + 1, -1, 0, 1])
        .collect();
    let divisors = [
        7i64,
        -7,
        1,
        -1,
        0,
        2,
        -2,
        1000,
        255,
        i64::MIN,
        i64::MAX,
        641,
    ];
    let integers = DType::ALL
        .into_iter()
        .filter(|d| matches!(d.kind(), Kind::Int | Kind::UInt));
    for dtype in integers {
        for d in divisors {
            let build = |cx: &Context| -> Result<Vec<Array>> {
                let x = cx.from_slice(&values).astype(dtype);
                let d = cx.full(&[], d, DType::I64).astype(dtype);
                Ok(vec![x.floor_div(&d), x.rem(&d), x.fmod(&d)])
            };
            for (got, want) in build(&cx)?.iter().zip(build(&want_cx)?) {
                let (g, w) = (got.astype(DType::I64), want.astype(DType::I64));
                assert_eq!(g.to_vec::<i64>()?, w.to_vec::<i64>()?, "{dtype} by {d}");
            }
        }
    }
    Ok(())
}

#[test]
fn a_kernel_run_again_reads_its_new_inputs_and_arguments() -> Result<()> {
    // A machine keeps its workers' registers between launches: a line it
    // gathered (a strided row read by every row, kept from one chunk to
    // the next) and the arguments it was given must be those of the
    // launch that runs, not of the last one.
    for cx in contexts() {
        let (rows, cols) = (4, 600);
        for (round, scale) in [(1u64, 2.0f64), (2, 3.0), (3, -0.5)] {
            let m = values(rows * cols, round);
            let r = values(2 * cols, round + 10);
            let lazy_m = cx.from_vec(m.clone(), &[rows, cols])?;
            let every_other = cx
                .from_vec(r.clone(), &[2 * cols])?
                .slice_axis(0, None, None, 2);
            let got = (lazy_m * scale + every_other).to_vec::<f64>()?;
            let want: Vec<f64> = (0..rows * cols)
                .map(|i| m[i] * scale + r[2 * (i % cols)])
                .collect();
            assert_eq!(got, want, "round {round}");
        }
        let s = cx.stats();
        assert_eq!(s.kernels_compiled, 1, "{s:?}");
    }
    Ok(())
}
