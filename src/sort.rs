//! Sorting along an axis (NumPy's `np.sort`): lazily, one launch of a
//! kernel that sorts each row of a copy in place. On devices each row is
//! one block running a bitonic sorting network over global memory (rows
//! padded to a power of two with virtual elements larger than any, which
//! never move: each compare-exchange keeps the smaller value at the lower
//! index); the CPU runs a library routine instead, Rust's unstable sort of
//! each row. NaNs sort last, as in NumPy.
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

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{
    with_slice_mut, Array, BinaryOp, DType, Error, HostBuffer, KernelLaunch, Result, SliceMut,
};

use crate::kernel::{Dim, HostRoutine, Kernel, KernelArg, KernelScope, Val, Workers};
use crate::kernel_cache::KernelCache;

/// Threads per block (one block per row), at most.
const BLOCK: u32 = 256;

/// `array` sorted along `axis`, ascending, NaNs last (NumPy's
/// `np.sort(array, axis)`; not stable, as NumPy's default). Lazy.
///
/// Errors: an axis outside the array, an invalid array.
pub fn sort(array: &Array, axis: usize) -> Result<Array> {
    array.check()?;
    let shape = array.shape().to_vec();
    let Some(&n) = shape.get(axis) else {
        return Err(Error::invalid(
            "sort",
            format!(
                "axis {axis} of an array of shape {} (expected an axis below {})",
                format_shape(&shape),
                shape.len()
            ),
        ));
    };
    let total = array.len();
    if total == 0 || n <= 1 {
        return Ok(array.clone()); // values are immutable: nothing to copy
    }
    // The axis last, then rows of `n`, which the kernel sorts (in place
    // when nothing else reads them, else in a copy of its own).
    let mut order: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();
    order.push(axis);
    let moved = array.permute(&order);
    let rows = total / n;
    let grid = u32::try_from(rows).map_err(|_| {
        Error::invalid(
            "sort",
            format!("{rows} rows of {n} (expected fewer than 2^32 rows)"),
        )
    })?;
    let threads = BLOCK.min(n.next_power_of_two().max(32) as u32);
    let data = moved.reshape(&[total]);
    let args: [KernelArg<'_>; 2] = [(&data).into(), (n as i64).into()];
    let sorted = sort_kernel(array.dtype())?
        .launch(array.session(), grid, threads, &args)?
        .remove(0);
    let mut inverse = vec![0; order.len()];
    for (position, &d) in order.iter().enumerate() {
        inverse[d] = position;
    }
    Ok(sorted.reshape(moved.shape()).permute(&inverse))
}

/// The kernel [`sort`] launches for `dtype` (one block per row of `n`
/// elements of `data`, sorted in place); public to inspect its code.
pub fn sort_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_sort_{dtype}"), |k| {
            bitonic_rows(k, dtype);
        })?
        .with_host_routine(Arc::new(CpuSort))?;
        Ok(Kernel::from_built(built))
    })
}

/// The device body of [`sort_kernel`]: the bitonic network in its form
/// where every compare-exchange sends the smaller value to the lower
/// index (the first step of each merge compares mirrored positions).
fn bitonic_rows(k: &mut KernelScope, dtype: DType) {
    let data = k.array_mut("data", dtype, 1);
    let n = k.scalar("n", DType::I64);
    let i64_of = |v: Val| v.cast(DType::I64);
    let thread = i64_of(k.thread_idx(Dim::X));
    let width = i64_of(k.block_dim(Dim::X));
    let row = i64_of(k.block_idx(Dim::X));
    let base = k.let_(row * &n);
    let two = Val::from(2i64);
    let padded = k.local(1i64);
    k.while_(padded.get().lt(&n), |k| k.set(&padded, padded.get() * &two));
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
                k.if_(partner.gt(&i).and(partner.lt(&n)), |k| {
                    let (low, high) = (k.let_(&base + &i), k.let_(&base + &partner));
                    let a = k.let_(data.at(&low));
                    let b = k.let_(data.at(&high));
                    // `b` before `a`: smaller, or a number against a NaN.
                    let nan_a = a.ne(&a).and(b.eq(&b));
                    k.if_(b.lt(&a).or(nan_a), |k| {
                        k.store(&data, &low, b.clone());
                        k.store(&data, &high, a.clone());
                    });
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
        _arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        _workers: Workers<'_>,
    ) -> Result<()> {
        let n = match launch.scalars.first().map(|s| s.to_wide()) {
            Some(lazyfuse_core::Wide::Int(n)) if n > 0 => n as usize,
            _ => return Err(Error::internal("sort", "a launch without its row length")),
        };
        let Some(data) = outputs.first_mut() else {
            return Err(Error::internal("sort", "a launch without its array"));
        };
        with_slice_mut!(data, values => {
            for row in values.chunks_mut(n) {
                row.sort_unstable_by(nan_last);
            }
        });
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: Rust's unstable sort of each row, NaNs last".to_string()
    }
}

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
