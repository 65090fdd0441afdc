//! A kernel body compiled to a register machine over chunks and tiles.
//!
//! A chunk (up to [`CHUNK`] elements, within one line of the iteration
//! space) is where inputs are located: a zero-copy window into a contiguous
//! input, one broadcast element, or a gather into a chunk register. The
//! operations then run tile by tile ([`TILE`] elements): every step over
//! one tile before the next tile starts, so all of a chunk's input streams
//! are read together, as one fused loop reads them, and temporaries live in
//! tile registers that stay in L1 (reused once their value is dead, as
//! numexpr does). Outputs are written in place; the reduced value of a
//! reduction goes to a chunk register that the runner reads per tile or
//! per chunk. Each step is one monomorphised loop (`steps`).

use lazyfuse_core::{
    with_dtype, DType, Element, Error, HostBuffer, JitMode, Literal, ReduceOp, Result, SliceMut,
};
use lazyfuse_fusion::{Body, Inst, ValueId};

use std::sync::Arc;

use super::frame::{Frame, FrameStorage, TileReg};
use super::jit::{Form, Jit, JitCode};
use super::steps::{self, Step};

/// Elements per chunk: the unit in which inputs are located and the
/// runners walk a launch's domain.
pub const CHUNK: usize = 8192;

/// Elements per chunk of a launch that runs compiled code: longer chunks
/// mean fewer gaps between calls, in which the memory system idles.
pub const JIT_CHUNK: usize = 65536;

/// Elements per tile: each step runs over one tile of every value at a
/// time. The machine now runs the bodies the JIT does not compile, mostly
/// compute-bound ones: measured on E3 at 10^7, 4 Ki took 1.29-1.31x the
/// libmvec hand loop, 2 Ki 1.30-1.37x, 512 1.40-1.44x (fewer step calls).
pub const TILE: usize = 4096;

/// Elements per partial of a compiled reduction: each of 16 lanes adds 32
/// values in a row before the partials are combined pairwise.
pub const BLOCK: usize = 512;

fn internal(message: &str) -> Error {
    Error::internal("cpu machine", message)
}

/// Where a leaf's chunk is.
#[derive(Clone, Copy, Debug)]
pub enum View {
    /// Chunk register `r`, elements `0..len` (a gather or generated indices).
    Reg(usize),
    /// Input `k`, elements `offset..offset + len`.
    Input(usize, usize),
    /// Element `offset` of input `k`, everywhere.
    InputScalar(usize, usize),
}

/// Where a value lives while a chunk runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Home {
    /// A kernel argument, broadcast.
    Arg,
    /// A leaf: located per chunk (`Some(r)`: chunk register `r` when it must be gathered).
    Leaf(Option<usize>),
    /// Written in place into output `o`.
    Output(usize),
    /// A chunk register (the reduced value: read by the runner).
    Chunk(usize),
    /// A tile register, shared with values whose lives do not overlap.
    Tile(usize),
}

/// How a chunk runs: with compiled code (when the machine has it), and
/// whether the runner reads the reduced value after each tile.
#[derive(Clone, Copy, Debug)]
pub struct Mode {
    /// Use compiled code for this launch.
    pub jit: bool,
    /// Call the sink after each tile (else once per chunk).
    pub per_tile: bool,
}

/// What a runner's sink gets after a tile or a chunk: the frame, to read
/// the reduced value from, or compiled code that reduces it.
pub struct Done<'a, 'f> {
    frame: &'a Frame<'f>,
    /// Compiled code of the reduce or accumulate form, its table, the
    /// reduced dtype and the form.
    reducer: Option<(&'a JitCode, &'a [*mut u8], DType, Form)>,
}

impl<'a, 'f> Done<'a, 'f> {
    fn of(frame: &'a Frame<'f>) -> Done<'a, 'f> {
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
        unsafe { code.reduce_blocks(table, start, n, BLOCK, identity, partials) };
        Ok(())
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

/// Binds the slots of leaves located in a window or a broadcast element,
/// and of the arguments.
fn bind_leaves<'a>(
    frame: &mut Frame<'a>,
    views: &[Option<View>],
    inputs: &[Option<&'a HostBuffer>],
    constants: &'a [(usize, HostBuffer)],
) -> Result<()> {
    let input = |k: usize| {
        inputs
            .get(k)
            .copied()
            .flatten()
            .ok_or_else(|| internal("a missing input"))
    };
    for (slot, view) in views.iter().enumerate() {
        match *view {
            Some(View::Input(k, offset)) => frame.bind_window(slot, input(k)?, offset)?,
            Some(View::InputScalar(k, offset)) => frame.bind_scalar(slot, input(k)?, offset)?,
            Some(View::Reg(_)) | None => {}
        }
    }
    for (slot, value) in constants {
        frame.bind_scalar(*slot, value, 0)?;
    }
    Ok(())
}

/// Chunk-sized registers, each allocated when first used (most leaves are
/// windows and never need theirs).
#[derive(Debug)]
pub struct ChunkRegs {
    buffers: Vec<HostBuffer>,
    dtypes: Vec<DType>,
    capacity: usize,
}

impl ChunkRegs {
    /// Register `r`, holding at least a chunk.
    pub fn get(&mut self, r: usize) -> Result<&mut HostBuffer> {
        let (buffer, &dtype) = self
            .buffers
            .get_mut(r)
            .zip(self.dtypes.get(r))
            .ok_or_else(|| internal("a chunk register out of range"))?;
        if buffer.len() < self.capacity {
            *buffer = HostBuffer::try_zeros(dtype, self.capacity)?;
        }
        Ok(buffer)
    }
}

/// A worker's scratch: registers, the launch's arguments in their value
/// dtypes, and storage reused from chunk to chunk.
#[derive(Debug)]
pub struct Registers {
    chunk: ChunkRegs,
    tile: Vec<TileReg>,
    /// Elements per tile register.
    tile_len: usize,
    /// `(slot, value)` for every argument value.
    constants: Vec<(usize, HostBuffer)>,
    views: Vec<Option<View>>,
    frame: FrameStorage,
    /// The pointer table of compiled code, and the variant used last.
    table: Vec<*mut u8>,
    compiled: Option<(u64, Form, Arc<JitCode>)>,
}

/// A body ready to run: where each value lives, and its steps.
#[derive(Debug)]
pub struct Machine {
    body: Body,
    home: Vec<Home>,
    chunk_dtypes: Vec<DType>,
    tile_dtypes: Vec<DType>,
    /// The operations in order, then copies into outputs that are not
    /// written in place.
    steps: Vec<Step>,
    /// `(output, slot)` for every output: where it is bound.
    outputs: Vec<(usize, usize)>,
    /// The value of every output.
    output_values: Vec<usize>,
    reduced: Option<ValueId>,
    /// The built-in combination of the reduced value, when compiled code
    /// may reduce it in its own dtype.
    reduce_op: Option<ReduceOp>,
    /// Compiled code for the body, when the JIT compiles it.
    jit: Option<Jit>,
}

impl Machine {
    /// Compiles `body` whose values `outputs` are stored (an element-wise
    /// kernel) or whose value `reduced` is reduced (`op`: its built-in
    /// combination when the accumulator has the value's dtype).
    pub fn new(
        body: &Body,
        outputs: &[ValueId],
        reduced: Option<ValueId>,
        op: Option<ReduceOp>,
    ) -> Result<Machine> {
        let n = body.len();
        let mut last_use = vec![0usize; n];
        for (i, inst) in body.insts.iter().enumerate() {
            for v in inst.operands() {
                last_use[v.index()] = i;
            }
        }
        let mut home = vec![Home::Arg; n];
        let mut chunk_dtypes: Vec<DType> = Vec::new();
        let mut tile_dtypes: Vec<DType> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        let mut chunk_register = |dtype: DType| {
            chunk_dtypes.push(dtype);
            chunk_dtypes.len() - 1
        };
        for (i, inst) in body.insts.iter().enumerate() {
            let dtype = body.dtypes[i];
            let output = outputs.iter().position(|v| v.index() == i);
            home[i] = match inst {
                Inst::Arg(_) => Home::Arg,
                Inst::Load(_) | Inst::Iota(_) => Home::Leaf(Some(chunk_register(dtype))),
                Inst::Param(_) | Inst::Reduced => Home::Leaf(None),
                _ if reduced.is_some_and(|r| r.index() == i) => Home::Chunk(chunk_register(dtype)),
                _ => match output {
                    Some(o) => Home::Output(o),
                    None => {
                        let reg = match free.iter().position(|&r| tile_dtypes[r] == dtype) {
                            Some(p) => free.swap_remove(p),
                            None => {
                                tile_dtypes.push(dtype);
                                tile_dtypes.len() - 1
                            }
                        };
                        Home::Tile(reg)
                    }
                },
            };
            // Operands dying here free their registers only now, after the
            // result got its own: a step never writes a register it reads.
            for v in inst.operands() {
                if last_use[v.index()] == i {
                    if let Home::Tile(r) = home[v.index()] {
                        if !free.contains(&r) {
                            free.push(r);
                        }
                    }
                }
            }
        }
        let mut steps = Vec::new();
        for (i, inst) in body.insts.iter().enumerate() {
            if !inst.operands().is_empty() {
                steps.push(steps::compile(inst, body.dtypes[i], body, i)?);
            }
        }
        // Outputs written in place are bound where their value is; the
        // others (leaves, arguments, a value stored twice) are copied.
        let mut bound = Vec::new();
        for (o, v) in outputs.iter().enumerate() {
            if home[v.index()] == Home::Output(o) {
                bound.push((o, v.index()));
            } else {
                steps.push(steps::copy(body.dtype(*v), v.index(), n + o));
                bound.push((o, n + o));
            }
        }
        // Compiled code stores what the steps would: the outputs, or the
        // reduced value when an operation computes it.
        let stored: Vec<(usize, usize)> = match reduced {
            Some(r) if matches!(home[r.index()], Home::Chunk(_)) => vec![(r.index(), r.index())],
            Some(_) => Vec::new(),
            None => bound
                .iter()
                .map(|&(o, slot)| (outputs[o].index(), slot))
                .collect(),
        };
        let leaves = (0..n)
            .filter(|&i| matches!(body.insts[i], Inst::Load(_)))
            .collect();
        let jit = Jit::new(body, stored, leaves, n + outputs.len()).ok();
        Ok(Machine {
            body: body.clone(),
            home,
            chunk_dtypes,
            tile_dtypes,
            steps,
            outputs: bound,
            output_values: outputs.iter().map(|v| v.index()).collect(),
            reduced,
            reduce_op: op.filter(|_| reduced.is_some()),
            jit,
        })
    }

    /// Scratch for one worker running chunks of at most `len` elements of
    /// a launch with arguments `args` (small launches do not pay for
    /// full-size registers).
    pub fn registers(&self, len: usize, args: &[Literal]) -> Result<Registers> {
        let len = len.max(1);
        let chunk = ChunkRegs {
            buffers: self
                .chunk_dtypes
                .iter()
                .map(|&d| HostBuffer::try_zeros(d, 0))
                .collect::<Result<_>>()?,
            dtypes: self.chunk_dtypes.clone(),
            capacity: len,
        };
        // Tile registers are made when the machine first runs steps (never
        // for launches that run compiled code).
        let tile = Vec::new();
        let tile_len = len.min(TILE);
        let mut constants = Vec::new();
        for (i, inst) in self.body.insts.iter().enumerate() {
            if let Inst::Arg(k) = inst {
                let literal = args
                    .get(*k as usize)
                    .ok_or_else(|| internal("a missing argument"))?;
                let value = with_dtype!(self.body.dtypes[i], T => T::into_buffer(vec![T::from_wide(literal.to_wide())]));
                constants.push((i, value));
            }
        }
        Ok(Registers {
            chunk,
            tile,
            tile_len,
            constants,
            views: Vec::new(),
            frame: FrameStorage::default(),
            table: Vec::new(),
            compiled: None,
        })
    }

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
    fn compiled<'r>(
        &self,
        views: &[Option<View>],
        form: Form,
        last: &'r mut Option<(u64, Form, Arc<JitCode>)>,
    ) -> Option<&'r JitCode> {
        let jit = self.jit.as_ref()?;
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
        last.as_ref().map(|(_, _, code)| &**code)
    }

    /// `(value, slot)` of what compiled code stores.
    fn jit_writes(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
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

    /// The dtype of a value.
    pub fn dtype(&self, v: ValueId) -> DType {
        self.body.dtypes[v.index()]
    }

    fn reduced_dtype(&self) -> DType {
        self.reduced.map_or(DType::Bool, |v| self.dtype(v))
    }

    /// The slot the runner reads the reduced value from.
    pub fn reduced_slot(&self) -> Option<usize> {
        self.reduced.map(ValueId::index)
    }

    /// One view per value: where `leaf` locates each leaf, `None` for the others.
    fn locate_leaves(
        &self,
        views: &mut Vec<Option<View>>,
        chunk: &mut ChunkRegs,
        leaf: &mut impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
    ) -> Result<()> {
        views.clear();
        for (i, inst) in self.body.insts.iter().enumerate() {
            views.push(match self.home[i] {
                Home::Leaf(reg) => Some(leaf(inst, reg, chunk)?),
                _ => None,
            });
        }
        Ok(())
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
        mut leaf: impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
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
        if views.iter().any(|v| matches!(v, Some(View::Reg(_)))) {
            return Ok(false);
        }
        let form = Form::Accumulate {
            value: value.index(),
            op,
        };
        let Some(code) = self.compiled(views, form, compiled) else {
            return Ok(false);
        };
        // The first line is checked when bound; the last one here (lines
        // move by constant steps, so those between lie between them).
        let last = lines.saturating_sub(1) as isize;
        for view in views.iter().flatten() {
            let (k, offset, extent) = match *view {
                View::Input(k, offset) => (k, offset, len),
                View::InputScalar(k, offset) => (k, offset, 1),
                View::Reg(_) => continue,
            };
            let size = inputs.get(k).copied().flatten().map_or(0, HostBuffer::len);
            let step = steps.get(k).copied().unwrap_or(0);
            let at = offset as isize + last * step;
            if at < 0 || at as usize + extent > size {
                return Err(internal("a line outside its input"));
            }
        }
        let slots = self.body.len() + self.outputs.len();
        let mut frame = Frame::new(std::mem::take(storage), slots, len, TILE.min(len));
        bind_leaves(&mut frame, views, inputs, constants)?;
        let dtype = |slot: usize| self.body.dtypes[slot];
        let reads = self
            .home
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h, Home::Arg | Home::Leaf(_)))
            .map(|(slot, _)| (slot, dtype(slot)));
        frame.jit_table(table, reads, [])?;
        // Each slot's stride from a line to the next, in bytes.
        for (slot, inst) in self.body.insts.iter().enumerate() {
            let step = match inst {
                Inst::Load(k) => steps.get(*k as usize).copied().unwrap_or(0),
                _ => 0,
            };
            table.push(std::ptr::without_provenance_mut(
                (step * dtype(slot).size() as isize) as usize,
            ));
        }
        table.resize(2 * slots, std::ptr::null_mut());
        // SAFETY: `table` was checked against this frame (the first line)
        // and every leaf's last line lies in its input (checked above);
        // `acc` holds `len` values of the reduced value's dtype (checked).
        unsafe { code.accumulate_lines(table, acc, lines) };
        *storage = frame.into_storage();
        Ok(true)
    }

    /// Runs one chunk of `len` elements. `leaf` tells where a leaf's chunk
    /// is (a view, or a gather into the given chunk register); `outputs`
    /// are the outputs' elements for this chunk (none for a reduction).
    /// `sink` reads the reduced value: after each tile when `per_tile`,
    /// else once over the whole chunk.
    #[allow(clippy::too_many_arguments)] // the runners' one call site each
    pub fn run(
        &self,
        len: usize,
        inputs: &[Option<&HostBuffer>],
        regs: &mut Registers,
        outputs: Vec<SliceMut<'_>>,
        mut leaf: impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
        mode: Mode,
        mut sink: impl FnMut(&Done<'_, '_>, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let Registers {
            chunk,
            tile,
            tile_len,
            constants,
            views,
            frame: storage,
            table,
            compiled,
        } = regs;
        self.locate_leaves(views, chunk, &mut leaf)?;
        let per_tile = mode.per_tile;
        // Tiles read by the runner are reduced by compiled code when it can.
        let form = match (self.reduced, self.reduce_op) {
            (Some(value), Some(op)) if per_tile => Form::Reduce {
                value: value.index(),
                op,
            },
            (Some(value), Some(op)) => Form::Accumulate {
                value: value.index(),
                op,
            },
            _ => Form::Map,
        };
        let code = match mode.jit {
            true => self.compiled(views, form, compiled),
            false => None,
        };
        // The reduced value's chunk register, unless compiled code reduces it.
        if let Some(Home::Chunk(r)) = self.reduced.map(|v| self.home[v.index()]) {
            if code.is_none() || form == Form::Map {
                chunk.get(r)?;
            }
        }
        let slots = self.body.len() + self.outputs.len();
        let mut frame = Frame::new(std::mem::take(storage), slots, len, TILE.min(len));
        bind_leaves(&mut frame, views, inputs, constants)?;
        // Chunk registers: gathered leaves are read, the reduced value written.
        for (r, buffer) in chunk.buffers.iter_mut().enumerate() {
            let owner = self.home.iter().position(|h| match *h {
                Home::Leaf(Some(g)) | Home::Chunk(g) => g == r,
                _ => false,
            });
            match owner.map(|slot| (slot, self.home[slot], views[slot])) {
                Some((slot, Home::Chunk(_), _)) if buffer.len() >= len => {
                    frame.bind_output(slot, buffer.as_slice_mut())?
                }
                Some((slot, _, Some(View::Reg(_)))) => frame.bind_window(slot, buffer, 0)?,
                _ => {}
            }
        }
        if code.is_none() {
            if tile.is_empty() {
                tile.extend(self.tile_dtypes.iter().map(|&d| TileReg::new(d, *tile_len)));
            }
            let tiles = self
                .home
                .iter()
                .enumerate()
                .filter_map(|(slot, h)| match h {
                    Home::Tile(r) => Some((slot, *r)),
                    _ => None,
                });
            frame.bind_tiles(tile, tiles)?;
        }
        let mut outputs: Vec<Option<SliceMut<'_>>> = outputs.into_iter().map(Some).collect();
        for &(o, slot) in &self.outputs {
            let slice = outputs
                .get_mut(o)
                .and_then(Option::take)
                .ok_or_else(|| internal("a missing output"))?;
            frame.bind_output(slot, slice)?;
        }
        if let Some(code) = code {
            let dtype = |slot: usize| self.body.dtypes[slot];
            let reads = self
                .home
                .iter()
                .enumerate()
                .filter(|(_, h)| matches!(h, Home::Arg | Home::Leaf(_)))
                .map(|(slot, _)| (slot, dtype(slot)));
            let writes: Vec<(usize, DType)> = match form {
                Form::Map => self
                    .jit_writes()
                    .map(|(v, slot)| (slot, dtype(v)))
                    .collect(),
                Form::Reduce { .. } | Form::Accumulate { .. } => Vec::new(),
            };
            frame.jit_table(table, reads, writes)?;
            let reducer = (form != Form::Map).then_some(code);
            let done = Done {
                frame: &frame,
                reducer: reducer.map(|c| (c, table.as_slice(), self.reduced_dtype(), form)),
            };
            // One call per chunk, or per tile when the runner reads tiles
            // (compiled reductions work in tiles themselves).
            let step = if per_tile && reducer.is_none() {
                TILE
            } else {
                len
            };
            let mut start = 0;
            while start < len {
                let n = step.min(len - start);
                if reducer.is_none() {
                    // SAFETY: `table` was checked against this frame just
                    // above, and `start + n <= len`, the frame's chunk length.
                    unsafe { code.call(table, start, n) };
                }
                if per_tile {
                    sink(&done, start, n)?;
                }
                start += n;
            }
            if !per_tile {
                sink(&done, 0, len)?;
            }
        } else {
            let mut start = 0;
            while start < len {
                let n = TILE.min(len - start);
                for step in &self.steps {
                    // SAFETY: `steps::compile` chose each function for an
                    // instruction set this CPU has.
                    unsafe { (step.run)(step, &mut frame, start, n)? };
                }
                if per_tile {
                    sink(&Done::of(&frame), start, n)?;
                }
                start += n;
            }
            if !per_tile {
                sink(&Done::of(&frame), 0, len)?;
            }
        }
        *storage = frame.into_storage();
        Ok(())
    }
}
