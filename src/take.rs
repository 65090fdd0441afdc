//! Taking elements by index along an axis (NumPy's `take`, and the fancy
//! index `x[indices]`): lazily, one launch of a small gather kernel whose
//! result is a fresh array (a temporary the kernel writes in place).
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

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{Array, BinaryOp, DType, Error, HostBuffer, Result, Wide};

use crate::kernel::{Dim, Kernel, KernelArg, Val};

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

/// Threads per block of the gather kernel.
const BLOCK: u32 = 256;

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
    array.check()?;
    indices.check()?;
    let op = "take";
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
    let mut result_shape = shape[..axis].to_vec();
    result_shape.extend_from_slice(indices.shape());
    result_shape.extend_from_slice(&shape[axis + 1..]);
    let total: usize = result_shape.iter().product();
    let session = array.session();
    if total == 0 {
        return Ok(session.zeros(&result_shape, array.dtype()));
    }
    if extent == 0 {
        return Err(Error::invalid(
            op,
            format!(
                "indices into axis {axis} of length 0 of an array of shape {} \
                 (expected a non-empty axis)",
                format_shape(shape)
            ),
        ));
    }
    let checked = mode == IndexMode::Raise && indices.is_materialized();
    if checked {
        check_bounds(indices, axis, extent)?;
    }
    let flat_indices = indices.reshape(&[indices.len()]).astype(DType::I64);
    let flat_indices = match mode {
        IndexMode::Clip => flat_indices.clip(0i64, extent as i64 - 1),
        IndexMode::Raise | IndexMode::Wrap => flat_indices,
    };
    let blocks = u32::try_from(total.div_ceil(BLOCK as usize)).map_err(|_| {
        Error::invalid(
            op,
            format!("a result of {total} elements (expected fewer than 2^32 blocks of {BLOCK})"),
        )
    })?;
    let inner: usize = shape[axis + 1..].iter().product();
    let gather = Gather {
        in_range: checked || mode == IndexMode::Clip,
        flat: inner == 1 && axis == 0,
    };
    let out = session.empty(&[total], array.dtype());
    let values = array.reshape(&[array.len()]);
    let args: [KernelArg<'_>; 7] = [
        (&out).into(),
        (&values).into(),
        (&flat_indices).into(),
        (extent as i64).into(),
        (indices.len() as i64).into(),
        (inner as i64).into(),
        (total as i64).into(),
    ];
    let mut taken = gather_kernel(array.dtype(), gather)?.launch(session, blocks, BLOCK, &args)?;
    Ok(taken.remove(0).reshape(&result_shape))
}

/// NumPy's `IndexError` for the first index of `indices` (values known)
/// outside an axis of length `extent`.
fn check_bounds(indices: &Array, axis: usize, extent: usize) -> Result<()> {
    let host = indices.to_host()?;
    let extent = extent as i128;
    let Some((lowest, highest)) = extremes(&host) else {
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
        "take",
        format!("index {outside} is out of bounds for axis {axis} with size {extent}"),
    ))
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
/// range or not, a flat result or not); public to inspect their code.
pub fn take_kernels(dtype: DType) -> Result<Vec<Kernel>> {
    [(false, false), (false, true), (true, false), (true, true)]
        .into_iter()
        .map(|(in_range, flat)| gather_kernel(dtype, Gather { in_range, flat }))
        .collect()
}

/// What a gather kernel may assume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Gather {
    /// Every index is in `[-n, n)`: a negative one needs `n` added, no
    /// division.
    in_range: bool,
    /// The result is the indices' shape (a one-axis array along its only
    /// axis, or its first with nothing after): thread `t` takes index `t`.
    flat: bool,
}

/// The kernel [`take`] launches for `dtype`: thread `t` of the result
/// (outer position `a`, index position `k`, inner position `b`) reads
/// `values[(a * n + indices[k] mod n) * inner + b]`; built once per dtype
/// and [`Gather`].
fn gather_kernel(dtype: DType, gather: Gather) -> Result<Kernel> {
    type Kernels = HashMap<(DType, Gather), Kernel>;
    static KERNELS: OnceLock<Mutex<Kernels>> = OnceLock::new();
    let kernels = KERNELS.get_or_init(Mutex::default);
    if let Some(k) = kernels
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&(dtype, gather))
    {
        return Ok(k.clone());
    }
    let suffix = match (gather.in_range, gather.flat) {
        (true, true) => "_flat_in_range",
        (true, false) => "_in_range",
        (false, true) => "_flat",
        (false, false) => "",
    };
    let kernel = Kernel::build(&format!("lf_take_{dtype}{suffix}"), |k| {
        let out = k.array_mut("out", dtype, 1);
        let values = k.array("values", dtype, 1);
        let indices = k.array("indices", DType::I64, 1);
        let [n, count, inner, total] =
            ["n", "count", "inner", "total"].map(|name| k.scalar(name, DType::I64));
        let i64_of = |v: Val| v.cast(DType::I64);
        let t = i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X))
            + i64_of(k.thread_idx(Dim::X));
        k.if_(t.lt(&total), |k| {
            let resolve = |k: &mut crate::kernel::KernelScope, position: &Val| {
                let raw = k.let_(indices.at(position));
                if gather.in_range {
                    Val::select(&raw.lt(0i64), &raw + &n, raw.clone())
                } else {
                    // NumPy's `%` takes the divisor's sign: in [0, n) for
                    // n > 0, so negative indices count from the end, and
                    // others wrap.
                    raw.apply_binary(BinaryOp::Rem, &n)
                }
            };
            if gather.flat {
                let j = resolve(k, &t);
                k.store(&out, &t, values.at(&j));
                return;
            }
            let b = t.apply_binary(BinaryOp::Rem, &inner);
            let outer = k.let_(t.apply_binary(BinaryOp::FloorDiv, &inner));
            let position = outer.apply_binary(BinaryOp::Rem, &count);
            let a = outer.apply_binary(BinaryOp::FloorDiv, &count);
            let resolved = resolve(k, &position);
            let j = k.let_(resolved);
            k.store(&out, &t, values.at(&((&a * &n + &j) * &inner + &b)));
        });
    })?;
    kernels
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert((dtype, gather), kernel.clone());
    Ok(kernel)
}
