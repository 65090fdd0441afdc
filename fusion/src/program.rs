//! `Program`: the kernels of one demand with their buffers and launch
//! bindings, in execution order — what a backend executes.

use std::sync::Arc;

use lazyfuse_core::{DType, Literal, Shape};
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
    /// Kernel launches; a launch only reads leaves and earlier launches' outputs.
    pub launches: Vec<Launch>,
    /// One binding per demanded output, in demand order.
    pub outputs: Vec<OutputBinding>,
    /// Decisions worth explaining (splits, materialised shared values).
    pub notes: Vec<String>,
}
