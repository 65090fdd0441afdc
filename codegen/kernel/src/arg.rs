//! Arg-reductions (`argmax`, `argmin`) on a device: two launches of
//! kernels built with this crate's builder (printed, verified, simulated
//! and compiled like any user kernel), reading the values once, from a
//! buffer or from their element-wise producer computed inside the first:
//!
//! 1. `partials`: one thread per chunk of a line finds the chunk's first
//!    extreme, its value and its index along the line;
//! 2. `merge`: one thread per line merges its chunks' bests left to right.
//!
//! Both keep the earlier of two equal values, and a NaN is more extreme
//! than any number (the first NaN wins): the result is
//! `lazyfuse_core::reference::arg_reduce`'s, whatever the chunk length.
//! Devices use these for 64-bit values, whose (value, index) pair does not
//! fit the one packed `i64` key that reduces narrower values in one
//! reduction.

use std::sync::Arc;

use lazyfuse_core::reference::Lines;
use lazyfuse_core::{
    ArgExtreme, Counter, DType, DeviceBuffer, Error, EvalEnv, ReduceOp, Result, Scalar,
};
use lazyfuse_fusion::Launch;

use crate::launch::ArgValue;
use crate::producer::Producer;
use crate::scan::{geometry, replayable, ChunkOf, DeviceRun, Reader, Source};
use crate::{Kernel, Val};

/// The two kernels of an arg-reduction of one operation and dtype.
#[derive(Clone, Debug)]
pub struct ArgKernels {
    partials: Kernel,
    merge: Kernel,
    dtype: DType,
}

impl ArgKernels {
    /// The kernels finding `op`'s extreme (`Max` or `Min`) of `dtype`
    /// values, read from a buffer or computed by `producer`.
    fn build(op: ReduceOp, dtype: DType, producer: Option<&Producer<'_>>) -> Result<ArgKernels> {
        let extreme = ArgExtreme::of(op).ok_or_else(|| {
            Error::internal(
                "arg-reduction",
                format!("{} has no arg-reduction", op.name()),
            )
        })?;
        let tag = producer
            .map(|p| format!("_{}", p.tag()))
            .unwrap_or_default();
        let name = |part: &str| format!("lf_arg_{part}_{}_{}{tag}", op.name(), dtype.short_name());
        let partials = Kernel::build(&name("partials"), |k| {
            let x = Reader::declare(k, dtype, producer);
            let values = k.array_mut("best_values", dtype, 1);
            let indices = k.array_mut("best_indices", DType::I64, 1);
            let chunk_len = k.scalar("chunk_len", DType::I64);
            let chunk = ChunkOf::declare(k, &chunk_len);
            k.if_(chunk.valid.clone(), |k| {
                let first = x.at(k, &chunk.flat(&chunk.start));
                let best = k.local(first);
                let best_index = k.local(chunk.start.clone());
                k.for_range(&chunk.start + 1.0, &chunk.end, 1i64, |k, j| {
                    let value = x.at(k, &chunk.flat(&j));
                    let v = k.let_(value);
                    k.if_(better(extreme, &v, &best.get()), |k| {
                        k.set(&best, v.clone());
                        k.set(&best_index, j.clone());
                    });
                });
                k.store(&values, &chunk.index, best.get());
                k.store(&indices, &chunk.index, best_index.get());
            });
        })?;
        let merge = Kernel::build(&name("merge"), |k| {
            let values = k.array("best_values", dtype, 1);
            let indices = k.array("best_indices", DType::I64, 1);
            let out = k.array_mut("out", DType::I64, 1);
            let chunks = k.scalar("chunks", DType::I64);
            let lines = k.scalar("lines", DType::I64);
            let line = k.grid(1).remove(0);
            k.if_(line.lt(&lines), |k| {
                let first = k.let_(&line * &chunks);
                let best = k.local(values.at(&first));
                let best_index = k.local(indices.at(&first));
                k.for_range(1i64, &chunks, 1i64, |k, c| {
                    let at = k.let_(&first + &c);
                    let v = k.let_(values.at(&at));
                    k.if_(better(extreme, &v, &best.get()), |k| {
                        k.set(&best, v.clone());
                        k.set(&best_index, indices.at(&at));
                    });
                });
                k.store(&out, &line, best_index.get());
            });
        })?;
        Ok(ArgKernels {
            partials,
            merge,
            dtype,
        })
    }

    /// The two kernels, in launch order.
    pub fn kernels(&self) -> [&Kernel; 2] {
        [&self.partials, &self.merge]
    }

    /// The kernels of `op` (`Max` or `Min`) over `dtype` values read from
    /// a buffer, as [`ArgKernels::reduce`] runs them.
    pub fn of_buffer(op: ReduceOp, dtype: DType) -> Result<ArgKernels> {
        Self::build(op, dtype, None)
    }

    /// The kernels of `op` over the values of `producer` (an element-wise
    /// launch) computed inside them, as [`ArgKernels::reduce_fused`] runs
    /// them; `None` when the producer cannot be replayed there.
    pub fn of_producer(op: ReduceOp, dtype: DType, producer: &Launch) -> Result<Option<Self>> {
        match Producer::of(producer) {
            Some(replay) => Self::build(op, dtype, Some(&replay)).map(Some),
            None => Ok(None),
        }
    }

    /// The indices (i64) of the first extreme of `op` along the lines
    /// `lines` of `input` (dense, of `dtype`), on a device: `zeros(dtype,
    /// len)` makes a buffer there (each element is written before it is
    /// read), `run` runs one launch and returns the arrays it writes.
    pub fn reduce<B: Clone>(
        (op, dtype): (ReduceOp, DType),
        lines: Lines,
        input: B,
        env: EvalEnv<'_>,
        zeros: impl Fn(DType, usize) -> Result<B>,
        mut run: impl FnMut(&crate::KernelLaunch, &[(B, DType)]) -> Result<Vec<B>>,
    ) -> Result<B> {
        let kernels = Self::build(op, dtype, None)?;
        let len = [lines.outer * lines.inner * lines.n];
        let source = Source {
            arrays: vec![(input, dtype)],
            args: vec![ArgValue::Array { dtype, shape: &len }],
        };
        kernels.run_from(lines, source, zeros, |launch, arrays| {
            env.stats.add(Counter::KernelLaunches, 1);
            run(launch, arrays)
        })
    }

    /// As [`ArgKernels::reduce`] over the values of `producer` (an
    /// element-wise launch over the reduced elements; `inputs` its input
    /// buffers, `None` for generated ones), computed inside the first
    /// kernel. `Ok(None)`, having run nothing, when the producer cannot be
    /// replayed there.
    pub fn reduce_fused(
        (op, dtype): (ReduceOp, DType),
        lines: Lines,
        producer: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
        zeros: impl Fn(DType, usize) -> Result<Arc<dyn DeviceBuffer>>,
        run: DeviceRun<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        let Some((replay, lens)) = replayable(producer, dtype, inputs) else {
            return Ok(None);
        };
        let kernels = Self::build(op, dtype, Some(&replay))?;
        let source = Source::of_producer(&replay, producer, inputs, &lens);
        kernels
            .run_from(lines, source, zeros, |launch, arrays| {
                env.stats.add(Counter::KernelLaunches, 1);
                run(launch, arrays)
            })
            .map(Some)
    }

    /// Runs both kernels over `source`: the arrays and argument values of
    /// the parameters the first declared for the values it reduces.
    fn run_from<B: Clone>(
        &self,
        lines: Lines,
        source: Source<'_, B>,
        zeros: impl Fn(DType, usize) -> Result<B>,
        mut run: impl FnMut(&crate::KernelLaunch, &[(B, DType)]) -> Result<Vec<B>>,
    ) -> Result<B> {
        let dtype = self.dtype;
        let count = lines.outer * lines.inner;
        if count == 0 || lines.n == 0 {
            return zeros(DType::I64, count);
        }
        let chunk_len = chunk_length(lines.n);
        let chunks = lines.n.div_ceil(chunk_len);
        let int = |v: usize| ArgValue::Scalar(Scalar::Int(v as i128));
        let table = [count * chunks];
        let (values, indices) = (
            ArgValue::Array {
                dtype,
                shape: &table,
            },
            ArgValue::Array {
                dtype: DType::I64,
                shape: &table,
            },
        );
        let mut args = source.args;
        args.extend([values.clone(), indices.clone(), int(chunk_len)]);
        args.extend([
            int(lines.n),
            int(lines.inner),
            int(chunks),
            int(count * chunks),
        ]);
        let (grid, block) = geometry("arg-reduction", count * chunks)?;
        let launch = self.partials.prepare_launch(grid, block, &args)?;
        let mut arrays = source.arrays;
        arrays.extend([
            (zeros(dtype, count * chunks)?, dtype),
            (zeros(DType::I64, count * chunks)?, DType::I64),
        ]);
        let mut bests = run(&launch, &arrays)?.into_iter();
        let (Some(best_values), Some(best_indices)) = (bests.next(), bests.next()) else {
            return Err(Error::internal(
                "arg-reduction",
                "the partials kernel wrote nothing",
            ));
        };

        let out = [count];
        let out_array = ArgValue::Array {
            dtype: DType::I64,
            shape: &out,
        };
        let (grid, block) = geometry("arg-reduction", count)?;
        let launch = self.merge.prepare_launch(
            grid,
            block,
            &[values, indices, out_array, int(chunks), int(count)],
        )?;
        let arrays = [
            (best_values, dtype),
            (best_indices, DType::I64),
            (zeros(DType::I64, count)?, DType::I64),
        ];
        run(&launch, &arrays)?
            .pop()
            .ok_or_else(|| Error::internal("arg-reduction", "the merge kernel wrote nothing"))
    }
}

/// Whether `v` replaces `best` as a later candidate: strictly more
/// extreme, or a NaN where `best` is a number.
fn better(extreme: ArgExtreme, v: &Val, best: &Val) -> Val {
    let beyond = match extreme {
        ArgExtreme::Min => v.lt(best),
        ArgExtreme::Max => v.gt(best),
    };
    if v.dtype().is_float() {
        beyond.or(v.isnan().and(best.isnan().not()))
    } else {
        beyond
    }
}

/// Elements per chunk of a line of `n`: about `sqrt(n)`, so that the
/// chunks' threads and the merge's walk along a line are balanced.
fn chunk_length(n: usize) -> usize {
    let mut root = (n as f64).sqrt().ceil() as usize;
    while root.saturating_mul(root) < n {
        root += 1;
    }
    root.clamp(64, 1 << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_about_the_square_root_and_cover_the_line() {
        for n in [1usize, 63, 64, 65, 4096, 4097, 10_000_000, 1 << 40] {
            let len = chunk_length(n);
            assert!((64..=1 << 16).contains(&len), "{n}: {len}");
            assert!(len.saturating_mul(len) >= n || len == 1 << 16, "{n}: {len}");
            assert!(n.div_ceil(len) * len >= n);
        }
    }
}
