//! Row programs (`FusedKernel::stages`) on the CPU: a tile of rows at a
//! time, each stage's reduction over the tile into a row buffer of the
//! tile's rows, then the outputs, before the next tile — so each stage
//! reads the tile from cache, not memory. The stages and the outputs are
//! kernels of their own (`lazyfuse_fusion::rows::split`), each run by the
//! register machine or compiled code as any kernel is; tiles run in
//! parallel, each on one worker from start to end.

use std::sync::Arc;

use lazyfuse_core::{HostBuffer, Result, SliceMut};
use lazyfuse_fusion::rows::row_strides;
use lazyfuse_fusion::{FusedKernel, InputBinding, Launch};

use super::machine::Machine;
use super::run::{for_each_task, TASK};
use super::settings::CpuSettings;
use super::{interp, reduce, run};

/// One kernel of a row program's split (`lazyfuse_fusion::rows::split`):
/// a stage, or the outputs, with its register machine.
#[derive(Clone, Copy)]
pub(crate) struct Part<'a> {
    pub(crate) kernel: &'a Arc<FusedKernel>,
    pub(crate) machine: &'a Machine,
}

fn internal(message: &str) -> lazyfuse_core::Error {
    lazyfuse_core::Error::internal("cpu backend", message)
}

/// Elements of a tile (at least one row along the first axis): a
/// quarter of a core's L2 per value read or written.
const TILE: usize = TASK / 2;

/// Indices of the first axis in one tile of `launch`'s domain.
pub(crate) fn tile_rows(launch: &Launch) -> usize {
    let inner: usize = launch.domain[1..].iter().product();
    (TILE / inner.max(1)).max(1)
}

/// Runs a row program's `launch`, whose split is `parts` (the stages,
/// then the outputs): its outputs go into `outs` where given (`(output,
/// slice)`), the others into new buffers (returned in order).
pub(crate) fn run(
    parts: &[Part<'_>],
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    outs: Vec<(usize, SliceMut<'_>)>,
    (pool, settings): (Option<&rayon::ThreadPool>, &CpuSettings),
) -> Result<Vec<Option<HostBuffer>>> {
    let (outputs, stages) = parts
        .split_last()
        .ok_or_else(|| internal("a row program without stages"))?;
    let (inner, tile_rows) = (
        launch.domain[1..].iter().product::<usize>(),
        tile_rows(launch),
    );
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
            None => {
                crate::pages::zeroed(launch.kernel.output_dtype(j), launch.domain_len()).map(Some)
            }
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
        if slice.len() != launch.domain_len() {
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
        stages,
        outputs: *outputs,
        tile_rows,
    };
    // Each element is read once per stage and once more: in parallel as
    // soon as those passes together are worth it.
    let passes = launch.kernel.stages.len() + 1;
    for_each_task(
        pool,
        launch.domain_len().saturating_mul(passes),
        work,
        || Ok(()),
        |_, _, (t, outs)| tile.run(t, outs),
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
    stages: &'a [Part<'a>],
    outputs: Part<'a>,
    tile_rows: usize,
}

impl Tile<'_> {
    /// The launch of `kernel` over rows `first..first + rows` of the first
    /// axis, reading the first `stages` row buffers after the inputs.
    fn sub_launch(
        &self,
        kernel: &Arc<FusedKernel>,
        first: usize,
        rows: usize,
        stages: usize,
    ) -> Launch {
        let launch = self.launch;
        let mut domain = launch.domain.clone();
        domain[0] = rows;
        let mut inputs: Vec<InputBinding> = launch
            .inputs
            .iter()
            .map(|binding| {
                let shift = binding.strides.first().copied().unwrap_or(0) * first as isize;
                InputBinding {
                    offset: (binding.offset as isize + shift) as usize,
                    ..binding.clone()
                }
            })
            .collect();
        let axes = kernel.reduced_axes().map_or_else(
            || launch.kernel.reduced_axes().unwrap_or(&[]).to_vec(),
            <[usize]>::to_vec,
        );
        for _ in 0..stages {
            inputs.push(InputBinding {
                buffer: None,
                offset: 0,
                strides: row_strides(&domain, &axes),
            });
        }
        Launch {
            kernel: Arc::clone(kernel),
            domain,
            inputs,
            args: launch.args.clone(),
            outputs: Vec::new(),
            nodes: Vec::new(),
        }
    }

    fn run(&self, t: usize, outs: Vec<(usize, SliceMut<'_>)>) -> Result<()> {
        let first = t * self.tile_rows;
        let rows = self.tile_rows.min(self.launch.domain[0] - first);
        let (pool, settings) = (self.pool, self.settings);
        let mut rows_done: Vec<HostBuffer> = Vec::with_capacity(self.stages.len());
        for (k, stage) in self.stages.iter().enumerate() {
            let sub = self.sub_launch(stage.kernel, first, rows, k);
            let mut inputs: Vec<Option<&HostBuffer>> = self.inputs.to_vec();
            inputs.extend(rows_done.iter().map(Some));
            let row = match reduce::reduction(stage.machine, &sub, &inputs, pool, settings.jit)? {
                Some(row) => row,
                None => interp::run_generic(&sub, &inputs)?
                    .pop()
                    .ok_or_else(|| internal("a stage without its row values"))?,
            };
            rows_done.push(row);
        }
        let sub = self.sub_launch(self.outputs.kernel, first, rows, self.stages.len());
        let mut inputs: Vec<Option<&HostBuffer>> = self.inputs.to_vec();
        inputs.extend(rows_done.iter().map(Some));
        run::elementwise(self.outputs.machine, &sub, &inputs, pool, settings, outs)?;
        Ok(())
    }
}
