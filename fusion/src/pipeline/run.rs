//! Running a [`Pipeline`] on a [`Runtime`]: chunk by chunk, each on its
//! turn of the pipeline streams, each chunk's buffers held until its
//! stream takes the next chunk.

use std::collections::VecDeque;
use std::sync::Arc;

use lazyfuse_core::{Counter, Error, EvalEnv, HostBuffer, Residency, Result, SliceMut};

use super::{Feed, Pipeline, LANES};
use crate::program::BufferId;
use crate::runtime::Runtime;

/// Marks the ids of pipeline streams, apart from the streams users make.
const PIPELINE_STREAM: u64 = 1 << 63;

/// The id of pipeline stream `lane` of a demand on `stream`: its top bit
/// set, so that it is never a user's stream.
pub fn pipeline_stream(stream: u64, lane: usize) -> u64 {
    PIPELINE_STREAM | (stream << 2) | lane as u64
}

/// True when `stream` is one of a pipeline's streams.
pub fn is_pipeline_stream(stream: u64) -> bool {
    stream & PIPELINE_STREAM != 0
}

/// Where a pipeline's chunked outputs go.
pub(crate) enum Destinations<'a> {
    /// New host buffers, one per output.
    New,
    /// The caller's memory, for the launch's one output.
    Into(SliceMut<'a>),
}

/// What a pipeline reads from the demand: each leaf's copy in the
/// runtime's memory, if any, and its host data.
pub(crate) struct Leaves<'a, B> {
    /// The runtime's copy of a leaf.
    pub resident: &'a dyn Fn(BufferId) -> Option<B>,
    /// The host data of a leaf.
    pub host: &'a dyn Fn(BufferId) -> Result<Arc<HostBuffer>>,
}

/// Runs `pipeline` on `runtime`; returns one value per output of the
/// launch (none when they went `Into` the caller's memory).
///
/// The host queues chunk `c`'s uploads and kernel, then downloads chunk
/// `c - 1`: on a device whose downloads make the host wait, the device
/// meanwhile copies and computes chunk `c`.
pub(crate) fn run<R: Runtime>(
    runtime: &R,
    pipeline: &Pipeline,
    leaves: Leaves<'_, R::Buffer>,
    destinations: Destinations<'_>,
    env: EvalEnv<'_>,
) -> Result<Vec<Residency>> {
    let whole = whole_inputs(runtime, pipeline, &leaves, env)?;
    let mut outputs = Outputs::new(pipeline, destinations)?;
    let lanes = Lanes::enter(runtime, env.stream);
    // Each chunk's buffers, until its stream takes its next chunk.
    let mut held: VecDeque<Vec<R::Buffer>> = VecDeque::with_capacity(LANES);
    let mut pending: Option<Chunk<R::Buffer>> = None;
    for index in 0..pipeline.chunks() {
        if held.len() == LANES {
            held.pop_front();
        }
        let first = index * pipeline.chunk_rows;
        let mut chunk = Chunk {
            index,
            first,
            rows: pipeline.chunk_rows.min(pipeline.rows - first),
            stream: lanes.ids[index % LANES],
            produced: Vec::new(),
        };
        let env = EvalEnv {
            stream: chunk.stream,
            ..env
        };
        let mut buffers = whole.clone();
        let inputs = pipeline.launch.inputs.iter().zip(&pipeline.feeds);
        for (k, (binding, feed)) in inputs.enumerate() {
            if let (Some(b), Feed::Streamed, false) = (binding.buffer, feed, pipeline.resident[k]) {
                let start = binding.offset + first * pipeline.row_len;
                let range = start..start + chunk.rows * pipeline.row_len;
                buffers[k] = Some(upload(runtime, &(leaves.host)(b)?, Some(range), env)?);
            }
        }
        let launch = pipeline.chunk_launch(first, chunk.rows);
        let refs: Vec<Option<&R::Buffer>> = buffers.iter().map(Option::as_ref).collect();
        chunk.produced = runtime.launch(&launch, &refs, env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        if let Some(previous) = pending.take() {
            outputs.download(runtime, pipeline, &previous, env)?;
        }
        held.push_back(
            buffers
                .into_iter()
                .flatten()
                .chain(chunk.produced.iter().cloned())
                .collect(),
        );
        pending = Some(chunk);
    }
    if let Some(last) = pending.take() {
        outputs.download(runtime, pipeline, &last, env)?;
    }
    drop(held);
    lanes.leave(env.stream)?;
    if let (Some(merge), Some(partials)) = (&pipeline.merge, outputs.partials) {
        let input = upload(runtime, &Arc::new(partials), None, env)?;
        let merged = runtime.launch(&pipeline.merge_launch(merge), &[Some(&input)], env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        return Ok(merged.into_iter().map(|b| runtime.residency(b)).collect());
    }
    Ok(outputs
        .new
        .into_iter()
        .map(|o| Residency::host(Arc::new(o)))
        .collect())
}

/// One chunk in flight: its rows, its stream, its outputs.
struct Chunk<B> {
    index: usize,
    first: usize,
    rows: usize,
    stream: u64,
    produced: Vec<B>,
}

/// The inputs every chunk reads whole: those already on the device, and
/// those read whole, uploaded once (on the demand's stream).
fn whole_inputs<R: Runtime>(
    runtime: &R,
    pipeline: &Pipeline,
    leaves: &Leaves<'_, R::Buffer>,
    env: EvalEnv<'_>,
) -> Result<Vec<Option<R::Buffer>>> {
    let op = runtime.name();
    let inputs = &pipeline.launch.inputs;
    let mut whole: Vec<Option<R::Buffer>> = vec![None; inputs.len()];
    for (k, (binding, feed)) in inputs.iter().zip(&pipeline.feeds).enumerate() {
        let Some(b) = binding.buffer else { continue };
        if pipeline.resident[k] {
            let found = (leaves.resident)(b)
                .ok_or_else(|| Error::internal(op, format!("{b} left the device")))?;
            whole[k] = Some(found);
        } else if *feed == Feed::Whole {
            whole[k] = Some(upload(runtime, &(leaves.host)(b)?, None, env)?);
        }
    }
    Ok(whole)
}

/// Where the chunks' outputs land.
struct Outputs<'a> {
    /// A reduction's partial results, one run of `kept` per chunk.
    partials: Option<HostBuffer>,
    /// The caller's memory, for the launch's one output.
    into: Option<SliceMut<'a>>,
    /// New host buffers, one per output.
    new: Vec<HostBuffer>,
}

impl<'a> Outputs<'a> {
    fn new(pipeline: &Pipeline, destinations: Destinations<'a>) -> Result<Outputs<'a>> {
        let kernel = &pipeline.launch.kernel;
        let partials = pipeline
            .merge
            .as_ref()
            .map(|m| {
                HostBuffer::try_zeros(m.kernel.inputs[0].dtype, pipeline.chunks() * m.kept_len)
            })
            .transpose()?;
        let into = match destinations {
            Destinations::Into(out) => Some(out),
            Destinations::New => None,
        };
        let new = match (&partials, &into) {
            (None, None) => (0..kernel.outputs.len())
                .map(|j| {
                    let len = pipeline.rows * pipeline.out_row_len;
                    HostBuffer::try_zeros(kernel.output_dtype(j), len)
                })
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        Ok(Outputs {
            partials,
            into,
            new,
        })
    }

    /// Downloads `chunk`'s outputs into their places, on its stream.
    fn download<R: Runtime>(
        &mut self,
        runtime: &R,
        pipeline: &Pipeline,
        chunk: &Chunk<R::Buffer>,
        env: EvalEnv<'_>,
    ) -> Result<()> {
        let env = EvalEnv {
            stream: chunk.stream,
            ..env
        };
        let rows =
            chunk.first * pipeline.out_row_len..(chunk.first + chunk.rows) * pipeline.out_row_len;
        for (j, value) in chunk.produced.iter().enumerate() {
            let mut all;
            let target = match (&mut self.partials, &mut self.into) {
                (Some(p), _) => {
                    let kept = p.len() / pipeline.chunks();
                    all = p.as_slice_mut();
                    all.part(chunk.index * kept..(chunk.index + 1) * kept)?
                }
                (None, Some(out)) => out.part(rows.clone())?,
                (None, None) => {
                    all = self.new[j].as_slice_mut();
                    all.part(rows.clone())?
                }
            };
            download_into(runtime, value, target, env)?;
        }
        Ok(())
    }
}

/// The pipeline's streams, entered and forked from the demand's stream; left
/// (joined back) by [`Lanes::leave`], or on drop when a chunk failed.
struct Lanes<'r, R: Runtime> {
    runtime: &'r R,
    ids: Vec<u64>,
    left: bool,
}

impl<'r, R: Runtime> Lanes<'r, R> {
    fn enter(runtime: &'r R, stream: u64) -> Lanes<'r, R> {
        let ids: Vec<u64> = (0..LANES).map(|k| pipeline_stream(stream, k)).collect();
        for &lane in &ids {
            runtime.enter_stream(lane);
            runtime.wait_streams(lane, &[stream]);
        }
        Lanes {
            runtime,
            ids,
            left: false,
        }
    }

    /// Joins the lanes back into `stream` and leaves them; the first error
    /// of their work, if any.
    fn leave(mut self, stream: u64) -> Result<()> {
        self.runtime.wait_streams(stream, &self.ids);
        self.left = true;
        let mut outcome = Ok(());
        for &lane in &self.ids {
            let left = self.runtime.leave_stream(lane);
            if outcome.is_ok() {
                outcome = left;
            }
        }
        outcome
    }
}

impl<R: Runtime> Drop for Lanes<'_, R> {
    fn drop(&mut self) {
        if !self.left {
            // A chunk failed: its queued work still ends before the memory
            // it uses is handed back.
            for &lane in &self.ids {
                let _ = self.runtime.leave_stream(lane);
            }
        }
    }
}

/// Uploads `host`, or its elements `range`, counting the copy.
fn upload<R: Runtime>(
    runtime: &R,
    host: &Arc<HostBuffer>,
    range: Option<std::ops::Range<usize>>,
    env: EvalEnv<'_>,
) -> Result<R::Buffer> {
    let (copy, elements) = match range {
        Some(range) => {
            let len = range.len();
            (runtime.upload_part(host, range, env)?, len)
        }
        None => (runtime.upload(host, env)?, host.len()),
    };
    env.stats.add(Counter::H2dCopies, 1);
    env.stats
        .add(Counter::H2dBytes, (elements * host.dtype().size()) as u64);
    Ok(copy)
}

/// Downloads `buffer` into `out`, counting the copy (or, into mapped
/// memory, the bytes the device wrote there).
pub(crate) fn download_into<R: Runtime>(
    runtime: &R,
    buffer: &R::Buffer,
    mut out: SliceMut<'_>,
    env: EvalEnv<'_>,
) -> Result<()> {
    let bytes = (out.len() * out.dtype().size()) as u64;
    let mapped = out.as_bytes_mut().is_some_and(|b| runtime.is_mapped(b));
    runtime.download_into(buffer, out, env)?;
    if mapped {
        env.stats.add(Counter::MappedBytes, bytes);
    } else {
        env.stats.add(Counter::D2hCopies, 1);
        env.stats.add(Counter::D2hBytes, bytes);
    }
    Ok(())
}
