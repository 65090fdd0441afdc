//! The hand-written fused Rust loops every case is compared with: one pass
//! over slices, parallel on a rayon pool with the same thread count as
//! lazyfuse (inline on the calling thread when the data is a single task),
//! writing into a preallocated output (or reducing).
//!
//! They compute in [`BenchElem::Acc`]; E3's transcendental functions are
//! glibc's vectorised ones (libmvec) where that library loads, else std's
//! scalar libm calls. `f16` computes in `f32`, converting blocks of
//! [`BLOCK`] elements with `half`'s vectorised slice conversions.

use rayon::prelude::*;
use rayon::ThreadPool;

use crate::types::{BenchElem, Float};

/// Elements per parallel task.
const CHUNK: usize = 1 << 15;
/// Independent accumulators per task, so that reductions vectorise.
pub const LANES: usize = 16;
/// Elements converted at a time when `T` is not computed in itself.
pub const BLOCK: usize = 512;

/// `out[i] = f(a[i], b[i], c[i])`.
pub fn elementwise3<T: BenchElem>(
    pool: &ThreadPool,
    abc: [&[T]; 3],
    out: &mut [T],
    f: impl Fn(T::Acc, T::Acc, T::Acc) -> T::Acc + Sync,
) {
    blocks3(pool, abc, out, T::DIRECT, |a, b, c, o| {
        for (((o, &a), &b), &c) in o.iter_mut().zip(a).zip(b).zip(c) {
            *o = f(a, b, c);
        }
    });
}

/// E3 with libmvec (`scalar` for the last elements of each block); `false`
/// when libmvec is not available.
pub fn e3_vectorised<T: BenchElem>(
    pool: &ThreadPool,
    abc: [&[T]; 3],
    out: &mut [T],
    scalar: impl Fn(T::Acc, T::Acc, T::Acc) -> T::Acc + Sync,
) -> bool {
    if crate::mvec::get().is_none() {
        return false;
    }
    // libmvec takes vectors of `T::Acc`: every type goes through blocks.
    blocks3(pool, abc, out, false, |a, b, c, o| {
        let done = T::Acc::e3_mvec(a, b, c, o);
        for i in done..o.len() {
            o[i] = scalar(a[i], b[i], c[i]);
        }
    });
    true
}

/// Runs `block` over [`BLOCK`]-element blocks of `a`, `b`, `c` converted to
/// `T::Acc` (or, when `direct`, as one element at a time in place: `T` is
/// then its own arithmetic type), in parallel over [`CHUNK`]s.
fn blocks3<T: BenchElem>(
    pool: &ThreadPool,
    [a, b, c]: [&[T]; 3],
    out: &mut [T],
    direct: bool,
    block: impl Fn(&[T::Acc], &[T::Acc], &[T::Acc], &mut [T::Acc]) + Sync,
) {
    let task = |o: &mut [T], a: &[T], b: &[T], c: &[T]| {
        let zero = T::Acc::ZERO;
        let (mut xa, mut xb, mut xc, mut xo) =
            ([zero; BLOCK], [zero; BLOCK], [zero; BLOCK], [zero; BLOCK]);
        if direct {
            // One element per "block": no conversion, the compiler sees a
            // plain loop over the slices.
            for (((o, &a), &b), &c) in o.iter_mut().zip(a).zip(b).zip(c) {
                block(&[a.load()], &[b.load()], &[c.load()], &mut xo[..1]);
                *o = T::store(xo[0]);
            }
            return;
        }
        for (((o, a), b), c) in o
            .chunks_mut(BLOCK)
            .zip(a.chunks(BLOCK))
            .zip(b.chunks(BLOCK))
            .zip(c.chunks(BLOCK))
        {
            let w = o.len();
            T::load_block(a, &mut xa[..w]);
            T::load_block(b, &mut xb[..w]);
            T::load_block(c, &mut xc[..w]);
            block(&xa[..w], &xb[..w], &xc[..w], &mut xo[..w]);
            T::store_block(&xo[..w], o);
        }
    };
    if out.len() <= CHUNK {
        task(out, a, b, c);
        return;
    }
    pool.install(|| {
        out.par_chunks_mut(CHUNK)
            .zip(a.par_chunks(CHUNK))
            .zip(b.par_chunks(CHUNK))
            .zip(c.par_chunks(CHUNK))
            .for_each(|(((o, a), b), c)| task(o, a, b, c))
    });
}

/// `combine` over `map(x, y)` of `x`, `y` in [`LANES`] accumulators.
fn lanes<E: Copy, A: Float>(
    a: &[E],
    b: &[E],
    load: impl Fn(E) -> A,
    acc: &mut [A; LANES],
    map: &impl Fn(A, A) -> A,
    combine: &impl Fn(A, A) -> A,
) {
    let (mut xa, mut xb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    for (va, vb) in (&mut xa).zip(&mut xb) {
        for ((s, &x), &y) in acc.iter_mut().zip(va).zip(vb) {
            *s = combine(*s, map(load(x), load(y)));
        }
    }
    for (&x, &y) in xa.remainder().iter().zip(xb.remainder()) {
        acc[0] = combine(acc[0], map(load(x), load(y)));
    }
}

/// `combine` over `map(a[i], b[i])`, starting from `identity` (which
/// `combine` must leave unchanged), with [`LANES`] accumulators per task.
pub fn reduce2<T: BenchElem>(
    pool: &ThreadPool,
    [a, b]: [&[T]; 2],
    identity: T::Acc,
    map: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync,
    combine: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync,
) -> T {
    let task = |a: &[T], b: &[T]| {
        let mut acc = [identity; LANES];
        if T::DIRECT {
            lanes(a, b, T::load, &mut acc, &map, &combine);
        } else {
            let (mut xa, mut xb) = ([identity; BLOCK], [identity; BLOCK]);
            for (a, b) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
                let w = a.len();
                T::load_block(a, &mut xa[..w]);
                T::load_block(b, &mut xb[..w]);
                lanes(&xa[..w], &xb[..w], |x| x, &mut acc, &map, &combine);
            }
        }
        acc.into_iter().fold(identity, &combine)
    };
    let total = if a.len() <= CHUNK {
        task(a, b)
    } else {
        pool.install(|| {
            a.par_chunks(CHUNK)
                .zip(b.par_chunks(CHUNK))
                .map(|(a, b)| task(a, b))
                .reduce(|| identity, &combine)
        })
    };
    T::store(total)
}

/// `out[j] = sum_i (x[i, j] + r[j] * k[i])` for an `(m, m)` row-major `x`:
/// rayon splits the rows, each split adds whole rows (long contiguous
/// streams) into its own accumulator row, and the splits' rows are added.
pub fn axis0<T: BenchElem>(pool: &ThreadPool, x: &[T], m: usize, r: &[T], k: &[T], out: &mut [T]) {
    let zero = T::Acc::ZERO;
    let mut r_acc = vec![zero; m];
    T::load_block(r, &mut r_acc);
    let add_row = |mut acc: Vec<T::Acc>, i: usize| {
        let ki = k[i].load();
        let mut row = [zero; BLOCK];
        for (j0, src) in (0..m)
            .step_by(BLOCK)
            .zip(x[i * m..(i + 1) * m].chunks(BLOCK))
        {
            let w = src.len();
            let (acc, rj) = (&mut acc[j0..j0 + w], &r_acc[j0..j0 + w]);
            if T::DIRECT {
                for ((s, &v), &rj) in acc.iter_mut().zip(src).zip(rj) {
                    *s = *s + (v.load() + rj * ki);
                }
            } else {
                T::load_block(src, &mut row[..w]);
                for ((s, &v), &rj) in acc.iter_mut().zip(&row[..w]).zip(rj) {
                    *s = *s + (v + rj * ki);
                }
            }
        }
        acc
    };
    let acc = if m * m <= CHUNK {
        (0..m).fold(vec![zero; m], add_row)
    } else {
        pool.install(|| {
            (0..m)
                .into_par_iter()
                .with_min_len((CHUNK / m).max(1))
                .fold(|| vec![zero; m], add_row)
                .reduce(
                    || vec![zero; m],
                    |mut a, b| {
                        for (x, &y) in a.iter_mut().zip(&b) {
                            *x = *x + y;
                        }
                        a
                    },
                )
        })
    };
    T::store_block(&acc, out);
}

/// The largest error of `got` against `want`, each difference measured
/// relative to `max(1, |want|)`; NaN against NaN and equal infinities count
/// as equal, NaN against a number as an infinite error.
pub fn max_error<T: BenchElem>(got: &[T], want: &[T]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            let (g, w) = (g.to_f64(), w.to_f64());
            if (g.is_nan() && w.is_nan()) || g == w {
                0.0
            } else if g.is_nan() || w.is_nan() {
                f64::INFINITY
            } else {
                (g - w).abs() / w.abs().max(1.0)
            }
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::uniform;
    use lazyfuse::half::f16;

    fn pool() -> ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
    }

    #[test]
    fn loops_match_serial_code() {
        let pool = pool();
        let n = 100_003;
        let (a, b, c) = (
            uniform::<f64>(n, 1),
            uniform::<f64>(n, 2),
            uniform::<f64>(n, 3),
        );
        let mut out = vec![0.0; n];
        elementwise3(&pool, [&a, &b, &c], &mut out, |a, b, c| a * b + c);
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, &o)| o == a[i] * b[i] + c[i]));
        let s = reduce2(&pool, [&a, &b], 0.0, |x, y| (x - y) * (x - y), |p, q| p + q);
        let want: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
        assert!((s - want).abs() < 1e-9 * want);
        let m = 300;
        let x = uniform::<f64>(m * m, 4);
        let mut col = vec![0.0; m];
        axis0(&pool, &x, m, &a[..m], &b[..m], &mut col);
        for (j, &got) in col.iter().enumerate() {
            let want: f64 = (0..m).map(|i| x[i * m + j] + a[j] * b[i]).sum();
            assert!((got - want).abs() < 1e-9 * want);
        }
    }

    #[test]
    fn f16_loops_convert_blocks() {
        let pool = pool();
        let n = 70_001;
        let (a, b, c) = (
            uniform::<f16>(n, 1),
            uniform::<f16>(n, 2),
            uniform::<f16>(n, 3),
        );
        let mut out = vec![f16::ZERO; n];
        elementwise3(&pool, [&a, &b, &c], &mut out, |a, b, c| a * b + c);
        for i in 0..n {
            let want = a[i].to_f32() * b[i].to_f32() + c[i].to_f32();
            assert_eq!(out[i], f16::from_f32(want));
        }
        let s: f16 = reduce2(&pool, [&a, &b], 0.0, |x, y| (x - y).abs(), f32::max);
        let want = (0..n)
            .map(|i| (a[i].to_f32() - b[i].to_f32()).abs())
            .fold(0.0, f32::max);
        assert_eq!(s, f16::from_f32(want));
    }

    #[test]
    fn errors_treat_nan_as_equal_only_to_nan() {
        let nan = f16::NAN;
        assert_eq!(max_error(&[nan, f16::ONE], &[nan, f16::ONE]), 0.0);
        assert_eq!(max_error(&[nan], &[f16::ONE]), f64::INFINITY);
        assert!(max_error(&[1.5f32], &[1.0f32]) > 0.49);
    }
}
