//! The CPU backend's compiled kernels (its JIT tier) against the reference
//! evaluator: every operation the JIT compiles, on every dtype it takes,
//! over special values (NaN, infinities, signed zeros, subnormals, integer
//! extremes), at lengths that end in the vector loop and in the scalar
//! tail, with broadcast and strided inputs; reductions; and a check that
//! the code really was compiled.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use lazyfuse::core::{with_dtype, BinaryOp, UnaryOp, Wide};
use lazyfuse::{Array, Context, DType, Element, HostBuffer, JitMode};

const DTYPES: [DType; 6] = [
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
];

/// Lengths: within one vector iteration, vector loop plus tail, several chunks.
const LENGTHS: [usize; 3] = [13, 1003, 20_011];

fn jit() -> Context {
    Context::builder()
        .backend("cpu")
        .jit(JitMode::Always)
        .build()
        .expect("cpu")
}

/// The CPU backend on its register machine only.
fn interpreted() -> Context {
    Context::builder()
        .backend("cpu")
        .jit(JitMode::Never)
        .build()
        .expect("cpu")
}

fn reference() -> Context {
    Context::builder()
        .backend("reference")
        .build()
        .expect("reference")
}

fn is_float(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// Special values of `dtype`, cycled from `offset` to length `n`.
fn values(dtype: DType, n: usize, offset: usize) -> HostBuffer {
    let floats = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.5,
        -2.5,
        2.5,
        0.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e30,
        -1e-30,
        1e-40,
        3.0,
        -7.25,
        123456.75,
        -0.5,
    ];
    let ints: [i128; 14] = [
        0,
        1,
        -1,
        2,
        -7,
        3,
        100,
        -100,
        65_537,
        i32::MAX as i128,
        i32::MIN as i128,
        i64::MAX as i128,
        i64::MIN as i128,
        u64::MAX as i128,
    ];
    with_dtype!(dtype, T => {
        let v: Vec<T> = (0..n)
            .map(|i| {
                // Mix the order so that every pair of values meets.
                let k = offset + i * 7 + i / 5;
                if is_float(dtype) {
                    T::from_wide(Wide::Float(floats[k % floats.len()]))
                } else {
                    T::from_wide(Wide::Int(ints[k % ints.len()]))
                }
            })
            .collect();
        T::into_buffer(v)
    })
}

fn array(cx: &Context, buffer: &HostBuffer, shape: &[usize]) -> Array {
    lazyfuse::core::with_buffer!(buffer, v => cx.from_vec(v.clone(), shape).expect("shape"))
}

/// Equal values: bit for bit (any NaN equals any NaN), or within `rel` when given.
fn same(got: &HostBuffer, want: &HostBuffer, rel: Option<f64>, what: &str) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.len(), want.len(), "{what}: length");
    for i in 0..got.len() {
        let (g, w) = (got.get_wide(i).unwrap(), want.get_wide(i).unwrap());
        let ok = match (g, w, rel) {
            (Wide::Float(g), Wide::Float(w), _) if g.is_nan() || w.is_nan() => {
                g.is_nan() && w.is_nan()
            }
            (Wide::Float(g), Wide::Float(w), Some(rel)) => {
                g == w || (g - w).abs() <= rel * w.abs().max(1e-30)
            }
            (Wide::Float(g), Wide::Float(w), None) => g.to_bits() == w.to_bits(),
            (Wide::Int(g), Wide::Int(w), _) => g == w,
            _ => false,
        };
        assert!(ok, "{what}: element {i}: jit {g:?}, reference {w:?}");
    }
}

/// Builds `f(a, b, c)` over inputs of `dtype` on both backends and compares.
fn check(dtype: DType, what: &str, rel: Option<f64>, f: impl Fn(&Array, &Array, &Array) -> Array) {
    for n in LENGTHS {
        let inputs = [
            values(dtype, n, 0),
            values(dtype, n, 3),
            values(dtype, n, 11),
        ];
        let run = |cx: &Context| {
            let [a, b, c] = inputs.each_ref().map(|v| array(cx, v, &[n]));
            f(&a, &b, &c).to_host().expect("demand")
        };
        same(
            &run(&jit()),
            &run(&reference()),
            rel,
            &format!("{what} {dtype} n={n}"),
        );
    }
}

fn assert_no_failed_compilations() {
    let (compiled, failed) = lazyfuse::codegen::cpu::jit::counts();
    assert!(compiled > 0, "nothing was compiled");
    assert_eq!(failed, 0, "a compilation of a body the JIT accepts failed");
}

#[test]
fn arithmetic_matches_the_reference_bit_for_bit() {
    for dtype in DTYPES {
        let mut ops = vec![
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Minimum,
            BinaryOp::Maximum,
        ];
        if is_float(dtype) {
            ops.push(BinaryOp::Div);
        }
        for op in ops {
            check(dtype, &format!("{op:?}"), None, |a, b, _| {
                a.apply_binary(op, b.into())
            });
            // Broadcast operands: a scalar array, and a weak Rust number.
            check(
                dtype,
                &format!("{op:?} with a 0-d array"),
                None,
                |a, b, _| {
                    let one = b.slice_axis(0, Some(2), Some(3), 1).reshape(&[]);
                    a.apply_binary(op, (&one).into())
                },
            );
            check(dtype, &format!("{op:?} with 3"), None, |a, _, _| {
                a.apply_binary(op, 3.into())
            });
        }
        let mut unary = vec![UnaryOp::Neg, UnaryOp::Square];
        if dtype != DType::U32 && dtype != DType::U64 {
            unary.push(UnaryOp::Abs);
        }
        if is_float(dtype) {
            unary.extend([
                UnaryOp::Sqrt,
                UnaryOp::Floor,
                UnaryOp::Ceil,
                UnaryOp::Trunc,
                UnaryOp::Round,
            ]);
        }
        for op in unary {
            check(dtype, &format!("{op:?}"), None, |a, _, _| a.apply_unary(op));
        }
        // A chain, as fusion makes them.
        check(dtype, "a*b + c", None, |a, b, c| a * b + c);
    }
    assert_no_failed_compilations();
}

#[test]
fn comparisons_predicates_and_logic_through_where() {
    let comparisons = [
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
    ];
    for dtype in DTYPES {
        for op in comparisons {
            check(dtype, &format!("where {op:?}"), None, |a, b, _| {
                a.apply_binary(op, b.into()).where_(a, b)
            });
            // Comparisons of bools (false < true).
            check(dtype, &format!("where bool {op:?}"), None, |a, b, c| {
                let x = a.lt(b);
                let y = b.lt(c);
                x.apply_binary(op, (&y).into()).where_(a, c)
            });
        }
        for op in [
            BinaryOp::LogicalAnd,
            BinaryOp::LogicalOr,
            BinaryOp::LogicalXor,
        ] {
            check(dtype, &format!("where {op:?}"), None, |a, b, c| {
                a.lt(b).apply_binary(op, (&b.ge(c)).into()).where_(b, c)
            });
        }
        check(dtype, "where not", None, |a, b, c| {
            a.lt(b).apply_unary(UnaryOp::LogicalNot).where_(c, a)
        });
        if is_float(dtype) {
            for op in [UnaryOp::IsNan, UnaryOp::IsInf, UnaryOp::IsFinite] {
                check(dtype, &format!("where {op:?}"), None, |a, b, _| {
                    a.apply_unary(op).where_(a, b)
                });
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn reductions_match_the_reference() {
    for dtype in DTYPES {
        // Integer and min/max results are exact; float sums and products
        // may round differently (another summation order).
        let sums = if is_float(dtype) { Some(1e-5) } else { None };
        check(dtype, "sum", sums, |a, b, _| (a - b).sum());
        check(dtype, "max", None, |a, b, _| (a * b).max());
        check(dtype, "min", None, |a, b, _| (a + b).min());
        let low = if matches!(dtype, DType::U32 | DType::U64) {
            0
        } else {
            -2
        };
        check(dtype, "prod", sums, |a, _, _| {
            a.minimum(2).maximum(low).prod()
        });
        // Along an axis, both layouts: the reduced axis last and first.
        for n in LENGTHS {
            let rows = 5;
            let x = values(dtype, rows * n, 1);
            let run = |cx: &Context, axis: usize| {
                let m = array(cx, &x, &[rows, n]);
                (&m * 2).sum_axis(axis).to_host().expect("demand")
            };
            for axis in [0, 1] {
                same(
                    &run(&jit(), axis),
                    &run(&reference(), axis),
                    sums,
                    &format!("sum_axis({axis}) {dtype} n={n}"),
                );
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn broadcast_and_strided_inputs() {
    for dtype in [DType::F32, DType::I64] {
        for n in [7, 300, 9000] {
            let rows = 4;
            let (x, r, k) = (
                values(dtype, rows * n, 0),
                values(dtype, n, 5),
                values(dtype, rows, 9),
            );
            let run = |cx: &Context| {
                let m = array(cx, &x, &[rows, n]);
                let r = array(cx, &r, &[n]);
                let k = array(cx, &k, &[rows, 1]);
                let t = array(cx, &x, &[n, rows]).transpose();
                [
                    (&m + &r * &k).to_host().expect("rows"),
                    (&m - &t).to_host().expect("transposed"),
                    (&m * &k).max_axis(1).to_host().expect("reduced"),
                ]
            };
            for (got, want) in run(&jit()).iter().zip(&run(&reference())) {
                same(got, want, None, &format!("broadcast {dtype} n={n}"));
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn explain_says_which_kernels_are_compiled() {
    let cx = jit();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let b = cx.from_slice(&[0.5f32, 0.25, 4.0]);
    let compiled = (&a * &b + 1.0).explain();
    assert!(
        compiled.contains("k0 runs on compiled code (JIT)"),
        "{compiled}"
    );
    let whole = cx.from_slice(&[1i64, 2, 3]);
    // i64 to f32 rounds twice through the JIT's conversions: not compiled.
    let on_machine = (whole.astype(DType::F32) * &b).explain();
    assert!(
        on_machine
            .contains("k0 runs on the register machine (an operation the JIT does not compile)"),
        "{on_machine}"
    );
    let never = interpreted();
    let a = never.from_slice(&[1.0f32, 2.0]);
    assert!((&a + 1.0)
        .explain()
        .contains("register machine (JitMode::Never)"));
}

#[test]
fn reductions_over_leading_axes_take_lines_together() {
    // Several rows per compiled call: rows that are lines, with a per-row
    // broadcast value (k), a per-column one (r), reversed rows (a negative
    // step from line to line), and group boundaries (8 rows) inside blocks.
    for dtype in [DType::F32, DType::F64, DType::I64] {
        let sums = if is_float(dtype) { Some(1e-5) } else { None };
        // Short lines too (16, 17 and 64 elements: several to a call).
        for (rows, n) in [
            (3, 300),
            (8, 1003),
            (21, 300),
            (70, 1003),
            (300, 16),
            (41, 17),
            (257, 64),
        ] {
            let (x, r, k) = (
                values(dtype, rows * n, 2),
                values(dtype, n, 4),
                values(dtype, rows, 6),
            );
            let run = |cx: &Context| {
                let m = array(cx, &x, &[rows, n]);
                let r = array(cx, &r, &[n]);
                let k = array(cx, &k, &[rows, 1]);
                let reversed = m.slice_axis(0, None, None, -1);
                [
                    (&m + &r * &k).sum_axis(0).to_host().expect("sum"),
                    (&reversed * 2).max_axis(0).to_host().expect("max"),
                    (&reversed - &r).min_axis(0).to_host().expect("min"),
                    // An input reduced as it is: compiled code stores nothing.
                    reversed.max_axis(0).to_host().expect("max of a leaf"),
                ]
            };
            let (got, want) = (run(&jit()), run(&reference()));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let rel = if i == 0 { sums } else { None };
                same(
                    g,
                    w,
                    rel,
                    &format!("leading reduction {i} {dtype} {rows}x{n}"),
                );
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn element_wise_lines_take_several_to_a_call() {
    // Whole lines of a 2-D domain to one compiled call: a row broadcast
    // (r), a column broadcast (k), a slice of a larger array (the heat
    // equation's neighbours), two outputs; lines of 16, 17, 64 and 300
    // elements, task and chunk boundaries inside the rows.
    for dtype in [DType::F32, DType::F64, DType::I32] {
        for (rows, n) in [(5, 16), (3000, 17), (1200, 64), (700, 300)] {
            let (x, r, k) = (
                values(dtype, (rows + 2) * (n + 2), 1),
                values(dtype, n, 5),
                values(dtype, rows, 7),
            );
            let run = |cx: &Context| {
                let u = array(cx, &x, &[rows + 2, n + 2]);
                let inner =
                    u.slice_axis(0, Some(1), Some(-1), 1)
                        .slice_axis(1, Some(1), Some(-1), 1);
                let up = u
                    .slice_axis(0, None, Some(-2), 1)
                    .slice_axis(1, Some(1), Some(-1), 1);
                let r = array(cx, &r, &[n]);
                let k = array(cx, &k, &[rows, 1]);
                let a = &inner * &r + &k - &up;
                let b = &inner - &r * &k;
                cx.eval(&[&a, &b]).expect("demand");
                [a.to_host().expect("a"), b.to_host().expect("b")]
            };
            let (got, want) = (run(&jit()), run(&reference()));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                same(g, w, None, &format!("lines {i} {dtype} {rows}x{n}"));
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn casts_within_a_lane_width_and_through_bool() {
    // Floats saturate into integers (NaN to 0), integers wrap, bools are 0/1
    // and a number is true unless it is 0 (NaN is true).
    let pairs = [
        (DType::F32, DType::I32),
        (DType::F32, DType::U32),
        (DType::I32, DType::F32),
        (DType::U32, DType::F32),
        (DType::I32, DType::U32),
        (DType::U32, DType::I32),
        (DType::F64, DType::I64),
        (DType::F64, DType::U64),
        (DType::I64, DType::F64),
        (DType::U64, DType::F64),
        (DType::I64, DType::U64),
        (DType::U64, DType::I64),
    ];
    check_casts(&pairs, 2);
    for dtype in DTYPES {
        // Through bool both ways, in bodies of that width.
        check(dtype, "cast to bool and back", None, |a, _, _| {
            a.astype(DType::Bool).astype(dtype)
        });
        check(dtype, "a comparison as a number", None, |a, b, _| {
            a.lt(b).astype(dtype) + a
        });
        check(dtype, "truthiness in where", None, |a, b, c| {
            a.astype(DType::Bool).where_(b, c)
        });
    }
    assert_no_failed_compilations();
}

/// Each cast `(from, to)` alone, and in a chain `(a + b).astype(to) * factor`.
fn check_casts(pairs: &[(DType, DType)], factor: i32) {
    for &(from, to) in pairs {
        check(from, &format!("cast to {to}"), None, |a, _, _| a.astype(to));
        check(
            from,
            &format!("cast to {to} in a chain"),
            None,
            |a, b, _| (a + b).astype(to) * factor,
        );
    }
}

/// Builds `f(a, b)` over `a` of dtype `x` and `b` of dtype `y` on both
/// backends and compares.
fn check_mixed(
    x: DType,
    y: DType,
    what: &str,
    rel: Option<f64>,
    f: impl Fn(&Array, &Array) -> Array,
) {
    for n in LENGTHS {
        let inputs = [values(x, n, 0), values(y, n, 5)];
        let run = |cx: &Context| {
            let a = array(cx, &inputs[0], &[n]);
            let b = array(cx, &inputs[1], &[n]);
            f(&a, &b).to_host().expect("demand")
        };
        same(
            &run(&jit()),
            &run(&reference()),
            rel,
            &format!("{what} {x}/{y} n={n}"),
        );
    }
}

#[test]
fn casts_across_widths_and_mixed_bodies() {
    let casts = [
        (DType::F32, DType::F64),
        (DType::F64, DType::F32),
        (DType::I32, DType::I64),
        (DType::I32, DType::U64),
        (DType::U32, DType::I64),
        (DType::U32, DType::U64),
        (DType::I64, DType::I32),
        (DType::U64, DType::U32),
        (DType::I64, DType::U32),
        (DType::I32, DType::F64),
        (DType::U32, DType::F64),
    ];
    check_casts(&casts, 3);
    // Bodies with 32- and 64-bit values: NumPy promotion casts inside the
    // kernel, masks of one width select values of the other.
    for (x, y) in [
        (DType::F32, DType::F64),
        (DType::I32, DType::F64),
        (DType::F32, DType::I64),
    ] {
        check_mixed(x, y, "a + b", None, |a, b| a + b);
        check_mixed(x, y, "where(a < b, a, b*2)", None, |a, b| {
            a.lt(b).where_(a, b * 2)
        });
        check_mixed(x, y, "where(b < 1, a, 7)", None, |a, b| {
            b.lt(1).where_(a, 7)
        });
        check_mixed(x, y, "logic across widths", None, |a, b| {
            a.gt(0).logical_and(b.gt(1)).where_(a, b)
        });
        check_mixed(x, y, "max of a*b", None, |a, b| (a * b).max());
        let sums = if is_float(x) || is_float(y) {
            Some(1e-5)
        } else {
            None
        };
        check_mixed(x, y, "sum of a*b", sums, |a, b| (a * b).sum());
        check_mixed(x, y, "count of a > b", None, |a, b| a.gt(b).sum());
    }
    assert_no_failed_compilations();
}

/// Finite values of mixed signs and magnitudes (an LCG).
fn finite(dtype: DType, n: usize, seed: u64) -> HostBuffer {
    let mut state = seed;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            unit * 10f64.powi((state % 7) as i32 - 3)
        })
        .collect();
    with_dtype!(dtype, T => T::into_buffer(v.iter().map(|&x| T::from_wide(Wide::Float(x))).collect()))
}

#[test]
fn reductions_give_the_same_bits_compiled_or_not() {
    // Tiering (JitMode::Auto) switches a kernel from the register machine
    // to compiled code once it has run enough: a sum must not change its
    // last bits then. Both reduce the same blocks the same way.
    let never = interpreted();
    for dtype in [DType::F32, DType::F64] {
        for (rows, n) in [
            (1, 1),
            (1, 37),
            (1, 513),
            (1, 70_001),
            (3, 255),
            (5, 1000),
            (7, 8195),
            (2, 65_600),
        ] {
            // Finite values of mixed magnitudes (sums that round), and the
            // special values (NaN, infinities, zeros) for min and max.
            let (x, y) = (finite(dtype, rows * n, 3), finite(dtype, rows * n, 8));
            let special = values(dtype, rows * n, 1);
            let run = |cx: &Context| {
                let s = array(cx, &special, &[rows, n]);
                let a = array(cx, &x, &[rows, n]);
                let b = array(cx, &y, &[rows, n]);
                let t = array(cx, &x, &[n, rows]).transpose();
                [
                    (&a * &b).sum().to_host().expect("sum"),
                    (&a - &b).sum_axis(1).to_host().expect("sum_axis"),
                    (&t + 1.5).sum_axis(1).to_host().expect("strided"),
                    (&a * 0.5).prod_axis(1).to_host().expect("prod"),
                    (&a * &b).max_axis(1).to_host().expect("max"),
                    (&a + &b).min().to_host().expect("min"),
                    (&s * 2).max_axis(1).to_host().expect("special max"),
                    (&s - 1).min().to_host().expect("special min"),
                ]
            };
            for (i, (g, w)) in run(&jit()).iter().zip(&run(&never)).enumerate() {
                same(g, w, None, &format!("reduction {i} {dtype} {rows}x{n}"));
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn streaming_stores_write_the_same_values() {
    // `streaming_threshold(0)` makes every compiled element-wise launch
    // write its outputs through staging tiles and streaming stores: every
    // dtype the JIT takes, one kernel with three outputs of two widths,
    // lengths that end inside a tile, an output at every 4-byte offset from
    // a 16-byte boundary (`read_into` a slice starting 0-3 elements into a
    // buffer), launches large enough to run in parallel.
    let streaming = Context::builder()
        .backend("cpu")
        .jit(JitMode::Always)
        .streaming_threshold(0)
        .build()
        .expect("cpu");
    let plain = Context::builder()
        .backend("cpu")
        .jit(JitMode::Always)
        .streaming_threshold(usize::MAX)
        .build()
        .expect("cpu");
    for dtype in DTYPES {
        for n in [1, 13, 255, 257, 1003, 70_001, 600_000] {
            let (x, y) = (values(dtype, n, 0), values(dtype, n, 5));
            let run = |cx: &Context| {
                let (a, b) = (array(cx, &x, &[n]), array(cx, &y, &[n]));
                // The three outputs share `p`: one kernel writes them all.
                let p = &a * &b;
                let sum = &p + &a;
                let wider = (&p + 1).astype(DType::F64);
                let diff = &p - &b;
                cx.reset_stats();
                cx.eval(&[&sum, &wider, &diff]).expect("eval");
                assert_eq!(cx.stats().kernel_launches, 1, "{dtype} n={n}: one kernel");
                let mut all = vec![
                    sum.to_host().expect("sum"),
                    wider.to_host().expect("wider"),
                    diff.to_host().expect("diff"),
                ];
                for skip in 0..4 {
                    let mut buffer = vec![0f32; n + skip];
                    (p.astype(DType::F32) + 1.0)
                        .read_into(&mut buffer[skip..])
                        .expect("read_into");
                    all.push(std::sync::Arc::new(f32::into_buffer(
                        buffer[skip..].to_vec(),
                    )));
                }
                all
            };
            for (i, (g, w)) in run(&streaming).iter().zip(&run(&plain)).enumerate() {
                same(g, w, None, &format!("streamed output {i} {dtype} n={n}"));
            }
        }
    }
    assert_no_failed_compilations();
}

/// An operation of one or two operands, as a test case.
type OneOp = dyn Fn(&Array, &Array) -> Array;

/// The JIT's table (what `jit::accepts` says it compiles) against its
/// lowering and the reference: every unary and binary operation on every
/// dtype, alone in a kernel. An operation the table admits but the lowering
/// has no arm for shows up as a failed compilation; a wrong arm as a value
/// that differs from the reference.
/// Bitwise operations, and shifts by one count for every element (a
/// random array's `>> 40`), are compiled on every integer dtype and give
/// the reference's values: counts past the width and negative ones give
/// 0, or the sign in every bit for a signed value shifted right.
#[test]
fn bitwise_operations_and_shifts_by_one_count_are_compiled_exactly() {
    for dtype in [DType::I32, DType::I64, DType::U32, DType::U64] {
        let bits = dtype.size() as i64 * 8;
        let mut cases: Vec<(String, Box<OneOp>)> = Vec::new();
        for op in [
            BinaryOp::BitwiseAnd,
            BinaryOp::BitwiseOr,
            BinaryOp::BitwiseXor,
        ] {
            cases.push((
                format!("{op}"),
                Box::new(move |a, b| a.apply_binary(op, b.into())),
            ));
        }
        for op in [BinaryOp::LeftShift, BinaryOp::RightShift] {
            for count in [0, 1, 7, bits / 2, bits - 1, bits, bits + 3, -1, -bits] {
                cases.push((
                    format!("{op} by {count}"),
                    Box::new(move |a, b| a.apply_binary(op, count.into()) ^ b),
                ));
            }
        }
        for n in LENGTHS {
            let inputs = [values(dtype, n, 0), values(dtype, n, 3)];
            for (name, f) in &cases {
                let run = |cx: &Context| {
                    let [a, b] = inputs.each_ref().map(|v| array(cx, v, &[n]));
                    f(&a, &b)
                };
                let got = run(&jit());
                if got.check().is_err() {
                    continue; // a negative count of an unsigned dtype: a typing error
                }
                assert!(
                    got.explain().contains("k0 runs on compiled code (JIT)"),
                    "{name} {dtype}: {}",
                    got.explain()
                );
                same(
                    &got.to_host().expect("jit"),
                    &run(&reference()).to_host().expect("reference"),
                    None,
                    &format!("{name} {dtype} n={n}"),
                );
            }
        }
    }
    assert_no_failed_compilations();
}

#[test]
fn every_operation_on_every_dtype_agrees_with_the_jit_table() {
    let n = 1003;
    let (jit_cx, reference_cx) = (jit(), reference());
    let mut accepted = 0;
    for dtype in DTYPES {
        let inputs = [values(dtype, n, 0), values(dtype, n, 3)];
        let build = |cx: &Context, op: &dyn Fn(&Array, &Array) -> Array| {
            let [a, b] = inputs.each_ref().map(|v| array(cx, v, &[n]));
            op(&a, &b)
        };
        let mut cases: Vec<(String, Box<OneOp>)> = Vec::new();
        for &op in UnaryOp::ALL {
            cases.push((format!("{op}"), Box::new(move |a, _| a.apply_unary(op))));
        }
        for &op in BinaryOp::ALL {
            cases.push((
                format!("{op}"),
                Box::new(move |a, b| a.apply_binary(op, b.into())),
            ));
        }
        for (name, op) in &cases {
            let got = build(&jit_cx, op.as_ref());
            if got.check().is_err() {
                continue; // not defined on this dtype (typing says so for every backend)
            }
            if got.explain().contains("k0 runs on compiled code (JIT)") {
                accepted += 1;
            }
            let want = build(&reference_cx, op.as_ref())
                .to_host()
                .expect("reference");
            // Transcendental functions run on the register machine's
            // vectorised math (within 2 ulp); everything else is exact.
            same(
                &got.to_host().expect("jit"),
                &want,
                Some(1e-6),
                &format!("{name} {dtype}"),
            );
        }
    }
    // 66 pairs when this test was written: the JIT may only grow. (An
    // operation compiled as a call is not compiled alone: see
    // `operations_compiled_as_calls_give_the_machines_bits`.)
    assert!(accepted >= 66, "only {accepted} (op, dtype) pairs compiled");
    assert_no_failed_compilations();
}

/// Generated positions (`arange`, and so `linspace` and index arithmetic)
/// are compiled: read from the chunk register they are gathered into, in
/// element-wise kernels and reductions, along a transpose (strided
/// positions) and in f32 bodies (two 64-bit vectors per group); the
/// values are the reference's.
#[test]
fn generated_positions_are_compiled() {
    let (cx, reference) = (jit(), reference());
    let build = |cx: &Context, n: usize| {
        let i = cx.arange(0.0, n as f64, 1.0, DType::I64);
        let x = cx.arange(-1.5, n as f64 - 1.5, 1.0, DType::F64);
        let grid = cx
            .arange(0.0, n as f64, 1.0, DType::F32)
            .reshape(&[n / 4, 4])
            .transpose();
        let mixed = (&i * 3i64 - 5i64).astype(DType::F64) * &x + 0.25;
        let squares = (&x * &x).sum();
        let f32_body = &grid * 0.5f32 + 1.0f32;
        (mixed, squares, f32_body)
    };
    for n in [16, 1004, 80_000] {
        let (mixed, squares, f32_body) = build(&cx, n);
        let (want_mixed, want_squares, want_f32) = build(&reference, n);
        for plan in [mixed.explain(), squares.explain(), f32_body.explain()] {
            assert!(plan.contains("k0 runs on compiled code (JIT)"), "{plan}");
        }
        same(
            &mixed.to_host().unwrap(),
            &want_mixed.to_host().unwrap(),
            None,
            "mixed",
        );
        same(
            &f32_body.to_host().unwrap(),
            &want_f32.to_host().unwrap(),
            None,
            "f32 body",
        );
        same(
            &squares.to_host().unwrap(),
            &want_squares.to_host().unwrap(),
            Some(1e-12),
            "squares",
        );
    }
    assert_no_failed_compilations();
}

/// Operations Cranelift has no instruction for (the math functions,
/// `power`, `arctan2`, integer `//` and `%`, ...) are compiled as calls of
/// the register machine's loops over an iteration's elements, so compiled
/// code gives the machine's bits: every such operation on every dtype,
/// inside a chain whose other values stay in registers (f64 values in an
/// f32 body take two vectors per group), at lengths ending in the wide
/// loop, the vector loop and the scalar tail, with a broadcast operand and
/// a constant one on either side.
/// Alone, such an operation runs on the machine (whole tiles a call).
#[test]
fn operations_compiled_as_calls_give_the_machines_bits() {
    let machine = interpreted();
    let compiled = jit();
    let unary = [
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tanh,
        UnaryOp::Tan,
        UnaryOp::Sign,
    ];
    let binary = [BinaryOp::Pow, BinaryOp::FloorDiv, BinaryOp::Rem];
    for dtype in DTYPES {
        for n in LENGTHS {
            let inputs = [values(dtype, n, 0), values(dtype, n, 5)];
            let run = |cx: &Context, f: &dyn Fn(&Array, &Array) -> Array| {
                let [a, b] = inputs.each_ref().map(|v| array(cx, v, &[n]));
                let result = f(&a, &b);
                let plan = result.explain();
                (result.to_host().ok(), plan)
            };
            let mut cases: Vec<(String, Box<OneOp>)> = Vec::new();
            for op in unary {
                cases.push((
                    format!("{op} in a chain"),
                    Box::new(move |a, b| ((a * b + a) * b).apply_unary(op) * b + a),
                ));
            }
            for op in binary {
                cases.push((
                    format!("{op} in a chain"),
                    Box::new(move |a, b| (a * b + a).apply_binary(op, b.into()) * b + a),
                ));
                // A constant operand on either side.
                cases.push((
                    format!("{op} by 3"),
                    Box::new(move |a, b| (a * b + a).apply_binary(op, 3.into()) * b - a),
                ));
                cases.push((
                    format!("3 {op} a chain"),
                    Box::new(move |a, b| (a * b + a).apply_binary_reversed(op, 3.into()) * b - a),
                ));
            }
            if dtype == DType::F32 {
                cases.push((
                    "exp of f64 in an f32 body".into(),
                    Box::new(|a, b| (a.astype(DType::F64).exp() * 0.5).astype(DType::F32) + b),
                ));
            }
            for (name, f) in &cases {
                let (got, plan) = run(&compiled, f.as_ref());
                let Some(got) = got else {
                    continue; // not defined on this dtype
                };
                assert!(
                    plan.contains("k0 runs on compiled code (JIT)"),
                    "{name} {dtype}: {plan}"
                );
                assert!(!plan.contains("k1 "), "{name} {dtype}: one kernel: {plan}");
                let (want, _) = run(&machine, f.as_ref());
                same(
                    &got,
                    &want.expect("machine"),
                    None,
                    &format!("{name} {dtype} n={n}"),
                );
            }
        }
    }
    assert_no_failed_compilations();
}

/// The Philox generator compiled as a call gives the machine's bits: in a
/// random array's body (one key for every element, the rounds sixteen
/// counters at a time) and with a key per element; Monte Carlo π's body
/// (two generators, casts, a comparison and a sum) compiles whole.
#[test]
fn random_bits_compiled_as_calls_are_the_machines() {
    let machine = interpreted();
    let compiled = jit();
    for n in LENGTHS {
        let run = |cx: &Context| {
            let keys = array(cx, &values(DType::U64, n, 3), &[n]);
            let u = cx.random_uniform(&[n], DType::F32, 7);
            let v = cx.random_uniform(&[n], DType::F32, 8);
            let per_element = (cx.arange(0.0, n as f64, 1.0, DType::U64) * 3u64 + 1u64)
                .apply_binary(BinaryOp::Philox, (&keys).into());
            let inside = (&u * &u + &v * &v).lt(1.0).astype(DType::F64).sum();
            [(&u * 2.0 - 1.0), per_element, inside].map(|a| {
                let plan = a.explain();
                (a.to_host().unwrap(), plan)
            })
        };
        let (got, want) = (run(&compiled), run(&machine));
        for (k, ((g, plan), (w, _))) in got.iter().zip(&want).enumerate() {
            assert!(
                plan.contains("k0 runs on compiled code (JIT)"),
                "case {k} n={n}: {plan}"
            );
            same(g, w, None, &format!("random case {k} n={n}"));
        }
    }
    assert_no_failed_compilations();
}

/// Reductions of values computed by calls, compiled as the machine runs
/// them: whole (the reduce form, its wide loop's accumulators in the
/// vector loop's order), over the last axis, and over the first (the
/// accumulate form), `max` with NaNs among the values.
#[test]
fn reductions_of_called_operations_give_the_machines_bits() {
    let machine = interpreted();
    let compiled = jit();
    for dtype in [DType::F32, DType::F64] {
        for (rows, cols) in [(3, 1003), (40, 517), (1, 20_011)] {
            let n = rows * cols;
            let (x, y) = (values(dtype, n, 0), finite(dtype, n, 7));
            let run = |cx: &Context, compiled: bool| {
                let (a, b) = (array(cx, &x, &[rows, cols]), array(cx, &y, &[rows, cols]));
                let e = ((&b * 0.25 + 1.0) * 0.5 - 0.125).exp();
                let s = ((&a * &b + &b) * 0.5 - &a).sin();
                [
                    e.sum(),
                    e.sum_axis(1),
                    e.sum_axis(0),
                    s.max(),
                    s.max_axis(1),
                    s.max_axis(0),
                ]
                .map(|r| {
                    let plan = r.explain();
                    // (A sum over an axis of length 1 is a view: no kernel.)
                    assert!(
                        !compiled
                            || plan.contains("on compiled code (JIT)")
                            || plan.contains(", 0 kernels"),
                        "{plan}"
                    );
                    r.to_host().expect("demand")
                })
            };
            let (got, want) = (run(&compiled, true), run(&machine, false));
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                same(
                    g,
                    w,
                    None,
                    &format!("reduction {k} of {dtype} ({rows}, {cols})"),
                );
            }
        }
    }
    assert_no_failed_compilations();
}
