//! The reference evaluator: computes an expression graph node by node, in
//! topological order, with no fusion. Simple by design: it is the oracle
//! every fused backend is tested against. Each node's value is a dense
//! row-major host buffer; a value is dropped as soon as its last consumer has
//! run, so long chains hold two buffers at a time.

mod arg;
pub mod kernels;
mod layout;
mod reduce;
mod scan;

pub use arg::{arg_reduce, ArgBest};
pub use reduce::evaluate_body;
pub use scan::{scan, Lines, SCAN_CHUNK};

use std::sync::Arc;

use crate::element::HostBuffer;
use crate::engine::{Counter, Engine, EvalEnv, Options};
use crate::error::{Error, Result};
use crate::graph::{ExprGraph, GraphNode};
use crate::node::{KernelCall, Op, Residency};
use crate::{BinaryOp, UnaryOp};

/// The unfused, node-by-node evaluator (host memory only).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferenceEngine {
    name: Option<&'static str>,
}

impl ReferenceEngine {
    /// The evaluator, reporting itself as `"reference"`.
    pub fn new() -> ReferenceEngine {
        ReferenceEngine { name: None }
    }

    /// The evaluator, reporting itself under another backend name (used by
    /// backends that delegate to it until their own executor exists).
    pub fn named(name: &'static str) -> ReferenceEngine {
        ReferenceEngine { name: Some(name) }
    }
}

impl Engine for ReferenceEngine {
    fn name(&self) -> &'static str {
        self.name.unwrap_or("reference")
    }

    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        let order = graph.topological_order();
        let slots = order.last().map_or(0, |i| i.index() + 1);
        let mut values: Vec<Option<Arc<HostBuffer>>> = vec![None; slots];
        let mut pending_reads: Vec<usize> = vec![0; slots];
        for &index in &order {
            for input in &graph.node(index).inputs {
                pending_reads[input.index()] += 1;
            }
        }
        for output in graph.outputs() {
            // Outputs are kept until the end.
            pending_reads[output.index()] += 1;
        }
        let mut launches = Launches::default();
        for &index in &order {
            let node = graph.node(index);
            let value = match &node.data {
                Some(data) => data.host.clone().ok_or_else(|| {
                    Error::internal("reference evaluator", "a leaf has no host data")
                })?,
                None => {
                    let inputs = node
                        .inputs
                        .iter()
                        .map(|i| values[i.index()].clone())
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            Error::internal(
                                "reference evaluator",
                                "an operand was not computed before its consumer",
                            )
                        })?;
                    if let Op::Kernel { launch, output } = &node.op {
                        launches.output(launch, *output, &inputs, env)?
                    } else {
                        env.stats.add(Counter::KernelLaunches, 1);
                        let inputs: Vec<(&GraphNode, Arc<HostBuffer>)> = node
                            .inputs
                            .iter()
                            .map(|i| graph.node(*i))
                            .zip(inputs)
                            .collect();
                        compute(node, &inputs)?
                    }
                }
            };
            values[index.index()] = Some(value);
            for input in &node.inputs {
                let reads = &mut pending_reads[input.index()];
                *reads -= 1;
                if *reads == 0 {
                    values[input.index()] = None;
                }
            }
        }
        graph
            .outputs()
            .iter()
            .map(|o| {
                values[o.index()]
                    .clone()
                    .map(Residency::host)
                    .ok_or_else(|| {
                        Error::internal("reference evaluator", "an output was not computed")
                    })
            })
            .collect()
    }

    fn describe(&self, graph: &ExprGraph, _options: &Options) -> String {
        let steps = graph
            .topological_order()
            .into_iter()
            .filter(|&i| graph.node(i).data.is_none())
            .count();
        format!(
            "executor: reference evaluator (no fusion): {steps} steps, one per node, \
             each writing a full intermediate array in host memory\n"
        )
    }
}

/// The results of the user kernel launches run so far: each launch runs
/// once, whichever of its output nodes comes first.
#[derive(Default)]
struct Launches {
    done: Vec<(Arc<KernelCall>, Vec<Arc<HostBuffer>>)>,
}

impl Launches {
    /// Output `output` of `launch`, running it over `arrays` the first time.
    fn output(
        &mut self,
        launch: &Arc<KernelCall>,
        output: usize,
        arrays: &[Arc<HostBuffer>],
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        let position = match self.done.iter().position(|(l, _)| Arc::ptr_eq(l, launch)) {
            Some(p) => p,
            None => {
                env.stats.add(Counter::KernelLaunches, 1);
                let refs: Vec<&HostBuffer> = arrays.iter().map(|a| &**a).collect();
                let values = launch.kernel.run_host(launch, &refs)?;
                self.done.push((
                    Arc::clone(launch),
                    values.into_iter().map(Arc::new).collect(),
                ));
                self.done.len() - 1
            }
        };
        self.done[position].1.get(output).cloned().ok_or_else(|| {
            Error::internal(
                "reference evaluator",
                format!("kernel '{}' gave no output {output}", launch.kernel.name()),
            )
        })
    }
}

/// Computes one node from its operands' values.
fn compute(node: &GraphNode, inputs: &[(&GraphNode, Arc<HostBuffer>)]) -> Result<Arc<HostBuffer>> {
    let n = reduce::count(&node.shape);
    let value = match &node.op {
        Op::Fill(literal) => HostBuffer::try_filled(*literal, n)?,
        Op::Arange { start, step } => {
            HostBuffer::F64((0..n).map(|i| start + i as f64 * step).collect()).cast(node.dtype)
        }
        Op::Reshape => return single(inputs).map(|(_, v)| Arc::clone(v)),
        Op::BroadcastTo => {
            let (input, value) = single(inputs)?;
            return layout::broadcast(value, &input.shape, &node.shape).and_then(|v| {
                if v.len() == n {
                    Ok(v)
                } else {
                    v.get_wide(0)
                        .map(|w| {
                            Arc::new(HostBuffer::filled(
                                crate::Literal::cast_from(w, node.dtype),
                                n,
                            ))
                        })
                        .ok_or_else(|| Error::internal("broadcast_to", "empty operand"))
                }
            });
        }
        Op::Permute(perm) => {
            let (input, value) = single(inputs)?;
            layout::permute(value, &input.shape, perm)?
        }
        Op::Slice { axis, start, step } => {
            let (input, value) = single(inputs)?;
            layout::slice(value, &input.shape, &node.shape, *axis, *start, *step)?
        }
        Op::Scan { combine, axis } => {
            let (_, value) = single(inputs)?;
            scan(*combine, value, &node.shape, *axis)?
        }
        Op::ArgReduce { extreme, axis } => {
            let (input, value) = single(inputs)?;
            arg::arg_reduce(*extreme, value, &input.shape, *axis)?
        }
        Op::Reduce { combine, axes } => {
            let (input, value) = single(inputs)?;
            reduce::reduce(value, &input.shape, axes, combine)?
        }
        op if op.is_elementwise() => {
            let expanded = inputs
                .iter()
                .map(|(input, value)| layout::broadcast(value, &input.shape, &node.shape))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&HostBuffer> = expanded.iter().map(|v| v.as_ref()).collect();
            match (fast_power(node, inputs), refs.as_slice()) {
                (Some(unary), [base, _]) => kernels::unary(unary, base, n)?,
                _ => kernels::elementwise(op, node.dtype, &refs, n)?,
            }
        }
        other => {
            return Err(Error::internal(
                "reference evaluator",
                format!("cannot compute a '{}' node", other.name()),
            ))
        }
    };
    Ok(Arc::new(value))
}

/// NumPy's fast scalar powers (`semantics::fast_power`) of a constant
/// exponent; an array of exponents takes `pow`, as in NumPy. The
/// simplifier rewrites the same powers on every backend.
fn fast_power(node: &GraphNode, inputs: &[(&GraphNode, Arc<HostBuffer>)]) -> Option<UnaryOp> {
    let (Op::Binary(BinaryOp::Pow), [_, (exponent, _)]) = (&node.op, inputs) else {
        return None;
    };
    let (Op::Fill(literal), None) = (&exponent.op, &exponent.data) else {
        return None;
    };
    crate::semantics::fast_power(literal.to_wide().as_f64(), node.dtype)
}

fn single<'a>(
    inputs: &'a [(&'a GraphNode, Arc<HostBuffer>)],
) -> Result<(&'a GraphNode, &'a Arc<HostBuffer>)> {
    match inputs {
        [(node, value)] => Ok((node, value)),
        _ => Err(Error::internal(
            "reference evaluator",
            "expected exactly one operand",
        )),
    }
}
