//! Taking elements by index along an axis (NumPy's `take`, and the fancy
//! index `x[indices]`), and writing them (`x[indices] = value`): lazily,
//! one launch of a small gather or scatter kernel. A gather's result is a
//! fresh array (a temporary the kernel writes in place); a scatter writes
//! the target's value in place when nothing else reads it.
//!
//! ```
//! use lazyfuse::{take, Context, IndexMode};
//!
//! let cx = Context::sim();
//! let x = cx.from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3])?;
//! let columns = take(&x, &cx.from_slice(&[2i64, -3]), 1, IndexMode::Raise)?;
//! assert_eq!(columns.shape(), &[2, 2]);
//! assert_eq!(columns.to_vec::<f64>()?, [2.0, 0.0, 5.0, 3.0]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::sync::Arc;

use lazyfuse_core::shape::{broadcasts_to, format_shape};
use lazyfuse_core::{Array, DType, Error, HostBuffer, Result, Wide};

use crate::kernel::{Kernel, KernelArg};

mod host;
mod kernel;
mod variant;

use kernel::index_kernel;
use variant::{Direction, Layout, Variant};

/// What an index outside its axis does (NumPy's `mode`). Negative indices
/// count from the end in `Raise` and `Wrap` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexMode {
    /// An error (NumPy's `IndexError`) when the indices' values are known
    /// (data from the host, or computed already); indices still lazy wrap
    /// around instead, as CuPy's do, since checking them would compute
    /// them.
    Raise,
    /// Taken modulo the axis' length.
    Wrap,
    /// Clamped to the axis (negative indices to 0, as NumPy's `clip`).
    Clip,
}

/// Threads per block of the index kernels (at most).
const BLOCK: u32 = 256;

/// Elements after the indexed axis (or indices, with none after it) from
/// which each row of them is copied by blocks of its own
/// ([`Layout::Rows`], [`Layout::IndexRows`]).
const ROWS_FROM: usize = 32;

/// The elements of `array` at `indices` (any integer dtype and shape)
/// along `axis`: NumPy's `np.take(array, indices, axis, mode=...)`, of
/// shape `array.shape[..axis] + indices.shape + array.shape[axis + 1..]`.
/// Lazy, except that [`IndexMode::Raise`] reads indices whose values are
/// already known to check them.
///
/// Errors: an axis outside the array, indices that are not integers or
/// belong to another context, an index outside the axis (`Raise`), any
/// index into an empty axis.
pub fn take(array: &Array, indices: &Array, axis: usize, mode: IndexMode) -> Result<Array> {
    let at = Indexing::new("take", array, indices, axis, mode)?;
    if at.total == 0 {
        return Ok(array.session().zeros(&at.shape, array.dtype()));
    }
    let out = array.session().empty(&[at.total], array.dtype());
    let values = array.reshape(&[array.len()]);
    let taken = at.launch(Direction::Gather, &out, &values, None)?;
    Ok(taken.reshape(&at.shape))
}

/// The value of `target` with the elements at `indices` along `axis`
/// replaced by `value` (NumPy's `x[..., indices, ...] = value`, `axis`
/// slices deep; before the caller re-binds `target` to it, as with
/// [`assign_region`](crate::assign_region)). `value` broadcasts to the
/// indexed shape `target.shape[..axis] + indices.shape +
/// target.shape[axis + 1..]` and is cast to `target`'s dtype. Where
/// several indices name one element, the last one's value lands there
/// when the indices' values are known (as NumPy's does); for indices not
/// computed yet, which one is unspecified (as in CuPy; `sim`, which checks
/// kernels for races, reports one). Lazy, except that
/// indices whose values are known are read, to check them
/// ([`IndexMode::Raise`]) and to find repeats.
///
/// ```
/// use lazyfuse::{scatter, Context, IndexMode};
///
/// let cx = Context::sim();
/// let x = cx.from_vec(vec![0i32; 6], &[2, 3])?;
/// let written = scatter(&x, &cx.from_slice(&[2i64, 0]), 1, &cx.from_slice(&[7i32, 8]), IndexMode::Raise)?;
/// assert_eq!(written.to_vec::<i32>()?, [8, 0, 7, 8, 0, 7]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
///
/// Errors: those of [`take`], a `value` that does not broadcast to the
/// indexed shape or belongs to another context.
pub fn scatter(
    target: &Array,
    indices: &Array,
    axis: usize,
    value: &Array,
    mode: IndexMode,
) -> Result<Array> {
    let op = "scatter";
    value.check()?;
    target.check()?;
    if !value.session().same_as(target.session()) {
        return Err(Error::invalid(
            op,
            "the value belongs to another context (expected an array of the target's context)",
        ));
    }
    let at = Indexing::new(op, target, indices, axis, mode)?;
    if !broadcasts_to(value.shape(), &at.shape) {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            message: format!(
                "cannot broadcast a value of shape {} to the indexed shape {} \
                 (expected each dimension equal or 1, right-aligned)",
                format_shape(value.shape()),
                format_shape(&at.shape)
            ),
        });
    }
    if at.total == 0 {
        return Ok(target.clone());
    }
    let value = value.astype(target.dtype());
    let flat_target = target.reshape(&[target.len()]);
    let written = if value.len() == 1 {
        at.launch(
            Direction::ScatterOne,
            &flat_target,
            &value.reshape(&[1]),
            None,
        )?
    } else {
        // Read as it is when it varies along whole groups of axes (a row
        // assigned to many rows), else broadcast in memory first.
        let (value, steps) = match value_steps(value.shape(), &at, axis, indices.shape().len()) {
            Some(steps) => (value.reshape(&[value.len()]), steps),
            None => {
                let (count, inner) = (at.scalars[1], at.scalars[2]);
                let full = value.broadcast_to(&at.shape).reshape(&[at.total]);
                (full, [count * inner, inner])
            }
        };
        let extent = target.shape()[axis];
        match last_only(&at, indices, extent, mode)? {
            Some(last) => {
                let at = Indexing {
                    indices: target.session().from_vec(last, &[indices.len()])?,
                    known: None,
                    in_range: true,
                    ..at
                };
                at.launch(Direction::ScatterLast, &flat_target, &value, Some(steps))?
            }
            None => at.launch(Direction::Scatter, &flat_target, &value, Some(steps))?,
        }
    };
    Ok(written.reshape(target.shape()))
}

/// The value steps of a scatter kernel (see `kernel::index_kernel`) that
/// read `value` (of `shape`, broadcasting to the indexed shape of `at`:
/// `axis` outer axes, then `index_axes` axes of indices, then the inner
/// ones) in place: when it has every inner axis (or none is longer than
/// 1), and its outer and index axes are each either all there or all
/// broadcast. `None` otherwise.
fn value_steps(shape: &[usize], at: &Indexing, axis: usize, index_axes: usize) -> Option<[i64; 2]> {
    let ndim = at.shape.len();
    let mut padded = vec![1; ndim - shape.len()];
    padded.extend_from_slice(shape);
    let bounds = [0, axis, axis + index_axes, ndim];
    // Each group of axes: all there (`Some(true)`), all broadcast, or neither.
    let present = |g: usize| {
        let (own, full) = (
            &padded[bounds[g]..bounds[g + 1]],
            &at.shape[bounds[g]..bounds[g + 1]],
        );
        if own == full {
            Some(true)
        } else if own.iter().all(|&d| d == 1) {
            Some(false)
        } else {
            None
        }
    };
    let (outer, index, inner) = (present(0)?, present(1)?, present(2)?);
    let (count, inner_len) = (at.scalars[1], at.scalars[2]);
    if !inner && inner_len > 1 {
        return None; // broadcast along the inner axes: not by steps
    }
    // The value's own layout: its outer positions `inner` apart when it has
    // no index axes, `count * inner` apart when it has them.
    let index_step = if index { inner_len } else { 0 };
    let outer_step = match (outer, index) {
        (false, _) => 0,
        (true, true) => count * inner_len,
        (true, false) => inner_len,
    };
    Some([outer_step, index_step])
}

/// `shape[..axis] + indices + shape[axis + 1..]`.
fn indexed_shape(shape: &[usize], indices: &[usize], axis: usize) -> Vec<usize> {
    let mut indexed = shape[..axis].to_vec();
    indexed.extend_from_slice(indices);
    indexed.extend_from_slice(shape.get(axis + 1..).unwrap_or_default());
    indexed
}

/// One checked indexing of an array along an axis.
struct Indexing {
    /// The indexed shape.
    shape: Vec<usize>,
    /// Its elements: one thread each.
    total: usize,
    /// The indices, flat, as `i64` (clipped in `Clip` mode).
    indices: Array,
    /// Their values as given, when they were read to be checked.
    known: Option<Arc<HostBuffer>>,
    /// Every index is known to be inside the axis (see [`Variant`]).
    in_range: bool,
    layout: Layout,
    /// `[n, count, inner, total]`: the kernels' scalars.
    scalars: [i64; 4],
    /// The launch's grid and blocks.
    blocks: u32,
    threads: u32,
}

impl Indexing {
    /// The indexing of `array` at `indices` along `axis` for `op`, checked
    /// (the indices only when it selects an element).
    fn new(
        op: &str,
        array: &Array,
        indices: &Array,
        axis: usize,
        mode: IndexMode,
    ) -> Result<Indexing> {
        array.check()?;
        indices.check()?;
        if !indices.session().same_as(array.session()) {
            return Err(Error::invalid(
                op,
                "the indices belong to another context (expected an array of the array's context)",
            ));
        }
        let shape = array.shape();
        let Some(&extent) = shape.get(axis) else {
            return Err(Error::invalid(
                op,
                format!(
                    "axis {axis} of an array of shape {} (expected an axis below {})",
                    format_shape(shape),
                    shape.len()
                ),
            ));
        };
        if !indices.dtype().is_integer() {
            return Err(Error::DTypeMismatch {
                op: op.into(),
                message: format!(
                    "indices of dtype {} (expected an integer dtype)",
                    indices.dtype()
                ),
            });
        }
        let indexed = indexed_shape(shape, indices.shape(), axis);
        let total: usize = indexed.iter().product();
        if total > 0 && extent == 0 {
            return Err(Error::invalid(
                op,
                format!(
                    "indices into axis {axis} of length 0 of an array of shape {} \
                     (expected a non-empty axis)",
                    format_shape(shape)
                ),
            ));
        }
        let checked = total > 0 && mode == IndexMode::Raise && indices.is_materialized();
        let known = match checked {
            true => Some(indices.to_host()?),
            false => None,
        };
        if let Some(host) = &known {
            check_bounds(op, host, axis, extent)?;
        }
        let flat = indices.reshape(&[indices.len()]).astype(DType::I64);
        let flat = match mode {
            IndexMode::Clip => flat.clip(0i64, extent as i64 - 1),
            IndexMode::Raise | IndexMode::Wrap => flat,
        };
        let inner: usize = shape[axis + 1..].iter().product();
        let (layout, threads, blocks) = if axis == 0 && inner == 1 {
            (Layout::Flat, BLOCK, total.div_ceil(BLOCK as usize))
        } else if inner >= ROWS_FROM {
            let threads = BLOCK.min(inner.next_power_of_two() as u32);
            let rows = total / inner;
            (
                Layout::Rows,
                threads,
                rows * inner.div_ceil(threads as usize),
            )
        } else if inner == 1 && indices.len() >= ROWS_FROM {
            let threads = BLOCK.min(indices.len().next_power_of_two() as u32);
            let rows = total / indices.len();
            let blocks = rows * indices.len().div_ceil(threads as usize);
            (Layout::IndexRows, threads, blocks)
        } else {
            (Layout::Elements, BLOCK, total.div_ceil(BLOCK as usize))
        };
        let blocks = u32::try_from(blocks).map_err(|_| {
            Error::invalid(
                op,
                format!(
                    "an indexed shape of {total} elements \
                     (expected fewer than 2^32 blocks of {threads})"
                ),
            )
        })?;
        Ok(Indexing {
            shape: indexed,
            total,
            indices: flat,
            known,
            in_range: checked || mode == IndexMode::Clip,
            scalars: [extent, indices.len(), inner, total].map(|v| v as i64),
            layout,
            blocks,
            threads,
        })
    }

    /// Launches the index kernel of `direction` on `written` and `read`
    /// (a scatter of many values with its value steps); the new value of
    /// `written`.
    fn launch(
        &self,
        direction: Direction,
        written: &Array,
        read: &Array,
        steps: Option<[i64; 2]>,
    ) -> Result<Array> {
        let variant = Variant {
            direction,
            in_range: self.in_range,
            layout: self.layout,
        };
        let mut args: Vec<KernelArg<'_>> =
            vec![written.into(), read.into(), (&self.indices).into()];
        args.extend(self.scalars.map(KernelArg::from));
        args.extend(steps.into_iter().flatten().map(KernelArg::from));
        let kernel = index_kernel(written.dtype(), variant)?;
        let mut results = kernel.launch(written.session(), self.blocks, self.threads, &args)?;
        Ok(results.remove(0))
    }
}

/// NumPy's `IndexError` for the first index of `indices` (values known)
/// outside an axis of length `extent`.
fn check_bounds(op: &str, host: &HostBuffer, axis: usize, extent: usize) -> Result<()> {
    let extent = extent as i128;
    let Some((lowest, highest)) = extremes(host) else {
        return Ok(());
    };
    if lowest >= -extent && highest < extent {
        return Ok(());
    }
    let outside = (0..host.len())
        .filter_map(|i| match host.get_wide(i) {
            Some(Wide::Int(v)) => Some(v),
            _ => None,
        })
        .find(|&v| v < -extent || v >= extent)
        .unwrap_or(lowest);
    Err(Error::invalid(
        op,
        format!("index {outside} is out of bounds for axis {axis} with size {extent}"),
    ))
}

/// When the indices of `at` have known values and some name one element
/// twice: each resolved into `[0, extent)` by `mode`'s rule (checked
/// already in `Raise` mode), with -1 where a later index names the same
/// element, so that a scatter lands the last value as NumPy does. `None`
/// otherwise: nothing to skip, or lazy indices (not computed for this).
/// Values read to be checked are not read again.
fn last_only(
    at: &Indexing,
    indices: &Array,
    extent: usize,
    mode: IndexMode,
) -> Result<Option<Vec<i64>>> {
    let read;
    let host = match &at.known {
        Some(host) => host,
        None if indices.len() >= 2 && indices.is_materialized() => {
            read = indices.to_host()?;
            &read
        }
        None => return Ok(None),
    };
    let n = extent as i128;
    let mut resolved: Vec<i64> = (0..host.len())
        .map(|i| match host.get_wide(i) {
            Some(Wide::Int(v)) if mode == IndexMode::Clip => v.clamp(0, n - 1) as i64,
            Some(Wide::Int(v)) => v.rem_euclid(n) as i64,
            _ => 0,
        })
        .collect();
    let mut seen = vec![false; extent];
    let mut repeats = false;
    for index in resolved.iter_mut().rev() {
        let first_from_the_end = !std::mem::replace(&mut seen[*index as usize], true);
        if !first_from_the_end {
            *index = -1;
            repeats = true;
        }
    }
    Ok(repeats.then_some(resolved))
}

/// The smallest and largest of integer `values` (`None` when empty).
fn extremes(values: &HostBuffer) -> Option<(i128, i128)> {
    macro_rules! span {
        ($v:expr) => {
            Some((i128::from(*$v.iter().min()?), i128::from(*$v.iter().max()?)))
        };
    }
    match values {
        HostBuffer::I8(v) => span!(v),
        HostBuffer::I16(v) => span!(v),
        HostBuffer::I32(v) => span!(v),
        HostBuffer::I64(v) => span!(v),
        HostBuffer::U8(v) => span!(v),
        HostBuffer::U16(v) => span!(v),
        HostBuffer::U32(v) => span!(v),
        HostBuffer::U64(v) => span!(v),
        _ => None,
    }
}

/// Every gather kernel [`take`] may launch for `dtype` (indices known in
/// range or not; one thread per element, or blocks per row); public to
/// inspect their code.
pub fn take_kernels(dtype: DType) -> Result<Vec<Kernel>> {
    Variant::all(Direction::Gather)
        .map(|variant| index_kernel(dtype, variant))
        .collect()
}

/// Every kernel [`scatter`] may launch for `dtype` (one value or many,
/// repeats resolved or not, indices known in range or not; one thread per
/// element, or blocks per row); public to inspect their code.
pub fn scatter_kernels(dtype: DType) -> Result<Vec<Kernel>> {
    [
        Direction::Scatter,
        Direction::ScatterOne,
        Direction::ScatterLast,
    ]
    .into_iter()
    .flat_map(Variant::all)
    .map(|variant| index_kernel(dtype, variant))
    .collect()
}
