//! Running sums, products, maxima and minima (`cumsum`, `cumprod`,
//! `cummax`, `cummin`) in the one order every backend computes them: each line along the axis is cut into chunks of
//! [`SCAN_CHUNK`] elements; a chunk's elements are combined left to right
//! starting from the carry of the chunks before it, and the carries are the
//! chunks' totals combined left to right. Chunks are independent until
//! their carries, so a device runs them in parallel (three passes) and the
//! result is the same bits on every backend and for any thread count. A
//! line of at most one chunk is combined exactly as NumPy does.

use crate::element::{HostBuffer, Wide};
use crate::error::{Error, Result};
use crate::ops::ReduceOp;
use crate::semantics::Arithmetic;

/// Elements per chunk.
pub const SCAN_CHUNK: usize = 4096;

/// The scan of `input` (of `shape`, in an accumulator dtype: i64, u64,
/// f32 or f64) along `axis`.
pub fn scan(op: ReduceOp, input: &HostBuffer, shape: &[usize], axis: usize) -> Result<HostBuffer> {
    let layout = Lines::of(shape, axis);
    Ok(match input {
        HostBuffer::I64(v) => HostBuffer::I64(scan_lines(op, v, layout)),
        HostBuffer::U64(v) => HostBuffer::U64(scan_lines(op, v, layout)),
        HostBuffer::F32(v) => HostBuffer::F32(scan_lines(op, v, layout)),
        HostBuffer::F64(v) => HostBuffer::F64(scan_lines(op, v, layout)),
        other => {
            return Err(Error::internal(
                "scan",
                format!(
                    "a scan in {} (expected an accumulator dtype)",
                    other.dtype()
                ),
            ))
        }
    })
}

/// The lines of an array along one axis: `outer × inner` lines of `n`
/// elements, element `j` of line `(o, i)` at `o * n * inner + j * inner + i`.
#[derive(Clone, Copy, Debug)]
pub struct Lines {
    /// Product of the axes before the scanned one.
    pub outer: usize,
    /// The scanned axis's length.
    pub n: usize,
    /// Product of the axes after it.
    pub inner: usize,
}

impl Lines {
    /// The lines of `shape` along `axis`.
    pub fn of(shape: &[usize], axis: usize) -> Lines {
        Lines {
            outer: shape[..axis].iter().product(),
            n: shape[axis],
            inner: shape[axis + 1..].iter().product(),
        }
    }
}

fn scan_lines<T: Arithmetic>(op: ReduceOp, values: &[T], lines: Lines) -> Vec<T> {
    let identity = T::from_wide(Wide::Float(op.scan_start(T::DTYPE)));
    let combine = op.combiner();
    let Lines { outer, n, inner } = lines;
    let mut out = values.to_vec();
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| o * n * inner + j * inner + i;
            let mut carry = identity;
            for start in (0..n).step_by(SCAN_CHUNK) {
                let end = (start + SCAN_CHUNK).min(n);
                let (mut acc, mut total) = (carry, identity);
                for j in start..end {
                    acc = T::binary(combine, acc, values[at(j)]);
                    total = T::binary(combine, total, values[at(j)]);
                    out[at(j)] = acc;
                }
                carry = T::binary(combine, carry, total);
            }
        }
    }
    out
}
