//! The CPU's index copies: what the index kernels compute, as copies of
//! whole rows (`copy_from_slice`, `fill`) instead of one element per
//! thread. A row is the `inner` elements one `(a, k)` pairs, consecutive
//! on both sides; rows of a gather go to the worker threads (each writes
//! its own rows of the output), those of a scatter run in index order on
//! the calling thread (two may land on one row).

use lazyfuse_core::{
    with_slice_mut, Element, Error, HostBuffer, KernelLaunch, Result, SliceMut, Wide,
};

use super::variant::{Direction, Variant};
use crate::kernel::{HostRoutine, Workers};
use crate::routine::Args;

/// The CPU's routine for the index kernel of one [`Variant`].
#[derive(Debug)]
pub(super) struct CpuIndexCopy {
    pub(super) variant: Variant,
}

/// Elements below which a gather runs on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 16;

/// A launch's scalars (the index kernels' `n`, `count`, `inner`, `total`
/// and a scatter's value steps), as sizes.
#[derive(Clone, Copy)]
struct Extents {
    /// The indexed axis' length.
    n: usize,
    /// Indices.
    count: usize,
    /// Elements after the indexed axis: a row.
    inner: usize,
    /// Rows: `total / inner`, as `(a, k)` pairs.
    rows: usize,
    /// A scatter's value steps, per outer and per index position.
    steps: Option<[usize; 2]>,
}

impl Extents {
    fn of(launch: &KernelLaunch) -> Result<Extents> {
        let size = |i: usize| match launch.scalars.get(i).map(|s| s.to_wide()) {
            Some(Wide::Int(v)) => usize::try_from(v).map_err(|_| internal("a negative size")),
            _ => Err(internal("a launch without its sizes")),
        };
        let (inner, total) = (size(2)?, size(3)?);
        Ok(Extents {
            n: size(0)?,
            count: size(1)?,
            inner,
            rows: total.checked_div(inner).unwrap_or(0),
            steps: match launch.scalars.len() {
                6 => Some([size(4)?, size(5)?]),
                _ => None,
            },
        })
    }
}

fn internal(what: &str) -> Error {
    Error::internal("take", what)
}

impl HostRoutine for CpuIndexCopy {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let extents = Extents::of(launch)?;
        let args = Args::new("take", arrays);
        let (read, indices) = (args.array(1)?, args.values::<i64>(2)?);
        let written = args.output(outputs, 0)?;
        with_slice_mut!(written, written => {
            let read = read.as_slice().ok_or_else(|| internal("arrays of two dtypes"))?;
            self.copy(written, read, indices, extents, workers)
        })
    }

    fn describe(&self) -> String {
        match self.variant.direction {
            Direction::Gather => {
                "a library routine: row copies, the rows spread over the worker \
                                  threads"
            }
            _ => "a library routine: row copies in index order",
        }
        .to_string()
    }
}

impl CpuIndexCopy {
    /// Index `k` resolved into `[0, n)`, or `None` for a skipped one
    /// ([`Direction::ScatterLast`]'s -1).
    fn resolve(&self, raw: i64, n: usize) -> Result<Option<usize>> {
        let n = n as i64;
        let resolved = match self.variant {
            Variant {
                direction: Direction::ScatterLast,
                ..
            } if raw < 0 => return Ok(None),
            Variant { in_range: true, .. } if raw < 0 => raw + n,
            Variant { in_range: true, .. } => raw,
            // NumPy's `%`: the divisor's sign, so in [0, n).
            _ => raw.checked_rem_euclid(n).unwrap_or(-1),
        };
        match (0..n).contains(&resolved) {
            true => Ok(Some(resolved as usize)),
            false => Err(internal("an index outside its axis after resolution")),
        }
    }

    fn copy<T: Element>(
        &self,
        written: &mut [T],
        read: &[T],
        indices: &[i64],
        e: Extents,
        workers: Workers<'_>,
    ) -> Result<()> {
        if e.rows == 0 || e.inner == 0 {
            return Ok(());
        }
        let count = e.count.max(1);
        // The row `(a, j)` of the indexed array, `inner` elements.
        let indexed = |a: usize, j: usize| (a * e.n + j) * e.inner..(a * e.n + j + 1) * e.inner;
        let missing = || internal("a row outside its array");
        if self.variant.direction == Direction::Gather {
            let failed = std::sync::atomic::AtomicBool::new(false);
            workers.split_mut(written, e.inner, PARALLEL_ELEMENTS, |first, part| {
                for (r, row) in (first..).zip(part.chunks_mut(e.inner)) {
                    let (a, k) = (r / count, r % count);
                    let source = indices
                        .get(k)
                        .and_then(|&raw| self.resolve(raw, e.n).ok().flatten())
                        .and_then(|j| read.get(indexed(a, j)));
                    match source {
                        Some(source) => row.copy_from_slice(source),
                        None => failed.store(true, std::sync::atomic::Ordering::Relaxed),
                    }
                }
            });
            return match failed.into_inner() {
                true => Err(missing()),
                false => Ok(()),
            };
        }
        for r in 0..e.rows {
            let (a, k) = (r / count, r % count);
            let raw = *indices.get(k).ok_or_else(missing)?;
            let Some(j) = self.resolve(raw, e.n)? else {
                continue;
            };
            let row = written.get_mut(indexed(a, j)).ok_or_else(missing)?;
            if self.variant.direction == Direction::ScatterOne {
                row.fill(*read.first().ok_or_else(missing)?);
                continue;
            }
            let start = match e.steps {
                Some([outer_step, index_step]) => a * outer_step + k * index_step,
                None => r * e.inner,
            };
            row.copy_from_slice(read.get(start..start + e.inner).ok_or_else(missing)?);
        }
        Ok(())
    }
}
