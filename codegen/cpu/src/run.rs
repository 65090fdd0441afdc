//! Fast execution of element-wise launches: the register machine over
//! chunks, in parallel over fixed-size tasks (reductions: `reduce`).
//!
//! Tasks have fixed boundaries (independent of the thread count), and
//! reductions combine task results in a fixed order, so results do not
//! depend on the number of threads (`tasks` shares them out).

use lazyfuse_core::{with_slice_mut, DType, Element, Error, HostBuffer, Result, SliceMut};
use lazyfuse_fusion::{Inst, Launch};
use smallvec::SmallVec;

use super::interp::{self, Space};
use super::machine::{ChunkRegs, Done, Machine, Mode, Registers, View, CHUNK, JIT_CHUNK};
use super::settings::CpuSettings;
use super::stream;
use super::tasks::{balanced_task, for_each_task, workers};

/// Elements per parallel task (a multiple of `CHUNK`): 64 Ki elements.
pub const TASK: usize = 8 * CHUNK;
/// Element-wise tasks start at multiples of this many elements (a 512-byte
/// multiple for every dtype: whole cache lines and vectors).
const TASK_GRANULE: usize = 512;
/// Lines shorter than this are walked in chunks spanning several lines.
const SHORT_LINE: usize = 256;
/// The shortest lines compiled code takes several of in one call (one
/// vector iteration's worth).
const LINE_CALL_MIN: usize = 16;
fn internal(message: &str) -> Error {
    Error::internal("cpu backend", message)
}

/// An output's buffer: element-wise kernels write every element.
fn allocate(dtype: DType, len: usize) -> Result<HostBuffer> {
    crate::pages::for_overwrite(dtype, len)
}

/// Produces the view of a `Load` or `Iota` of one chunk.
struct Leaves<'a> {
    space: &'a Space,
    inputs: &'a [Option<&'a HostBuffer>],
}

impl Leaves<'_> {
    /// The view of a leaf over a chunk made of `lens.len()` line segments,
    /// segment `s` of `lens[s]` elements starting, for input `k`, at
    /// element `starts[s * inputs + k]`.
    fn view(
        &self,
        inst: &Inst,
        reg: Option<usize>,
        regs: &mut ChunkRegs,
        starts: &[isize],
        lens: &[usize],
        len: usize,
    ) -> Result<View> {
        let n = self.inputs.len();
        match inst {
            Inst::Load(k) => {
                let k = *k as usize;
                let buffer = self
                    .inputs
                    .get(k)
                    .copied()
                    .flatten()
                    .ok_or_else(|| internal("missing input"))?;
                if buffer.len() == 1 {
                    return Ok(View::InputScalar(k, 0));
                }
                let stride = self.space.inner_stride(k);
                let at = |s: usize| starts[s * n + k];
                let first = at(0);
                // Whether the segments continue one another (a window) or
                // all read one element (a broadcast value).
                let (mut window, mut constant, mut next) = (stride == 1, stride == 0, first);
                for (s, &l) in lens.iter().enumerate() {
                    let base = at(s);
                    if !interp::in_bounds(base, stride, l, buffer.len()) {
                        return Err(internal("a read outside an input"));
                    }
                    window &= base == next;
                    constant &= base == first;
                    next = base + l as isize * stride;
                }
                if constant {
                    return Ok(View::InputScalar(k, first as usize));
                }
                if window {
                    return Ok(View::Input(k, first as usize));
                }
                let r = reg.ok_or_else(|| internal("a strided load without a register"))?;
                if let [len] = *lens {
                    // One line: kept for the next chunk if it reads the same.
                    let line = (k, first, len, stride);
                    if !regs.holds(r, line) {
                        gather(
                            buffer,
                            regs.gather_into(r, line)?,
                            [(first, len)].into_iter(),
                            stride,
                        )?;
                    }
                    return Ok(View::Reg(r));
                }
                let lines = lens.iter().enumerate().map(|(s, &l)| (at(s), l));
                gather(buffer, regs.get(r)?, lines, stride)?;
                Ok(View::Reg(r))
            }
            Inst::Iota(k) => {
                let k = *k as usize;
                let stride = self.space.inner_stride(k) as i64;
                let r = reg.ok_or_else(|| internal("an iota without a register"))?;
                let out = i64::slice_of_mut(regs.get(r)?)
                    .and_then(|o| o.get_mut(..len))
                    .ok_or_else(|| internal("iota register"))?;
                let mut done = 0;
                for (s, &l) in lens.iter().enumerate() {
                    let base = starts[s * n + k] as i64;
                    let segment = &mut out[done..done + l];
                    if stride == 1 {
                        // The common case (a random array's counters), an
                        // add only: it vectorises without a 64-bit multiply.
                        for (o, i) in segment.iter_mut().zip(base..) {
                            *o = i;
                        }
                    } else {
                        for (i, o) in segment.iter_mut().enumerate() {
                            *o = base + i as i64 * stride;
                        }
                    }
                    done += l;
                }
                Ok(View::Reg(r))
            }
            _ => Err(internal("a parameter in a kernel body")),
        }
    }
}

/// Walks a launch's domain chunk by chunk: the iteration space, the current
/// line's base offsets and one worker's registers.
pub(crate) struct Walker<'a> {
    machine: &'a Machine,
    inputs: &'a [Option<&'a HostBuffer>],
    space: &'a Space,
    line: usize,
    bases: Vec<isize>,
    regs: Registers,
    jit: bool,
    /// Compiled code writes outputs with streaming stores.
    stream: bool,
    /// The longest chunk (of a line that is not short).
    chunk: usize,
    /// The current chunk's line segments: their lengths, and where each
    /// input starts in each (`starts[segment * inputs + input]`).
    lens: Vec<usize>,
    starts: Vec<isize>,
}

impl<'a> Walker<'a> {
    /// A walker for one worker: chunks of up to [`JIT_CHUNK`] elements
    /// with compiled code or when `long` (whatever runs them, chunks then
    /// end at the same places), else [`CHUNK`]; registers for chunks of at
    /// most `longest`.
    pub(crate) fn new(
        machine: &'a Machine,
        launch: &'a Launch,
        inputs: &'a [Option<&'a HostBuffer>],
        space: &'a Space,
        longest: usize,
        jit: bool,
        long: bool,
    ) -> Result<Self> {
        let chunk = if jit || long { JIT_CHUNK } else { CHUNK };
        Ok(Walker {
            jit,
            stream: false,
            chunk,
            machine,
            inputs,
            space,
            line: usize::MAX,
            bases: Vec::new(),
            regs: machine.registers(longest.min(chunk), &launch.args)?,
            lens: Vec::new(),
            starts: Vec::new(),
        })
    }

    /// The walker, writing outputs of compiled code with streaming stores
    /// when `on` (see `super::stream`).
    pub(crate) fn streaming(mut self, on: bool) -> Self {
        self.stream = on;
        self
    }

    /// Length of the chunk at `position`: at most `CHUNK`, at most `limit`,
    /// and within its line unless lines are short (then a chunk spans
    /// several, so that short lines do not mean short passes).
    pub(crate) fn chunk_len(&self, position: usize, limit: usize) -> usize {
        let line_len = self.space.line_len();
        if line_len < SHORT_LINE {
            return CHUNK.min(limit);
        }
        self.chunk.min(line_len - position % line_len).min(limit)
    }

    /// How many whole lines from `position` (a line's start) one
    /// [`Walker::accumulate_lines`] call may take: at most `limit`, within
    /// one run of lines (0 when the lines are short, or `position` is not
    /// a line's start).
    pub(crate) fn lines_from(&self, position: usize, limit: usize) -> usize {
        let line_len = self.space.line_len();
        if !(LINE_CALL_MIN..=CHUNK).contains(&line_len) || !position.is_multiple_of(line_len) {
            return 0;
        }
        self.space.lines_in_run(position / line_len).min(limit)
    }

    /// How many whole lines from `position` one [`Walker::map_lines`] call
    /// may take: at most `limit` and a compiled chunk's worth, within one
    /// run of lines; 0 when lines are shorter than a vector iteration or
    /// too long for two to a chunk, or `position` is not a line's start.
    pub(crate) fn map_lines_from(&self, position: usize, limit: usize) -> usize {
        let line_len = self.space.line_len();
        let fits = (LINE_CALL_MIN..=JIT_CHUNK / 2).contains(&line_len);
        if !self.jit || !fits || !position.is_multiple_of(line_len) {
            return 0;
        }
        let lines = self.space.lines_in_run(position / line_len);
        lines.min(limit).min(JIT_CHUNK / line_len)
    }

    /// Sets the chunk to the whole line at `position` (a line's start),
    /// whose leaves the line forms locate; the line's length and each
    /// input's step from a line to the next.
    fn start_lines(&mut self, position: usize) -> (usize, SmallVec<[isize; 8]>) {
        let len = self.space.line_len();
        let line = position / len;
        if line != self.line {
            self.line = line;
            self.bases = self.space.bases(line);
        }
        let inputs = self.inputs.len();
        self.lens.clear();
        self.lens.push(len);
        self.starts.clear();
        self.starts.extend(self.bases.iter().copied().take(inputs));
        let steps = (0..inputs).map(|k| self.space.line_step(k)).collect();
        (len, steps)
    }

    /// Computes `lines` whole lines from `position` (see
    /// [`Walker::map_lines_from`]) with one call of compiled code, writing
    /// `outputs` (their elements of those lines); `Ok(false)`, having run
    /// nothing, when it cannot (the caller then runs chunks).
    pub(crate) fn map_lines(
        &mut self,
        position: usize,
        lines: usize,
        outputs: Vec<SliceMut<'_>>,
    ) -> Result<bool> {
        let (len, steps) = self.start_lines(position);
        let leaves = Leaves {
            space: self.space,
            inputs: self.inputs,
        };
        let (starts, lens) = (&self.starts, &self.lens);
        self.machine.map_lines(
            len,
            self.inputs,
            &mut self.regs,
            outputs,
            |inst, reg, regs| leaves.view(inst, reg, regs, starts, lens, len),
            &steps,
            lines,
        )
    }

    /// Combines the reduced value of `lines` whole lines from `position`
    /// (see [`Walker::lines_from`]) into `acc` (a line's width) with one
    /// call of compiled code; `Ok(false)`, having run nothing, when it
    /// cannot (the caller then walks the lines one by one).
    pub(crate) fn accumulate_lines<T: Element>(
        &mut self,
        position: usize,
        lines: usize,
        acc: &mut [T],
    ) -> Result<bool> {
        if !self.jit {
            return Ok(false);
        }
        let (len, steps) = self.start_lines(position);
        let leaves = Leaves {
            space: self.space,
            inputs: self.inputs,
        };
        let (starts, lens) = (&self.starts, &self.lens);
        self.machine.accumulate_lines(
            len,
            self.inputs,
            &mut self.regs,
            |inst, reg, regs| leaves.view(inst, reg, regs, starts, lens, len),
            &steps,
            lines,
            acc,
        )
    }

    /// Runs the body over `len` elements from linear `position` (in the
    /// space's order), writing `outputs` (this chunk's elements of each);
    /// `sink` reads the reduced value per tile (`per_tile`) or per chunk.
    pub(crate) fn run(
        &mut self,
        position: usize,
        len: usize,
        outputs: Vec<SliceMut<'_>>,
        per_tile: bool,
        sink: impl FnMut(&Done<'_, '_>, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let line_len = self.space.line_len();
        let offset = position % line_len;
        let inputs = self.inputs.len();
        self.lens.clear();
        self.starts.clear();
        if offset + len <= line_len {
            if position / line_len != self.line {
                self.line = position / line_len;
                self.bases = self.space.bases(self.line);
            }
            self.lens.push(len);
            self.starts
                .extend((0..inputs).map(|k| self.space.at(&self.bases, k, offset)));
        } else {
            let line = position / line_len;
            let mut index = self.space.line_index(line);
            let mut bases = self.space.bases(line);
            let (mut done, mut at) = (0, offset);
            loop {
                let segment = (line_len - at).min(len - done);
                self.lens.push(segment);
                self.starts
                    .extend((0..inputs).map(|k| self.space.at(&bases, k, at)));
                done += segment;
                if done == len {
                    break;
                }
                self.space.next_line(&mut index, &mut bases);
                at = 0;
            }
        }
        let leaves = Leaves {
            space: self.space,
            inputs: self.inputs,
        };
        let (starts, lens) = (&self.starts, &self.lens);
        self.machine.run(
            len,
            self.inputs,
            &mut self.regs,
            outputs,
            |inst, reg, regs| leaves.view(inst, reg, regs, starts, lens, len),
            Mode {
                jit: self.jit,
                per_tile,
                stream: self.stream,
            },
            sink,
        )
    }
}

impl Drop for Walker<'_> {
    /// The registers go back to the machine, for its next launch.
    fn drop(&mut self) {
        let regs = std::mem::replace(&mut self.regs, Registers::empty());
        self.machine.give_back(regs);
    }
}

/// Elements `at..at + len` of each output slice.
fn output_pieces<'a>(
    slices: &'a mut [SliceMut<'_>],
    at: usize,
    len: usize,
) -> Result<Vec<SliceMut<'a>>> {
    slices
        .iter_mut()
        .map(|slice| {
            with_slice_mut!(slice, s => s.get_mut(at..at + len).map(|p| Element::wrap_mut(p)))
                .ok_or_else(|| internal("an output chunk outside its task"))
        })
        .collect()
}

/// Copies lines of `(base, len)` elements `stride` apart into the
/// register, one after another from its start.
fn gather(
    buffer: &HostBuffer,
    reg: &mut HostBuffer,
    lines: impl Iterator<Item = (isize, usize)>,
    stride: isize,
) -> Result<()> {
    // One dtype dispatch per chunk, not per line: a chunk of a reduction
    // over a short axis is thousands of lines of a few elements.
    lazyfuse_core::with_buffer!(buffer, src => {
        let dst: &mut [_] = Element::slice_of_mut(reg).ok_or_else(|| internal("gather register"))?;
        let mut at = 0;
        for (base, len) in lines {
            let line = dst
                .get_mut(at..at + len)
                .ok_or_else(|| internal("gather register"))?;
            if stride == 1 {
                let from = usize::try_from(base).map_err(|_| internal("a read outside an input"))?;
                let from = src
                    .get(from..from + len)
                    .ok_or_else(|| internal("a read outside an input"))?;
                line.copy_from_slice(from);
            } else {
                for (i, d) in line.iter_mut().enumerate() {
                    *d = src[(base + i as isize * stride) as usize];
                }
            }
            at += len;
        }
        Ok(())
    })
}

/// Runs an element-wise launch. Output `i` is written into the caller's
/// slice where `external` holds `(i, slice)`, else into a new buffer; the
/// new buffers are returned (`None` for the external ones).
pub fn elementwise(
    machine: &Machine,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
    settings: &CpuSettings,
    external: Vec<(usize, SliceMut<'_>)>,
) -> Result<Vec<Option<HostBuffer>>> {
    let kernel = &launch.kernel;
    let n = launch.domain_len();
    let mut external_slices: Vec<Option<SliceMut<'_>>> =
        (0..kernel.outputs.len()).map(|_| None).collect();
    for (i, slice) in external {
        let fits =
            slice.len() == n && i < kernel.outputs.len() && slice.dtype() == kernel.output_dtype(i);
        match external_slices.get_mut(i) {
            Some(place @ None) if fits => *place = Some(slice),
            _ => {
                return Err(internal(
                    "an output slice of the wrong dtype or length, or given twice",
                ))
            }
        }
    }
    let mut outputs: Vec<Option<HostBuffer>> = external_slices
        .iter()
        .enumerate()
        .map(|(i, external)| {
            external
                .is_none()
                .then(|| allocate(kernel.output_dtype(i), n))
                .transpose()
        })
        .collect::<Result<_>>()?;
    if n == 0 {
        return Ok(outputs);
    }
    let space = Space::natural(launch);
    let jit = machine.jit_wanted(n, settings.jit);
    let read: usize = inputs
        .iter()
        .flatten()
        .map(|b| b.len().saturating_mul(b.dtype().size()))
        .fold(0, usize::saturating_add);
    let written = (0..kernel.outputs.len())
        .map(|i| kernel.output_dtype(i).size())
        .sum::<usize>()
        .saturating_mul(n);
    let stream = jit && stream::wanted(read.saturating_add(written), settings);
    // Heavy bodies (an unrolled reduction: hundreds of operations per
    // element) take smaller tasks and go parallel at fewer elements: a
    // task is about `TASK` elements' worth of simple operations.
    let weight = machine.weight();
    let work = n.saturating_mul(weight);
    let most = (TASK / weight / CHUNK).max(1) * CHUNK;
    let task = balanced_task(n, most, workers(pool, work), TASK_GRANULE);
    // tasks[t][o]: output o's slice for task t.
    let mut per_output: Vec<std::vec::IntoIter<SliceMut<'_>>> = outputs
        .iter_mut()
        .zip(external_slices)
        .map(|(b, external)| match (b, external) {
            (Some(buffer), _) => buffer.as_slice_mut().chunks(task).into_iter(),
            (None, external) => external
                .map(|s| s.chunks(task))
                .unwrap_or_default()
                .into_iter(),
        })
        .collect();
    let tasks: Vec<Vec<SliceMut<'_>>> = (0..n.div_ceil(task))
        .map(|_| per_output.iter_mut().filter_map(Iterator::next).collect())
        .collect();
    let walker = || {
        Walker::new(machine, launch, inputs, &space, n.min(task), jit, false)
            .map(|w| w.streaming(stream))
    };
    for_each_task(pool, work, tasks, walker, |walker, t, mut slices| {
        let start = t * task;
        let end = (start + task).min(n);
        let mut position = start;
        while position < end {
            // Whole lines, several to a call of compiled code (streamed
            // stores only in chunks: they pay off on long lines).
            let lines = walker.map_lines_from(position, (end - position) / space.line_len());
            if lines > 1 && !(stream && space.line_len() >= SHORT_LINE) {
                let len = lines * space.line_len();
                let pieces = output_pieces(&mut slices, position - start, len)?;
                if walker.map_lines(position, lines, pieces)? {
                    position += len;
                    continue;
                }
            }
            let len = walker.chunk_len(position, end - position);
            let pieces = output_pieces(&mut slices, position - start, len)?;
            walker.run(position, len, pieces, false, |_, _, _| Ok(()))?;
            position += len;
        }
        Ok(())
    })?;
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_launch_goes_parallel_at_one_tasks_worth() {
        assert_eq!(super::super::tasks::PARALLEL_MIN, super::TASK);
    }
}
