//! The expression graph a demand works on (petgraph).
//!
//! A demand snapshots the DAG reachable from the demanded arrays into an
//! [`ExprGraph`]. Invariants:
//! - Node indices are in topological order: every input has a smaller index
//!   than its consumer. Building is an iterative depth-first walk, so a chain
//!   of any length builds without recursion.
//! - Each DAG node appears once, however many paths reach it.
//! - A node whose value is already materialised (a source, or a memoised
//!   result) becomes a leaf carrying its [`Residency`]: the walk stops there.
//! - Edges go from an input to its consumer; the edge weight is the operand
//!   position, which also orders [`GraphNode::inputs`].
//! - A user kernel launch not run yet is in the graph with all its outputs
//!   still alive: those not demanded that a later demand may still need
//!   (referenced from outside the graph, directly or through nodes left
//!   uncomputed) follow the demanded ones in [`ExprGraph::outputs`] (see
//!   [`ExprGraph::kernel_outputs`]), so one run of the launch gives every
//!   output its value.
//! - A value the demand computes that a live expression outside it reads
//!   (Black–Scholes' `put` reading `cnd(d2)` while `call` alone is
//!   demanded) and that is costly to compute again joins those outputs
//!   too, and is kept: the later demand reads it instead of computing it
//!   again (`kept_for_later`).

use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::Direction;
use smallvec::SmallVec;

use crate::dtype::DType;
use crate::node::{Node, Op, Residency};
use crate::shape::Shape;

/// One node of an [`ExprGraph`].
#[derive(Clone, Debug)]
pub struct GraphNode {
    /// The operation ([`Op::Source`]-like leaves keep their original op).
    pub op: Op,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Shape,
    /// Operands, in order (empty for materialised leaves).
    pub inputs: SmallVec<[NodeIndex; 2]>,
    /// The value, for nodes that are already materialised.
    pub data: Option<Residency>,
    /// The DAG node a materialised leaf came from, so an engine can attach
    /// a device copy to it (uploaded once, reused by later demands).
    pub origin: Option<Arc<Node>>,
}

impl GraphNode {
    /// Number of elements.
    pub fn len(&self) -> usize {
        crate::shape::len(&self.shape)
    }

    /// True when the node has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A snapshot of the expression DAG needed by one demand.
#[derive(Clone, Debug)]
pub struct ExprGraph {
    /// Unique to this snapshot (see [`ExprGraph::id`]).
    id: u64,
    graph: StableDiGraph<GraphNode, u8>,
    outputs: Vec<NodeIndex>,
    /// The DAG nodes of the outputs after the roots: user kernel outputs
    /// the demand computes without demanding them, and shared values kept
    /// for a later demand.
    kernel_outputs: Vec<Arc<Node>>,
}

/// Which nodes of `graph` a later demand may need: those that something
/// outside the graph still references (an array handle, a node of no
/// demand yet), and their inputs up to the values this demand leaves
/// computed (`roots`, leaves). `held` holds each graph node's DAG node,
/// `launched` the kernel outputs met while building. A kernel output no
/// later demand can reach need not be kept: an intermediate of a chain of
/// kernels dies in the demand (its memory freed, or written in place by
/// the next kernel) instead of living as long as the chain.
fn needed_later(
    graph: &StableDiGraph<GraphNode, u8>,
    held: &[Arc<Node>],
    launched: &[Arc<Node>],
    roots: &[NodeIndex],
) -> Vec<bool> {
    let mut computed: Vec<bool> = (graph.node_indices())
        .map(|id| graph[id].data.is_some())
        .collect();
    for root in roots {
        computed[root.index()] = true;
    }
    let mut in_launched: HashMap<usize, usize> = HashMap::default();
    for node in launched {
        *in_launched.entry(node.address()).or_default() += 1;
    }
    // References from within the graph: `held`, each consumer's operand
    // (one edge per operand position), `launched`. Any other comes from
    // outside; a count that rose meanwhile (another thread) only keeps
    // more than needed.
    let mut stack: Vec<NodeIndex> = (held.iter().enumerate())
        .filter(|&(i, node)| {
            let id = NodeIndex::new(i);
            let within = 1
                + graph.edges_directed(id, Direction::Outgoing).count()
                + in_launched.get(&node.address()).copied().unwrap_or(0);
            !computed[i] && Arc::strong_count(node) > within
        })
        .map(|(i, _)| NodeIndex::new(i))
        .collect();
    let mut needed = vec![false; held.len()];
    while let Some(id) = stack.pop() {
        if needed[id.index()] || computed[id.index()] {
            continue;
        }
        needed[id.index()] = true;
        stack.extend(graph[id].inputs.iter().copied());
    }
    needed
}

/// Units of element-wise work (`Op::units`) from which a value read by
/// an expression outside the demand is kept: one transcendental
/// function's worth.
const KEEP_UNITS: u32 = 8;

/// Values of `graph` the demand keeps for a later one, beyond `outputs`:
/// element-wise values it computes, read by a live expression outside it
/// — Black–Scholes' `put` reading `cnd(d2)` while `call` alone is
/// demanded — whose element-wise cone costs [`KEEP_UNITS`] or more to
/// compute again. Keeping one adds a write to the kernel computing it, and
/// never splits a kernel: reductions and other values that are buffers
/// already are not kept this way (a short reduction fused into its reader,
/// a row program's row values, would be split off). A handle alone (a
/// named variable) keeps nothing: only an expression built on a value says
/// that a later demand reads it.
fn kept_for_later(
    graph: &StableDiGraph<GraphNode, u8>,
    held: &[Arc<Node>],
    outputs: &[NodeIndex],
) -> Vec<NodeIndex> {
    let read_outside = |id: NodeIndex, node: &Arc<Node>| {
        node.readers() as usize > graph.edges_directed(id, Direction::Outgoing).count()
    };
    let candidates: Vec<NodeIndex> = (held.iter().enumerate())
        .map(|(i, node)| (NodeIndex::new(i), node))
        .filter(|&(id, node)| {
            graph[id].data.is_none()
                && graph[id].op.is_elementwise()
                && read_outside(id, node)
                && !outputs.contains(&id)
        })
        .map(|(id, _)| id)
        .collect();
    if candidates.is_empty() {
        return candidates;
    }
    // The element-wise cone of each candidate, walked until it is found
    // costly; `seen` holds the candidate a node was last met for.
    let mut seen = vec![usize::MAX; held.len()];
    let mut stack = Vec::new();
    let mut costly = |c: usize, candidate: NodeIndex| {
        let mut units = 0u32;
        stack.clear();
        stack.push(candidate);
        while let Some(id) = stack.pop() {
            let node = &graph[id];
            if seen[id.index()] == c || node.data.is_some() || !node.op.is_elementwise() {
                continue;
            }
            seen[id.index()] = c;
            units = units.saturating_add(node.op.units());
            if units >= KEEP_UNITS {
                return true;
            }
            stack.extend(node.inputs.iter().copied());
        }
        false
    };
    (candidates.into_iter().enumerate())
        .filter(|&(c, id)| costly(c, id))
        .map(|(_, id)| id)
        .collect()
}

impl ExprGraph {
    /// Snapshots everything `roots` need; `outputs()` lists the roots'
    /// indices in order, then the undemanded outputs of the user kernel
    /// launches the graph runs.
    pub fn from_roots(roots: &[Arc<Node>]) -> ExprGraph {
        // Room for as many nodes as the last snapshot had (a loop demands
        // one program over and over; growing a graph of 192-byte nodes
        // from a few to a hundred copied it five times), at least a small
        // expression's and at most a large one's.
        static LAST_SIZE: AtomicUsize = AtomicUsize::new(0);
        const TYPICAL: usize = 8;
        let room = LAST_SIZE.load(Ordering::Relaxed).clamp(TYPICAL, 4096);
        let mut graph = StableDiGraph::with_capacity(room, room);
        let mut index: HashMap<usize, NodeIndex> =
            HashMap::with_capacity_and_hasher(room, Default::default());
        let mut stack: Vec<(Arc<Node>, bool)> = Vec::with_capacity(TYPICAL);
        // The DAG node of each graph node, by index.
        let mut held: Vec<Arc<Node>> = Vec::with_capacity(room);
        stack.extend(roots.iter().rev().map(|r| (Arc::clone(r), false)));
        // Every output node of the launches met so far, in the order met.
        let mut launched: Vec<Arc<Node>> = Vec::new();
        loop {
            while let Some((node, expanded)) = stack.pop() {
                let key = node.address();
                if index.contains_key(&key) {
                    continue;
                }
                let materialized = node.is_materialized();
                if !materialized && !expanded {
                    stack.push((Arc::clone(&node), true));
                    for input in node.inputs.iter().rev() {
                        if !index.contains_key(&input.address()) {
                            stack.push((Arc::clone(input), false));
                        }
                    }
                    continue;
                }
                let inputs: SmallVec<[NodeIndex; 2]> = if materialized {
                    SmallVec::new()
                } else {
                    node.inputs
                        .iter()
                        .filter_map(|i| index.get(&i.address()).copied())
                        .collect()
                };
                if let (Op::Kernel { launch, .. }, false) = (&node.op, materialized) {
                    launched.extend(launch.outputs().into_iter().flatten());
                }
                let id = graph.add_node(GraphNode {
                    op: node.op.clone(),
                    dtype: node.dtype,
                    shape: node.shape.clone(),
                    inputs: inputs.clone(),
                    data: materialized.then(|| node.residency()),
                    origin: materialized.then(|| Arc::clone(&node)),
                });
                for (position, input) in inputs.iter().enumerate() {
                    graph.add_edge(*input, id, position as u8);
                }
                index.insert(key, id);
                held.push(node);
            }
            // A launch's outputs not reached yet join the graph (their inputs
            // are the launch's, already in it).
            match launched.iter().find(|n| !index.contains_key(&n.address())) {
                Some(sibling) => stack.push((Arc::clone(sibling), false)),
                None => break,
            }
        }
        let mut outputs: Vec<NodeIndex> = roots
            .iter()
            .filter_map(|r| index.get(&r.address()).copied())
            .collect();
        let mut kernel_outputs = Vec::new();
        if !launched.is_empty() {
            let needed = needed_later(&graph, &held, &launched, &outputs);
            for node in launched {
                let demanded = roots.iter().any(|r| Arc::ptr_eq(r, &node));
                let already = kernel_outputs.iter().any(|k| Arc::ptr_eq(k, &node));
                let Some(&id) = index.get(&node.address()) else {
                    continue;
                };
                if !demanded && !already && graph[id].data.is_none() && needed[id.index()] {
                    outputs.push(id);
                    kernel_outputs.push(node);
                }
            }
        }
        for id in kept_for_later(&graph, &held, &outputs) {
            outputs.push(id);
            kernel_outputs.push(Arc::clone(&held[id.index()]));
        }
        LAST_SIZE.store(graph.node_count(), Ordering::Relaxed);
        // Snapshots are numbered in the order they are taken.
        static SNAPSHOTS: AtomicU64 = AtomicU64::new(0);
        ExprGraph {
            id: SNAPSHOTS.fetch_add(1, Ordering::Relaxed),
            graph,
            outputs,
            kernel_outputs,
        }
    }

    /// A number no other snapshot of this process has: what an engine
    /// derived from this graph (its program) is valid for this id, so a
    /// second look-up for the same graph (an evaluation after a declined
    /// `evaluate_into`) can reuse it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The DAG nodes of the outputs after the roots (`outputs()[roots..]`):
    /// user kernel outputs that the demand computes because their launch
    /// runs, though nothing demanded them, and that a later demand may
    /// still need; then values a live expression outside the demand reads
    /// that are costly to compute again. The session keeps their values,
    /// so a launch runs once and shared work is done once.
    pub fn kernel_outputs(&self) -> &[Arc<Node>] {
        &self.kernel_outputs
    }

    /// The demanded nodes, in the order they were demanded.
    pub fn outputs(&self) -> &[NodeIndex] {
        &self.outputs
    }

    /// The node at `index`.
    pub fn node(&self, index: NodeIndex) -> &GraphNode {
        &self.graph[index]
    }

    /// All node indices in topological order (inputs first).
    pub fn topological_order(&self) -> Vec<NodeIndex> {
        let mut order: Vec<NodeIndex> = self.graph.node_indices().collect();
        order.sort_unstable();
        order
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    /// How many operand slots read the node at `index`.
    pub fn consumer_count(&self, index: NodeIndex) -> usize {
        self.graph
            .edges_directed(index, Direction::Outgoing)
            .count()
    }

    /// The underlying petgraph graph, for passes.
    pub fn petgraph(&self) -> &StableDiGraph<GraphNode, u8> {
        &self.graph
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::HostBuffer;
    use crate::ops::BinaryOp;

    #[test]
    fn shared_nodes_appear_once_in_topological_order() {
        let a = Node::source(HostBuffer::F32(vec![1.0, 2.0]), Shape::from_slice(&[2]));
        let sq = Node::new(
            Op::Binary(BinaryOp::Mul),
            DType::F32,
            Shape::from_slice(&[2]),
            SmallVec::from_vec(vec![a.clone(), a.clone()]),
        );
        let sum = Node::new(
            Op::Binary(BinaryOp::Add),
            DType::F32,
            Shape::from_slice(&[2]),
            SmallVec::from_vec(vec![sq.clone(), a.clone()]),
        );
        let g = ExprGraph::from_roots(&[sum]);
        assert_eq!(g.node_count(), 3);
        for idx in g.topological_order() {
            for input in &g.node(idx).inputs {
                assert!(*input < idx);
            }
        }
        assert_eq!(g.consumer_count(g.topological_order()[0]), 3);
    }
}
