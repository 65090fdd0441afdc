//! The `cpu` backend: fused kernels executed on host memory. All planner
//! steps are zero-copy here: leaves are read in place, outputs are host buffers.

pub mod frame;
pub mod interp;
pub mod jit;
pub mod loops;
pub mod machine;
pub mod pairwise;
pub mod reduce;
pub mod run;
pub mod steps;
pub mod stream;
pub mod vmath;
pub mod widen;

use std::sync::Arc;

use lazyfuse_core::{
    Engine, Error, EvalEnv, ExprGraph, HostBuffer, JitMode, Op, Options, Residency, Result,
    SliceMut,
};
use lazyfuse_fusion::{explain, plan, BufferId, BufferKind, Launch, Program, ProgramCache};

use crate::executor::{fusion_options, launch, launch_into, KernelCache};

/// The CPU engine.
#[derive(Debug, Default)]
pub struct CpuEngine {
    cache: KernelCache,
    programs: ProgramCache,
}

impl CpuEngine {
    /// A CPU engine with an empty kernel cache.
    pub fn new() -> CpuEngine {
        CpuEngine::default()
    }
}

/// Host buffers of a program's leaves in the demand's `graph` (`None` for temporaries).
pub(crate) fn leaf_buffers(
    program: &Program,
    graph: &ExprGraph,
) -> Result<Vec<Option<Arc<HostBuffer>>>> {
    program
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| match b.kind {
            BufferKind::Leaf { .. } => program
                .leaf(BufferId(i as u32), graph)
                .and_then(|n| n.data.as_ref())
                .and_then(|d| d.host.clone())
                .map(Some)
                .ok_or_else(|| Error::internal("cpu backend", "a leaf has no host data")),
            BufferKind::Temp => Ok(None),
        })
        .collect()
}

/// The buffers of one launch's inputs.
fn resolve<'a>(
    launch: &Launch,
    buffers: &'a [Option<Arc<HostBuffer>>],
) -> Vec<Option<&'a HostBuffer>> {
    launch
        .inputs
        .iter()
        .map(|i| i.buffer.and_then(|b| buffers[b.index()].as_deref()))
        .collect()
}

impl CpuEngine {
    /// Runs the first `count` launches of `program`; returns every buffer.
    fn run(
        &self,
        program: &Program,
        graph: &ExprGraph,
        count: usize,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Option<Arc<HostBuffer>>>> {
        let mut buffers = leaf_buffers(program, graph)?;
        for l in &program.launches[..count] {
            let outputs = launch(&self.cache, l, &resolve(l, &buffers), env)?;
            for (id, value) in l.outputs.iter().zip(outputs) {
                buffers[id.index()] = Some(Arc::new(value));
            }
        }
        Ok(buffers)
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        let program = self.programs.get(graph, &fusion_options(env.options))?;
        let buffers = self.run(&program, graph, program.launches.len(), env)?;
        program
            .outputs
            .iter()
            .map(|o| {
                buffers[o.buffer.index()]
                    .clone()
                    .map(Residency::host)
                    .ok_or_else(|| Error::internal("cpu backend", "an output was not computed"))
            })
            .collect()
    }

    fn dot(&self, graph: &ExprGraph, options: &Options) -> Option<String> {
        lazyfuse_fusion::compile(graph, &fusion_options(options))
            .ok()
            .map(|program| explain::program_dot(&program))
    }

    fn evaluate_into<'a>(
        &self,
        graph: &ExprGraph,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let program = self.programs.get(graph, &fusion_options(env.options))?;
        // Only when the result is written by the last kernel (not a leaf,
        // not a reduction): then that kernel writes into `out` directly.
        let (Some(output), Some(last)) = (program.outputs.first(), program.launches.last()) else {
            return Ok(Some(out));
        };
        let index = last.outputs.iter().position(|b| *b == output.buffer);
        let (Some(index), None) = (index, &last.kernel.reduction) else {
            return Ok(Some(out));
        };
        if program.outputs.len() != 1 || program.buffers[output.buffer.index()].len != out.len() {
            return Ok(Some(out));
        }
        let buffers = self.run(&program, graph, program.launches.len() - 1, env)?;
        let inputs = resolve(last, &buffers);
        launch_into(&self.cache, last, &inputs, index, out, env)?;
        Ok(None)
    }

    fn describe(&self, graph: &ExprGraph, options: &Options) -> String {
        match lazyfuse_fusion::compile(graph, &fusion_options(options)) {
            Ok(program) => {
                let plan = plan::plan(&program, false, |_| false);
                let mut text = format!(
                    "executor: cpu (fused kernels, chunked)\n{}",
                    explain::program_listing(&program, &plan)
                );
                for (k, launch) in program.launches.iter().enumerate() {
                    let how = match (jit::accepts(&launch.kernel), options.jit) {
                        (Err(why), _) => format!("the register machine ({why})"),
                        (Ok(()), JitMode::Never) => "the register machine (JitMode::Never)".into(),
                        (Ok(()), JitMode::Always) => "compiled code (JIT)".into(),
                        (Ok(()), JitMode::Auto) => format!(
                            "compiled code (JIT) once it has run {} elements, the register machine before",
                            jit::JIT_AFTER
                        ),
                    };
                    text.push_str(&format!("k{k} runs on {how}\n"));
                }
                for index in graph.topological_order() {
                    if let Op::Kernel { launch, output: 0 } = &graph.node(index).op {
                        text.push_str(&format!(
                            "user kernel '{}' (%{}): run by {} before the fused kernels (the cpu backend has no device)\n",
                            launch.kernel.name(),
                            index.index(),
                            launch.kernel.host_executor()
                        ));
                    }
                }
                text
            }
            Err(e) => format!("fusion failed: {e}\n"),
        }
    }
}
