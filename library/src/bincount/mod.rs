//! Counting values into bins (NumPy's `np.bincount`, the core of
//! `np.histogram`): lazily, one launch of a kernel whose threads add each
//! element's count or weight to its bin atomically; the CPU runs a library
//! routine instead (counts: a partial count per worker thread, summed;
//! weights: one pass in element order, so that float sums do not depend
//! on the thread count).
//!
//! ```
//! use lazyfuse::{bincount, Context};
//!
//! let cx = Context::sim();
//! let x = cx.from_slice(&[1i64, 3, 1, 0, 9]);
//! assert_eq!(bincount(&x, None, 4)?.to_vec::<i64>()?, [1, 2, 0, 1]); // 9 is outside
//! let w = cx.from_slice(&[0.5f64, 1.0, 2.0, 4.0, 8.0]);
//! assert_eq!(bincount(&x, Some(&w), 2)?.to_vec::<f64>()?, [4.0, 2.5]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{Array, DType, Error, HostBuffer, KernelLaunch, Result, SliceMut};

use crate::kernel::{Dim, HostRoutine, Kernel, KernelArg, Val, Workers};
use crate::kernel_cache::KernelCache;
use crate::routine::Args;

/// Threads per block; each thread takes elements a grid apart.
const BLOCK: u32 = 256;
/// Blocks at most (enough to fill a large GPU; the threads loop).
const MAX_BLOCKS: usize = 4096;

/// The count of each value `0..length` among the integers `x`
/// (flattened), or with `weights` (of `x`'s shape) the sum of their
/// weights (NumPy's `np.bincount(x, weights, minlength=length)` where
/// `length` covers the largest value): `i64` counts, `f64` sums. Values
/// outside `0..length` are not counted. Lazy.
///
/// Errors: `x` not of an integer dtype, `weights` of another shape,
/// arrays of two contexts.
pub fn bincount(x: &Array, weights: Option<&Array>, length: usize) -> Result<Array> {
    x.check()?;
    if !x.dtype().is_integer() {
        return Err(Error::DTypeMismatch {
            op: "bincount".into(),
            message: format!("values of dtype {} (expected integers)", x.dtype()),
        });
    }
    if let Some(w) = weights {
        w.check()?;
        if w.shape() != x.shape() {
            return Err(Error::ShapeMismatch {
                op: "bincount".into(),
                message: format!(
                    "weights of shape {} for values of shape {} (expected the same shape)",
                    format_shape(w.shape()),
                    format_shape(x.shape())
                ),
            });
        }
    }
    let session = x.session();
    let dtype = match weights {
        Some(_) => DType::F64,
        None => DType::I64,
    };
    let total = x.len();
    if total == 0 || length == 0 {
        return Ok(session.zeros(&[length], dtype));
    }
    let values = x.astype(DType::I64).reshape(&[total]);
    let bins = session.zeros(&[length], dtype);
    let blocks = total.div_ceil(BLOCK as usize).min(MAX_BLOCKS) as u32;
    let kernel = bincount_kernel(weights.is_some())?;
    let counted = match weights {
        Some(w) => {
            let w = w.astype(DType::F64).reshape(&[total]);
            let args: [KernelArg<'_>; 3] = [(&values).into(), (&w).into(), (&bins).into()];
            kernel.launch(session, blocks, BLOCK, &args)?
        }
        None => {
            let args: [KernelArg<'_>; 2] = [(&values).into(), (&bins).into()];
            kernel.launch(session, blocks, BLOCK, &args)?
        }
    };
    counted
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("bincount", "a launch without its bins"))
}

/// The kernel [`bincount`] launches: weighted (`f64` sums) or not (`i64`
/// counts); public to inspect its code.
pub fn bincount_kernel(weighted: bool) -> Result<Kernel> {
    static KERNELS: KernelCache<bool> = KernelCache::new();
    KERNELS.get_or_build(weighted, || {
        let name = match weighted {
            true => "lf_bincount_weighted",
            false => "lf_bincount",
        };
        let built = lazyfuse_kernel::Kernel::build(name, |k| {
            let values = k.array("values", DType::I64, 1);
            let weights = weighted.then(|| k.array("weights", DType::F64, 1));
            let dtype = if weighted { DType::F64 } else { DType::I64 };
            let bins = k.array_mut("bins", dtype, 1);
            let i64_of = |v: Val| v.cast(DType::I64);
            let start = i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X))
                + i64_of(k.thread_idx(Dim::X));
            let stride = i64_of(k.grid_dim(Dim::X)) * i64_of(k.block_dim(Dim::X));
            let (total, length) = (values.len(0), bins.len(0));
            k.for_range(start, total, stride, |k, t| {
                let bin = k.let_(values.at(&t));
                k.if_(bin.ge(0i64).and(bin.lt(&length)), |k| {
                    match &weights {
                        Some(w) => k.atomic_add(&bins, bin.clone(), w.at(&t)),
                        None => k.atomic_add(&bins, bin.clone(), 1i64),
                    };
                });
            });
        })?
        .with_host_routine(Arc::new(CpuBincount))?;
        Ok(Kernel::from_built(built))
    })
}

/// The CPU's bincount.
#[derive(Debug)]
struct CpuBincount;

/// Elements below which counting runs on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 16;

impl HostRoutine for CpuBincount {
    fn run(
        &self,
        _launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let args = Args::new("bincount", arrays);
        let values = args.values::<i64>(0)?;
        match args.output(outputs, 0)? {
            SliceMut::F64(bins) => {
                // In element order: the same sums on any number of threads.
                let weights = args.values::<f64>(1)?;
                for (&v, &w) in values.iter().zip(weights) {
                    if let Some(bin) = usize::try_from(v).ok().and_then(|v| bins.get_mut(v)) {
                        *bin += w;
                    }
                }
            }
            SliceMut::I64(bins) => count(values, bins, workers),
            _ => return Err(args.error("bins that are neither i64 nor f64")),
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: counts per worker thread, summed (weights: one pass in order)"
            .to_string()
    }
}

/// `bins[v] += 1` for each `v` of `values` inside the bins: a partial
/// count per task, summed (exact, in any order).
fn count(values: &[i64], bins: &mut [i64], workers: Workers<'_>) {
    let tally = |part: &[i64], into: &mut [i64]| {
        for &v in part {
            if let Some(bin) = usize::try_from(v).ok().and_then(|v| into.get_mut(v)) {
                *bin += 1;
            }
        }
    };
    let threads = match values.len() < PARALLEL_ELEMENTS {
        true => 1,
        false => workers.threads.max(1),
    };
    if threads == 1 {
        tally(values, bins);
        return;
    }
    let per_task = values.len().div_ceil(threads);
    let partials: Vec<Mutex<Vec<i64>>> = (0..threads)
        .map(|_| Mutex::new(vec![0; bins.len()]))
        .collect();
    (workers.run)(threads, &|t| {
        let part = values.chunks(per_task).nth(t).unwrap_or(&[]);
        let mut partial = partials[t].lock().unwrap_or_else(PoisonError::into_inner);
        tally(part, &mut partial);
    });
    for partial in partials {
        let partial = partial.into_inner().unwrap_or_else(PoisonError::into_inner);
        for (bin, n) in bins.iter_mut().zip(partial) {
            *bin += n;
        }
    }
}
