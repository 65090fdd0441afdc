//! The driver's demands into the caller's memory (`read_into`): the last
//! work of a program writing its output straight into `out`, on a runtime
//! computing in host memory, or a pipeline downloading its chunks into it.

use lazyfuse_core::{Counter, Error, EvalEnv, ExprGraph, Result, SliceMut};

use super::{launch_inputs, Driver};
use crate::pipeline::Destinations;
use crate::plan::Step;
use crate::program::{Program, Work};
use crate::runtime::{Runtime, ScanInput};

impl<R: Runtime> Driver<R> {
    /// Runs the program with its last launch `l` writing the demanded
    /// outputs (`outs[i]` for `program.outputs[i]`) straight into the
    /// caller's slices, when that launch is element-wise and writes each of
    /// them; `outs` back when it cannot.
    pub(super) fn launch_last_into<'a>(
        &self,
        program: &Program,
        graph: &ExprGraph,
        l: usize,
        outs: Vec<SliceMut<'a>>,
        env: EvalEnv<'_>,
    ) -> Result<Option<Vec<SliceMut<'a>>>> {
        let last = &program.launches[l];
        let indices: Option<Vec<usize>> = program
            .outputs
            .iter()
            .zip(&outs)
            .map(|(output, out)| {
                let index = last.outputs.iter().position(|b| *b == output.buffer)?;
                (program.buffers[output.buffer.index()].len == out.len()).then_some(index)
            })
            .collect();
        let distinct = |indices: &[usize]| {
            let mut sorted = indices.to_vec();
            sorted.sort_unstable();
            sorted.windows(2).all(|w| w[0] != w[1])
        };
        let indices = match indices {
            Some(i) if last.kernel.reduction.is_none() && i.len() == outs.len() && distinct(&i) => {
                i
            }
            _ => return Ok(Some(outs)),
        };
        let buffers = self.run(program, graph, Some(Step::Launch(l)), env)?;
        let inputs = launch_inputs(self.runtime.name(), last, &buffers)?;
        let pairs = indices.into_iter().zip(outs).collect();
        let declined = self.runtime.launch_into(last, &inputs, pairs, env)?;
        if declined.is_none() {
            env.stats.add(Counter::KernelLaunches, 1);
        }
        Ok(declined.map(|pairs| pairs.into_iter().map(|(_, out)| out).collect()))
    }

    /// Runs the program with its last work, scan `s`, writing straight
    /// into `out`; `out` back when the runtime cannot.
    pub(super) fn scan_last_into<'a>(
        &self,
        program: &Program,
        graph: &ExprGraph,
        s: usize,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let op = self.runtime.name();
        let scan = &program.scans[s];
        let buffers = self.run(program, graph, Some(Step::Scan(s)), env)?;
        match (R::FUSES_SCAN_PRODUCERS, scan.producer) {
            (true, Some(p)) => {
                let producer = &program.launches[p];
                let inputs = launch_inputs(op, producer, &buffers)?;
                let from = ScanInput::Producer(producer, &inputs);
                self.runtime.scan_into(scan, from, out, env)
            }
            _ => {
                let input = buffers[scan.input.index()].as_ref().ok_or_else(|| {
                    Error::internal(op, format!("{} is not computed", scan.input))
                })?;
                self.runtime
                    .scan_into(scan, ScanInput::Values(input), out, env)
            }
        }
    }

    /// Runs a demand of one output that runs as a pipeline with the output
    /// going straight into `out`; `out` back when it does not.
    pub(super) fn pipeline_into<'a>(
        &self,
        graph: &ExprGraph,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let program = self.program(graph, env.options)?;
        let Some(pipeline) = self.pipeline(&program, graph, env.options, true) else {
            return Ok(Some(out));
        };
        let written = pipeline.launch_outputs(&program);
        let fits = match (program.outputs.as_slice(), written) {
            ([output], [only]) => {
                output.buffer == *only
                    && program.buffers[only.index()].len == out.len()
                    && program.buffers[only.index()].dtype == out.dtype()
            }
            _ => false,
        };
        if !fits || !pipeline.chunks_outputs() {
            return Ok(Some(out));
        }
        self.run_pipeline(&pipeline, &program, graph, Destinations::Into(out), env)?;
        Ok(None)
    }

    /// Runs the program with its last work, user launch `u` writing one
    /// array, that array's value going straight into `out`; `out` back when
    /// the runtime cannot.
    pub(super) fn user_last_into<'a>(
        &self,
        program: &Program,
        graph: &ExprGraph,
        u: usize,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let buffers = self.run(program, graph, Some(Step::UserLaunch(u)), env)?;
        let (launch, arrays) = self.user_arguments(program, graph, u, &buffers)?;
        let declined = self.runtime.run_kernel_into(launch, &arrays, out, env)?;
        if declined.is_none() {
            env.stats.add(Counter::KernelLaunches, 1);
        }
        Ok(declined)
    }

    /// [`Engine::evaluate_into`] within its stream.
    pub(super) fn evaluate_into_on_stream<'a>(
        &self,
        graph: &ExprGraph,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        if R::DEVICE {
            return self.pipeline_into(graph, out, env);
        }
        let program = self.program(graph, env.options)?;
        let [output] = program.outputs.as_slice() else {
            return Ok(Some(out));
        };
        if program.buffers[output.buffer.index()].len != out.len() {
            return Ok(Some(out));
        }
        match program.schedule.last() {
            Some(&Work::Fused(l)) => Ok(self
                .launch_last_into(&program, graph, l, vec![out], env)?
                .and_then(|mut back| back.pop())),
            Some(&Work::Scan(s)) if program.scans[s].output == output.buffer => {
                self.scan_last_into(&program, graph, s, out, env)
            }
            Some(&Work::User(u)) if program.user_launches[u].outputs == [Some(output.buffer)] => {
                self.user_last_into(&program, graph, u, out, env)
            }
            _ => Ok(Some(out)),
        }
    }

    /// [`Engine::evaluate_all_into`] within its stream: on a runtime
    /// computing in host memory, a program whose last launch writes every
    /// demanded output writes them straight into `outs`.
    pub(super) fn evaluate_all_into_on_stream<'a>(
        &self,
        graph: &ExprGraph,
        mut outs: Vec<SliceMut<'a>>,
        env: EvalEnv<'_>,
    ) -> Result<Option<Vec<SliceMut<'a>>>> {
        if outs.len() == 1 {
            let Some(out) = outs.pop() else {
                return Ok(Some(outs));
            };
            return Ok(self
                .evaluate_into_on_stream(graph, out, env)?
                .map(|out| vec![out]));
        }
        if R::DEVICE {
            return Ok(Some(outs));
        }
        let program = self.program(graph, env.options)?;
        match program.schedule.last() {
            Some(&Work::Fused(l)) if program.outputs.len() == outs.len() => {
                self.launch_last_into(&program, graph, l, outs, env)
            }
            _ => Ok(Some(outs)),
        }
    }
}
