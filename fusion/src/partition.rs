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
//!   more than `recompute_limit`, then it is materialised once — except
//!   where every kernel reading it is element-wise over its own domain
//!   (its users reach it through element-wise operations of its shape
//!   alone): those kernels become one multi-output kernel (`group`) that
//!   computes it once, in registers, and it is never stored;
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
    /// Compute a shared value once inside the one kernel of all its
    /// readers where they are element-wise over its domain, instead of
    /// storing it (false: the cost rule alone decides).
    pub share_within_domains: bool,
    /// Merge a reduction over the trailing axes with the reductions and
    /// the element-wise kernel that read it back over its rows into one
    /// row program (`rows`; set by the driver for runtimes that run them).
    pub row_programs: bool,
}

impl Default for FusionOptions {
    fn default() -> Self {
        FusionOptions {
            enabled: true,
            max_inputs: 24,
            max_body: 16384,
            recompute_limit: 24,
            share_within_domains: true,
            row_programs: false,
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
    /// True when some shared value is fused only because its readers
    /// become one multi-output kernel (see [`FusionOptions::share_within_domains`]).
    pub shares_within_domains: bool,
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
    let mut partitioner = Partitioner::new(graph, options);
    if options.enabled {
        partitioner.chain_epilogues();
    }
    for i in 0..graph.nodes.len() {
        partitioner.placement[i] = match partitioner.structural(i) {
            Some(placement) => placement,
            None => partitioner.by_cost(i),
        };
    }
    let shares_within_domains =
        options.enabled && options.share_within_domains && partitioner.share_within_domains();
    if shares_within_domains {
        let largest = partitioner.largest_body();
        if largest > options.max_body {
            // Sharing undid splits the body limit had made: store instead.
            let unshared = FusionOptions {
                share_within_domains: false,
                ..options.clone()
            };
            let mut partition = partition(graph, &unshared)?;
            partition.notes.push(format!(
                "computing shared values once inside their readers' kernels would make a body \
                 of {largest} units or more (limit {}): they are stored instead",
                options.max_body
            ));
            return Ok(partition);
        }
    }
    Ok(Partition {
        placement: partitioner.placement,
        epilogue_tail: partitioner.epilogue_tail,
        users: partitioner.users,
        notes: partitioner.notes,
        shares_within_domains,
    })
}

/// The state of one partitioning: what is known of every node so far.
struct Partitioner<'a> {
    graph: &'a Graph,
    options: &'a FusionOptions,
    users: Vec<SmallVec<[usize; 2]>>,
    /// Nodes that must be buffers: demanded, or read whole and row-major.
    forced: Vec<bool>,
    placement: Vec<Placement>,
    epilogue_tail: Vec<Option<usize>>,
    /// Last nodes of epilogue chains (they are buffers).
    is_tail: Vec<bool>,
    /// The cost of a fused node's body, and the inputs it reads.
    size: Vec<u32>,
    reads: Vec<u32>,
    /// For nodes materialised because recomputing them per user cost too
    /// much: the index of the note that says so.
    stored_shared: Vec<Option<usize>>,
    notes: Vec<String>,
}

impl<'a> Partitioner<'a> {
    fn new(graph: &'a Graph, options: &'a FusionOptions) -> Self {
        let n = graph.nodes.len();
        let mut users: Vec<SmallVec<[usize; 2]>> = vec![SmallVec::new(); n];
        for (i, node) in graph.nodes.iter().enumerate() {
            for &input in &node.inputs {
                users[input].push(i);
            }
        }
        let mut forced = vec![false; n];
        for &o in &graph.outputs {
            forced[o] = true;
        }
        // Reshapes and user kernels read their inputs in row-major order:
        // they must be buffers.
        for node in &graph.nodes {
            match node.op {
                Op::Reshape => forced[node.inputs[0]] = true,
                Op::Kernel { .. } | Op::Scan { .. } | Op::ArgReduce { .. } => {
                    node.inputs.iter().for_each(|&i| forced[i] = true)
                }
                _ => {}
            }
        }
        Partitioner {
            graph,
            options,
            users,
            forced,
            placement: vec![Placement::Fused; n],
            epilogue_tail: vec![None; n],
            is_tail: vec![false; n],
            size: vec![0; n],
            reads: vec![0; n],
            stored_shared: vec![None; n],
            notes: Vec::new(),
        }
    }

    /// The chains of single-use element-wise nodes after each reduction,
    /// whose other operands are constants: its epilogue.
    fn chain_epilogues(&mut self) {
        let graph = self.graph;
        for (r, node) in graph.nodes.iter().enumerate() {
            if !matches!(node.op, Op::Reduce { .. }) {
                continue;
            }
            let mut tail = r;
            while !self.forced[tail] && self.users[tail].len() == 1 {
                let next = self.users[tail][0];
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
                self.placement[next] = Placement::Epilogue(r);
                tail = next;
            }
            self.epilogue_tail[r] = Some(tail);
            self.is_tail[tail] = tail != r;
        }
    }

    /// Node `i`'s placement where its kind decides it: epilogue members
    /// (the chain's tail a buffer), leaves, kernels and scans (buffers),
    /// reshapes (aliases), reductions (buffers, or heads of epilogues).
    /// `None` for the rest, placed by cost.
    fn structural(&mut self, i: usize) -> Option<Placement> {
        let node = &self.graph.nodes[i];
        if let Placement::Epilogue(_) = self.placement[i] {
            return Some(if self.is_tail[i] {
                Placement::Buffer
            } else {
                self.placement[i]
            });
        }
        if node.is_leaf() {
            return Some(Placement::Buffer);
        }
        match &node.op {
            Op::Kernel { .. } | Op::Scan { .. } | Op::ArgReduce { .. } => Some(Placement::Buffer),
            Op::Reshape => {
                let input = node.inputs[0];
                Some(match self.placement[input] {
                    Placement::Alias(target) => Placement::Alias(target),
                    _ => Placement::Alias(input),
                })
            }
            Op::Reduce { .. } => {
                let tail = self.epilogue_tail[i].unwrap_or(i);
                self.epilogue_tail[i] = Some(tail);
                Some(if tail == i {
                    Placement::Buffer
                } else {
                    Placement::Epilogue(i)
                })
            }
            _ => None,
        }
    }

    /// The fused body's cost and inputs if node `i` fused its operands as
    /// they are placed now.
    fn estimate(&self, i: usize) -> (u32, u32) {
        let node = &self.graph.nodes[i];
        let mut size = cost(&node.op);
        let mut reads = u32::from(matches!(node.op, Op::Arange { .. }));
        for &input in &node.inputs {
            match self.placement[input] {
                Placement::Fused => {
                    size = size.saturating_add(self.size[input]);
                    reads = reads.saturating_add(self.reads[input]);
                }
                _ => reads = reads.saturating_add(1),
            }
        }
        (size, reads)
    }

    /// Node `i`'s placement by what fusing it costs: its operands
    /// materialised where its body would cross the limits; itself a
    /// buffer where forced, where fusion is off, or where recomputing it
    /// for each of its users costs too much.
    fn by_cost(&mut self, i: usize) -> Placement {
        let (graph, options) = (self.graph, self.options);
        let node = &graph.nodes[i];
        let (mut size, mut reads) = self.estimate(i);
        if options.enabled && (size > options.max_body || reads > options.max_inputs) {
            for &input in &node.inputs {
                if self.placement[input] == Placement::Fused
                    && graph.nodes[input].op.is_elementwise()
                {
                    self.placement[input] = Placement::Buffer;
                }
            }
            self.notes.push(format!(
                "split before %{i}: its fused body would cost {size} units and read {reads} \
                 inputs (limits {} and {}); its operands are materialised",
                options.max_body, options.max_inputs
            ));
            (size, reads) = self.estimate(i);
        }
        self.size[i] = size;
        self.reads[i] = reads;
        let computes = node.op.is_elementwise();
        let users = self.users[i].len();
        if self.forced[i] || (computes && !options.enabled) {
            Placement::Buffer
        } else if computes && users > 1 && size > options.recompute_limit {
            self.stored_shared[i] = Some(self.notes.len());
            self.notes.push(format!(
                "%{i} is used {users} times and costs {size} units: materialised once instead \
                 of recomputed by each user (limit {})",
                options.recompute_limit
            ));
            Placement::Buffer
        } else {
            Placement::Fused
        }
    }

    /// An upper bound of the largest fused body with the placements as
    /// they are: each node's cost plus its fused operands' bodies (a value
    /// read twice counted twice, though a kernel computes it once).
    fn largest_body(&self) -> u32 {
        let mut body = vec![0u32; self.graph.nodes.len()];
        let mut largest = 0;
        for (i, node) in self.graph.nodes.iter().enumerate() {
            body[i] = node
                .inputs
                .iter()
                .filter(|&&input| self.placement[input] == Placement::Fused)
                .fold(cost(&node.op), |total, &input| {
                    total.saturating_add(body[input])
                });
            largest = largest.max(body[i]);
        }
        largest
    }

    /// Fuses again each value stored for its cost whose readers are all
    /// element-wise kernels of its own domain: they become one kernel
    /// (`group::multi_output_groups` merges roots sharing a fused node)
    /// in which the value is computed once. True when any was.
    ///
    /// One pass, latest node first, so that every node is judged with its
    /// users' final placements: `read_in_domain[i]` holds when every user
    /// of `i` is element-wise over `i`'s shape and is a kernel root or
    /// itself holds it. Each edge is looked at once, so a 100,000-node
    /// graph of shared values costs no more than its size.
    fn share_within_domains(&mut self) -> bool {
        let graph = self.graph;
        let n = graph.nodes.len();
        let mut read_in_domain = vec![false; n];
        let mut shared = false;
        for x in (0..n).rev() {
            let shape = &graph.nodes[x].shape;
            read_in_domain[x] = self.users[x].iter().all(|&u| {
                let node = &graph.nodes[u];
                node.op.is_elementwise()
                    && node.shape == *shape
                    && match self.placement[u] {
                        Placement::Fused => read_in_domain[u],
                        Placement::Buffer => true,
                        Placement::Alias(_) | Placement::Epilogue(_) => false,
                    }
            });
            let Some(note) = self.stored_shared[x] else {
                continue;
            };
            if read_in_domain[x] {
                self.placement[x] = Placement::Fused;
                shared = true;
                self.notes[note] = format!(
                    "%{x} is used {} times and costs {} units: computed once inside the one \
                     kernel of its readers (element-wise over its domain), never stored",
                    self.users[x].len(),
                    self.size[x]
                );
            }
        }
        shared
    }
}
