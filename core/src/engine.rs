//! The engine trait through which a demand executes, and the statistics it keeps.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::dtype::DType;
use crate::element::{HostBuffer, SliceMut};
use crate::error::{Error, Result};
use crate::graph::ExprGraph;
use crate::node::{DeviceBuffer, Residency};

/// Counters of what the engine did, summed since the last reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Kernels (or CPU programs) compiled.
    pub kernels_compiled: u64,
    /// Compilations avoided because the kernel was cached.
    pub kernel_cache_hits: u64,
    /// Kernels executed. On the reference evaluator, one per computed node.
    pub kernel_launches: u64,
    /// Host → device copies.
    pub h2d_copies: u64,
    /// Bytes copied host → device.
    pub h2d_bytes: u64,
    /// Device → host copies.
    pub d2h_copies: u64,
    /// Bytes copied device → host.
    pub d2h_bytes: u64,
    /// Demands that ran the engine (a demand answered from memoised values does not count).
    pub evaluations: u64,
    /// Allocations of device memory plans made (`sim`: every new device
    /// buffer; `cuda`: allocations its pool could not serve from freed
    /// blocks). Always 0 on backends without device memory.
    pub device_allocations: u64,
    /// Bytes of those allocations.
    pub device_bytes_allocated: u64,
    /// Bytes copied between host and device from or to pageable host
    /// memory, which a GPU copies through a pinned staging buffer (`sim`
    /// and `cuda` count every such copy; `cuda` stages large uploads itself
    /// and the driver the rest). Copies from and to pinned memory
    /// ([`crate::PinnedBuf`]) count none.
    pub staged_bytes: u64,
    /// Bytes the device read from or wrote to mapped host memory
    /// ([`crate::MappedBuf`]) in place, instead of copying them: `sim`
    /// counts each kernel's read of a mapped input and each result written
    /// into mapped memory; none of them is an `h2d`/`d2h` copy.
    pub mapped_bytes: u64,
    /// Bytes of user kernel arguments copied so that the kernel writes new
    /// versions of them (values are immutable: a kernel's written argument
    /// keeps its old value). The CPU copies none for an argument that is a
    /// temporary dying with the launch (the kernel writes it in place), so
    /// a chain of region assignments copies its array once.
    pub argument_copy_bytes: u64,
    /// Bytes copied from one place in host memory to another at the
    /// boundary: borrowed data taken in (`from_slice`; Python's
    /// `lf.asarray`), and a kept value read out into the caller's memory
    /// (`read_into`, `to_vec`, Python's `y.numpy()`). A value computed
    /// straight into the caller's memory, an owned `Vec` taken in
    /// (`from_vec`) and Python's read-only `np.asarray` views copy none.
    pub host_copy_bytes: u64,
}

/// One counter of [`Stats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each names the Stats field it counts
pub enum Counter {
    KernelsCompiled,
    KernelCacheHits,
    KernelLaunches,
    H2dCopies,
    H2dBytes,
    D2hCopies,
    D2hBytes,
    Evaluations,
    DeviceAllocations,
    DeviceBytesAllocated,
    StagedBytes,
    MappedBytes,
    ArgumentCopyBytes,
    HostCopyBytes,
}

/// Thread-safe [`Stats`] accumulator owned by a context.
#[derive(Debug, Default)]
pub struct StatsCounter {
    counters: [AtomicU64; 14],
}

impl StatsCounter {
    /// Adds `n` to one counter.
    pub fn add(&self, counter: Counter, n: u64) {
        self.counters[counter as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// The current values.
    pub fn snapshot(&self) -> Stats {
        let get = |c: Counter| self.counters[c as usize].load(Ordering::Relaxed);
        Stats {
            kernels_compiled: get(Counter::KernelsCompiled),
            kernel_cache_hits: get(Counter::KernelCacheHits),
            kernel_launches: get(Counter::KernelLaunches),
            h2d_copies: get(Counter::H2dCopies),
            h2d_bytes: get(Counter::H2dBytes),
            d2h_copies: get(Counter::D2hCopies),
            d2h_bytes: get(Counter::D2hBytes),
            evaluations: get(Counter::Evaluations),
            device_allocations: get(Counter::DeviceAllocations),
            device_bytes_allocated: get(Counter::DeviceBytesAllocated),
            staged_bytes: get(Counter::StagedBytes),
            mapped_bytes: get(Counter::MappedBytes),
            argument_copy_bytes: get(Counter::ArgumentCopyBytes),
            host_copy_bytes: get(Counter::HostCopyBytes),
        }
    }

    /// Sets every counter to zero.
    pub fn reset(&self) {
        for c in &self.counters {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// Settings of a context that every engine honours (more may come: start
/// from `Options::default()`). A backend's own settings live with it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Fuse element-wise work into kernels (false: one kernel per op, the ablation baseline).
    pub fusion: bool,
    /// Worker threads for CPU execution (0: all cores).
    pub threads: usize,
    /// A device backend splits a demand into chunks whose copies overlap
    /// its kernels (the pipeline) when the demand would move more than this
    /// many bytes between host and device, or needs more device memory
    /// than the device has free (default 64 MiB; `usize::MAX`: only when
    /// memory requires it).
    pub pipeline_threshold: usize,
}

/// [`Options::pipeline_threshold`]'s default: 64 MiB, a few milliseconds of
/// copies over PCIe, long enough that overlapping them with the kernels
/// pays for the extra launches.
pub const DEFAULT_PIPELINE_THRESHOLD: usize = 64 << 20;

impl Default for Options {
    /// Fusion on, all cores, the pipeline above 64 MiB moved.
    fn default() -> Self {
        Options {
            fusion: true,
            threads: 0,
            pipeline_threshold: DEFAULT_PIPELINE_THRESHOLD,
        }
    }
}

/// What an engine may use while it evaluates.
#[derive(Clone, Copy, Debug)]
pub struct EvalEnv<'a> {
    /// Where to count work.
    pub stats: &'a StatsCounter,
    /// The context's settings.
    pub options: &'a Options,
    /// The stream the demand runs on (0: none; see [`crate::Stream`]).
    pub stream: u64,
    /// True when the demand reads its results on the host (`to_vec`,
    /// `item`, `read_into`): a device backend may download them as it
    /// computes them. False for `eval`, whose values stay where they are
    /// computed (in device memory, on a device backend).
    pub results_to_host: bool,
}

/// An executor of expression graphs: the reference evaluator, the CPU
/// backend, the simulated device, CUDA.
pub trait Engine: Send + Sync + fmt::Debug + UnwindSafe + RefUnwindSafe {
    /// `"cpu"`, `"sim"`, `"cuda"` or `"reference"`.
    fn name(&self) -> &'static str;

    /// True when the engine runs `Op::ArgReduce` nodes (`argmax`/`argmin`
    /// in one pass) over `dtype` values; other engines are given one
    /// reduction of packed (value, index) keys where the pair fits an
    /// `i64`, else the composite of two reductions (the extreme, then its
    /// first index).
    fn runs_arg_reductions(&self, dtype: DType) -> bool {
        let _ = dtype;
        false
    }

    /// Computes `graph.outputs()`, in order. Leaves carry their data; nothing
    /// else is materialised yet. User kernel launches (`Op::Kernel` nodes)
    /// are part of the graph: each runs once, giving all its outputs.
    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>>;

    /// Computes the only output of `graph` straight into `out` (same dtype
    /// and length) without keeping it: what `read_into` asks for. Returns
    /// `out` back when the engine cannot; the caller then evaluates and copies.
    fn evaluate_into<'a>(
        &self,
        graph: &ExprGraph,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let _ = (graph, env);
        Ok(Some(out))
    }

    /// Computes every output of `graph` straight into `outs` (one per
    /// output, in order, each of its output's dtype and length) without
    /// keeping them: what a demand of several arrays into new host memory
    /// asks for (Python's `lazyfuse.compute`). Returns `outs` back when the
    /// engine cannot; the caller then evaluates and copies.
    fn evaluate_all_into<'a>(
        &self,
        graph: &ExprGraph,
        outs: Vec<SliceMut<'a>>,
        env: EvalEnv<'_>,
    ) -> Result<Option<Vec<SliceMut<'a>>>> {
        let _ = (graph, env);
        Ok(Some(outs))
    }

    /// A host copy of a value, downloading it if it lives only on the device.
    fn to_host(
        &self,
        value: &Residency,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        let _ = env;
        value.host.clone().ok_or_else(|| {
            Error::internal(
                "to_host",
                format!("a {dtype} value has no host copy and the engine has no device"),
            )
        })
    }

    /// A device copy of a value (uploading it if needed), or `None` when the
    /// engine has no device memory.
    fn to_device(
        &self,
        value: &Residency,
        env: EvalEnv<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        let _ = (value, env);
        Ok(None)
    }

    /// Copies a value that lives only on the device straight into `out`
    /// (same dtype and length): what `read_into` of a computed array asks.
    /// Returns `out` back when the engine cannot; the caller then takes a
    /// host copy and copies it.
    fn download_into<'a>(
        &self,
        value: &Residency,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let _ = (value, env);
        Ok(Some(out))
    }

    /// Page-locks the memory of `buffer` (`cuda`: `cuMemHostRegister`) so
    /// that copies from and to it go straight to the device; the engine
    /// treats it as pinned until [`Engine::unpin_host`]. The buffer is not
    /// freed or moved while pinned (the session keeps it). Engines without
    /// a device have nothing to do.
    fn pin_host(&self, buffer: &HostBuffer) -> Result<()> {
        let _ = buffer;
        Ok(())
    }

    /// Page-locks the memory of `buffer` and maps it into the device's
    /// address space (`cuda`: `cuMemHostRegister` with
    /// `CU_MEMHOSTREGISTER_DEVICEMAP`), so that kernels read it in place
    /// and results are written into it with no copy; the engine treats it
    /// as mapped until [`Engine::unpin_host`]. By default: pinned only.
    fn map_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.pin_host(buffer)
    }

    /// Ends [`Engine::pin_host`] or [`Engine::map_host`] of `buffer`
    /// (before it is freed).
    fn unpin_host(&self, buffer: &HostBuffer) {
        let _ = buffer;
    }

    /// Waits until the work queued on `stream` (0: outside any stream) is
    /// done, copies from host memory included; its errors come back here.
    /// Engines that finish their work before returning have nothing to do.
    fn synchronize(&self, stream: u64) -> Result<()> {
        let _ = stream;
        Ok(())
    }

    /// Frees device memory the engine keeps cached for reuse (a caching
    /// allocator's pool); returns the bytes released. Host engines keep none.
    fn release_memory(&self) -> usize {
        0
    }

    /// Starts deferring the release of freed device buffers (one more
    /// `defer_cleanup` guard): they are queued, not reused, until
    /// [`Engine::end_deferred_cleanup`] ends the last guard.
    fn begin_deferred_cleanup(&self) {}

    /// Ends one `defer_cleanup` guard; at the last, releases the queue.
    fn end_deferred_cleanup(&self) {}

    /// The device's timeline, on engines that simulate one (`sim`).
    fn timeline(&self) -> Option<Vec<crate::TimelineEvent>> {
        None
    }

    /// The engine's part of `explain()`: how it would run `graph`.
    fn describe(&self, graph: &ExprGraph, options: &Options) -> String;

    /// Graphviz of how the engine would run `graph` (kernels as clusters),
    /// or `None` to draw the plain expression graph.
    fn dot(&self, graph: &ExprGraph, options: &Options) -> Option<String> {
        let _ = (graph, options);
        None
    }
}
