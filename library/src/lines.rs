//! What the kernels over `(outer, len, inner)` lines share (the FFTs and
//! `roll`): their launch size, and the grid-stride loop's index split into
//! a line and a place along it.

use lazyfuse_core::{BinaryOp, DType};

use crate::kernel::{Dim, KernelScope, Val};

/// Threads per block.
pub(crate) const BLOCK: u32 = 256;
/// Blocks at most (the threads loop over the rest).
const MAX_BLOCKS: usize = 4096;

/// Blocks of [`BLOCK`] threads for `elements` (at least one).
pub(crate) fn blocks(elements: usize) -> u32 {
    elements.div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS) as u32
}

/// The first index of this thread's grid-stride loop, and the stride.
pub(crate) fn grid_stride(k: &mut KernelScope) -> (Val, Val) {
    let i64_of = |v: Val| v.cast(DType::I64);
    let start =
        i64_of(k.block_idx(Dim::X)) * i64_of(k.block_dim(Dim::X)) + i64_of(k.thread_idx(Dim::X));
    let stride = i64_of(k.grid_dim(Dim::X)) * i64_of(k.block_dim(Dim::X));
    (start, stride)
}

/// The flat index `t` of `(outer, len, inner)` split into `[o, at, i]`.
pub(crate) fn line_index(k: &mut KernelScope, t: &Val, len: &Val, inner: &Val) -> [Val; 3] {
    let i = k.let_(t.apply_binary(BinaryOp::Rem, inner));
    let line = k.let_(t.apply_binary(BinaryOp::FloorDiv, inner));
    let at = k.let_(line.apply_binary(BinaryOp::Rem, len));
    let o = k.let_(line.apply_binary(BinaryOp::FloorDiv, len));
    [o, at, i]
}
