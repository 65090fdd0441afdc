//! Executing a planned program on a device with memory of its own: shared
//! by the `sim` and `cuda` backends, which differ only in how they copy and
//! launch ([`DeviceRuntime`]). The plan decides every copy; this module
//! carries it out and hands results back as device residencies.

use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Error, EvalEnv, ExprGraph, HostBuffer, Options, Residency, Result,
};
use lazyfuse_fusion::{explain, plan, BufferId, BufferKind, Launch, Program, ProgramCache, Step};

use crate::executor::fusion_options;

/// How a device backend copies and launches.
pub trait DeviceRuntime {
    /// The backend's name, for errors.
    fn backend(&self) -> &'static str;

    /// Copies a host buffer to new device memory (counting the copy).
    fn upload(&self, host: &HostBuffer, env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>>;

    /// Copies a device buffer back to the host as elements of `dtype`.
    fn download(&self, device: &Arc<dyn DeviceBuffer>, dtype: DType) -> Result<HostBuffer>;

    /// Runs one fused launch over device buffers (one per kernel input,
    /// `None` for generated inputs); returns its outputs, on the device.
    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>>;
}

/// A value on the host: its host copy, or its device copy downloaded (and
/// counted).
pub fn on_host(
    runtime: &dyn DeviceRuntime,
    value: &Residency,
    dtype: DType,
    env: EvalEnv<'_>,
) -> Result<Arc<HostBuffer>> {
    if let Some(host) = &value.host {
        return Ok(Arc::clone(host));
    }
    let device = value.device.as_ref().ok_or_else(|| {
        Error::internal(runtime.backend(), format!("a {dtype} value with no copy"))
    })?;
    let host = runtime.download(device, dtype)?;
    env.stats.add(Counter::D2hCopies, 1);
    env.stats
        .add(Counter::D2hBytes, host.as_bytes().len() as u64);
    Ok(Arc::new(host))
}

/// A value on the device: its device copy, or its host copy uploaded.
pub fn on_device(
    runtime: &dyn DeviceRuntime,
    value: &Residency,
    env: EvalEnv<'_>,
) -> Result<Arc<dyn DeviceBuffer>> {
    if let Some(device) = &value.device {
        return Ok(Arc::clone(device));
    }
    let host = value
        .host
        .as_ref()
        .ok_or_else(|| Error::internal(runtime.backend(), "a value with no copy"))?;
    runtime.upload(host, env)
}

/// The device copy a leaf buffer already has, if any.
pub fn device_leaf(
    program: &Program,
    graph: &ExprGraph,
    buffer: BufferId,
) -> Option<Arc<dyn DeviceBuffer>> {
    program
        .leaf(buffer, graph)
        .and_then(|n| n.data.as_ref())
        .and_then(|d| d.device.clone())
}

/// Plans `graph` and runs it on `runtime`; results stay on the device.
pub fn evaluate(
    runtime: &dyn DeviceRuntime,
    programs: &ProgramCache,
    graph: &ExprGraph,
    env: EvalEnv<'_>,
) -> Result<Vec<Residency>> {
    let op = runtime.backend();
    let program = programs.get(graph, &fusion_options(env.options))?;
    let plan = plan::plan(&program, true, |b| {
        device_leaf(&program, graph, b).is_some()
    });
    let mut device: Vec<Option<Arc<dyn DeviceBuffer>>> = (0..program.buffers.len())
        .map(|b| device_leaf(&program, graph, BufferId(b as u32)))
        .collect();
    for step in &plan.steps {
        match *step {
            Step::Upload(b) => {
                let leaf = program
                    .leaf(b, graph)
                    .ok_or_else(|| Error::internal(op, "upload of a temporary"))?;
                let host = leaf
                    .data
                    .as_ref()
                    .and_then(|d| d.host.clone())
                    .ok_or_else(|| Error::internal(op, "a leaf with no data"))?;
                let copy = runtime.upload(&host, env)?;
                if let Some(origin) = &leaf.origin {
                    origin.attach_device(Arc::clone(&copy));
                }
                device[b.index()] = Some(copy);
            }
            Step::Launch(l) => {
                let l = &program.launches[l];
                let inputs = l
                    .inputs
                    .iter()
                    .map(|i| match i.buffer {
                        None => Ok(None),
                        Some(b) => device[b.index()].as_ref().map(Some).ok_or_else(|| {
                            Error::internal(op, format!("{b} is not on the device"))
                        }),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let outputs = runtime.launch(l, &inputs, env)?;
                for (id, data) in l.outputs.iter().zip(outputs) {
                    device[id.index()] = Some(data);
                }
            }
            Step::Free(b) => device[b.index()] = None,
        }
    }
    program
        .outputs
        .iter()
        .map(|o| {
            match (
                &device[o.buffer.index()],
                program.buffers[o.buffer.index()].kind,
            ) {
                (Some(d), _) => Ok(Residency {
                    host: None,
                    device: Some(Arc::clone(d)),
                }),
                // A demanded leaf (or a reshape of one) that no kernel read: nothing moved.
                (None, BufferKind::Leaf { .. }) => program
                    .leaf(o.buffer, graph)
                    .and_then(|n| n.data.clone())
                    .ok_or_else(|| Error::internal(op, "a leaf with no data")),
                (None, BufferKind::Temp) => {
                    Err(Error::internal(op, "an output is not on the device"))
                }
            }
        })
        .collect()
}

/// What `explain` shows for a device backend: the executor, the kernels and
/// the plan's copies.
pub fn describe(executor: &str, graph: &ExprGraph, options: &Options) -> String {
    match lazyfuse_fusion::compile(graph, &fusion_options(options)) {
        Ok(program) => {
            let plan = plan::plan(&program, true, |b| {
                device_leaf(&program, graph, b).is_some()
            });
            format!(
                "executor: {executor}\n{}",
                explain::program_listing(&program, &plan)
            )
        }
        Err(e) => format!("fusion failed: {e}\n"),
    }
}

/// The Graphviz drawing of the kernels of `graph`.
pub fn dot(graph: &ExprGraph, options: &Options) -> Option<String> {
    lazyfuse_fusion::compile(graph, &fusion_options(options))
        .ok()
        .map(|program| explain::program_dot(&program))
}
