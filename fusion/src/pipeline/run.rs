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
pub(crate) fn run<R: Runtime>(
    runtime: &R,
    pipeline: &Pipeline,
    leaves: Leaves<'_, R::Buffer>,
    destinations: Destinations<'_>,
    env: EvalEnv<'_>,
) -> Result<Vec<Residency>> {
    let inputs = &pipeline.launch.inputs;
    let op = runtime.name();
    // Inputs already on the device, and those read whole, uploaded once.
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
    let lanes: Vec<u64> = (0..LANES).map(|k| pipeline_stream(env.stream, k)).collect();
    for &lane in &lanes {
        runtime.wait_streams(lane, &[env.stream]);
    }
    let kernel = &pipeline.launch.kernel;
    let mut partials = pipeline
        .merge
        .as_ref()
        .map(|m| HostBuffer::try_zeros(m.kernel.inputs[0].dtype, pipeline.chunks() * m.kept_len))
        .transpose()?;
    let mut into = match destinations {
        Destinations::Into(out) => Some(out),
        Destinations::New => None,
    };
    let mut outputs = match (&partials, &into) {
        (None, None) => (0..kernel.outputs.len())
            .map(|j| {
                HostBuffer::try_zeros(kernel.output_dtype(j), pipeline.rows * pipeline.out_row_len)
            })
            .collect::<Result<Vec<_>>>()?,
        _ => Vec::new(),
    };
    // Each chunk's buffers, until its stream takes its next chunk.
    let mut held: VecDeque<Vec<R::Buffer>> = VecDeque::with_capacity(LANES);
    for c in 0..pipeline.chunks() {
        let first = c * pipeline.chunk_rows;
        let rows = pipeline.chunk_rows.min(pipeline.rows - first);
        let env = EvalEnv {
            stream: lanes[c % LANES],
            ..env
        };
        if held.len() == LANES {
            held.pop_front();
        }
        let mut buffers = whole.clone();
        for (k, (binding, feed)) in inputs.iter().zip(&pipeline.feeds).enumerate() {
            if let (Some(b), Feed::Streamed, false) = (binding.buffer, feed, pipeline.resident[k]) {
                let start = binding.offset + first * pipeline.row_len;
                let range = start..start + rows * pipeline.row_len;
                buffers[k] = Some(upload(runtime, &(leaves.host)(b)?, Some(range), env)?);
            }
        }
        let launch = pipeline.chunk_launch(first, rows);
        let refs: Vec<Option<&R::Buffer>> = buffers.iter().map(Option::as_ref).collect();
        let produced = runtime.launch(&launch, &refs, env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        let out_range = first * pipeline.out_row_len..(first + rows) * pipeline.out_row_len;
        for (j, value) in produced.iter().enumerate() {
            match (&mut partials, &mut into) {
                (Some(p), _) => {
                    let kept = p.len() / pipeline.chunks();
                    let mut all = p.as_slice_mut();
                    download_into(runtime, value, all.part(c * kept..(c + 1) * kept)?, env)?;
                }
                (None, Some(out)) => {
                    download_into(runtime, value, out.part(out_range.clone())?, env)?;
                }
                (None, None) => {
                    let mut all = outputs[j].as_slice_mut();
                    download_into(runtime, value, all.part(out_range.clone())?, env)?;
                }
            }
        }
        held.push_back(buffers.into_iter().flatten().chain(produced).collect());
    }
    drop(held);
    runtime.wait_streams(env.stream, &lanes);
    if let (Some(merge), Some(partials)) = (&pipeline.merge, partials) {
        let input = upload(runtime, &Arc::new(partials), None, env)?;
        let merged = runtime.launch(&pipeline.merge_launch(merge), &[Some(&input)], env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        return Ok(merged.into_iter().map(|b| runtime.residency(b)).collect());
    }
    Ok(outputs
        .into_iter()
        .map(|o| Residency::host(Arc::new(o)))
        .collect())
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
