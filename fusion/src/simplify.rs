//! The graph passes that run before fusion, in one topological sweep that
//! rebuilds the graph:
//! - **common-subexpression elimination**: hash-consing on (operation,
//!   dtype, shape, operands), so `(a - b) * (a - b)` computes `a - b` once;
//! - **constant folding**: an element-wise operation of constants becomes a
//!   constant (computed by the reference kernels, so folding cannot change a
//!   result), and views of constants are constants;
//! - **exact algebraic no-ops** on integers: `x + 0`, `0 + x`, `x - 0`,
//!   `x * 1`, `1 * x`, `x // 1`, `x ** 1` become `x` (never applied to floats,
//!   where `-0.0 + 0` is `+0.0`);
//! - **fast powers**, as NumPy: `x ** 2` → `square(x)`, `x ** 0.5` →
//!   `sqrt(x)`, `x ** 1` → `x`;
//! - **dead-node removal**: nodes no output reaches are dropped.
//!
//! Cost: linear in the number of nodes (one hash lookup each); no recursion.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use lazyfuse_core::reference::kernels;
use lazyfuse_core::{
    ArgExtreme, BinaryOp, Combine, DType, ExprGraph, HostBuffer, Literal, Node, Op, ReduceOp,
    Residency, Result, Shape, UnaryOp,
};
use smallvec::SmallVec;

/// One node of the simplified graph.
#[derive(Clone, Debug)]
pub struct SNode {
    /// The operation.
    pub op: Op,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Shape,
    /// Operand indices (smaller than this node's index).
    pub inputs: SmallVec<[usize; 2]>,
    /// Data of a materialised leaf.
    pub data: Option<Residency>,
    /// The DAG node of a leaf (to attach device copies to).
    pub origin: Option<Arc<Node>>,
    /// The node's index in the demand's `ExprGraph` (for a leaf: where a
    /// cached program finds the data of a later demand).
    pub source: usize,
    /// For a constant bound per demand (`crate::bound`), the demand
    /// graph's `Fill` node holding its value; `None` for every other node
    /// (and for a constant equal to one the program keeps).
    pub bound: Option<usize>,
}

impl SNode {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when the node has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True for materialised leaves (user data or memoised results).
    pub fn is_leaf(&self) -> bool {
        self.data.is_some()
    }

    /// The constant of a `Fill` node.
    pub fn constant(&self) -> Option<Literal> {
        match (&self.op, &self.data) {
            (Op::Fill(l), None) => Some(*l),
            _ => None,
        }
    }
}

/// A simplified expression graph: nodes in topological order.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Nodes; operands precede consumers.
    pub nodes: Vec<SNode>,
    /// The demanded nodes, in demand order (possibly repeated).
    pub outputs: Vec<usize>,
    /// How many nodes the passes removed or merged.
    pub removed: usize,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum OpKey {
    Fill(Literal),
    Arange(u64, u64),
    Unary(UnaryOp),
    Binary(BinaryOp),
    Select,
    Cast,
    Bitcast,
    Reshape,
    Permute(SmallVec<[usize; 4]>),
    BroadcastTo,
    Slice(usize, usize, isize),
    Reduce(ReduceOp, SmallVec<[usize; 4]>),
    CustomReduce(usize, SmallVec<[usize; 4]>),
    Scan(ReduceOp, usize),
    ArgReduce(ArgExtreme, usize),
}

pub(crate) fn op_key(op: &Op) -> Option<OpKey> {
    Some(match op {
        Op::Fill(l) => OpKey::Fill(*l),
        Op::Arange { start, step } => OpKey::Arange(start.to_bits(), step.to_bits()),
        Op::Unary(u) => OpKey::Unary(*u),
        Op::Binary(b) => OpKey::Binary(*b),
        Op::Select => OpKey::Select,
        Op::Cast => OpKey::Cast,
        Op::Bitcast => OpKey::Bitcast,
        Op::Reshape => OpKey::Reshape,
        Op::Permute(p) => OpKey::Permute(p.clone()),
        Op::BroadcastTo => OpKey::BroadcastTo,
        Op::Slice { axis, start, step } => OpKey::Slice(*axis, *start, *step),
        Op::Reduce {
            combine: Combine::Builtin(r),
            axes,
        } => OpKey::Reduce(*r, axes.clone()),
        Op::Reduce {
            combine: Combine::Custom(c),
            axes,
        } => OpKey::CustomReduce(Arc::as_ptr(c) as usize, axes.clone()),
        Op::Scan { combine, axis } => OpKey::Scan(*combine, *axis),
        Op::ArgReduce { extreme, axis } => OpKey::ArgReduce(*extreme, *axis),
        Op::Source | Op::Param(_) | Op::Invalid(_) | Op::Kernel { .. } => return None,
    })
}

type Key = (OpKey, DType, Shape, SmallVec<[usize; 2]>);

struct Builder {
    nodes: Vec<SNode>,
    seen: HashMap<Key, usize>,
}

impl Builder {
    fn add(&mut self, node: SNode) -> usize {
        let key = op_key(&node.op)
            .filter(|_| node.data.is_none())
            .map(|k| (k, node.dtype, node.shape.clone(), node.inputs.clone()));
        if let Some(key) = &key {
            if let Some(&existing) = self.seen.get(key) {
                // A bound constant equal to one the program keeps is kept
                // too: the cache's key holds that value.
                if node.bound.is_none() {
                    self.nodes[existing].bound = None;
                }
                return existing;
            }
        }
        self.nodes.push(node);
        let index = self.nodes.len() - 1;
        if let Some(key) = key {
            self.seen.insert(key, index);
        }
        index
    }

    /// The value of a constant no later demand may change (none of a
    /// bound one: no pass reads it).
    fn constant(&self, index: usize) -> Option<Literal> {
        let node = &self.nodes[index];
        node.constant().filter(|_| node.bound.is_none())
    }
}

/// Runs the passes of the module documentation on a demand's graph.
pub fn simplify(graph: &ExprGraph) -> Result<Graph> {
    let mut builder = Builder {
        nodes: Vec::with_capacity(graph.node_count()),
        seen: HashMap::default(),
    };
    let bound = crate::bound::bound_constants(graph);
    let order = graph.topological_order();
    let mut remap: HashMap<usize, usize> =
        HashMap::with_capacity_and_hasher(order.len(), Default::default());
    for index in order {
        let node = graph.node(index);
        let inputs: SmallVec<[usize; 2]> = node.inputs.iter().map(|i| remap[&i.index()]).collect();
        // A materialised leaf is data, whatever operation once produced it.
        let op = if node.data.is_some() {
            Op::Source
        } else {
            node.op.clone()
        };
        let new = SNode {
            op,
            dtype: node.dtype,
            shape: node.shape.clone(),
            inputs,
            data: node.data.clone(),
            origin: node.origin.clone(),
            source: index.index(),
            bound: bound[index.index()].then_some(index.index()),
        };
        let placed = match rewrite(&builder, &new)? {
            Rewrite::Keep => builder.add(new),
            Rewrite::Replace(existing) => existing,
            Rewrite::Unary(op, input) => builder.add(SNode {
                op: Op::Unary(op),
                inputs: SmallVec::from_slice(&[input]),
                ..new
            }),
            Rewrite::Constant(literal) => builder.add(SNode {
                op: Op::Fill(literal),
                dtype: new.dtype,
                shape: new.shape,
                inputs: SmallVec::new(),
                data: None,
                origin: None,
                source: new.source,
                bound: None,
            }),
        };
        remap.insert(index.index(), placed);
    }
    let outputs: Vec<usize> = graph.outputs().iter().map(|o| remap[&o.index()]).collect();
    Ok(remove_dead(builder.nodes, outputs, graph.node_count()))
}

enum Rewrite {
    Keep,
    Replace(usize),
    Constant(Literal),
    Unary(UnaryOp, usize),
}

fn rewrite(builder: &Builder, node: &SNode) -> Result<Rewrite> {
    if node.data.is_some() || node.inputs.is_empty() {
        return Ok(Rewrite::Keep);
    }
    let constants: Option<Vec<Literal>> =
        node.inputs.iter().map(|&i| builder.constant(i)).collect();
    if let Some(constants) = constants {
        if node.op.is_elementwise() {
            let buffers: Vec<HostBuffer> = constants
                .iter()
                .map(|l| HostBuffer::filled(*l, 1))
                .collect();
            let refs: Vec<&HostBuffer> = buffers.iter().collect();
            let value = kernels::elementwise(&node.op, node.dtype, &refs, 1)?;
            if let Some(wide) = value.get_wide(0) {
                return Ok(Rewrite::Constant(Literal::cast_from(wide, node.dtype)));
            }
        }
        if node.op.is_view() {
            return Ok(Rewrite::Constant(constants[0]));
        }
    }
    if let Some(rewritten) = power_by_constant(builder, node) {
        return Ok(rewritten);
    }
    Ok(algebraic_identity(builder, node).map_or(Rewrite::Keep, Rewrite::Replace))
}

/// NumPy's fast scalar powers (`semantics::fast_power`: `x ** 2` is
/// `square(x)`, `x ** 0.5` is `sqrt(x)` for f32 and f64), and `x ** 1` is
/// `x` — the same values NumPy computes, without calling `pow`. The
/// reference evaluator takes the same rule.
fn power_by_constant(builder: &Builder, node: &SNode) -> Option<Rewrite> {
    let Op::Binary(BinaryOp::Pow) = node.op else {
        return None;
    };
    let (base, exponent) = (node.inputs[0], node.inputs[1]);
    let e = builder.constant(exponent)?.to_wide().as_f64();
    let shaped = builder.nodes[base].shape == node.shape;
    if e == 1.0 {
        return shaped.then_some(Rewrite::Replace(base));
    }
    let op = lazyfuse_core::semantics::fast_power(e, node.dtype)?;
    shaped.then_some(Rewrite::Unary(op, base))
}

/// `x op c` (or `c op x`) that is exactly `x` for integers.
fn algebraic_identity(builder: &Builder, node: &SNode) -> Option<usize> {
    let Op::Binary(op) = node.op else { return None };
    if !node.dtype.is_integer() {
        return None;
    }
    let (a, b) = (node.inputs[0], node.inputs[1]);
    let is = |i: usize, v: i128| matches!(builder.constant(i).map(|l| l.to_wide()), Some(lazyfuse_core::Wide::Int(x)) if x == v);
    let keeps_shape = |i: usize| builder.nodes[i].shape == node.shape;
    let pick = match op {
        BinaryOp::Add if is(b, 0) => a,
        BinaryOp::Add if is(a, 0) => b,
        BinaryOp::Sub if is(b, 0) => a,
        BinaryOp::Mul if is(b, 1) => a,
        BinaryOp::Mul if is(a, 1) => b,
        BinaryOp::FloorDiv | BinaryOp::Pow if is(b, 1) => a,
        _ => return None,
    };
    keeps_shape(pick).then_some(pick)
}

/// Drops nodes that no output reaches and renumbers the rest (order kept).
fn remove_dead(nodes: Vec<SNode>, outputs: Vec<usize>, original: usize) -> Graph {
    let mut live = vec![false; nodes.len()];
    for &o in &outputs {
        live[o] = true;
    }
    for i in (0..nodes.len()).rev() {
        if live[i] {
            for &input in &nodes[i].inputs {
                live[input] = true;
            }
        }
    }
    let mut new_index = vec![usize::MAX; nodes.len()];
    let mut kept = Vec::with_capacity(nodes.len());
    for (i, mut node) in nodes.into_iter().enumerate() {
        if live[i] {
            for input in node.inputs.iter_mut() {
                *input = new_index[*input];
            }
            new_index[i] = kept.len();
            kept.push(node);
        }
    }
    let removed = original.saturating_sub(kept.len());
    Graph {
        outputs: outputs.into_iter().map(|o| new_index[o]).collect(),
        nodes: kept,
        removed,
    }
}
