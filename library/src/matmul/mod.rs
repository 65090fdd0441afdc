//! Matrix products (NumPy's `matmul`, Python's `@`), lazily: one launch of
//! a tiled kernel per product, its operands fused and computed before it
//! and element-wise work on its result fused after it.
//!
//! The kernel ([`matmul_kernel`]) is the classic shared-memory tiling: each
//! block of 16×16 threads computes a 16×16 tile of the result, reading the
//! operands a 16-wide strip at a time into shared memory. `sim` runs it
//! with its barriers, `cuda` compiles it with NVRTC. On the CPU the kernel
//! carries a [`HostRoutine`]: `matrixmultiply`'s packed, register-blocked
//! GEMM for `f32` and `f64` (and a row-wise loop for integers), rows of
//! the result spread over the worker threads.
//!
//! ```
//! use lazyfuse::{matmul, Context};
//!
//! let cx = Context::cpu();
//! let a = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape(&[2, 2]);
//! let b = cx.from_slice(&[5.0f32, 6.0]);
//! assert_eq!(matmul(&a, &b)?.to_vec::<f32>()?, [17.0, 39.0]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use lazyfuse_core::shape::{broadcast_shapes, format_shape};
use lazyfuse_core::SliceMut;
use lazyfuse_core::{
    promote, Array, BinaryOp, DType, Element, Error, HostBuffer, KernelLaunch, Result,
};

use crate::kernel::{Dim, HostRoutine, Kernel, KernelArg, KernelScope, Val, Workers};
use crate::kernel_cache::KernelCache;
use crate::routine::Args;

/// The side of a tile of the result (threads per block along x and y).
const TILE: usize = 16;

/// The product of `a` and `b` as NumPy's `matmul` defines it: the last two
/// axes are matrices, the others broadcast as batches; a 1-d `a` is a row
/// and a 1-d `b` a column, whose axis the result then lacks. The dtype is
/// the two operands' promoted one; `f16`/`bf16` are computed in `f32`
/// (as NumPy does) and `bool` as "any of the ands". Lazy.
///
/// Errors: a 0-d operand, operands whose inner lengths differ or whose
/// batch axes do not broadcast, operands of two contexts.
pub fn matmul(a: &Array, b: &Array) -> Result<Array> {
    a.check()?;
    b.check()?;
    if !a.session().same_as(b.session()) {
        return Err(Error::invalid(
            "matmul",
            "operands of two contexts (expected arrays of one context)",
        ));
    }
    for (which, x) in [("first", a), ("second", b)] {
        if x.ndim() == 0 {
            return Err(Error::invalid(
                "matmul",
                format!(
                    "the {which} operand is 0-d (expected at least one axis; use * for scalars)"
                ),
            ));
        }
    }
    let shape = Product::of(a.shape(), b.shape())?;
    let dtype = promote(a.dtype(), b.dtype());
    let session = a.session();
    if shape.batches * shape.m * shape.n == 0 {
        return Ok(session.zeros(&shape.result, dtype));
    }
    let compute = match dtype {
        DType::Bool => DType::I64,
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    };
    let batched = !shape.batch.is_empty();
    let (a, a_step) = shape.operand(&a.astype(compute), [shape.m, shape.k]);
    let (b, b_step) = shape.operand(&b.astype(compute), [shape.k, shape.n]);
    let c = match batched {
        true => session.zeros(&[shape.batches, shape.m, shape.n], compute),
        false => session.zeros(&[shape.m, shape.n], compute),
    };
    let grid = (
        u32::try_from(shape.n.div_ceil(TILE))
            .ok()
            .filter(|&x| x <= i32::MAX as u32),
        u32::try_from(shape.m.div_ceil(TILE))
            .ok()
            .filter(|&y| y <= 65_535),
    );
    let (Some(gx), Some(gy)) = grid else {
        return Err(Error::invalid(
            "matmul",
            format!(
                "a result of {} rows and {} columns (expected fewer than 2^20 rows and 2^35 columns)",
                shape.m, shape.n
            ),
        ));
    };
    let gz = shape.batches.min(65_535) as u32;
    let mut args: Vec<KernelArg<'_>> = vec![(&a).into(), (&b).into(), (&c).into()];
    if batched {
        args.extend([KernelArg::from(a_step), KernelArg::from(b_step)]);
    }
    let tile = TILE as u32;
    let product = matmul_kernel(compute, batched)?
        .launch(session, (gx, gy, gz), (tile, tile, 1), &args)?
        .remove(0);
    // Only a 1-d operand's product needs reshaping: a 2-d one is read in
    // place (straight into the caller's buffer by `read_into`).
    let product = match product.shape() == shape.result.as_slice() {
        true => product,
        false => product.reshape(&shape.result),
    };
    Ok(match dtype {
        DType::Bool => product.ne(0),
        _ => product.astype(dtype),
    })
}

/// The shapes of one product.
struct Product {
    /// The broadcast batch axes.
    batch: Vec<usize>,
    /// Their product.
    batches: usize,
    m: usize,
    k: usize,
    n: usize,
    /// The result's shape.
    result: Vec<usize>,
}

impl Product {
    fn of(a: &[usize], b: &[usize]) -> Result<Product> {
        let (a_rows, a_batch) = match a {
            [k] => (vec![1, *k], &[][..]),
            [batch @ .., m, k] => (vec![*m, *k], batch),
            [] => unreachable_shape()?,
        };
        let (b_rows, b_batch) = match b {
            [k] => (vec![*k, 1], &[][..]),
            [batch @ .., k, n] => (vec![*k, *n], batch),
            [] => unreachable_shape()?,
        };
        let (m, k, n) = (a_rows[0], a_rows[1], b_rows[1]);
        if k != b_rows[0] {
            return Err(Error::ShapeMismatch {
                op: "matmul".into(),
                message: format!(
                    "operands of shapes {} and {}: the first has rows of {k}, the second \
                     columns of {} (expected equal lengths)",
                    format_shape(a),
                    format_shape(b),
                    b_rows[0]
                ),
            });
        }
        let batch = broadcast_shapes("matmul", &[a_batch, b_batch])?.to_vec();
        let mut result = batch.clone();
        if a.len() > 1 {
            result.push(m);
        }
        if b.len() > 1 {
            result.push(n);
        }
        Ok(Product {
            batches: batch.iter().product(),
            batch,
            m,
            k,
            n,
            result,
        })
    }

    /// Operand `x` as the kernel takes it, and the step between its
    /// batches: `(rows, cols)` without batch axes, else `(batches or 1,
    /// rows, cols)` with a step of 1 or 0 (every batch reads the one
    /// matrix). Batch axes that broadcast only in part are materialised.
    fn operand(&self, x: &Array, [rows, cols]: [usize; 2]) -> (Array, i64) {
        if self.batch.is_empty() {
            let x = match x.shape() == [rows, cols] {
                true => x.clone(),
                false => x.reshape(&[rows, cols]),
            };
            return (x, 0);
        }
        let own: usize = x.shape().iter().rev().skip(2).product();
        if own == 1 {
            return (x.reshape(&[1, rows, cols]), 0);
        }
        let mut full = self.batch.clone();
        full.extend([rows, cols]);
        let x = if x.shape() == full.as_slice() {
            x.clone()
        } else {
            x.broadcast_to(&full)
        };
        (x.reshape(&[self.batches, rows, cols]), 1)
    }
}

/// Checked by the caller: no operand is 0-d.
fn unreachable_shape<T>() -> Result<T> {
    Err(Error::internal("matmul", "a 0-d operand passed the check"))
}

/// The kernel [`matmul`] launches for `dtype` (built once per dtype and
/// form; public to inspect its code): `c = a @ b` over a grid of 16×16
/// tiles of `c` (blocks of 16×16 threads); `batched`, the operands have a
/// leading batch axis and `c[z] = a[z * a_batch_step] @ b[z *
/// b_batch_step]` for every batch `z`, batches along the grid's z.
pub fn matmul_kernel(dtype: DType, batched: bool) -> Result<Kernel> {
    static KERNELS: KernelCache<(DType, bool)> = KernelCache::new();
    KERNELS.get_or_build((dtype, batched), || {
        let name = match batched {
            true => format!("lf_matmul_batched_{dtype}"),
            false => format!("lf_matmul_{dtype}"),
        };
        // Each thread writes its element of `c` once, after its sum.
        let built = lazyfuse_kernel::Kernel::build(&name, |k| tiled_product(k, dtype, batched))?
            .with_host_routine(Arc::new(CpuProduct))?
            .overwriting()?;
        Ok(Kernel::from_built(built))
    })
}

/// The body of [`matmul_kernel`].
fn tiled_product(k: &mut KernelScope, dtype: DType, batched: bool) {
    let rank = if batched { 3 } else { 2 };
    let a = k.array("a", dtype, rank);
    let b = k.array("b", dtype, rank);
    let c = k.array_mut("c", dtype, rank);
    let steps = batched.then(|| {
        let a_step = k.scalar("a_batch_step", DType::I64);
        (a_step, k.scalar("b_batch_step", DType::I64))
    });
    let tiles = [
        k.shared_array(dtype, &[TILE, TILE]),
        k.shared_array(dtype, &[TILE, TILE]),
    ];
    let i64_of = |v: Val| v.cast(DType::I64);
    let tile = Val::from(TILE as i64);
    let (tx, ty) = (i64_of(k.thread_idx(Dim::X)), i64_of(k.thread_idx(Dim::Y)));
    let (bx, by) = (i64_of(k.block_idx(Dim::X)), i64_of(k.block_idx(Dim::Y)));
    let col = k.let_(bx * &tile + &tx);
    let row = k.let_(by * &tile + &ty);
    let (m, n, depth) = (c.len(rank - 2), c.len(rank - 1), a.len(rank - 1));
    let zero = Val::constant(0.0, dtype);
    // One matrix: `z` and the operands' batches, when batched.
    let product = |k: &mut KernelScope, z: Option<(Val, Val, Val)>| {
        let at = |batch: &Option<Val>, i: Val, j: Val| match batch {
            Some(z) => vec![z.clone(), i, j],
            None => vec![i, j],
        };
        let (z, za, zb) = match z {
            Some((z, za, zb)) => (Some(z), Some(za), Some(zb)),
            None => (None, None, None),
        };
        let sum = k.local(zero.clone());
        let strips = (&depth + Val::from(TILE as i64 - 1)).apply_binary(BinaryOp::FloorDiv, &tile);
        let [a_tile, b_tile] = &tiles;
        k.for_range(0i64, strips, 1i64, |k, t| {
            // Each thread loads one element of each operand's strip (zero
            // outside the matrices), then every thread reads the strips.
            let here = (ty.clone(), tx.clone());
            let ka = &t * &tile + &tx;
            k.if_else(
                row.lt(&m).and(ka.lt(&depth)),
                |k| {
                    k.store_shared(
                        a_tile,
                        here.clone(),
                        a.at(at(&za, row.clone(), ka).as_slice()),
                    )
                },
                |k| k.store_shared(a_tile, here.clone(), zero.clone()),
            );
            let kb = &t * &tile + &ty;
            k.if_else(
                kb.lt(&depth).and(col.lt(&n)),
                |k| {
                    k.store_shared(
                        b_tile,
                        here.clone(),
                        b.at(at(&zb, kb, col.clone()).as_slice()),
                    )
                },
                |k| k.store_shared(b_tile, here.clone(), zero.clone()),
            );
            k.syncthreads();
            k.for_range(0i64, tile.clone(), 1i64, |k, q| {
                let term = a_tile.at((ty.clone(), q.clone())) * b_tile.at((q, tx.clone()));
                k.set(&sum, sum.get() + term);
            });
            k.syncthreads();
        });
        k.if_(row.lt(&m).and(col.lt(&n)), |k| {
            k.store(&c, at(&z, row.clone(), col.clone()).as_slice(), sum.get());
        });
    };
    match steps {
        Some((a_step, b_step)) => {
            let first = i64_of(k.block_idx(Dim::Z));
            let stride = i64_of(k.grid_dim(Dim::Z));
            k.for_range(first, c.len(0), stride, |k, z| {
                let batches = (&z * &a_step, &z * &b_step);
                product(k, Some((z, batches.0, batches.1)));
            });
        }
        None => product(k, None),
    }
}

/// [`matmul_kernel`]'s launches on the CPU.
#[derive(Debug)]
struct CpuProduct;

impl HostRoutine for CpuProduct {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let args = Args::new("matmul", arrays);
        let (a, b, c) = (args.array(0)?, args.array(1)?, args.output(outputs, 0)?);
        let missing = || args.error("a launch without its shapes");
        let [a_shape, _, c_shape] = launch.shapes.as_slice() else {
            return Err(missing());
        };
        // Batched: (batches, m, n) and the operands' batch steps (1 or 0).
        let varies = |i: usize| {
            let step = launch.scalars.get(i).map(|s| s.to_wide());
            matches!(step, Some(lazyfuse_core::Wide::Int(1)))
        };
        let [batches, m, n] = match c_shape.as_slice() {
            [m, n] => [1, *m, *n],
            [batches, m, n] => [*batches, *m, *n],
            _ => return Err(missing()),
        };
        let k = *a_shape.last().ok_or_else(missing)?;
        let dims = Dims {
            batches,
            m,
            k,
            n,
            a_varies: varies(0),
            b_varies: varies(1),
        };
        macro_rules! typed {
            ($($dtype:ident => $t:ty),*) => {
                match c.dtype() {
                    $(DType::$dtype => dims.run::<$t>(a, b, c, workers),)*
                    other => Err(Error::internal("matmul", format!("no CPU product for {other}"))),
                }
            };
        }
        typed!(F32 => f32, F64 => f64, I8 => i8, I16 => i16, I32 => i32, I64 => i64,
               U8 => u8, U16 => u16, U32 => u32, U64 => u64)
    }

    fn describe(&self) -> String {
        "a library routine: matrixmultiply's GEMM (f32, f64) or a row loop (integers), rows \
         spread over the worker threads"
            .to_string()
    }
}

/// The lengths of one launch of the product.
struct Dims {
    batches: usize,
    m: usize,
    k: usize,
    n: usize,
    a_varies: bool,
    b_varies: bool,
}

/// The multiply-adds below which a product runs on the calling thread:
/// waking a worker costs tens of microseconds, which at 64×64×64 (0.26M
/// multiply-adds, about 10 µs of one core's GEMM) was most of the time.
const PARALLEL_WORK: usize = 1 << 21;

impl Dims {
    /// `c[z] = a[z or 0] @ b[z or 0]`. Large products are cut into one
    /// task per thread: with fewer matrices than threads, each matrix into
    /// bands of rows (each band packs the right operand once, so there are
    /// no more bands than threads need); otherwise whole matrices, several
    /// to a task.
    fn run<T: Gemm>(
        &self,
        a: &HostBuffer,
        b: &HostBuffer,
        c: &mut SliceMut<'_>,
        workers: Workers<'_>,
    ) -> Result<()> {
        let (m, k, n) = (self.m, self.k, self.n);
        if m * n == 0 {
            return Ok(());
        }
        let wrong = || Error::internal("matmul", "operands of other dtypes or lengths");
        let (Some(a), Some(b)) = (a.as_slice::<T>(), b.as_slice::<T>()) else {
            return Err(wrong());
        };
        let len = c.len();
        let c = T::unwrap_mut(c.part(0..len)?).ok_or_else(wrong)?;
        if k == 0 {
            c.fill(T::default()); // empty sums
            return Ok(());
        }
        fn batch_of<T>(x: &[T], varies: bool, z: usize, size: usize) -> Option<&[T]> {
            let at = if varies { z * size } else { 0 };
            x.get(at..at + size)
        }
        if c.len() != self.batches * m * n || a.len() < m * k || b.len() < k * n {
            return Err(wrong());
        }
        let work = self.batches.saturating_mul(m * n).saturating_mul(k);
        let threads = if work < PARALLEL_WORK {
            1
        } else {
            workers.threads.max(1)
        };
        let band = m.div_ceil(threads.div_ceil(self.batches));
        // Every piece: (batch, first row, its rows of c); `threads` tasks
        // of consecutive pieces.
        let mut pieces: Vec<(usize, usize, &mut [T])> = (c.chunks_mut(m * n).enumerate())
            .flat_map(|(z, matrix)| {
                (matrix.chunks_mut(band * n).enumerate()).map(move |(i, rows)| (z, i * band, rows))
            })
            .collect();
        let per_task = pieces.len().div_ceil(threads);
        let mut tasks = Vec::with_capacity(threads);
        while !pieces.is_empty() {
            let rest = pieces.split_off(per_task.min(pieces.len()));
            tasks.push(Mutex::new(std::mem::replace(&mut pieces, rest)));
        }
        let failed = Mutex::new(None);
        (workers.run)(tasks.len(), &|t| {
            let mut task = tasks[t].lock().unwrap_or_else(PoisonError::into_inner);
            for (z, first, rows) in task.iter_mut() {
                let operands = (
                    batch_of(a, self.a_varies, *z, m * k),
                    batch_of(b, self.b_varies, *z, k * n),
                );
                let (Some(a), Some(b)) = operands else {
                    *failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(wrong());
                    return;
                };
                let count = rows.len() / n;
                T::gemm(count, k, n, &a[*first * k..(*first + count) * k], b, rows);
            }
        });
        match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// `c = a @ b` for row-major `a` (m×k), `b` (k×n) and `c` (m×n).
trait Gemm: Element {
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

macro_rules! blas_like {
    ($($t:ty => $routine:ident),*) => {$(
        impl Gemm for $t {
            fn gemm(m: usize, k: usize, n: usize, a: &[$t], b: &[$t], c: &mut [$t]) {
                if m * k > a.len() || k * n > b.len() || m * n > c.len() {
                    return; // the caller checked the lengths
                }
                // SAFETY: `a`, `b` and `c` hold at least m×k, k×n and m×n
                // elements (checked above), row-major with the row
                // strides given; `c` is borrowed mutably, so nothing else
                // reads or writes it meanwhile; beta = 0 ignores its values.
                unsafe {
                    matrixmultiply::$routine(
                        m, k, n, 1.0,
                        a.as_ptr(), k as isize, 1,
                        b.as_ptr(), n as isize, 1,
                        0.0,
                        c.as_mut_ptr(), n as isize, 1,
                    );
                }
            }
        }
    )*};
}
blas_like!(f32 => sgemm, f64 => dgemm);

macro_rules! integer_rows {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            /// Each `c[i, j]` sums its terms in order of `k`, wrapping, as
            /// the kernel does.
            fn gemm(_m: usize, k: usize, n: usize, a: &[$t], b: &[$t], c: &mut [$t]) {
                for (row, a_row) in c.chunks_mut(n).zip(a.chunks(k)) {
                    row.fill(0);
                    for (&x, b_row) in a_row.iter().zip(b.chunks(n)) {
                        for (out, &y) in row.iter_mut().zip(b_row) {
                            *out = out.wrapping_add(x.wrapping_mul(y));
                        }
                    }
                }
            }
        }
    )*};
}
integer_rows!(i8, i16, i32, i64, u8, u16, u32, u64);
