//! Scans (`cumsum`, `cumprod`, `cummax`, `cummin`) on the CPU in the order of
//! `lazyfuse_core::reference::scan`, two passes over chunks in parallel
//! when the scanned axis is the last one (each line contiguous): the chunk
//! totals, then (per line, in order) the carries, then every chunk's
//! running values from its carry. The chunks are fixed, so the result is the
//! same bits for any thread count, and the same as on every backend. Scans
//! along other axes run the reference order on one thread.
//!
//! The scanned values come from a buffer, or from the scan's element-wise
//! producer computed chunk by chunk in both passes ([`Input::Producer`]): the
//! producer is then never materialised, and the second pass writes its
//! values straight into the output before scanning them in place.

use lazyfuse_core::reference::{self, Lines, SCAN_CHUNK};
use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{DType, Element, Error, HostBuffer, ReduceOp, Result, SliceMut, Wide};
use lazyfuse_fusion::{Launch, ScanLaunch};
use std::ops::{Add, Mul};

use super::interp::Space;
use super::machine::Machine;
use super::run::{self, Walker};
use super::settings::CpuSettings;
use super::tasks::for_each_task;
use crate::reduce_table::{cpu_reduce, CpuReduce};

/// Elements computed, then combined, at a time (see [`blocks`]).
const BLOCK: usize = 1024;

/// Scan chunks per parallel task.
const CHUNKS_PER_TASK: usize = 64;

/// Elements a scan pass computes at a time: whole chunks, about 64 KiB of
/// f32 (one producer call per piece, the piece still in cache when scanned).
const PIECE: usize = 4 * SCAN_CHUNK;

/// What a fused scan runs its producer with.
pub struct Producer<'a> {
    /// The producer's compiled body.
    pub machine: &'a Machine,
    /// The producer launch (one output: the scanned values).
    pub launch: &'a Launch,
    /// Its inputs.
    pub inputs: &'a [Option<&'a HostBuffer>],
    /// The backend's settings (compiled code or not).
    pub settings: &'a CpuSettings,
}

/// What a scan reads.
pub enum Input<'a> {
    /// A buffer of the values (in the scan's dtype).
    Values(&'a HostBuffer),
    /// The element-wise launch computing them.
    Producer(Producer<'a>),
}

/// The scan `scan` of `input`.
pub fn scan(
    scan: &ScanLaunch,
    input: &Input<'_>,
    pool: Option<&rayon::ThreadPool>,
) -> Result<HostBuffer> {
    macro_rules! fast {
        ($variant:ident, $T:ty) => {{
            let mut out = vec![<$T>::default(); input_len(input)];
            if last_axis::<$T>(scan, input, pool, &mut out)? {
                return Ok(HostBuffer::$variant(out));
            }
        }};
    }
    match scan.dtype {
        DType::I64 => fast!(I64, i64),
        DType::U64 => fast!(U64, u64),
        DType::F32 => fast!(F32, f32),
        DType::F64 => fast!(F64, f64),
        _ => {}
    }
    // Along another axis, on one thread, or in another dtype: the
    // reference order over the computed values.
    match input {
        Input::Values(values) => reference::scan(scan.op, values, &scan.shape, scan.axis),
        Input::Producer(p) => {
            let values =
                run::elementwise(p.machine, p.launch, p.inputs, pool, p.settings, Vec::new())?
                    .into_iter()
                    .next()
                    .flatten()
                    .ok_or_else(|| Error::internal("cpu scan", "the producer wrote no output"))?;
            reference::scan(scan.op, &values, &scan.shape, scan.axis)
        }
    }
}

/// The scan `scan` of `input` written into `out`; `out` back, untouched,
/// when the scan does not take the parallel path along the last axis.
pub fn scan_into<'o>(
    scan: &ScanLaunch,
    input: &Input<'_>,
    pool: Option<&rayon::ThreadPool>,
    out: SliceMut<'o>,
) -> Result<Option<SliceMut<'o>>> {
    if out.len() != input_len(input) {
        return Ok(Some(out));
    }
    macro_rules! fast {
        ($variant:ident, $T:ty, $slice:ident) => {{
            if last_axis::<$T>(scan, input, pool, &mut *$slice)? {
                return Ok(None);
            }
            SliceMut::$variant($slice)
        }};
    }
    Ok(Some(match out {
        SliceMut::I64(s) => fast!(I64, i64, s),
        SliceMut::U64(s) => fast!(U64, u64, s),
        SliceMut::F32(s) => fast!(F32, f32, s),
        SliceMut::F64(s) => fast!(F64, f64, s),
        other => other,
    }))
}

/// Elements `input` holds or computes.
fn input_len(input: &Input<'_>) -> usize {
    match input {
        Input::Values(values) => values.len(),
        Input::Producer(p) => p.launch.domain_len(),
    }
}

/// Runs `scan` of `input` into `out` in parallel passes when the scanned
/// axis is the last one, there are workers, and `input` is of type `T`;
/// false, having run nothing, otherwise.
fn last_axis<T: Accumulator>(
    scan: &ScanLaunch,
    input: &Input<'_>,
    pool: Option<&rayon::ThreadPool>,
    out: &mut [T],
) -> Result<bool> {
    let lines = Lines::of(&scan.shape, scan.axis);
    if lines.inner != 1 || pool.is_none() || T::DTYPE != scan.dtype {
        return Ok(false);
    }
    let source = match input {
        Input::Values(values) => match T::slice_of(values) {
            Some(values) => Source::Values(values),
            None => return Ok(false),
        },
        Input::Producer(p) if p.launch.kernel.output_dtype(0) == T::DTYPE => Source::Producer(p),
        Input::Producer(_) => return Ok(false),
    };
    by_op(scan.op, lines.n, pool, &source, out)?;
    Ok(true)
}

/// Lines of `n` contiguous values of `source`, scanned by `op` from its
/// identity (-0.0 for float sums, keeping a lone -0.0's sign; 0 for
/// integer sums; 1 for products). The combining closure is chosen here, so
/// the loops are monomorphised around it.
fn by_op<T: Accumulator>(
    op: ReduceOp,
    n: usize,
    pool: Option<&rayon::ThreadPool>,
    source: &Source<'_, T>,
    out: &mut [T],
) -> Result<()> {
    // -0.0 (0 for integers), 1, or -inf or +inf: a float's, or the
    // integer dtype's extreme.
    let identity = T::from_wide(Wide::Float(op.scan_start(T::DTYPE)));
    match cpu_reduce(op) {
        CpuReduce::Plus => scan_lines(T::add, identity, n, pool, source, out),
        CpuReduce::Times => scan_lines(T::mul, identity, n, pool, source, out),
        CpuReduce::Extreme { .. } => {
            let combine = op.combiner();
            scan_lines(
                move |a, b| T::binary(combine, a, b),
                identity,
                n,
                pool,
                source,
                out,
            )
        }
    }
}

/// The accumulator dtypes of a scan, with its two arithmetic combining
/// operations (core's semantics: integers wrap) as plain functions that
/// inline; the extremes are core's `Arithmetic::binary`.
trait Accumulator: Arithmetic + Default + Send + Sync {
    fn add(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
}

macro_rules! accumulator {
    ($($t:ty: $add:ident, $mul:ident;)*) => {$(
        impl Accumulator for $t {
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                a.$add(b)
            }
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t {
                a.$mul(b)
            }
        }
    )*};
}

accumulator! {
    i64: wrapping_add, wrapping_mul;
    u64: wrapping_add, wrapping_mul;
    f32: add, mul;
    f64: add, mul;
}

/// Where a scan's values come from.
pub(crate) enum Source<'a, T> {
    /// A buffer holding them.
    Values(&'a [T]),
    /// An element-wise launch computing them.
    Producer(&'a Producer<'a>),
}

/// A run of whole scan chunks, contiguous in memory: `chunks` of the
/// global chunk list from `first`, covering elements `start..end`.
#[derive(Clone, Copy)]
pub(crate) struct Task {
    pub(crate) first: usize,
    pub(crate) chunks: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The chunks of `total` elements in lines of `n` (each line cut every
/// [`SCAN_CHUNK`]), as (start, end) in order, and the parallel tasks: runs
/// of consecutive chunks of about `CHUNKS_PER_TASK * SCAN_CHUNK` elements.
pub(crate) fn line_tasks(total: usize, n: usize) -> (Vec<(usize, usize)>, Vec<Task>) {
    let bounds: Vec<(usize, usize)> = (0..total / n.max(1))
        .flat_map(|line| {
            (0..n.div_ceil(SCAN_CHUNK)).map(move |c| {
                let start = line * n + c * SCAN_CHUNK;
                (start, (start + SCAN_CHUNK).min((line + 1) * n))
            })
        })
        .collect();
    let mut tasks: Vec<Task> = Vec::new();
    for (k, &(start, end)) in bounds.iter().enumerate() {
        match tasks.last_mut() {
            Some(task) if task.end - task.start < CHUNKS_PER_TASK * SCAN_CHUNK => {
                task.chunks += 1;
                task.end = end;
            }
            _ => tasks.push(Task {
                first: k,
                chunks: 1,
                start,
                end,
            }),
        }
    }
    (bounds, tasks)
}

/// Lines of `n` contiguous values of `source`, scanned by `combine`.
fn scan_lines<T, C>(
    combine: C,
    identity: T,
    n: usize,
    pool: Option<&rayon::ThreadPool>,
    source: &Source<'_, T>,
    out: &mut [T],
) -> Result<()>
where
    T: Element + Send + Sync,
    C: Fn(T, T) -> T + Copy + Sync,
{
    let total = out.len();
    if n == 0 || total == 0 {
        return Ok(());
    }
    let (bounds, tasks) = line_tasks(total, n);
    let scan = ChunkedScan {
        combine,
        identity,
        pool,
        source,
        space: match source {
            Source::Producer(p) => Some(Space::natural(p.launch)),
            Source::Values(_) => None,
        },
        bounds,
        tasks,
        total,
    };
    let mut carries = scan.chunk_totals()?;
    // The carries, line by line, left to right.
    for line in carries.chunks_mut(n.div_ceil(SCAN_CHUNK)) {
        let mut running = identity;
        for slot in line.iter_mut() {
            let chunk_total = *slot;
            *slot = running;
            running = combine(running, chunk_total);
        }
    }
    scan.running_values(&carries, out)
}

/// A scan of lines cut into fixed chunks, as [`scan_lines`] runs it.
struct ChunkedScan<'s, 'v, T, C> {
    combine: C,
    identity: T,
    pool: Option<&'s rayon::ThreadPool>,
    source: &'s Source<'v, T>,
    /// The producer's iteration space, when the values come from one.
    space: Option<Space>,
    /// Every chunk's elements, `start..end`, line after line.
    bounds: Vec<(usize, usize)>,
    /// The parallel tasks, each a run of chunks.
    tasks: Vec<Task>,
    total: usize,
}

impl<T, C> ChunkedScan<'_, '_, T, C>
where
    T: Element + Send + Sync,
    C: Fn(T, T) -> T + Copy + Sync,
{
    /// Pass 1: every chunk's total, from the identity.
    fn chunk_totals(&self) -> Result<Vec<T>> {
        let (identity, combine) = (self.identity, self.combine);
        let mut totals = vec![identity; self.bounds.len()];
        let work = per_task(&self.tasks, &mut totals, |task| task.chunks);
        let worker = || Ok(Worker::new());
        for_each_task(
            self.pool,
            self.total,
            work,
            worker,
            |worker, _, (task, out)| {
                let chunks = &self.bounds[task.first..task.first + task.chunks];
                let mut totals = out.iter_mut();
                for run in pieces(chunks) {
                    let start = run[0].0;
                    let end = run.last().map_or(start, |&(_, end)| end);
                    let values =
                        worker.values(self.source, self.space.as_ref(), block_at(start, end))?;
                    let mut k = 0;
                    while k < run.len() {
                        let group = &run[k..(k + 4).min(run.len())];
                        let chunk = |j: usize| &values[group[j].0 - start..group[j].1 - start];
                        if group.len() == 4 && group.iter().all(|&(s, e)| e - s == SCAN_CHUNK) {
                            let sums = four_totals(
                                [chunk(0), chunk(1), chunk(2), chunk(3)],
                                identity,
                                combine,
                            );
                            // `sums` first: a zip asks its first side once more
                            // before it sees the second side end.
                            for (sum, slot) in sums.into_iter().zip(totals.by_ref()) {
                                *slot = sum;
                            }
                            k += 4;
                        } else {
                            if let Some(slot) = totals.next() {
                                *slot = chunk(0).iter().fold(identity, |acc, &x| combine(acc, x));
                            }
                            k += 1;
                        }
                    }
                }
                Ok(())
            },
        )?;
        Ok(totals)
    }

    /// Pass 2: every chunk's running values into `out`, from its carry.
    fn running_values(&self, carries: &[T], out: &mut [T]) -> Result<()> {
        let combine = self.combine;
        let targets = per_task(&self.tasks, out, |task| task.end - task.start);
        let worker = || Ok(Worker::new());
        for_each_task(
            self.pool,
            self.total,
            targets,
            worker,
            |worker, _, (task, target)| {
                // A piece of whole chunks computed at once (few producer calls),
                // then scanned one chunk at a time while it is in cache. (Chunks
                // scanned side by side, several running sums at once, measured
                // slower: their streams are 16 KiB apart, share cache sets, and
                // their stores and loads alias.)
                let chunks = &self.bounds[task.first..task.first + task.chunks];
                let mut carry = carries[task.first..].iter();
                for run in pieces(chunks) {
                    let start = run[0].0;
                    let end = run.last().map_or(start, |&(_, end)| end);
                    let values = &mut target[start - task.start..end - task.start];
                    match self.source {
                        Source::Values(v) => values.copy_from_slice(&v[start..end]),
                        Source::Producer(p) => {
                            worker.produce(p, self.space.as_ref(), block_at(start, end), values)?
                        }
                    }
                    for (&(s, e), &carry) in run.iter().zip(carry.by_ref()) {
                        let mut acc = carry;
                        for x in &mut values[s - start..e - start] {
                            acc = combine(acc, *x);
                            *x = acc;
                        }
                    }
                }
                Ok(())
            },
        )
    }
}

/// `slots` cut into consecutive parts, `len(task)` for each task in order.
fn per_task<'s, T>(
    tasks: &[Task],
    slots: &'s mut [T],
    len: impl Fn(&Task) -> usize,
) -> Vec<(Task, &'s mut [T])> {
    let mut parts = Vec::with_capacity(tasks.len());
    let mut rest = slots;
    for task in tasks {
        let (mine, others) = rest.split_at_mut(len(task));
        parts.push((*task, mine));
        rest = others;
    }
    parts
}

/// Elements `start..end` in blocks of [`BLOCK`]: a block's values are
/// computed, then combined, while the hardware prefetcher already fetches
/// the next block's inputs, so the producer's memory traffic overlaps the
/// combining's chain of dependent additions.
pub(crate) fn blocks(start: usize, end: usize) -> impl Iterator<Item = Task> {
    (start..end)
        .step_by(BLOCK)
        .map(move |at| block_at(at, (at + BLOCK).min(end)))
}

/// `chunks` (consecutive, contiguous) in runs of about [`PIECE`] elements.
fn pieces(chunks: &[(usize, usize)]) -> impl Iterator<Item = &[(usize, usize)]> {
    let mut rest = chunks;
    std::iter::from_fn(move || {
        let first = rest.first()?.0;
        let len = rest
            .iter()
            .position(|&(_, end)| end - first >= PIECE)
            .map_or(rest.len(), |k| k + 1);
        let (run, others) = rest.split_at(len);
        rest = others;
        Some(run)
    })
}

/// The totals of four chunks, each folded by `combine` from `identity`
/// left to right. The four are independent chains of dependent additions:
/// folded side by side, each addition's latency hides behind the others'.
fn four_totals<T: Copy, C: Fn(T, T) -> T>(chunks: [&[T]; 4], identity: T, combine: C) -> [T; 4] {
    let mut accs = [identity; 4];
    let [a, b, c, d] = chunks;
    for (((&x0, &x1), &x2), &x3) in a.iter().zip(b).zip(c).zip(d) {
        accs[0] = combine(accs[0], x0);
        accs[1] = combine(accs[1], x1);
        accs[2] = combine(accs[2], x2);
        accs[3] = combine(accs[3], x3);
    }
    accs
}

/// The block of elements `start..end`.
fn block_at(start: usize, end: usize) -> Task {
    Task {
        first: 0,
        chunks: 1,
        start,
        end,
    }
}

/// One worker's state: its walker over the producer (made at its first
/// task) and its scratch for the producer's values in the first pass.
pub(crate) struct Worker<'w, T> {
    walker: Option<Walker<'w>>,
    scratch: Vec<T>,
}

impl<'w, T: Element> Worker<'w, T> {
    /// A worker with no walker and no scratch yet.
    pub(crate) fn new() -> Self {
        Worker {
            walker: None,
            scratch: Vec::new(),
        }
    }

    /// The values of `task`: a slice of the buffer, or the producer's
    /// values computed into the scratch.
    pub(crate) fn values<'s>(
        &'s mut self,
        source: &'s Source<'w, T>,
        space: Option<&'w Space>,
        task: Task,
    ) -> Result<&'s [T]> {
        match source {
            Source::Values(v) => Ok(&v[task.start..task.end]),
            Source::Producer(p) => {
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.resize(task.end - task.start, T::from_wide(Wide::Int(0)));
                self.produce(p, space, task, &mut scratch)?;
                self.scratch = scratch;
                Ok(&self.scratch)
            }
        }
    }

    /// Runs the producer over the elements of `task` into `out`.
    pub(crate) fn produce(
        &mut self,
        producer: &'w Producer<'w>,
        space: Option<&'w Space>,
        task: Task,
        out: &mut [T],
    ) -> Result<()> {
        let space =
            space.ok_or_else(|| Error::internal("cpu scan", "a producer without its space"))?;
        let walker = match &mut self.walker {
            Some(w) => w,
            None => {
                let machine = producer.machine;
                let jit = machine.jit_wanted(producer.launch.domain_len(), producer.settings.jit);
                self.walker.insert(Walker::new(
                    machine,
                    producer.launch,
                    producer.inputs,
                    space,
                    CHUNKS_PER_TASK * SCAN_CHUNK,
                    jit,
                    false,
                )?)
            }
        };
        let mut position = task.start;
        while position < task.end {
            let len = walker.chunk_len(position, task.end - position);
            let at = position - task.start;
            let piece = T::wrap_mut(&mut out[at..at + len]);
            walker.run(position, len, vec![piece], false, |_, _, _| Ok(()))?;
            position += len;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_every_chunk_once_in_order() {
        // Lines of 3 chunks and a bit: full and short chunks mixed.
        let (bounds, _) = line_tasks(5 * (3 * SCAN_CHUNK + 17), 3 * SCAN_CHUNK + 17);
        let runs: Vec<&[(usize, usize)]> = pieces(&bounds).collect();
        assert_eq!(runs.concat(), bounds);
        for run in &runs {
            let len = run.last().unwrap().1 - run[0].0;
            assert!(len <= PIECE + SCAN_CHUNK, "a piece of {len} elements");
        }
    }

    #[test]
    fn four_totals_fold_each_chunk_left_to_right() {
        let chunks: Vec<Vec<f32>> = (0..4)
            .map(|c| {
                (0..1000)
                    .map(|i| ((i * 31 + c) % 97) as f32 * 0.1)
                    .collect()
            })
            .collect();
        let sums = four_totals(
            [&chunks[0], &chunks[1], &chunks[2], &chunks[3]].map(|c| c.as_slice()),
            -0.0,
            |a, b| a + b,
        );
        for (chunk, sum) in chunks.iter().zip(sums) {
            let sequential = chunk.iter().fold(-0.0f32, |acc, &x| acc + x);
            assert_eq!(sum.to_bits(), sequential.to_bits());
        }
    }
}
