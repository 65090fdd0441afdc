//! Combining the values of a reduction deterministically: pairwise within
//! a chunk (NumPy's scheme, vectorised, in AVX2 where the CPU has it), and
//! chunk results — scalars or whole rows — by a binary counter, so float
//! error grows with the logarithm of the length whatever the thread count.

use lazyfuse_core::ReduceOp;

use crate::reduce_table::{cpu_reduce, CpuReduce};

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

/// How far ahead of its reads a block's reduction asks for memory: a page.
const PREFETCH_BYTES: usize = 4096;

/// Asks the CPU to bring the cache line [`PREFETCH_BYTES`] past `at` into
/// cache. A row program's first stage reads rows of a page or so one after
/// another, and the hardware's prefetcher stops at each page's end, so the
/// next row's first lines were waited for (logsumexp of 9,765 rows of
/// 1,024 f32 on one thread: 14.0 → 11.8 ms, best of eight).
#[inline(always)]
fn prefetch_ahead<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address
    // (`wrapping_byte_add` computes it without dereferencing).
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(at.wrapping_byte_add(PREFETCH_BYTES).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// How one block of a built-in reduction is reduced: integers pairwise
/// (their sums wrap, so any order gives the same result); floats exactly as
/// compiled code reduces a block (`jit/lower.rs`, the reduce form), so that
/// a kernel gives the same bits before and after the JIT compiles it.
pub trait ChunkReduce: Copy {
    /// `a + b` as the reduction's combine function computes it (integers
    /// wrap), as a plain function that inlines: the chunk reduction uses it
    /// for sums instead of the caller's function of the operation.
    fn plus(a: Self, b: Self) -> Self;

    /// `a * b`, likewise, for products.
    fn times(a: Self, b: Self) -> Self;

    /// Reduces `x` (non-empty) with `op`, whose element-wise form is
    /// `combine`, starting from `identity` where the order needs one.
    #[inline(always)]
    fn reduce_chunk(
        op: ReduceOp,
        x: &[Self],
        identity: Self,
        combine: &impl Fn(Self, Self) -> Self,
    ) -> Option<Self> {
        let _ = (op, identity);
        pairwise(x, combine)
    }
}

macro_rules! pairwise_chunks {
    ($($t:ty),*) => {$(impl ChunkReduce for $t {
        #[inline(always)]
        fn plus(a: $t, b: $t) -> $t {
            a.wrapping_add(b)
        }
        #[inline(always)]
        fn times(a: $t, b: $t) -> $t {
            a.wrapping_mul(b)
        }
    })*};
}
pairwise_chunks!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Accumulators of a compiled block: 16 elements per loop iteration.
const BLOCK_LANES: usize = 16;

macro_rules! float_chunks {
    ($($t:ty: $groups:ident),*) => {$(
        impl ChunkReduce for $t {
            #[inline(always)]
            fn plus(a: $t, b: $t) -> $t {
                a + b
            }
            #[inline(always)]
            fn times(a: $t, b: $t) -> $t {
                a * b
            }

            /// The compiled reduce form, step for step: accumulator `a`
            /// takes elements `a`, `a + 16`, … of the whole 16-element
            /// groups (float min/max: `x < acc ? acc : x`, every accumulator
            /// NaN when any element is); the vectors then the lanes are
            /// combined pairwise, then the elements after the last group.
            #[inline(always)]
            fn reduce_chunk(
                op: ReduceOp,
                x: &[Self],
                identity: Self,
                combine: &impl Fn(Self, Self) -> Self,
            ) -> Option<Self> {
                if x.is_empty() {
                    return None;
                }
                // Lanes of a 128-bit vector, and vectors of accumulators.
                const L: usize = 16 / std::mem::size_of::<$t>();
                const P: usize = BLOCK_LANES / L;
                let min_max = match cpu_reduce(op) {
                    CpuReduce::Extreme { max } => Some(max),
                    CpuReduce::Plus | CpuReduce::Times => None,
                };
                let mut acc = [identity; BLOCK_LANES];
                let full = x.len() / BLOCK_LANES * BLOCK_LANES;
                match min_max {
                    Some(max) => {
                        let nan = $groups(&x[..full], &mut acc, max);
                        if nan {
                            // Any NaN makes the block's value NaN, as the
                            // compiled form's NaN masks make it.
                            acc = [<$t>::NAN; BLOCK_LANES];
                        }
                    }
                    None => {
                        for group in x[..full].chunks_exact(BLOCK_LANES) {
                            prefetch_ahead(group.as_ptr());
                            for (a, &v) in acc.iter_mut().zip(group) {
                                *a = combine(*a, v);
                            }
                        }
                    }
                }
                let mut width = P;
                while width > 1 {
                    width /= 2;
                    for j in 0..width * L {
                        acc[j] = combine(acc[j], acc[j + width * L]);
                    }
                }
                let mut lanes = L;
                while lanes > 1 {
                    lanes /= 2;
                    for j in 0..lanes {
                        acc[j] = combine(acc[j], acc[j + lanes]);
                    }
                }
                let tail = x[full..].iter().fold(identity, |t, &v| combine(t, v));
                Some(combine(acc[0], tail))
            }
        }
    )*};
}
float_chunks!(f32: min_max_f32, f64: min_max_f64);

/// Float max (`max`) or min over whole 16-element groups, accumulator `j`
/// taking elements `j`, `j + 16`, …: `acc > v ? acc : v` (min: `acc < v ?
/// acc : v`), which is what `maxps`/`minps` compute; true when any element
/// is NaN. AVX2 where the CPU has it: written out, as the compiler split
/// the generic loop into 2-lane pieces.
macro_rules! min_max_groups {
    ($name:ident, $avx2:ident, $t:ty, $vector:ty, $lanes:expr, $load:ident, $store:ident,
     $max:ident, $min:ident, $cmp:ident, $or:ident, $mask:ident, $zero:ident) => {
        fn $name(x: &[$t], acc: &mut [$t; BLOCK_LANES], max: bool) -> bool {
            #[cfg(target_arch = "x86_64")]
            if super::isa::has_avx2() {
                // SAFETY: the CPU supports AVX2: `has_avx2` asked it at run time.
                return unsafe { $avx2(x, acc, max) };
            }
            let mut nan = false;
            for group in x.chunks_exact(BLOCK_LANES) {
                for (a, &v) in acc.iter_mut().zip(group) {
                    let keep = if max { *a > v } else { *a < v };
                    *a = if keep { *a } else { v };
                    nan |= v.is_nan();
                }
            }
            nan
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2(x: &[$t], acc: &mut [$t; BLOCK_LANES], max: bool) -> bool {
            use std::arch::x86_64::*;
            const V: usize = BLOCK_LANES / $lanes;
            // SAFETY (every load and store below): `acc` holds V vectors of
            // lanes, and each group V vectors of elements.
            let mut a: [$vector; V] =
                std::array::from_fn(|k| unsafe { $load(acc.as_ptr().add(k * $lanes)) });
            let mut nan: [$vector; V] = [$zero(); V];
            for group in x.chunks_exact(BLOCK_LANES) {
                prefetch_ahead(group.as_ptr());
                for k in 0..V {
                    let v = unsafe { $load(group.as_ptr().add(k * $lanes)) };
                    a[k] = if max { $max(a[k], v) } else { $min(a[k], v) };
                    nan[k] = $or(nan[k], $cmp::<_CMP_UNORD_Q>(v, v));
                }
            }
            let mut any = $zero();
            for k in 0..V {
                unsafe { $store(acc.as_mut_ptr().add(k * $lanes), a[k]) };
                any = $or(any, nan[k]);
            }
            $mask(any) != 0
        }
    };
}
min_max_groups!(
    min_max_f32,
    min_max_f32_avx2,
    f32,
    __m256,
    8,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_max_ps,
    _mm256_min_ps,
    _mm256_cmp_ps,
    _mm256_or_ps,
    _mm256_movemask_ps,
    _mm256_setzero_ps
);
min_max_groups!(
    min_max_f64,
    min_max_f64_avx2,
    f64,
    __m256d,
    4,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_max_pd,
    _mm256_min_pd,
    _mm256_cmp_pd,
    _mm256_or_pd,
    _mm256_movemask_pd,
    _mm256_setzero_pd
);

/// Reduces one block, with AVX2 code where the CPU has it. Sums and
/// products combine by [`ChunkReduce::plus`]/[`ChunkReduce::times`]: the
/// same operations as `combine`, which selects its operation at every call
/// and so kept the loop from vectorising.
pub(crate) fn reduce_chunk<T: ChunkReduce>(
    op: ReduceOp,
    x: &[T],
    identity: T,
    combine: &impl Fn(T, T) -> T,
) -> Option<T> {
    match cpu_reduce(op) {
        CpuReduce::Plus => reduce_chunk_by(op, x, identity, &T::plus),
        CpuReduce::Times => reduce_chunk_by(op, x, identity, &T::times),
        CpuReduce::Extreme { .. } => reduce_chunk_by(op, x, identity, combine),
    }
}

/// [`reduce_chunk`] with the combine function chosen.
#[inline(always)]
fn reduce_chunk_by<T: ChunkReduce>(
    op: ReduceOp,
    x: &[T],
    identity: T,
    combine: &impl Fn(T, T) -> T,
) -> Option<T> {
    #[cfg(target_arch = "x86_64")]
    if super::isa::has_avx2() {
        // SAFETY: the CPU supports AVX2: `has_avx2` asked it at run time.
        return unsafe { reduce_chunk_avx2(op, x, identity, combine) };
    }
    T::reduce_chunk(op, x, identity, combine)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn reduce_chunk_avx2<T: ChunkReduce>(
    op: ReduceOp,
    x: &[T],
    identity: T,
    combine: &impl Fn(T, T) -> T,
) -> Option<T> {
    T::reduce_chunk(op, x, identity, combine)
}

/// A binary counter of partial results combined pairwise: the partials of
/// 2^l chunks combine with each other whatever their number, so the error
/// of a float sum grows with the logarithm of the length. Its levels live
/// inline (2^32 partials before it spills): a reduction of many short rows
/// runs one cascade per row, and an allocation per row cost more than the
/// row (rows of 8 f32: ~80 ns a row).
pub(crate) struct Cascade<T> {
    levels: smallvec::SmallVec<[(u32, T); 32]>,
}

impl<T: Copy> Cascade<T> {
    pub(crate) fn new() -> Self {
        Cascade {
            levels: smallvec::SmallVec::new(),
        }
    }

    #[inline]
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

    /// The combination of every partial pushed (`None`: none was), which
    /// leaves the cascade empty for the next run.
    #[inline]
    pub(crate) fn finish(&mut self, f: &impl Fn(T, T) -> T) -> Option<T> {
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
