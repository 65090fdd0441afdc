//! What a backend provides for the driver (`Driver`) to
//! run a plan on it: the [`Runtime`] trait, what a scan reads
//! ([`ScanInput`]), and the default of running a scan's producer first.

use std::fmt;
use std::ops::Range;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Error, EvalEnv, HostBuffer, KernelLaunch, Residency, Result,
    SliceMut, TimelineEvent,
};

use crate::program::{Launch, ScanLaunch};

/// Runs `producer`, then `scan` over its output: [`Runtime::scan_fused`]
/// for a runtime that does not compute the producer inside the scan.
pub fn launch_then_scan<R: Runtime + ?Sized>(
    runtime: &R,
    scan: &ScanLaunch,
    producer: &Launch,
    inputs: &[Option<&R::Buffer>],
    env: EvalEnv<'_>,
) -> Result<R::Buffer> {
    let produced = runtime.launch(producer, inputs, env)?;
    env.stats.add(Counter::KernelLaunches, 1);
    let input = produced
        .first()
        .ok_or_else(|| Error::internal(runtime.name(), "a scan's producer returned no output"))?;
    runtime.scan(scan, input, env)
}

/// Counts, as [`Counter::ArgumentCopyBytes`], the device copies of the
/// arguments `launch` writes, for a runtime that copies them unless the
/// launch overwrites them whole ([`KernelLaunch::overwrites`]).
pub fn count_written_copies(
    launch: &KernelLaunch,
    arrays: &[(Arc<dyn DeviceBuffer>, DType)],
    env: EvalEnv<'_>,
) {
    if launch.overwrites {
        return;
    }
    let bytes = (launch.written.iter())
        .filter_map(|&w| arrays.get(w))
        .map(|(buffer, _)| buffer.bytes() as u64)
        .sum();
    env.stats.add(Counter::ArgumentCopyBytes, bytes);
}

/// What a scan reads: a buffer of its values, or its element-wise producer
/// (`ScanLaunch::producer`) with the producer's inputs.
#[derive(Clone, Copy, Debug)]
pub enum ScanInput<'a, B> {
    /// The values, computed.
    Values(&'a B),
    /// The launch computing them, and its inputs.
    Producer(&'a Launch, &'a [Option<&'a B>]),
}

/// What a backend provides for the driver to run a plan on it.
pub trait Runtime: Send + Sync + fmt::Debug + UnwindSafe + RefUnwindSafe {
    /// A buffer in the memory the runtime computes in: host memory for the
    /// CPU, device memory for `sim` and `cuda`.
    type Buffer: Clone + Send + Sync;

    /// True when the runtime computes in memory of its own, so that the
    /// plan copies inputs in; false when it computes in host memory (its
    /// uploads are never planned).
    const DEVICE: bool;

    /// True when the runtime's [`Runtime::scan_fused`] computes a scan's
    /// element-wise producer inside the scan: the driver then runs the
    /// producer through it instead of materialising its output.
    const FUSES_SCAN_PRODUCERS: bool = false;

    /// True when the runtime runs row programs (`FusedKernel::stages`):
    /// the driver then merges reductions with the work that reads them back
    /// over their rows (`FusionOptions::row_programs`).
    const RUNS_ROW_PROGRAMS: bool = false;

    /// True when the runtime's scan methods also run arg-reductions
    /// (`ScanKind::Arg`) of `dtype` values: the driver then reports
    /// `Engine::runs_arg_reductions`, and only then do graphs hold them.
    fn runs_arg_reductions(dtype: DType) -> bool {
        let _ = dtype;
        false
    }

    /// `"cpu"`, `"sim"` or `"cuda"`.
    fn name(&self) -> &'static str;

    /// The first line of `explain()`'s part: what executes, and where.
    fn executor(&self) -> String;

    /// The copy of `value` already in the runtime's memory, if any.
    fn resident(&self, value: &Residency) -> Option<Self::Buffer>;

    /// A value held in `buffer`, as the session keeps it.
    fn residency(&self, buffer: Self::Buffer) -> Residency;

    /// Copies host data into the runtime's memory (the driver counts it).
    fn upload(&self, host: &Arc<HostBuffer>, env: EvalEnv<'_>) -> Result<Self::Buffer>;

    /// Copies the elements `range` of host data into the runtime's memory,
    /// as a buffer of their own (the driver counts it): one chunk of a
    /// pipelined input. By default: a host copy of the range, uploaded.
    fn upload_part(
        &self,
        host: &Arc<HostBuffer>,
        range: Range<usize>,
        env: EvalEnv<'_>,
    ) -> Result<Self::Buffer> {
        let mut part = HostBuffer::try_zeros(host.dtype(), range.len())?;
        part.as_slice_mut().copy_from_range(host, range.start)?;
        self.upload(&Arc::new(part), env)
    }

    /// The bytes of its memory the runtime can still allocate, when it has
    /// a limit (`ContextBuilder::device_memory_limit`, or a device's free
    /// memory); `None` when it does not know of one.
    fn available_memory(&self) -> Option<usize> {
        None
    }

    /// Waits until the work queued on `stream` is done (`Engine::synchronize`).
    fn synchronize(&self, stream: u64) -> Result<()> {
        let _ = stream;
        Ok(())
    }

    /// Makes later work on stream `waiter` wait for everything queued so
    /// far on the streams `waited` (an event on a GPU): how the pipeline
    /// forks its streams from the demand's stream and joins them back.
    /// Runtimes that run everything in order have nothing to do.
    fn wait_streams(&self, waiter: u64, waited: &[u64]) {
        let _ = (waiter, waited);
    }

    /// Work of a demand on stream `stream` (not 0) begins: the runtime may
    /// run it on a queue of its own (a CUDA stream). Every
    /// `enter_stream` is followed by one [`Runtime::leave_stream`].
    fn enter_stream(&self, stream: u64) {
        let _ = stream;
    }

    /// The work of a demand on `stream` is queued: the runtime waits for
    /// it, so that its results are complete when the demand returns (and
    /// reports an asynchronous error of it).
    fn leave_stream(&self, stream: u64) -> Result<()> {
        let _ = stream;
        Ok(())
    }

    /// Copies a buffer back to host memory as elements of `dtype` (the
    /// driver counts it).
    fn download(
        &self,
        buffer: &Self::Buffer,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>>;

    /// Copies a buffer (elements of `out`'s dtype) straight into `out`, of
    /// its length (the driver counts it). By default: a download, then a
    /// copy.
    fn download_into(
        &self,
        buffer: &Self::Buffer,
        mut out: SliceMut<'_>,
        env: EvalEnv<'_>,
    ) -> Result<()> {
        let host = self.download(buffer, out.dtype(), env)?;
        out.copy_from(&host)
    }

    /// Page-locks host memory for direct copies (`Engine::pin_host`);
    /// runtimes in host memory have nothing to do.
    fn pin_host(&self, buffer: &HostBuffer) -> Result<()> {
        let _ = buffer;
        Ok(())
    }

    /// Page-locks host memory and maps it into the device
    /// (`Engine::map_host`): [`Runtime::resident`] then finds arrays over
    /// it in place, and [`Runtime::is_mapped`] tells results read into it.
    /// By default: pinned only.
    fn map_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.pin_host(buffer)
    }

    /// Whether all of `bytes` lies in host memory mapped into the device:
    /// a result read into it is written there by the device (counted as
    /// mapped bytes, not as a copy).
    fn is_mapped(&self, bytes: &[u8]) -> bool {
        let _ = bytes;
        false
    }

    /// Ends [`Runtime::pin_host`] or [`Runtime::map_host`] of `buffer`.
    fn unpin_host(&self, buffer: &HostBuffer) {
        let _ = buffer;
    }

    /// Runs one fused launch over its inputs' buffers (`None` for generated
    /// inputs); returns its outputs, one per kernel output. Counts
    /// compilations and cache hits; the driver counts the launch.
    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Self::Buffer>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Self::Buffer>>;

    /// Runs an element-wise launch whose outputs `(index, out)` go straight
    /// into the caller's host memory (a runtime computing in host memory);
    /// returns `outs` back when it cannot. The other outputs are dropped.
    fn launch_into<'a>(
        &self,
        launch: &Launch,
        inputs: &[Option<&Self::Buffer>],
        outs: Vec<(usize, SliceMut<'a>)>,
        env: EvalEnv<'_>,
    ) -> Result<Option<Vec<(usize, SliceMut<'a>)>>> {
        let _ = (launch, inputs, env);
        Ok(Some(outs))
    }

    /// Runs a user kernel launch over its array arguments (in the runtime's
    /// memory, with their dtypes); returns the new values of the arrays it
    /// writes, in `launch.written` order. Values are immutable: a written
    /// argument is written in place only when `arrays` holds its buffer's
    /// one reference (a temporary dead after this launch, which the driver
    /// gives up), otherwise its copy is.
    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: Vec<(Self::Buffer, DType)>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Self::Buffer>>;

    /// Runs a user kernel launch that writes one array, its new value going
    /// straight into the caller's host memory `out` (a runtime computing in
    /// host memory); returns `out` back when it cannot.
    fn run_kernel_into<'a>(
        &self,
        launch: &KernelLaunch,
        arrays: &[(Self::Buffer, DType)],
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let _ = (launch, arrays, env);
        Ok(Some(out))
    }

    /// Runs a scan (`cumsum`, `cumprod`) of `input` as `scan` says, in the
    /// order of `lazyfuse_core::reference::scan`; returns the output. Counts
    /// the kernels it launches.
    fn scan(
        &self,
        scan: &ScanLaunch,
        input: &Self::Buffer,
        env: EvalEnv<'_>,
    ) -> Result<Self::Buffer>;

    /// Runs a scan whose input is the output of `producer` (an element-wise
    /// launch over as many elements, `ScanLaunch::producer`) from the
    /// producer's inputs; returns the scan's output. Counts the kernels it
    /// launches. This default runs the producer, then the scan; a runtime
    /// that sets [`Runtime::FUSES_SCAN_PRODUCERS`] computes the producer
    /// inside the scan instead, never materialising it.
    fn scan_fused(
        &self,
        scan: &ScanLaunch,
        producer: &Launch,
        inputs: &[Option<&Self::Buffer>],
        env: EvalEnv<'_>,
    ) -> Result<Self::Buffer> {
        launch_then_scan(self, scan, producer, inputs, env)
    }

    /// Runs a scan writing its output straight into the caller's host
    /// memory `out` (a runtime computing in host memory); returns `out`
    /// back when it cannot (the default), having run nothing. Counts the
    /// kernels it launches.
    fn scan_into<'a>(
        &self,
        scan: &ScanLaunch,
        input: ScanInput<'_, Self::Buffer>,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let _ = (scan, input, env);
        Ok(Some(out))
    }

    /// What `explain()` says of one launch of the program (how it runs, the
    /// code it runs); empty for nothing.
    fn explain_launch(&self, index: usize, launch: &Launch) -> String;

    /// What runs user kernels, for `explain()`.
    fn user_kernel_executor(&self, launch: &KernelLaunch) -> String;

    /// Frees memory kept for reuse; returns the bytes released.
    fn release_memory(&self) -> usize {
        0
    }

    /// Queues freed buffers instead of reusing them (one more guard).
    fn begin_deferred_cleanup(&self) {}

    /// Ends one guard; at the last, releases the queued buffers.
    fn end_deferred_cleanup(&self) {}

    /// The device's timeline, for a runtime that simulates one.
    fn timeline(&self) -> Option<Vec<TimelineEvent>> {
        None
    }
}
