//! Integer `//`, `%` and `fmod` in kernels: NumPy's semantics (division by
//! zero gives 0, `MIN // -1` wraps, floor and the divisor's sign for `//`
//! and `%`) on every backend, and compiled by the CPU's JIT rather than
//! run on the simulator (region assignment divides indices per element).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::core::BinaryOp;
use lazyfuse::kernel::Kernel;
use lazyfuse::{Array, Context, DType, Result};

const OPS: [BinaryOp; 3] = [BinaryOp::FloorDiv, BinaryOp::Rem, BinaryOp::Fmod];

/// One thread per element: `out_k[i] = ops[k](a[i], b[i])`.
fn divisions(dtype: DType) -> Kernel {
    Kernel::build(&format!("divisions_{dtype}"), |k| {
        let a = k.array("a", dtype, 1);
        let b = k.array("b", dtype, 1);
        let outs = OPS.map(|op| k.array_mut(op.name(), dtype, 1));
        let n = k.scalar("n", DType::I64);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(&n), |k| {
            let (x, y) = (k.let_(a.at(&i)), k.let_(b.at(&i)));
            for (op, out) in OPS.iter().zip(&outs) {
                k.store(out, &i, x.apply_binary(*op, &y));
            }
        });
    })
    .unwrap()
}

/// Every pair of a few telling values: zeros, ±1, the extremes, and
/// operands of each sign with and without a remainder.
fn pairs(dtype: DType) -> (Vec<i128>, Vec<i128>) {
    let (min, max) = match dtype {
        DType::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
        DType::I64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
        DType::U32 => (0, i128::from(u32::MAX)),
        _ => (0, i128::from(u64::MAX)),
    };
    let mut values = vec![0, 1, 2, 3, 7, 12, max];
    if min < 0 {
        values.extend([-1, -2, -3, -7, -12, min]);
    }
    values
        .iter()
        .flat_map(|&x| values.iter().map(move |&y| (x, y)))
        .unzip()
}

/// `values` (each in `dtype`'s range) as an array of `dtype`.
fn array_of(cx: &Context, dtype: DType, values: &[i128]) -> Array {
    let cast = |v: &i128| i64::try_from(*v).unwrap_or(*v as u64 as i64);
    match dtype {
        DType::I32 => cx.from_slice(&values.iter().map(|&v| v as i32).collect::<Vec<_>>()),
        DType::U32 => cx.from_slice(&values.iter().map(|&v| v as u32).collect::<Vec<_>>()),
        DType::I64 => cx.from_slice(&values.iter().map(cast).collect::<Vec<_>>()),
        _ => cx.from_slice(&values.iter().map(|&v| v as u64).collect::<Vec<_>>()),
    }
}

/// An integer array's values, exactly.
fn values_of(x: &Array, dtype: DType) -> Result<Vec<i128>> {
    Ok(match dtype {
        DType::I32 => x.to_vec::<i32>()?.into_iter().map(i128::from).collect(),
        DType::I64 => x.to_vec::<i64>()?.into_iter().map(i128::from).collect(),
        DType::U32 => x.to_vec::<u32>()?.into_iter().map(i128::from).collect(),
        _ => x.to_vec::<u64>()?.into_iter().map(i128::from).collect(),
    })
}

#[test]
fn integer_division_in_kernels_is_numpys_and_compiled_on_the_cpu() -> Result<()> {
    // The element-wise operations on the reference evaluator are what the
    // kernels must give.
    let reference = Context::builder().backend("reference").build()?;
    for dtype in [DType::I32, DType::I64, DType::U32, DType::U64] {
        let (a, b) = pairs(dtype);
        let n = a.len();
        let want = OPS
            .iter()
            .map(|&op| {
                let (x, y) = (
                    array_of(&reference, dtype, &a),
                    array_of(&reference, dtype, &b),
                );
                values_of(&x.apply_binary(op, (&y).into()), dtype)
            })
            .collect::<Result<Vec<_>>>()?;
        assert_eq!(want[0][1], 0, "0 // 1");
        for cx in common::backends() {
            let (x, y) = (array_of(&cx, dtype, &a), array_of(&cx, dtype, &b));
            let outs = [0; 3].map(|_| cx.zeros(&[n], dtype));
            let results = divisions(dtype).launch(
                &cx,
                (n as u32).div_ceil(64),
                64u32,
                &[
                    (&x).into(),
                    (&y).into(),
                    (&outs[0]).into(),
                    (&outs[1]).into(),
                    (&outs[2]).into(),
                    (n as i64).into(),
                ],
            )?;
            if cx.backend_name() == "cpu" {
                let plan = results[0].explain();
                assert!(plan.contains("compiled code (JIT)"), "{plan}");
            }
            for ((op, got), want) in OPS.iter().zip(&results).zip(&want) {
                let got = values_of(got, dtype)?;
                assert_eq!(&got, want, "{op:?} of {dtype} on {}", cx.backend_name());
            }
        }
    }
    Ok(())
}
