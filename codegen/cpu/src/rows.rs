//! Row programs (`FusedKernel::stages`) on the CPU: a tile of rows at a
//! time, each stage's reduction over the tile into a row buffer of the
//! tile's rows, then the outputs, before the next tile — so each stage
//! reads the tile from cache, not memory. The stages and the outputs are
//! kernels of their own (`lazyfuse_fusion::rows::tile_split`: a costly
//! value several of them read, as softmax's `exp(x - max)`, is computed
//! once into a tile buffer by a part of its own), each run by the
//! register machine or compiled code as any kernel is; tiles run in
//! parallel, each on one worker from start to end.

use std::sync::Arc;

use lazyfuse_core::shape::contiguous_strides;
use lazyfuse_core::{DType, HostBuffer, Result, SliceMut};
use lazyfuse_fusion::rows::{row_strides, Source, Writes};
use lazyfuse_fusion::{FusedKernel, InputBinding, Launch};

use super::machine::Machine;
use super::settings::CpuSettings;
use super::tasks::{balanced_task, for_each_task, workers};
use super::{interp, reduce, run};

/// One kernel of a row program's `tile_split`, with its register machine.
#[derive(Clone, Copy)]
pub(crate) struct Part<'a> {
    pub(crate) kernel: &'a Arc<FusedKernel>,
    pub(crate) machine: &'a Machine,
    pub(crate) sources: &'a [Source],
    pub(crate) writes: &'a Writes,
}

fn internal(message: &str) -> lazyfuse_core::Error {
    lazyfuse_core::Error::internal("cpu backend", message)
}

/// Bytes of a tile per value read or written (at least one row along the
/// first axis): softmax's input, stored `exp` and output take 768 KiB,
/// inside a core's L2 (1–2 MiB on today's servers). Tiles of 128 KiB of
/// float32 cost the parts' fixed costs (about 2 µs of a core each) twice
/// as often.
const TILE_BYTES: usize = 256 << 10;

/// Indices of the first axis in one tile of `launch`'s domain: all of
/// them for a column program (the first axis is reduced), which runs as
/// one tile.
pub(crate) fn tile_rows(launch: &Launch) -> usize {
    if launch.kernel.reduces_leading_axes() {
        return launch.domain.first().copied().unwrap_or(1).max(1);
    }
    let kernel = &launch.kernel;
    let widest = (kernel.inputs.iter().map(|input| input.dtype.size()))
        .chain((0..kernel.outputs.len()).map(|j| kernel.output_dtype(j).size()))
        .max()
        .unwrap_or(1);
    let inner: usize = launch.domain[1..].iter().product();
    (TILE_BYTES / widest.max(1) / inner.max(1)).max(1)
}

/// The shape each output of a row program's `launch` covers: its domain,
/// with the reduced axes of length 1 when it writes per row (a column
/// program's first axis then has length 1: it is one tile).
fn written_shape(launch: &Launch) -> Vec<usize> {
    let axes = launch.kernel.reduced_axes().unwrap_or(&[]);
    (0..launch.domain.len())
        .map(|a| match launch.kernel.per_row && axes.contains(&a) {
            true => 1,
            false => launch.domain[a],
        })
        .collect()
}

/// Runs a row program's `launch`, whose `tile_split` is `parts` (with
/// `stored` values): its outputs go into `outs` where given (`(output,
/// slice)`), the others into new buffers (returned in order).
pub(crate) fn run(
    (parts, stored): (&[Part<'_>], &[DType]),
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    outs: Vec<(usize, SliceMut<'_>)>,
    (pool, settings): (Option<&rayon::ThreadPool>, &CpuSettings),
) -> Result<Vec<Option<HostBuffer>>> {
    // Elements of an output per index of the first axis: of the whole
    // domain, or of the rows' (kept) axes for outputs written per row.
    // Each element is read once per stage and once more: in parallel as
    // soon as those passes together are worth it.
    let passes = launch.kernel.stages.len() + 1;
    let total = launch.domain_len().saturating_mul(passes);
    // Tiles shared evenly by the workers (each row is reduced on its own,
    // so the tiling never changes a value; a column program is one tile).
    let most = tile_rows(launch);
    let tile_rows = match launch.kernel.reduces_leading_axes() {
        true => most,
        false => balanced_task(launch.domain[0], most, workers(pool, total), 1),
    };
    let inner = written_shape(launch)[1..].iter().product::<usize>();
    let out_len: usize = written_shape(launch).iter().product();
    let tiles = launch.domain[0].div_ceil(tile_rows);

    // Every output's slice: the caller's, or one of a new buffer.
    let count = launch.kernel.outputs.len();
    let mut given: Vec<Option<SliceMut<'_>>> = (0..count).map(|_| None).collect();
    for (j, slice) in outs {
        if let Some(entry) = given.get_mut(j) {
            *entry = Some(slice);
        }
    }
    let mut fresh: Vec<Option<HostBuffer>> = (0..count)
        .map(|j| match given[j] {
            Some(_) => Ok(None),
            // Every tile writes its rows of every output.
            None => crate::pages::for_overwrite(launch.kernel.output_dtype(j), out_len).map(Some),
        })
        .collect::<Result<_>>()?;
    if launch.domain_len() == 0 {
        return Ok(fresh);
    }
    let mut per_tile: Vec<Vec<(usize, SliceMut<'_>)>> = (0..tiles).map(|_| Vec::new()).collect();
    for (j, (given, fresh)) in given.into_iter().zip(fresh.iter_mut()).enumerate() {
        let slice = match (given, fresh) {
            (Some(slice), _) => slice,
            (None, Some(buffer)) => buffer.as_slice_mut(),
            (None, None) => return Err(internal("an output without memory")),
        };
        if slice.len() != out_len {
            return Err(internal("an output slice of the wrong length"));
        }
        for (t, chunk) in slice.chunks(tile_rows * inner).into_iter().enumerate() {
            per_tile[t].push((j, chunk));
        }
    }

    let work: Vec<(usize, Vec<(usize, SliceMut<'_>)>)> = per_tile.into_iter().enumerate().collect();
    let tile = Tile {
        // One tile: its launches may use the workers themselves.
        pool: if tiles == 1 { pool } else { None },
        settings,
        launch,
        inputs,
        parts,
        stored,
        tile_rows,
    };
    for_each_task(
        pool,
        total,
        work,
        || Ok(crate::spare::Kept::default()),
        |scratch, _, (t, outs)| tile.run(&mut scratch.0, t, outs),
    )?;
    Ok(fresh)
}

/// What every tile of one launch shares (a tile runs on one worker, or
/// the only tile on all of them).
struct Tile<'a> {
    pool: Option<&'a rayon::ThreadPool>,
    settings: &'a CpuSettings,
    launch: &'a Launch,
    inputs: &'a [Option<&'a HostBuffer>],
    parts: &'a [Part<'a>],
    /// The dtype of each value stored for a tile.
    stored: &'a [DType],
    tile_rows: usize,
}

impl Tile<'_> {
    /// The launch of `part` over rows `first..first + rows` of the first
    /// axis, its inputs as its sources say.
    fn sub_launch(&self, part: &Part<'_>, first: usize, rows: usize) -> Launch {
        let launch = self.launch;
        let mut domain = launch.domain.clone();
        domain[0] = rows;
        let axes = launch.kernel.reduced_axes().unwrap_or(&[]);
        if launch.kernel.per_row && matches!(part.writes, Writes::Outputs) {
            // Outputs of the row values alone: one element per row.
            for &a in axes {
                domain[a] = 1;
            }
        }
        let inputs = part
            .sources
            .iter()
            .map(|source| match *source {
                Source::Input(k) => {
                    let binding = &launch.inputs[k];
                    let shift = binding.strides.first().copied().unwrap_or(0) * first as isize;
                    InputBinding {
                        offset: (binding.offset as isize + shift) as usize,
                        ..binding.clone()
                    }
                }
                Source::Row(_) => InputBinding {
                    buffer: None,
                    offset: 0,
                    strides: row_strides(&domain, axes),
                },
                Source::Stored(_) => InputBinding {
                    buffer: None,
                    offset: 0,
                    strides: contiguous_strides(&domain)
                        .iter()
                        .map(|&s| s as isize)
                        .collect(),
                },
            })
            .collect();
        Launch {
            kernel: Arc::clone(part.kernel),
            domain,
            inputs,
            args: launch.args.clone(),
            // The demand's values are in `args` already.
            bound: Vec::new(),
            outputs: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// Runs tile `t`, its outputs into `outs`; `stored` is the worker's
    /// buffers of the stored values, kept from one tile to the next
    /// (allocated for a whole tile at the worker's first).
    fn run(
        &self,
        stored: &mut Vec<HostBuffer>,
        t: usize,
        outs: Vec<(usize, SliceMut<'_>)>,
    ) -> Result<()> {
        let first = t * self.tile_rows;
        let rows = self.tile_rows.min(self.launch.domain[0] - first);
        let (pool, settings) = (self.pool, self.settings);
        if stored.is_empty() {
            let whole: usize = self.tile_rows * self.launch.domain[1..].iter().product::<usize>();
            *stored = self
                .stored
                .iter()
                .map(|&dtype| crate::spare::take(dtype, whole))
                .collect::<Result<_>>()?;
        }
        let stages = self.launch.kernel.stages.len();
        let mut row_values: Vec<Option<HostBuffer>> = (0..stages).map(|_| None).collect();
        let mut outs = Some(outs);
        for part in self.parts {
            let sub = self.sub_launch(part, first, rows);
            if let Writes::Stored(values) = part.writes {
                self.store(part, &sub, values, stored, &row_values)?;
                continue;
            }
            let inputs = self.part_inputs(part, &row_values, stored);
            match part.writes {
                Writes::Row(k) => {
                    let row =
                        match reduce::reduction(part.machine, &sub, &inputs, pool, settings.jit)? {
                            Some(row) => row,
                            None => interp::run_generic(&sub, &inputs)?
                                .pop()
                                .ok_or_else(|| internal("a stage without its row values"))?,
                        };
                    row_values[*k] = Some(row);
                }
                Writes::Stored(_) => {}
                Writes::Outputs => {
                    let outs = outs
                        .take()
                        .ok_or_else(|| internal("outputs written twice"))?;
                    run::elementwise(part.machine, &sub, &inputs, pool, settings, outs)?;
                }
            }
        }
        Ok(())
    }

    /// The buffers of `part`'s inputs, as its sources say.
    fn part_inputs<'b>(
        &'b self,
        part: &Part<'_>,
        row_values: &'b [Option<HostBuffer>],
        stored: &'b [HostBuffer],
    ) -> Vec<Option<&'b HostBuffer>> {
        part.sources
            .iter()
            .map(|source| match *source {
                Source::Input(k) => self.inputs.get(k).copied().flatten(),
                Source::Row(k) => row_values.get(k).and_then(Option::as_ref),
                Source::Stored(t) => stored.get(t),
            })
            .collect()
    }

    /// Runs `part`, which writes the stored `values` (`sub` over the tile)
    /// into the front of their buffers in `stored`, reading the others.
    fn store(
        &self,
        part: &Part<'_>,
        sub: &Launch,
        values: &[usize],
        stored: &mut [HostBuffer],
        row_values: &[Option<HostBuffer>],
    ) -> Result<()> {
        let len = sub.domain_len();
        // The written buffers out of `stored` while the others are read.
        let mut written: Vec<(usize, HostBuffer)> = values
            .iter()
            .map(|&t| {
                (
                    t,
                    std::mem::replace(&mut stored[t], HostBuffer::F32(Vec::new())),
                )
            })
            .collect();
        let result = {
            let inputs = self.part_inputs(part, row_values, stored);
            let outs: Vec<(usize, SliceMut<'_>)> = written
                .iter_mut()
                .enumerate()
                .filter_map(|(j, (_, buffer))| {
                    let front = buffer.as_slice_mut().chunks(len).into_iter().next()?;
                    Some((j, front))
                })
                .collect();
            run::elementwise(part.machine, sub, &inputs, self.pool, self.settings, outs)
        };
        for (t, buffer) in written {
            stored[t] = buffer;
        }
        result.map(|_| ())
    }
}
