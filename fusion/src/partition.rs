//! Which nodes are materialised (written to a buffer) and which are fused
//! into the kernels that read them.
//!
//! Rules, in topological order:
//! - leaves are buffers; demanded nodes are kernel outputs;
//! - a reduction is a kernel root; the element-wise work feeding it fuses into
//!   its read, and a chain of single-use element-wise nodes after it whose
//!   other operands are constants (`mean`'s division, a cast) fuses as its
//!   epilogue;
//! - `reshape` of a buffer is a free alias; a reshape of anything else
//!   materialises its input first (row-major order must exist in memory);
//! - a user kernel launch's outputs are buffers it writes, and its array
//!   arguments are buffers (it reads them whole, row-major); so are a
//!   scan's output and input;
//! - transposes and broadcasts fold into index arithmetic; constants become
//!   kernel arguments; `arange` becomes generated indices;
//! - a value used several times is recomputed by each user unless that costs
//!   more than `recompute_limit`, then it is materialised once;
//! - a kernel whose estimated body or input count exceeds the limits is split
//!   by materialising the operands of the node that crossed them.
//!
//! With fusion disabled every operation is its own kernel.

use lazyfuse_core::{Op, Options, Result};
use smallvec::SmallVec;

use crate::simplify::Graph;

/// Limits and switches of fusion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusionOptions {
    /// Fuse at all (false: one kernel per operation).
    pub enabled: bool,
    /// Most buffer inputs one kernel reads.
    pub max_inputs: u32,
    /// Largest body, in cost units (one per simple operation, eight per
    /// transcendental function).
    pub max_body: u32,
    /// Largest shared value recomputed by each of its users rather than stored.
    pub recompute_limit: u32,
}

impl Default for FusionOptions {
    fn default() -> Self {
        FusionOptions {
            enabled: true,
            max_inputs: 24,
            max_body: 16384,
            recompute_limit: 24,
        }
    }
}

impl FusionOptions {
    /// The fusion settings of a context's options (the limits at their defaults).
    pub fn of(options: &Options) -> FusionOptions {
        FusionOptions {
            enabled: options.fusion,
            ..FusionOptions::default()
        }
    }
}

/// How a node's value is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Computed inside the kernels that read it (or a constant / generated index).
    Fused,
    /// Written to its own buffer (a leaf, or a kernel output).
    Buffer,
    /// The buffer of another node, read with this node's shape (a reshape).
    Alias(usize),
    /// Computed inside the reduction kernel of the given reduce node (its epilogue).
    Epilogue(usize),
}

/// The result of partitioning.
#[derive(Clone, Debug)]
pub struct Partition {
    /// One placement per graph node.
    pub placement: Vec<Placement>,
    /// For each reduce node that roots a kernel: the last node of its epilogue.
    pub epilogue_tail: Vec<Option<usize>>,
    /// Consumers of each node.
    pub users: Vec<SmallVec<[usize; 2]>>,
    /// Decisions worth explaining.
    pub notes: Vec<String>,
}

impl Partition {
    /// True when `node` is computed by a fused kernel of its own (a kernel
    /// root): not a leaf, not written by a user kernel.
    pub fn is_root(&self, graph: &Graph, node: usize) -> bool {
        self.placement[node] == Placement::Buffer
            && !graph.nodes[node].is_leaf()
            && !matches!(
                graph.nodes[node].op,
                Op::Kernel { .. } | Op::Scan { .. } | Op::ArgReduce { .. }
            )
    }
}

fn cost(op: &Op) -> u32 {
    match op {
        Op::Unary(u) if u.is_float_only() && !u.is_rounding() && !u.is_predicate() => 8,
        Op::Binary(lazyfuse_core::BinaryOp::Pow) => 8,
        op if op.is_elementwise() => 1,
        _ => 0,
    }
}

/// Decides the placement of every node.
pub fn partition(graph: &Graph, options: &FusionOptions) -> Result<Partition> {
    let n = graph.nodes.len();
    let mut users: Vec<SmallVec<[usize; 2]>> = vec![SmallVec::new(); n];
    for (i, node) in graph.nodes.iter().enumerate() {
        for &input in &node.inputs {
            users[input].push(i);
        }
    }
    let mut demanded = vec![false; n];
    for &o in &graph.outputs {
        demanded[o] = true;
    }
    let mut placement = vec![Placement::Fused; n];
    let mut epilogue_tail = vec![None; n];
    let mut is_tail = vec![false; n];
    let mut notes = Vec::new();

    // Reshapes and user kernels read their inputs in row-major order: they
    // must be buffers.
    let mut forced = demanded.clone();
    for node in &graph.nodes {
        match node.op {
            Op::Reshape => forced[node.inputs[0]] = true,
            Op::Kernel { .. } | Op::Scan { .. } | Op::ArgReduce { .. } => {
                node.inputs.iter().for_each(|&i| forced[i] = true)
            }
            _ => {}
        }
    }

    // Epilogue chains after reductions.
    if options.enabled {
        for (r, node) in graph.nodes.iter().enumerate() {
            if !matches!(node.op, Op::Reduce { .. }) {
                continue;
            }
            let mut tail = r;
            while !forced[tail] && users[tail].len() == 1 {
                let next = users[tail][0];
                let candidate = &graph.nodes[next];
                let fits = candidate.op.is_elementwise()
                    && candidate.shape == node.shape
                    && candidate
                        .inputs
                        .iter()
                        .all(|&i| i == tail || graph.nodes[i].constant().is_some());
                if !fits {
                    break;
                }
                placement[next] = Placement::Epilogue(r);
                tail = next;
            }
            epilogue_tail[r] = Some(tail);
            is_tail[tail] = tail != r;
        }
    }

    let mut size = vec![0u32; n];
    let mut reads = vec![0u32; n];
    for i in 0..n {
        let node = &graph.nodes[i];
        if let Placement::Epilogue(_) = placement[i] {
            if is_tail[i] {
                placement[i] = Placement::Buffer;
            }
            continue;
        }
        if node.is_leaf() {
            placement[i] = Placement::Buffer;
            continue;
        }
        match &node.op {
            Op::Kernel { .. } | Op::Scan { .. } | Op::ArgReduce { .. } => {
                placement[i] = Placement::Buffer;
                continue;
            }
            Op::Reshape => {
                let input = node.inputs[0];
                placement[i] = match placement[input] {
                    Placement::Alias(target) => Placement::Alias(target),
                    _ => Placement::Alias(input),
                };
                continue;
            }
            Op::Reduce { .. } => {
                let tail = epilogue_tail[i].unwrap_or(i);
                placement[i] = if tail == i {
                    Placement::Buffer
                } else {
                    Placement::Epilogue(i)
                };
                epilogue_tail[i] = Some(tail);
                continue;
            }
            _ => {}
        }
        let estimate = |graph: &Graph, placement: &[Placement]| {
            let mut s = cost(&node.op);
            let mut r = u32::from(matches!(node.op, Op::Arange { .. }));
            for &input in &graph.nodes[i].inputs {
                match placement[input] {
                    Placement::Fused => {
                        s = s.saturating_add(size[input]);
                        r = r.saturating_add(reads[input]);
                    }
                    _ => r = r.saturating_add(1),
                }
            }
            (s, r)
        };
        let (mut s, mut r) = estimate(graph, &placement);
        if options.enabled && (s > options.max_body || r > options.max_inputs) {
            for &input in &node.inputs {
                if placement[input] == Placement::Fused && graph.nodes[input].op.is_elementwise() {
                    placement[input] = Placement::Buffer;
                }
            }
            notes.push(format!(
                "split before %{i}: its fused body would cost {s} units and read {r} inputs \
                 (limits {} and {}); its operands are materialised",
                options.max_body, options.max_inputs
            ));
            (s, r) = estimate(graph, &placement);
        }
        size[i] = s;
        reads[i] = r;
        let computes = node.op.is_elementwise();
        placement[i] = if forced[i] || (computes && !options.enabled) {
            Placement::Buffer
        } else if computes && users[i].len() > 1 && s > options.recompute_limit {
            notes.push(format!(
                "%{i} is used {} times and costs {s} units: materialised once instead of \
                 recomputed by each user (limit {})",
                users[i].len(),
                options.recompute_limit
            ));
            Placement::Buffer
        } else {
            Placement::Fused
        };
    }
    Ok(Partition {
        placement,
        epilogue_tail,
        users,
        notes,
    })
}
