//! Arg-reductions (`argmax`, `argmin`) on the CPU: one pass, in parallel
//! over chunks of each line along the last axis, each chunk's best found
//! in two vectorised sweeps of its values (the extreme, then its first
//! position), the chunks' bests merged left to right per line. The values
//! come from a buffer or from the element-wise producer, computed chunk by
//! chunk inside the pass (`crate::scan::Input`), so `argmax(abs(a - b))`
//! reads `a` and `b` once and writes nothing but the indices. The result is
//! `lazyfuse_core::reference::arg_reduce`'s: the first extreme, a NaN
//! counting as the extreme. Other axes and dtypes take the reference path.

use lazyfuse_core::reference::{self, ArgBest, Lines};
use lazyfuse_core::{ArgExtreme, Element, Error, HostBuffer, Result, SliceMut};
use lazyfuse_fusion::ScanLaunch;

use super::interp::Space;
use super::run;
use super::scan::{blocks, line_tasks, Input, Source, Worker};
use super::tasks::for_each_task;

/// The extreme `arg` finds (its launch names it by its reduction).
fn extreme_of(arg: &ScanLaunch) -> Result<ArgExtreme> {
    ArgExtreme::of(arg.op).ok_or_else(|| {
        Error::internal(
            "cpu argmax",
            format!("an arg-reduction by {}", arg.op.name()),
        )
    })
}

/// The indices of `arg` (an arg-reduction) of `input`, as i64.
pub fn arg_reduce(
    arg: &ScanLaunch,
    input: &Input<'_>,
    pool: Option<&rayon::ThreadPool>,
) -> Result<HostBuffer> {
    let lines = Lines::of(&arg.shape, arg.axis);
    let mut out = vec![0i64; lines.outer * lines.inner];
    if fast_path(arg, input, pool, &mut out)? {
        return Ok(HostBuffer::I64(out));
    }
    let values = match input {
        Input::Values(values) => {
            return reference::arg_reduce(extreme_of(arg)?, values, &arg.shape, arg.axis)
        }
        Input::Producer(p) => {
            run::elementwise(p.machine, p.launch, p.inputs, pool, p.settings, Vec::new())?
                .into_iter()
                .next()
                .flatten()
                .ok_or_else(|| Error::internal("cpu argmax", "the producer wrote no output"))?
        }
    };
    reference::arg_reduce(extreme_of(arg)?, &values, &arg.shape, arg.axis)
}

/// The indices of `arg` of `input` written into `out`; `out` back,
/// untouched, when the reduction does not take the fast path.
pub fn arg_reduce_into<'o>(
    arg: &ScanLaunch,
    input: &Input<'_>,
    pool: Option<&rayon::ThreadPool>,
    out: SliceMut<'o>,
) -> Result<Option<SliceMut<'o>>> {
    match out {
        SliceMut::I64(slice) => {
            if fast_path(arg, input, pool, &mut *slice)? {
                Ok(None)
            } else {
                Ok(Some(SliceMut::I64(slice)))
            }
        }
        other => Ok(Some(other)),
    }
}

/// Runs `arg` into `out` along the last axis for the primitive dtypes;
/// false, having run nothing, otherwise.
fn fast_path(
    arg: &ScanLaunch,
    input: &Input<'_>,
    pool: Option<&rayon::ThreadPool>,
    out: &mut [i64],
) -> Result<bool> {
    let lines = Lines::of(&arg.shape, arg.axis);
    if lines.inner != 1 || lines.n == 0 || out.len() != lines.outer {
        return Ok(false);
    }
    macro_rules! typed {
        ($T:ty) => {{
            let source = match input {
                Input::Values(values) => match <$T>::slice_of(values) {
                    Some(values) => Source::Values(values),
                    None => return Ok(false),
                },
                Input::Producer(p) => Source::Producer(p),
            };
            last_axis::<$T>(extreme_of(arg)?, lines.n, pool, &source, out)?;
            Ok(true)
        }};
    }
    match arg.dtype {
        lazyfuse_core::DType::F32 => typed!(f32),
        lazyfuse_core::DType::F64 => typed!(f64),
        lazyfuse_core::DType::I32 => typed!(i32),
        lazyfuse_core::DType::I64 => typed!(i64),
        lazyfuse_core::DType::U32 => typed!(u32),
        lazyfuse_core::DType::U64 => typed!(u64),
        lazyfuse_core::DType::I8 => typed!(i8),
        lazyfuse_core::DType::U8 => typed!(u8),
        lazyfuse_core::DType::I16 => typed!(i16),
        lazyfuse_core::DType::U16 => typed!(u16),
        _ => Ok(false),
    }
}

/// Lines of `n` contiguous values of `source`: every chunk's best in
/// parallel, then each line's chunks merged in order.
fn last_axis<T>(
    extreme: ArgExtreme,
    n: usize,
    pool: Option<&rayon::ThreadPool>,
    source: &Source<'_, T>,
    out: &mut [i64],
) -> Result<()>
where
    T: Element + PartialOrd + Send + Sync,
{
    let total = out.len() * n;
    if total == 0 {
        return Ok(());
    }
    let (bounds, tasks) = line_tasks(total, n);
    let space = match source {
        Source::Producer(p) => Some(Space::natural(p.launch)),
        Source::Values(_) => None,
    };
    let first = match source {
        Source::Values(v) => v[0],
        Source::Producer(_) => T::from_wide(lazyfuse_core::Wide::Int(0)),
    };
    let mut bests = vec![
        ArgBest {
            value: first,
            index: 0
        };
        bounds.len()
    ];
    let mut work: Vec<(usize, &mut [ArgBest<T>])> = Vec::with_capacity(tasks.len());
    let mut rest = bests.as_mut_slice();
    for (t, task) in tasks.iter().enumerate() {
        let (mine, others) = rest.split_at_mut(task.chunks);
        work.push((t, mine));
        rest = others;
    }
    for_each_task(
        pool,
        total,
        work,
        || Ok(Worker::new()),
        |worker, _, (t, slots)| {
            let task = tasks[t];
            for (slot, &(start, end)) in slots.iter_mut().zip(&bounds[task.first..]) {
                let mut best: Option<ArgBest<T>> = None;
                for block in blocks(start, end) {
                    let values = worker.values(source, space.as_ref(), block)?;
                    let offset = (block.start % n) as i64;
                    let found = chunk_best(extreme, values, offset);
                    best = Some(match best {
                        Some(b) => b.merge(extreme, found),
                        None => found,
                    });
                }
                *slot = best.ok_or_else(|| Error::internal("cpu argmax", "an empty chunk"))?;
            }
            Ok(())
        },
    )?;
    let per_line = n.div_ceil(lazyfuse_core::reference::SCAN_CHUNK);
    for (index, line) in out.iter_mut().zip(bests.chunks(per_line)) {
        let merged = line[1..]
            .iter()
            .fold(line[0], |best, &later| best.merge(extreme, later));
        *index = merged.index;
    }
    Ok(())
}

/// The best of `values` (not empty; the first at index `offset` of its
/// line): the extreme in one sweep of independent lanes, which the
/// compiler vectorises, then the first position holding it.
#[allow(clippy::eq_op)]
fn chunk_best<T: PartialOrd + Copy>(extreme: ArgExtreme, values: &[T], offset: i64) -> ArgBest<T> {
    const LANES: usize = 16;
    // `v != v` is a NaN test; a NaN, once taken, stays.
    let better = |acc: T, v: T| {
        let wins = extreme.beats(v, acc);
        if (wins || v != v) && acc == acc {
            v
        } else {
            acc
        }
    };
    let mut lanes = [values[0]; LANES];
    let mut groups = values.chunks_exact(LANES);
    for group in &mut groups {
        for (lane, &v) in lanes.iter_mut().zip(group) {
            *lane = better(*lane, v);
        }
    }
    let mut top = lanes.iter().fold(values[0], |acc, &v| better(acc, v));
    top = groups
        .remainder()
        .iter()
        .fold(top, |acc, &v| better(acc, v));
    let is_nan = top != top;
    let position = values
        .iter()
        .position(|&v| if is_nan { v != v } else { v == top })
        .unwrap_or(0);
    ArgBest {
        value: values[position],
        index: offset + position as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunks_best_is_the_references() {
        let nan = f32::NAN;
        let cases: [&[f32]; 5] = [
            &[1.0, 3.0, 3.0, -2.0],
            &[1.0, nan, 5.0, nan],
            &[-0.0, 0.0, -0.0],
            &[2.0; 40],
            &[
                0.5, 1.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0,
                7.0, 8.0, nan,
            ],
        ];
        for values in cases {
            for extreme in [ArgExtreme::Max, ArgExtreme::Min] {
                let got = chunk_best(extreme, values, 10).index - 10;
                let want = reference::arg_reduce(
                    extreme,
                    &HostBuffer::F32(values.to_vec()),
                    &[values.len()],
                    0,
                )
                .unwrap();
                assert_eq!(HostBuffer::I64(vec![got]), want, "{extreme:?} {values:?}");
            }
        }
    }
}
