//! Fast execution of launches: the register machine over chunks, in
//! parallel over fixed-size tasks.
//!
//! Tasks have fixed boundaries (independent of the thread count), and
//! reductions combine task results in a fixed order, so results do not
//! depend on the number of threads. Below `PARALLEL_MIN` elements a launch
//! runs on the calling thread: small arrays pay no thread hand-off.

use lazyfuse_core::element::try_vec;
use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{
    with_slice_mut, BinaryOp, DType, Element, Error, HostBuffer, ReduceOp, Result, SliceMut,
};
use lazyfuse_fusion::{CombineIr, Inst, Launch, ValueId};
use rayon::prelude::*;

use super::interp::{self, Space};
use super::loops::Arg;
use super::machine::{store, Ctx, Machine, View, CHUNK};

/// Elements per parallel task (a multiple of `CHUNK`): 64 Ki elements.
pub const TASK: usize = 8 * CHUNK;
/// Launches smaller than this run on the calling thread.
pub const PARALLEL_MIN: usize = 4 * TASK;

fn internal(message: &str) -> Error {
    Error::internal("cpu backend", message)
}

fn allocate(dtype: DType, len: usize) -> Result<HostBuffer> {
    HostBuffer::try_zeros(dtype, len)
}

/// Runs `work` for each task, in parallel when large enough.
fn for_each_task<W: Send>(
    pool: Option<&rayon::ThreadPool>,
    total: usize,
    work: Vec<W>,
    run: impl Fn(usize, W) -> Result<()> + Sync,
) -> Result<()> {
    match pool {
        Some(pool) if total >= PARALLEL_MIN && work.len() > 1 => pool.install(|| {
            work.into_par_iter()
                .enumerate()
                .try_for_each(|(i, w)| run(i, w))
        }),
        _ => work
            .into_iter()
            .enumerate()
            .try_for_each(|(i, w)| run(i, w)),
    }
}

/// Produces the view of a `Load` or `Iota` of one chunk.
struct Leaves<'a> {
    space: &'a Space,
    inputs: &'a [Option<&'a HostBuffer>],
}

impl Leaves<'_> {
    fn view(
        &self,
        inst: &Inst,
        reg: Option<usize>,
        regs: &mut [HostBuffer],
        bases: &[isize],
        offset: usize,
        len: usize,
    ) -> Result<View> {
        match inst {
            Inst::Load(k) => {
                let k = *k as usize;
                let buffer = self
                    .inputs
                    .get(k)
                    .copied()
                    .flatten()
                    .ok_or_else(|| internal("missing input"))?;
                let stride = self.space.inner_stride(k);
                let base = self.space.at(bases, k, offset);
                if buffer.len() == 1 {
                    return Ok(View::InputScalar(k, 0));
                }
                if !interp::in_bounds(base, stride, len, buffer.len()) {
                    return Err(internal("a read outside an input"));
                }
                match stride {
                    0 => Ok(View::InputScalar(k, base as usize)),
                    1 => Ok(View::Input(k, base as usize)),
                    _ => {
                        let r = reg.ok_or_else(|| internal("a strided load without a register"))?;
                        gather(buffer, &mut regs[r], base, stride, len)?;
                        Ok(View::Reg(r))
                    }
                }
            }
            Inst::Iota(k) => {
                let k = *k as usize;
                let stride = self.space.inner_stride(k) as i64;
                let base = self.space.at(bases, k, offset) as i64;
                let r = reg.ok_or_else(|| internal("an iota without a register"))?;
                let out =
                    i64::slice_of_mut(&mut regs[r]).ok_or_else(|| internal("iota register"))?;
                for (i, o) in out[..len].iter_mut().enumerate() {
                    *o = base + i as i64 * stride;
                }
                Ok(View::Reg(r))
            }
            _ => Err(internal("a parameter in a kernel body")),
        }
    }
}

/// Walks a launch's domain chunk by chunk: the iteration space, the current
/// line's base offsets and one worker's registers.
struct Walker<'a> {
    machine: &'a Machine,
    launch: &'a Launch,
    inputs: &'a [Option<&'a HostBuffer>],
    space: &'a Space,
    line: usize,
    bases: Vec<isize>,
    regs: Vec<HostBuffer>,
    views: Vec<View>,
}

impl<'a> Walker<'a> {
    fn new(
        machine: &'a Machine,
        launch: &'a Launch,
        inputs: &'a [Option<&'a HostBuffer>],
        space: &'a Space,
        longest: usize,
    ) -> Self {
        Walker {
            machine,
            launch,
            inputs,
            space,
            line: usize::MAX,
            bases: Vec::new(),
            regs: machine.registers(longest),
            views: Vec::new(),
        }
    }

    /// Length of the chunk at `position`: at most `CHUNK`, within its line, at most `limit`.
    fn chunk_len(&self, position: usize, limit: usize) -> usize {
        let line_len = self.space.line_len();
        CHUNK.min(line_len - position % line_len).min(limit)
    }

    /// Runs the body over `len` elements from linear `position` (in the
    /// space's order); the last value goes into `direct` when given.
    fn run(
        &mut self,
        position: usize,
        len: usize,
        direct: Option<SliceMut<'_>>,
    ) -> Result<Ctx<'_>> {
        let line_len = self.space.line_len();
        if position / line_len != self.line {
            self.line = position / line_len;
            self.bases = self.space.bases(self.line);
        }
        let offset = position % line_len;
        let leaves = Leaves {
            space: self.space,
            inputs: self.inputs,
        };
        let bases = &self.bases;
        self.machine.run(
            len,
            self.inputs,
            &self.launch.args,
            &mut self.regs,
            &mut self.views,
            direct,
            |inst, reg, regs| leaves.view(inst, reg, regs, bases, offset, len),
        )?;
        Ok(Ctx {
            inputs: self.inputs,
            args: &self.launch.args,
            regs: &self.regs,
            views: &self.views,
            len,
        })
    }
}

/// Copies `len` elements `stride` apart from `base` (bounds checked by the caller).
fn gather(
    buffer: &HostBuffer,
    reg: &mut HostBuffer,
    base: isize,
    stride: isize,
    len: usize,
) -> Result<()> {
    lazyfuse_core::with_buffer!(buffer, src => {
        let dst = Element::slice_of_mut(reg).ok_or_else(|| internal("gather register dtype"))?;
        for (i, d) in dst[..len].iter_mut().enumerate() {
            *d = src[(base + i as isize * stride) as usize];
        }
        Ok(())
    })
}

/// Runs an element-wise launch. Output `i` is written into `external` when
/// it is `Some((i, slice))` (the caller's buffer), else into a new buffer;
/// the new buffers are returned (`None` for the external one).
pub fn elementwise(
    machine: &Machine,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
    external: Option<(usize, SliceMut<'_>)>,
) -> Result<Vec<Option<HostBuffer>>> {
    let kernel = &launch.kernel;
    let n = launch.domain_len();
    let (external_index, mut external_slice) = match external {
        Some((i, s)) if s.len() == n && s.dtype() == kernel.output_dtype(i) => (Some(i), Some(s)),
        Some(_) => return Err(internal("an output slice of the wrong dtype or length")),
        None => (None, None),
    };
    let mut outputs: Vec<Option<HostBuffer>> = (0..kernel.outputs.len())
        .map(|i| {
            (Some(i) != external_index)
                .then(|| allocate(kernel.output_dtype(i), n))
                .transpose()
        })
        .collect::<Result<_>>()?;
    if n == 0 {
        return Ok(outputs);
    }
    let space = Space::natural(launch);
    // tasks[t][o]: output o's slice for task t.
    let mut per_output: Vec<std::vec::IntoIter<SliceMut<'_>>> = outputs
        .iter_mut()
        .map(|b| match b {
            Some(buffer) => buffer.as_slice_mut().chunks(TASK).into_iter(),
            None => external_slice
                .take()
                .map(|s| s.chunks(TASK))
                .unwrap_or_default()
                .into_iter(),
        })
        .collect();
    let tasks: Vec<Vec<SliceMut<'_>>> = (0..n.div_ceil(TASK))
        .map(|_| per_output.iter_mut().filter_map(Iterator::next).collect())
        .collect();
    for_each_task(pool, n, tasks, |t, mut slices| {
        let start = t * TASK;
        let end = (start + TASK).min(n);
        let mut walker = Walker::new(machine, launch, inputs, &space, end - start);
        let mut position = start;
        while position < end {
            let len = walker.chunk_len(position, end - position);
            let at = position - start;
            let direct = machine.direct().and_then(|d| {
                let o = kernel.outputs.iter().position(|v| *v == d)?;
                let slice = slices.get_mut(o)?;
                Some(with_slice_mut!(slice, s => Element::wrap_mut(&mut s[at..at + len])))
            });
            let ctx = walker.run(position, len, direct)?;
            for (slice, value) in slices.iter_mut().zip(&kernel.outputs) {
                if Some(*value) == machine.direct() {
                    continue;
                }
                with_slice_mut!(slice, s => store(&ctx, ctx.views[value.index()], &mut s[at..at + len])?);
            }
            position += len;
        }
        Ok(())
    })?;
    Ok(outputs)
}

/// NumPy's pairwise reduction: 8 interleaved accumulators below 64
/// elements, halving above.
fn pairwise<T: Copy>(x: &[T], f: &impl Fn(T, T) -> T) -> Option<T> {
    if x.len() <= 64 {
        if x.len() < 8 {
            return x.iter().copied().reduce(f);
        }
        let mut acc = [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]];
        let mut rest = x[8..].chunks_exact(8);
        for block in &mut rest {
            for j in 0..8 {
                acc[j] = f(acc[j], block[j]);
            }
        }
        for (j, &v) in rest.remainder().iter().enumerate() {
            acc[j] = f(acc[j], v);
        }
        let a = f(f(acc[0], acc[1]), f(acc[2], acc[3]));
        let b = f(f(acc[4], acc[5]), f(acc[6], acc[7]));
        return Some(f(a, b));
    }
    let half = (x.len() / 2).div_ceil(8) * 8;
    let (lo, hi) = x.split_at(half);
    Some(f(pairwise(lo, f)?, pairwise(hi, f)?))
}

/// How one chunk of a built-in reduction is reduced: pairwise in general;
/// float min/max track NaN in a separate lane mask so the compare loop
/// vectorises (the result is NaN if any element is, as NumPy).
pub trait ChunkReduce: Copy {
    /// Reduces `x` (non-empty) with `op`, whose element-wise form is `combine`.
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
            fn reduce_chunk(op: ReduceOp, x: &[Self], combine: &impl Fn(Self, Self) -> Self) -> Option<Self> {
                let is_max = match op {
                    ReduceOp::Max => true,
                    ReduceOp::Min => false,
                    _ => return pairwise(x, combine),
                };
                if x.len() < 8 {
                    return x.iter().copied().reduce(combine);
                }
                let mut acc = [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]];
                let mut nan = [0u32; 8];
                let mut blocks = x.chunks_exact(8);
                for block in &mut blocks {
                    for j in 0..8 {
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

/// A binary counter of partial results combined pairwise.
struct Cascade<T> {
    levels: Vec<(u32, T)>,
}

impl<T: Clone> Cascade<T> {
    fn new() -> Self {
        Cascade { levels: Vec::new() }
    }

    fn push(&mut self, value: T, f: &impl Fn(&T, &T) -> T) {
        let mut value = (0u32, value);
        while let Some((level, top)) = self.levels.last() {
            if *level != value.0 {
                break;
            }
            value = (level + 1, f(top, &value.1));
            self.levels.pop();
        }
        self.levels.push(value);
    }

    fn finish(mut self, f: &impl Fn(&T, &T) -> T) -> Option<T> {
        let mut result: Option<T> = None;
        while let Some((_, top)) = self.levels.pop() {
            result = Some(match result {
                None => top,
                Some(r) => f(&top, &r),
            });
        }
        result
    }
}

/// Runs a reduction launch on the fast path, or `None` when its shape needs
/// the generic executor (user combine functions, bool, reduced axes that
/// are neither the leading nor the trailing ones).
pub fn reduction(
    machine: &Machine,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
) -> Result<Option<HostBuffer>> {
    let Some(red) = &launch.kernel.reduction else {
        return Err(internal("not a reduction"));
    };
    let CombineIr::Builtin(op) = red.combine else {
        return Ok(None);
    };
    let rank = launch.domain.len();
    let axes = red.axes.as_slice();
    let trailing = axes
        .iter()
        .enumerate()
        .all(|(i, &a)| a == rank - axes.len() + i);
    let leading = axes.iter().enumerate().all(|(i, &a)| a == i);
    let kept_len: usize = (0..rank)
        .filter(|a| !axes.contains(a))
        .map(|a| launch.domain[a])
        .product();
    let reduced_len: usize = axes.iter().map(|&a| launch.domain[a]).product();
    if kept_len == 0 || reduced_len == 0 || !(trailing || leading) {
        return Ok(None);
    }
    let identity = *launch
        .args
        .get(red.identity_arg as usize)
        .ok_or_else(|| internal("no identity"))?;
    macro_rules! typed {
        ($($d:ident => $t:ty),*) => {
            match red.acc {
                $(DType::$d => {
                    let combine = move |a: $t, b: $t| <$t as Arithmetic>::binary(op.combiner(), a, b);
                    let id = <$t>::from_wide(identity.to_wide());
                    let acc = if trailing {
                        reduce_trailing::<$t>(machine, launch, inputs, pool, kept_len, reduced_len, id, red.value, op, combine)?
                    } else {
                        reduce_leading::<$t>(machine, launch, inputs, pool, kept_len, reduced_len, id, red.value, combine)?
                    };
                    Some(interp::epilogue(launch, <$t>::into_buffer(acc))?)
                })*
                _ => None,
            }
        };
    }
    let _ = BinaryOp::Add;
    Ok(
        typed!(F32 => f32, F64 => f64, I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64),
    )
}

/// The chunk values of the reduced value, as a slice (broadcast values expanded).
fn chunk_values<'a, T: Element>(
    ctx: &Ctx<'a>,
    view: View,
    scratch: &'a mut Vec<T>,
) -> Result<&'a [T]> {
    match ctx.arg::<T>(view)? {
        Arg::Slice(s) => Ok(s),
        Arg::Scalar(x) => {
            scratch.clear();
            scratch.resize(ctx.len, x);
            Ok(scratch.as_slice())
        }
    }
}

/// Reduced axes last: each kept index reduces a run of `reduced_len`
/// consecutive positions, split into fixed blocks of `TASK`.
#[allow(clippy::too_many_arguments)]
fn reduce_trailing<T: Element + Arithmetic + ChunkReduce>(
    machine: &Machine,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
    kept_len: usize,
    reduced_len: usize,
    identity: T,
    value: ValueId,
    op: ReduceOp,
    combine: impl Fn(T, T) -> T + Sync + Copy,
) -> Result<Vec<T>> {
    let space = Space::natural(launch);
    let blocks = reduced_len.div_ceil(TASK);
    let mut partials: Vec<T> = try_vec(identity, kept_len * blocks)?;
    let slots: Vec<&mut T> = partials.iter_mut().collect();
    for_each_task(pool, kept_len * reduced_len, slots, |task, slot| {
        let (k, b) = (task / blocks, task % blocks);
        let start = k * reduced_len + b * TASK;
        let end = (start + TASK).min((k + 1) * reduced_len);
        let mut walker = Walker::new(machine, launch, inputs, &space, CHUNK);
        let mut scratch = Vec::new();
        let mut cascade = Cascade::new();
        let mut position = start;
        while position < end {
            let len = walker.chunk_len(position, end - position);
            let ctx = walker.run(position, len, None)?;
            let values = chunk_values::<T>(&ctx, ctx.views[value.index()], &mut scratch)?;
            if let Some(p) = T::reduce_chunk(op, values, &combine) {
                cascade.push(p, &|a: &T, b: &T| combine(*a, *b));
            }
            position += len;
        }
        *slot = cascade
            .finish(&|a: &T, b: &T| combine(*a, *b))
            .unwrap_or(identity);
        Ok(())
    })?;
    Ok(partials
        .chunks(blocks)
        .map(|p| {
            let mut cascade = Cascade::new();
            for &v in p {
                cascade.push(v, &|a: &T, b: &T| combine(*a, *b));
            }
            cascade
                .finish(&|a: &T, b: &T| combine(*a, *b))
                .unwrap_or(identity)
        })
        .collect())
}

/// Reduced axes first: for a chunk of kept positions, rows of the reduced
/// extent are combined element-wise, pairwise over rows.
#[allow(clippy::too_many_arguments)]
fn reduce_leading<T: Element + Arithmetic>(
    machine: &Machine,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
    kept_len: usize,
    reduced_len: usize,
    identity: T,
    value: ValueId,
    combine: impl Fn(T, T) -> T + Sync + Copy,
) -> Result<Vec<T>> {
    let space = Space::natural(launch);
    let mut acc: Vec<T> = try_vec(identity, kept_len)?;
    let slices: Vec<&mut [T]> = acc.chunks_mut(CHUNK).collect();
    let rows = |a: &Vec<T>, b: &Vec<T>| -> Vec<T> {
        a.iter().zip(b).map(|(&x, &y)| combine(x, y)).collect()
    };
    for_each_task(pool, kept_len * reduced_len, slices, |task, out| {
        let k0 = task * CHUNK;
        let mut walker = Walker::new(machine, launch, inputs, &space, CHUNK);
        let mut scratch = Vec::new();
        let mut cascade: Cascade<Vec<T>> = Cascade::new();
        for r in 0..reduced_len {
            let mut row: Vec<T> = Vec::with_capacity(out.len());
            let mut k = k0;
            while k < k0 + out.len() {
                let position = r * kept_len + k;
                let len = walker.chunk_len(position, k0 + out.len() - k);
                let ctx = walker.run(position, len, None)?;
                row.extend_from_slice(chunk_values::<T>(
                    &ctx,
                    ctx.views[value.index()],
                    &mut scratch,
                )?);
                k += len;
            }
            cascade.push(row, &rows);
        }
        if let Some(total) = cascade.finish(&rows) {
            out.copy_from_slice(&total);
        }
        Ok(())
    })?;
    Ok(acc)
}
