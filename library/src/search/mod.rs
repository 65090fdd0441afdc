//! Binary search in a sorted array (NumPy's `np.searchsorted`): lazily,
//! one launch of a kernel where each thread finds one value's position by
//! a binary search over the sorted array; the CPU runs a library routine
//! instead (a branch-free binary search, 16 values in lockstep, the
//! values spread over the worker threads). NaNs count as larger than every number, as in NumPy's sort.
//!
//! ```
//! use lazyfuse::{searchsorted, Context, Side};
//!
//! let cx = Context::sim();
//! let sorted = cx.from_slice(&[1.0f64, 2.0, 2.0, 5.0]);
//! let values = cx.from_vec(vec![2.0f64, 0.0, 9.0, f64::NAN], &[2, 2])?;
//! assert_eq!(searchsorted(&sorted, &values, Side::Left)?.to_vec::<i64>()?, [1, 0, 4, 4]);
//! assert_eq!(searchsorted(&sorted, &values, Side::Right)?.to_vec::<i64>()?, [3, 0, 4, 4]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::sync::Arc;

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{
    promote, with_buffer, Array, BinaryOp, DType, Error, HostBuffer, KernelLaunch, Result, SliceMut,
};

use crate::kernel::{Dim, HostRoutine, Kernel, KernelArg, Val, Workers};
use crate::kernel_cache::KernelCache;
use crate::routine::Args;

/// Threads per block.
const BLOCK: u32 = 256;

/// Which of equal elements' positions [`searchsorted`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Before the equal elements: the first position whose element is not
    /// smaller than the value (NumPy's `side="left"`).
    Left,
    /// After them: the first position whose element is larger (NumPy's
    /// `side="right"`).
    Right,
}

/// For each element of `values`, the position in the 1-d ascending
/// `sorted` (NaNs last) where inserting it keeps the order (NumPy's
/// `np.searchsorted(sorted, values, side)`): `i64`, of `values`' shape.
/// Both are compared in their promoted dtype. Lazy.
///
/// Errors: `sorted` not 1-d, arrays of two contexts, invalid arrays.
pub fn searchsorted(sorted: &Array, values: &Array, side: Side) -> Result<Array> {
    sorted.check()?;
    values.check()?;
    if sorted.shape().len() != 1 {
        return Err(Error::invalid(
            "searchsorted",
            format!(
                "a sorted array of shape {} (expected 1-d)",
                format_shape(sorted.shape())
            ),
        ));
    }
    let session = values.session();
    let total = values.len();
    let n = sorted.len();
    if total == 0 || n == 0 {
        return Ok(session.zeros(values.shape(), DType::I64));
    }
    let dtype = match promote(sorted.dtype(), values.dtype()) {
        DType::F16 | DType::BF16 => DType::F32, // exact, and every backend compares it
        other => other,
    };
    let blocks = u32::try_from(total.div_ceil(BLOCK as usize)).map_err(|_| {
        Error::invalid(
            "searchsorted",
            format!("{total} values (expected fewer than 2^40)"),
        )
    })?;
    let (sorted, flat) = (sorted.astype(dtype), values.astype(dtype).reshape(&[total]));
    let positions = session.zeros(&[total], DType::I64);
    let args: [KernelArg<'_>; 5] = [
        (&sorted).into(),
        (&flat).into(),
        (&positions).into(),
        (n as i64).into(),
        (total as i64).into(),
    ];
    let found = searchsorted_kernel(dtype, side)?
        .launch(session, blocks, BLOCK, &args)?
        .remove(0);
    Ok(found.reshape(values.shape()))
}

/// The kernel [`searchsorted`] launches for `dtype` and `side` (a thread
/// per value); public to inspect its code.
pub fn searchsorted_kernel(dtype: DType, side: Side) -> Result<Kernel> {
    static KERNELS: KernelCache<(DType, Side)> = KernelCache::new();
    KERNELS.get_or_build((dtype, side), || {
        let name = match side {
            Side::Left => format!("lf_searchsorted_{dtype}_left"),
            Side::Right => format!("lf_searchsorted_{dtype}_right"),
        };
        let built = lazyfuse_kernel::Kernel::build(&name, |k| {
            let sorted = k.array("sorted", dtype, 1);
            let values = k.array("values", dtype, 1);
            let positions = k.array_mut("positions", DType::I64, 1);
            let [n, total] = ["n", "total"].map(|name| k.scalar(name, DType::I64));
            let i64_of = |v: Val| v.cast(DType::I64);
            let t = i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X))
                + i64_of(k.thread_idx(Dim::X));
            let t = k.let_(t);
            k.if_(t.lt(&total), |k| {
                let value = k.let_(values.at(&t));
                let (low, high) = (k.local(0i64), k.local(n.clone()));
                k.while_(low.get().lt(high.get()), |k| {
                    let middle = k.let_(
                        (low.get() + high.get()).apply_binary(BinaryOp::FloorDiv, Val::from(2i64)),
                    );
                    let element = k.let_(sorted.at(&middle));
                    // Whether the value goes after `element`.
                    let after = match side {
                        Side::Left => less(&element, &value),
                        Side::Right => less(&value, &element).not(),
                    };
                    let after = k.let_(after);
                    k.set(
                        &low,
                        Val::select(&after, &middle + Val::from(1i64), low.get()),
                    );
                    k.set(&high, Val::select(&after, high.get(), middle.clone()));
                });
                k.store(&positions, &t, low.get());
            });
        })?
        .with_host_routine(Arc::new(CpuSearch { side }))?
        .overwriting()?; // a thread per value writes its position
        Ok(Kernel::from_built(built))
    })
}

/// NumPy's sort order: `a < b`, or `b` a NaN and `a` a number.
fn less(a: &Val, b: &Val) -> Val {
    a.lt(b).or(b.ne(b).and(a.eq(a)))
}

/// The CPU's search: each value's position by a branch-free binary search.
#[derive(Debug)]
struct CpuSearch {
    side: Side,
}

/// Values below which the search runs on the calling thread.
const PARALLEL_VALUES: usize = 1 << 14;

impl HostRoutine for CpuSearch {
    fn run(
        &self,
        _launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let args = Args::new("searchsorted", arrays);
        let (sorted, values) = (args.array(0)?, args.array(1)?);
        let SliceMut::I64(positions) = args.output(outputs, 0)? else {
            return Err(args.error("positions that are not i64"));
        };
        let wrong = || args.error("values of another dtype than the sorted array");
        let side = self.side;
        with_buffer!(sorted, sorted => {
            let values: &[_] = values.as_slice().ok_or_else(wrong)?;
            workers.split_mut(positions, 1, PARALLEL_VALUES, |first, run| {
                search_run(sorted, &values[first..first + run.len()], side, run);
            });
        });
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: a branch-free binary search per value, 16 values in lockstep, \
         the values spread over the worker threads"
            .to_string()
    }
}

/// Values searched in lockstep: their searches are independent, so the
/// processor overlaps their loads instead of waiting on one chain of them
/// (2-4x faster than one value at a time, more for larger tables).
const LOCKSTEP: usize = 16;

/// The positions of `values` in `sorted`, into `positions`: groups of
/// [`LOCKSTEP`] values searched together, one at a time for a group with a
/// NaN and for the last few.
fn search_run<T: PartialOrd>(sorted: &[T], values: &[T], side: Side, positions: &mut [i64]) {
    let mut groups = positions.chunks_exact_mut(LOCKSTEP);
    let mut value_groups = values.chunks_exact(LOCKSTEP);
    for (slots, group) in (&mut groups).zip(&mut value_groups) {
        #[allow(clippy::eq_op)]
        let numbers = group.iter().all(|v| v == v);
        match (side, numbers) {
            (Side::Left, true) => first_not_each(sorted, group, |e, v| e < v, slots),
            (Side::Right, true) => first_not_each(sorted, group, |e, v| e <= v, slots),
            (_, false) => search_each(sorted, group, side, slots),
        }
    }
    search_each(
        sorted,
        value_groups.remainder(),
        side,
        groups.into_remainder(),
    );
}

/// The positions of `values` in `sorted`, one value at a time.
fn search_each<T: PartialOrd>(sorted: &[T], values: &[T], side: Side, positions: &mut [i64]) {
    for (slot, value) in positions.iter_mut().zip(values) {
        // NumPy's order (NaNs last), with the value's NaN-ness decided
        // once: the comparisons then have no branches.
        #[allow(clippy::eq_op)]
        let found = match (side, value != value) {
            (Side::Left, false) => first_not(sorted, |e| e < value),
            (Side::Right, false) => first_not(sorted, |e| e <= value),
            (Side::Left, true) => first_not(sorted, |e| e == e),
            (Side::Right, true) => sorted.len(),
        };
        *slot = found as i64;
    }
}

/// The first position of `sorted` whose element `before` does not hold
/// for (it holds for a prefix): a binary search whose steps are
/// conditional moves, not branches on the data, so a random value costs
/// no mispredicted branches.
fn first_not<T>(sorted: &[T], before: impl Fn(&T) -> bool) -> usize {
    let (mut base, mut size) = (0, sorted.len());
    while size > 1 {
        let half = size / 2;
        base = std::hint::select_unpredictable(before(&sorted[base + half]), base + half, base);
        size -= half;
    }
    base + usize::from(size == 1 && before(&sorted[base]))
}

/// [`first_not`] for each of [`LOCKSTEP`] values at once (`before(e, v)`
/// holds for a prefix of `sorted` for each `v`): the searches take the same
/// steps, as their lengths are equal, so they run interleaved.
fn first_not_each<T>(
    sorted: &[T],
    values: &[T],
    before: impl Fn(&T, &T) -> bool,
    positions: &mut [i64],
) {
    let mut bases = [0usize; LOCKSTEP];
    let mut size = sorted.len();
    while size > 1 {
        let half = size / 2;
        for (base, value) in bases.iter_mut().zip(values) {
            let probe = *base + half;
            *base = std::hint::select_unpredictable(before(&sorted[probe], value), probe, *base);
        }
        size -= half;
    }
    for ((slot, base), value) in positions.iter_mut().zip(bases).zip(values) {
        *slot = (base + usize::from(size == 1 && before(&sorted[base], value))) as i64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lockstep search against the one-value search, over tables of
    /// every length up to 40 (with runs of equal elements) and values
    /// between, at and beyond them, NaNs mixed in.
    #[test]
    fn lockstep_search_finds_what_one_value_search_finds() {
        let values: Vec<f64> = (-5..=45)
            .flat_map(|i| [i as f64 / 2.0, f64::NAN, i as f64 / 2.0 + 0.25])
            .collect();
        for len in 0..40 {
            let mut sorted: Vec<f64> = (0..len).map(|i| (i / 3) as f64).collect();
            if len % 4 == 1 {
                sorted.push(f64::NAN);
            }
            for side in [Side::Left, Side::Right] {
                for take in [values.len(), 32, 47] {
                    let values = &values[..take];
                    let mut lockstep = vec![-1; values.len()];
                    let mut each = vec![-2; values.len()];
                    search_run(&sorted, values, side, &mut lockstep);
                    search_each(&sorted, values, side, &mut each);
                    assert_eq!(lockstep, each, "{len} elements, {side:?}");
                }
            }
        }
    }

    /// Groups without a NaN take the lockstep path; its positions are
    /// NumPy's.
    #[test]
    fn lockstep_positions_are_numpys() {
        let sorted = [1.0f64, 2.0, 2.0, 5.0];
        let values: Vec<f64> = (0..LOCKSTEP).map(|i| i as f64 / 2.0).collect();
        let mut left = vec![0; LOCKSTEP];
        let mut right = vec![0; LOCKSTEP];
        search_run(&sorted, &values, Side::Left, &mut left);
        search_run(&sorted, &values, Side::Right, &mut right);
        let numpy_left = [0, 0, 0, 1, 1, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4];
        let numpy_right = [0, 0, 1, 1, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4];
        assert_eq!(left, numpy_left);
        assert_eq!(right, numpy_right);
    }
}
