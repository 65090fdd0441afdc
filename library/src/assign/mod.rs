//! Writing part of an array (NumPy's `x[1:3, ::2] = value`): the new value
//! of the whole array, lazily, as one launch of a small kernel that copies
//! `value` into the region and leaves the rest as it was. Values are
//! immutable, so the caller re-binds the handle (`Array::assign`) to make
//! the write visible through it.
//!
//! ```
//! use lazyfuse::{assign_region, Context, Region};
//!
//! let cx = Context::sim();
//! let x = cx.from_slice(&[0.0f64; 6]);
//! let written = assign_region(&x, &[Region { start: 1, step: 2, len: 3 }], &cx.from_slice(&[7.0f64]))?;
//! assert_eq!(written.to_vec::<f64>()?, [0.0, 7.0, 0.0, 7.0, 0.0, 7.0]);
//! x.assign(&written)?; // x itself now reads the new value
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{Array, BinaryOp, DType, Error, Result};

use crate::kernel::{Dim, Kernel, KernelArg, Val};
use crate::kernel_cache::KernelCache;

/// The elements of one axis a region covers: `start`, `start + step`, …,
/// `len` of them (NumPy's slice once resolved against the axis' length; a
/// negative `step` counts down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The first index.
    pub start: i64,
    /// The distance between indices (not 0).
    pub step: i64,
    /// How many indices.
    pub len: usize,
}

/// Threads per block of the copying kernel.
const BLOCK: u32 = 256;

/// The value of `target` with the region `region` (one [`Region`] per axis)
/// replaced by `value`, which is broadcast to the region's shape and cast
/// to `target`'s dtype, as NumPy's assignment does. Lazy: nothing runs
/// until the result is demanded.
///
/// Errors: a region of the wrong rank, an index outside its axis, a zero
/// step, a `value` that does not broadcast to the region or belongs to
/// another context, or an invalid array.
pub fn assign_region(target: &Array, region: &[Region], value: &Array) -> Result<Array> {
    target.check()?;
    value.check()?;
    let shape = region_shape(target, region)?;
    if !value.session().same_as(target.session()) {
        return Err(Error::invalid(
            "assign_region",
            "the value belongs to another context (expected an array of the target's context)",
        ));
    }
    let value = aligned_value(value, &shape)?.astype(target.dtype());
    let total: usize = shape.iter().product();
    if total == 0 {
        return Ok(target.clone());
    }
    if shape == target.shape() && region.iter().all(|r| r.start == 0 && r.step == 1) {
        // The whole array: the value itself, nothing to copy.
        return Ok(value.broadcast_to(&shape));
    }
    let blocks = u32::try_from(total.div_ceil(BLOCK as usize)).map_err(|_| {
        Error::invalid(
            "assign_region",
            format!("a region of {total} elements (expected fewer than 2^32 blocks of {BLOCK})"),
        )
    })?;
    let axes = merged_axes(target.shape(), region, value.shape());
    let merged_shape: Vec<usize> = axes.iter().map(|a| a.extent).collect();
    let merged_value: Vec<usize> = axes.iter().map(|a| a.value).collect();
    let (target_view, value_view) = (target.reshape(&merged_shape), value.reshape(&merged_value));
    let unit_last = axes
        .last()
        .is_some_and(|a| a.region.step == 1 && a.value == a.region.len);
    let kernel = kernel_of(target.dtype(), axes.len(), unit_last)?;
    let mut args: Vec<KernelArg<'_>> = vec![(&target_view).into(), (&value_view).into()];
    for axis in &axes {
        let Region { start, step, len } = axis.region;
        let varies = i64::from(axis.value != 1 || len == 1);
        args.extend([start, step, len as i64, varies].map(KernelArg::from));
    }
    let mut written = kernel.launch(target.session(), blocks, BLOCK, &args)?;
    Ok(written.remove(0).reshape(target.shape()))
}

/// One axis of a region assignment after [`merged_axes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Axis {
    /// The target's length along it.
    extent: usize,
    /// The part of it written.
    region: Region,
    /// The value's length along it: the region's, or 1 (broadcast).
    value: usize,
}

/// The axes of a region assignment with each axis the region covers whole
/// merged into the one before it, when that one steps by 1 and the value
/// varies along both or along neither: row-major, the merged axis indexes
/// the same elements. Joining along the first axis then writes one
/// contiguous run (one axis, a kernel on vectors), not rows.
fn merged_axes(shape: &[usize], region: &[Region], value: &[usize]) -> Vec<Axis> {
    let mut axes: Vec<Axis> = Vec::with_capacity(shape.len());
    for ((&extent, &region), &value) in shape.iter().zip(region).zip(value) {
        let axis = Axis {
            extent,
            region,
            value,
        };
        let whole = region.start == 0 && region.step == 1 && region.len == extent;
        let varies = |a: &Axis| a.value == a.region.len;
        let broadcast = |a: &Axis| a.value == 1;
        match axes.last_mut() {
            Some(before)
                if whole
                    && before.region.step == 1
                    && ((varies(before) && varies(&axis))
                        || (broadcast(before) && broadcast(&axis))) =>
            {
                *before = Axis {
                    extent: before.extent * extent,
                    region: Region {
                        start: before.region.start * extent as i64,
                        step: 1,
                        len: before.region.len * extent,
                    },
                    value: before.value * value,
                };
            }
            _ => axes.push(axis),
        }
    }
    axes
}

/// The shape of `region` in `target`, each axis checked.
fn region_shape(target: &Array, region: &[Region]) -> Result<Vec<usize>> {
    let shape = target.shape();
    if region.len() != shape.len() {
        return Err(Error::invalid(
            "assign_region",
            format!(
                "a region of {} axes for an array of shape {} (expected one per axis)",
                region.len(),
                format_shape(shape)
            ),
        ));
    }
    for (axis, (r, &n)) in region.iter().zip(shape).enumerate() {
        let last = r.start as i128 + (r.len as i128 - 1) * r.step as i128;
        let inside = |i: i128| (0..n as i128).contains(&i);
        if r.step == 0 || (r.len > 0 && !(inside(r.start as i128) && inside(last))) {
            return Err(Error::invalid(
                "assign_region",
                format!(
                    "{} indices from {} in steps of {} along axis {axis} of an array of shape {} \
                     (expected indices inside the axis and a step other than 0)",
                    r.len,
                    r.start,
                    r.step,
                    format_shape(shape)
                ),
            ));
        }
    }
    Ok(region.iter().map(|r| r.len).collect())
}

/// `value` with as many axes as the region (leading ones of length 1, a
/// view), checked to broadcast to `shape`; the kernel broadcasts it.
fn aligned_value(value: &Array, shape: &[usize]) -> Result<Array> {
    let extra = shape.len().checked_sub(value.ndim());
    let fits = extra.is_some_and(|extra| {
        value
            .shape()
            .iter()
            .zip(&shape[extra..])
            .all(|(&v, &n)| v == n || v == 1)
    });
    match extra {
        Some(extra) if fits => {
            let mut padded = vec![1; extra];
            padded.extend_from_slice(value.shape());
            Ok(value.reshape(&padded))
        }
        _ => Err(Error::ShapeMismatch {
            op: "assign_region".into(),
            message: format!(
                "cannot broadcast a value of shape {} to the region's shape {} \
                 (expected each dimension equal or 1, right-aligned)",
                format_shape(value.shape()),
                format_shape(shape)
            ),
        }),
    }
}

/// The kernel [`assign_region`] launches for arrays of `dtype` and `ndim`
/// axes (one per pair, built once: the region is in its scalar arguments,
/// so every region reuses it); public to inspect its code.
pub fn region_kernel(dtype: DType, ndim: usize) -> Result<Kernel> {
    kernel_of(dtype, ndim, false)
}

/// Both kernels [`assign_region`] may launch for arrays of `dtype` and
/// `ndim` axes: [`region_kernel`], and its variant for a region stepping
/// by 1 along the last axis (see `kernel_of`); public to inspect their code.
pub fn region_kernels(dtype: DType, ndim: usize) -> Result<[Kernel; 2]> {
    Ok([
        kernel_of(dtype, ndim, false)?,
        kernel_of(dtype, ndim, true)?,
    ])
}

/// [`region_kernel`], or with `unit_last` its variant for a region that
/// steps by 1 along the last axis with a value varying along it: that
/// axis' indices are the thread's own plus a start, consecutive in
/// consecutive threads, so the CPU runs rows of threads on vectors.
fn kernel_of(dtype: DType, ndim: usize, unit_last: bool) -> Result<Kernel> {
    static KERNELS: KernelCache<(DType, usize, bool)> = KernelCache::new();
    KERNELS.get_or_build((dtype, ndim, unit_last), || {
        build_region_kernel(dtype, ndim, unit_last)
    })
}

/// The kernel of [`kernel_of`], built.
fn build_region_kernel(dtype: DType, ndim: usize, unit_last: bool) -> Result<Kernel> {
    let suffix = if unit_last { "_unit" } else { "" };
    Kernel::build(&format!("lf_assign_{dtype}_{ndim}d{suffix}"), |k| {
        let target = k.array_mut("target", dtype, ndim);
        let value = k.array("value", dtype, ndim);
        // start, step, len and "value not broadcast" per axis.
        let axes: Vec<[Val; 4]> = (0..ndim)
            .map(|d| {
                ["start", "step", "len", "varies"].map(|p| k.scalar(&format!("{p}{d}"), DType::I64))
            })
            .collect();
        let i64_of = |v: Val| v.cast(DType::I64);
        let i = i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X))
            + i64_of(k.thread_idx(Dim::X));
        let total = axes
            .iter()
            .fold(Val::from(1i64), |n, [_, _, len, _]| n * len.clone());
        k.if_(i.lt(total), |k| {
            // Row-major position in the region, last axis fastest; what
            // is left for the first axis is its position (i < total).
            let (mut at_target, mut at_value) = (Vec::new(), Vec::new());
            let mut rest = i;
            for (d, [start, step, len, varies]) in axes.iter().enumerate().rev() {
                let j = match d {
                    0 => rest.clone(),
                    _ => rest.apply_binary(BinaryOp::Rem, len),
                };
                if d > 0 {
                    rest = rest.apply_binary(BinaryOp::FloorDiv, len);
                }
                if unit_last && d == ndim - 1 {
                    // Expressions, not registers: the CPU's vector rows
                    // read an index through registers only at the top level.
                    at_target.push(start + &j);
                    at_value.push(j);
                } else {
                    at_target.push(k.let_(start + &(&j * step)));
                    at_value.push(&j * varies);
                }
            }
            at_target.reverse();
            at_value.reverse();
            k.store(&target, at_target.as_slice(), value.at(at_value.as_slice()));
        });
    })
}
