//! Sorting along an axis (NumPy's `np.sort`): lazily, one launch of a
//! kernel that sorts each row of a copy in place. On devices each row is
//! one block running a bitonic sorting network over global memory (rows
//! padded to a power of two with virtual elements larger than any, which
//! never move: each compare-exchange keeps the smaller value at the lower
//! index); rows of [`STAGED_FROM`] elements or more run the same network
//! as one launch per step, over as many blocks as the pairs need
//! (`stages.rs`: one block cannot keep a device busy). The CPU runs a
//! library routine instead, Rust's unstable sort of each row. NaNs sort
//! last, as in NumPy.
//!
//! ```
//! use lazyfuse::{sort, Context};
//!
//! let cx = Context::sim();
//! let x = cx.from_vec(vec![3.0f64, f64::NAN, -1.0, 2.0, 0.5, 1.0], &[2, 3])?;
//! let sorted = sort(&x, 1)?;
//! let got = sorted.to_vec::<f64>()?;
//! assert_eq!(got[..2], [-1.0, 3.0]);
//! assert!(got[2].is_nan());
//! assert_eq!(got[3..], [0.5, 1.0, 2.0]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use lazyfuse_core::half::{bf16, f16};
use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{
    with_slice_mut, Array, BinaryOp, DType, Error, HostBuffer, KernelLaunch, Result, SliceMut,
};

use crate::kernel::{ArrayParam, Dim, HostRoutine, Kernel, KernelArg, KernelScope, Val, Workers};
use crate::kernel_cache::KernelCache;
use crate::routine::Args;

mod partition;
mod stages;

pub use partition::{partition, partition_kernel};
pub use stages::{argsort_stage_kernel, sort_stage_kernel};

/// Threads per block (one block per row), at most.
const BLOCK: u32 = 256;

/// Rows at least this long are sorted on devices one network step per
/// launch (`stages.rs`) rather than one block per row.
pub const STAGED_FROM: usize = 1 << 13;

/// `array` sorted along `axis`, ascending, NaNs last (NumPy's
/// `np.sort(array, axis)`; not stable, as NumPy's default). Lazy.
///
/// Errors: an axis outside the array, an invalid array.
pub fn sort(array: &Array, axis: usize) -> Result<Array> {
    let Some(rows) = Rows::along(array, axis, "sort")? else {
        return Ok(array.clone()); // values are immutable: nothing to copy
    };
    if rows.staged(array) {
        return Ok(rows.back(&stages::sort(&rows, array.dtype())?));
    }
    // The rows are sorted in place when nothing else reads them, else in
    // a copy of their own.
    let args: [KernelArg<'_>; 2] = [(&rows.data).into(), (rows.n as i64).into()];
    let sorted = sort_kernel(array.dtype())?
        .launch(array.session(), rows.grid, rows.threads, &args)?
        .remove(0);
    Ok(rows.back(&sorted))
}

/// The positions along `axis` that sort `array` (NumPy's
/// `np.argsort(array, axis, kind="stable")`): `i64`, ascending by value,
/// NaNs last, equal values in their order (so every backend gives the
/// same indices). Lazy.
///
/// ```
/// use lazyfuse::{argsort, Context};
///
/// let cx = Context::sim();
/// let x = cx.from_vec(vec![3.0f32, f32::NAN, -1.0, 3.0], &[4])?;
/// assert_eq!(argsort(&x, 0)?.to_vec::<i64>()?, [2, 0, 3, 1]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
///
/// Errors: an axis outside the array, an invalid array.
pub fn argsort(array: &Array, axis: usize) -> Result<Array> {
    let Some(rows) = Rows::along(array, axis, "argsort")? else {
        return Ok(array.session().zeros(array.shape(), DType::I64)); // rows of one
    };
    if rows.staged(array) {
        return Ok(rows.back(&stages::argsort(&rows, array.dtype())?));
    }
    let order = array.session().zeros(&[rows.data.len()], DType::I64);
    let args: [KernelArg<'_>; 3] = [(&rows.data).into(), (&order).into(), (rows.n as i64).into()];
    let positions = argsort_kernel(array.dtype())?
        .launch(array.session(), rows.grid, rows.threads, &args)?
        .remove(0);
    Ok(rows.back(&positions))
}

/// An array's rows along an axis, for a kernel that handles one row per
/// block: the axis moved last and the rest flattened.
struct Rows {
    /// The values, flat, row after row.
    data: Array,
    /// Elements per row.
    n: usize,
    grid: u32,
    threads: u32,
    /// The shape with the axis last, and the permutation back.
    moved: Vec<usize>,
    inverse: Vec<usize>,
}

impl Rows {
    /// `array`'s rows along `axis`, or `None` when no row has two elements
    /// (nothing to order).
    fn along(array: &Array, axis: usize, op: &str) -> Result<Option<Rows>> {
        array.check()?;
        let shape = array.shape().to_vec();
        let Some(&n) = shape.get(axis) else {
            return Err(Error::invalid(
                op,
                format!(
                    "axis {axis} of an array of shape {} (expected an axis below {})",
                    format_shape(&shape),
                    shape.len()
                ),
            ));
        };
        let total = array.len();
        if total == 0 || n <= 1 {
            return Ok(None);
        }
        let mut order: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();
        order.push(axis);
        let moved = array.permute(&order);
        let rows = total / n;
        let grid = u32::try_from(rows).map_err(|_| {
            Error::invalid(
                op,
                format!("{rows} rows of {n} (expected fewer than 2^32 rows)"),
            )
        })?;
        let mut inverse = vec![0; order.len()];
        for (position, &d) in order.iter().enumerate() {
            inverse[d] = position;
        }
        Ok(Some(Rows {
            data: moved.reshape(&[total]),
            n,
            grid,
            threads: BLOCK.min(n.next_power_of_two().max(32) as u32),
            moved: moved.shape().to_vec(),
            inverse,
        }))
    }

    /// Whether the rows are sorted one network step per launch: long rows
    /// on a backend that runs the kernels (the CPU runs a library routine
    /// of the one-launch form instead).
    fn staged(&self, array: &Array) -> bool {
        self.n >= STAGED_FROM && array.session().backend_name() != "cpu"
    }

    /// Flat rows (a kernel's result) back in the array's layout.
    fn back(&self, flat: &Array) -> Array {
        flat.reshape(&self.moved).permute(&self.inverse)
    }
}

/// The kernel [`sort`] launches for `dtype` (one block per row of `n`
/// elements of `data`, sorted in place); public to inspect its code.
pub fn sort_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_sort_{dtype}"), |k| {
            let data = k.array_mut("data", dtype, 1);
            let n = k.scalar("n", DType::I64);
            bitonic_rows(k, &n, |k, base, i, partner| {
                order_values(k, &data, base, i, partner);
            });
        })?
        .with_host_routine(Arc::new(CpuSort))?;
        Ok(Kernel::from_built(built))
    })
}

/// The kernel [`argsort`] launches for `dtype`: one block per row of `n`
/// elements of `data`, writing the positions that sort it into `order`;
/// public to inspect its code.
pub fn argsort_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_argsort_{dtype}"), |k| {
            let data = k.array("data", dtype, 1);
            let order = k.array_mut("order", DType::I64, 1);
            let n = k.scalar("n", DType::I64);
            let (thread, width, base) = row_of_block(k, &n);
            k.for_range(thread, n.clone(), width, |k, i| {
                k.store(&order, &(&base + &i), i.clone());
            });
            k.syncthreads();
            bitonic_rows(k, &n, |k, base, i, partner| {
                order_positions(k, &data, &order, base, i, partner);
            });
        })?
        .with_host_routine(Arc::new(CpuArgsort))?
        .overwriting()?; // every position is set before the network reads it
        Ok(Kernel::from_built(built))
    })
}

/// Orders elements `i < partner` of the row of `data` at `base`: the
/// smaller first, a NaN after a number.
fn order_values(k: &mut KernelScope, data: &ArrayParam, base: &Val, i: &Val, partner: &Val) {
    let (low, high) = (k.let_(base + i), k.let_(base + partner));
    let a = k.let_(data.at(&low));
    let b = k.let_(data.at(&high));
    // `b` before `a`: smaller, or a number against a NaN.
    let nan_a = a.ne(&a).and(b.eq(&b));
    k.if_(b.lt(&a).or(nan_a), |k| {
        k.store(data, &low, b.clone());
        k.store(data, &high, a.clone());
    });
}

/// Orders positions `i < partner` of the row of `order` at `base` by the
/// values of `data` they point at: a total order (a number before a NaN,
/// equal values by position), so the sort is stable.
fn order_positions(
    k: &mut KernelScope,
    data: &ArrayParam,
    order: &ArrayParam,
    base: &Val,
    i: &Val,
    partner: &Val,
) {
    let (low, high) = (k.let_(base + i), k.let_(base + partner));
    let (ia, ib) = (k.let_(order.at(&low)), k.let_(order.at(&high)));
    let a = k.let_(data.at(&(base + &ia)));
    let b = k.let_(data.at(&(base + &ib)));
    let (nan_a, nan_b) = (a.ne(&a), b.ne(&b));
    // `b` before `a`: smaller, a number against a NaN, or equal (two NaNs
    // alike) and first in the row.
    let equal = a.eq(&b).or(nan_a.and(nan_b.clone()));
    let before = b
        .lt(&a)
        .or(nan_a.and(nan_b.not()))
        .or(equal.and(ib.lt(&ia)));
    k.if_(before, |k| {
        k.store(order, &low, ib.clone());
        k.store(order, &high, ia.clone());
    });
}

/// The block's thread, its width and its row's first element (`row * n`).
fn row_of_block(k: &mut KernelScope, n: &Val) -> (Val, Val, Val) {
    let i64_of = |v: Val| v.cast(DType::I64);
    let thread = i64_of(k.thread_idx(Dim::X));
    let width = i64_of(k.block_dim(Dim::X));
    let row = i64_of(k.block_idx(Dim::X));
    let base = k.let_(row * n);
    (thread, width, base)
}

/// The bitonic network over the block's row of `n` in its form where every
/// compare-exchange sends the smaller element to the lower index (the first
/// step of each merge compares mirrored positions); `exchange(k, base, i,
/// partner)` orders positions `i < partner` of the row starting at `base`.
fn bitonic_rows(
    k: &mut KernelScope,
    n: &Val,
    exchange: impl Fn(&mut KernelScope, &Val, &Val, &Val),
) {
    let (thread, width, base) = row_of_block(k, n);
    let two = Val::from(2i64);
    let padded = k.local(1i64);
    k.while_(padded.get().lt(n), |k| k.set(&padded, padded.get() * &two));
    let size = k.local(2i64);
    k.while_(size.get().le(padded.get()), |k| {
        let stride = k.local(size.get().apply_binary(BinaryOp::FloorDiv, &two));
        k.while_(stride.get().ge(1i64), |k| {
            let first = stride
                .get()
                .eq(size.get().apply_binary(BinaryOp::FloorDiv, &two));
            let mask = k.let_(Val::select(
                &first,
                size.get() - Val::from(1i64),
                stride.get(),
            ));
            k.for_range(thread.clone(), padded.get(), width.clone(), |k, i| {
                let partner = k.let_(i.apply_binary(BinaryOp::BitwiseXor, &mask));
                k.if_(partner.gt(&i).and(partner.lt(n)), |k| {
                    exchange(k, &base, &i, &partner);
                });
            });
            k.syncthreads();
            k.set(&stride, stride.get().apply_binary(BinaryOp::FloorDiv, &two));
        });
        k.set(&size, size.get() * &two);
    });
}

/// The CPU's sort: each row of the launch's one written array.
#[derive(Debug)]
struct CpuSort;

impl HostRoutine for CpuSort {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let n = row_length(launch, "sort")?;
        let data = Args::new("sort", arrays).output(outputs, 0)?;
        match data {
            SliceMut::F32(values) => on_workers(values, n, workers, |_, row| sort_floats(row)),
            SliceMut::F64(values) => on_workers(values, n, workers, |_, row| sort_floats(row)),
            data => with_slice_mut!(data, values => {
                on_workers(values, n, workers, |_, row| row.sort_unstable_by(nan_last));
            }),
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: Rust's unstable sort of each row, NaNs last, rows spread over the \
         worker threads"
            .to_string()
    }
}

/// The CPU's argsort: the positions of each row of the launch's values,
/// stably sorted by value into the written array.
#[derive(Debug)]
struct CpuArgsort;

impl HostRoutine for CpuArgsort {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let n = row_length(launch, "argsort")?;
        let args = Args::new("argsort", arrays);
        let data = args.array(0)?;
        let SliceMut::I64(order) = args.output(outputs, 0)? else {
            return Err(args.error("positions that are not i64"));
        };
        macro_rules! by_key {
            ($values:expr, $key:expr) => {
                on_workers(order, n, workers, |r, row| {
                    argsort_by_key(&$values[r * n..(r + 1) * n], row, $key)
                })
            };
        }
        match data {
            HostBuffer::F32(values) => by_key!(values, |x: f32| x.order_key()),
            HostBuffer::F64(values) => by_key!(values, |x: f64| x.order_key()),
            HostBuffer::F16(values) => by_key!(values, |x: f16| f32::from(x).order_key()),
            HostBuffer::BF16(values) => by_key!(values, |x: bf16| f32::from(x).order_key()),
            HostBuffer::I8(values) => by_key!(values, |x: i8| x),
            HostBuffer::I16(values) => by_key!(values, |x: i16| x),
            HostBuffer::I32(values) => by_key!(values, |x: i32| x),
            HostBuffer::I64(values) => by_key!(values, |x: i64| x),
            HostBuffer::U8(values) => by_key!(values, |x: u8| x),
            HostBuffer::U16(values) => by_key!(values, |x: u16| x),
            HostBuffer::U32(values) => by_key!(values, |x: u32| x),
            HostBuffer::U64(values) => by_key!(values, |x: u64| x),
            HostBuffer::Bool(values) => by_key!(values, |x: bool| x),
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: each row's (value key, position) pairs sorted (stable, NaNs last), \
         rows spread over the worker threads"
            .to_string()
    }
}

/// The positions that stably sort `values` by `key` (a total order),
/// into `row`: the (key, position) pairs sorted unstably, which is stable
/// as no two pairs are equal, and needs no lookup of a value per
/// comparison (sorting positions by their values did: 1.7x NumPy's time
/// on a row of 4·10^6).
fn argsort_by_key<T: Copy, K: Ord + Copy>(values: &[T], row: &mut [i64], key: impl Fn(T) -> K) {
    if u32::try_from(values.len()).is_ok() {
        let mut pairs: Vec<(K, u32)> = (values.iter().enumerate())
            .map(|(i, &v)| (key(v), i as u32))
            .collect();
        pairs.sort_unstable();
        for (slot, (_, i)) in row.iter_mut().zip(pairs) {
            *slot = i64::from(i);
        }
    } else {
        let mut pairs: Vec<(K, usize)> = (values.iter().enumerate())
            .map(|(i, &v)| (key(v), i))
            .collect();
        pairs.sort_unstable();
        for (slot, (_, i)) in row.iter_mut().zip(pairs) {
            *slot = i as i64;
        }
    }
}

/// The row length a sorting launch carries.
fn row_length(launch: &KernelLaunch, op: &str) -> Result<usize> {
    match launch.scalars.first().map(|s| s.to_wide()) {
        Some(lazyfuse_core::Wide::Int(n)) if n > 0 => Ok(n as usize),
        _ => Err(Error::internal(op, "a launch without its row length")),
    }
}

/// Elements below which rows are sorted on the calling thread (waking a
/// worker costs tens of microseconds).
const PARALLEL_ELEMENTS: usize = 1 << 16;

/// `each(r, row)` for every row `r` of `n` elements of `values`, runs of
/// consecutive rows spread over the workers.
fn on_workers<T: Send>(
    values: &mut [T],
    n: usize,
    workers: Workers<'_>,
    each: impl Fn(usize, &mut [T]) + Sync,
) {
    workers.split_mut(values, n, PARALLEL_ELEMENTS, |first, rows| {
        for (r, row) in rows.chunks_mut(n).enumerate() {
            each(first + r, row);
        }
    });
}

/// A row of floats in NumPy's order: the NaNs moved to the end, the
/// numbers sorted as integer keys that order like `total_cmp` (an integer
/// sort without a comparison closure: twice as fast on rows of 1000; it
/// puts -0.0 before 0.0, which NumPy's unstable sort may do too).
fn sort_floats<T: Float>(row: &mut [T]) {
    let mut numbers = row.len();
    let mut i = 0;
    while i < numbers {
        if row[i].is_nan() {
            numbers -= 1;
            row.swap(i, numbers);
        } else {
            i += 1;
        }
    }
    let mut keys: Vec<T::Key> = row[..numbers].iter().map(|&x| x.key()).collect();
    keys.sort_unstable();
    for (x, key) in row.iter_mut().zip(keys) {
        *x = T::from_key(key);
    }
}

/// The floats [`sort_floats`] sorts, with their order-preserving keys: the
/// bits with the sign bit flipped for positive numbers and all bits
/// flipped for negative ones.
trait Float: Copy {
    type Key: Ord + Copy;
    fn is_nan(self) -> bool;
    fn key(self) -> Self::Key;
    fn from_key(key: Self::Key) -> Self;
    /// A key in NumPy's sort order for ties: -0.0 equal to 0.0, every
    /// NaN equal and after every number.
    fn order_key(self) -> Self::Key;
}

macro_rules! float_keys {
    ($($float:ty => $key:ty),*) => {$(
        impl Float for $float {
            type Key = $key;
            fn is_nan(self) -> bool {
                <$float>::is_nan(self)
            }
            fn key(self) -> $key {
                let bits = self.to_bits();
                let sign = 1 << (<$key>::BITS - 1);
                if bits & sign != 0 { !bits } else { bits | sign }
            }
            fn from_key(key: $key) -> Self {
                let sign = 1 << (<$key>::BITS - 1);
                <$float>::from_bits(if key & sign != 0 { key & !sign } else { !key })
            }
            fn order_key(self) -> $key {
                match self {
                    x if x.is_nan() => <$key>::MAX,
                    x if x == 0.0 => (0.0 as $float).key(),
                    x => x.key(),
                }
            }
        }
    )*};
}

float_keys!(f32 => u32, f64 => u64);

/// NumPy's order: by value, NaNs (which compare unordered with anything)
/// after every number.
fn nan_last<T: PartialOrd>(a: &T, b: &T) -> Ordering {
    a.partial_cmp(b).unwrap_or_else(|| {
        // Unordered: at least one is NaN (the only value unequal to itself).
        #[allow(clippy::eq_op)]
        let (a_nan, b_nan) = (a != a, b != b);
        a_nan.cmp(&b_nan)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_order_as_total_cmp_and_give_the_floats_back() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1.0,
            2.5e10,
            f64::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(pair[0].key() < pair[1].key(), "{pair:?}");
        }
        for &v in &values {
            assert_eq!(f64::from_key(v.key()).to_bits(), v.to_bits());
            let single = v as f32;
            assert_eq!(f32::from_key(single.key()).to_bits(), single.to_bits());
        }
        let mut row = [3.0f32, f32::NAN, -0.0, -7.5, 0.0, f32::NEG_INFINITY, 1e-40];
        sort_floats(&mut row);
        assert_eq!(row[..6], [f32::NEG_INFINITY, -7.5, -0.0, 0.0, 1e-40, 3.0]);
        assert!(row[6].is_nan());
    }
}
