//! The kernels of [`take`](super::take) and [`scatter`](super::scatter):
//! thread `t` of the indexed shape (outer position `a`, index position
//! `k`, inner position `b`) pairs element `t` of a flat array with element
//! `(a * n + indices[k] mod n) * inner + b` of the indexed array, and
//! copies one into the other.

use lazyfuse_core::{BinaryOp, DType, Result};

use crate::kernel::{Dim, Kernel, KernelScope, Val};
use crate::kernel_cache::KernelCache;

/// Which way an index kernel copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Direction {
    /// `out[t] = values[at(t)]`.
    Gather,
    /// `target[at(t)] = value[t]`.
    Scatter,
    /// `target[at(t)] = value[0]`: one value everywhere.
    ScatterOne,
    /// `target[at(t)] = value[t]` where the index is not negative: the
    /// indices come resolved into `[0, n)`, with -1 where a later index
    /// names the same element (so that the last one lands, as in NumPy).
    ScatterLast,
}

/// What an index kernel copies and may assume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Variant {
    pub(super) direction: Direction,
    /// Every index is in `[-n, n)`: a negative one needs `n` added, no
    /// division.
    pub(super) in_range: bool,
    /// The indexed shape is the indices' shape (a one-axis array along its
    /// only axis, or its first with nothing after): thread `t` uses index
    /// `t`.
    pub(super) flat: bool,
}

impl Variant {
    /// Every variant of `direction`.
    pub(super) fn all(direction: Direction) -> impl Iterator<Item = Variant> {
        [(false, false), (false, true), (true, false), (true, true)]
            .into_iter()
            .map(move |(in_range, flat)| Variant {
                direction,
                in_range,
                flat,
            })
    }
}

/// The kernel of `variant` for `dtype`, built once. Its parameters, in
/// order: the written array (`out` or `target`), the read one (`values`
/// or `value`), the `i64` indices, and the scalars `n` (the indexed axis'
/// length), `count` (of indices), `inner` (elements after the axis) and
/// `total` (threads that work).
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
    let flat = if variant.flat { "_flat" } else { "" };
    let in_range = if variant.in_range { "_in_range" } else { "" };
    Kernel::build(&format!("lf_{kind}_{dtype}{flat}{in_range}"), |k| {
        let written = k.array_mut(written, dtype, 1);
        let read = k.array(read, dtype, 1);
        let indices = k.array("indices", DType::I64, 1);
        let [n, count, inner, total] =
            ["n", "count", "inner", "total"].map(|name| k.scalar(name, DType::I64));
        let i64_of = |v: Val| v.cast(DType::I64);
        let t = i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X))
            + i64_of(k.thread_idx(Dim::X));
        k.if_(t.lt(&total), |k| {
            // The index thread `t` uses, as given and as resolved.
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
                (raw, resolved)
            };
            let (raw, at) = if variant.flat {
                index(k, &t)
            } else {
                let b = t.apply_binary(BinaryOp::Rem, &inner);
                let outer = k.let_(t.apply_binary(BinaryOp::FloorDiv, &inner));
                let position = outer.apply_binary(BinaryOp::Rem, &count);
                let a = outer.apply_binary(BinaryOp::FloorDiv, &count);
                let (raw, resolved) = index(k, &position);
                let j = k.let_(resolved);
                (raw, (&a * &n + &j) * &inner + &b)
            };
            match variant.direction {
                Direction::Gather => k.store(&written, &t, read.at(&at)),
                Direction::Scatter => k.store(&written, &at, read.at(&t)),
                Direction::ScatterOne => k.store(&written, &at, read.at(0i64)),
                Direction::ScatterLast => k.if_(raw.ge(0i64), |k| {
                    k.store(&written, &at, read.at(&t));
                }),
            }
        });
    })
}
