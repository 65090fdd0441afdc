//! Building `FusedKernel`s from a partition: each kernel root's fused cone
//! becomes an SSA body; views become per-input strides; constants become
//! arguments.
//!
//! A value is reached through an *index map* (`index_map`); a buffer read
//! through a map gets strides over the domain. The same node reached through the same map
//! is emitted once (shared subexpressions inside a kernel are computed once).
//! The walk is iterative, so a 100,000-node chain emits without recursion.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use lazyfuse_core::shape::contiguous_strides;
use lazyfuse_core::{
    ArgExtreme, BinaryOp, Combine, DType, Error, Literal, Node, Op, Result, UnaryOp,
};
use smallvec::SmallVec;

use crate::index_map::{self, IndexMap};
use crate::ir::{
    Body, CombineIr, FusedKernel, InputKind, Inst, KernelInput, Layout, ReductionIr, ValueId,
};
use crate::partition::{Partition, Placement};
use crate::program::{BufferId, InputBinding, Launch};
use crate::simplify::Graph;

/// What makes two inputs the same: buffer, offset and strides.
type InputKey = (Option<BufferId>, usize, SmallVec<[isize; 4]>);

/// Where each materialised node's value lives.
pub(crate) struct Buffers<'a> {
    pub(crate) of_node: &'a [Option<BufferId>],
}

/// Builds the body, inputs and arguments of one kernel.
pub(crate) struct Emitter<'a> {
    graph: &'a Graph,
    partition: &'a Partition,
    buffers: Buffers<'a>,
    domain: SmallVec<[usize; 4]>,
    body: Body,
    inputs: Vec<KernelInput>,
    bindings: Vec<InputBinding>,
    input_index: HashMap<InputKey, u32>,
    args: Vec<DType>,
    arg_values: Vec<Literal>,
    arg_index: HashMap<Literal, u32>,
    /// Arguments of constants bound per demand, `(argument, node)`.
    bound: Vec<(u32, u32)>,
    memo: HashMap<(usize, IndexMap), ValueId>,
    nodes: Vec<usize>,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(
        graph: &'a Graph,
        partition: &'a Partition,
        buffers: Buffers<'a>,
        domain: &[usize],
    ) -> Self {
        Emitter {
            graph,
            partition,
            buffers,
            domain: SmallVec::from_slice(domain),
            body: Body::default(),
            inputs: Vec::new(),
            bindings: Vec::new(),
            input_index: HashMap::default(),
            args: Vec::new(),
            arg_values: Vec::new(),
            arg_index: HashMap::default(),
            bound: Vec::new(),
            memo: HashMap::default(),
            nodes: Vec::new(),
        }
    }

    fn identity_map(&self) -> IndexMap {
        index_map::identity(self.domain.len())
    }

    fn arg(&mut self, literal: Literal) -> u32 {
        if let Some(&i) = self.arg_index.get(&literal) {
            return i;
        }
        let i = self.args.len() as u32;
        self.args.push(literal.dtype());
        self.arg_values.push(literal);
        self.arg_index.insert(literal, i);
        i
    }

    /// The argument holding constant `node`: its own when the constant is
    /// bound per demand (a later demand gives it another value), otherwise
    /// one shared by every equal constant.
    fn constant_arg(&mut self, node: usize) -> Result<u32> {
        let snode = &self.graph.nodes[node];
        let literal = snode
            .constant()
            .ok_or_else(|| Error::internal("fusion", format!("%{node} is not a constant")))?;
        let Some(source) = snode.bound else {
            return Ok(self.arg(literal));
        };
        let source = source as u32;
        if let Some(&(arg, _)) = self.bound.iter().find(|(_, s)| *s == source) {
            return Ok(arg);
        }
        let arg = self.args.len() as u32;
        self.args.push(literal.dtype());
        self.arg_values.push(literal);
        self.bound.push((arg, source));
        Ok(arg)
    }

    fn input(
        &mut self,
        buffer: Option<BufferId>,
        dtype: DType,
        len: usize,
        (offset, strides): (usize, SmallVec<[isize; 4]>),
    ) -> u32 {
        let key = (buffer, offset, strides.clone());
        if let Some(&i) = self.input_index.get(&key) {
            return i;
        }
        let domain_len: usize = self.domain.iter().product();
        // One element wherever the domain index is: a scalar (at its offset).
        let fixed = strides.iter().all(|&s| s == 0);
        let layout = if buffer.is_some() && (len <= 1 || fixed) {
            Layout::Scalar
        } else if offset == 0
            && len == domain_len
            && strides
                .iter()
                .zip(contiguous_strides(&self.domain))
                .all(|(&s, d)| s == d as isize)
        {
            Layout::Contiguous
        } else {
            Layout::Strided
        };
        let kind = if buffer.is_some() {
            InputKind::Buffer
        } else {
            InputKind::Iota
        };
        let i = self.inputs.len() as u32;
        self.inputs.push(KernelInput {
            dtype,
            layout,
            kind,
        });
        self.bindings.push(InputBinding {
            buffer,
            offset,
            strides,
        });
        self.input_index.insert(key, i);
        i
    }

    /// Offset and strides over the domain of a dense array of `shape` read through `map`.
    /// `start + i * step` for the element index `i` (read at `strides`: an
    /// offset and a stride per domain dimension),
    /// in `dtype`. Computed in f64 and cast, as NumPy defines it; in i64
    /// when every value is an integer of `dtype` below 2^53 in magnitude,
    /// which gives the same values without a float round trip.
    fn arange(
        &mut self,
        start: f64,
        step: f64,
        count: usize,
        dtype: DType,
        strides: (usize, SmallVec<[isize; 4]>),
    ) -> ValueId {
        let input = self.input(None, DType::I64, count, strides);
        let index = self.body.push(Inst::Iota(input), DType::I64);
        let (index, start, step, computed) = match integer_arange(start, step, count, dtype) {
            Some((start, step)) => (index, Literal::of(start), Literal::of(step), DType::I64),
            None => {
                let index = self.body.push(Inst::Cast(index), DType::F64);
                (index, Literal::of(start), Literal::of(step), DType::F64)
            }
        };
        let step = Inst::Arg(self.arg(step));
        let step = self.body.push(step, computed);
        let start = Inst::Arg(self.arg(start));
        let start = self.body.push(start, computed);
        let scaled = self
            .body
            .push(Inst::Binary(BinaryOp::Mul, index, step), computed);
        let v = self
            .body
            .push(Inst::Binary(BinaryOp::Add, scaled, start), computed);
        if dtype == computed {
            v
        } else {
            self.body.push(Inst::Cast(v), dtype)
        }
    }

    fn strides(&self, shape: &[usize], map: &IndexMap) -> Result<(usize, SmallVec<[isize; 4]>)> {
        let dense = contiguous_strides(shape);
        let mut strides: SmallVec<[isize; 4]> = SmallVec::from_elem(0, self.domain.len());
        let mut offset = 0isize;
        for (axis, term) in map.iter().enumerate() {
            let step = dense[axis] as isize;
            offset += term.offset * step;
            if let Some(d) = term.axis {
                if shape[axis] > 1 {
                    strides[d as usize] += term.scale * step;
                }
            }
        }
        let offset = usize::try_from(offset).map_err(|_| {
            Error::internal("fusion", "a view reads before the start of its buffer")
        })?;
        Ok((offset, strides))
    }

    /// The buffer holding a materialised node's value, with the shape to read it as.
    fn buffer(&self, node: usize) -> Option<BufferId> {
        let target = match self.partition.placement[node] {
            Placement::Alias(t) => t,
            _ => node,
        };
        self.buffers.of_node[target]
    }

    /// True when `node` is read from a buffer; `computed` (a kernel's own
    /// root, or `None` for a reduction's input) is computed even if it has one.
    fn is_materialized(&self, node: usize, computed: Option<usize>) -> bool {
        Some(node) != computed
            && matches!(
                self.partition.placement[node],
                Placement::Buffer | Placement::Alias(_)
            )
    }

    /// The value of `root` at the domain index mapped by `map`. With
    /// `compute_root`, the root is computed here even though it is
    /// materialised (it is this kernel's output); otherwise a materialised
    /// root is loaded.
    fn value(&mut self, root: usize, map: IndexMap, compute_root: bool) -> Result<ValueId> {
        let computed = compute_root.then_some(root);
        let mut stack: Vec<(usize, IndexMap, bool)> = vec![(root, map.clone(), false)];
        while let Some((node_id, map, expanded)) = stack.pop() {
            if self.memo.contains_key(&(node_id, map.clone())) {
                continue;
            }
            let node = &self.graph.nodes[node_id];
            if self.is_materialized(node_id, computed) || node.is_leaf() {
                let buffer = self.buffer(node_id).ok_or_else(|| {
                    Error::internal(
                        "fusion",
                        format!("%{node_id} is materialised but has no buffer"),
                    )
                })?;
                let strides = self.strides(&node.shape, &map)?;
                let input = self.input(Some(buffer), node.dtype, node.len(), strides);
                let v = self.body.push(Inst::Load(input), node.dtype);
                self.memo.insert((node_id, map), v);
                continue;
            }
            match &node.op {
                Op::Fill(_) => {
                    let arg = self.constant_arg(node_id)?;
                    let v = self.body.push(Inst::Arg(arg), node.dtype);
                    self.memo.insert((node_id, map), v);
                    continue;
                }
                Op::Arange { start, step } => {
                    let strides = self.strides(&node.shape, &map)?;
                    let v = self.arange(*start, *step, node.len(), node.dtype, strides);
                    self.memo.insert((node_id, map), v);
                    self.nodes.push(node_id);
                    continue;
                }
                _ => {}
            }
            let operands = self.operands(node_id, &map)?;
            if !expanded {
                stack.push((node_id, map, true));
                stack.extend(operands.into_iter().rev().map(|(i, m)| (i, m, false)));
                continue;
            }
            let operands: Vec<ValueId> = operands
                .into_iter()
                .map(|key| self.memo.get(&key).copied())
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    Error::internal("fusion", "an operand was not emitted before its user")
                })?;
            let v = match (&node.op, operands.as_slice()) {
                (Op::Unary(op), [a]) => self.body.push(Inst::Unary(*op, *a), node.dtype),
                (Op::Binary(op), [a, b]) => self.body.push(Inst::Binary(*op, *a, *b), node.dtype),
                (Op::Select, [c, a, b]) => self.body.push(Inst::Select(*c, *a, *b), node.dtype),
                (Op::Cast, [a]) => self.body.push(Inst::Cast(*a), node.dtype),
                (Op::Bitcast, [a]) => self.body.push(Inst::Bitcast(*a), node.dtype),
                (Op::Permute(_) | Op::BroadcastTo | Op::Slice { .. } | Op::Reshape, [a]) => *a,
                (
                    Op::Reduce {
                        combine: Combine::Builtin(op),
                        ..
                    },
                    [_, ..],
                ) => {
                    self.nodes.push(node_id);
                    self.combine_lanes(op.combiner(), &operands, node.dtype)
                }
                (Op::ArgReduce { extreme, .. }, [first, rest @ ..]) => {
                    self.nodes.push(node_id);
                    let dtype = self.graph.nodes[node.inputs[0]].dtype;
                    self.first_extreme(*extreme, *first, rest, dtype)
                }
                (op, _) => {
                    return Err(Error::internal(
                        "fusion",
                        format!("cannot fuse a '{}' node (%{node_id})", op.name()),
                    ))
                }
            };
            if node.op.is_elementwise() {
                self.nodes.push(node_id);
            }
            self.memo.insert((node_id, map), v);
        }
        self.memo
            .get(&(root, map))
            .copied()
            .ok_or_else(|| Error::internal("fusion", "the root was not emitted"))
    }

    /// The operands a node's value at `map` reads, with their maps.
    fn operands(&self, node_id: usize, map: &IndexMap) -> Result<Vec<(usize, IndexMap)>> {
        index_map::operands(self.graph, &self.partition.unrolled, node_id, map)
    }

    /// The index (i64) of the first of `first, rest..` (of `dtype`) that is
    /// the `extreme`, a NaN counting as the extreme (NumPy's `argmin`,
    /// `argmax`): a running best and its index, replaced by a value that
    /// beats it or by the first NaN.
    fn first_extreme(
        &mut self,
        extreme: ArgExtreme,
        first: ValueId,
        rest: &[ValueId],
        dtype: DType,
    ) -> ValueId {
        let beats = extreme.beyond();
        let (mut best, mut index) = (first, {
            let zero = self.arg(Literal::of(0i64));
            self.body.push(Inst::Arg(zero), DType::I64)
        });
        for (k, &value) in rest.iter().enumerate() {
            let mut take = self
                .body
                .push(Inst::Binary(beats, value, best), DType::Bool);
            if dtype.is_float() {
                let value_nan = self
                    .body
                    .push(Inst::Unary(UnaryOp::IsNan, value), DType::Bool);
                let best_nan = self
                    .body
                    .push(Inst::Unary(UnaryOp::IsNan, best), DType::Bool);
                let best_number = self
                    .body
                    .push(Inst::Unary(UnaryOp::LogicalNot, best_nan), DType::Bool);
                let first_nan = self.body.push(
                    Inst::Binary(BinaryOp::LogicalAnd, value_nan, best_number),
                    DType::Bool,
                );
                take = self.body.push(
                    Inst::Binary(BinaryOp::LogicalOr, take, first_nan),
                    DType::Bool,
                );
            }
            best = self.body.push(Inst::Select(take, value, best), dtype);
            let at = self.arg(Literal::of(k as i64 + 1));
            let at = self.body.push(Inst::Arg(at), DType::I64);
            index = self.body.push(Inst::Select(take, at, index), DType::I64);
        }
        index
    }

    /// `values` combined by `op` as a balanced tree (pairwise, as the
    /// reductions of floats are summed).
    fn combine_lanes(&mut self, op: BinaryOp, values: &[ValueId], dtype: DType) -> ValueId {
        let mut level = values.to_vec();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                next.push(match *pair {
                    [a, b] => self.body.push(Inst::Binary(op, a, b), dtype),
                    _ => pair[0],
                });
            }
            level = next;
        }
        level[0]
    }

    /// An element-wise kernel computing `roots`, all of the domain's shape.
    pub(crate) fn elementwise(mut self, roots: &[usize], outputs: Vec<BufferId>) -> Result<Launch> {
        let mut values = Vec::with_capacity(roots.len());
        for &root in roots {
            let map = self.identity_map();
            values.push(self.value(root, map, true)?);
        }
        let kernel = FusedKernel {
            rank: self.domain.len(),
            inputs: self.inputs,
            args: self.args,
            body: self.body,
            outputs: values,
            reduction: None,
            stages: Vec::new(),
            per_row: false,
        };
        finish(
            kernel,
            self.domain,
            self.bindings,
            (self.arg_values, self.bound),
            outputs,
            self.nodes,
        )
    }

    /// A reduction kernel for reduce node `reduce`, whose epilogue ends at `tail`.
    pub(crate) fn reduction(
        mut self,
        reduce: usize,
        tail: usize,
        output: BufferId,
    ) -> Result<Launch> {
        let node = &self.graph.nodes[reduce];
        let Op::Reduce { combine, axes } = &node.op else {
            return Err(Error::internal(
                "fusion",
                "a reduction kernel without a reduce node",
            ));
        };
        let map = self.identity_map();
        let input = node.inputs[0];
        let value = self.value(input, map, false)?;
        let acc = node.dtype;
        let (combine, identity) = match combine {
            Combine::Builtin(op) => (CombineIr::Builtin(*op), op.identity(acc)),
            Combine::Custom(custom) => (
                CombineIr::Custom {
                    name: custom.name.clone(),
                    body: self.combine_body(&custom.body)?,
                },
                custom.identity,
            ),
        };
        let identity_arg = self.arg(identity);
        let epilogue = self.epilogue(reduce, tail)?;
        let out = ValueId((epilogue.len() - 1) as u32);
        self.nodes.push(reduce);
        let kernel = FusedKernel {
            rank: self.domain.len(),
            inputs: self.inputs,
            args: self.args,
            body: self.body,
            outputs: vec![out],
            reduction: Some(ReductionIr {
                combine,
                identity_arg,
                acc,
                axes: axes.clone(),
                value,
                epilogue,
            }),
            stages: Vec::new(),
            per_row: false,
        };
        finish(
            kernel,
            self.domain,
            self.bindings,
            (self.arg_values, self.bound),
            vec![output],
            self.nodes,
        )
    }

    /// The chain of element-wise nodes from `reduce` to `tail` over `Inst::Reduced`.
    fn epilogue(&mut self, reduce: usize, tail: usize) -> Result<Body> {
        let mut body = Body::default();
        let mut current = reduce;
        let mut value = body.push(Inst::Reduced, self.graph.nodes[reduce].dtype);
        while current != tail {
            let next = self.partition.users[current]
                .first()
                .copied()
                .ok_or_else(|| Error::internal("fusion", "a broken epilogue chain"))?;
            let node = &self.graph.nodes[next];
            let mut operands = Vec::with_capacity(node.inputs.len());
            for &i in &node.inputs {
                operands.push(if i == current {
                    value
                } else {
                    let arg = self.constant_arg(i)?;
                    body.push(Inst::Arg(arg), self.graph.nodes[i].dtype)
                });
            }
            value = match (&node.op, operands.as_slice()) {
                (Op::Unary(op), [a]) => body.push(Inst::Unary(*op, *a), node.dtype),
                (Op::Binary(op), [a, b]) => body.push(Inst::Binary(*op, *a, *b), node.dtype),
                (Op::Select, [c, a, b]) => body.push(Inst::Select(*c, *a, *b), node.dtype),
                (Op::Cast, [a]) => body.push(Inst::Cast(*a), node.dtype),
                (Op::Bitcast, [a]) => body.push(Inst::Bitcast(*a), node.dtype),
                _ => {
                    return Err(Error::internal(
                        "fusion",
                        "a non-element-wise epilogue node",
                    ))
                }
            };
            self.nodes.push(next);
            current = next;
        }
        Ok(body)
    }

    /// A user reduction's combine function as a body over `Param(0)`, `Param(1)`.
    fn combine_body(&mut self, root: &Arc<Node>) -> Result<Body> {
        let mut body = Body::default();
        let mut values: HashMap<usize, ValueId> = HashMap::default();
        let mut stack: Vec<(&Arc<Node>, bool)> = vec![(root, false)];
        while let Some((node, expanded)) = stack.pop() {
            let key = Arc::as_ptr(node) as usize;
            if values.contains_key(&key) {
                continue;
            }
            if !expanded && !node.inputs().is_empty() {
                stack.push((node, true));
                stack.extend(node.inputs().iter().rev().map(|i| (i, false)));
                continue;
            }
            let operands: Vec<ValueId> = node
                .inputs()
                .iter()
                .map(|i| values.get(&(Arc::as_ptr(i) as usize)).copied())
                .collect::<Option<_>>()
                .ok_or_else(|| Error::internal("fusion", "combine operand out of order"))?;
            let inst = match (node.op(), operands.as_slice()) {
                (Op::Param(i), []) => Inst::Param(*i as u32),
                (Op::Fill(literal), []) => Inst::Arg(self.arg(*literal)),
                (Op::Unary(op), [a]) => Inst::Unary(*op, *a),
                (Op::Binary(op), [a, b]) => Inst::Binary(*op, *a, *b),
                (Op::Select, [c, a, b]) => Inst::Select(*c, *a, *b),
                (Op::Cast, [a]) => Inst::Cast(*a),
                (Op::Bitcast, [a]) => Inst::Bitcast(*a),
                (op, _) => {
                    return Err(Error::internal(
                        "fusion",
                        format!("'{}' inside a reduction's combine function", op.name()),
                    ))
                }
            };
            let v = body.push(inst, node.dtype());
            values.insert(key, v);
        }
        Ok(body)
    }
}

fn finish(
    kernel: FusedKernel,
    domain: SmallVec<[usize; 4]>,
    inputs: Vec<InputBinding>,
    (args, bound): (Vec<Literal>, Vec<(u32, u32)>),
    outputs: Vec<BufferId>,
    mut nodes: Vec<usize>,
) -> Result<Launch> {
    kernel.verify()?;
    // A node read through several index maps (an unrolled reduction's
    // lanes) is listed once.
    let mut listed = std::collections::HashSet::new();
    nodes.retain(|&n| listed.insert(n));
    Ok(Launch {
        kernel: Arc::new(kernel),
        domain,
        inputs,
        args,
        bound,
        outputs,
        nodes,
    })
}

/// The start and step of an arange of `count` values of the integer `dtype`
/// as i64, when they and every value are integers of `dtype` no larger
/// than 2^53 in magnitude (so f64 holds each exactly); `None` otherwise.
fn integer_arange(start: f64, step: f64, count: usize, dtype: DType) -> Option<(i64, i64)> {
    const EXACT: f64 = (1u64 << 53) as f64;
    let (min, max) = dtype.int_range()?;
    let last = start + step * count.saturating_sub(1) as f64;
    let integral = |v: f64| v.fract() == 0.0 && v.abs() <= EXACT;
    let fits = |v: f64| (min as f64) <= v && v <= (max as f64);
    let exact = integral(start) && integral(step) && integral(last) && (count as f64) <= EXACT;
    (exact && fits(start) && fits(last)).then_some((start as i64, step as i64))
}
