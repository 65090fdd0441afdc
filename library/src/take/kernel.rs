//! The kernels of [`take`](super::take) and [`scatter`](super::scatter):
//! each element `t` of the indexed shape (outer position `a`, index
//! position `k`, inner position `b`) pairs element `t` of a flat array
//! with element `(a * n + indices[k] mod n) * inner + b` of the indexed
//! array, and copies one into the other.

use std::sync::Arc;

use lazyfuse_core::{BinaryOp, DType, Result};

use super::host::CpuIndexCopy;
use super::variant::{Direction, Layout, Variant};
use crate::kernel::{ArrayParam, Dim, Kernel, KernelScope, Val};
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
    let built = lazyfuse_kernel::Kernel::build(&kernel_name(dtype, variant), |k| {
        let access = Access::declare(k, dtype, variant);
        match variant.layout {
            Layout::Flat | Layout::Elements => access.elements(k),
            Layout::IndexRows => access.index_rows(k),
            Layout::Rows => access.rows(k),
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

/// `lf_{take|put|put_one|put_last}_{dtype}{layout}{_in_range}`.
fn kernel_name(dtype: DType, variant: Variant) -> String {
    let kind = match variant.direction {
        Direction::Gather => "take",
        Direction::Scatter => "put",
        Direction::ScatterOne => "put_one",
        Direction::ScatterLast => "put_last",
    };
    let layout = match variant.layout {
        Layout::Flat => "_flat",
        Layout::Elements => "",
        Layout::Rows => "_rows",
        Layout::IndexRows => "_index_rows",
    };
    let in_range = if variant.in_range { "_in_range" } else { "" };
    format!("lf_{kind}_{dtype}{layout}{in_range}")
}

/// An index kernel's parameters (see [`index_kernel`]), the thread's
/// place, and the steps every layout's threads share.
struct Access {
    variant: Variant,
    written: ArrayParam,
    read: ArrayParam,
    indices: ArrayParam,
    n: Val,
    count: Val,
    inner: Val,
    total: Val,
    /// A scatter's `value_outer_step` and `value_index_step`.
    steps: Option<[Val; 2]>,
    block: Val,
    width: Val,
    x: Val,
}

impl Access {
    fn declare(k: &mut KernelScope, dtype: DType, variant: Variant) -> Access {
        let (written, read) = match variant.direction {
            Direction::Gather => ("out", "values"),
            _ => ("target", "value"),
        };
        let written = k.array_mut(written, dtype, 1);
        let read = k.array(read, dtype, 1);
        let indices = k.array("indices", DType::I64, 1);
        let [n, count, inner, total] =
            ["n", "count", "inner", "total"].map(|name| k.scalar(name, DType::I64));
        let steps = matches!(
            variant.direction,
            Direction::Scatter | Direction::ScatterLast
        )
        .then(|| ["value_outer_step", "value_index_step"].map(|name| k.scalar(name, DType::I64)));
        let i64_of = |v: Val| v.cast(DType::I64);
        let (block, width) = (i64_of(k.block_idx(Dim::X)), i64_of(k.block_dim(Dim::X)));
        let x = i64_of(k.thread_idx(Dim::X));
        Access {
            variant,
            written,
            read,
            indices,
            n,
            count,
            inner,
            total,
            steps,
            block,
            width,
            x,
        }
    }

    /// Where element `(a, k, b)` (flat: `t`) reads its value.
    fn value_at(&self, a: &Val, position: &Val, b: &Val, t: &Val) -> Val {
        match &self.steps {
            Some([outer_step, index_step]) => a * outer_step + position * index_step + b,
            None => t.clone(),
        }
    }

    /// The index element `position` names, as given and as resolved.
    fn index(&self, k: &mut KernelScope, position: &Val) -> (Val, Val) {
        let raw = k.let_(self.indices.at(position));
        let resolved = if self.variant.direction == Direction::ScatterLast {
            raw.clone()
        } else if self.variant.in_range {
            Val::select(&raw.lt(0i64), &raw + &self.n, raw.clone())
        } else {
            // NumPy's `%` takes the divisor's sign: in [0, n) for n > 0,
            // so negative indices count from the end, and others wrap.
            raw.apply_binary(BinaryOp::Rem, &self.n)
        };
        (raw, k.let_(resolved))
    }

    /// Copies between element `t` of the flat array (for a scatter, its
    /// value's position) and `at` of the indexed one.
    fn copy(&self, k: &mut KernelScope, raw: &Val, t: &Val, at: &Val) {
        let (written, read) = (&self.written, &self.read);
        match self.variant.direction {
            Direction::Gather => k.store(written, t, read.at(at)),
            Direction::Scatter => k.store(written, at, read.at(t)),
            Direction::ScatterOne => k.store(written, at, read.at(0i64)),
            Direction::ScatterLast => k.if_(raw.ge(0i64), |k| {
                k.store(written, at, read.at(t));
            }),
        }
    }

    /// One thread per element of the indexed shape (flat: of the indices).
    fn elements(&self, k: &mut KernelScope) {
        let zero = Val::from(0i64);
        let t = &self.block * &self.width + &self.x;
        k.if_(t.lt(&self.total), |k| {
            if self.variant.layout == Layout::Flat {
                let (raw, j) = self.index(k, &t);
                self.copy(k, &raw, &self.value_at(&zero, &t, &zero, &t), &j);
                return;
            }
            let inner = &self.inner;
            let b = k.let_(t.apply_binary(BinaryOp::Rem, inner));
            let outer = k.let_(t.apply_binary(BinaryOp::FloorDiv, inner));
            let position = k.let_(outer.apply_binary(BinaryOp::Rem, &self.count));
            let a = k.let_(outer.apply_binary(BinaryOp::FloorDiv, &self.count));
            let (raw, j) = self.index(k, &position);
            let flat = self.value_at(&a, &position, &b, &t);
            self.copy(k, &raw, &flat, &((&a * &self.n + &j) * inner + &b));
        });
    }

    /// Blocks along the indices of each outer position (inner length 1).
    fn index_rows(&self, k: &mut KernelScope) {
        let (block, width, count) = (&self.block, &self.width, &self.count);
        let chunks =
            k.let_((count + width - Val::from(1i64)).apply_binary(BinaryOp::FloorDiv, width));
        let a = k.let_(block.apply_binary(BinaryOp::FloorDiv, &chunks));
        let start = k.let_(block.apply_binary(BinaryOp::Rem, &chunks) * width);
        let position = &start + &self.x;
        k.if_(position.lt(count), |k| {
            let (raw, j) = self.index(k, &position);
            let zero = Val::from(0i64);
            let flat = self.value_at(&a, &position, &zero, &(&a * count + &position));
            self.copy(k, &raw, &flat, &(&a * &self.n + &j));
        });
    }

    /// Blocks along each indexed row (its `inner` elements).
    fn rows(&self, k: &mut KernelScope) {
        // Block-wide values, at the top level (where the CPU's analysis
        // reads registers through).
        let (block, width, inner, x) = (&self.block, &self.width, &self.inner, &self.x);
        let chunks =
            k.let_((inner + width - Val::from(1i64)).apply_binary(BinaryOp::FloorDiv, width));
        let row = k.let_(block.apply_binary(BinaryOp::FloorDiv, &chunks));
        let start = k.let_(block.apply_binary(BinaryOp::Rem, &chunks) * width);
        let position = k.let_(row.apply_binary(BinaryOp::Rem, &self.count));
        let a = k.let_(row.apply_binary(BinaryOp::FloorDiv, &self.count));
        let (raw, j) = self.index(k, &position);
        let indexed_start = k.let_((&a * &self.n + &j) * inner + &start);
        let flat_start = k.let_(self.value_at(&a, &position, &start, &(&row * inner + &start)));
        let inside = (&start + x).lt(inner);
        if self.variant.direction == Direction::ScatterLast {
            // The skip folded into the row's one condition (the CPU's
            // vector rows take an `and` of conditions, not an `if` inside
            // an `if`).
            k.if_(inside.and(raw.ge(0i64)), |k| {
                let value = self.read.at(&(&flat_start + x));
                k.store(&self.written, &(&indexed_start + x), value);
            });
        } else {
            k.if_(inside, |k| {
                self.copy(k, &raw, &(&flat_start + x), &(&indexed_start + x));
            });
        }
    }
}
