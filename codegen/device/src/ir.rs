//! `DeviceProgram`: a structured SIMT program, the one form that both the
//! CUDA C printer and the simulator consume.
//!
//! A program is one or more kernels launched in order (a full reduction is a
//! partial pass and a final pass over the block partials). A kernel is a
//! block of statements run by every thread of a 1-D grid of 1-D blocks;
//! registers ([`Var`]) are per thread, shared arrays per block.
//!
//! Two kinds of arithmetic appear, and are kept apart on purpose:
//! - element arithmetic ([`Expr::Unary`], [`Expr::Binary`], …) on the
//!   user's values, with lazyfuse's value semantics (NumPy's floor division,
//!   NaN-propagating minimum, wrapping integers, …);
//! - index arithmetic ([`Expr::Index`]) on non-negative positions and signed
//!   strides, printed as plain C operators.

use std::fmt;

use lazyfuse_core::{BinaryOp, DType, Literal, UnaryOp};

/// A per-thread register, printed `v3`. Its dtype is `DeviceKernel::vars[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Var(pub u32);

impl Var {
    /// The register's position in [`DeviceKernel::vars`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// A component of a launch-geometry builtin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Dim {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }

    /// The component's C name.
    pub fn name(self) -> &'static str {
        ["x", "y", "z"][self.index()]
    }
}

/// The launch-geometry builtins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// `threadIdx`
    ThreadIdx(Dim),
    /// `blockIdx`
    BlockIdx(Dim),
    /// `blockDim`
    BlockDim(Dim),
    /// `gridDim`
    GridDim(Dim),
}

impl Special {
    /// The CUDA C spelling.
    pub fn cuda_name(self) -> String {
        let (name, dim) = match self {
            Special::ThreadIdx(d) => ("threadIdx", d),
            Special::BlockIdx(d) => ("blockIdx", d),
            Special::BlockDim(d) => ("blockDim", d),
            Special::GridDim(d) => ("gridDim", d),
        };
        format!("{name}.{}", dim.name())
    }
}

/// Index arithmetic on the kernel's index type (`i32` or `i64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexOp {
    /// `a + b`
    Add,
    /// `a * b`
    Mul,
    /// `a / b` (operands are non-negative)
    Div,
    /// `a % b` (operands are non-negative)
    Rem,
    /// `a < b`, a bool
    Lt,
    /// `a == b`, a bool
    Eq,
}

impl IndexOp {
    /// The C operator.
    pub fn symbol(self) -> &'static str {
        match self {
            IndexOp::Add => "+",
            IndexOp::Mul => "*",
            IndexOp::Div => "/",
            IndexOp::Rem => "%",
            IndexOp::Lt => "<",
            IndexOp::Eq => "==",
        }
    }

    /// True for the comparisons, whose result is a bool.
    pub fn is_comparison(self) -> bool {
        matches!(self, IndexOp::Lt | IndexOp::Eq)
    }
}

/// An expression evaluated by one thread.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A register.
    Var(Var),
    /// The value of scalar parameter `i` of the kernel.
    Param(u32),
    /// A launch builtin, as `u32`.
    Special(Special),
    /// A constant.
    Const(Literal),
    /// `param[index]` of buffer parameter `param`.
    Load {
        /// The buffer parameter.
        param: u32,
        /// Element index.
        index: Box<Expr>,
    },
    /// `shared[index]` of shared array `array`.
    LoadShared {
        /// The shared array.
        array: u32,
        /// Element index.
        index: Box<Expr>,
    },
    /// Index arithmetic.
    Index(IndexOp, Box<Expr>, Box<Expr>),
    /// Element arithmetic of one value.
    Unary(UnaryOp, Box<Expr>),
    /// Element arithmetic of two values of one dtype.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `cond ? a : b`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `a * b + c` of one dtype, rounded once for floats (CUDA's `fma`;
    /// integers wrap).
    Fma(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Conversion to a dtype by lazyfuse's cast rules.
    Cast(DType, Box<Expr>),
    /// The value's bits read as a dtype of the same size.
    Bitcast(DType, Box<Expr>),
}

impl Expr {
    /// `a <op> b` in index arithmetic.
    pub fn index(op: IndexOp, a: Expr, b: Expr) -> Expr {
        Expr::Index(op, Box::new(a), Box::new(b))
    }

    /// A register read.
    pub fn var(v: Var) -> Expr {
        Expr::Var(v)
    }

    /// A cast.
    pub fn cast(dtype: DType, value: Expr) -> Expr {
        Expr::Cast(dtype, Box::new(value))
    }
}

/// One statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Declares and initialises a register.
    Let(Var, Expr),
    /// Assigns a declared register.
    Assign(Var, Expr),
    /// `param[index] = value`.
    Store {
        /// The output buffer parameter.
        param: u32,
        /// Element index.
        index: Expr,
        /// The value (of the buffer's dtype).
        value: Expr,
    },
    /// `shared[index] = value`.
    StoreShared {
        /// The shared array.
        array: u32,
        /// Element index.
        index: Expr,
        /// The value.
        value: Expr,
    },
    /// `if (cond) { then } else { otherwise }`.
    If {
        /// A bool.
        cond: Expr,
        /// Run by the threads where `cond` holds.
        then: Vec<Stmt>,
        /// Run by the others.
        otherwise: Vec<Stmt>,
    },
    /// `for (var = start; var < end; var += step) { body }` on the index type.
    For {
        /// The loop register (declared by the loop).
        var: Var,
        /// First value.
        start: Expr,
        /// Exclusive bound.
        end: Expr,
        /// Increment (positive).
        step: Expr,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// Declares `dst[0..V]` and loads them from `param[V*index .. V*index + V]`
    /// in one 16-byte access (the buffer is 16-byte aligned; `V` is 4 for
    /// 4-byte elements and 2 for 8-byte ones).
    LoadVector {
        /// The input buffer parameter.
        param: u32,
        /// Index in units of `V` elements.
        index: Expr,
        /// The registers receiving the `V` elements.
        dst: Vec<Var>,
    },
    /// Stores `values` to `param[V*index .. V*index + V]` in one 16-byte access.
    StoreVector {
        /// The output buffer parameter.
        param: u32,
        /// Index in units of `V` elements.
        index: Expr,
        /// The `V` values.
        values: Vec<Expr>,
    },
    /// `while (cond) { body }`.
    While {
        /// A bool, evaluated before each iteration.
        cond: Expr,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// An atomic read-modify-write of one element; threads of a block that
    /// hit the same element in one step are served one after another.
    Atomic {
        /// The operation.
        op: AtomicOp,
        /// The memory.
        target: AtomicTarget,
        /// Element index.
        index: Expr,
        /// The operand (the new value for `Cas`).
        value: Expr,
        /// `Cas` only: the value expected in memory.
        compare: Option<Expr>,
        /// A declared register receiving the old value, if wanted.
        old: Option<Var>,
    },
    /// `__syncthreads()`: every thread of the block must reach it together.
    Barrier,
    /// `__threadfence*()`: this thread's writes before it are seen before
    /// its writes after it, by the threads of `FenceScope`.
    Fence(FenceScope),
    /// `printf` of one line: each thread writes its pieces, then a newline
    /// (Python's `print` in Numba's kernels; the `printf` module formats it).
    Print(Vec<PrintPiece>),
    /// `dst = <warp op>(mask, value, lane)`: a value exchanged or voted
    /// across the thread's warp (Numba's `shfl_sync` family, `ballot_sync`,
    /// `all_sync`, `any_sync`, `activemask`). The lanes of `mask` must take
    /// part; the simulator runs whole warps in lockstep.
    Warp {
        /// Destination register (declared: the value's dtype for a
        /// shuffle, u32 for a ballot or the active mask, i32 for a vote).
        dst: Var,
        /// The operation.
        op: WarpOp,
        /// The lanes taking part (a u32 of bits).
        mask: Expr,
        /// The value shuffled, or the predicate voted on.
        value: Expr,
        /// The source lane, the distance, or the lane mask (shuffles only).
        lane: Expr,
    },
    /// `dst = __shfl_down_sync(0xffffffff, src, delta)`: lane `l` receives
    /// `src` of lane `l + delta` of its warp, or its own when that is past
    /// the warp. Every lane of the warp must take part.
    ShuffleDown {
        /// Destination register (declared, same dtype as `src`).
        dst: Var,
        /// Source register.
        src: Var,
        /// Lane distance.
        delta: u32,
    },
}

/// The atomic operations of user kernels: one row each, `Variant => "name",
/// dtypes it accepts, what it stores`. The name is the prelude's function
/// (`lf_atomic_<name>`) and the Python front end's (`cuda.atomic.<name>`,
/// Numba's spelling without its trailing underscore).
macro_rules! atomic_ops {
    ($($(#[$doc:meta])* $op:ident => $name:literal, $accepts:expr;)*) => {
        /// A piece of a printed line.
#[derive(Clone, Debug, PartialEq)]
pub enum PrintPiece {
    /// Text as it is.
    Text(String),
    /// A value of the dtype, formatted as the `printf` module says.
    Value(Expr, DType),
}

/// A warp-level operation ([`Stmt::Warp`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpOp {
    /// The value of lane `lane % 32` (`__shfl_sync`).
    ShuffleIndex,
    /// The value of lane `l - lane`, or the own where that is below 0 (`__shfl_up_sync`).
    ShuffleUp,
    /// The value of lane `l + lane`, or the own where that is past the warp (`__shfl_down_sync`).
    ShuffleDown,
    /// The value of lane `l ^ lane` (`__shfl_xor_sync`).
    ShuffleXor,
    /// A bit per lane of `mask` whose predicate holds (`__ballot_sync`).
    Ballot,
    /// 1 when the predicate holds on every lane of `mask` (`__all_sync`).
    All,
    /// 1 when the predicate holds on a lane of `mask` (`__any_sync`).
    Any,
    /// A bit per lane of the warp that is running (`__activemask`).
    ActiveMask,
}

impl WarpOp {
    /// The CUDA function.
    pub fn cuda_function(self) -> &'static str {
        match self {
            WarpOp::ShuffleIndex => "__shfl_sync",
            WarpOp::ShuffleUp => "__shfl_up_sync",
            WarpOp::ShuffleDown => "__shfl_down_sync",
            WarpOp::ShuffleXor => "__shfl_xor_sync",
            WarpOp::Ballot => "__ballot_sync",
            WarpOp::All => "__all_sync",
            WarpOp::Any => "__any_sync",
            WarpOp::ActiveMask => "__activemask",
        }
    }

    /// Whether it moves a value between lanes (else it votes).
    pub fn is_shuffle(self) -> bool {
        matches!(
            self,
            WarpOp::ShuffleIndex | WarpOp::ShuffleUp | WarpOp::ShuffleDown | WarpOp::ShuffleXor
        )
    }
}

/// Who a memory fence orders a thread's writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceScope {
    /// The threads of its block (`__threadfence_block`).
    Block,
    /// Every thread of the device (`__threadfence`).
    Device,
    /// The device and the host (`__threadfence_system`).
    System,
    /// The lanes of its warp, which also wait for one another there
    /// (`__syncwarp`).
    Warp,
}

impl FenceScope {
    /// The CUDA function that fences for this scope.
    pub fn cuda_function(self) -> &'static str {
        match self {
            FenceScope::Block => "__threadfence_block",
            FenceScope::Device => "__threadfence",
            FenceScope::System => "__threadfence_system",
            FenceScope::Warp => "__syncwarp",
        }
    }
}

/// An atomic operation: `old = *p; *p = f(old, v)`, returning `old`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum AtomicOp {
            $($(#[$doc])* $op,)*
        }

        impl AtomicOp {
            /// Every operation, in the table's order.
            pub const ALL: &'static [AtomicOp] = &[$(AtomicOp::$op),*];

            /// The prelude's function: `lf_atomic_add`, …
            pub fn name(self) -> &'static str {
                match self {
                    $(AtomicOp::$op => $name,)*
                }
            }

            /// Whether the operation is defined on elements of `dtype`.
            pub fn accepts(self, dtype: DType) -> bool {
                let accepts: fn(DType) -> bool = match self {
                    $(AtomicOp::$op => $accepts,)*
                };
                accepts(dtype)
            }

            /// The dtypes the operation is defined on.
            pub fn dtypes(self) -> impl Iterator<Item = DType> {
                ATOMIC_DTYPES.into_iter().filter(move |&d| self.accepts(d))
            }

            /// The operation named `name` (see [`AtomicOp::name`]).
            pub fn from_name(name: &str) -> Option<AtomicOp> {
                AtomicOp::ALL.iter().copied().find(|op| op.name() == name)
            }
        }
    };
}

/// The dtypes of atomic memory: 32- and 64-bit integers and floats.
pub const ATOMIC_DTYPES: [DType; 6] = [
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U64,
    DType::F32,
    DType::F64,
];

/// Every dtype of atomic memory (arithmetic, min/max, exchange, CAS).
fn numeric(dtype: DType) -> bool {
    ATOMIC_DTYPES.contains(&dtype)
}

/// The integer dtypes of atomic memory (bitwise operations).
fn integer(dtype: DType) -> bool {
    matches!(dtype, DType::I32 | DType::U32 | DType::I64 | DType::U64)
}

/// The unsigned dtypes of atomic memory (CUDA's wrapping counters).
fn unsigned(dtype: DType) -> bool {
    matches!(dtype, DType::U32 | DType::U64)
}

atomic_ops! {
    /// `*p += v`
    Add => "add", numeric;
    /// `*p -= v`
    Sub => "sub", numeric;
    /// `*p = min(*p, v)`; for floats, `*p` stays when either is NaN (Numba's).
    Min => "min", numeric;
    /// `*p = max(*p, v)`; for floats, `*p` stays when either is NaN (Numba's).
    Max => "max", numeric;
    /// `*p = fmin(*p, v)`: NaN is a missing value (NumPy's `nanmin`).
    NanMin => "nanmin", numeric;
    /// `*p = fmax(*p, v)`: NaN is a missing value (NumPy's `nanmax`).
    NanMax => "nanmax", numeric;
    /// `*p &= v`
    And => "and", integer;
    /// `*p |= v`
    Or => "or", integer;
    /// `*p ^= v`
    Xor => "xor", integer;
    /// `*p = *p >= v ? 0 : *p + 1` (CUDA's `atomicInc`)
    Inc => "inc", unsigned;
    /// `*p = (*p == 0 || *p > v) ? v : *p - 1` (CUDA's `atomicDec`)
    Dec => "dec", unsigned;
    /// `*p = v`
    Exchange => "exchange", numeric;
    /// `if (*p == compare) *p = v` (bit patterns compared)
    Cas => "cas", numeric;
}

/// The memory an atomic operation updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicTarget {
    /// Buffer parameter `i` (global memory).
    Global(u32),
    /// Shared array `i`.
    Shared(u32),
}

/// What a kernel parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A read-only buffer of elements.
    Input(DType),
    /// A buffer the kernel writes.
    Output(DType),
    /// A value passed by value.
    Scalar(DType),
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name printed in CUDA C.
    pub name: String,
    /// Its kind and dtype.
    pub kind: ParamKind,
    /// Where the launcher takes its value from.
    pub source: ArgSource,
}

/// Where the launcher finds a parameter's value, given a fusion `Launch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgSource {
    /// The buffer of kernel input `k`.
    InputBuffer(usize),
    /// The buffer of kernel output `k`.
    OutputBuffer(usize),
    /// The program's scratch buffer of block partials.
    Partials,
    /// Scalar argument `i` of the launch (a constant of the expression).
    Arg(usize),
    /// Element offset of input `k`.
    Offset(usize),
    /// Stride of input `k` along domain dimension `d`.
    Stride(usize, usize),
    /// Extent of domain dimension `d`.
    Extent(usize),
    /// Number of elements of the domain.
    DomainLen,
    /// Number of outputs of a reduction (product of the kept extents).
    KeptLen,
    /// Number of elements reduced into each output.
    ReducedLen,
    /// Number of block partials written by the partial pass.
    PartialCount,
    /// Array argument `k` of a user kernel launch.
    UserArray(usize),
    /// Extent `d` of array argument `k` of a user kernel launch.
    UserExtent(usize, usize),
    /// Scalar argument `i` of a user kernel launch.
    UserScalar(usize),
}

/// A per-block shared-memory array, or a per-thread local array (Numba's
/// `cuda.local.array`), read and written with the same expressions and
/// statements.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedArray {
    /// The name printed in CUDA C.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Number of elements.
    pub len: u32,
    /// One copy per thread (printed without `__shared__`; not shared
    /// memory, never raced on, no atomics).
    pub local: bool,
}

/// How many blocks a kernel is launched with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GridRule {
    /// Enough blocks for one thread per unit of work (capped; the kernels
    /// stride over the rest).
    ThreadPerItem(ArgSource),
    /// One block per unit of work (capped).
    BlockPerItem(ArgSource),
    /// Exactly one block.
    Single,
    /// Given at launch (user kernels).
    User,
}

/// One `__global__` function.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceKernel {
    /// The `extern "C"` name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Shared arrays.
    pub shared: Vec<SharedArray>,
    /// `vars[i]` is the dtype of register `vi`.
    pub vars: Vec<DType>,
    /// The statements every thread runs.
    pub body: Vec<Stmt>,
    /// Threads per block of generated kernels (a multiple of the warp
    /// size, printed as `__launch_bounds__`); 0 for user kernels, whose
    /// launch says.
    pub block: u32,
    /// How the grid is sized.
    pub grid: GridRule,
    /// Loops of `body` whose iterations are independent (checked when the
    /// kernel was traced): a CPU may run their iterations on several cores.
    pub independent: Vec<IndependentLoop>,
}

/// A [`Stmt::For`] whose iterations are independent: no two write one
/// element, none reads what another writes, and none sets a register
/// declared outside the loop except a reduction's accumulator. It is a
/// `par_range` or `par_reduce` of a kernel that runs one thread per loop
/// element, so its iterations may run on different cores at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndependentLoop {
    /// The loop's counter: the `var` of its [`Stmt::For`], whose step is 1.
    pub counter: Var,
    /// For a reduction, its accumulator and the operation combining two
    /// partial results. The accumulator holds the operation's identity when
    /// the loop starts, and the loop body's last statement combines it with
    /// the iteration's value, so partial results over pieces of the range
    /// can be combined in order instead.
    pub reduction: Option<(Var, BinaryOp)>,
}

/// The device form of one fused kernel: kernels launched in order.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceProgram {
    /// The fused kernel's name, e.g. `lf_ew_1a2b…`.
    pub name: String,
    /// The index type (`i32` when every extent and offset fits, else `i64`).
    pub index: DType,
    /// The kernels in launch order.
    pub kernels: Vec<DeviceKernel>,
    /// The dtype of the scratch buffer of block partials, if any.
    pub partials: Option<DType>,
}

/// Threads in a warp.
pub const WARP: u32 = 32;

/// The most blocks a grid-stride launch uses; also the most block partials.
pub const MAX_GRID: usize = 1024;

impl GridRule {
    /// Blocks to launch for `work` units of work and `block` threads per block.
    pub fn blocks(self, work: usize, block: u32) -> usize {
        let blocks = match self {
            GridRule::ThreadPerItem(_) => work.div_ceil(block as usize),
            GridRule::BlockPerItem(_) => work,
            GridRule::Single | GridRule::User => 1,
        };
        blocks.clamp(1, MAX_GRID)
    }
}
