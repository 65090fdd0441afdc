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

/// `value` (of `shape`) with its axes permuted (output axis `i` is input axis `perm[i]`).
pub(crate) fn permute(value: &HostBuffer, shape: &[usize], perm: &[usize]) -> Result<HostBuffer> {
    let dense = contiguous_strides(shape);
    let strides: Strides = perm.iter().map(|&a| dense[a]).collect();
    let out_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    gather(value, &out_shape, &strides)
}
