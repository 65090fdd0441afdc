//! Scans (`cumsum`, `cumprod`) on a device: three launches of kernels
//! built with this crate's builder, so they are printed, verified,
//! simulated and compiled like any user kernel, in the order of
//! `lazyfuse_core::reference::scan` (the same bits as every other backend):
//!
//! 1. `totals`: one thread per chunk of a line combines its elements;
//! 2. `carries`: one thread per line turns the chunk totals into the carry
//!    of each chunk (the totals before it, combined left to right);
//! 3. `apply`: one thread per chunk combines its elements again, from its
//!    carry, writing every running value.

use lazyfuse_core::reference::{scan_identity, Lines, SCAN_CHUNK};
use lazyfuse_core::{Counter, DType, Error, EvalEnv, KernelLaunch, ReduceOp, Result, Scalar};

use crate::launch::{ArgValue, Dim3};
use crate::{Kernel, KernelScope, Val};

/// Threads per block of the scan kernels.
const BLOCK: u32 = 256;

/// The three kernels of a scan of one operation and dtype.
#[derive(Clone, Debug)]
pub struct ScanKernels {
    totals: Kernel,
    carries: Kernel,
    apply: Kernel,
    dtype: DType,
}

impl ScanKernels {
    /// The kernels scanning `dtype` values (an accumulator dtype) with `op`
    /// (`Sum` or `Prod`).
    pub fn build(op: ReduceOp, dtype: DType) -> Result<ScanKernels> {
        let name = |part: &str| format!("lf_scan_{part}_{}_{}", op.name(), dtype.short_name());
        let identity = scan_identity(op, dtype);
        let combine = move |a: Val, b: Val| match op {
            ReduceOp::Prod => a * b,
            _ => a + b,
        };
        let totals = Kernel::build(&name("totals"), |k| {
            let x = k.array("x", dtype, 1);
            let totals = k.array_mut("totals", dtype, 1);
            let chunk = ChunkOf::declare(k);
            let acc = k.local(Val::constant(identity, dtype));
            chunk.each(k, |k, at| k.set(&acc, combine(acc.get(), x.at(at))));
            k.if_(chunk.valid.clone(), |k| {
                k.store(&totals, &chunk.index, acc.get())
            });
        })?;
        let carries = Kernel::build(&name("carries"), |k| {
            let totals = k.array_mut("totals", dtype, 1);
            let chunks = k.scalar("chunks", DType::I64);
            let lines = k.scalar("lines", DType::I64);
            let line = k.grid(1).remove(0);
            k.if_(line.lt(&lines), |k| {
                let run = k.local(Val::constant(identity, dtype));
                k.for_range(0i64, &chunks, 1i64, |k, c| {
                    let at = k.let_(&line * &chunks + &c);
                    let total = k.let_(totals.at(&at));
                    k.store(&totals, &at, run.get());
                    k.set(&run, combine(run.get(), total));
                });
            });
        })?;
        let apply = Kernel::build(&name("apply"), |k| {
            let x = k.array("x", dtype, 1);
            let carries = k.array("carries", dtype, 1);
            let out = k.array_mut("out", dtype, 1);
            let chunk = ChunkOf::declare(k);
            k.if_(chunk.valid.clone(), |k| {
                let acc = k.local(carries.at(&chunk.index));
                chunk.each(k, |k, at| {
                    k.set(&acc, combine(acc.get(), x.at(at)));
                    k.store(&out, at, acc.get());
                });
            });
        })?;
        Ok(ScanKernels {
            totals,
            carries,
            apply,
            dtype,
        })
    }

    /// Builds the kernels of `op` on `dtype` and runs them over `input` as
    /// [`ScanKernels::run`] does, counting each launch in `env`'s stats.
    pub fn scan<B: Clone>(
        (op, dtype): (ReduceOp, DType),
        lines: Lines,
        input: B,
        env: EvalEnv<'_>,
        zeros: impl Fn(usize) -> Result<B>,
        mut run: impl FnMut(&KernelLaunch, &[(B, DType)]) -> Result<Vec<B>>,
    ) -> Result<B> {
        let kernels = ScanKernels::build(op, dtype)?;
        kernels.run(lines, input, zeros, |launch, arrays| {
            env.stats.add(Counter::KernelLaunches, 1);
            run(launch, arrays)
        })
    }

    /// The three kernels, in launch order.
    pub fn kernels(&self) -> [&Kernel; 3] {
        [&self.totals, &self.carries, &self.apply]
    }

    /// Scans `input` (the lines `lines` of a dense array) on a device:
    /// `zeros(len)` makes a buffer of `len` elements there (each is written
    /// before it is read), `run` runs one launch over its array arguments
    /// and returns the arrays it writes. Three launches (none when empty).
    pub fn run<B: Clone>(
        &self,
        lines: Lines,
        input: B,
        zeros: impl Fn(usize) -> Result<B>,
        mut run: impl FnMut(&KernelLaunch, &[(B, DType)]) -> Result<Vec<B>>,
    ) -> Result<B> {
        let dtype = self.dtype;
        let count = lines.outer * lines.inner;
        if count * lines.n == 0 {
            return zeros(0);
        }
        let chunks = lines.n.div_ceil(SCAN_CHUNK).max(1);
        let len = count * lines.n;
        let int = |v: usize| ArgValue::Scalar(Scalar::Int(v as i128));
        let (flat, table) = ([len], [count * chunks]);
        let flat_array = ArgValue::Array {
            dtype,
            shape: &flat,
        };
        let table_array = ArgValue::Array {
            dtype,
            shape: &table,
        };
        let geometry = |threads: usize| -> Result<(Dim3, Dim3)> {
            let blocks = u32::try_from(threads.div_ceil(BLOCK as usize).max(1)).map_err(|_| {
                Error::InvalidArgument {
                    op: "scan".into(),
                    message: format!("{threads} chunks are too many for one launch"),
                }
            })?;
            Ok((Dim3::from(blocks), Dim3::from(BLOCK)))
        };
        let chunk_args = [
            int(lines.n),
            int(lines.inner),
            int(chunks),
            int(count * chunks),
        ];
        let first = |mut values: Vec<B>| {
            values
                .pop()
                .ok_or_else(|| Error::internal("scan", "a scan kernel wrote nothing"))
        };

        let (grid, block) = geometry(count * chunks)?;
        let mut args = vec![flat_array.clone(), table_array.clone()];
        args.extend(chunk_args.iter().cloned());
        let launch = self.totals.prepare_launch(grid, block, &args)?;
        let totals = first(run(
            &launch,
            &[(input.clone(), dtype), (zeros(count * chunks)?, dtype)],
        )?)?;

        let (grid, block) = geometry(count)?;
        let launch = self.carries.prepare_launch(
            grid,
            block,
            &[table_array.clone(), int(chunks), int(count)],
        )?;
        let carries = first(run(&launch, &[(totals, dtype)])?)?;

        let (grid, block) = geometry(count * chunks)?;
        let mut args = vec![flat_array.clone(), table_array, flat_array];
        args.extend(chunk_args.iter().cloned());
        let launch = self.apply.prepare_launch(grid, block, &args)?;
        first(run(
            &launch,
            &[(input, dtype), (carries, dtype), (zeros(len)?, dtype)],
        )?)
    }
}

/// The chunk a thread of the `totals` and `apply` kernels handles.
struct ChunkOf {
    /// The thread's chunk, `line * chunks + c`.
    index: Val,
    /// Whether the thread has a chunk.
    valid: Val,
    /// Flat index of the chunk's first element.
    base: Val,
    /// The chunk's elements along the line: `start..end`.
    start: Val,
    end: Val,
    inner: Val,
}

impl ChunkOf {
    /// Declares the parameters `n`, `inner`, `chunks`, `count` and locates
    /// the thread's chunk.
    fn declare(k: &mut KernelScope) -> ChunkOf {
        let n = k.scalar("n", DType::I64);
        let inner = k.scalar("inner", DType::I64);
        let chunks = k.scalar("chunks", DType::I64);
        let count = k.scalar("count", DType::I64);
        let index = k.grid(1).remove(0);
        let valid = index.lt(&count);
        let line = k.let_(index.floor_div(&chunks));
        let c = k.let_(&index - &line * &chunks);
        let outer = k.let_(line.floor_div(&inner));
        let base = k.let_(&outer * &n * &inner + (&line - &outer * &inner));
        let start = k.let_(&c * Val::from(SCAN_CHUNK as i64));
        let end = k.let_((&start + Val::from(SCAN_CHUNK as i64)).min(&n));
        ChunkOf {
            index,
            valid,
            base,
            start,
            end,
            inner,
        }
    }

    /// Runs `body(flat index)` for each element of the chunk, in order
    /// (nothing for a thread without a chunk: its range is empty).
    fn each(&self, k: &mut KernelScope, mut body: impl FnMut(&mut KernelScope, &Val)) {
        let end = Val::select(&self.valid, &self.end, &self.start);
        k.for_range(&self.start, end, 1i64, |k, j| {
            let at = k.let_(&self.base + &j * &self.inner);
            body(k, &at);
        });
    }
}
