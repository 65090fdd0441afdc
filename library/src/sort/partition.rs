//! Partitioning along an axis (NumPy's `np.partition`): each `kth`
//! element where sorting would put it, smaller ones before, larger ones
//! after. Devices sort the rows whole (the bitonic network of `mod.rs`,
//! one such arrangement); the CPU runs a library routine that selects
//! each `kth` element (`select_nth_unstable`, linear time) instead of
//! sorting: a median of 4·10^6 values is one selection, not a sort.
//!
//! ```
//! use lazyfuse::{partition, Context};
//!
//! let cx = Context::cpu();
//! let x = cx.from_slice(&[5.0f64, f64::NAN, 1.0, 4.0, 2.0]);
//! let parted = partition(&x, 0, &[2, -1])?.to_vec::<f64>()?;
//! assert_eq!(parted[2], 4.0); // the third smallest, in its sorted place
//! assert!(parted[..2].iter().all(|&v| v < 4.0));
//! assert!(parted[4].is_nan()); // NaNs last
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::sync::Arc;

use lazyfuse_core::{
    with_slice_mut, Array, DType, Error, HostBuffer, KernelLaunch, Result, SliceMut,
};

use super::{bitonic_rows, nan_last, on_workers, order_values, row_length, stages, Rows};
use crate::kernel::{HostRoutine, Kernel, KernelArg, Workers};
use crate::kernel_cache::KernelCache;
use crate::routine::Args;

/// `array` partitioned along `axis` at the positions `kth` (negative ones
/// count from the end; NumPy's `np.partition(array, kth, axis)`): the
/// element at each is the one sorting would put there, the elements
/// before it are not larger, those after not smaller (NaNs last). Lazy.
///
/// Errors: an axis outside the array, a `kth` outside the axis, an
/// invalid array.
pub fn partition(array: &Array, axis: usize, kth: &[i64]) -> Result<Array> {
    // The axis is checked first; then every kth, even where nothing moves.
    let rows = Rows::along(array, axis, "partition")?;
    let n = array.shape().get(axis).copied().unwrap_or(0) as i64;
    let mut kth: Vec<i64> = kth
        .iter()
        .map(|&k| match k {
            k if (0..n).contains(&k) => Ok(k),
            k if (-n..0).contains(&k) => Ok(k + n),
            k => Err(Error::invalid(
                "partition",
                format!("kth(={k}) out of bounds ({n}) (expected -{n}..{n})"),
            )),
        })
        .collect::<Result<_>>()?;
    kth.sort_unstable();
    kth.dedup();
    let Some(rows) = rows else {
        return Ok(array.clone()); // values are immutable: nothing to copy
    };
    if rows.staged(array) {
        return Ok(rows.back(&stages::sort(&rows, array.dtype())?));
    }
    let count = kth.len();
    let positions = array.session().from_vec(kth, &[count])?;
    let args: [KernelArg<'_>; 3] = [
        (&rows.data).into(),
        (&positions).into(),
        (rows.n as i64).into(),
    ];
    let parted = partition_kernel(array.dtype())?
        .launch(array.session(), rows.grid, rows.threads, &args)?
        .remove(0);
    Ok(rows.back(&parted))
}

/// The kernel [`partition`] launches for `dtype` (public to inspect its
/// code): on devices the sort of each row of `data` (`kth` unread), on
/// the CPU a selection of each `kth` position.
pub fn partition_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_partition_{dtype}"), |k| {
            let data = k.array_mut("data", dtype, 1);
            let _kth = k.array("kth", DType::I64, 1);
            let n = k.scalar("n", DType::I64);
            bitonic_rows(k, &n, |k, base, i, partner| {
                order_values(k, &data, base, i, partner);
            });
        })?
        .with_host_routine(Arc::new(CpuPartition))?;
        Ok(Kernel::from_built(built))
    })
}

/// The CPU's partition: in each row, each `kth` position (ascending)
/// selected within what the ones before left.
#[derive(Debug)]
struct CpuPartition;

impl HostRoutine for CpuPartition {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let n = row_length(launch, "partition")?;
        let args = Args::new("partition", arrays);
        let kth = args.values::<i64>(1)?;
        let data = args.output(outputs, 0)?;
        with_slice_mut!(data, values => {
            on_workers(values, n, workers, |_, row| {
                let mut start = 0;
                for &k in kth {
                    let k = k as usize;
                    if k >= start && k < row.len() {
                        row[start..].select_nth_unstable_by(k - start, nan_last);
                        start = k + 1;
                    }
                }
            });
        });
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: each kth position of each row selected (select_nth_unstable, NaNs \
         last), rows spread over the worker threads"
            .to_string()
    }
}
