//! Scans (`cumsum`, `cumprod`, `cummax`, `cummin`) on a device: three launches of kernels
//! built with this crate's builder, so they are printed, verified,
//! simulated and compiled like any user kernel, in the order of
//! `lazyfuse_core::reference::scan` (the same bits as every other backend):
//!
//! 1. `totals`: one thread per chunk of a line combines its elements;
//! 2. `carries`: one thread per line turns the chunk totals into the carry
//!    of each chunk (the totals before it, combined left to right);
//! 3. `apply`: one thread per chunk combines its elements again, from its
//!    carry, writing every running value.

use lazyfuse_core::reference::{Lines, SCAN_CHUNK};
use lazyfuse_core::{Counter, DType, Error, EvalEnv, KernelLaunch, ReduceOp, Result, Scalar};

use std::sync::Arc;

use lazyfuse_core::DeviceBuffer;
use lazyfuse_fusion::Launch;

use crate::launch::{ArgValue, Dim3};
use crate::producer::{Declared, Producer};
use crate::{ArrayParam, Kernel, KernelScope, Val};

/// Runs one launch of a device's buffers; returns the arrays it writes.
pub type DeviceRun<'a> = &'a mut dyn FnMut(
    &KernelLaunch,
    &[(Arc<dyn DeviceBuffer>, DType)],
) -> Result<Vec<Arc<dyn DeviceBuffer>>>;

/// Threads per block of the scan (and arg-reduction) kernels.
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
    /// The kernels scanning `dtype` values (an accumulator dtype) with `op`.
    pub fn build(op: ReduceOp, dtype: DType) -> Result<ScanKernels> {
        Self::build_from(op, dtype, None)
    }

    /// The kernels scanning the values of `producer` (an element-wise
    /// launch) computed inside them, as [`ScanKernels::scan_fused`] runs
    /// them; `None` when the producer cannot be replayed there.
    pub fn build_fused(
        op: ReduceOp,
        dtype: DType,
        producer: &Launch,
    ) -> Result<Option<ScanKernels>> {
        match Producer::of(producer) {
            Some(replay) => Self::build_from(op, dtype, Some(&replay)).map(Some),
            None => Ok(None),
        }
    }

    /// The kernels scanning what `producer` computes (its inputs read in
    /// place of a buffer), or a buffer when `producer` is `None`.
    fn build_from(
        op: ReduceOp,
        dtype: DType,
        producer: Option<&Producer<'_>>,
    ) -> Result<ScanKernels> {
        let tag = producer
            .map(|p| format!("_{}", p.tag()))
            .unwrap_or_default();
        let name = |part: &str| format!("lf_scan_{part}_{}_{}{tag}", op.name(), dtype.short_name());
        let identity = op.scan_start(dtype);
        // The operation's combiner (the extremes propagate NaN, as core's
        // maximum and minimum).
        let combine = move |a: Val, b: Val| a.apply_binary(op.combiner(), &b);
        let totals = Kernel::build(&name("totals"), |k| {
            let x = Reader::declare(k, dtype, producer);
            let totals = k.array_mut("totals", dtype, 1);
            let chunk = ChunkOf::declare(k, &Val::from(SCAN_CHUNK as i64));
            let acc = k.local(Val::constant(identity, dtype));
            chunk.each(k, |k, at| {
                let v = x.at(k, at);
                k.set(&acc, combine(acc.get(), v));
            });
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
            let x = Reader::declare(k, dtype, producer);
            let carries = k.array("carries", dtype, 1);
            let out = k.array_mut("out", dtype, 1);
            let chunk = ChunkOf::declare(k, &Val::from(SCAN_CHUNK as i64));
            k.if_(chunk.valid.clone(), |k| {
                let acc = k.local(carries.at(&chunk.index));
                chunk.each(k, |k, at| {
                    let v = x.at(k, at);
                    k.set(&acc, combine(acc.get(), v));
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

    /// As [`ScanKernels::scan`] on a device's buffers, over the values of
    /// `producer` (an element-wise launch over the scan's elements;
    /// `inputs` its input buffers, `None` for generated ones), computed
    /// inside the scan kernels: the producer is never materialised.
    /// `Ok(None)`, having run nothing, when the producer cannot be
    /// replayed there (its inputs are not read contiguously, or it uses an
    /// operation the kernel builder lacks).
    pub fn scan_fused(
        (op, dtype): (ReduceOp, DType),
        lines: Lines,
        producer: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
        zeros: impl Fn(usize) -> Result<Arc<dyn DeviceBuffer>>,
        run: DeviceRun<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        let Some((replay, lens)) = replayable(producer, dtype, inputs) else {
            return Ok(None);
        };
        let kernels = ScanKernels::build_from(op, dtype, Some(&replay))?;
        let source = Source::of_producer(&replay, producer, inputs, &lens);
        kernels
            .run_from(lines, source, zeros, |launch, arrays| {
                env.stats.add(Counter::KernelLaunches, 1);
                run(launch, arrays)
            })
            .map(Some)
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
        run: impl FnMut(&KernelLaunch, &[(B, DType)]) -> Result<Vec<B>>,
    ) -> Result<B> {
        let len = [lines.outer * lines.inner * lines.n];
        let source = Source {
            arrays: vec![(input, self.dtype)],
            args: vec![ArgValue::Array {
                dtype: self.dtype,
                shape: &len,
            }],
        };
        self.run_from(lines, source, zeros, run)
    }

    /// [`ScanKernels::run`] reading `source`: the arrays and argument
    /// values of the parameters the kernels declared for what they scan.
    fn run_from<B: Clone>(
        &self,
        lines: Lines,
        source: Source<'_, B>,
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

        let (grid, block) = geometry("scan", count * chunks)?;
        let mut args = source.args.clone();
        args.push(table_array.clone());
        args.extend(chunk_args.iter().cloned());
        let launch = self.totals.prepare_launch(grid, block, &args)?;
        let mut arrays = source.arrays.clone();
        arrays.push((zeros(count * chunks)?, dtype));
        let totals = first(run(&launch, &arrays)?)?;

        let (grid, block) = geometry("scan", count)?;
        let launch = self.carries.prepare_launch(
            grid,
            block,
            &[table_array.clone(), int(chunks), int(count)],
        )?;
        let carries = first(run(&launch, &[(totals, dtype)])?)?;

        let (grid, block) = geometry("scan", count * chunks)?;
        let mut args = source.args;
        args.extend([table_array, flat_array]);
        args.extend(chunk_args.iter().cloned());
        let launch = self.apply.prepare_launch(grid, block, &args)?;
        let mut arrays = source.arrays;
        arrays.extend([(carries, dtype), (zeros(len)?, dtype)]);
        first(run(&launch, &arrays)?)
    }
}

/// What the `totals` and `apply` kernels (and the arg-reduction's
/// `partials`) read: the arrays of their source parameters and the
/// argument values of all of those parameters.
pub(crate) struct Source<'a, B> {
    pub(crate) arrays: Vec<(B, DType)>,
    pub(crate) args: Vec<ArgValue<'a>>,
}

impl<'a> Source<'a, Arc<dyn DeviceBuffer>> {
    /// The source of kernels replaying `replay` (of `producer`) over its
    /// `inputs` (`None` for generated ones) of `lens` elements.
    pub(crate) fn of_producer(
        replay: &Producer<'_>,
        producer: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        lens: &'a [[usize; 1]],
    ) -> Self {
        let arrays = (inputs.iter().zip(&producer.kernel.inputs))
            .filter_map(|(b, input)| b.map(|b| (Arc::clone(b), input.dtype)))
            .collect();
        Source {
            arrays,
            args: replay.launch_args(lens),
        }
    }
}

/// One thread per unit of `threads`, in blocks of [`BLOCK`], for the
/// kernels of `op` (a scan or an arg-reduction).
pub(crate) fn geometry(op: &str, threads: usize) -> Result<(Dim3, Dim3)> {
    let blocks = u32::try_from(threads.div_ceil(BLOCK as usize).max(1)).map_err(|_| {
        Error::InvalidArgument {
            op: op.into(),
            message: format!("{threads} chunks are too many for one launch"),
        }
    })?;
    Ok((Dim3::from(blocks), Dim3::from(BLOCK)))
}

/// `producer` as the kernels computing it inside them replay it, with its
/// `inputs`' element counts; `None` when it cannot be replayed there or
/// does not compute `dtype` values over those inputs.
pub(crate) fn replayable<'l>(
    producer: &'l Launch,
    dtype: DType,
    inputs: &[Option<&Arc<dyn DeviceBuffer>>],
) -> Option<(Producer<'l>, Vec<[usize; 1]>)> {
    let replay = Producer::of(producer)?;
    if producer.kernel.output_dtype(0) != dtype || inputs.len() != producer.inputs.len() {
        return None;
    }
    let lens = (inputs.iter().zip(&producer.kernel.inputs))
        .map(|(b, input)| [b.map_or(0, |b| b.bytes() / input.dtype.size())])
        .collect();
    Some((replay, lens))
}

/// The values a scan kernel combines: a buffer `x`, or a producer replayed.
pub(crate) enum Reader<'p> {
    Buffer(ArrayParam),
    Producer(&'p Producer<'p>, Declared),
}

impl<'p> Reader<'p> {
    /// Declares the parameters of what is scanned (before any other).
    pub(crate) fn declare(
        k: &mut KernelScope,
        dtype: DType,
        producer: Option<&'p Producer<'p>>,
    ) -> Self {
        match producer {
            Some(p) => Reader::Producer(p, p.declare(k)),
            None => Reader::Buffer(k.array("x", dtype, 1)),
        }
    }

    /// The value at flat index `at`.
    pub(crate) fn at(&self, k: &mut KernelScope, at: &Val) -> Val {
        match self {
            Reader::Buffer(x) => x.at(at),
            Reader::Producer(p, declared) => p.element(k, declared, at),
        }
    }
}

/// The chunk a thread of the `totals` and `apply` kernels (and the
/// arg-reduction's `partials`) handles.
pub(crate) struct ChunkOf {
    /// The thread's chunk, `line * chunks + c`.
    pub(crate) index: Val,
    /// Whether the thread has a chunk.
    pub(crate) valid: Val,
    /// Flat index of the line's first element.
    base: Val,
    /// The chunk's elements along the line: `start..end`.
    pub(crate) start: Val,
    pub(crate) end: Val,
    inner: Val,
}

impl ChunkOf {
    /// Declares the parameters `n`, `inner`, `chunks`, `count` and locates
    /// the thread's chunk, of `chunk_len` elements (the last may be short).
    pub(crate) fn declare(k: &mut KernelScope, chunk_len: &Val) -> ChunkOf {
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
        let start = k.let_(&c * chunk_len);
        let end = k.let_((&start + chunk_len).min(&n));
        ChunkOf {
            index,
            valid,
            base,
            start,
            end,
            inner,
        }
    }

    /// The flat index of element `j` of the thread's line.
    pub(crate) fn flat(&self, j: &Val) -> Val {
        &self.base + j * &self.inner
    }

    /// Runs `body(flat index)` for each element of the chunk, in order
    /// (nothing for a thread without a chunk: its range is empty).
    fn each(&self, k: &mut KernelScope, mut body: impl FnMut(&mut KernelScope, &Val)) {
        let end = Val::select(&self.valid, &self.end, &self.start);
        k.for_range(&self.start, end, 1i64, |k, j| {
            let at = k.let_(self.flat(&j));
            body(k, &at);
        });
    }
}
