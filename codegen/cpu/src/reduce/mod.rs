//! Fast execution of built-in reductions: the register machine computes the
//! reduced value chunk by chunk, and the chunks are combined in a fixed
//! order, so results do not depend on the number of threads.
//!
//! Two layouts run here: reduced axes last (each output reduces a
//! contiguous run) and a block of reduced axes anywhere else (each output
//! column accumulates whole rows, per index of the axes before the block);
//! `min`/`max` of f16/bf16 run in f32. Reduced axes that are not adjacent,
//! user combine functions and bool go to the generic executor.

use lazyfuse_core::element::try_vec;
use lazyfuse_core::semantics::Arithmetic;
use std::marker::PhantomData;

use lazyfuse_core::half::{bf16, f16};
use lazyfuse_core::{DType, Element, Error, HostBuffer, Literal, ReduceOp, Result, Wide};

use super::settings::JitMode;
use crate::reduce_table::{cpu_reduce, CpuReduce};
use lazyfuse_fusion::{CombineIr, Launch, ValueId};

use super::frame::Frame;
use super::interp::{self, Space};
use super::loops::Arg;
use super::machine::{Done, Machine, BLOCK, CHUNK};
use super::pairwise::{reduce_chunk, Cascade, ChunkReduce, RowCascade};
use super::run::{Walker, TASK};
use super::tasks::for_each_task;
use super::widen::{self, Half};

mod rows;

use rows::combine_rows;
#[cfg(target_arch = "x86_64")]
use rows::combine_rows_avx2;

/// At most this many row blocks split the reduced rows of a leading-axes
/// reduction: enough tasks for every core when there are few output
/// columns, while the blocks' partial rows stay a small multiple of the output.
const MAX_ROW_BLOCKS: usize = 64;

fn internal(message: &str) -> Error {
    Error::internal("cpu backend", message)
}

/// Runs a reduction launch on the fast path, or `None` when its shape needs
/// the generic executor (user combine functions, bool, reduced axes that
/// are not adjacent).
pub fn reduction(
    machine: &Machine,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
    jit: JitMode,
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
    // Reduced axes in one block (`a0..a0 + len`): the leading layout, once
    // per index of the axes before them.
    let first = axes.first().copied().unwrap_or(0);
    let contiguous = axes.iter().enumerate().all(|(i, &a)| a == first + i);
    let outer: usize = launch.domain[..first.min(rank)].iter().product();
    let kept_len: usize = (0..rank)
        .filter(|a| !axes.contains(a))
        .map(|a| launch.domain[a])
        .product();
    let reduced_len: usize = axes.iter().map(|&a| launch.domain[a]).product();
    if kept_len == 0 || reduced_len == 0 || !(trailing || contiguous) {
        return Ok(None);
    }
    let identity = *launch
        .args
        .get(red.identity_arg as usize)
        .ok_or_else(|| internal("no identity"))?;
    let shape = Layout {
        machine,
        launch,
        inputs,
        pool,
        kept_len,
        reduced_len,
        outer,
        first_kept_inner: first + axes.len(),
        value: red.value,
        jit: machine.jit_wanted(kept_len * reduced_len, jit),
    };
    macro_rules! typed {
        ($($d:ident => $t:ty),*) => {
            match red.acc {
                $(DType::$d => {
                    let combine = move |a: $t, b: $t| <$t as Arithmetic>::binary(op.combiner(), a, b);
                    let id = <$t>::from_wide(identity.to_wide());
                    let acc = if trailing {
                        reduce_trailing::<$t, Same>(&shape, id, op, combine)?
                    } else {
                        reduce_leading::<$t, Same>(&shape, id, op, combine)?
                    };
                    Some(interp::epilogue(launch, <$t>::into_buffer(acc))?)
                })*
                DType::F16 if matches!(cpu_reduce(op), CpuReduce::Extreme { .. }) => {
                    Some(interp::epilogue(launch, in_f32::<f16>(&shape, identity, op, trailing)?)?)
                }
                DType::BF16 if matches!(cpu_reduce(op), CpuReduce::Extreme { .. }) => {
                    Some(interp::epilogue(launch, in_f32::<bf16>(&shape, identity, op, trailing)?)?)
                }
                _ => None,
            }
        };
    }
    Ok(
        typed!(F32 => f32, F64 => f64, I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64),
    )
}

/// `min`/`max` of half-precision values, computed in `f32` (exact: every
/// half value is an `f32`, and the result is one of them) and rounded back.
/// Of equal values (±0) the first is kept, as NumPy's half `minimum` does.
fn in_f32<H: Half + Element>(
    shape: &Layout<'_>,
    identity: Literal,
    op: ReduceOp,
    trailing: bool,
) -> Result<HostBuffer> {
    let CpuReduce::Extreme { max } = cpu_reduce(op) else {
        return Err(Error::internal(
            "cpu reduce",
            format!("{op} is no extreme: it does not run in f32"),
        ));
    };
    // Half semantics: of two equal values (±0) keep the first, as NumPy.
    let combine = move |a: f32, b: f32| {
        let first = a.is_nan() || if max { a >= b } else { a <= b };
        if first {
            a
        } else {
            b
        }
    };
    let id = f32::from_wide(identity.to_wide());
    let acc = if trailing {
        reduce_trailing::<f32, Widened<H>>(shape, id, op, combine)?
    } else {
        reduce_leading::<f32, Widened<H>>(shape, id, op, combine)?
    };
    let mut out: Vec<H> = try_vec(H::default(), acc.len())?;
    H::narrow(&acc, &mut out);
    Ok(H::into_buffer(out))
}

/// A reduction launch on the fast path: `kept_len` outputs, each reducing
/// `reduced_len` values of the body's `value`.
struct Layout<'a> {
    machine: &'a Machine,
    launch: &'a Launch,
    inputs: &'a [Option<&'a HostBuffer>],
    pool: Option<&'a rayon::ThreadPool>,
    kept_len: usize,
    reduced_len: usize,
    /// For the leading layout: the product of the kept axes before the
    /// reduced ones (each index reduces its own block of rows).
    outer: usize,
    /// For the leading layout: the first kept axis after the reduced ones.
    first_kept_inner: usize,
    value: ValueId,
    /// Run compiled code.
    jit: bool,
}

impl<'a> Layout<'a> {
    /// A worker's walker over `space` (`long`: chunks as long with or
    /// without compiled code).
    fn walker(&self, space: &'a Space, long: bool) -> Result<Walker<'a>> {
        Walker::new(
            self.machine,
            self.launch,
            self.inputs,
            space,
            TASK,
            self.jit,
            long,
        )
    }

    /// Where a block's reduction starts combining (compiled or not): the
    /// identity, except that a float sum starts from -0.0, which keeps the
    /// sign of a lone -0.0 (0.0 + -0.0 would not).
    fn jit_identity<T: Element>(&self, identity: T, op: ReduceOp) -> T {
        match (cpu_reduce(op), identity.to_wide()) {
            (CpuReduce::Plus, Wide::Float(0.0)) => T::from_wide(Wide::Float(-0.0)),
            _ => identity,
        }
    }

    /// The launch's work in elements (weighted by its body: see
    /// `body_weight`), which decides whether it goes parallel; its
    /// blocks are the same either way.
    fn work(&self) -> usize {
        let elements = self.kept_len.saturating_mul(self.reduced_len);
        elements.saturating_mul(self.machine.weight())
    }

    /// The frame slot of the reduced value.
    fn slot(&self) -> Result<usize> {
        self.machine
            .reduced_slot()
            .filter(|&s| s == self.value.index())
            .ok_or_else(|| internal("the machine reduces another value"))
    }
}

/// Rows combined by compiled code before they join a [`RowCascade`]:
/// [`GROUP`] consecutive rows are accumulated into one buffer (as NumPy adds
/// rows one after another), and the cascade combines the groups pairwise.
/// Group boundaries follow the row index, so results do not depend on the
/// thread count.
struct Groups<T> {
    current: Option<Vec<T>>,
    rows: usize,
    width: usize,
    identity: T,
}

/// Rows accumulated into one buffer before the pairwise cascade: more rows
/// per compiled call (E6 f32 at 3162x3162 on one thread: 2.31 ms with 8,
/// 1.87 ms with 32); still far fewer in a row than NumPy, which adds every
/// row of an axis-0 sum one after another.
const GROUP: usize = 32;

impl<T: Element> Groups<T> {
    fn new(width: usize, identity: T) -> Groups<T> {
        Groups {
            current: None,
            rows: 0,
            width,
            identity,
        }
    }

    /// Elements `in_row..in_row + len` of the current group's row, to
    /// combine the next piece into (a new group starts as the identity).
    fn row(&mut self, cascade: &mut RowCascade<T>, in_row: usize, len: usize) -> Result<&mut [T]> {
        let group = match &mut self.current {
            Some(group) => group,
            none => {
                let mut buffer = cascade.buffer();
                buffer.resize(self.width, self.identity);
                none.insert(buffer)
            }
        };
        group
            .get_mut(in_row..in_row + len)
            .ok_or_else(|| internal("a row piece outside its row"))
    }

    /// Rows the current group still takes.
    fn room(&self) -> usize {
        GROUP - self.rows
    }

    /// Notes that `rows` whole rows (at most [`Groups::room`]) were combined
    /// into the current group.
    fn advance_rows(
        &mut self,
        cascade: &mut RowCascade<T>,
        rows: usize,
        combine: &impl Fn(T, T) -> T,
    ) {
        self.rows += rows;
        if self.rows >= GROUP {
            self.finish(cascade, combine);
        }
    }

    /// Notes that a piece ended at `end` in its row: at the row's end, the
    /// row is done, and after `GROUP` rows the group joins `cascade`.
    fn advance(&mut self, cascade: &mut RowCascade<T>, end: usize, combine: &impl Fn(T, T) -> T) {
        if end == self.width {
            self.rows += 1;
            if self.rows == GROUP {
                self.finish(cascade, combine);
            }
        }
    }

    /// Pushes the current group, if any, into `cascade`.
    fn finish(&mut self, cascade: &mut RowCascade<T>, combine: &impl Fn(T, T) -> T) {
        if let Some(group) = self.current.take() {
            cascade.push_owned(group, combine);
        }
        self.rows = 0;
    }
}

/// How the values of the reduced value are read in the accumulator type `T`.
trait ReadAs<T> {
    /// Elements `start..start + len` of `slot` as a slice (broadcast values
    /// expanded, converted values in `scratch`).
    fn read<'a>(
        frame: &'a Frame<'_>,
        slot: usize,
        start: usize,
        len: usize,
        scratch: &'a mut Vec<T>,
    ) -> Result<&'a [T]>;

    /// `acc[i] = combine(acc[i], values[i])`, where `combine` is `op`'s
    /// combiner.
    fn combine_into(_op: ReduceOp, acc: &mut [T], values: &[T], combine: impl Fn(T, T) -> T)
    where
        T: Copy,
    {
        for (a, &v) in acc.iter_mut().zip(values) {
            *a = combine(*a, v);
        }
    }
}

/// Values already of the accumulator type.
struct Same;

impl<T: Element + Arithmetic> ReadAs<T> for Same {
    /// The operation is chosen once per call rather than per element, so
    /// that each loop is a plain one LLVM vectorizes (a leading-axes
    /// reduction of loaded values combines whole rows here: 5x faster).
    fn combine_into(op: ReduceOp, acc: &mut [T], values: &[T], _: impl Fn(T, T) -> T) {
        #[cfg(target_arch = "x86_64")]
        if super::isa::has_avx2() {
            // SAFETY: the CPU supports AVX2: `has_avx2` asked it at run time.
            return unsafe { combine_rows_avx2(op, acc, values) };
        }
        combine_rows(op, acc, values);
    }

    fn read<'a>(
        frame: &'a Frame<'_>,
        slot: usize,
        start: usize,
        len: usize,
        scratch: &'a mut Vec<T>,
    ) -> Result<&'a [T]> {
        match frame.read::<T>(slot, start, len)? {
            Arg::Slice(s) => Ok(s),
            Arg::Scalar(x) => {
                scratch.clear();
                scratch.resize(len, x);
                Ok(scratch.as_slice())
            }
        }
    }
}

/// Half-precision values reduced in `f32` (`min` and `max`, which are exact there).
struct Widened<H>(PhantomData<H>);

impl<H: Half + Element> ReadAs<f32> for Widened<H> {
    fn read<'a>(
        frame: &'a Frame<'_>,
        slot: usize,
        start: usize,
        len: usize,
        scratch: &'a mut Vec<f32>,
    ) -> Result<&'a [f32]> {
        scratch.clear();
        scratch.resize(len, 0.0);
        widen::widen(frame.read::<H>(slot, start, len)?, scratch);
        Ok(scratch.as_slice())
    }
}

/// Reduced axes last: each kept index reduces a run of `reduced_len`
/// consecutive positions, split into fixed blocks of `TASK`; a task takes
/// consecutive blocks (of several outputs when runs are short) worth about
/// `TASK` elements, and computes them in chunks that span short runs.
fn reduce_trailing<T: Element + Arithmetic + ChunkReduce, R: ReadAs<T>>(
    shape: &Layout<'_>,
    identity: T,
    op: ReduceOp,
    combine: impl Fn(T, T) -> T + Sync + Copy,
) -> Result<Vec<T>> {
    let (kept_len, reduced_len) = (shape.kept_len, shape.reduced_len);
    let value = shape.slot()?;
    let jit_identity = shape.jit_identity(identity, op);
    let space = Space::natural(shape.launch);
    let blocks = reduced_len.div_ceil(TASK);
    let block_len = reduced_len.min(TASK);
    let per_task = (TASK / block_len).max(1);
    let mut partials: Vec<T> = try_vec(identity, kept_len * blocks)?;
    let groups: Vec<&mut [T]> = partials.chunks_mut(per_task).collect();
    // Chunks end at the same places with or without compiled code, so that
    // both reduce the same blocks (the same bits before and after the JIT).
    let walker = || shape.walker(&space, true);
    for_each_task(
        shape.pool,
        shape.work(),
        groups,
        walker,
        |walker, task, slots| {
            let mut scratch = Vec::new();
            let mut partials = Vec::new();
            // The group's items are consecutive runs of positions: walk them in
            // chunks that may span several short runs, and cut each tile at
            // the runs' ends.
            let first = task * per_task;
            let item_start = |item: usize| (item / blocks) * reduced_len + (item % blocks) * TASK;
            let item_end =
                |item: usize| (item_start(item) + TASK).min((item / blocks + 1) * reduced_len);
            let group_end = item_end(first + slots.len().saturating_sub(1));
            let (mut position, mut current) = (item_start(first), 0);
            let mut cascade = Cascade::new();
            while position < group_end {
                let len = walker.chunk_len(position, group_end - position);
                walker.run(position, len, Vec::new(), true, |done, start, n| {
                    // Compiled code reduces each segment; else the values are read.
                    let values = match done.reduces() {
                        true => &[][..],
                        false => R::read(done.frame(), value, start, n, &mut scratch)?,
                    };
                    let base = position + start;
                    let mut offset = 0;
                    while offset < n {
                        let end = item_end(first + current);
                        let segment = (end - (base + offset)).min(n - offset);
                        // Partials per block of BLOCK positions from the
                        // chunk's start (cut at the segment's ends): the
                        // same blocks whether compiled code or the machine
                        // (whose tiles are whole blocks) reduces them.
                        let head = ((BLOCK - (start + offset) % BLOCK) % BLOCK).min(segment);
                        if done.reduces() {
                            for (at, len) in [(offset, head), (offset + head, segment - head)] {
                                if len > 0 {
                                    done.reduce(start + at, len, jit_identity, &mut partials)?;
                                    for &p in &partials {
                                        cascade.push(p, &combine);
                                    }
                                }
                            }
                        } else {
                            let (first, rest) = values[offset..offset + segment].split_at(head);
                            let pieces = std::iter::once(first).chain(rest.chunks(BLOCK));
                            for piece in pieces.filter(|p| !p.is_empty()) {
                                if let Some(p) = reduce_chunk(op, piece, jit_identity, &combine) {
                                    cascade.push(p, &combine);
                                }
                            }
                        }
                        offset += segment;
                        if base + offset == end {
                            let total = cascade.finish(&combine);
                            if let Some(slot) = slots.get_mut(current) {
                                *slot = total.unwrap_or(identity);
                            }
                            current += 1;
                        }
                    }
                    Ok(())
                })?;
                position += len;
            }
            Ok(())
        },
    )?;
    if blocks == 1 {
        // Each output's partial is its value: no second cascade.
        return Ok(partials);
    }
    Ok(partials
        .chunks(blocks)
        .map(|p| {
            let mut cascade = Cascade::new();
            for &v in p {
                cascade.push(v, &combine);
            }
            cascade.finish(&combine).unwrap_or(identity)
        })
        .collect())
}

/// Reduced axes first (after `outer` kept indices, each reducing its own
/// block): rows of kept positions are combined element-wise, pairwise over
/// rows. The rows are split into at most `MAX_ROW_BLOCKS` fixed blocks (so
/// that a few output columns still give every core work) and the kept
/// positions into chunks; each (outer, block, chunk) task yields a partial
/// row, and the blocks' partial rows are combined in order.
fn reduce_leading<T: Element + Arithmetic, R: ReadAs<T>>(
    shape: &Layout<'_>,
    identity: T,
    op: ReduceOp,
    combine: impl Fn(T, T) -> T + Sync + Copy,
) -> Result<Vec<T>> {
    let (outer, reduced_len) = (shape.outer.max(1), shape.reduced_len);
    let inner = shape.kept_len / outer;
    let value = shape.slot()?;
    // Lines of whole rows (the kept axes after the reduced ones), which
    // compiled code accumulates several at a time.
    let space = Space::rows_from(shape.launch, shape.first_kept_inner);
    let width = inner.min(CHUNK);
    let rows_per_block = (TASK / width)
        .max(reduced_len.div_ceil(MAX_ROW_BLOCKS))
        .max(1);
    let row_blocks = reduced_len.div_ceil(rows_per_block);
    let column_chunks = inner.div_ceil(CHUNK);
    // partials[(o * row_blocks + block) * inner + k]
    let mut partials: Vec<T> = try_vec(identity, outer * row_blocks * inner)?;
    let tasks: Vec<&mut [T]> = partials
        .chunks_mut(inner)
        .flat_map(|row| row.chunks_mut(CHUNK))
        .collect();
    for_each_task(
        shape.pool,
        shape.work(),
        tasks,
        || shape.walker(&space, false),
        |walker, task, out| {
            let (row, column) = (task / column_chunks, task % column_chunks);
            let (o, block) = (row / row_blocks, row % row_blocks);
            let base = o * reduced_len * inner + column * CHUNK;
            let rows = block * rows_per_block..((block + 1) * rows_per_block).min(reduced_len);
            let mut cascade = RowCascade::new();
            let width = out.len();
            let mut groups = Groups::new(width, shape.jit_identity(identity, op));
            // A piece of a row: `len` elements of the chunk from `offset`,
            // at `in_row` in its row.
            let mut scratch = Vec::new();
            let mut piece = |state: (&mut Groups<T>, &mut RowCascade<T>),
                             done: &Done<'_, '_>,
                             offset: usize,
                             in_row: usize,
                             len: usize| {
                let (groups, cascade) = state;
                let row = groups.row(cascade, in_row, len)?;
                if done.reduces() {
                    done.accumulate(offset, row)?;
                } else {
                    let values = R::read(done.frame(), value, offset, len, &mut scratch)?;
                    R::combine_into(op, row, values, combine);
                }
                groups.advance(cascade, in_row + len, &combine);
                Ok(())
            };
            if column_chunks == 1 {
                // Whole rows, consecutive in position: chunks may span
                // several (short) rows, and are cut at the rows' ends.
                let (start, end) = (base + rows.start * inner, base + rows.end * inner);
                let mut position = start;
                while position < end {
                    // Whole rows that are lines go to compiled code together.
                    if inner == space.line_len() {
                        let room = (end - position) / inner;
                        let lines = walker.lines_from(position, room.min(groups.room()));
                        if lines > 1 {
                            let row = groups.row(&mut cascade, 0, inner)?;
                            if walker.accumulate_lines(position, lines, row)? {
                                groups.advance_rows(&mut cascade, lines, &combine);
                                position += lines * inner;
                                continue;
                            }
                        }
                    }
                    let len = walker.chunk_len(position, end - position);
                    walker.run(position, len, Vec::new(), false, |done, _, _| {
                        let mut offset = 0;
                        while offset < len {
                            let in_row = (position + offset - base) % inner;
                            let segment = (inner - in_row).min(len - offset);
                            piece((&mut groups, &mut cascade), done, offset, in_row, segment)?;
                            offset += segment;
                        }
                        Ok(())
                    })?;
                    position += len;
                }
            } else {
                // Rows of this column chunk, each in one or more chunks
                // (more when the row crosses lines of the iteration space).
                for r in rows {
                    let row_start = base + r * inner;
                    let mut k = 0;
                    while k < width {
                        let len = walker.chunk_len(row_start + k, width - k);
                        walker.run(row_start + k, len, Vec::new(), false, |done, _, _| {
                            piece((&mut groups, &mut cascade), done, 0, k, len)
                        })?;
                        k += len;
                    }
                }
            }
            groups.finish(&mut cascade, &combine);
            if let Some(total) = cascade.finish(&combine) {
                out.copy_from_slice(&total);
            }
            Ok(())
        },
    )?;
    let mut result = Vec::with_capacity(shape.kept_len);
    for blocks in partials.chunks(row_blocks * inner) {
        let mut cascade = RowCascade::new();
        for row in blocks.chunks(inner) {
            cascade.push(row, &combine);
        }
        result.extend(
            cascade
                .finish(&combine)
                .ok_or_else(|| internal("a reduction without rows"))?,
        );
    }
    Ok(result)
}
