//! Every atomic operation of user kernels (`AtomicOp`) on every dtype it
//! accepts, in global and shared memory, on every backend, against its
//! definition written out here, with memory fences; the printed CUDA
//! compiles with NVRTC.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::kernel::{AtomicOp, FenceScope, Kernel};
use lazyfuse::{Context, DType};

/// One update: the operation, the element in memory, the operand, and for
/// compare-and-swap the value compared.
struct Case {
    op: AtomicOp,
    memory: f64,
    operand: f64,
    compare: f64,
}

fn case(op: AtomicOp, memory: f64, operand: f64) -> Case {
    Case {
        op,
        memory,
        operand,
        compare: 0.0,
    }
}

/// The cases of a dtype: every operation it accepts, with NaN on either
/// side for floats (Numba's min/max keep memory, nanmin/nanmax ignore NaN).
fn cases(dtype: DType) -> Vec<Case> {
    use AtomicOp::*;
    let mut all = vec![
        case(Add, 10.0, 3.0),
        case(Sub, 10.0, 3.0),
        case(Min, 10.0, 3.0),
        case(Max, 10.0, 3.0),
        case(NanMin, 3.0, 10.0),
        case(NanMax, 3.0, 10.0),
        case(Exchange, 10.0, 3.0),
        Case {
            op: Cas,
            memory: 10.0,
            operand: 3.0,
            compare: 10.0,
        },
        Case {
            op: Cas,
            memory: 10.0,
            operand: 3.0,
            compare: 9.0,
        },
    ];
    if dtype.is_float() {
        let nan = f64::NAN;
        all.extend([
            case(Min, 1.5, nan),
            case(Min, nan, 1.5),
            case(Max, 1.5, nan),
            case(Max, nan, 1.5),
            case(NanMin, nan, 1.5),
            case(NanMin, 1.5, nan),
            case(NanMax, nan, 1.5),
            case(NanMax, nan, nan),
            case(Add, 1.5, 0.25),
        ]);
    } else {
        all.extend([
            case(And, 12.0, 10.0),
            case(Or, 12.0, 10.0),
            case(Xor, 12.0, 10.0),
        ]);
    }
    if matches!(dtype, DType::U32 | DType::U64) {
        all.extend([
            case(Inc, 5.0, 5.0),
            case(Inc, 4.0, 5.0),
            case(Dec, 0.0, 5.0),
            case(Dec, 7.0, 5.0),
            case(Dec, 3.0, 5.0),
        ]);
    }
    all
}

/// What each operation stores (the definitions of `AtomicOp`'s docs).
fn stored(c: &Case) -> f64 {
    let (m, v) = (c.memory, c.operand);
    match c.op {
        AtomicOp::Add => m + v,
        AtomicOp::Sub => m - v,
        AtomicOp::Min => {
            if v < m {
                v
            } else {
                m
            }
        }
        AtomicOp::Max => {
            if v > m {
                v
            } else {
                m
            }
        }
        AtomicOp::NanMin => m.min(v),
        AtomicOp::NanMax => m.max(v),
        AtomicOp::And => (m as i64 & v as i64) as f64,
        AtomicOp::Or => (m as i64 | v as i64) as f64,
        AtomicOp::Xor => (m as i64 ^ v as i64) as f64,
        AtomicOp::Inc => {
            if m >= v {
                0.0
            } else {
                m + 1.0
            }
        }
        AtomicOp::Dec => {
            if m == 0.0 || m > v {
                v
            } else {
                m - 1.0
            }
        }
        AtomicOp::Exchange => v,
        AtomicOp::Cas => {
            if m == c.compare {
                v
            } else {
                m
            }
        }
    }
}

/// One thread applies case `j` to `memory[j]` (or to a shared copy of it),
/// writing the old value to `olds[j]`.
fn atomics(dtype: DType, shared: bool) -> Kernel {
    let cases = cases(dtype);
    let name = format!("atomics_{}{}", dtype, if shared { "_shared" } else { "" });
    Kernel::build(&name, |k| {
        let memory = k.array_mut("memory", dtype, 1);
        let operand = k.array("operand", dtype, 1);
        let compare = k.array("compare", dtype, 1);
        let olds = k.array_mut("olds", dtype, 1);
        let copy = shared.then(|| k.shared_array(dtype, &[cases.len()]));
        if let Some(copy) = &copy {
            for j in 0..cases.len() as i64 {
                k.store_shared(copy, j, memory.at(j));
            }
            k.syncthreads();
        }
        for (j, c) in cases.iter().enumerate() {
            let j = j as i64;
            let old = match (&copy, c.op) {
                (None, AtomicOp::Cas) => k.atomic_cas(&memory, j, compare.at(j), operand.at(j)),
                (None, op) => k.atomic_update(op, &memory, j, operand.at(j)),
                (Some(s), AtomicOp::Cas) => k.atomic_cas_shared(s, j, compare.at(j), operand.at(j)),
                (Some(s), op) => k.atomic_update_shared(op, s, j, operand.at(j)),
            };
            k.store(&olds, j, old);
        }
        // Fences order a thread's writes for others; one thread sees its
        // own in order anyway, so the results above do not change.
        for scope in [FenceScope::Block, FenceScope::Device, FenceScope::System] {
            k.threadfence(scope);
        }
        if let Some(copy) = &copy {
            k.syncthreads();
            for j in 0..cases.len() as i64 {
                k.store(&memory, j, copy.at(j));
            }
        }
    })
    .unwrap()
}

/// Every dtype of atomic memory.
const DTYPES: [DType; 6] = lazyfuse::codegen::device::ir::ATOMIC_DTYPES;

fn column(cx: &Context, values: Vec<f64>, dtype: DType) -> lazyfuse::Array {
    let n = values.len();
    cx.from_vec(values, &[n]).unwrap().astype(dtype)
}

fn same(got: f64, want: f64) -> bool {
    got == want || (got.is_nan() && want.is_nan())
}

#[test]
fn every_atomic_operation_on_every_dtype_it_accepts_on_every_backend() {
    for cx in common::backends() {
        for dtype in DTYPES {
            let cases = cases(dtype);
            for shared in [false, true] {
                let kernel = atomics(dtype, shared);
                let memory = column(&cx, cases.iter().map(|c| c.memory).collect(), dtype);
                let operand = column(&cx, cases.iter().map(|c| c.operand).collect(), dtype);
                let compare = column(&cx, cases.iter().map(|c| c.compare).collect(), dtype);
                let olds = cx.zeros(&[cases.len()], dtype);
                let out = kernel
                    .launch(
                        &cx,
                        1u32,
                        1u32,
                        &[
                            (&memory).into(),
                            (&operand).into(),
                            (&compare).into(),
                            (&olds).into(),
                        ],
                    )
                    .unwrap();
                let got = out[0].astype(DType::F64).to_vec::<f64>().unwrap();
                let old = out[1].astype(DType::F64).to_vec::<f64>().unwrap();
                for (j, c) in cases.iter().enumerate() {
                    let context = format!(
                        "{} {dtype} shared={shared}: {:?}({}, {}) compare {}",
                        cx.backend_name(),
                        c.op,
                        c.memory,
                        c.operand,
                        c.compare
                    );
                    assert!(same(got[j], stored(c)), "{context}: stored {}", got[j]);
                    assert!(same(old[j], c.memory), "{context}: returned {}", old[j]);
                }
            }
        }
    }
}

#[test]
fn an_atomic_operation_on_a_dtype_it_does_not_accept_is_refused_naming_both() {
    let result = Kernel::build("bitwise_float", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        k.atomic_update(AtomicOp::Xor, &a, 0i64, 1.0f32);
    });
    let message = result.expect_err("refused").to_string();
    assert!(message.contains("atomic xor on f32"), "{message}");
    assert!(
        message.contains("(expected i32, u32, i64, u64)"),
        "{message}"
    );
    let result = Kernel::build("inc_signed", |k| {
        let a = k.array_mut("a", DType::I32, 1);
        k.atomic_update(AtomicOp::Inc, &a, 0i64, 1i32);
    });
    let message = result.expect_err("refused").to_string();
    assert!(message.contains("(expected u32, u64)"), "{message}");
}

#[test]
fn the_printed_cuda_of_every_atomic_compiles_with_nvrtc_without_spills() {
    if !common::nvrtc_or_skip("the_printed_cuda_of_every_atomic_compiles_with_nvrtc_without_spills")
    {
        return;
    }
    for dtype in DTYPES {
        for shared in [false, true] {
            let kernel = atomics(dtype, shared);
            let source = kernel.cuda_source();
            for fence in [
                "__threadfence_block();",
                "__threadfence();",
                "__threadfence_system();",
            ] {
                assert!(source.contains(fence), "{source}");
            }
            for arch in ["sm_80", "sm_90"] {
                common::compiles_without_spills(kernel.name(), &kernel.cuda_source(), arch);
            }
        }
    }
}
