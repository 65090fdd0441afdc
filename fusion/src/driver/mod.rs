//! The driver: the one path every demand takes, on every backend.
//!
//! graph → program cache (fusion on a miss) → plan → bind leaves → run the
//! plan's steps on a [`Runtime`] → results handed back to the session,
//! which writes them into the graph's nodes.
//!
//! A backend is a [`Runtime`]: where its buffers live, how it copies them,
//! how it runs a fused launch or a user kernel, and what it adds to
//! `explain()`. It never fuses or plans; [`Driver`] wraps it into a
//! [`lazyfuse_core::Engine`]. `explain()` and `to_dot()` read the same cached
//! program a demand runs, so nothing is fused twice.

use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Engine, Error, EvalEnv, ExprGraph, HostBuffer, KernelLaunch,
    Options, Residency, Result, SliceMut, TimelineEvent,
};

use crate::cache::ProgramCache;
use crate::explain;
use crate::partition::FusionOptions;
use crate::pipeline::{self, Destinations, Leaves, Pipeline};
use crate::plan::{self, Plan, Step};
use crate::program::{BufferId, BufferKind, Launch, Program, Work};
use crate::runtime::Runtime;

mod into;

/// A [`Runtime`] driven as an [`Engine`]: owns the program cache and runs
/// every demand's plan.
#[derive(Debug)]
pub struct Driver<R> {
    runtime: R,
    programs: ProgramCache,
}

impl<R: Runtime + Default> Default for Driver<R> {
    fn default() -> Self {
        Driver::new(R::default())
    }
}

/// A user launch's array arguments in the runtime's memory, with their dtypes.
type KernelArrays<R> = Vec<(<R as Runtime>::Buffer, DType)>;

impl<R: Runtime> Driver<R> {
    /// The driver of `runtime`, with an empty program cache.
    pub fn new(runtime: R) -> Driver<R> {
        Driver {
            runtime,
            programs: ProgramCache::default(),
        }
    }

    /// The runtime.
    pub fn runtime(&self) -> &R {
        &self.runtime
    }

    fn program(&self, graph: &ExprGraph, options: &Options) -> Result<Arc<Program>> {
        let fusion = FusionOptions {
            row_programs: R::RUNS_ROW_PROGRAMS,
            ..FusionOptions::of(options)
        };
        self.programs.get(graph, &fusion)
    }

    fn plan(&self, program: &Program, graph: &ExprGraph) -> Plan {
        plan::plan(program, R::DEVICE, |b| {
            self.leaf(program, graph, b).is_some()
        })
    }

    /// The pipeline `program` runs as, when it runs as one (a device
    /// runtime, a program that qualifies, and enough to move or too little
    /// memory); a demand that keeps its outputs on the device (not
    /// `outputs_to_host`) runs as one only when it does not fit.
    fn pipeline(
        &self,
        program: &Program,
        graph: &ExprGraph,
        options: &Options,
        outputs_to_host: bool,
    ) -> Option<Pipeline> {
        if !R::DEVICE {
            return None;
        }
        let available = || self.runtime.available_memory();
        let resident = |b| self.leaf(program, graph, b).is_some();
        Pipeline::of(program, options, available, resident, outputs_to_host)
    }

    /// Runs `pipeline`, its chunked outputs going to `destinations`;
    /// returns the values of the launch's outputs (none when they went
    /// into the caller's memory).
    fn run_pipeline(
        &self,
        pipeline: &Pipeline,
        program: &Program,
        graph: &ExprGraph,
        destinations: Destinations<'_>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Residency>> {
        let op = self.runtime.name();
        let resident = |b| self.leaf(program, graph, b);
        let host = |b| {
            program
                .leaf(b, graph)
                .and_then(|n| n.data.as_ref()?.host.clone())
                .ok_or_else(|| Error::internal(op, "a pipelined leaf with no host data"))
        };
        let leaves = Leaves {
            resident: &resident,
            host: &host,
        };
        pipeline::run(&self.runtime, pipeline, leaves, destinations, env)
    }

    /// Runs `work`, a demand's work on `env.stream`, between
    /// [`Runtime::enter_stream`] and [`Runtime::leave_stream`] (for a
    /// stream other than 0); the stream is left even when `work` fails.
    fn on_stream<T>(&self, env: EvalEnv<'_>, work: impl FnOnce() -> Result<T>) -> Result<T> {
        if env.stream == 0 {
            return work();
        }
        self.runtime.enter_stream(env.stream);
        let done = work();
        let left = self.runtime.leave_stream(env.stream);
        let value = done?;
        left.map(|()| value)
    }

    /// The value of a demanded leaf that no launch computed.
    fn leaf_value(
        &self,
        program: &Program,
        graph: &ExprGraph,
        buffer: BufferId,
    ) -> Result<Residency> {
        let op = self.runtime.name();
        match program.buffers[buffer.index()].kind {
            // A demanded leaf (or a reshape of one) that no kernel read: nothing moved.
            BufferKind::Leaf { .. } => program
                .leaf(buffer, graph)
                .and_then(|n| n.data.clone())
                .ok_or_else(|| Error::internal(op, "a leaf with no data")),
            BufferKind::Temp => Err(Error::internal(op, "an output was not computed")),
        }
    }

    /// The runtime's copy of a leaf buffer, if it has one.
    fn leaf(&self, program: &Program, graph: &ExprGraph, buffer: BufferId) -> Option<R::Buffer> {
        let data = program.leaf(buffer, graph)?.data.as_ref()?;
        self.runtime.resident(data)
    }

    /// Binds the program's leaves, then runs the plan's steps up to (not
    /// including) the step `stop`; returns every buffer.
    fn run(
        &self,
        program: &Program,
        graph: &ExprGraph,
        stop: Option<Step>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Option<R::Buffer>>> {
        let op = self.runtime.name();
        let mut buffers: Vec<Option<R::Buffer>> = (0..program.buffers.len())
            .map(|b| self.leaf(program, graph, BufferId(b as u32)))
            .collect();
        // A host runtime's plan is its launches in order: not built per
        // demand, so small demands stay cheap.
        let planned;
        let steps: &mut dyn Iterator<Item = Step> = if R::DEVICE {
            planned = self.plan(program, graph);
            &mut planned.steps.iter().copied()
        } else {
            &mut program.schedule.iter().map(|&work| plan::step(work))
        };
        for (position, step) in steps.enumerate() {
            if Some(step) == stop {
                break;
            }
            match step {
                Step::Upload(b) => {
                    let leaf = program
                        .leaf(b, graph)
                        .ok_or_else(|| Error::internal(op, "upload of a temporary"))?;
                    let host = leaf
                        .data
                        .as_ref()
                        .and_then(|d| d.host.as_ref())
                        .ok_or_else(|| Error::internal(op, "a leaf with no host data"))?;
                    let copy = self.upload(host, env)?;
                    if let (Some(origin), Some(device)) =
                        (&leaf.origin, self.runtime.residency(copy.clone()).device)
                    {
                        // Kept with its array: later demands upload nothing.
                        origin.attach_device(device);
                    }
                    buffers[b.index()] = Some(copy);
                }
                Step::Launch(l) if R::FUSES_SCAN_PRODUCERS && program.feeds_scan(l) => {}
                Step::Launch(l) => {
                    let launch = &program.launches[l];
                    let outputs = {
                        let inputs = launch_inputs(op, launch, &buffers)?;
                        self.runtime.launch(launch, &inputs, env)?
                    };
                    env.stats.add(Counter::KernelLaunches, 1);
                    if outputs.len() != launch.outputs.len() {
                        return Err(Error::internal(op, "a launch returned too few outputs"));
                    }
                    for (id, value) in launch.outputs.iter().zip(outputs) {
                        buffers[id.index()] = Some(value);
                    }
                }
                Step::UserLaunch(u) => self.user_launch(program, graph, u, &mut buffers, env)?,
                Step::Scan(s) => {
                    let scan = &program.scans[s];
                    let output = if let (true, Some(p)) = (R::FUSES_SCAN_PRODUCERS, scan.producer) {
                        let producer = &program.launches[p];
                        let inputs = launch_inputs(op, producer, &buffers)?;
                        self.runtime.scan_fused(scan, producer, &inputs, env)?
                    } else {
                        let input = buffers[scan.input.index()].as_ref().ok_or_else(|| {
                            Error::internal(op, format!("{} is not computed", scan.input))
                        })?;
                        self.runtime.scan(scan, input, env)?
                    };
                    buffers[scan.output.index()] = Some(output);
                }
                Step::Free(b) => buffers[b.index()] = None,
            }
            if !R::DEVICE {
                // The host's steps are the schedule: free what died there,
                // so that host memory holds only live values.
                free_dead(program, program.schedule[position], &mut buffers);
            }
        }
        Ok(buffers)
    }

    /// Runs user launch `index` of the program over its arguments' buffers
    /// and stores the buffers it writes.
    fn user_launch(
        &self,
        program: &Program,
        graph: &ExprGraph,
        index: usize,
        buffers: &mut [Option<R::Buffer>],
        env: EvalEnv<'_>,
    ) -> Result<()> {
        let (launch, arrays) = self.user_arguments(program, graph, index, buffers)?;
        let user = &program.user_launches[index];
        // Arguments dead after the launch are the launch's alone: a runtime
        // may write one in place when nothing else holds it.
        free_dead(program, Work::User(index), buffers);
        let outputs = self.runtime.run_kernel(launch, arrays, env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        if outputs.len() != user.outputs.len() {
            return Err(Error::internal(
                format!("kernel '{}'", launch.kernel.name()),
                format!(
                    "{} values for {} outputs",
                    outputs.len(),
                    user.outputs.len()
                ),
            ));
        }
        for (slot, value) in user.outputs.iter().zip(outputs) {
            if let Some(b) = slot {
                buffers[b.index()] = Some(value);
            }
        }
        Ok(())
    }

    /// User launch `index` and its array arguments.
    fn user_arguments<'g>(
        &self,
        program: &Program,
        graph: &'g ExprGraph,
        index: usize,
        buffers: &[Option<R::Buffer>],
    ) -> Result<(&'g KernelLaunch, KernelArrays<R>)> {
        let op = self.runtime.name();
        let user = &program.user_launches[index];
        let launch = user
            .launch(program, graph)
            .ok_or_else(|| Error::internal(op, "a user launch with no kernel node"))?;
        let arrays = user
            .args
            .iter()
            .map(|b| {
                let buffer = buffers[b.index()]
                    .clone()
                    .ok_or_else(|| Error::internal(op, format!("{b} is not computed")))?;
                Ok((buffer, program.buffers[b.index()].dtype))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((launch, arrays))
    }

    fn upload(&self, host: &Arc<HostBuffer>, env: EvalEnv<'_>) -> Result<R::Buffer> {
        let copy = self.runtime.upload(host, env)?;
        if R::DEVICE {
            env.stats.add(Counter::H2dCopies, 1);
            env.stats
                .add(Counter::H2dBytes, host.as_bytes().len() as u64);
        }
        Ok(copy)
    }

    /// `value` in the runtime's memory: its copy there, or its host copy uploaded.
    fn in_runtime(&self, value: &Residency, env: EvalEnv<'_>) -> Result<R::Buffer> {
        if let Some(found) = self.runtime.resident(value) {
            return Ok(found);
        }
        let host = value
            .host
            .as_ref()
            .ok_or_else(|| Error::internal(self.runtime.name(), "a value with no copy"))?;
        self.upload(host, env)
    }

    /// [`Engine::evaluate`] within its stream.
    fn evaluate_on_stream(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        let program = self.program(graph, env.options)?;
        if let Some(pipeline) = self.pipeline(&program, graph, env.options, env.results_to_host) {
            let values = self.run_pipeline(&pipeline, &program, graph, Destinations::New, env)?;
            let written = pipeline.launch_outputs(&program);
            return program
                .outputs
                .iter()
                .map(|o| match written.iter().position(|b| *b == o.buffer) {
                    Some(j) => Ok(values[j].clone()),
                    None => self.leaf_value(&program, graph, o.buffer),
                })
                .collect();
        }
        let buffers = self.run(&program, graph, None, env)?;
        program
            .outputs
            .iter()
            .map(|o| match &buffers[o.buffer.index()] {
                Some(b) => Ok(self.runtime.residency(b.clone())),
                None => self.leaf_value(&program, graph, o.buffer),
            })
            .collect()
    }

    /// Downloads `value` (a device value) as `dtype` elements, counted.
    fn download(
        &self,
        value: &Residency,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        let op = self.runtime.name();
        let buffer = self
            .runtime
            .resident(value)
            .ok_or_else(|| Error::internal(op, format!("a {dtype} value with no copy")))?;
        let host = self.runtime.download(&buffer, dtype, env)?;
        env.stats.add(Counter::D2hCopies, 1);
        env.stats
            .add(Counter::D2hBytes, host.as_bytes().len() as u64);
        Ok(host)
    }

    /// What `explain()` says of the user launches: what runs each.
    fn explain_user_launches(&self, program: &Program, graph: &ExprGraph) -> String {
        let mut text = String::new();
        for (u, user) in program.user_launches.iter().enumerate() {
            if let Some(launch) = user.launch(program, graph) {
                text.push_str(&format!(
                    "u{u}: kernel '{}' grid {:?} block {:?} runs on {}\n",
                    launch.kernel.name(),
                    launch.grid,
                    launch.block,
                    self.runtime.user_kernel_executor(launch)
                ));
            }
        }
        text
    }
}

/// Drops the buffers whose values die after `work` (its last reads).
fn free_dead<B>(program: &Program, work: Work, buffers: &mut [Option<B>]) {
    for b in program.reads(work) {
        if program.dies_after[b.index()] == Some(work) {
            buffers[b.index()] = None;
        }
    }
}

/// The buffers of one launch's inputs.
fn launch_inputs<'a, B>(
    op: &str,
    launch: &Launch,
    buffers: &'a [Option<B>],
) -> Result<Vec<Option<&'a B>>> {
    launch
        .inputs
        .iter()
        .map(|i| match i.buffer {
            None => Ok(None),
            Some(b) => buffers[b.index()]
                .as_ref()
                .map(Some)
                .ok_or_else(|| Error::internal(op, format!("{b} is not computed"))),
        })
        .collect()
}

impl<R: Runtime> Engine for Driver<R> {
    fn name(&self) -> &'static str {
        self.runtime.name()
    }

    fn runs_arg_reductions(&self, dtype: DType) -> bool {
        R::runs_arg_reductions(dtype)
    }

    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        self.on_stream(env, || self.evaluate_on_stream(graph, env))
    }

    fn evaluate_into<'a>(
        &self,
        graph: &ExprGraph,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        self.on_stream(env, || self.evaluate_into_on_stream(graph, out, env))
    }

    fn evaluate_all_into<'a>(
        &self,
        graph: &ExprGraph,
        outs: Vec<SliceMut<'a>>,
        env: EvalEnv<'_>,
    ) -> Result<Option<Vec<SliceMut<'a>>>> {
        self.on_stream(env, || self.evaluate_all_into_on_stream(graph, outs, env))
    }

    fn download_into<'a>(
        &self,
        value: &Residency,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let Some(buffer) = self.runtime.resident(value).filter(|_| R::DEVICE) else {
            return Ok(Some(out));
        };
        self.on_stream(env, || {
            pipeline::download_into(&self.runtime, &buffer, out, env)
        })?;
        Ok(None)
    }

    fn pin_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.runtime.pin_host(buffer)
    }

    fn map_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.runtime.map_host(buffer)
    }

    fn unpin_host(&self, buffer: &HostBuffer) {
        self.runtime.unpin_host(buffer);
    }

    fn to_host(
        &self,
        value: &Residency,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        if let Some(host) = &value.host {
            return Ok(Arc::clone(host));
        }
        self.on_stream(env, || self.download(value, dtype, env))
    }

    fn to_device(
        &self,
        value: &Residency,
        env: EvalEnv<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        if !R::DEVICE {
            return Ok(None);
        }
        let buffer = self.on_stream(env, || self.in_runtime(value, env))?;
        Ok(self.runtime.residency(buffer).device)
    }

    fn synchronize(&self, stream: u64) -> Result<()> {
        self.runtime.synchronize(stream)
    }

    fn release_memory(&self) -> usize {
        self.runtime.release_memory()
    }

    fn begin_deferred_cleanup(&self) {
        self.runtime.begin_deferred_cleanup();
    }

    fn end_deferred_cleanup(&self) {
        self.runtime.end_deferred_cleanup();
    }

    fn timeline(&self) -> Option<Vec<TimelineEvent>> {
        self.runtime.timeline()
    }

    fn describe(&self, graph: &ExprGraph, options: &Options) -> String {
        let program = match self.program(graph, options) {
            Ok(program) => program,
            Err(e) => return format!("fusion failed: {e}\n"),
        };
        let plan = self.plan(&program, graph);
        let mut text = format!(
            "executor: {}\n{}",
            self.runtime.executor(),
            explain::program_listing(&program, &plan)
        );
        // As a demand of the values on the host (`to_vec`) would run.
        if let Some(pipeline) = self.pipeline(&program, graph, options, true) {
            text.push_str(&pipeline.describe(&program));
        }
        for (k, launch) in program.launches.iter().enumerate() {
            text.push_str(&self.runtime.explain_launch(k, launch));
        }
        text.push_str(&self.explain_user_launches(&program, graph));
        text
    }

    fn dot(&self, graph: &ExprGraph, options: &Options) -> Option<String> {
        self.program(graph, options)
            .ok()
            .map(|program| explain::program_dot(&program))
    }
}
