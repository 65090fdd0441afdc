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

use lazyfuse_core::{BinaryOp, DType, Error, HostBuffer, ReduceOp, Result, SliceMut};
use lazyfuse_fusion::{Body, Inst, ValueId};
use smallvec::SmallVec;

use std::sync::Mutex;

use super::frame::{Frame, TileReg};
use super::jit::{Form, Jit};
use super::steps::{self, Step};

mod compiled;
mod registers;

use compiled::call_streaming;
pub use compiled::Done;
pub use registers::{ChunkRegs, Gathered, Registers};

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

/// Instructions of a body that count as one more element's work when an
/// element-wise launch is cut into tasks.
const WEIGHT_UNIT: usize = 16;
/// Simple instructions' worth of one call of a vectorised math loop (the
/// call, its scratch and the function: one more element's worth).
const CALL_COST: usize = WEIGHT_UNIT;
/// Simple instructions' worth of one Philox counter: ten rounds of two
/// 32×32→64-bit products and their mixing, about 60 vector instructions.
const PHILOX_COST: usize = 64;

/// The elements' worth of work one element of `body` is (at least 1): a
/// simple instruction is 1/`WEIGHT_UNIT`, the generator `PHILOX_COST`
/// times that, a call of the machine's loops (a math function) `CALL_COST`
/// times. A launch goes parallel, and an element-wise one takes smaller
/// tasks, by its weighted size: a random array of 10^5 elements is as much
/// work as a sum of 10^6, and Black–Scholes over 10^4 options (six math
/// functions an element) goes parallel (98 → 81 µs a demand).
fn body_weight(body: &Body) -> usize {
    let cost: usize = body
        .insts
        .iter()
        .map(|inst| match inst {
            Inst::Binary(BinaryOp::Philox, ..) => PHILOX_COST,
            // A block per four counters of a run.
            Inst::Binary(BinaryOp::PhiloxWord, ..) => PHILOX_COST / 4,
            Inst::Binary(BinaryOp::PhiloxPair, ..) => PHILOX_COST / 2,
            _ => 1,
        })
        .sum::<usize>()
        + CALL_COST * crate::jit::calls(body);
    1 + cost / WEIGHT_UNIT
}

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
    /// Write the outputs of compiled code with streaming stores
    /// (`super::stream`); ignored by the steps and by reductions.
    pub stream: bool,
}

/// A leaf's slot, and the chunk register it is gathered into when it must be.
type Leaf = (usize, Option<usize>);

/// Binds the slots of `leaves` located (`views`) in a window or a
/// broadcast element, and of the arguments.
fn bind_leaves<'a>(
    frame: &mut Frame<'a>,
    (leaves, views): (&[Leaf], &[Option<View>]),
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
    for &(slot, _) in leaves {
        match views.get(slot).copied().flatten() {
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

/// The value whose home each of `count` chunk registers is.
fn chunk_owners(home: &[Home], count: usize) -> Vec<usize> {
    let mut owners = vec![0; count];
    for (slot, h) in home.iter().enumerate() {
        if let Home::Leaf(Some(r)) | Home::Chunk(r) = *h {
            owners[r] = slot;
        }
    }
    owners
}

/// A body ready to run: where each value lives, and its steps.
#[derive(Debug)]
pub struct Machine {
    body: Body,
    home: Vec<Home>,
    chunk_dtypes: Vec<DType>,
    /// The value whose home each chunk register is.
    chunk_owners: Vec<usize>,
    tile_dtypes: Vec<DType>,
    /// The operations in order, then copies into outputs that are not
    /// written in place.
    steps: Vec<Step>,
    /// The leaves (located per chunk) in order, each with its chunk
    /// register to gather into, and the arguments, each with its index: a
    /// chunk's work on them does not walk the whole body (an unrolled
    /// reduction's is hundreds of values).
    leaves: Vec<Leaf>,
    arg_slots: Vec<(usize, usize)>,
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
    /// The body's work per element (`body_weight`), weighed once: an
    /// unrolled reduction's body is hundreds of instructions.
    weight: usize,
    /// Registers of finished launches, for the next: a small launch's
    /// fixed cost is mostly making them (an unrolled reduction has a
    /// chunk register per leaf and a constant per argument).
    spare: Mutex<Vec<Registers>>,
}

impl Machine {
    /// Compiles `body` whose values `outputs` are stored (an element-wise
    /// kernel) or whose value `reduced` is reduced (`op`: its built-in
    /// combination when the accumulator has the value's dtype).
    /// `fixed[k]` says input `k` is one element read everywhere.
    pub fn new(
        body: &Body,
        fixed: &[bool],
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
        let (fixed, leaves): (Vec<usize>, Vec<usize>) = (0..n)
            .filter(|&i| matches!(body.insts[i], Inst::Load(_) | Inst::Iota(_)))
            .partition(|&i| match body.insts[i] {
                Inst::Load(k) => fixed.get(k as usize).copied().unwrap_or(false),
                _ => false,
            });
        // Nothing stored and nothing reduced by an operation: no code.
        let jit = (!stored.is_empty() || op.is_some())
            .then(|| Jit::new(body, stored, (leaves, fixed), n + outputs.len()).ok())
            .flatten();
        Ok(Machine {
            body: body.clone(),
            chunk_owners: chunk_owners(&home, chunk_dtypes.len()),
            leaves: home
                .iter()
                .enumerate()
                .filter_map(|(i, h)| match *h {
                    Home::Leaf(reg) => Some((i, reg)),
                    _ => None,
                })
                .collect(),
            arg_slots: body
                .insts
                .iter()
                .enumerate()
                .filter_map(|(i, inst)| match inst {
                    Inst::Arg(k) => Some((i, *k as usize)),
                    _ => None,
                })
                .collect(),
            home,
            chunk_dtypes,
            tile_dtypes,
            steps,
            outputs: bound,
            output_values: outputs.iter().map(|v| v.index()).collect(),
            reduced,
            reduce_op: op.filter(|_| reduced.is_some()),
            jit,
            weight: body_weight(body),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// The body's work per element, in elements (see `body_weight`).
    pub fn weight(&self) -> usize {
        self.weight
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

    /// Binds each output's slot to its slice with `bind`.
    fn bind_outputs<'a>(
        &self,
        frame: &mut Frame<'a>,
        outputs: Vec<SliceMut<'a>>,
        bind: impl Fn(&mut Frame<'a>, usize, SliceMut<'a>) -> Result<()>,
    ) -> Result<()> {
        let mut outputs: Vec<Option<SliceMut<'a>>> = outputs.into_iter().map(Some).collect();
        for &(o, slot) in &self.outputs {
            let slice = outputs
                .get_mut(o)
                .and_then(Option::take)
                .ok_or_else(|| internal("a missing output"))?;
            bind(frame, slot, slice)?;
        }
        Ok(())
    }

    /// One view per value: where `leaf` locates each leaf, `None` for the
    /// others (which stay `None` from one chunk to the next: only the
    /// leaves' entries are written).
    fn locate_leaves(
        &self,
        views: &mut Vec<Option<View>>,
        chunk: &mut ChunkRegs,
        leaf: &mut impl FnMut(&Inst, Option<usize>, &mut ChunkRegs) -> Result<View>,
    ) -> Result<()> {
        if views.len() != self.body.len() {
            views.clear();
            views.resize(self.body.len(), None);
        }
        for &(slot, reg) in &self.leaves {
            views[slot] = Some(leaf(&self.body.insts[slot], reg, chunk)?);
        }
        Ok(())
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
            stage,
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
        bind_leaves(&mut frame, (&self.leaves, views), inputs, constants)?;
        // Chunk registers: gathered leaves are read, the reduced value written.
        for (buffer, &slot) in chunk.buffers.iter_mut().zip(&self.chunk_owners) {
            match (self.home[slot], views[slot]) {
                (Home::Chunk(_), _) if buffer.len() >= len => {
                    frame.bind_output(slot, buffer.as_slice_mut())?
                }
                (_, Some(View::Reg(_))) => frame.bind_window(slot, buffer, 0)?,
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
        self.bind_outputs(&mut frame, outputs, Frame::bind_output)?;
        if let Some((code, scalar)) = code {
            let dtype = |slot: usize| self.body.dtypes[slot];
            let reads = self.jit_reads(scalar);
            let writes: SmallVec<[(usize, DType); 4]> = match form {
                Form::Map | Form::MapLines => self
                    .jit_writes()
                    .map(|(v, slot)| (slot, dtype(v)))
                    .collect(),
                Form::Reduce { .. } | Form::Accumulate { .. } => SmallVec::new(),
            };
            frame.jit_table(table, reads, writes.iter().copied())?;
            let streaming = form == Form::Map && mode.stream && self.reduced.is_none();
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
                if streaming {
                    // SAFETY: as below, with `writes` the slots the code
                    // writes (checked by `jit_table` too).
                    unsafe { call_streaming(code, table, &writes, stage, start, start + n)? };
                } else if reducer.is_none() {
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
