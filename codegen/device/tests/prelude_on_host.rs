//! The CUDA prelude's element operations executed on the host: its integer,
//! float and bool part is plain C++ (only the half types and casts need
//! CUDA headers), so the host's C++ compiler builds it and every
//! (operation, dtype) the printer can call runs over edge-case values. The
//! results must equal core's semantics, the single definition every
//! backend agrees with: bit for bit, except the transcendental functions
//! (host libm against Rust's, within 4 ulp; `lgamma` within 4 ulp of 1
//! where its magnitude is below 1). No GPU runs the prelude here; this is
//! what checks its arithmetic until one does. Skips, saying so, where there
//! is no C++ compiler.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write;
use std::process::Command;

use lazyfuse_core::reference::kernels;
use lazyfuse_core::typing::{plan_binary, plan_unary, OperandType, UnaryPlan};
use lazyfuse_core::{BinaryOp, DType, HostBuffer, Op, UnaryClass, UnaryOp, Wide};
use lazyfuse_device::cuda::{c_type, prelude};

/// The dtypes the host can run: all but f16 and bf16.
const DTYPES: [DType; 11] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
];

/// The prelude from its first macro to the casts (which need CUDA's half types).
fn host_part() -> String {
    let text = prelude();
    let start = text.find("#define LF_COMPARE").expect("LF_COMPARE");
    let end = text.find("// Float to integer").expect("the casts");
    text[start..end].to_string()
}

/// Edge cases of each dtype, as f64/i128 values.
fn samples(dtype: DType) -> Vec<Wide> {
    let ints = |values: &[i128]| values.iter().map(|&v| Wide::Int(v)).collect();
    match dtype {
        DType::Bool => ints(&[0, 1]),
        DType::F32 | DType::F64 => [
            0.0,
            -0.0,
            1.0,
            -2.5,
            7.25,
            0.1,
            1e30,
            -3.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]
        .iter()
        .map(|&v| Wide::Float(v))
        .collect(),
        d => {
            let (min, max) = d.int_range().unwrap();
            let mut values = vec![0, 1, 2, 3, 7, 9, max, max - 1, min, min + 1];
            if min < 0 {
                values.extend([-1, -2, -7, -9]);
            }
            let bits = 8 * d.size() as i128;
            values.extend([bits - 1, bits, bits + 1].iter().filter(|&&v| v <= max));
            ints(&values)
        }
    }
}

/// `values` as a buffer of `dtype`: integers exactly (those above 2^53 do
/// not survive a trip through f64), floats and bool through f64.
fn buffer(dtype: DType, values: &[Wide]) -> HostBuffer {
    let ints: Vec<i128> = values.iter().map(|&w| i128_of(w)).collect();
    match dtype {
        DType::I8 => HostBuffer::I8(ints.iter().map(|&v| v as i8).collect()),
        DType::I16 => HostBuffer::I16(ints.iter().map(|&v| v as i16).collect()),
        DType::I32 => HostBuffer::I32(ints.iter().map(|&v| v as i32).collect()),
        DType::I64 => HostBuffer::I64(ints.iter().map(|&v| v as i64).collect()),
        DType::U8 => HostBuffer::U8(ints.iter().map(|&v| v as u8).collect()),
        DType::U16 => HostBuffer::U16(ints.iter().map(|&v| v as u16).collect()),
        DType::U32 => HostBuffer::U32(ints.iter().map(|&v| v as u32).collect()),
        DType::U64 => HostBuffer::U64(ints.iter().map(|&v| v as u64).collect()),
        _ => HostBuffer::F64(values.iter().map(|w| w.as_f64()).collect()).cast(dtype),
    }
}

/// One call the printer can make: `lf_<op>` on operands of `dtype`.
struct Case {
    op: Op,
    name: &'static str,
    dtype: DType,
    out: DType,
    arity: usize,
    /// `None`: bit for bit; `Some(floor)`: within 4 ulp of the larger of
    /// the result's magnitude and `floor`.
    tolerance: Option<f64>,
}

/// Every (operation, dtype) whose normalised form calls `lf_<op>` on that
/// dtype itself: what the printer emits.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for dtype in DTYPES {
        for &op in UnaryOp::ALL {
            if let Ok(UnaryPlan::Apply {
                operand,
                op: planned,
                out,
            }) = plan_unary(op, dtype)
            {
                if operand == dtype && planned == op {
                    let exact = !matches!(op.class(), UnaryClass::Float)
                        || matches!(op, UnaryOp::Sqrt | UnaryOp::Deg2rad | UnaryOp::Rad2deg);
                    // ln|Γ| is accurate to ulps of 1 near its zeros (the
                    // libms differ there by more than 4 ulp of the result).
                    let floor = if op == UnaryOp::Lgamma { 1.0 } else { 0.0 };
                    cases.push(Case {
                        op: Op::Unary(op),
                        name: op.name(),
                        dtype,
                        out,
                        arity: 1,
                        tolerance: (!exact).then_some(floor),
                    });
                }
            }
        }
        for &op in BinaryOp::ALL {
            let strong = OperandType::Strong(dtype);
            if let Ok(plan) = plan_binary(op, strong, strong) {
                if plan.operand == dtype && plan.op == op {
                    let exact = !matches!(op, BinaryOp::Pow | BinaryOp::Arctan2 | BinaryOp::Hypot);
                    cases.push(Case {
                        op: Op::Binary(op),
                        name: op.name(),
                        dtype,
                        out: plan.out,
                        arity: 2,
                        tolerance: (!exact).then_some(0.0),
                    });
                }
            }
        }
    }
    cases
}

/// A C++ literal of `value` in `dtype` (floats by their bits).
fn literal(dtype: DType, value: Wide) -> String {
    match dtype {
        DType::F32 => format!("bits_f({:#x}u)", (value.as_f64() as f32).to_bits()),
        DType::F64 => format!("bits_d({:#x}ull)", value.as_f64().to_bits()),
        DType::Bool => (if value.as_f64() != 0.0 {
            "true"
        } else {
            "false"
        })
        .into(),
        d => format!("({})({}ll)", c_type(d), i128_of(value) as i64),
    }
}

fn i128_of(value: Wide) -> i128 {
    match value {
        Wide::Int(i) => i,
        Wide::Float(f) => f as i128,
    }
}

/// The printed result as core would render it: integers as decimal, floats as bits.
fn printed(dtype: DType, value: Wide) -> String {
    match dtype {
        DType::F32 => format!("{:x}", (value.as_f64() as f32).to_bits()),
        DType::F64 => format!("{:x}", value.as_f64().to_bits()),
        DType::Bool => format!("{}", u8::from(value.as_f64() != 0.0)),
        _ => format!("{}", i128_of(value)),
    }
}

fn print_statement(dtype: DType, call: &str) -> String {
    match dtype {
        DType::F32 => format!("  {{ float r = {call}; unsigned int b; memcpy(&b, &r, 4); printf(\"%x\\n\", b); }}\n"),
        DType::F64 => format!("  {{ double r = {call}; unsigned long long b; memcpy(&b, &r, 8); printf(\"%llx\\n\", b); }}\n"),
        DType::Bool => format!("  printf(\"%d\\n\", (int)({call}));\n"),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => format!("  printf(\"%llu\\n\", (unsigned long long)({call}));\n"),
        _ => format!("  printf(\"%lld\\n\", (long long)({call}));\n"),
    }
}

/// Within 4 ulp of the larger of `want`'s magnitude and `floor` (NaN
/// equals NaN).
fn close(dtype: DType, got: &str, want: &str, floor: f64) -> bool {
    let parse = |s: &str| u64::from_str_radix(s, 16).unwrap();
    let (g, w) = (parse(got), parse(want));
    let (g, w) = if dtype == DType::F32 {
        (
            f64::from(f32::from_bits(g as u32)),
            f64::from(f32::from_bits(w as u32)),
        )
    } else {
        (f64::from_bits(g), f64::from_bits(w))
    };
    let ulp = if dtype == DType::F32 {
        2f64.powi(-23)
    } else {
        2f64.powi(-52)
    };
    (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 4.0 * ulp * w.abs().max(floor)
}

#[test]
fn the_prelude_computes_what_core_computes_on_the_host() {
    let dir = env!("CARGO_TARGET_TMPDIR");
    let mut program = String::from(
        "#include <stdio.h>\n#include <string.h>\n#include <math.h>\n#define LF_D static inline\n\
         static unsigned int __umulhi(unsigned int a, unsigned int b) \
         { return (unsigned int)(((unsigned long long)a * b) >> 32); }\n\
         static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }\n\
         static int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }\n\
         static int __ffsll(long long x) { return __builtin_ffsll(x); }\n\
         static unsigned long long __brevll(unsigned long long x) \
         { unsigned long long r = 0; for (int i = 0; i < 64; i++) { r = (r << 1) | (x & 1); x >>= 1; } return r; }\n\
         static float bits_f(unsigned int b) { float f; memcpy(&f, &b, 4); return f; }\n\
         static double bits_d(unsigned long long b) { double d; memcpy(&d, &b, 8); return d; }\n",
    );
    program.push_str(&host_part());
    program.push_str("int main(void) {\n");
    let mut expected: Vec<(String, DType, Option<f64>, String)> = Vec::new();
    for case in cases() {
        let values = samples(case.dtype);
        let pairs: Vec<(Wide, Wide)> = if case.arity == 1 {
            values.iter().map(|&v| (v, v)).collect()
        } else {
            values
                .iter()
                .flat_map(|&a| values.iter().map(move |&b| (a, b)))
                .collect()
        };
        let a: Vec<Wide> = pairs.iter().map(|p| p.0).collect();
        let b: Vec<Wide> = pairs.iter().map(|p| p.1).collect();
        let (xa, xb) = (buffer(case.dtype, &a), buffer(case.dtype, &b));
        let inputs: Vec<&HostBuffer> = if case.arity == 1 {
            vec![&xa]
        } else {
            vec![&xa, &xb]
        };
        let want = kernels::elementwise(&case.op, case.out, &inputs, pairs.len()).unwrap();
        for (k, (x, y)) in pairs.iter().enumerate() {
            let call = if case.arity == 1 {
                format!("lf_{}({})", case.name, literal(case.dtype, *x))
            } else {
                format!(
                    "lf_{}({}, {})",
                    case.name,
                    literal(case.dtype, *x),
                    literal(case.dtype, *y)
                )
            };
            program.push_str(&print_statement(case.out, &call));
            let label = format!("{call} [{}]", case.dtype);
            expected.push((
                label,
                case.out,
                case.tolerance,
                printed(case.out, want.get_wide(k).unwrap()),
            ));
        }
    }
    program.push_str("  return 0;\n}\n");
    let source = format!("{dir}/prelude_on_host.cpp");
    let binary = format!("{dir}/prelude_on_host");
    std::fs::write(&source, &program).unwrap();
    let compiled = Command::new("c++")
        .args([&source, "-O0", "-o", &binary])
        .output();
    match compiled {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "the prelude does not compile as host C++:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            eprintln!("SKIPPED the_prelude_computes_what_core_computes_on_the_host: no C++ compiler ({e})");
            return;
        }
    }
    let output = Command::new(&binary).output().unwrap();
    let lines: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), expected.len());
    let mut differ = String::new();
    for (got, (label, dtype, tolerance, want)) in lines.iter().zip(&expected) {
        let same = got == want || tolerance.is_some_and(|floor| close(*dtype, got, want, floor));
        let nan_bits = |s: &str| {
            u64::from_str_radix(s, 16).is_ok_and(|b| match dtype {
                DType::F32 => f32::from_bits(b as u32).is_nan(),
                DType::F64 => f64::from_bits(b).is_nan(),
                _ => false,
            })
        };
        if !(same || (nan_bits(got) && nan_bits(want))) {
            let _ = writeln!(differ, "{label}: prelude {got}, core {want}");
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} calls differ:\n{differ}",
        differ.lines().count(),
        expected.len()
    );
}
