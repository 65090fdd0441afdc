//! The `lf_*` entry points that arrange arrays: views (`reshape`,
//! `transpose`, `slice`), casts, and the operations whose result is an
//! order or a product (`matmul`, `roll`, `sort`, `argsort`,
//! `searchsorted`, `take`). All lazy, as the rest of the API.

use lazyfuse::core::shape::normalize_axis;
use lazyfuse::{Array, IndexMode, Side};

use crate::guard::{borrow, give, guard, slice, Failure};
use crate::{dtype_from_code, lf_array, lf_dtype, lf_status};

/// Checks a result and hands it to the caller.
pub(crate) fn hand_over(out: *mut *mut lf_array, result: Array) -> Result<(), Failure> {
    result.check()?;
    give(out, lf_array { array: result })
}

/// An axis of `a` (negative counts from the end).
fn axis_of(op: &str, a: &Array, axis: i64) -> Result<usize, Failure> {
    Ok(normalize_axis(op, axis, a.ndim())?)
}

/// `a` with `ndim` extents `shape`, one of which may be -1 (inferred, as
/// NumPy's): a view, no data moves. The element counts must agree.
///
/// # Safety
/// `a` is a live array; `shape` points to `ndim` values; `out` is valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_reshape(
    a: *const lf_array,
    shape: *const i64,
    ndim: usize,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_array_reshape", || {
        let a = &borrow(a, "the array")?.array;
        let requested = slice(shape, ndim, "shape")?;
        let shape = resolve_shape(a.len(), requested)?;
        hand_over(out, a.reshape(&shape))
    })
}

/// `requested` with its -1 (at most one) inferred from `len` elements.
fn resolve_shape(len: usize, requested: &[i64]) -> Result<Vec<usize>, Failure> {
    let invalid = || {
        Failure::invalid(format!(
            "reshape: new shape {requested:?} (expected sizes of at least 0, and at most one -1)"
        ))
    };
    let unknown: Vec<usize> = (0..requested.len())
        .filter(|&i| requested[i] == -1)
        .collect();
    if unknown.len() > 1 || requested.iter().any(|&d| d < -1) {
        return Err(invalid());
    }
    let known = requested
        .iter()
        .filter(|&&d| d >= 0)
        .try_fold(1usize, |product, &d| product.checked_mul(d as usize))
        .ok_or_else(invalid)?;
    let mut shape: Vec<usize> = requested.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(&i) = unknown.first() {
        if known == 0 || !len.is_multiple_of(known) {
            return Err(Failure::invalid(format!(
                "reshape: cannot reshape an array of {len} elements into shape {requested:?}"
            )));
        }
        shape[i] = len / known;
    }
    Ok(shape)
}

/// `a` with its axes permuted: output axis `i` is input axis `axes[i]`
/// (negative counts from the end); with `naxes` 0, the axes reversed
/// (NumPy's `.T`). A view.
///
/// # Safety
/// `a` is a live array; `axes` points to `naxes` values (any pointer when
/// `naxes` is 0); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_transpose(
    a: *const lf_array,
    axes: *const i64,
    naxes: usize,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_array_transpose", || {
        let a = &borrow(a, "the array")?.array;
        let result = match slice(axes, naxes, "axes")? {
            [] => a.transpose(),
            axes => {
                let axes = axes
                    .iter()
                    .map(|&d| axis_of("transpose", a, d))
                    .collect::<Result<Vec<_>, _>>()?;
                a.permute(&axes)
            }
        };
        hand_over(out, result)
    })
}

/// NumPy's `a[..., start:stop:step, ...]` along `axis` (negative counts
/// from the end): Python's rules, bounds clamped, negative bounds from the
/// end, `step` not 0; `INT64_MIN` and `INT64_MAX` leave a bound open. A
/// view.
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_slice(
    a: *const lf_array,
    axis: i64,
    start: i64,
    stop: i64,
    step: i64,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_array_slice", || {
        let a = &borrow(a, "the array")?.array;
        let axis = axis_of("slice", a, axis)?;
        let bound = |v: i64| isize::try_from(v).ok();
        let step = isize::try_from(step)
            .map_err(|_| Failure::invalid(format!("slice: step {step} is out of range")))?;
        hand_over(out, a.slice_axis(axis, bound(start), bound(stop), step))
    })
}

/// `a` converted to `dtype` (NumPy's `astype`: any cast; floats to
/// integers truncate and saturate, NaN to 0).
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_astype(
    a: *const lf_array,
    dtype: lf_dtype,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_array_astype", || {
        let a = &borrow(a, "the array")?.array;
        let dtype = dtype_from_code(dtype).ok_or_else(|| {
            Failure::invalid(format!(
                "astype: unknown dtype code {dtype} (expected 0..=12)"
            ))
        })?;
        hand_over(out, a.astype(dtype))
    })
}

/// NumPy's `a @ b` (1-d operands, broadcast batches, the promoted dtype).
///
/// # Safety
/// `a` and `b` are live arrays of one context; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_matmul(
    a: *const lf_array,
    b: *const lf_array,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_matmul", || {
        let (a, b) = (&borrow(a, "a")?.array, &borrow(b, "b")?.array);
        hand_over(out, lazyfuse::matmul(a, b)?)
    })
}

/// `a` with its elements moved `shift` places along `axis` (negative
/// counts from the end), those past one end coming back at the other
/// (NumPy's `np.roll` along one axis).
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_roll(
    a: *const lf_array,
    shift: i64,
    axis: i64,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_roll", || {
        let a = &borrow(a, "the array")?.array;
        hand_over(out, lazyfuse::roll(a, shift, axis_of("roll", a, axis)?)?)
    })
}

/// `a` sorted along `axis` (negative counts from the end), NaNs last
/// (NumPy's `np.sort`).
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_sort(
    a: *const lf_array,
    axis: i64,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_sort", || {
        let a = &borrow(a, "the array")?.array;
        hand_over(out, lazyfuse::sort(a, axis_of("sort", a, axis)?)?)
    })
}

/// The positions (int64) that sort `a` along `axis`, stably, NaNs last
/// (NumPy's `np.argsort(kind="stable")`).
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_argsort(
    a: *const lf_array,
    axis: i64,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_argsort", || {
        let a = &borrow(a, "the array")?.array;
        hand_over(out, lazyfuse::argsort(a, axis_of("argsort", a, axis)?)?)
    })
}

/// For each of `values`, its position (int64) in the 1-d ascending
/// `sorted` (NaNs last): before equal elements, or after them when
/// `right` (NumPy's `np.searchsorted`).
///
/// # Safety
/// `sorted` and `values` are live arrays of one context; `out` is valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_searchsorted(
    sorted: *const lf_array,
    values: *const lf_array,
    right: bool,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_searchsorted", || {
        let sorted = &borrow(sorted, "sorted")?.array;
        let values = &borrow(values, "values")?.array;
        let side = if right { Side::Right } else { Side::Left };
        hand_over(out, lazyfuse::searchsorted(sorted, values, side)?)
    })
}

/// The elements of `a` at the integer `indices` along `axis` (NumPy's
/// `np.take`, negative indices from the end): of shape `a.shape[..axis] +
/// indices.shape + a.shape[axis + 1..]`. An index out of bounds is an
/// error when the indices' values are known (data given by the caller);
/// computed ones wrap around.
///
/// # Safety
/// `a` and `indices` are live arrays of one context; `out` is valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn lf_take(
    a: *const lf_array,
    indices: *const lf_array,
    axis: i64,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_take", || {
        let a = &borrow(a, "the array")?.array;
        let indices = &borrow(indices, "indices")?.array;
        let axis = axis_of("take", a, axis)?;
        hand_over(out, lazyfuse::take(a, indices, axis, IndexMode::Raise)?)
    })
}
