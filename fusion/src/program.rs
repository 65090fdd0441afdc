//! `Program`: the kernels of one demand with their buffers and launch
//! bindings, in execution order — what a backend executes. Fused kernels
//! and user kernel launches are its two kinds of work.

use std::sync::Arc;

use lazyfuse_core::{DType, ExprGraph, KernelLaunch, Literal, Op, ReduceOp, Shape};
use petgraph::stable_graph::NodeIndex;
use smallvec::SmallVec;

use crate::ir::FusedKernel;
use crate::simplify::Graph;

/// Index of a buffer in [`Program::buffers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u32);

impl BufferId {
    /// Position in [`Program::buffers`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for BufferId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b{}", self.0)
    }
}

/// Where a buffer comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    /// A materialised leaf of the graph (user data or a memoised result).
    Leaf {
        /// Its node in [`Program::graph`].
        node: usize,
    },
    /// Written by a kernel of this program.
    Temp,
}

/// One buffer a program reads or writes: dense, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDesc {
    /// Element type.
    pub dtype: DType,
    /// Number of elements.
    pub len: usize,
    /// Origin.
    pub kind: BufferKind,
}

/// How one kernel input is bound at launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputBinding {
    /// The buffer read (`None` for iota inputs).
    pub buffer: Option<BufferId>,
    /// Element offset of domain index 0 in the buffer.
    pub offset: usize,
    /// Element stride per domain dimension (0 where broadcast, negative for
    /// reversed slices).
    pub strides: SmallVec<[isize; 4]>,
}

/// One kernel launch.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The kernel (shared by structurally equal launches).
    pub kernel: Arc<FusedKernel>,
    /// The domain's extents.
    pub domain: Shape,
    /// One binding per kernel input.
    pub inputs: Vec<InputBinding>,
    /// Values of the scalar arguments.
    pub args: Vec<Literal>,
    /// The arguments holding constants bound per demand, as `(argument,
    /// node)`: the node is the demand graph's `Fill` whose value the
    /// argument takes ([`Program::rebind`]). Such an argument holds that
    /// constant alone.
    pub bound: Vec<(u32, u32)>,
    /// One buffer per kernel output.
    pub outputs: Vec<BufferId>,
    /// The graph nodes this kernel computes (for `explain`).
    pub nodes: Vec<usize>,
}

impl Launch {
    /// Elements of the domain.
    pub fn domain_len(&self) -> usize {
        self.domain.iter().product()
    }
}

/// One user kernel launch (`Op::Kernel` nodes of one launch): it reads
/// every array argument as a dense buffer and writes new buffers for the
/// arguments it writes. The launch itself (kernel, geometry, scalars) is
/// read from the demand's graph when it runs ([`UserLaunch::launch`]), so
/// a cached program serves every launch of the same shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserLaunch {
    /// One of the launch's output nodes in [`Program::graph`].
    pub node: usize,
    /// One buffer per array argument, in parameter order.
    pub args: Vec<BufferId>,
    /// One slot per written argument (in `KernelLaunch::written` order):
    /// the buffer of its output node, `None` when no array holds it.
    pub outputs: Vec<Option<BufferId>>,
}

/// What a [`ScanLaunch`] computes along its axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// Running sums or products (`cumsum`, `cumprod`; `op` is `Sum` or
    /// `Prod`) in the order of `lazyfuse_core::reference::scan`; the output
    /// has the input's shape and dtype.
    Running,
    /// The index of the first extreme (`argmax`, `argmin`; `op` is `Max` or
    /// `Min`), as `lazyfuse_core::reference::arg_reduce` defines it; the
    /// output drops the axis and is i64. Only in programs of a runtime that
    /// runs them (`Runtime::runs_arg_reductions`).
    Arg,
}

/// One pass along an axis of a dense buffer: a scan, or an arg-reduction
/// ([`ScanKind`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanLaunch {
    /// What it computes.
    pub kind: ScanKind,
    /// `Sum` or `Prod` for a running scan, `Max` or `Min` for an arg-reduction.
    pub op: ReduceOp,
    /// The scanned axis of `shape`.
    pub axis: usize,
    /// The shape of the input (and of a running scan's output).
    pub shape: Shape,
    /// The dtype of the input (and of a running scan's output: its
    /// accumulator dtype).
    pub dtype: DType,
    /// The buffer read.
    pub input: BufferId,
    /// The buffer written.
    pub output: BufferId,
    /// The scan or arg-reduction node in [`Program::graph`].
    pub node: usize,
    /// A launch of [`Program::launches`] (element-wise, over as many
    /// elements as the scan) whose only output is `input` and which nothing
    /// else reads: a runtime that fuses scan producers computes it chunk by
    /// chunk inside the scan instead of materialising `input`
    /// (`Runtime::FUSES_SCAN_PRODUCERS`).
    pub producer: Option<usize>,
}

/// One unit of work, in [`Program::schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// `Program::launches[i]`.
    Fused(usize),
    /// `Program::user_launches[i]`.
    User(usize),
    /// `Program::scans[i]`.
    Scan(usize),
}

/// A demanded result: a buffer viewed with a shape (a reshape is an alias).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputBinding {
    /// The buffer holding the value.
    pub buffer: BufferId,
    /// The demanded node's shape.
    pub shape: Shape,
}

/// The fused kernels of one demand, in execution order.
#[derive(Clone, Debug)]
pub struct Program {
    /// The simplified graph the program was made from.
    pub graph: Graph,
    /// Every buffer read or written.
    pub buffers: Vec<BufferDesc>,
    /// Fused kernel launches, in execution order.
    pub launches: Vec<Launch>,
    /// User kernel launches, in execution order.
    pub user_launches: Vec<UserLaunch>,
    /// Scans, in execution order.
    pub scans: Vec<ScanLaunch>,
    /// Every launch of both kinds in execution order: each reads only
    /// leaves and the outputs of work before it.
    pub schedule: Vec<Work>,
    /// One binding per demanded output, in demand order.
    pub outputs: Vec<OutputBinding>,
    /// Decisions worth explaining (splits, materialised shared values).
    pub notes: Vec<String>,
    /// Per buffer, the work after which its value is dead: the last reader
    /// of a temporary that no demand returns (see [`Program::deaths`]).
    /// `None` for leaves, demanded outputs and unread temporaries.
    pub dies_after: Vec<Option<Work>>,
}

impl Program {
    /// The buffers `work` reads.
    pub fn reads(&self, work: Work) -> impl Iterator<Item = BufferId> + '_ {
        let (fused, user, scan) = self.parts(work);
        let fused = fused
            .into_iter()
            .flat_map(|l| l.inputs.iter().filter_map(|i| i.buffer));
        let user = user.into_iter().flat_map(|u| u.args.iter().copied());
        // A scan may compute its producer itself: it may read its inputs.
        let producer = scan
            .and_then(|s| s.producer)
            .into_iter()
            .flat_map(|p| self.launches[p].inputs.iter().filter_map(|i| i.buffer));
        fused
            .chain(user)
            .chain(scan.map(|s| s.input))
            .chain(producer)
    }

    /// The buffers `work` writes.
    pub fn writes(&self, work: Work) -> impl Iterator<Item = BufferId> + '_ {
        let (fused, user, scan) = self.parts(work);
        let fused = fused.into_iter().flat_map(|l| l.outputs.iter().copied());
        let user = user
            .into_iter()
            .flat_map(|u| u.outputs.iter().flatten().copied());
        fused.chain(user).chain(scan.map(|s| s.output))
    }

    /// The [`Program::dies_after`] of this program's buffers: a backend
    /// may free a temporary after its last reader, or let that reader
    /// write it in place.
    pub fn deaths(&self) -> Vec<Option<Work>> {
        let mut dies_after = vec![None; self.buffers.len()];
        for &work in &self.schedule {
            for b in self.reads(work) {
                dies_after[b.index()] = Some(work);
            }
        }
        for (b, desc) in self.buffers.iter().enumerate() {
            if desc.kind != BufferKind::Temp {
                dies_after[b] = None;
            }
        }
        for out in &self.outputs {
            dies_after[out.buffer.index()] = None;
        }
        dies_after
    }

    /// True when launch `l` is a scan's [`ScanLaunch::producer`].
    pub fn feeds_scan(&self, l: usize) -> bool {
        self.scans.iter().any(|s| s.producer == Some(l))
    }

    fn parts(&self, work: Work) -> (Option<&Launch>, Option<&UserLaunch>, Option<&ScanLaunch>) {
        match work {
            Work::Fused(l) => (Some(&self.launches[l]), None, None),
            Work::User(u) => (None, Some(&self.user_launches[u]), None),
            Work::Scan(s) => (None, None, Some(&self.scans[s])),
        }
    }
}

impl UserLaunch {
    /// The launch, read from `graph` (the demand being run).
    pub fn launch<'g>(&self, program: &Program, graph: &'g ExprGraph) -> Option<&'g KernelLaunch> {
        let source = program.graph.nodes.get(self.node)?.source;
        match &graph.petgraph().node_weight(NodeIndex::new(source))?.op {
            Op::Kernel { launch, .. } => Some(launch),
            _ => None,
        }
    }
}
