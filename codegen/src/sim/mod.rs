//! The `sim` backend: a simulated device with memory of its own. Inputs are
//! uploaded (counted in `Stats`) before kernels read them, results stay in
//! device memory until read, so copies are exactly those a GPU would make.
//!
//! Kernels are the lowered device programs the CUDA printer prints, run by
//! the SIMT interpreter (`device::simt`) with grid, block and warp semantics,
//! which also checks every memory access.

use std::any::Any;
use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Engine, Error, EvalEnv, ExprGraph, HostBuffer, Options,
    Residency, Result,
};
use lazyfuse_fusion::{explain, plan, BufferId, BufferKind, Program, ProgramCache, Step};

use crate::device::{self, LoweringCache};
use crate::executor::fusion_options;

/// A buffer in simulated device memory.
#[derive(Debug)]
pub struct SimBuffer {
    data: HostBuffer,
}

impl DeviceBuffer for SimBuffer {
    fn bytes(&self) -> usize {
        self.data.as_bytes().len()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The simulated-device engine.
#[derive(Debug, Default)]
pub struct SimEngine {
    lowered: LoweringCache,
    programs: ProgramCache,
}

impl SimEngine {
    /// A simulated device with empty memory and kernel cache.
    pub fn new() -> SimEngine {
        SimEngine::default()
    }
}

fn upload(host: &HostBuffer, env: EvalEnv<'_>) -> Arc<SimBuffer> {
    env.stats.add(Counter::H2dCopies, 1);
    env.stats
        .add(Counter::H2dBytes, host.as_bytes().len() as u64);
    Arc::new(SimBuffer { data: host.clone() })
}

fn sim_buffer(device: &Arc<dyn DeviceBuffer>) -> Result<&SimBuffer> {
    device
        .as_any()
        .downcast_ref::<SimBuffer>()
        .ok_or_else(|| Error::internal("sim backend", "a device buffer of another backend"))
}

impl SimEngine {
    fn device_leaf(
        &self,
        program: &Program,
        graph: &ExprGraph,
        buffer: usize,
    ) -> Option<Arc<dyn DeviceBuffer>> {
        program
            .leaf(BufferId(buffer as u32), graph)
            .and_then(|n| n.data.as_ref())
            .and_then(|d| d.device.clone())
    }
}

impl Engine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        let program = self.programs.get(graph, &fusion_options(env.options))?;
        let plan = plan::plan(&program, true, |b| {
            self.device_leaf(&program, graph, b.index()).is_some()
        });
        let mut device: Vec<Option<Arc<dyn DeviceBuffer>>> = (0..program.buffers.len())
            .map(|b| self.device_leaf(&program, graph, b))
            .collect();
        for step in &plan.steps {
            match *step {
                Step::Upload(b) => {
                    let leaf = program
                        .leaf(b, graph)
                        .ok_or_else(|| Error::internal("sim backend", "upload of a temporary"))?;
                    let host = leaf
                        .data
                        .as_ref()
                        .and_then(|d| d.host.clone())
                        .ok_or_else(|| Error::internal("sim backend", "a leaf with no data"))?;
                    let copy: Arc<dyn DeviceBuffer> = upload(&host, env);
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
                            Some(b) => device[b.index()]
                                .as_ref()
                                .ok_or_else(|| {
                                    Error::internal(
                                        "sim backend",
                                        format!("{b} is not on the device"),
                                    )
                                })
                                .and_then(sim_buffer)
                                .map(|s| Some(&s.data)),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let program = self.lowered.get(l, env)?;
                    env.stats.add(Counter::KernelLaunches, 1);
                    let outputs = device::simulate(&program, l, &inputs)?;
                    for (id, data) in l.outputs.iter().zip(outputs) {
                        device[id.index()] = Some(Arc::new(SimBuffer { data }));
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
                        .ok_or_else(|| Error::internal("sim backend", "a leaf with no data")),
                    (None, BufferKind::Temp) => Err(Error::internal(
                        "sim backend",
                        "an output is not on the device",
                    )),
                }
            })
            .collect()
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
        let device = value.device.as_ref().ok_or_else(|| {
            Error::internal("sim backend", format!("a {dtype} value with no copy"))
        })?;
        let data = &sim_buffer(device)?.data;
        env.stats.add(Counter::D2hCopies, 1);
        env.stats
            .add(Counter::D2hBytes, data.as_bytes().len() as u64);
        Ok(Arc::new(data.clone()))
    }

    fn to_device(
        &self,
        value: &Residency,
        env: EvalEnv<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        if let Some(device) = &value.device {
            return Ok(Some(Arc::clone(device)));
        }
        let host = value
            .host
            .as_ref()
            .ok_or_else(|| Error::internal("sim backend", "a value with no copy"))?;
        Ok(Some(upload(host, env)))
    }

    fn dot(&self, graph: &ExprGraph, options: &Options) -> Option<String> {
        lazyfuse_fusion::compile(graph, &fusion_options(options))
            .ok()
            .map(|program| explain::program_dot(&program))
    }

    fn describe(&self, graph: &ExprGraph, options: &Options) -> String {
        match lazyfuse_fusion::compile(graph, &fusion_options(options)) {
            Ok(program) => {
                let plan = plan::plan(&program, true, |b| {
                    self.device_leaf(&program, graph, b.index()).is_some()
                });
                format!(
                    "executor: sim (simulated device memory; device programs run by the SIMT interpreter)\n{}",
                    explain::program_listing(&program, &plan)
                )
            }
            Err(e) => format!("fusion failed: {e}\n"),
        }
    }
}
