//! The kernels of [`take`](super::take) and [`scatter`](super::scatter):
//! each element `t` of the indexed shape (outer position `a`, index
//! position `k`, inner position `b`) pairs element `t` of a flat array
//! with element `(a * n + indices[k] mod n) * inner + b` of the indexed
//! array, and copies one into the other.

use std::sync::Arc;

use lazyfuse_core::{BinaryOp, DType, Result};

use super::host::CpuIndexCopy;
use super::variant::{Direction, Layout, Variant};
use crate::kernel::{Dim, Kernel, KernelScope, Val};
use crate::kernel_cache::KernelCache;

/// The kernel of `variant` for `dtype`, built once. Its parameters, in
/// order: the written array (`out` or `target`), the read one (`values`
/// or `value`), the `i64` indices, and the scalars `n` (the indexed axis'
/// length), `count` (of indices), `inner` (elements after the axis) and
/// `total` (elements of the indexed shape); a scatter of many values then
/// takes `value_outer_step` and `value_index_step`: the value of element
/// `(a, k, b)` is `value[a * outer_step + k * index_step + b]`, so that a
/// value broadcast along the outer or index positions (a row assigned to
/// many rows) is read as it is, not broadcast in memory first.
pub(super) fn index_kernel(dtype: DType, variant: Variant) -> Result<Kernel> {
    static KERNELS: KernelCache<(DType, Variant)> = KernelCache::new();
    KERNELS.get_or_build((dtype, variant), || build(dtype, variant))
}

fn build(dtype: DType, variant: Variant) -> Result<Kernel> {
    let (kind, written, read) = match variant.direction {
        Direction::Gather => ("take", "out", "values"),
        Direction::Scatter => ("put", "target", "value"),
        Direction::ScatterOne => ("put_one", "target", "value"),
        Direction::ScatterLast => ("put_last", "target", "value"),
    };
    let layout = match variant.layout {
        Layout::Flat => "_flat",
        Layout::Elements => "",
        Layout::Rows => "_rows",
        Layout::IndexRows => "_index_rows",
    };
    let in_range = if variant.in_range { "_in_range" } else { "" };
    let built =
        lazyfuse_kernel::Kernel::build(&format!("lf_{kind}_{dtype}{layout}{in_range}"), |k| {
            let written = k.array_mut(written, dtype, 1);
            let read = k.array(read, dtype, 1);
            let indices = k.array("indices", DType::I64, 1);
            let [n, count, inner, total] =
                ["n", "count", "inner", "total"].map(|name| k.scalar(name, DType::I64));
            let steps = matches!(
                variant.direction,
                Direction::Scatter | Direction::ScatterLast
            )
            .then(|| {
                ["value_outer_step", "value_index_step"].map(|name| k.scalar(name, DType::I64))
            });
            // Where element `(a, k, b)` (flat: `t`) reads its value.
            let value_at = |a: &Val, position: &Val, b: &Val, t: &Val| match &steps {
                Some([outer_step, index_step]) => a * outer_step + position * index_step + b,
                None => t.clone(),
            };
            let i64_of = |v: Val| v.cast(DType::I64);
            let (block, width) = (i64_of(k.block_idx(Dim::X)), i64_of(k.block_dim(Dim::X)));
            let x = i64_of(k.thread_idx(Dim::X));
            // The index element `position` names, as given and as resolved.
            let index = |k: &mut KernelScope, position: &Val| {
                let raw = k.let_(indices.at(position));
                let resolved = if variant.direction == Direction::ScatterLast {
                    raw.clone()
                } else if variant.in_range {
                    Val::select(&raw.lt(0i64), &raw + &n, raw.clone())
                } else {
                    // NumPy's `%` takes the divisor's sign: in [0, n) for
                    // n > 0, so negative indices count from the end, and
                    // others wrap.
                    raw.apply_binary(BinaryOp::Rem, &n)
                };
                (raw, k.let_(resolved))
            };
            // Element `t` of the flat array (for a scatter, its value's
            // position) and `at` of the indexed one.
            let copy = |k: &mut KernelScope, raw: &Val, t: &Val, at: &Val| match variant.direction {
                Direction::Gather => k.store(&written, t, read.at(at)),
                Direction::Scatter => k.store(&written, at, read.at(t)),
                Direction::ScatterOne => k.store(&written, at, read.at(0i64)),
                Direction::ScatterLast => k.if_(raw.ge(0i64), |k| {
                    k.store(&written, at, read.at(t));
                }),
            };
            let zero = Val::from(0i64);
            match variant.layout {
                Layout::Flat | Layout::Elements => {
                    let t = &block * &width + &x;
                    k.if_(t.lt(&total), |k| {
                        if variant.layout == Layout::Flat {
                            let (raw, j) = index(k, &t);
                            copy(k, &raw, &value_at(&zero, &t, &zero, &t), &j);
                            return;
                        }
                        let b = k.let_(t.apply_binary(BinaryOp::Rem, &inner));
                        let outer = k.let_(t.apply_binary(BinaryOp::FloorDiv, &inner));
                        let position = k.let_(outer.apply_binary(BinaryOp::Rem, &count));
                        let a = k.let_(outer.apply_binary(BinaryOp::FloorDiv, &count));
                        let (raw, j) = index(k, &position);
                        let flat = value_at(&a, &position, &b, &t);
                        copy(k, &raw, &flat, &((&a * &n + &j) * &inner + &b));
                    });
                }
                Layout::IndexRows => {
                    let chunks = k.let_(
                        (&count + &width - Val::from(1i64))
                            .apply_binary(BinaryOp::FloorDiv, &width),
                    );
                    let a = k.let_(block.apply_binary(BinaryOp::FloorDiv, &chunks));
                    let start = k.let_(block.apply_binary(BinaryOp::Rem, &chunks) * &width);
                    let position = &start + &x;
                    k.if_(position.lt(&count), |k| {
                        let (raw, j) = index(k, &position);
                        let flat = value_at(&a, &position, &zero, &(&a * &count + &position));
                        copy(k, &raw, &flat, &(&a * &n + &j));
                    });
                }
                Layout::Rows => {
                    // Block-wide values, at the top level (where the CPU's
                    // analysis reads registers through).
                    let chunks = k.let_(
                        (&inner + &width - Val::from(1i64))
                            .apply_binary(BinaryOp::FloorDiv, &width),
                    );
                    let row = k.let_(block.apply_binary(BinaryOp::FloorDiv, &chunks));
                    let start = k.let_(block.apply_binary(BinaryOp::Rem, &chunks) * &width);
                    let position = k.let_(row.apply_binary(BinaryOp::Rem, &count));
                    let a = k.let_(row.apply_binary(BinaryOp::FloorDiv, &count));
                    let (raw, j) = index(k, &position);
                    let indexed_start = k.let_((&a * &n + &j) * &inner + &start);
                    let flat_start =
                        k.let_(value_at(&a, &position, &start, &(&row * &inner + &start)));
                    let inside = (&start + &x).lt(&inner);
                    if variant.direction == Direction::ScatterLast {
                        // The skip folded into the row's one condition (the
                        // CPU's vector rows take an `and` of conditions, not
                        // an `if` inside an `if`).
                        k.if_(inside.and(raw.ge(0i64)), |k| {
                            let value = read.at(&(&flat_start + &x));
                            k.store(&written, &(&indexed_start + &x), value);
                        });
                    } else {
                        k.if_(inside, |k| {
                            copy(k, &raw, &(&flat_start + &x), &(&indexed_start + &x));
                        });
                    }
                }
            }
        })?;
    // Rows are whole-slice copies on the CPU; single elements run the
    // compiled kernel (a routine's per-row bookkeeping would cost more).
    let kernel = Kernel::from_built(match variant.layout {
        Layout::Rows => built.with_host_routine(Arc::new(CpuIndexCopy { variant }))?,
        _ => built,
    });
    // A gather's threads cover its whole output, which they only write.
    match variant.direction {
        Direction::Gather => kernel.overwriting(),
        _ => Ok(kernel),
    }
}
