//! Fast execution of element-wise launches: the register machine over
//! chunks, in parallel over fixed-size tasks (reductions: `reduce`).
//!
//! Tasks have fixed boundaries (independent of the thread count), and
//! reductions combine task results in a fixed order, so results do not
//! depend on the number of threads. Below `PARALLEL_MIN` elements a launch
//! runs on the calling thread: small arrays pay no thread hand-off.

use lazyfuse_core::{with_slice_mut, DType, Element, Error, HostBuffer, Result, SliceMut};
use lazyfuse_fusion::{Inst, Launch};
use rayon::prelude::*;

use super::interp::{self, Space};
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
pub(crate) fn for_each_task<W: Send>(
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
pub(crate) struct Walker<'a> {
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
    pub(crate) fn new(
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
    pub(crate) fn chunk_len(&self, position: usize, limit: usize) -> usize {
        let line_len = self.space.line_len();
        CHUNK.min(line_len - position % line_len).min(limit)
    }

    /// Runs the body over `len` elements from linear `position` (in the
    /// space's order); the last value goes into `direct` when given.
    pub(crate) fn run(
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
