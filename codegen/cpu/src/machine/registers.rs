//! A worker's registers for one launch of a machine, and the ones a
//! machine keeps for its next launch.

use lazyfuse_core::{with_dtype, DType, Element, HostBuffer, Literal, Result};

use std::sync::Arc;

use super::{internal, Machine, View, TILE};
use crate::frame::{FrameStorage, TileReg};
use crate::jit::{Form, JitCode};
use crate::stream::Stage;

/// Registers a machine keeps between launches (one per worker that runs
/// it at once, for today's pools).
const KEPT_REGISTERS: usize = 8;

/// Chunk-sized registers, each allocated when first used (most leaves are
/// windows and never need theirs).
#[derive(Debug)]
pub struct ChunkRegs {
    pub(super) buffers: Vec<HostBuffer>,
    pub(super) dtypes: Vec<DType>,
    pub(super) capacity: usize,
    /// What each register holds when it is a gathered line left as it was
    /// (see [`ChunkRegs::holds`]).
    pub(super) gathered: Vec<Option<Gathered>>,
}

/// A line of an input gathered into a register: input, first element,
/// length and stride.
pub type Gathered = (usize, isize, usize, isize);

impl ChunkRegs {
    /// True when register `r` still holds the `line` gathered into it by
    /// [`ChunkRegs::gather_into`] (a line every line of a domain reads,
    /// such as a row broadcast down the columns, is gathered once).
    pub fn holds(&self, r: usize, line: Gathered) -> bool {
        self.gathered.get(r).copied().flatten() == Some(line)
    }

    /// Register `r` to gather `line` into (remembered for [`ChunkRegs::holds`]).
    pub fn gather_into(&mut self, r: usize, line: Gathered) -> Result<&mut HostBuffer> {
        self.get(r)?;
        if let Some(slot) = self.gathered.get_mut(r) {
            *slot = Some(line);
        }
        self.get_unchanged(r)
    }

    /// Register `r`, holding at least a chunk (whatever it held is
    /// forgotten: the caller may write it).
    pub fn get(&mut self, r: usize) -> Result<&mut HostBuffer> {
        if let Some(slot) = self.gathered.get_mut(r) {
            *slot = None;
        }
        self.get_unchanged(r)
    }

    fn get_unchanged(&mut self, r: usize) -> Result<&mut HostBuffer> {
        let (buffer, &dtype) = self
            .buffers
            .get_mut(r)
            .zip(self.dtypes.get(r))
            .ok_or_else(|| internal("a chunk register out of range"))?;
        if buffer.len() < self.capacity {
            let old = std::mem::replace(buffer, crate::spare::take(dtype, self.capacity)?);
            crate::spare::give(old);
        }
        Ok(buffer)
    }
}

impl Drop for ChunkRegs {
    /// The registers go back to this thread's spares, for the next launch.
    fn drop(&mut self) {
        for buffer in self.buffers.drain(..) {
            crate::spare::give(buffer);
        }
    }
}

/// A worker's scratch: registers, the launch's arguments in their value
/// dtypes, and storage reused from chunk to chunk.
#[derive(Debug)]
pub struct Registers {
    pub(super) chunk: ChunkRegs,
    pub(super) tile: Vec<TileReg>,
    /// Elements per tile register.
    pub(super) tile_len: usize,
    /// `(slot, value)` for every argument value.
    pub(super) constants: Vec<(usize, HostBuffer)>,
    pub(super) views: Vec<Option<View>>,
    pub(super) frame: FrameStorage,
    /// The pointer table of compiled code, and the variant used last.
    pub(super) table: Vec<*mut u8>,
    pub(super) compiled: Option<(u64, Form, Arc<JitCode>)>,
    /// Where compiled code writes a tile of each output that is streamed.
    pub(super) stage: Stage,
}

impl Registers {
    /// Registers of nothing (allocates nothing), in place of ones given back.
    pub fn empty() -> Registers {
        Registers {
            chunk: ChunkRegs {
                buffers: Vec::new(),
                dtypes: Vec::new(),
                capacity: 0,
                gathered: Vec::new(),
            },
            tile: Vec::new(),
            tile_len: 0,
            constants: Vec::new(),
            views: Vec::new(),
            frame: FrameStorage::default(),
            table: Vec::new(),
            compiled: None,
            stage: Stage::default(),
        }
    }
}

// SAFETY: the raw pointers a `Registers` holds (`table`, the stage's
// table and the frame storage's slots) point into the buffers of the
// launch that last ran on it, and are written again before every use
// (`Frame::new` unbinds every slot, `Frame::jit_table` and the stage
// rebuild the tables); nothing reads them in between. A `Registers` is
// owned by one worker at a time, so moving it to another thread between
// launches (a machine keeps them for its next launch) shares nothing.
unsafe impl Send for Registers {}

impl Machine {
    /// Scratch for one worker running chunks of at most `len` elements of
    /// a launch with arguments `args` (small launches do not pay for
    /// full-size registers): ones an earlier launch gave back
    /// ([`Machine::give_back`]), else new.
    pub fn registers(&self, len: usize, args: &[Literal]) -> Result<Registers> {
        let len = len.max(1);
        let kept = self.spare.lock().ok().and_then(|mut spare| spare.pop());
        let Some(mut regs) = kept else {
            return self.new_registers(len, args);
        };
        // What the last launch gathered may be of other buffers now.
        regs.chunk.gathered.fill(None);
        regs.chunk.capacity = len;
        regs.tile_len = len.min(TILE);
        let tile_len = regs.tile_len;
        if regs.tile.iter().any(|t| t.capacity() < tile_len) {
            regs.tile.clear();
        }
        for (&(i, k), (_, value)) in self.arg_slots.iter().zip(regs.constants.iter_mut()) {
            let literal = args.get(k).ok_or_else(|| internal("a missing argument"))?;
            with_dtype!(self.body.dtypes[i], T => {
                let slot = T::slice_of_mut(value).and_then(|v| v.first_mut());
                *slot.ok_or_else(|| internal("an argument register"))? = T::from_wide(literal.to_wide());
            });
        }
        Ok(regs)
    }

    /// Keeps a worker's registers for the next launch of this machine (a
    /// few: as many as workers run it at once).
    pub fn give_back(&self, regs: Registers) {
        if let Ok(mut spare) = self.spare.lock() {
            if spare.len() < KEPT_REGISTERS {
                spare.push(regs);
            }
        }
    }

    fn new_registers(&self, len: usize, args: &[Literal]) -> Result<Registers> {
        let chunk = ChunkRegs {
            buffers: self
                .chunk_dtypes
                .iter()
                .map(|&d| HostBuffer::try_zeros(d, 0))
                .collect::<Result<_>>()?,
            dtypes: self.chunk_dtypes.clone(),
            capacity: len,
            gathered: vec![None; self.chunk_dtypes.len()],
        };
        // Tile registers are made when the machine first runs steps (never
        // for launches that run compiled code).
        let tile = Vec::new();
        let tile_len = len.min(TILE);
        let mut constants = Vec::with_capacity(self.arg_slots.len());
        for &(i, k) in &self.arg_slots {
            let literal = args.get(k).ok_or_else(|| internal("a missing argument"))?;
            let value = with_dtype!(self.body.dtypes[i], T => T::into_buffer(vec![T::from_wide(literal.to_wide())]));
            constants.push((i, value));
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
            stage: Stage::default(),
        })
    }
}
