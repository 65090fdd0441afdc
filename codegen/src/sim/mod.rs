//! The `sim` backend: a simulated device with memory of its own. Inputs are
//! uploaded (counted in `Stats`) before kernels read them, results stay in
//! device memory until read, so copies are exactly those a GPU would make.
//! Kernels are the lowered device programs the CUDA printer prints, run by
//! the SIMT interpreter (`device::simt`) with grid, block and warp semantics,
//! which also checks every memory access.

use std::any::Any;
use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Engine, Error, EvalEnv, ExprGraph, HostBuffer, KernelLaunch,
    Options, Residency, Result,
};
use lazyfuse_fusion::{Launch, ProgramCache};

use crate::device::exec::{self, DeviceRuntime};
use crate::device::{self, LoweringCache};
use crate::kernel::BuiltKernel;

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

fn sim_buffer(device: &Arc<dyn DeviceBuffer>) -> Result<&SimBuffer> {
    device
        .as_any()
        .downcast_ref::<SimBuffer>()
        .ok_or_else(|| Error::internal("sim backend", "a device buffer of another backend"))
}

impl DeviceRuntime for SimEngine {
    fn backend(&self) -> &'static str {
        "sim backend"
    }

    fn upload(&self, host: &HostBuffer, env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        env.stats.add(Counter::H2dCopies, 1);
        env.stats
            .add(Counter::H2dBytes, host.as_bytes().len() as u64);
        Ok(Arc::new(SimBuffer { data: host.clone() }))
    }

    fn download(&self, device: &Arc<dyn DeviceBuffer>, _dtype: DType) -> Result<HostBuffer> {
        Ok(sim_buffer(device)?.data.clone())
    }

    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        let inputs = inputs
            .iter()
            .map(|i| i.map(sim_buffer).transpose().map(|b| b.map(|b| &b.data)))
            .collect::<Result<Vec<_>>>()?;
        let program = self.lowered.get(launch, env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        let outputs = device::simulate(&program, launch, &inputs)?;
        Ok(outputs
            .into_iter()
            .map(|data| Arc::new(SimBuffer { data }) as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Engine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        exec::evaluate(self, &self.programs, graph, env)
    }

    fn to_host(
        &self,
        value: &Residency,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        exec::on_host(self, value, dtype, env)
    }

    fn to_device(
        &self,
        value: &Residency,
        env: EvalEnv<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        exec::on_device(self, value, env).map(Some)
    }

    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: &[(Residency, DType)],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Residency>> {
        let Some(kernel) = launch.kernel.as_any().downcast_ref::<BuiltKernel>() else {
            // Raw CUDA source: the kernel says why it cannot run here.
            return launch.kernel.run_host(launch, &[]).map(|_| Vec::new());
        };
        let buffers = arrays
            .iter()
            .map(|(value, _)| exec::on_device(self, value, env))
            .collect::<Result<Vec<_>>>()?;
        let hosts = buffers
            .iter()
            .map(|b| sim_buffer(b).map(|s| &s.data))
            .collect::<Result<Vec<_>>>()?;
        // The kernel writes new versions: copies made on the device.
        let mut outputs: Vec<HostBuffer> = launch
            .written
            .iter()
            .map(|&w| {
                hosts
                    .get(w)
                    .map(|h| (*h).clone())
                    .ok_or_else(|| Error::internal("sim backend", "a written argument is missing"))
            })
            .collect::<Result<_>>()?;
        kernel.simulate(launch, &hosts, &mut outputs)?;
        env.stats.add(Counter::KernelLaunches, 1);
        Ok(outputs
            .into_iter()
            .map(|data| Residency {
                host: None,
                device: Some(Arc::new(SimBuffer { data }) as Arc<dyn DeviceBuffer>),
            })
            .collect())
    }

    fn dot(&self, graph: &ExprGraph, options: &Options) -> Option<String> {
        exec::dot(graph, options)
    }

    fn describe(&self, graph: &ExprGraph, options: &Options) -> String {
        exec::describe(
            "sim (simulated device memory; device programs run by the SIMT interpreter)",
            graph,
            options,
        )
    }
}
