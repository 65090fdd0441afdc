//! Nodes of the lazy expression DAG held by `Array` handles.
//!
//! Invariants:
//! - A node's `dtype` and `shape` are known when it is built and never change;
//!   an operation that cannot be typed or shaped yields an [`Op::Invalid`]
//!   node carrying its error, and every node built on it is invalid too.
//! - Operations are normalised (see [`crate::ops`]): operands of a binary
//!   operation share a dtype; broadcasting between operands of element-wise
//!   operations is implicit (the node's shape is the broadcast shape).
//! - A node's value never changes once computed: results are memoised in
//!   [`Node::residency`], which is what makes repeated demands free.
//!
//! The handles form a reference-counted DAG, so building needs no lock and an
//! array's memory goes when its last handle does. A demand snapshots the part
//! it needs into an [`crate::ExprGraph`] (petgraph), where passes and engines work.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, Weak};

use smallvec::SmallVec;

use crate::dtype::DType;
use crate::element::HostBuffer;
use crate::error::Error;
use crate::kernel::KernelLaunch;
use crate::ops::{ArgExtreme, BinaryOp, ReduceOp, UnaryOp};
use crate::scalar::Literal;
use crate::shape::Shape;

/// A permutation or set of axes.
pub type Axes = SmallVec<[usize; 4]>;

/// What a node computes. Operand order is the order of the node's inputs.
#[derive(Clone, Debug)]
pub enum Op {
    /// Data given by the user (host) or already on a device: always materialised.
    Source,
    /// Every element equals the literal (`zeros`, `full`, scalar operands).
    Fill(Literal),
    /// `start + i * step` along the only axis, computed in f64, cast to the dtype.
    Arange {
        /// First value.
        start: f64,
        /// Increment.
        step: f64,
    },
    /// Parameter `i` of a traced body (a user reduction's combine function).
    Param(usize),
    /// Element-wise operation of one input.
    Unary(UnaryOp),
    /// Element-wise operation of two inputs of the same dtype (broadcast).
    Binary(BinaryOp),
    /// `where(cond, x, y)`: inputs cond (bool), x, y (same dtype), broadcast.
    Select,
    /// Element-wise cast of the input to the node's dtype.
    Cast,
    /// The input's elements in row-major order, with the node's shape.
    Reshape,
    /// Output axis `i` is input axis `perm[i]`.
    Permute(Axes),
    /// The input broadcast to the node's shape.
    BroadcastTo,
    /// Along `axis`, output index `i` reads input index `start + i * step`
    /// (the node's shape gives the count; `step` may be negative).
    Slice {
        /// The sliced axis.
        axis: usize,
        /// First input index read.
        start: usize,
        /// Input indices between consecutive outputs (non-zero).
        step: isize,
    },
    /// A reduction over `axes` (sorted, distinct) of an input already in the
    /// accumulator dtype; the reduced axes are removed from the shape.
    Reduce {
        /// How two partial results combine.
        combine: Combine,
        /// The reduced axes of the input.
        axes: Axes,
    },
    /// Each element's bits read as the node's dtype, of the same size
    /// (NumPy's `a.view(dtype)`): element-wise, exact, no conversion.
    Bitcast,
    /// The running sums or products along `axis` of an input already in
    /// the accumulator dtype (`cumsum`, `cumprod`), in the chunked order of
    /// [`crate::reference::scan`]; the node has the input's shape.
    Scan {
        /// `Sum` or `Prod`.
        combine: ReduceOp,
        /// The scanned axis.
        axis: usize,
    },
    /// The index (i64) of the first largest (`Max`) or smallest (`Min`)
    /// element along `axis`, a NaN counting as the extreme (NumPy's
    /// `argmax`/`argmin`); the axis is removed from the shape and has at
    /// least one element. Built only for an engine that runs it
    /// ([`crate::Engine::runs_arg_reductions`]); others get the same result
    /// from one reduction of packed keys, or two reductions.
    ArgReduce {
        /// `Max` or `Min`.
        extreme: ArgExtreme,
        /// The reduced axis.
        axis: usize,
    },
    /// An operation that could not be built; demanding it reports the error.
    Invalid(Arc<Error>),
    /// Output `output` of a user kernel launch; the node's inputs are all the
    /// launch's array arguments.
    Kernel {
        /// The launch, with the nodes of its outputs.
        launch: Arc<KernelCall>,
        /// Which written array this node is.
        output: usize,
    },
}

/// A user kernel launch in the graph: the launch, and the nodes of its
/// outputs (which all run when one is demanded, once).
pub struct KernelCall {
    launch: KernelLaunch,
    outputs: OnceLock<Vec<Weak<Node>>>,
    running: Mutex<()>,
}

impl KernelCall {
    pub(crate) fn new(launch: KernelLaunch) -> KernelCall {
        KernelCall {
            launch,
            outputs: OnceLock::new(),
            running: Mutex::new(()),
        }
    }

    pub(crate) fn set_outputs(&self, outputs: Vec<Weak<Node>>) {
        let _ = self.outputs.set(outputs);
    }

    /// The output nodes still alive, by output position.
    pub(crate) fn outputs(&self) -> Vec<Option<Arc<Node>>> {
        self.outputs
            .get()
            .map(|o| o.iter().map(Weak::upgrade).collect())
            .unwrap_or_default()
    }

    pub(crate) fn lock_running(&self) -> MutexGuard<'_, ()> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::ops::Deref for KernelCall {
    type Target = KernelLaunch;

    fn deref(&self) -> &KernelLaunch {
        &self.launch
    }
}

impl fmt::Debug for KernelCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.launch.fmt(f)
    }
}

/// The combining operation of a reduction.
#[derive(Clone, Debug)]
pub enum Combine {
    /// A built-in reduction.
    Builtin(ReduceOp),
    /// A user reduction ([`crate::Reducer`]).
    Custom(Arc<CustomCombine>),
}

/// A user reduction specialised to one accumulator dtype.
#[derive(Debug)]
pub struct CustomCombine {
    /// The reducer's name.
    pub name: String,
    /// A 0-d element-wise expression over `Op::Param(0)` and `Op::Param(1)`,
    /// both of the accumulator dtype, giving the accumulator dtype.
    pub body: Arc<Node>,
    /// The identity, in the accumulator dtype.
    pub identity: Literal,
}

impl Op {
    /// A short name for listings: `"add"`, `"sum"`, `"source"`.
    pub fn name(&self) -> String {
        match self {
            Op::Source => "source".into(),
            Op::Fill(literal) => format!("fill {literal}"),
            Op::Arange { start, step } => format!("arange {start:?} step {step:?}"),
            Op::Param(i) => format!("param {i}"),
            Op::Unary(op) => op.name().into(),
            Op::Binary(op) => op.name().into(),
            Op::Select => "where".into(),
            Op::Cast => "astype".into(),
            Op::Bitcast => "view".into(),
            Op::Reshape => "reshape".into(),
            Op::Permute(perm) => format!("permute {perm:?}"),
            Op::BroadcastTo => "broadcast_to".into(),
            Op::Slice { axis, start, step } => {
                format!("slice axis {axis} start {start} step {step}")
            }
            Op::Reduce { combine, axes } => {
                let name = match combine {
                    Combine::Builtin(op) => op.name().to_string(),
                    Combine::Custom(c) => format!("reduce '{}'", c.name),
                };
                format!("{name} axes {axes:?}")
            }
            Op::Scan { combine, axis } => format!("cum{} axis {axis}", combine.name()),
            Op::ArgReduce { extreme, axis } => format!("arg{} axis {axis}", extreme.name()),
            Op::Invalid(_) => "invalid".into(),
            Op::Kernel { launch, output } => format!(
                "kernel '{}' grid {:?} block {:?} output {output}",
                launch.kernel.name(),
                launch.grid,
                launch.block
            ),
        }
    }

    /// True for operations that move no data (views).
    pub fn is_view(&self) -> bool {
        matches!(
            self,
            Op::Reshape | Op::Permute(_) | Op::BroadcastTo | Op::Slice { .. }
        )
    }

    /// Units of work one element of this operation costs when it is
    /// computed (again): a transcendental function or `power` 8, another
    /// element-wise operation 1, anything else 0. Fusion's partition
    /// weighs bodies with them; a demand, whether a value is worth keeping
    /// for a later one.
    pub fn units(&self) -> u32 {
        match self {
            Op::Unary(u) if u.is_float_only() && !u.is_rounding() && !u.is_predicate() => 8,
            Op::Binary(crate::ops::BinaryOp::Pow) => 8,
            op if op.is_elementwise() => 1,
            _ => 0,
        }
    }

    /// True for element-wise operations (including casts).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Op::Unary(_) | Op::Binary(_) | Op::Select | Op::Cast | Op::Bitcast
        )
    }
}

/// Memory owned by a device backend (CUDA or the simulator).
pub trait DeviceBuffer: Send + Sync + fmt::Debug + std::panic::RefUnwindSafe {
    /// Size in bytes.
    fn bytes(&self) -> usize;
    /// For the owning backend to downcast.
    fn as_any(&self) -> &dyn Any;
}

/// Where a materialised value lives: host, device or both.
#[derive(Clone, Debug, Default)]
pub struct Residency {
    /// The host copy.
    pub host: Option<Arc<HostBuffer>>,
    /// The device copy.
    pub device: Option<Arc<dyn DeviceBuffer>>,
}

impl Residency {
    /// A value held in host memory.
    pub fn host(buffer: Arc<HostBuffer>) -> Residency {
        Residency {
            host: Some(buffer),
            device: None,
        }
    }

    /// A value held in device memory only.
    pub fn device(buffer: Arc<dyn DeviceBuffer>) -> Residency {
        Residency {
            host: None,
            device: Some(buffer),
        }
    }

    /// True when neither copy exists.
    pub fn is_empty(&self) -> bool {
        self.host.is_none() && self.device.is_none()
    }
}

/// One node of the expression DAG.
pub struct Node {
    pub(crate) op: Op,
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
    pub(crate) inputs: SmallVec<[Arc<Node>; 2]>,
    /// Whether a user kernel launch is among this node and its ancestors:
    /// a demand without one skips looking for launches to run.
    reads_kernel: bool,
    residency: RwLock<Residency>,
    /// Whether `residency` holds a copy: read without taking the lock (a
    /// demand asks it of every node it walks).
    materialized: AtomicBool,
    computing: Mutex<()>,
    /// How many operand slots of live nodes read this one: a demand that
    /// finds more readers than its own graph has knows that an expression
    /// outside it (not demanded yet) will need the value again.
    readers: AtomicU32,
}

impl Node {
    pub(crate) fn new(
        op: Op,
        dtype: DType,
        shape: Shape,
        inputs: SmallVec<[Arc<Node>; 2]>,
    ) -> Arc<Node> {
        let reads_kernel = matches!(op, Op::Kernel { .. }) || inputs.iter().any(|i| i.reads_kernel);
        for input in &inputs {
            input.readers.fetch_add(1, Ordering::Relaxed);
        }
        Arc::new(Node {
            op,
            dtype,
            shape,
            inputs,
            reads_kernel,
            residency: RwLock::new(Residency::default()),
            materialized: AtomicBool::new(false),
            computing: Mutex::new(()),
            readers: AtomicU32::new(0),
        })
    }

    /// How many operand slots of live nodes read this node.
    pub(crate) fn readers(&self) -> u32 {
        self.readers.load(Ordering::Relaxed)
    }

    pub(crate) fn source(buffer: HostBuffer, shape: Shape) -> Arc<Node> {
        Node::source_shared(Arc::new(buffer), shape)
    }

    /// A source holding `buffer` itself, shared with its other owners (a
    /// pinned buffer: [`crate::PinnedBuf::array`]).
    pub(crate) fn source_shared(buffer: Arc<HostBuffer>, shape: Shape) -> Arc<Node> {
        let node = Node::new(Op::Source, buffer.dtype(), shape, SmallVec::new());
        node.set_residency(Residency::host(buffer));
        node
    }

    pub(crate) fn invalid(error: Error) -> Arc<Node> {
        Node::new(
            Op::Invalid(Arc::new(error)),
            DType::F32,
            Shape::new(),
            SmallVec::new(),
        )
    }

    /// The operation.
    pub fn op(&self) -> &Op {
        &self.op
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The operands.
    pub fn inputs(&self) -> &[Arc<Node>] {
        &self.inputs
    }

    /// Whether a user kernel launch is among this node and its ancestors.
    pub(crate) fn reads_kernel(&self) -> bool {
        self.reads_kernel
    }

    /// The error of an invalid node.
    pub(crate) fn error(&self) -> Option<&Arc<Error>> {
        match &self.op {
            Op::Invalid(e) => Some(e),
            _ => None,
        }
    }

    /// The memoised value, if any.
    pub fn residency(&self) -> Residency {
        self.residency
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// True when a value is memoised.
    pub fn is_materialized(&self) -> bool {
        self.materialized.load(Ordering::Acquire)
    }

    pub(crate) fn set_residency(&self, residency: Residency) {
        self.update_residency(|r| *r = residency);
    }

    /// Records a device copy of this node's (already computed) value, so
    /// later plans read it instead of uploading again.
    pub fn attach_device(&self, device: Arc<dyn DeviceBuffer>) {
        self.update_residency(|r| r.device = Some(device));
    }

    pub(crate) fn update_residency(&self, update: impl FnOnce(&mut Residency)) {
        let mut residency = self
            .residency
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        update(&mut residency);
        // Under the lock, so the flag and the value change together.
        self.materialized
            .store(!residency.is_empty(), Ordering::Release);
    }

    /// Held while the node is being computed, so that two threads demanding it
    /// at once compute it once.
    pub(crate) fn lock_computing(&self) -> MutexGuard<'_, ()> {
        self.computing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn address(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

impl Drop for Node {
    /// Unlinks the inputs iteratively: dropping the last handle of a
    /// 100,000-node chain must not recurse 100,000 deep.
    fn drop(&mut self) {
        // Inline room for small expressions: dropping one allocates nothing.
        let mut pending: SmallVec<[Arc<Node>; 8]> = SmallVec::new();
        unlink(&mut self.inputs, &mut pending);
        while let Some(mut node) = pending.pop() {
            // The last handle: its inputs are unlinked in place (moving the
            // node out of its allocation first cost a copy of it each), and
            // the node, without inputs, is dropped below.
            if let Some(last) = Arc::get_mut(&mut node) {
                unlink(&mut last.inputs, &mut pending);
            }
        }
    }
}

/// Moves `inputs` to `pending`, each no longer read by the node dropped.
fn unlink(inputs: &mut SmallVec<[Arc<Node>; 2]>, pending: &mut SmallVec<[Arc<Node>; 8]>) {
    for input in inputs.drain(..) {
        input.readers.fetch_sub(1, Ordering::Relaxed);
        pending.push(input);
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}{}",
            self.op.name(),
            self.dtype,
            crate::shape::format_shape(&self.shape)
        )
    }
}
