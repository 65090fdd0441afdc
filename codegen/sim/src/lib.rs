//! The `sim` backend: a simulated device with memory of its own. Inputs are
//! uploaded (counted in `Stats`) before kernels read them, results stay in
//! device memory until read, so copies are exactly those a GPU would make.
//! Kernels are the lowered device programs the CUDA printer prints, run by
//! the SIMT interpreter (`device::simt`) with grid, block and warp semantics,
//! which also checks every memory access.
//!
//! Owns: the simulated device's memory and its runtime. Must not know: the
//! CUDA driver, fusion internals, `Array`.

use std::ops::Range;
use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, DeviceBuffer, DeviceEngine, Error, EvalEnv, HostBuffer, KernelLaunch,
    PinnedRanges, Residency, Result, SliceMut, StatsCounter, TimelineEvent,
};
use lazyfuse_fusion::{count_written_copies, Driver, Launch, Runtime, ScanLaunch};

use lazyfuse_device::{self as device, LoweringCache};
use lazyfuse_kernel::{device_scan, BuiltKernel};

mod memory;
mod timeline;

pub use memory::{SimBuffer, SimMemory};
pub use timeline::{SimTiming, Timeline};

/// The simulated-device engine: the driver over the simulated device.
pub type SimEngine = Driver<SimRuntime>;

/// The simulated device: its memory and its cache of lowered programs.
#[derive(Debug, Default)]
pub struct SimRuntime {
    lowered: LoweringCache,
    memory: Arc<SimMemory>,
    /// `None`: no timeline is kept (the default: a long-running program
    /// would keep growing it).
    timing: Option<SimTiming>,
    timeline: Timeline,
    /// Host memory pinned for the device: copies of it are not staged.
    pinned: PinnedRanges,
    /// Host memory mapped into the device: read and written in place.
    mapped: PinnedRanges,
}

impl SimRuntime {
    /// A simulated device that keeps a timeline, timed by `timing` (the
    /// most recent 65,536 intervals are kept).
    pub fn with_timing(timing: SimTiming) -> SimRuntime {
        SimRuntime::new(Some(timing), None)
    }

    /// A simulated device keeping a timeline when `timing` is given, with
    /// `memory_limit` bytes of memory (`None`: as much as the host has).
    pub fn new(timing: Option<SimTiming>, memory_limit: Option<usize>) -> SimRuntime {
        SimRuntime {
            timing,
            memory: Arc::new(SimMemory::with_limit(memory_limit)),
            ..SimRuntime::default()
        }
    }

    /// Records a copy of `bytes` bytes on `engine`, and counts it as
    /// staged unless the host memory is `pinned` (a GPU driver copies
    /// pageable memory through a pinned staging buffer).
    fn copy_event(&self, engine: DeviceEngine, bytes: usize, pinned: bool, env: EvalEnv<'_>) {
        if !pinned {
            env.stats.add(Counter::StagedBytes, bytes as u64);
        }
        let Some(timing) = self.timing else { return };
        let (rate, what) = match engine {
            DeviceEngine::HostToDevice => (timing.host_to_device, "upload"),
            _ => (timing.device_to_host, "download"),
        };
        let memory = if pinned { "pinned" } else { "pageable" };
        self.timeline
            .record(engine, env.stream, bytes as f64 / rate, || {
                format!("{what} {bytes} bytes ({memory})")
            });
    }

    /// Records a kernel over `elements` elements or threads.
    fn kernel_event(&self, name: &str, elements: usize, env: EvalEnv<'_>) {
        let Some(timing) = self.timing else { return };
        let seconds = timing.launch_overhead + elements as f64 / timing.elements_per_second;
        self.timeline
            .record(DeviceEngine::Compute, env.stream, seconds, || {
                format!("kernel {name} ({elements} elements)")
            });
    }

    /// The simulated device's memory.
    pub fn memory(&self) -> &SimMemory {
        &self.memory
    }

    fn on_device(&self, data: HostBuffer) -> Arc<dyn DeviceBuffer> {
        Arc::new(SimBuffer::new(data, &self.memory))
    }

    /// A device copy of `source`.
    fn copy(&self, source: &HostBuffer, stats: &StatsCounter) -> Result<HostBuffer> {
        let mut copy = self.memory.allocate(source.dtype(), source.len(), stats)?;
        copy.as_slice_mut().copy_from(source)?;
        Ok(copy)
    }

    /// Device memory for `len` elements of `dtype` that a kernel is to
    /// overwrite: every bit set (NaN for floats), except bools (whose only
    /// bit patterns are 0 and 1), which stay zero.
    fn poisoned(&self, dtype: DType, len: usize, stats: &StatsCounter) -> Result<HostBuffer> {
        let mut buffer = self.memory.allocate(dtype, len, stats)?;
        if dtype != DType::Bool {
            let mut slice = buffer.as_slice_mut();
            if let Some(bytes) = slice.as_bytes_mut() {
                bytes.fill(0xFF);
            }
        }
        Ok(buffer)
    }

    /// Runs a user kernel launch on the simulator: the written arguments'
    /// new versions are copies made on the device.
    fn run_user_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: &[(Arc<dyn DeviceBuffer>, DType)],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        let Some(kernel) = launch.kernel.as_any().downcast_ref::<BuiltKernel>() else {
            // Raw CUDA source: the kernel says why it cannot run here.
            return launch.kernel.run_host(launch, &[]).map(|_| Vec::new());
        };
        let hosts = arrays
            .iter()
            .map(|(b, _)| {
                let buffer = sim_buffer(b)?;
                if buffer.is_mapped() {
                    env.stats.add(Counter::MappedBytes, buffer.bytes() as u64);
                }
                Ok(buffer.data())
            })
            .collect::<Result<Vec<_>>>()?;
        // The kernel writes new versions: copies made on the device, or,
        // for a launch that overwrites them whole, fresh memory poisoned so
        // that an element it fails to write shows (NaN, all bits set).
        let mut outputs: Vec<HostBuffer> = launch
            .written
            .iter()
            .map(|&w| {
                let source = hosts.get(w).ok_or_else(|| {
                    Error::internal("sim backend", "a written argument is missing")
                })?;
                match launch.overwrites {
                    true => self.poisoned(source.dtype(), source.len(), env.stats),
                    false => self.copy(source, env.stats),
                }
            })
            .collect::<Result<_>>()?;
        kernel.simulate(launch, &hosts, &mut outputs)?;
        let threads = launch
            .grid
            .iter()
            .chain(&launch.block)
            .map(|&d| d as usize)
            .product();
        self.kernel_event(kernel.device.name.as_str(), threads, env);
        Ok(outputs.into_iter().map(|o| self.on_device(o)).collect())
    }
}

fn sim_buffer(device: &Arc<dyn DeviceBuffer>) -> Result<&SimBuffer> {
    device
        .as_any()
        .downcast_ref::<SimBuffer>()
        .ok_or_else(|| Error::internal("sim backend", "a device buffer of another backend"))
}

impl Runtime for SimRuntime {
    type Buffer = Arc<dyn DeviceBuffer>;
    const DEVICE: bool = true;
    const FUSES_SCAN_PRODUCERS: bool = true;

    /// 64-bit values: narrower ones reduce as one packed key.
    const RUNS_ROW_PROGRAMS: bool = true;

    fn runs_arg_reductions(dtype: DType) -> bool {
        dtype.size() == 8
    }

    fn name(&self) -> &'static str {
        "sim"
    }

    fn executor(&self) -> String {
        "sim (simulated device memory; device programs run by the SIMT interpreter)".into()
    }

    fn resident(&self, value: &Residency) -> Option<Arc<dyn DeviceBuffer>> {
        value.device.clone().or_else(|| {
            // Mapped host memory is the device's to read, in place.
            let host = value.host.as_ref()?;
            self.mapped
                .contains(host.as_bytes())
                .then(|| Arc::new(SimBuffer::mapped(Arc::clone(host))) as Arc<dyn DeviceBuffer>)
        })
    }

    fn residency(&self, buffer: Arc<dyn DeviceBuffer>) -> Residency {
        Residency::device(buffer)
    }

    fn upload(&self, host: &Arc<HostBuffer>, env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        let bytes = host.as_bytes();
        let pinned = self.pinned.contains(bytes);
        self.copy_event(DeviceEngine::HostToDevice, bytes.len(), pinned, env);
        Ok(self.on_device(self.copy(host, env.stats)?))
    }

    fn upload_part(
        &self,
        host: &Arc<HostBuffer>,
        range: Range<usize>,
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let bytes = host.bytes_of(range.clone(), "sim upload")?;
        let pinned = self.pinned.contains(bytes);
        self.copy_event(DeviceEngine::HostToDevice, bytes.len(), pinned, env);
        let mut copy = self.memory.allocate(host.dtype(), range.len(), env.stats)?;
        copy.as_slice_mut().copy_from_range(host, range.start)?;
        Ok(self.on_device(copy))
    }

    fn available_memory(&self) -> Option<usize> {
        self.memory.available()
    }

    fn wait_streams(&self, waiter: u64, waited: &[u64]) {
        self.timeline.wait(waiter, waited);
    }

    fn download(
        &self,
        buffer: &Arc<dyn DeviceBuffer>,
        _dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        // Into new (pageable) host memory.
        self.copy_event(DeviceEngine::DeviceToHost, buffer.bytes(), false, env);
        Ok(Arc::new(sim_buffer(buffer)?.data().clone()))
    }

    fn download_into(
        &self,
        buffer: &Arc<dyn DeviceBuffer>,
        mut out: SliceMut<'_>,
        env: EvalEnv<'_>,
    ) -> Result<()> {
        let target = out.as_bytes_mut();
        let mapped = target.as_deref().is_some_and(|b| self.mapped.contains(b));
        let pinned = target.is_some_and(|b| self.pinned.contains(b));
        if !mapped {
            // Mapped memory is written by the device itself: no copy engine.
            self.copy_event(DeviceEngine::DeviceToHost, buffer.bytes(), pinned, env);
        }
        out.copy_from(sim_buffer(buffer)?.data())
    }

    fn pin_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.pinned.insert(buffer.as_bytes());
        Ok(())
    }

    fn map_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.pinned.insert(buffer.as_bytes());
        self.mapped.insert(buffer.as_bytes());
        Ok(())
    }

    fn is_mapped(&self, bytes: &[u8]) -> bool {
        self.mapped.contains(bytes)
    }

    fn unpin_host(&self, buffer: &HostBuffer) {
        self.pinned.remove(buffer.as_bytes());
        self.mapped.remove(buffer.as_bytes());
    }

    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        let inputs = inputs
            .iter()
            .map(|i| i.map(sim_buffer).transpose())
            .collect::<Result<Vec<_>>>()?;
        let mapped_reads: usize = inputs
            .iter()
            .flatten()
            .filter(|b| b.is_mapped())
            .map(|b| b.bytes())
            .sum();
        env.stats.add(Counter::MappedBytes, mapped_reads as u64);
        let inputs: Vec<Option<&HostBuffer>> =
            inputs.iter().map(|i| i.map(SimBuffer::data)).collect();
        let program = self.lowered.get(launch, env)?;
        let elements = launch.domain.iter().product();
        self.kernel_event(&program.name, elements, env);
        let (outputs, partials) = device::simulate_in(&program, launch, &inputs, |dtype, len| {
            self.memory.allocate(dtype, len, env.stats)
        })?;
        // The partials return to the memory with their buffer.
        drop(partials.map(|p| self.on_device(p)));
        Ok(outputs.into_iter().map(|o| self.on_device(o)).collect())
    }

    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: Vec<(Arc<dyn DeviceBuffer>, DType)>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        count_written_copies(launch, &arrays, env);
        self.run_user_kernel(launch, &arrays, env)
    }

    fn scan(
        &self,
        scan: &ScanLaunch,
        input: &Arc<dyn DeviceBuffer>,
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let zeros = |dtype, len| Ok(self.on_device(self.memory.allocate(dtype, len, env.stats)?));
        let run = &mut |launch: &KernelLaunch, arrays: &[(Arc<dyn DeviceBuffer>, DType)]| {
            self.run_user_kernel(launch, arrays, env)
        };
        device_scan::scan(scan, input, env, &zeros, run)
    }

    fn scan_fused(
        &self,
        scan: &ScanLaunch,
        producer: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let zeros = |dtype, len| Ok(self.on_device(self.memory.allocate(dtype, len, env.stats)?));
        let run = &mut |launch: &KernelLaunch, arrays: &[(Arc<dyn DeviceBuffer>, DType)]| {
            self.run_user_kernel(launch, arrays, env)
        };
        device_scan::scan_fused(self, scan, producer, inputs, env, &zeros, run)
    }

    fn explain_launch(&self, index: usize, launch: &Launch) -> String {
        device::explain_launch(index, launch)
    }

    fn user_kernel_executor(&self, _launch: &KernelLaunch) -> String {
        "the SIMT interpreter on simulated device memory".into()
    }

    fn release_memory(&self) -> usize {
        self.memory.release_cached()
    }

    fn begin_deferred_cleanup(&self) {
        self.memory.defer();
    }

    fn timeline(&self) -> Option<Vec<TimelineEvent>> {
        self.timing.map(|_| self.timeline.events())
    }

    fn end_deferred_cleanup(&self) {
        self.memory.resume();
    }
}
