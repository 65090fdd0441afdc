//! The pipeline: a demand that moves too much to copy at once, or that
//! does not fit in the device's memory, split into chunks whose copies
//! overlap its kernels, with no stream code from the user.
//!
//! A program of one fused launch qualifies when its inputs are dense over
//! the domain (streamed chunk by chunk), read whole (scalars, and inputs
//! broadcast along the first axis) or generated (`arange`): an
//! element-wise kernel, or a reduction.
//! The domain is cut along its first axis into chunks of rows (flattened
//! first when every input is dense or a scalar and the kernel is
//! element-wise or reduces everything). Chunk `i`'s upload, kernel and
//! download go on pipeline stream `i % LANES`, so the upload of chunk
//! `i + 1`, the kernel of chunk `i` and the download of chunk `i - 1` run
//! at once on a device with a copy engine in each direction.
//!
//! Outputs over the first axis come back into host memory chunk by chunk
//! (straight into the caller's buffer for `read_into`). A reduction over
//! the first axis leaves one partial result per chunk (the kernel with its
//! epilogue taken off); one more launch reduces the partials with the
//! kernel's own combine and applies the epilogue.
//!
//! Memory: each chunk's buffers are held until its stream takes its next
//! chunk, as a stream-ordered pool would, so the pipeline needs the memory
//! of `LANES` chunks (plus the inputs read whole), and chunks are sized to
//! fit what the device has free.

mod run;

use std::fmt::Write;
use std::sync::Arc;

use lazyfuse_core::shape::contiguous_strides;
use lazyfuse_core::{Options, Shape};
use smallvec::smallvec;

use crate::ir::{Body, FusedKernel, InputKind, Inst, KernelInput, Layout, ReductionIr};
use crate::program::{BufferId, BufferKind, InputBinding, Launch, Program, Work};

pub(crate) use run::{download_into, run, Destinations, Leaves};
pub use run::{is_pipeline_stream, pipeline_stream};

/// Streams the chunks take turns on: three keep an upload, a kernel and a
/// download in flight at once.
pub const LANES: usize = 3;

/// Chunks a pipeline aims for when memory does not ask for smaller ones:
/// enough that filling and draining the pipeline costs little.
const TARGET_CHUNKS: usize = 16;

/// The fewest bytes a chunk moves, so that each kernel launch and copy
/// does enough work to hide its fixed cost.
const MIN_CHUNK_BYTES: usize = 1 << 20;

/// The share of the free device memory kept back for what the kernels
/// allocate themselves (a reduction's block partials) and the merge.
const MEMORY_SLACK: usize = 8;

/// How one input of the pipelined launch is fed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feed {
    /// Dense over the domain: each chunk gets its own rows.
    Streamed,
    /// Read whole by every chunk (a scalar, or broadcast along the first
    /// axis): uploaded once.
    Whole,
    /// Generated from its position (`arange`): each chunk starts at its
    /// rows' offset.
    Generated,
}

/// Why a demand is pipelined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// It moves `bytes` between host and device, more than the threshold.
    Moves {
        /// Bytes uploaded and downloaded.
        bytes: usize,
        /// [`Options::pipeline_threshold`].
        threshold: usize,
    },
    /// It needs `bytes` of device memory at once, more than is `available`.
    Needs {
        /// Device memory of the inputs and outputs.
        bytes: usize,
        /// What the device has free.
        available: usize,
    },
}

/// The merge of a reduction's per-chunk partial results.
#[derive(Clone, Debug)]
struct Merge {
    /// Reduces `[chunks, kept...]` partials over axis 0, then applies the
    /// original epilogue.
    kernel: Arc<FusedKernel>,
    /// Elements of one chunk's partial result (the kept dimensions).
    kept_len: usize,
    /// The kept dimensions.
    kept: Shape,
}

/// A demand run as a pipeline of chunks.
#[derive(Clone, Debug)]
pub struct Pipeline {
    /// The program's launch, its domain flattened when that is possible.
    launch: Launch,
    /// The kernel each chunk runs: the launch's, or without its epilogue
    /// when partial results are merged.
    chunk_kernel: Arc<FusedKernel>,
    /// How each input is fed.
    feeds: Vec<Feed>,
    /// Which inputs are already in device memory: chunks read those in
    /// place, at their rows' offset.
    resident: Vec<bool>,
    /// Rows of the domain (its first axis).
    rows: usize,
    /// Domain elements per row.
    row_len: usize,
    /// Output elements per row (0 when partial results are merged).
    out_row_len: usize,
    /// Rows per chunk (the last chunk may have fewer).
    chunk_rows: usize,
    merge: Option<Merge>,
    /// Why it is pipelined.
    pub reason: Reason,
}

impl Pipeline {
    /// The pipeline for `program`, when it qualifies and either moves more
    /// than `options.pipeline_threshold` bytes or needs more device memory
    /// than `available()` says is free (asked only of programs that
    /// qualify); `resident(b)` tells whether leaf `b` is already in device
    /// memory (and needs no upload). The chunks send their outputs to the
    /// host: a demand that keeps them on the device (`eval`, not
    /// `outputs_to_host`) runs as a pipeline only when it does not fit.
    pub fn of(
        program: &Program,
        options: &Options,
        available: impl FnOnce() -> Option<usize>,
        resident: impl Fn(BufferId) -> bool,
        outputs_to_host: bool,
    ) -> Option<Pipeline> {
        let [Work::Fused(l)] = program.schedule.as_slice() else {
            return None;
        };
        let original = &program.launches[*l];
        if original.kernel.is_row_program() {
            // Its chunks would cut rows; it runs as one launch.
            return None;
        }
        let traffic = Traffic::of(program, original, &resident);
        if traffic.moved < 2 * MIN_CHUNK_BYTES {
            // Too little for two chunks: small demands (the hot path) ask
            // nothing more, not even the device's free memory.
            return None;
        }
        let feeds = feeds(program, original)?;
        let available = available();
        let reason = match available {
            Some(available) if traffic.needed > available => Reason::Needs {
                bytes: traffic.needed,
                available,
            },
            _ if outputs_to_host && traffic.moved > options.pipeline_threshold => Reason::Moves {
                bytes: traffic.moved,
                threshold: options.pipeline_threshold,
            },
            _ => return None,
        };
        let mut pipeline = Pipeline::build(original, feeds, &resident, reason)?;
        pipeline.chunk_rows = pipeline.chunk_rows_for(program, available)?;
        Some(pipeline)
    }

    /// The pipeline of `original`, one chunk of every row.
    fn build(
        original: &Launch,
        feeds: Vec<Feed>,
        resident: &impl Fn(BufferId) -> bool,
        reason: Reason,
    ) -> Option<Pipeline> {
        let launch = flattened(original).unwrap_or_else(|| original.clone());
        let rows = *launch.domain.first()?;
        let row_len: usize = launch.domain[1..].iter().product();
        if rows < 2 || row_len == 0 {
            return None;
        }
        let (chunk_kernel, merge, out_row_len) = match &launch.kernel.reduction {
            None => (Arc::clone(&launch.kernel), None, row_len),
            Some(r) if r.axes.contains(&0) => {
                let merge = merge_of(&launch.kernel, r, &launch.domain);
                (without_epilogue(&launch.kernel, r), Some(merge), 0)
            }
            Some(r) => {
                let kept: usize = (0..launch.domain.len())
                    .filter(|a| !r.axes.contains(a))
                    .map(|a| launch.domain[a])
                    .product();
                (Arc::clone(&launch.kernel), None, kept / rows)
            }
        };
        let on_device: Vec<bool> = launch
            .inputs
            .iter()
            .map(|i| i.buffer.is_some_and(resident))
            .collect();
        Some(Pipeline {
            chunk_kernel: read_in_place(chunk_kernel, &feeds, &on_device),
            launch,
            feeds,
            resident: on_device,
            rows,
            row_len,
            out_row_len,
            chunk_rows: rows,
            merge,
            reason,
        })
    }

    /// Device bytes of one row (its streamed inputs and its outputs), and
    /// of the inputs read whole, uploaded once.
    fn row_and_whole_bytes(&self, program: &Program) -> (usize, usize) {
        let (mut per_row, mut whole) = (0, 0);
        let inputs = self
            .launch
            .inputs
            .iter()
            .zip(&self.feeds)
            .zip(&self.resident);
        for ((input, feed), &on_device) in inputs {
            let Some(b) = input.buffer.filter(|_| !on_device) else {
                continue;
            };
            let desc = &program.buffers[b.index()];
            match feed {
                Feed::Streamed => per_row += self.row_len * desc.dtype.size(),
                Feed::Whole => whole += desc.len * desc.dtype.size(),
                Feed::Generated => {}
            }
        }
        let kernel = &self.launch.kernel;
        for j in 0..kernel.outputs.len() {
            per_row += self.out_row_len * kernel.output_dtype(j).size();
        }
        (per_row, whole)
    }

    /// Rows per chunk: about [`TARGET_CHUNKS`] chunks of at least
    /// [`MIN_CHUNK_BYTES`] moved, fewer rows when [`LANES`] chunks would
    /// not fit in `available`; `None` when not even one row per stream
    /// fits, or when one chunk would hold everything.
    fn chunk_rows_for(&self, program: &Program, available: Option<usize>) -> Option<usize> {
        let (per_row, whole) = self.row_and_whole_bytes(program);
        let per_row = per_row.max(1);
        let mut chunk = self
            .rows
            .div_ceil(TARGET_CHUNKS)
            .max(MIN_CHUNK_BYTES.div_ceil(per_row));
        if let Some(available) = available {
            let budget = (available - available / MEMORY_SLACK).checked_sub(whole)?;
            let fits = budget / (LANES * per_row);
            if fits == 0 {
                return None;
            }
            chunk = chunk.min(fits);
        }
        (chunk < self.rows).then_some(chunk)
    }

    /// The buffers of the program's launch outputs, in kernel output order.
    pub fn launch_outputs<'p>(&self, program: &'p Program) -> &'p [BufferId] {
        match program.schedule.first() {
            Some(&Work::Fused(l)) => &program.launches[l].outputs,
            _ => &[],
        }
    }

    /// Number of chunks.
    pub fn chunks(&self) -> usize {
        self.rows.div_ceil(self.chunk_rows)
    }

    /// Domain elements per chunk (the last may have fewer).
    pub fn chunk_len(&self) -> usize {
        self.chunk_rows * self.row_len
    }

    /// True when the outputs come back chunk by chunk (false: a reduction
    /// over the first axis, merged on the device).
    pub fn chunks_outputs(&self) -> bool {
        self.merge.is_none()
    }

    /// The chunk launch over rows `first..first + rows`: the chunk kernel,
    /// its domain those rows; streamed inputs read from element 0 of their
    /// chunk's buffer, or from the rows' offset in a resident buffer.
    fn chunk_launch(&self, first: usize, rows: usize) -> Launch {
        let mut launch = self.launch.clone();
        launch.kernel = Arc::clone(&self.chunk_kernel);
        launch.domain[0] = rows;
        let inputs = launch
            .inputs
            .iter_mut()
            .zip(&self.feeds)
            .zip(&self.resident);
        for ((input, feed), &on_device) in inputs {
            match (feed, on_device) {
                (Feed::Streamed, true) => input.offset += first * self.row_len,
                (Feed::Streamed, false) => input.offset = 0,
                (Feed::Generated, _) => {
                    let start = input.offset as isize + first as isize * input.strides[0];
                    input.offset = start.max(0) as usize;
                }
                (Feed::Whole, _) => {}
            }
        }
        launch
    }

    /// The launch merging `chunks` partial results.
    fn merge_launch(&self, merge: &Merge) -> Launch {
        let mut domain: Shape = smallvec![self.chunks()];
        domain.extend_from_slice(&merge.kept);
        Launch {
            kernel: Arc::clone(&merge.kernel),
            inputs: vec![InputBinding {
                buffer: None,
                offset: 0,
                strides: contiguous_strides(&domain)
                    .iter()
                    .map(|&s| s as isize)
                    .collect(),
            }],
            domain,
            args: self.launch.args.clone(),
            bound: self.launch.bound.clone(),
            outputs: self.launch.outputs.clone(),
            nodes: self.launch.nodes.clone(),
        }
    }

    /// What `explain()` says of the pipeline.
    pub fn describe(&self, program: &Program) -> String {
        let mut text = match self.reason {
            Reason::Moves { bytes, threshold } => format!(
                "pipeline (instead of the plan above): moves {}, above the threshold of {}\n",
                mib(bytes),
                mib(threshold)
            ),
            Reason::Needs { bytes, available } => format!(
                "pipeline (instead of the plan above): needs {} of device memory, {} free\n",
                mib(bytes),
                mib(available)
            ),
        };
        let streamed: Vec<String> = self
            .launch
            .inputs
            .iter()
            .zip(&self.feeds)
            .filter_map(|(i, f)| Some((i.buffer?, f)))
            .map(|(b, f)| match f {
                Feed::Streamed | Feed::Generated => format!("{b}[chunk]"),
                Feed::Whole => format!("{b} (once)"),
            })
            .collect();
        let outputs: Vec<String> = self
            .launch_outputs(program)
            .iter()
            .map(|b| format!("{b}[chunk]"))
            .collect();
        let _ = writeln!(
            text,
            "  {} chunks of {} elements on {LANES} streams, upload of chunk i+1, kernel of chunk i and download of chunk i-1 at once",
            self.chunks(),
            self.chunk_len()
        );
        let _ = writeln!(
            text,
            "  each chunk: upload {} -> {} -> {}",
            streamed.join(", "),
            self.chunk_kernel.name(),
            match &self.merge {
                None => format!("download {}", outputs.join(", ")),
                Some(_) => "download its partial result".to_string(),
            }
        );
        if let Some(merge) = &self.merge {
            let _ = writeln!(
                text,
                "  then: upload the {} partial results -> {} (the reduction's combine and epilogue)",
                self.chunks(),
                merge.kernel.name()
            );
        }
        text
    }
}

/// What a demand moves and needs without a pipeline.
#[derive(Clone, Copy, Debug, Default)]
struct Traffic {
    /// Bytes uploaded and downloaded in all.
    moved: usize,
    /// Device bytes of all inputs and outputs at once.
    needed: usize,
}

impl Traffic {
    fn of(program: &Program, launch: &Launch, resident: &impl Fn(BufferId) -> bool) -> Traffic {
        let bytes = |b: BufferId| {
            let desc = &program.buffers[b.index()];
            desc.len * desc.dtype.size()
        };
        let mut traffic = Traffic::default();
        for b in launch.inputs.iter().filter_map(|i| i.buffer) {
            traffic.needed += bytes(b);
            if !resident(b) {
                traffic.moved += bytes(b);
            }
        }
        for &b in &launch.outputs {
            traffic.needed += bytes(b);
            traffic.moved += bytes(b);
        }
        traffic
    }
}

/// How each input of `launch` is fed, or `None` when one cannot be.
fn feeds(program: &Program, launch: &Launch) -> Option<Vec<Feed>> {
    launch
        .kernel
        .inputs
        .iter()
        .zip(&launch.inputs)
        .map(|(input, binding)| {
            if input.kind == InputKind::Iota {
                return Some(Feed::Generated);
            }
            let leaf = matches!(
                program.buffers[binding.buffer?.index()].kind,
                BufferKind::Leaf { .. }
            );
            match input.layout {
                _ if !leaf => None,
                Layout::Contiguous => Some(Feed::Streamed),
                Layout::Scalar => Some(Feed::Whole),
                Layout::Strided if binding.strides.first() == Some(&0) => Some(Feed::Whole),
                Layout::Strided => None,
            }
        })
        .collect()
}

/// `launch` over one dimension, when every input is dense or a scalar and
/// the kernel is element-wise or reduces every axis; `None` otherwise (or
/// when it already has one dimension).
fn flattened(launch: &Launch) -> Option<Launch> {
    let kernel = &launch.kernel;
    let dense = kernel
        .inputs
        .iter()
        .all(|i| matches!(i.layout, Layout::Contiguous | Layout::Scalar));
    let whole = kernel
        .reduction
        .as_ref()
        .is_none_or(|r| r.axes.len() == kernel.rank);
    if kernel.rank == 1 || !dense || !whole {
        return None;
    }
    let mut flat = (**kernel).clone();
    flat.rank = 1;
    if let Some(r) = &mut flat.reduction {
        r.axes = smallvec![0];
    }
    let mut launch = launch.clone();
    launch.domain = smallvec![launch.domain_len()];
    for (binding, input) in launch.inputs.iter_mut().zip(&kernel.inputs) {
        let stride = isize::from(input.layout == Layout::Contiguous);
        binding.strides = smallvec![stride];
    }
    launch.kernel = Arc::new(flat);
    Some(launch)
}

/// `kernel` reading its streamed inputs that are already on the device in
/// place, and generating positions, from their chunk's offset: strided
/// (a dense input starts at 0).
fn read_in_place(kernel: Arc<FusedKernel>, feeds: &[Feed], resident: &[bool]) -> Arc<FusedKernel> {
    let in_place = |k: usize| match feeds[k] {
        Feed::Streamed => resident[k],
        Feed::Generated => true,
        Feed::Whole => false,
    };
    if !(0..feeds.len()).any(in_place) {
        return kernel;
    }
    let mut strided = (*kernel).clone();
    for (k, input) in strided.inputs.iter_mut().enumerate() {
        if in_place(k) {
            input.layout = Layout::Strided;
        }
    }
    Arc::new(strided)
}

/// `kernel` writing its reduced value itself (in the accumulator dtype):
/// the partial result of one chunk.
fn without_epilogue(kernel: &FusedKernel, reduction: &ReductionIr) -> Arc<FusedKernel> {
    let mut partial = kernel.clone();
    let mut epilogue = Body::default();
    let reduced = epilogue.push(Inst::Reduced, reduction.acc);
    if let Some(r) = &mut partial.reduction {
        r.epilogue = epilogue;
    }
    partial.outputs = vec![reduced];
    Arc::new(partial)
}

/// The merge of `kernel`'s partial results: over `[chunks, kept...]`, the
/// same combine over axis 0, then the same epilogue.
fn merge_of(kernel: &FusedKernel, reduction: &ReductionIr, domain: &[usize]) -> Merge {
    let kept: Shape = (0..domain.len())
        .filter(|a| !reduction.axes.contains(a))
        .map(|a| domain[a])
        .collect();
    let mut body = Body::default();
    let loaded = body.push(Inst::Load(0), reduction.acc);
    let merged = FusedKernel {
        rank: 1 + kept.len(),
        inputs: vec![KernelInput {
            dtype: reduction.acc,
            layout: Layout::Contiguous,
            kind: InputKind::Buffer,
        }],
        args: kernel.args.clone(),
        body,
        outputs: kernel.outputs.clone(),
        reduction: Some(ReductionIr {
            axes: smallvec![0],
            value: loaded,
            ..reduction.clone()
        }),
        stages: Vec::new(),
        per_row: false,
    };
    Merge {
        kernel: Arc::new(merged),
        kept_len: kept.iter().product(),
        kept,
    }
}

/// `bytes` in MiB, for `explain()`.
fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}
