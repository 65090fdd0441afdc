//! A cache of compiled programs keyed by the structure of a demand's graph.
//!
//! Demanding the same expression over new arrays of the same shapes and
//! dtypes (the common case in loops) skips simplification, partitioning and
//! emission. The key holds every node's operation, dtype, shape and
//! operands, and which nodes are leaves, and for user kernel outputs which
//! launch they come from. It holds the values of constants the passes read
//! (they fold and rewrite by value); of constants bound per demand
//! (`crate::bound`: a random array's key, a float operand) only which
//! constants each equals, and a hit reads their values from the demand
//! ([`Program::rebind`]). The cached program keeps no leaf data, so it
//! holds no array alive: engines read each leaf from the current graph
//! through [`Program::leaf`].

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lazyfuse_core::{DType, ExprGraph, Literal, Op, Result, Shape};
use petgraph::stable_graph::NodeIndex;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::partition::FusionOptions;
use crate::program::{BufferId, BufferKind, Program};
use crate::simplify::{op_key, OpKey};

/// Most programs kept; the cache is emptied when it is full.
/// Programs kept before the cache starts over (a loop over ever-new
/// constants keeps at most this many).
pub const CAPACITY: usize = 512;

/// What the program of a user kernel output depends on: which output of
/// which launch of the graph it is (the first of the launch's nodes, in
/// graph order), and how many outputs the launch writes. The launch itself
/// (kernel, geometry, scalars) is read from each demand's graph.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct KernelKey {
    output: u32,
    launch: u32,
    written: u32,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct NodeKey {
    op: Option<OpKey>,
    kernel: Option<KernelKey>,
    dtype: DType,
    shape: Shape,
    inputs: SmallVec<[u32; 2]>,
    leaf: bool,
    /// For a constant, the first constant of the graph equal to it (the
    /// simplifier makes equal constants one value); `u32::MAX` otherwise.
    equals: u32,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct GraphKey {
    fusion: bool,
    nodes: Vec<NodeKey>,
    outputs: Vec<u32>,
}

/// The key of `graph`, or `None` when it cannot be cached: a user
/// reduction is known by its address, which a later reducer may reuse.
fn key(graph: &ExprGraph, options: &FusionOptions) -> Option<GraphKey> {
    let bound = crate::bound::bound_constants(graph);
    let mut constants: FxHashMap<Literal, u32> = FxHashMap::default();
    let mut launches: SmallVec<[(usize, u32); 2]> = SmallVec::new();
    let nodes: Vec<NodeKey> = graph
        .topological_order()
        .into_iter()
        .map(|i| {
            let node = graph.node(i);
            let leaf = node.data.is_some();
            let kernel = match &node.op {
                Op::Kernel { launch, output } if !leaf => {
                    let id = Arc::as_ptr(launch) as usize;
                    let first = match launches.iter().find(|(l, _)| *l == id) {
                        Some(&(_, first)) => first,
                        None => {
                            launches.push((id, i.index() as u32));
                            i.index() as u32
                        }
                    };
                    Some(KernelKey {
                        output: *output as u32,
                        launch: first,
                        written: launch.written.len() as u32,
                    })
                }
                _ => None,
            };
            let (op, equals) = match &node.op {
                Op::Fill(literal) if !leaf => {
                    let equals = *constants.entry(*literal).or_insert(i.index() as u32);
                    let op = (!bound[i.index()]).then_some(OpKey::Fill(*literal));
                    (op, equals)
                }
                _ if leaf => (None, u32::MAX),
                op => (op_key(op), u32::MAX),
            };
            NodeKey {
                op,
                kernel,
                dtype: node.dtype,
                shape: node.shape.clone(),
                inputs: node.inputs.iter().map(|n| n.index() as u32).collect(),
                leaf,
                equals,
            }
        })
        .collect();
    if nodes
        .iter()
        .any(|n| matches!(n.op, Some(OpKey::CustomReduce(..))))
    {
        return None;
    }
    Some(GraphKey {
        fusion: options.enabled,
        nodes,
        outputs: graph.outputs().iter().map(|o| o.index() as u32).collect(),
    })
}

/// Compiled programs by graph structure.
#[derive(Default)]
pub struct ProgramCache {
    programs: Mutex<FxHashMap<GraphKey, Arc<Program>>>,
    /// The program of the last graph looked up (by [`ExprGraph::id`]) and
    /// its options: a demand into the caller's memory that the engine
    /// declines evaluates that same graph next, and its key (a walk of
    /// every node) is not made twice.
    last: Mutex<Option<(u64, FusionOptions, Arc<Program>)>>,
}

impl std::fmt::Debug for ProgramCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.programs.lock().map_or(0, |p| p.len());
        write!(f, "ProgramCache({n} programs)")
    }
}

impl ProgramCache {
    /// How many programs are kept.
    pub fn len(&self) -> usize {
        lock(&self.programs).len()
    }

    /// True when no program is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The program for `graph`, compiled on a miss.
    pub fn get(&self, graph: &ExprGraph, options: &FusionOptions) -> Result<Arc<Program>> {
        let remembered = lock(&self.last)
            .as_ref()
            .filter(|(id, last_options, _)| *id == graph.id() && last_options == options)
            .map(|(_, _, program)| Arc::clone(program));
        if let Some(program) = remembered {
            return Ok(program);
        }
        let program = self.look_up(graph, options)?;
        *lock(&self.last) = Some((graph.id(), options.clone(), Arc::clone(&program)));
        Ok(program)
    }

    /// [`ProgramCache::get`] by the graph's key.
    fn look_up(&self, graph: &ExprGraph, options: &FusionOptions) -> Result<Arc<Program>> {
        let Some(key) = key(graph, options) else {
            return crate::compile(graph, options).map(Arc::new);
        };
        let found = lock(&self.programs).get(&key).cloned();
        if let Some(found) = found {
            return found.rebind(graph);
        }
        let mut program = crate::compile(graph, options)?;
        for node in &mut program.graph.nodes {
            // Leaf data belongs to this demand; later demands bring their own.
            if node.data.is_some() {
                node.data = Some(Default::default());
                node.origin = None;
            }
        }
        let program = Arc::new(program);
        let mut programs = lock(&self.programs);
        if programs.len() >= CAPACITY {
            programs.clear();
        }
        programs.insert(key, Arc::clone(&program));
        Ok(program)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Program {
    /// The node of `graph` (the demand being run) holding leaf buffer `buffer`.
    pub fn leaf<'g>(
        &self,
        buffer: BufferId,
        graph: &'g ExprGraph,
    ) -> Option<&'g lazyfuse_core::GraphNode> {
        match self.buffers.get(buffer.index())?.kind {
            BufferKind::Leaf { node } => {
                let source = self.graph.nodes.get(node)?.source;
                let found = graph.petgraph().node_weight(NodeIndex::new(source))?;
                found.data.as_ref().map(|_| found)
            }
            BufferKind::Temp => None,
        }
    }

    /// This program for the demand of `graph`, which has its structure (the
    /// cache's key): itself when its bound constants have the values of
    /// `graph`'s, otherwise a copy whose launch arguments hold them.
    pub fn rebind(self: &Arc<Program>, graph: &ExprGraph) -> Result<Arc<Program>> {
        let value = |source: usize| -> Result<lazyfuse_core::Literal> {
            let node = graph.petgraph().node_weight(NodeIndex::new(source));
            match node.map(|n| (&n.op, &n.data)) {
                Some((Op::Fill(literal), None)) => Ok(*literal),
                _ => Err(lazyfuse_core::Error::internal(
                    "fusion",
                    format!("a bound constant (node {source}) is not a constant of the demand"),
                )),
            }
        };
        let mut changed = false;
        for launch in &self.launches {
            for &(arg, source) in &launch.bound {
                changed |= launch.args[arg as usize] != value(source as usize)?;
            }
        }
        if !changed {
            return Ok(Arc::clone(self));
        }
        let mut program = Program::clone(self);
        for launch in &mut program.launches {
            for &(arg, source) in &launch.bound {
                launch.args[arg as usize] = value(source as usize)?;
            }
        }
        for node in &mut program.graph.nodes {
            if let (Some(source), Op::Fill(literal)) = (node.bound, &mut node.op) {
                *literal = value(source)?;
            }
        }
        Ok(Arc::new(program))
    }
}
