//! Combining the values of a reduction deterministically: pairwise within
//! a chunk (NumPy's scheme, vectorised, in AVX2 where the CPU has it), and
//! chunk results — scalars or whole rows — by a binary counter, so float
//! error grows with the logarithm of the length whatever the thread count.

use lazyfuse_core::ReduceOp;

/// Elements per leaf of the pairwise reduction, and independent
/// accumulators within a leaf (four AVX2 vectors of f32): each accumulator
/// adds 8 elements sequentially, as NumPy's 128-element leaves with 8
/// accumulators add 16.
const LEAF: usize = 256;
const LANES: usize = 32;

/// NumPy's pairwise reduction: `LANES` interleaved accumulators within a
/// leaf of `LEAF` elements, halving above.
#[inline(always)]
fn pairwise<T: Copy>(x: &[T], f: &impl Fn(T, T) -> T) -> Option<T> {
    if x.len() <= LEAF {
        if x.len() < LANES {
            return x.iter().copied().reduce(f);
        }
        let mut acc: [T; LANES] = std::array::from_fn(|j| x[j]);
        let mut rest = x[LANES..].chunks_exact(LANES);
        for block in &mut rest {
            for j in 0..LANES {
                acc[j] = f(acc[j], block[j]);
            }
        }
        for (j, &v) in rest.remainder().iter().enumerate() {
            acc[j] = f(acc[j], v);
        }
        let mut width = LANES;
        while width > 1 {
            width /= 2;
            for j in 0..width {
                acc[j] = f(acc[j], acc[j + width]);
            }
        }
        return Some(acc[0]);
    }
    let half = (x.len() / 2).div_ceil(LANES) * LANES;
    let (lo, hi) = x.split_at(half);
    Some(f(pairwise(lo, f)?, pairwise(hi, f)?))
}

/// How one chunk of a built-in reduction is reduced: pairwise in general;
/// float min/max track NaN in a separate lane mask so the compare loop
/// vectorises (the result is NaN if any element is, as NumPy).
pub trait ChunkReduce: Copy {
    /// Reduces `x` (non-empty) with `op`, whose element-wise form is `combine`.
    #[inline(always)]
    fn reduce_chunk(
        op: ReduceOp,
        x: &[Self],
        combine: &impl Fn(Self, Self) -> Self,
    ) -> Option<Self> {
        let _ = op;
        pairwise(x, combine)
    }
}

macro_rules! pairwise_chunks {
    ($($t:ty),*) => {$(impl ChunkReduce for $t {})*};
}
pairwise_chunks!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_chunks {
    ($($t:ty),*) => {$(
        impl ChunkReduce for $t {
            #[inline(always)]
            fn reduce_chunk(op: ReduceOp, x: &[Self], combine: &impl Fn(Self, Self) -> Self) -> Option<Self> {
                let is_max = match op {
                    ReduceOp::Max => true,
                    ReduceOp::Min => false,
                    _ => return pairwise(x, combine),
                };
                if x.len() < LANES {
                    return x.iter().copied().reduce(combine);
                }
                let mut acc: [$t; LANES] = std::array::from_fn(|j| x[j]);
                let mut nan = [0u32; LANES];
                let mut blocks = x.chunks_exact(LANES);
                for block in &mut blocks {
                    for j in 0..LANES {
                        let v = block[j];
                        nan[j] |= (v != v) as u32;
                        let keep = if is_max { acc[j] > v } else { acc[j] < v };
                        acc[j] = if keep { acc[j] } else { v };
                    }
                }
                let mut result = acc.into_iter().reduce(combine)?;
                for &v in blocks.remainder() {
                    result = combine(result, v);
                }
                if nan.iter().any(|&n| n != 0) {
                    return Some(<$t>::NAN);
                }
                Some(result)
            }
        }
    )*};
}
float_chunks!(f32, f64);

/// Reduces one chunk, with AVX2 code where the CPU has it.
pub(crate) fn reduce_chunk<T: ChunkReduce>(
    op: ReduceOp,
    x: &[T],
    combine: &impl Fn(T, T) -> T,
) -> Option<T> {
    #[cfg(target_arch = "x86_64")]
    if super::steps::has_avx2() {
        // SAFETY: the CPU supports AVX2: `has_avx2` asked it at run time.
        return unsafe { reduce_chunk_avx2(op, x, combine) };
    }
    T::reduce_chunk(op, x, combine)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn reduce_chunk_avx2<T: ChunkReduce>(
    op: ReduceOp,
    x: &[T],
    combine: &impl Fn(T, T) -> T,
) -> Option<T> {
    T::reduce_chunk(op, x, combine)
}

/// A binary counter of partial results combined pairwise: the partials of
/// 2^l chunks combine with each other whatever their number, so the error
/// of a float sum grows with the logarithm of the length.
pub(crate) struct Cascade<T> {
    levels: Vec<(u32, T)>,
}

impl<T: Copy> Cascade<T> {
    pub(crate) fn new() -> Self {
        Cascade { levels: Vec::new() }
    }

    pub(crate) fn push(&mut self, value: T, f: &impl Fn(T, T) -> T) {
        let mut value = (0u32, value);
        while let Some(&(level, top)) = self.levels.last() {
            if level != value.0 {
                break;
            }
            value = (level + 1, f(top, value.1));
            self.levels.pop();
        }
        self.levels.push(value);
    }

    pub(crate) fn finish(mut self, f: &impl Fn(T, T) -> T) -> Option<T> {
        let mut result: Option<T> = None;
        while let Some((_, top)) = self.levels.pop() {
            result = Some(match result {
                None => top,
                Some(r) => f(top, r),
            });
        }
        result
    }
}

/// [`Cascade`] over rows of equal width, combined element by element. Rows
/// are combined in place and freed rows are reused, so a reduction of any
/// number of rows allocates only `log2(rows)` row buffers.
pub(crate) struct RowCascade<T> {
    levels: Vec<(u32, Vec<T>)>,
    spare: Vec<Vec<T>>,
}

impl<T: Copy> RowCascade<T> {
    pub(crate) fn new() -> Self {
        RowCascade {
            levels: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// An empty buffer for assembling a row.
    pub(crate) fn buffer(&mut self) -> Vec<T> {
        let mut row = self.spare.pop().unwrap_or_default();
        row.clear();
        row
    }

    /// Adds the next row; when the newest level holds a single row, `row` is
    /// combined into it directly instead of being copied.
    pub(crate) fn push(&mut self, row: &[T], f: &impl Fn(T, T) -> T) {
        match self.levels.last_mut() {
            Some((level @ 0, top)) => {
                for (t, &v) in top.iter_mut().zip(row) {
                    *t = f(*t, v);
                }
                *level = 1;
                self.settle(f);
            }
            _ => {
                let mut buffer = self.buffer();
                buffer.extend_from_slice(row);
                self.levels.push((0, buffer));
            }
        }
    }

    /// Adds the next row, assembled in a buffer from [`RowCascade::buffer`].
    pub(crate) fn push_owned(&mut self, row: Vec<T>, f: &impl Fn(T, T) -> T) {
        self.levels.push((0, row));
        self.settle(f);
    }

    /// Combines the two newest levels while they are equal.
    pub(crate) fn settle(&mut self, f: &impl Fn(T, T) -> T) {
        while self.levels.len() >= 2 {
            let n = self.levels.len();
            if self.levels[n - 1].0 != self.levels[n - 2].0 {
                break;
            }
            let Some((_, newer)) = self.levels.pop() else {
                break;
            };
            let (level, older) = &mut self.levels[n - 2];
            for (o, &v) in older.iter_mut().zip(&newer) {
                *o = f(*o, v);
            }
            *level += 1;
            self.spare.push(newer);
        }
    }

    pub(crate) fn finish(mut self, f: &impl Fn(T, T) -> T) -> Option<Vec<T>> {
        let (_, mut result) = self.levels.pop()?;
        while let Some((_, mut older)) = self.levels.pop() {
            for (o, &v) in older.iter_mut().zip(&result) {
                *o = f(*o, v);
            }
            result = older;
        }
        Some(result)
    }
}
