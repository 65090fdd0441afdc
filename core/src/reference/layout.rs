//! Data movement for views and broadcasting: strided gathers into dense buffers.

use std::sync::Arc;

use crate::element::{Element, HostBuffer};
use crate::error::{Error, Result};
use crate::shape::{broadcast_strides, contiguous_strides, len, Strides};
use crate::with_buffer;

/// A dense buffer of `shape` whose element at multi-index `i` is
/// `source[Σ i[d] * strides[d]]`.
pub(crate) fn gather(
    source: &HostBuffer,
    shape: &[usize],
    strides: &[usize],
) -> Result<HostBuffer> {
    with_buffer!(source, v => gather_typed(v, shape, strides).map(Element::into_buffer)).ok_or_else(
        || Error::internal("reference gather", "a strided read fell outside its buffer"),
    )
}

fn gather_typed<T: Copy>(source: &[T], shape: &[usize], strides: &[usize]) -> Option<Vec<T>> {
    let count = len(shape);
    let mut out = Vec::with_capacity(count);
    if count == 0 {
        return Some(out);
    }
    let mut index = vec![0usize; shape.len()];
    let mut offset = 0usize;
    for _ in 0..count {
        out.push(*source.get(offset)?);
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            offset += strides[axis];
            if index[axis] < shape[axis] {
                break;
            }
            offset -= strides[axis] * shape[axis];
            index[axis] = 0;
        }
    }
    Some(out)
}

/// `value` (of `from` shape) read as `to` shape. A single element is kept as
/// is: element-wise kernels broadcast it themselves.
pub(crate) fn broadcast(
    value: &Arc<HostBuffer>,
    from: &[usize],
    to: &[usize],
) -> Result<Arc<HostBuffer>> {
    if from == to || value.len() == 1 {
        return Ok(Arc::clone(value));
    }
    gather(value, to, &broadcast_strides(from, to)).map(Arc::new)
}

/// `value` (of `shape`) sliced along `axis`: output index `i` reads `start + i * step`.
pub(crate) fn slice(
    value: &HostBuffer,
    shape: &[usize],
    out_shape: &[usize],
    axis: usize,
    start: usize,
    step: isize,
) -> Result<HostBuffer> {
    let dense = contiguous_strides(shape);
    let count = len(out_shape);
    let mut out_index = vec![0usize; out_shape.len()];
    let offsets: Option<Vec<usize>> = (0..count)
        .map(|_| {
            let offset = out_index
                .iter()
                .enumerate()
                .map(|(d, &i)| {
                    let source = if d == axis {
                        start as isize + i as isize * step
                    } else {
                        i as isize
                    };
                    source * dense[d] as isize
                })
                .sum::<isize>();
            for d in (0..out_shape.len()).rev() {
                out_index[d] += 1;
                if out_index[d] < out_shape[d] {
                    break;
                }
                out_index[d] = 0;
            }
            usize::try_from(offset).ok()
        })
        .collect();
    let offsets = offsets.ok_or_else(|| Error::internal("reference slice", "a negative offset"))?;
    with_buffer!(value, v => offsets
        .iter()
        .map(|&o| v.get(o).copied())
        .collect::<Option<Vec<_>>>()
        .map(Element::into_buffer))
    .ok_or_else(|| Error::internal("reference slice", "a read outside the input"))
}

/// `value` (of `shape`) with its axes permuted (output axis `i` is input axis `perm[i]`).
pub(crate) fn permute(value: &HostBuffer, shape: &[usize], perm: &[usize]) -> Result<HostBuffer> {
    let dense = contiguous_strides(shape);
    let strides: Strides = perm.iter().map(|&a| dense[a]).collect();
    let out_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    gather(value, &out_shape, &strides)
}
