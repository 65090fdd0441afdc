//! Which nodes are materialised (written to a buffer) and which are fused
//! into the kernels that read them.
//!
//! Rules, in topological order:
//! - leaves are buffers; demanded nodes are kernel outputs;
//! - a *short* reduction (a built-in one combining at most
//!   `unroll_limit` elements per result) is unrolled: it is element-wise
//!   work of its result's shape, each result combining its elements'
//!   values in registers, and fuses into its readers like any element-wise
//!   node (k-means' `((p - c) ** 2).sum(-1)` over 8 features); unless the
//!   unrolled body would read more than `max_inputs` inputs;
//! - any other reduction is a kernel root; the element-wise work feeding it fuses into
//!   its read, and a chain of single-use element-wise nodes after it whose
//!   other operands are constants (`mean`'s division, a cast) fuses as its
//!   epilogue;
//! - `reshape` of a buffer is a free alias; one that only inserts or
//!   removes axes of one element is a view of anything; any other reshape
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

use lazyfuse_core::{Combine, Op, Options, Result};
use rustc_hash::FxHashSet as HashSet;
use smallvec::SmallVec;

use crate::index_map::{self, IndexMap};
use crate::simplify::Graph;

/// Most reads (streamed and fixed-element) an unrolled reduction's body
/// may make: each is a kernel input, and a device passes every input's
/// pointer, offset and strides as launch parameters (4 KiB in all).
const MAX_UNROLLED_READS: u32 = 160;

/// Most (node, index map) pairs walked to size one kernel body exactly.
const MAX_WALK: usize = 8192;

/// What a kernel body (or an unrolled reduction's) computes and reads.
#[derive(Clone, Copy, Debug, Default)]
struct Cone {
    /// Cost units of its operations.
    units: u32,
    /// Reads that move with the domain index.
    streamed: u32,
    /// Reads of one element wherever the domain index is.
    fixed: u32,
}

impl Cone {
    /// Reads as the partition counts them: a fixed-element read (loaded
    /// once, or cached) as an eighth of a streamed one.
    fn reads(self) -> u32 {
        self.streamed + self.fixed.div_ceil(8)
    }
}

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
    /// Most elements a built-in reduction combines per result and is still
    /// unrolled into element-wise work (0: never).
    pub unroll_limit: usize,
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
            unroll_limit: 16,
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
    /// Short reductions unrolled into element-wise work (placed `Fused`,
    /// or `Buffer` as element-wise kernel roots).
    pub unrolled: Vec<bool>,
}

impl Partition {
    /// True when `node` is computed by a fused kernel of its own (a kernel
    /// root): not a leaf, not written by a user kernel.
    pub fn is_root(&self, graph: &Graph, node: usize) -> bool {
        self.placement[node] == Placement::Buffer
            && !graph.nodes[node].is_leaf()
            && (self.unrolled[node]
                || !matches!(
                    graph.nodes[node].op,
                    Op::Kernel { .. } | Op::Scan { .. } | Op::ArgReduce { .. }
                ))
    }
}

fn cost(op: &Op) -> u32 {
    op.units()
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
        if let Some(note) = partitioner.unrolled_past_limits() {
            let unshared = FusionOptions {
                share_within_domains: false,
                ..options.clone()
            };
            let mut partition = partition(graph, &unshared)?;
            partition.notes.push(note);
            return Ok(partition);
        }
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
        unrolled: partitioner.unrolled,
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
    /// Short reductions unrolled into element-wise work.
    unrolled: Vec<bool>,
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
        // (A short arg-reduction may be unrolled instead: decided in turn.)
        for node in &graph.nodes {
            match node.op {
                Op::Reshape if !index_map::is_unit_reshape(graph, node) => {
                    forced[node.inputs[0]] = true
                }
                Op::ArgReduce { axis, .. }
                    if options.enabled
                        && graph.nodes[node.inputs[0]].shape[axis] <= options.unroll_limit => {}
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
            unrolled: vec![false; n],
            notes: Vec::new(),
        }
    }

    /// The chains of single-use element-wise nodes after each reduction,
    /// whose other operands are constants: its epilogue.
    fn chain_epilogues(&mut self) {
        let graph = self.graph;
        for (r, node) in graph.nodes.iter().enumerate() {
            if !matches!(node.op, Op::Reduce { .. }) || self.lanes(r).is_some() {
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
            Op::ArgReduce { .. } if self.unrolls(i) => None,
            Op::ArgReduce { .. } => {
                // Not unrolled after all: its input is read whole, from memory.
                let input = node.inputs[0];
                if self.placement[input] == Placement::Fused && !self.graph.nodes[input].is_leaf() {
                    self.placement[input] = Placement::Buffer;
                }
                Some(Placement::Buffer)
            }
            Op::Kernel { .. } | Op::Scan { .. } => Some(Placement::Buffer),
            // Only inserting or removing axes of one element: a view, read
            // in place (`keepdims`, `x[:, None]`), unless of a buffer.
            Op::Reshape
                if index_map::is_unit_reshape(self.graph, node)
                    && self.placement[node.inputs[0]] == Placement::Fused
                    && !self.graph.nodes[node.inputs[0]].is_leaf() =>
            {
                None
            }
            Op::Reshape => {
                let input = node.inputs[0];
                Some(match self.placement[input] {
                    Placement::Alias(target) => Placement::Alias(target),
                    _ => Placement::Alias(input),
                })
            }
            Op::Reduce { .. } if self.unrolls(i) => None,
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

    /// The number of elements reduction `i` combines per result when it is
    /// short enough to unroll (a built-in reduction, or an arg-reduction of
    /// numbers; at least one element, at most `unroll_limit`); `None`
    /// otherwise.
    fn lanes(&self, i: usize) -> Option<u32> {
        let node = &self.graph.nodes[i];
        let input = &self.graph.nodes[*node.inputs.first()?];
        let lanes: usize = match &node.op {
            Op::Reduce {
                combine: Combine::Builtin(_),
                axes,
            } => axes.iter().map(|&a| input.shape[a]).product(),
            Op::ArgReduce { axis, .. } if !input.dtype.is_bool() => input.shape[*axis],
            _ => return None,
        };
        let short = self.options.enabled && (1..=self.options.unroll_limit).contains(&lanes);
        short.then_some(lanes as u32)
    }

    /// Decides whether short reduction `i` is unrolled: when its unrolled
    /// body (found by walking it as emission will) stays within the limits.
    /// Its cost and reads are then the unrolled body's; a read of one fixed
    /// element (the same wherever the domain index is) counts as an eighth
    /// of a streamed one.
    fn unrolls(&mut self, i: usize) -> bool {
        let Some(lanes) = self.lanes(i) else {
            return false;
        };
        self.unrolled[i] = true;
        let limits = self.options;
        let verdict = match self.cone(i) {
            Some(cone) if self.within_limits(cone) => {
                self.size[i] = cone.units;
                self.reads[i] = cone.reads();
                Ok(format!(
                    "%{i} reduces {lanes} elements per result: unrolled into element-wise work \
                     ({} units, {} streamed and {} fixed-element reads)",
                    cone.units, cone.streamed, cone.fixed
                ))
            }
            Some(cone) => Err(format!(
                "%{i} reduces {lanes} elements per result, but unrolled it would cost {} units \
                 and read {} streamed and {} fixed elements (limits {}, {} and {} reads in \
                 all): a reduction of its own",
                cone.units,
                cone.streamed,
                cone.fixed,
                limits.max_body,
                limits.max_inputs,
                MAX_UNROLLED_READS
            )),
            None => Err(format!(
                "%{i} reduces {lanes} elements per result, but its unrolled body would be \
                 too large to walk: a reduction of its own"
            )),
        };
        let unrolled = verdict.is_ok();
        self.unrolled[i] = unrolled;
        self.notes.push(verdict.unwrap_or_else(|e| e));
        unrolled
    }

    /// After values were fused again by sharing: why an unrolled
    /// reduction whose body grew with them would now cross the limits, if
    /// one would.
    fn unrolled_past_limits(&self) -> Option<String> {
        (0..self.graph.nodes.len())
            .filter(|&i| self.unrolled[i])
            .find_map(|i| match self.cone(i) {
                Some(cone) if self.within_limits(cone) => None,
                _ => Some(format!(
                    "computing shared values once inside the unrolled reduction %{i} would \
                     cross the limits: they are stored instead"
                )),
            })
    }

    /// Whether an unrolled body of `cone` stays within the limits.
    fn within_limits(&self, cone: Cone) -> bool {
        cone.streamed <= self.options.max_inputs
            && cone.streamed + cone.fixed <= MAX_UNROLLED_READS
            && cone.units <= self.options.max_body
    }

    /// What node `i` computes and reads with its fused operands (an
    /// unrolled reduction: each of its lanes), found by walking them
    /// through the index maps emission will use (each distinct read of
    /// each node once); `None` past `MAX_WALK` steps.
    fn cone(&self, i: usize) -> Option<Cone> {
        let graph = self.graph;
        let mut cone = Cone::default();
        let mut seen: HashSet<(usize, IndexMap)> = HashSet::default();
        let mut stack = vec![(i, index_map::identity(graph.nodes[i].shape.len()))];
        while let Some((n, map)) = stack.pop() {
            if seen.len() > MAX_WALK {
                return None;
            }
            if !seen.insert((n, map.clone())) {
                continue;
            }
            let node = &graph.nodes[n];
            let read = n != i && (node.is_leaf() || self.placement[n] != Placement::Fused);
            if read || matches!(node.op, Op::Arange { .. }) {
                match index_map::is_fixed(&map) {
                    true => cone.fixed += 1,
                    false => cone.streamed += 1,
                }
                continue;
            }
            if matches!(node.op, Op::Fill(_)) {
                continue;
            }
            let operands = index_map::operands(graph, &self.unrolled, n, &map).ok()?;
            cone.units = cone.units.saturating_add(match node.op {
                // A running best, its index and the NaN test per element.
                Op::ArgReduce { .. } => 7 * operands.len() as u32,
                Op::Reduce { .. } => operands.len() as u32 - 1,
                ref op => cost(op),
            });
            stack.extend(operands);
        }
        Some(cone)
    }

    /// True when node `i` is element-wise work fused into its readers'
    /// bodies: element-wise operations and unrolled reductions.
    fn computes(&self, i: usize) -> bool {
        self.graph.nodes[i].op.is_elementwise() || self.unrolled[i]
    }

    /// The fused body's cost and inputs if node `i` fused its operands as
    /// they are placed now.
    fn estimate(&self, i: usize) -> (u32, u32) {
        if self.unrolled[i] {
            return (self.size[i], self.reads[i]);
        }
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
        let past =
            |(size, reads): (u32, u32)| size > options.max_body || reads > options.max_inputs;
        if options.enabled && past((size, reads)) {
            // The estimate counts a value read on two paths twice: the
            // exact count, by walking the body, decides (and later
            // estimates build on it).
            if let Some(cone) = self.cone(i) {
                (size, reads) = (cone.units, cone.reads());
            }
        }
        if options.enabled && past((size, reads)) {
            for &input in &node.inputs {
                if self.placement[input] == Placement::Fused && self.computes(input) {
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
        let computes = self.computes(i);
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
            // An unrolled reduction reads each element of its input once
            // (one lane each), in the kernel its own readers make.
            read_in_domain[x] = self.users[x].iter().all(|&u| {
                let node = &graph.nodes[u];
                (self.unrolled[u] || node.op.is_elementwise() && node.shape == *shape)
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
