//! Long rows on devices: the bitonic network of `mod.rs`, one launch per
//! step. A step's compare-exchanges are independent, so each is one
//! thread of a grid as large as the pairs of every row need, instead of
//! one block looping over a whole row (which leaves all but one of a
//! device's multiprocessors idle when there are few rows). The launches
//! follow one another in the graph; each writes the previous one's result.
//!
//! Step `(size, stride)` of a row padded to `padded` elements pairs
//! position `i` (bit `stride` clear) with `i ^ (size - 1)` when `stride`
//! is `size / 2` (the first step of a merge compares mirrored positions)
//! and with `i ^ stride` otherwise; thread `p` of a row takes the `p`-th
//! such `i`, the bits of `p` with a zero inserted at bit `stride`. Pairs
//! reaching past the row's end meet virtual elements, larger than any,
//! which never move.

use lazyfuse_core::{Array, BinaryOp, DType, Result};

use super::{order_positions, order_values, Rows, BLOCK};
use crate::kernel::{Dim, Kernel, KernelArg, KernelScope, Val};
use crate::kernel_cache::KernelCache;

/// The rows sorted, one launch per step.
pub(super) fn sort(rows: &Rows, dtype: DType) -> Result<Array> {
    let kernel = sort_stage_kernel(dtype)?;
    each_step(rows, rows.data.clone(), |data, step| {
        kernel
            .launch(
                rows.data.session(),
                step.grid,
                BLOCK,
                &step.args(data, None),
            )
            .map(|mut written| written.remove(0))
    })
}

/// The positions that stably sort the rows, one launch per step.
pub(super) fn argsort(rows: &Rows, dtype: DType) -> Result<Array> {
    let kernel = argsort_stage_kernel(dtype)?;
    let session = rows.data.session();
    let count = rows.data.len() / rows.n;
    let positions = session
        .arange(0.0, rows.n as f64, 1.0, DType::I64)
        .broadcast_to(&[count, rows.n])
        .reshape(&[rows.data.len()]);
    each_step(rows, positions, |order, step| {
        kernel
            .launch(
                session,
                step.grid,
                BLOCK,
                &step.args(&rows.data, Some(order)),
            )
            .map(|mut written| written.remove(0))
    })
}

/// One step of the network over every row.
struct Step {
    n: i64,
    size: i64,
    stride: i64,
    /// Pairs per row: half the padded row.
    half: i64,
    /// Pairs of all rows.
    pairs: i64,
    grid: u32,
}

impl Step {
    /// The launch's arguments: the values (and the positions, for an
    /// argsort), then `n`, `size`, `stride`, `half` and `pairs`.
    fn args<'a>(&self, data: &'a Array, order: Option<&'a Array>) -> Vec<KernelArg<'a>> {
        let mut args: Vec<KernelArg<'a>> = vec![data.into()];
        args.extend(order.map(KernelArg::from));
        let numbers = [self.n, self.size, self.stride, self.half, self.pairs];
        args.extend(numbers.into_iter().map(KernelArg::from));
        args
    }
}

/// Runs `launch` for every step in order, each on the array the previous
/// one wrote.
fn each_step(
    rows: &Rows,
    first: Array,
    mut launch: impl FnMut(&Array, &Step) -> Result<Array>,
) -> Result<Array> {
    let padded = rows.n.next_power_of_two();
    let pairs = rows.data.len() / rows.n * (padded / 2);
    let grid = u32::try_from(pairs.div_ceil(BLOCK as usize)).map_err(|_| {
        lazyfuse_core::Error::invalid(
            "sort",
            format!("{pairs} pairs per step (expected fewer than 2^40)"),
        )
    })?;
    let (padded, pairs) = (padded as i64, pairs as i64);
    let mut current = first;
    let mut size = 2;
    while size <= padded {
        let mut stride = size / 2;
        while stride >= 1 {
            let step = Step {
                n: rows.n as i64,
                size,
                stride,
                half: padded / 2,
                pairs,
                grid,
            };
            current = launch(&current, &step)?;
            stride /= 2;
        }
        size *= 2;
    }
    Ok(current)
}

/// The kernel of one step of [`sort`](crate::sort) for `dtype` (public to inspect its
/// code): `data` written in place.
pub fn sort_stage_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_sort_step_{dtype}"), |k| {
            let data = k.array_mut("data", dtype, 1);
            each_pair(k, |k, base, i, partner| {
                order_values(k, &data, base, i, partner)
            });
        })?;
        Ok(Kernel::from_built(built))
    })
}

/// The kernel of one step of [`argsort`](crate::argsort) for `dtype` (public to inspect
/// its code): `order` written in place.
pub fn argsort_stage_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_argsort_step_{dtype}"), |k| {
            let data = k.array("data", dtype, 1);
            let order = k.array_mut("order", DType::I64, 1);
            each_pair(k, |k, base, i, partner| {
                order_positions(k, &data, &order, base, i, partner)
            });
        })?;
        Ok(Kernel::from_built(built))
    })
}

/// Declares the step's numbers and calls `exchange(k, base, i, partner)`
/// for this thread's pair, when it has one inside its row.
fn each_pair(k: &mut KernelScope, exchange: impl Fn(&mut KernelScope, &Val, &Val, &Val)) {
    let n = k.scalar("n", DType::I64);
    let size = k.scalar("size", DType::I64);
    let stride = k.scalar("stride", DType::I64);
    let half = k.scalar("half", DType::I64);
    let pairs = k.scalar("pairs", DType::I64);
    let i64_of = |v: Val| v.cast(DType::I64);
    let block = i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X));
    let thread = i64_of(k.thread_idx(Dim::X));
    let g = k.let_(block + thread);
    k.if_(g.lt(&pairs), |k| {
        let row = k.let_(g.apply_binary(BinaryOp::FloorDiv, &half));
        let p = k.let_(&g - &row * &half);
        let base = k.let_(&row * &n);
        // `p` with a zero inserted at bit `stride`.
        let below = k.let_(p.apply_binary(BinaryOp::BitwiseAnd, &(&stride - Val::from(1i64))));
        let i = k.let_((&p - &below) * Val::from(2i64) + &below);
        let first = stride.eq(size.apply_binary(BinaryOp::FloorDiv, Val::from(2i64)));
        let mask = Val::select(&first, &size - Val::from(1i64), stride.clone());
        let partner = k.let_(i.apply_binary(BinaryOp::BitwiseXor, &mask));
        k.if_(partner.lt(&n), |k| exchange(k, &base, &i, &partner));
    });
}
