//! A block's row of threads compiled as one loop
//! (`codegen/cpu/src/jit/kernel/{hoist,simd}.rs`): accesses checked once
//! per row, `if`s that hold for the whole row folded, groups of threads on
//! vectors, and `read_into` of a kernel whose blocks each touch their own
//! part of the array copying and computing part by part. Every kernel
//! here gives the simulator's values bit for bit, on one thread and two,
//! for row lengths around the vector width and grids that do not fit
//! their arrays exactly; kernels that need the scalar loop (the thread
//! index as data, a condition that differs between threads, a reversed
//! index) too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use lazyfuse::kernel::{Kernel, Val};
use lazyfuse::{Array, Context, DType, JitMode};

fn cpu(threads: usize) -> Context {
    Context::builder()
        .backend("cpu")
        .threads(threads)
        .jit(JitMode::Always)
        .build()
        .unwrap()
}

/// `out[i] = x[i] * alpha + y[i]` (f64), for `i` inside the arrays.
fn axpy() -> Kernel {
    Kernel::build("axpy", |k| {
        let x = k.array("x", DType::F64, 1);
        let y = k.array("y", DType::F64, 1);
        let out = k.array_mut("out", DType::F64, 1);
        let alpha = k.scalar("alpha", DType::F64);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(x.len(0)), |k| {
            k.store(&out, &i, x.at(&i) * alpha + y.at(&i));
        });
    })
    .unwrap()
}

/// `out[i] = x[i] > 0.5 ? x[i] : 0.5 - x[i]` (f32), a vector of masks.
fn fold() -> Kernel {
    Kernel::build("fold", |k| {
        let x = k.array("x", DType::F32, 1);
        let out = k.array_mut("out", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(out.len(0)), |k| {
            let v = k.let_(x.at(&i));
            let half = Val::constant(0.5, DType::F32);
            k.store(&out, &i, Val::select(&v.gt(half.clone()), &v, &half - &v));
        });
    })
    .unwrap()
}

/// `out[i] = x[i] * 3 + 1` (i32).
fn affine_i32() -> Kernel {
    Kernel::build("affine_i32", |k| {
        let x = k.array("x", DType::I32, 1);
        let out = k.array_mut("out", DType::I32, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(out.len(0)), |k| {
            k.store(&out, &i, x.at(&i) * 3.0 + 1.0);
        });
    })
    .unwrap()
}

/// `out[i] = i + x[i]` (f64): the thread's index as data, so scalar.
fn index_as_data() -> Kernel {
    Kernel::build("index_as_data", |k| {
        let x = k.array("x", DType::F64, 1);
        let out = k.array_mut("out", DType::F64, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(out.len(0)), |k| {
            k.store(&out, &i, i.cast(DType::F64) + x.at(&i));
        });
    })
    .unwrap()
}

/// `out[i] = x[i]` for every third `i`: a condition of each thread.
fn every_third() -> Kernel {
    Kernel::build("every_third", |k| {
        let x = k.array("x", DType::F64, 1);
        let out = k.array_mut("out", DType::F64, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(out.len(0)).and((&i % 3.0).eq(0i64)), |k| {
            k.store(&out, &i, x.at(&i));
        });
    })
    .unwrap()
}

/// `a[n - 1 - i] += 1` (f32): written from the end, so not block by block.
fn reversed() -> Kernel {
    Kernel::build("reversed", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(a.len(0)), |k| {
            let at = k.let_(a.len(0) - 1.0 - &i);
            k.store(&a, &at, a.at(&at) + 1.0);
        });
    })
    .unwrap()
}

/// `a[i] = a[i] * 2 - 1` (f32), in place: each block its own part.
fn in_place() -> Kernel {
    Kernel::build("in_place", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(a.len(0)), |k| k.store(&a, &i, a.at(&i) * 2.0 - 1.0));
    })
    .unwrap()
}

fn values(n: usize, dtype: DType, cx: &Context, seed: usize) -> Array {
    let host: Vec<f64> = (0..n)
        .map(|i| ((i * 7919 + seed * 104_729) % 1001) as f64 / 1000.0)
        .collect();
    let x = cx.from_slice(&host);
    match dtype {
        DType::I32 => (x * 1000.0).astype(DType::I32),
        dtype => x.astype(dtype),
    }
}

/// Runs `kernel` over `n` elements with blocks of `block` threads, on
/// `cx`: the written arrays' values, as f64 (and checks it was compiled).
fn launch(kernel: &Kernel, cx: &Context, n: usize, block: u32) -> Vec<Vec<f64>> {
    let grid = n.div_ceil(block as usize) as u32;
    let name = kernel.name();
    let outputs = match name {
        "axpy" => {
            let (x, y, out) = (
                values(n, DType::F64, cx, 1),
                values(n, DType::F64, cx, 2),
                cx.zeros(&[n], DType::F64),
            );
            let args = [(&x).into(), (&y).into(), (&out).into(), 0.75f64.into()];
            kernel.launch(cx, grid, block, &args).unwrap()
        }
        "fold" | "affine_i32" | "index_as_data" | "every_third" => {
            let dtype = match name {
                "fold" => DType::F32,
                "affine_i32" => DType::I32,
                _ => DType::F64,
            };
            let (x, out) = (values(n, dtype, cx, 3), cx.zeros(&[n], dtype));
            (kernel.launch(cx, grid, block, &[(&x).into(), (&out).into()])).unwrap()
        }
        _ => {
            let a = values(n, DType::F32, cx, 4);
            kernel.launch(cx, grid, block, &[(&a).into()]).unwrap()
        }
    };
    (outputs.iter())
        .map(|out| {
            if cx.backend_name() == "cpu" {
                let text = out.explain();
                assert!(text.contains("compiled code (JIT)"), "{name}: {text}");
                let scalar = ["index_as_data", "every_third", "reversed"].contains(&name);
                assert_eq!(text.contains("on vectors"), !scalar, "{name}: {text}");
            }
            out.astype(DType::F64).to_vec::<f64>().unwrap()
        })
        .collect()
}

#[test]
fn rows_of_threads_give_the_simulators_values() {
    let kernels = [
        axpy(),
        fold(),
        affine_i32(),
        index_as_data(),
        every_third(),
        reversed(),
        in_place(),
    ];
    let sim = Context::sim();
    let (one, two) = (cpu(1), cpu(2));
    for kernel in &kernels {
        for n in [1usize, 7, 8, 9, 17, 255, 256, 257, 1000] {
            for block in [1u32, 3, 8, 64, 256] {
                let want = launch(kernel, &sim, n, block);
                for cx in [&one, &two] {
                    let got = launch(kernel, cx, n, block);
                    let same = (got.iter().flatten())
                        .zip(want.iter().flatten())
                        .all(|(g, w)| g.to_bits() == w.to_bits());
                    assert!(same, "{} n={n} block={block}", kernel.name());
                }
            }
        }
    }
}

/// `read_into` of a kernel whose blocks each touch their own part: copied
/// and computed part by part (on two threads, several parts at once),
/// including a grid too small for the array (the rest keeps the
/// argument's values) and one larger than it.
#[test]
fn read_into_part_by_part_keeps_every_element() {
    let kernel = in_place();
    let n: usize = 300_007;
    let host: Vec<f32> = (0..n).map(|i| (i % 977) as f32).collect();
    for cx in [cpu(1), cpu(2)] {
        let a = cx.from_slice(&host);
        for grid in [n.div_ceil(256), n / 256 / 3, n.div_ceil(256) + 5] {
            let out = (kernel.launch(&cx, grid as u32, 256u32, &[(&a).into()]))
                .unwrap()
                .remove(0);
            let mut got = vec![f32::NAN; n];
            out.read_into(&mut got).unwrap();
            let touched = grid * 256;
            for (i, (g, h)) in got.iter().zip(&host).enumerate() {
                let want = if i < touched { h * 2.0 - 1.0 } else { *h };
                assert_eq!(*g, want, "grid={grid} i={i}");
            }
        }
        assert_eq!(a.to_vec::<f32>().unwrap(), host);
    }
}
