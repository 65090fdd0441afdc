//! The machine's side of compiled code: which variant a chunk runs, what a
//! runner's sink gets to reduce with it, and whole lines accumulated in
//! one call.

use std::sync::Arc;

use smallvec::SmallVec;

use lazyfuse_core::{DType, Element, HostBuffer, Result, SliceMut};

use crate::settings::JitMode;
use lazyfuse_fusion::Inst;

use super::{bind_leaves, internal, ChunkRegs, Frame, Home, Machine, Registers, View, BLOCK, TILE};
use crate::jit::{Form, JitCode};
use crate::stream::{self, Stage};

/// What a runner's sink gets after a tile or a chunk: the frame, to read
/// the reduced value from, or compiled code that reduces it.
pub struct Done<'a, 'f> {
    pub(super) frame: &'a Frame<'f>,
    /// Compiled code of the reduce or accumulate form, its table, the
    /// reduced dtype and the form.
    pub(super) reducer: Option<(&'a JitCode, &'a [*mut u8], DType, Form)>,
}

impl<'a, 'f> Done<'a, 'f> {
    pub(super) fn of(frame: &'a Frame<'f>) -> Done<'a, 'f> {
        Done {
            frame,
            reducer: None,
        }
    }

    /// The chunk's values.
    pub fn frame(&self) -> &Frame<'f> {
        self.frame
    }

    /// True when compiled code reduces the value ([`Done::reduce`] after
    /// each tile, or [`Done::accumulate`] after each chunk): the values are
    /// then not in the frame.
    pub fn reduces(&self) -> bool {
        self.reducer.is_some()
    }

    /// The compiled code of `form` for values of `T`, checked.
    fn code<T: Element>(&self, form: fn(Form) -> bool) -> Result<(&'a JitCode, &'a [*mut u8])> {
        match self.reducer {
            Some((code, table, dtype, f)) if form(f) && dtype == T::DTYPE => Ok((code, table)),
            _ => Err(internal("no compiled reduction of this form and dtype")),
        }
    }

    fn check_range(&self, start: usize, n: usize) -> Result<()> {
        if start
            .checked_add(n)
            .is_none_or(|end| end > self.frame.len())
        {
            return Err(internal("a reduced range outside its chunk"));
        }
        Ok(())
    }

    /// The reduced value combined over elements `start..start + n` by
    /// compiled code, as one partial per [`BLOCK`] elements (each from
    /// `identity`), into `partials`.
    pub fn reduce<T: Element>(
        &self,
        start: usize,
        n: usize,
        identity: T,
        partials: &mut Vec<T>,
    ) -> Result<()> {
        let (code, table) = self.code::<T>(|f| matches!(f, Form::Reduce { .. }))?;
        self.check_range(start, n)?;
        partials.clear();
        partials.resize(n.div_ceil(BLOCK).max(1), identity);
        // SAFETY: `table` was checked against `frame` when this `Done` was
        // made, the range lies within the chunk (checked above), the code
        // reduces a value of type `T` (checked above), and `partials` holds
        // a partial per block.
        let done = unsafe { code.reduce_blocks(table, start, n, BLOCK, identity, partials) };
        if done {
            Ok(())
        } else {
            Err(internal("too few partials for a compiled reduction"))
        }
    }

    /// Combines the reduced value of elements `start..start + acc.len()`
    /// into `acc`, element by element, by compiled code.
    pub fn accumulate<T: Element>(&self, start: usize, acc: &mut [T]) -> Result<()> {
        let (code, table) = self.code::<T>(|f| matches!(f, Form::Accumulate { .. }))?;
        self.check_range(start, acc.len())?;
        // SAFETY: as in `reduce`; `acc` is a distinct, exclusively borrowed
        // array of `acc.len()` elements of the value's type.
        unsafe { code.accumulate(table, start, acc) };
        Ok(())
    }
}

/// Runs compiled code of the map form over elements `start..end` of a
/// chunk, [`stream::TILE`] at a time: each output's tile goes to a staging
/// area of `stage` (which stays in L1), then to the output with streaming
/// stores.
///
/// # Safety
/// As for [`JitCode::call`] over `start..end`, `table` checked by
/// `Frame::jit_table` with `writes`: the slots the code writes, with their
/// dtypes.
pub(super) unsafe fn call_streaming(
    code: &JitCode,
    table: &[*mut u8],
    writes: &[(usize, DType)],
    stage: &mut Stage,
    start: usize,
    end: usize,
) -> Result<()> {
    let tile = stream::TILE.min(end - start);
    let widest = writes.iter().map(|(_, d)| d.size()).max().unwrap_or(1);
    let areas = stage.areas(writes.len(), tile * widest);
    let outputs = writes
        .iter()
        .map(|&(slot, _)| table.get(slot).copied())
        .collect::<Option<SmallVec<[*mut u8; 4]>>>()
        .ok_or_else(|| internal("a written slot outside the table"))?;
    let staged = &mut stage.table;
    staged.clear();
    staged.extend_from_slice(table);
    // Tiles after the first start on a cache line of the first output, so
    // that its streaming stores fill whole lines (a line split between two
    // tiles would be written in two parts).
    let lead = match (writes.first(), outputs.first()) {
        (Some(&(_, dtype)), Some(output)) => {
            let offset = output.wrapping_add(start * dtype.size()).align_offset(64);
            if offset % dtype.size() == 0 {
                offset / dtype.size()
            } else {
                0
            }
        }
        _ => 0,
    };
    let mut at = start;
    while at < end {
        let n = match lead {
            lead if at == start && lead > 0 => lead.min(tile).min(end - at),
            _ => tile.min(end - at),
        };
        // The code writes output `k`'s elements `at..at + n` at
        // `table[slot] + (at..at + n) * size`: here, the staging area.
        for (&(slot, dtype), &area) in writes.iter().zip(&areas) {
            staged[slot] = area.wrapping_sub(at * dtype.size());
        }
        // SAFETY: the caller's contract for every slot but the written ones,
        // which now locate this tile in staging areas of `tile * widest`
        // bytes each (`n <= tile`), distinct from everything the code reads.
        unsafe { code.call(staged, at, n) };
        for ((&(_, dtype), &area), &output) in writes.iter().zip(&areas).zip(&outputs) {
            let size = dtype.size();
            // SAFETY: the area holds the tile's `n * size` bytes, just
            // written; the output window holds the chunk (the caller's
            // contract), of which this tile is a part; they do not overlap.
            unsafe { stream::copy_streaming(area, output.wrapping_add(at * size), n * size) };
        }
        at += n;
    }
    stream::fence();
    Ok(())
}

impl Machine {
    /// Whether a launch of `elements` elements runs compiled code (the
    /// kernel has some and has run enough elements to repay compiling it).
    pub fn jit_wanted(&self, elements: usize, mode: JitMode) -> bool {
        self.jit.as_ref().is_some_and(|j| j.wanted(elements, mode))
    }

    /// True when the JIT compiles this body.
    pub fn has_jit(&self) -> bool {
        self.jit.is_some()
    }

    /// The compiled variant for the chunk bound in `frame`, if it compiles
    /// (kept in `last`: consecutive chunks of a worker share it without
    /// touching the shared reference count).
    pub(super) fn compiled<'r>(
        &self,
        views: &[Option<View>],
        form: Form,
        last: &'r mut Option<(u64, Form, Arc<JitCode>)>,
    ) -> Option<(&'r JitCode, u64)> {
        let jit = self.jit.as_ref()?;
        if jit.stores_nothing() && !matches!(form, Form::Accumulate { .. }) {
            return None;
        }
        let broadcast = |slot: usize| matches!(views.get(slot), Some(Some(View::InputScalar(..))));
        if !jit.fixed().iter().all(|&slot| broadcast(slot)) {
            return None;
        }
        let scalar = jit
            .leaves()
            .iter()
            .enumerate()
            .filter(|(_, &slot)| matches!(views.get(slot), Some(Some(View::InputScalar(..)))))
            .fold(0u64, |mask, (bit, _)| mask | 1 << bit);
        if last
            .as_ref()
            .is_none_or(|(mask, f, _)| (*mask, *f) != (scalar, form))
        {
            *last = Some((scalar, form, jit.variant(scalar, form)?));
        }
        last.as_ref().map(|(mask, _, code)| (&**code, *mask))
    }

    /// `(slot, dtype, broadcast)` of what compiled code reads: arguments
    /// (broadcast) and leaves (broadcast where the variant's mask says).
    pub(super) fn jit_reads(&self, scalar: u64) -> impl Iterator<Item = (usize, DType, bool)> + '_ {
        self.home
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h, Home::Arg | Home::Leaf(_)))
            .map(move |(slot, h)| {
                let broadcast = match h {
                    Home::Arg => true,
                    _ => self
                        .jit
                        .as_ref()
                        .is_some_and(|j| j.broadcasts(slot, scalar)),
                };
                (slot, self.body.dtypes[slot], broadcast)
            })
    }

    /// `(value, slot)` of what compiled code stores.
    pub(super) fn jit_writes(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let reduced = self
            .reduced
            .filter(|r| matches!(self.home[r.index()], Home::Chunk(_)))
            .map(|r| (r.index(), r.index()));
        let outputs = self
            .outputs
            .iter()
            .filter(|_| self.reduced.is_none())
            .map(|&(o, slot)| (self.output_values[o], slot));
        reduced.into_iter().chain(outputs)
    }

    /// Combines the reduced value of `lines` consecutive lines of `len`
    /// elements into `acc` with compiled code, in one call (no gap between
    /// lines for the memory system to idle in): `leaf` locates the first
    /// line's leaves, and input `k` moves `steps[k]` elements from a line to
    /// the next. `Ok(false)`, having run nothing, when compiled code cannot
    /// (no accumulate form, a leaf that must be gathered, no code).
    #[allow(clippy::too_many_arguments)] // the runner's one call site
    pub fn accumulate_lines<T: Element>(
        &self,
        len: usize,
        inputs: &[Option<&HostBuffer>],
        regs: &mut Registers,
        leaf: impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
        steps: &[isize],
        lines: usize,
        acc: &mut [T],
    ) -> Result<bool> {
        let (Some(value), Some(op)) = (self.reduced, self.reduce_op) else {
            return Ok(false);
        };
        if acc.len() != len || self.dtype(value) != T::DTYPE {
            return Err(internal("an accumulator of another length or dtype"));
        }
        let form = Form::Accumulate {
            value: value.index(),
            op,
        };
        let lines_of = Lines { len, lines, steps };
        self.run_lines(
            form,
            lines_of,
            inputs,
            regs,
            leaf,
            Vec::new(),
            |code, table| {
                // SAFETY: `table` was checked against this frame (the first
                // line), and every leaf's last line lies in its input (checked
                // by `run_lines`); `acc` holds `len` values of the reduced
                // value's dtype (checked above).
                unsafe { code.accumulate_lines(table, acc, lines) }
            },
        )
    }

    /// Each slot's stride from a line to the next, in bytes, in the
    /// table's second half: loads move by their input's `step`, outputs
    /// (when `outputs` gives the line's length) by a line.
    fn fill_line_strides(
        &self,
        table: &mut [*mut u8],
        step: &impl Fn(usize) -> isize,
        outputs: Option<usize>,
    ) {
        let slots = self.body.len() + self.outputs.len();
        let dtype = |slot: usize| self.body.dtypes[slot];
        let mut set = |slot: usize, bytes: isize| {
            if let Some(entry) = table.get_mut(slots + slot) {
                *entry = std::ptr::without_provenance_mut(bytes as usize);
            }
        };
        for (slot, inst) in self.body.insts.iter().enumerate() {
            if let Inst::Load(k) = inst {
                set(slot, step(*k as usize) * dtype(slot).size() as isize);
            }
        }
        if let Some(len) = outputs {
            for (v, slot) in self.jit_writes() {
                set(slot, (len * dtype(v).size()) as isize);
            }
        }
    }

    /// Computes `lines` consecutive lines of `len` elements with compiled
    /// code in one call, writing each output's `lines * len` elements:
    /// `leaf` locates the first line's leaves, and input `k` moves
    /// `steps[k]` elements from a line to the next. `Ok(false)`, having run
    /// nothing, when compiled code cannot (a leaf that must be gathered, no
    /// code).
    #[allow(clippy::too_many_arguments)] // the runner's one call site
    pub fn map_lines(
        &self,
        len: usize,
        inputs: &[Option<&HostBuffer>],
        regs: &mut Registers,
        outputs: Vec<SliceMut<'_>>,
        leaf: impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
        steps: &[isize],
        lines: usize,
    ) -> Result<bool> {
        if self.reduced.is_some() || lines == 0 {
            return Ok(false);
        }
        if outputs.len() != self.output_values.len()
            || outputs.iter().any(|o| o.len() != len * lines)
        {
            return Err(internal("outputs of another count or length"));
        }
        let lines_of = Lines { len, lines, steps };
        self.run_lines(
            Form::MapLines,
            lines_of,
            inputs,
            regs,
            leaf,
            outputs,
            |code, table| {
                // SAFETY: `table` was checked against this frame (the first
                // line); every leaf's last line lies in its input (checked by
                // `run_lines`), and each output holds all `lines` lines
                // (checked above), one after another as the output strides say.
                unsafe { code.map_lines(table, len, lines) }
            },
        )
    }

    /// The part of the line forms they share: locates the first line's
    /// leaves, finds the compiled variant of `form` (`Ok(false)` when a
    /// leaf must be gathered or there is none), checks the last line,
    /// binds the frame (`outputs` as whole lines), fills the table's line
    /// strides and hands the code and table to `call`.
    #[allow(clippy::too_many_arguments)] // the two line forms' one helper
    fn run_lines(
        &self,
        form: Form,
        Lines { len, lines, steps }: Lines<'_>,
        inputs: &[Option<&HostBuffer>],
        regs: &mut Registers,
        mut leaf: impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
        outputs: Vec<SliceMut<'_>>,
        call: impl FnOnce(&JitCode, &[*mut u8]),
    ) -> Result<bool> {
        let Registers {
            chunk,
            constants,
            views,
            frame: storage,
            table,
            compiled,
            ..
        } = regs;
        self.locate_leaves(views, chunk, &mut leaf)?;
        let step = line_steps(inputs, steps);
        if !self.gathered_lines_repeat(views, &step) {
            return Ok(false);
        }
        let Some((code, scalar)) = self.compiled(views, form, compiled) else {
            return Ok(false);
        };
        check_last_line(views, inputs, &step, lines, len)?;
        let slots = self.body.len() + self.outputs.len();
        let mut frame = Frame::new(std::mem::take(storage), slots, len, TILE.min(len));
        bind_leaves(&mut frame, (&self.leaves, views), inputs, constants)?;
        for (buffer, &slot) in chunk.buffers.iter().zip(&self.chunk_owners) {
            if let Some(View::Reg(_)) = views[slot] {
                frame.bind_window(slot, buffer, 0)?;
            }
        }
        let writes: SmallVec<[(usize, DType); 4]> = match form {
            Form::MapLines => {
                self.bind_outputs(&mut frame, outputs, Frame::bind_output_lines)?;
                let dtype = |v: usize| self.body.dtypes[v];
                self.jit_writes()
                    .map(|(v, slot)| (slot, dtype(v)))
                    .collect()
            }
            _ => SmallVec::new(),
        };
        frame.jit_table(table, self.jit_reads(scalar), writes.iter().copied())?;
        let output_stride = (form == Form::MapLines).then_some(len);
        self.fill_line_strides(table, &step, output_stride);
        call(code, table);
        *storage = frame.into_storage();
        Ok(true)
    }

    /// True when every gathered leaf (a load of a strided line, copied
    /// into a register) is the same line on every line of the call: its
    /// input does not move from a line to the next (as `b[None, :, k]` in
    /// `a[:, None, k] - b[None, :, k]`), so the one gathered line serves
    /// them all, at a line step of 0. Others cannot be called by lines.
    fn gathered_lines_repeat(
        &self,
        views: &[Option<View>],
        step: &impl Fn(usize) -> isize,
    ) -> bool {
        views.iter().enumerate().all(|(slot, view)| match view {
            Some(View::Reg(_)) => {
                matches!(self.body.insts.get(slot), Some(Inst::Load(k)) if step(*k as usize) == 0)
            }
            _ => true,
        })
    }
}

/// The lines one call of a line form computes: `lines` of `len` elements,
/// input `k` moving `steps[k]` elements from a line to the next.
#[derive(Clone, Copy)]
struct Lines<'a> {
    len: usize,
    lines: usize,
    steps: &'a [isize],
}

/// Each input's stride from a line to the next (a single element is the
/// same one on every line).
fn line_steps<'s>(
    inputs: &'s [Option<&HostBuffer>],
    steps: &'s [isize],
) -> impl Fn(usize) -> isize + 's {
    move |k: usize| match inputs.get(k).copied().flatten() {
        Some(buffer) if buffer.len() > 1 => steps.get(k).copied().unwrap_or(0),
        _ => 0,
    }
}

/// Checks that every leaf's window (or value) on the last of `lines`
/// lines lies in its input. The first line is checked when bound, and
/// lines move by constant steps, so those between lie between them.
fn check_last_line(
    views: &[Option<View>],
    inputs: &[Option<&HostBuffer>],
    step: &impl Fn(usize) -> isize,
    lines: usize,
    len: usize,
) -> Result<()> {
    let last = isize::try_from(lines.saturating_sub(1)).unwrap_or(isize::MAX);
    for view in views.iter().flatten() {
        let (k, offset, extent) = match *view {
            View::Input(k, offset) => (k, offset, len),
            View::InputScalar(k, offset) => (k, offset, 1),
            View::Reg(_) => continue,
        };
        let size = inputs.get(k).copied().flatten().map_or(0, HostBuffer::len);
        let at = isize::try_from(offset)
            .ok()
            .and_then(|o| o.checked_add(last.checked_mul(step(k))?));
        let inside = at
            .and_then(|at| usize::try_from(at).ok())
            .and_then(|at| at.checked_add(extent))
            .is_some_and(|end| end <= size);
        if !inside {
            return Err(internal("a line outside its input"));
        }
    }
    Ok(())
}
