//! The source tutorials' hand-written CUDA kernels, written with
//! `Kernel::build` (shared by the `kernels` example and `tests/kernels.rs`).

use lazyfuse::kernel::{Dim, Kernel, Val};
use lazyfuse::{DType, Result};

/// Numba: `a[pos] += 1` for `pos = cuda.grid(1)` inside the array.
pub fn increment_by_one() -> Result<Kernel> {
    Kernel::build("increment_by_one", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        let pos = k.grid(1).remove(0);
        k.if_(pos.lt(a.len(0)), |k| {
            let next = a.at(&pos) + 1.0;
            k.store(&a, &pos, next);
        });
    })
}

/// Numba: `out[x, y] = 2 * a[x, y]` over a 2-D grid (`cuda.grid(2)`).
pub fn doubled() -> Result<Kernel> {
    Kernel::build("doubled", |k| {
        let a = k.array("a", DType::F64, 2);
        let out = k.array_mut("out", DType::F64, 2);
        let pos = k.grid(2);
        let (x, y) = (&pos[0], &pos[1]);
        k.if_(x.lt(a.len(0)).and(y.lt(a.len(1))), |k| {
            k.store(&out, (x, y), a.at((x, y)) * 2.0);
        });
    })
}

/// One partial sum per block: a tree reduction in shared memory, with a
/// `syncthreads` after every step (`racy` leaves them out, to show what the
/// simulator says).
pub fn block_sum(racy: bool) -> Result<Kernel> {
    const THREADS: usize = 256;
    Kernel::build("block_sum", |k| {
        let a = k.array("a", DType::F32, 1);
        let sums = k.array_mut("sums", DType::F32, 1);
        let shared = k.shared_array(DType::F32, &[THREADS]);
        let tid = k.thread_idx(Dim::X);
        let i = k.grid(1).remove(0);
        k.store_shared(
            &shared,
            &tid,
            Val::select(&i.lt(a.len(0)), a.at(&i), 0.0f32),
        );
        k.syncthreads();
        let stride = k.local(THREADS as i64 / 2);
        k.while_(stride.get().gt(0i64), |k| {
            k.if_(tid.lt(stride.get()), |k| {
                let sum = shared.at(&tid) + shared.at(&tid + stride.get());
                k.store_shared(&shared, &tid, sum);
            });
            if !racy {
                k.syncthreads();
            }
            k.set(&stride, stride.get().floor_div(2i64));
        });
        k.if_(tid.eq(0i64), |k| {
            let block = k.block_idx(Dim::X);
            k.store(&sums, block, shared.at(0i64));
        });
    })
}

/// A histogram of non-negative integers into `bins.len()` bins, with a
/// grid-stride loop and `atomicAdd`.
pub fn histogram() -> Result<Kernel> {
    Kernel::build("histogram", |k| {
        let data = k.array("data", DType::I32, 1);
        let bins = k.array_mut("bins", DType::U32, 1);
        let start = k.grid(1).remove(0);
        let stride = k.gridsize(1).remove(0);
        k.for_range(start, data.len(0), stride, |k, i| {
            let bin = data.at(i) % bins.len(0).cast(DType::I32);
            k.atomic_add(&bins, bin, 1i32);
        });
    })
}

/// Tile width of [`matmul_tiled`]: launch it with `TILE × TILE` blocks.
pub const TILE: usize = 8;

/// `c = a @ b` with `TILE × TILE` tiles of `a` and `b` staged in shared memory.
pub fn matmul_tiled() -> Result<Kernel> {
    Kernel::build("matmul_tiled", |k| {
        let a = k.array("a", DType::F32, 2);
        let b = k.array("b", DType::F32, 2);
        let c = k.array_mut("c", DType::F32, 2);
        let sa = k.shared_array(DType::F32, &[TILE, TILE]);
        let sb = k.shared_array(DType::F32, &[TILE, TILE]);
        let (tx, ty) = (k.thread_idx(Dim::X), k.thread_idx(Dim::Y));
        let row = k.block_idx(Dim::Y) * TILE as f64 + &ty;
        let col = k.block_idx(Dim::X) * TILE as f64 + &tx;
        let acc = k.local(0.0f32);
        let tiles = (a.len(1) + (TILE - 1) as f64).floor_div(TILE as i64);
        k.for_range(0i64, tiles, 1i64, |k, t| {
            let ka = &t * TILE as f64 + &tx;
            let kb = &t * TILE as f64 + &ty;
            let in_a = row.lt(a.len(0)).and(ka.lt(a.len(1)));
            let in_b = kb.lt(b.len(0)).and(col.lt(b.len(1)));
            k.store_shared(
                &sa,
                (&ty, &tx),
                Val::select(&in_a, a.at((&row, &ka)), 0.0f32),
            );
            k.store_shared(
                &sb,
                (&ty, &tx),
                Val::select(&in_b, b.at((&kb, &col)), 0.0f32),
            );
            k.syncthreads();
            k.for_range(0i64, TILE as i64, 1i64, |k, j| {
                k.set(&acc, acc.get() + sa.at((&ty, &j)) * sb.at((&j, &tx)));
            });
            k.syncthreads();
        });
        k.if_(row.lt(c.len(0)).and(col.lt(c.len(1))), |k| {
            k.store(&c, (&row, &col), acc.get());
        });
    })
}
