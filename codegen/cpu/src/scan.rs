//! Scans (`cumsum`, `cumprod`) on the CPU in the order of
//! `lazyfuse_core::reference::scan`, two passes over chunks in parallel
//! when the scanned axis is the last one (each line contiguous): the chunk
//! totals, then (per line, in order) the carries, then every chunk's
//! running values from its carry. The chunks are fixed, so the result is the
//! same bits for any thread count, and the same as on every backend. Scans
//! along other axes run the reference order on one thread.

use lazyfuse_core::reference::{self, Lines, SCAN_CHUNK};
use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{HostBuffer, ReduceOp, Result};
use rayon::prelude::*;

/// The scan of `input` (of `shape`, in an accumulator dtype) along `axis`.
pub fn scan(
    op: ReduceOp,
    input: &HostBuffer,
    shape: &[usize],
    axis: usize,
    pool: Option<&rayon::ThreadPool>,
) -> Result<HostBuffer> {
    let lines = Lines::of(shape, axis);
    let (Some(pool), 1) = (pool, lines.inner) else {
        return reference::scan(op, input, shape, axis);
    };
    Ok(match input {
        HostBuffer::I64(v) => HostBuffer::I64(pool.install(|| last_axis(op, v, lines.n, 0))),
        HostBuffer::U64(v) => HostBuffer::U64(pool.install(|| last_axis(op, v, lines.n, 0))),
        HostBuffer::F32(v) => HostBuffer::F32(pool.install(|| last_axis(op, v, lines.n, -0.0))),
        HostBuffer::F64(v) => HostBuffer::F64(pool.install(|| last_axis(op, v, lines.n, -0.0))),
        _ => return reference::scan(op, input, shape, axis),
    })
}

/// Lines of `n` contiguous values; `sum_identity` is a sum's start (-0.0 for floats).
fn last_axis<T>(op: ReduceOp, values: &[T], n: usize, sum_identity: T) -> Vec<T>
where
    T: Arithmetic + From<u8> + Send + Sync,
{
    let identity = if op == ReduceOp::Sum {
        sum_identity
    } else {
        T::from(1u8)
    };
    let combine = op.combiner();
    let fold = |from: T, chunk: &[T]| {
        chunk
            .iter()
            .fold(from, |acc, &x| T::binary(combine, acc, x))
    };
    if n == 0 {
        return Vec::new();
    }
    // Pass 1: every chunk's total, from the identity.
    let chunks: Vec<&[T]> = values
        .chunks(n)
        .flat_map(|line| line.chunks(SCAN_CHUNK))
        .collect();
    let totals: Vec<T> = chunks
        .par_iter()
        .map(|chunk| fold(identity, chunk))
        .collect();
    // The carries, line by line, left to right.
    let per_line = n.div_ceil(SCAN_CHUNK);
    let mut carries = totals;
    for line in carries.chunks_mut(per_line) {
        let mut run = identity;
        for slot in line.iter_mut() {
            let total = *slot;
            *slot = run;
            run = T::binary(combine, run, total);
        }
    }
    // Pass 2: every chunk's running values, from its carry.
    let mut out = values.to_vec();
    let mut targets: Vec<&mut [T]> = out
        .chunks_mut(n)
        .flat_map(|line| line.chunks_mut(SCAN_CHUNK))
        .collect();
    targets
        .par_iter_mut()
        .zip(carries.par_iter())
        .for_each(|(chunk, &carry)| {
            let mut acc = carry;
            for x in chunk.iter_mut() {
                acc = T::binary(combine, acc, *x);
                *x = acc;
            }
        });
    out
}
