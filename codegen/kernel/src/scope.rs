//! [`KernelScope`]: what `Kernel::build` hands the user's closure.
//! Parameters, geometry and statements (stores, branches, loops, barriers,
//! atomics) go through it; values are [`Val`]s. Helper Rust functions over
//! `Val`s are the device functions: define them once, call them from any
//! kernel (they are inlined).

use lazyfuse_core::{DType, Error, Literal};

use super::memory::{ArrayParam, Indices, Local, LocalArrayRef, SharedArrayRef};
use super::val::Val;
use lazyfuse_device::ir::{
    ArgSource, AtomicOp, AtomicTarget, Dim, Expr, FenceScope, IndependentLoop, Param, ParamKind,
    PrintPiece, SharedArray, Special, Stmt, Var, WarpOp,
};

macro_rules! atomic_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$doc])*
        pub fn $name(&mut self, array: &ArrayParam, index: impl Indices, value: impl Into<Val>) -> Val {
            self.atomic_update(AtomicOp::$op, array, index, value)
        }
    )*};
}

/// A piece of a line printed by [`KernelScope::print`].
#[derive(Clone, Debug)]
pub enum Printed {
    /// Text as it is.
    Text(String),
    /// A value, written by its dtype.
    Value(Val),
}

/// Where the first error of a kernel's construction is kept.
#[derive(Default)]
pub(crate) struct Problems {
    pub(crate) first: Option<Error>,
}

/// What a kernel's body is written with (see the module documentation).
pub struct KernelScope {
    pub(crate) name: String,
    pub(crate) params: Vec<Param>,
    pub(crate) arrays: Vec<ArrayParam>,
    pub(crate) scalars: Vec<DType>,
    pub(crate) shared: Vec<SharedArray>,
    pub(crate) vars: Vec<DType>,
    blocks: Vec<Vec<Stmt>>,
    pub(crate) problems: Problems,
    /// How `par_range` spreads its iterations.
    pub(crate) parallel: Parallel,
    /// How many `par_range`/`par_reduce` bodies enclose the statement being
    /// recorded.
    pub(crate) par_depth: u32,
    /// Whether the body called `par_range` or `par_reduce`.
    pub(crate) used_par: bool,
    /// The outermost `par_range`/`par_reduce` loops that run in order here.
    pub(crate) independent: Vec<IndependentLoop>,
    /// The `par_depth` at which each local was declared.
    local_depth: Vec<(Var, u32)>,
}

/// How a kernel runs the iterations of [`KernelScope::par_range`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parallel {
    /// One after another in the calling thread (plain kernels, and gufunc
    /// bodies traced one thread per loop element).
    Sequential,
    /// Spread over the threads of the block, which all run the rest of the
    /// body together (a gufunc traced one block per loop element).
    Block,
}

/// Threads per block of a gufunc that runs one block per loop element.
pub(crate) const PAR_BLOCK: u32 = 256;

impl KernelScope {
    pub(crate) fn new(name: &str) -> KernelScope {
        KernelScope {
            name: name.to_string(),
            params: Vec::new(),
            arrays: Vec::new(),
            scalars: Vec::new(),
            shared: Vec::new(),
            vars: Vec::new(),
            blocks: vec![Vec::new()],
            problems: Problems::default(),
            parallel: Parallel::Sequential,
            par_depth: 0,
            used_par: false,
            independent: Vec::new(),
            local_depth: Vec::new(),
        }
    }

    pub(crate) fn problem(&mut self, message: String) {
        if self.problems.first.is_none() {
            self.problems.first = Some(Error::InvalidArgument {
                op: format!("kernel '{}'", self.name),
                message,
            });
        }
    }

    pub(crate) fn push(&mut self, stmt: Stmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    pub(crate) fn nested(&mut self, body: impl FnOnce(&mut KernelScope)) -> Vec<Stmt> {
        self.nested_with(body).0
    }

    /// Records `body`'s statements as a block of their own.
    pub(crate) fn nested_with<R>(
        &mut self,
        body: impl FnOnce(&mut KernelScope) -> R,
    ) -> (Vec<Stmt>, R) {
        self.blocks.push(Vec::new());
        let result = body(self);
        let stmts = if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        };
        (stmts, result)
    }

    /// A new register of `dtype`.
    pub(crate) fn new_var(&mut self, dtype: DType) -> Var {
        self.vars.push(dtype);
        Var((self.vars.len() - 1) as u32)
    }

    pub(crate) fn finish_body(&mut self) -> Vec<Stmt> {
        std::mem::take(&mut self.blocks)
            .into_iter()
            .next()
            .unwrap_or_default()
    }

    fn add_array(&mut self, name: &str, dtype: DType, ndim: usize, written: bool) -> ArrayParam {
        let position = self.arrays.len();
        let kind = if written {
            ParamKind::Output(dtype)
        } else {
            ParamKind::Input(dtype)
        };
        self.params.push(Param {
            name: name.to_string(),
            kind,
            source: ArgSource::UserArray(position),
        });
        let param = (self.params.len() - 1) as u32;
        let extents = (0..ndim)
            .map(|d| {
                self.params.push(Param {
                    name: format!("{name}_shape{d}"),
                    kind: ParamKind::Scalar(DType::I64),
                    source: ArgSource::UserExtent(position, d),
                });
                Val::new(Expr::Param((self.params.len() - 1) as u32), DType::I64)
            })
            .collect();
        let array = ArrayParam {
            param,
            position,
            dtype,
            ndim,
            written,
            extents,
            base: None,
        };
        self.arrays.push(array.clone());
        array
    }

    /// An array parameter the kernel only reads.
    pub fn array(&mut self, name: &str, dtype: DType, ndim: usize) -> ArrayParam {
        self.add_array(name, dtype, ndim, false)
    }

    /// An array parameter the kernel writes (it may read it too): the
    /// launch returns its new version.
    pub fn array_mut(&mut self, name: &str, dtype: DType, ndim: usize) -> ArrayParam {
        self.add_array(name, dtype, ndim, true)
    }

    /// A scalar parameter.
    pub fn scalar(&mut self, name: &str, dtype: DType) -> Val {
        let position = self.scalars.len();
        self.scalars.push(dtype);
        self.params.push(Param {
            name: name.to_string(),
            kind: ParamKind::Scalar(dtype),
            source: ArgSource::UserScalar(position),
        });
        Val::new(Expr::Param((self.params.len() - 1) as u32), dtype)
    }

    pub(crate) fn special(special: Special) -> Val {
        Val::new(Expr::cast(DType::I64, Expr::Special(special)), DType::I64)
    }

    /// A register holding `value` (so the printed kernel computes it once).
    pub fn let_(&mut self, value: impl Into<Val>) -> Val {
        self.local(value).get()
    }

    /// `threadIdx` along `dim`.
    pub fn thread_idx(&mut self, dim: Dim) -> Val {
        self.let_(Self::special(Special::ThreadIdx(dim)))
    }
    /// `blockIdx` along `dim`.
    pub fn block_idx(&mut self, dim: Dim) -> Val {
        self.let_(Self::special(Special::BlockIdx(dim)))
    }
    /// `blockDim` along `dim`.
    pub fn block_dim(&mut self, dim: Dim) -> Val {
        self.let_(Self::special(Special::BlockDim(dim)))
    }
    /// `gridDim` along `dim`.
    pub fn grid_dim(&mut self, dim: Dim) -> Val {
        self.let_(Self::special(Special::GridDim(dim)))
    }

    /// Numba's `cuda.grid(n)`: this thread's absolute position along the
    /// first `n` (1 to 3) dimensions.
    pub fn grid(&mut self, n: usize) -> Vec<Val> {
        [Dim::X, Dim::Y, Dim::Z][..n.clamp(1, 3)]
            .iter()
            .map(|&d| {
                let position = Self::special(Special::BlockIdx(d))
                    * Self::special(Special::BlockDim(d))
                    + Self::special(Special::ThreadIdx(d));
                self.let_(position)
            })
            .collect()
    }

    /// Numba's `cuda.gridsize(n)`: threads in the grid along the first `n`
    /// dimensions.
    pub fn gridsize(&mut self, n: usize) -> Vec<Val> {
        [Dim::X, Dim::Y, Dim::Z][..n.clamp(1, 3)]
            .iter()
            .map(|&d| {
                let size = Self::special(Special::BlockDim(d)) * Self::special(Special::GridDim(d));
                self.let_(size)
            })
            .collect()
    }

    /// A block-shared array of `shape` (Numba's `cuda.shared.array`).
    pub fn shared_array(&mut self, dtype: DType, shape: &[usize]) -> SharedArrayRef {
        let len: usize = shape.iter().product();
        let array = self.shared.len() as u32;
        self.shared.push(SharedArray {
            name: format!("shared{array}"),
            dtype,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            local: false,
        });
        SharedArrayRef {
            array,
            dtype,
            shape: shape.to_vec(),
        }
    }

    /// A per-thread array of `shape` (Numba's `cuda.local.array`): each
    /// thread has its own, uninitialised until written. Read it with
    /// [`LocalArrayRef::at`], write it with [`KernelScope::store_local`].
    pub fn local_array(&mut self, dtype: DType, shape: &[usize]) -> LocalArrayRef {
        let len: usize = shape.iter().product();
        let array = self.shared.len() as u32;
        self.shared.push(SharedArray {
            name: format!("local{array}"),
            dtype,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            local: true,
        });
        LocalArrayRef(SharedArrayRef {
            array,
            dtype,
            shape: shape.to_vec(),
        })
    }

    /// `local[index] = value` (converted to the array's dtype).
    pub fn store_local(
        &mut self,
        local: &LocalArrayRef,
        index: impl Indices,
        value: impl Into<Val>,
    ) {
        let array = &local.0;
        let value = value.into().cast(array.dtype);
        self.push(Stmt::StoreShared {
            array: array.array,
            index: array.linear(&index.into_indices()).expr,
            value: value.expr,
        });
    }

    /// A mutable local variable starting at `init`.
    pub fn local(&mut self, init: impl Into<Val>) -> Local {
        let init = init.into();
        self.vars.push(init.dtype);
        let var = Var((self.vars.len() - 1) as u32);
        self.push(Stmt::Let(var, init.expr));
        self.local_depth.push((var, self.par_depth));
        Local {
            var,
            dtype: self.vars[var.index()],
        }
    }

    /// `local = value` (converted to the local's dtype).
    pub fn set(&mut self, local: &Local, value: impl Into<Val>) {
        let declared = self
            .local_depth
            .iter()
            .find(|(var, _)| *var == local.var)
            .map_or(0, |&(_, depth)| depth);
        if self.parallel == Parallel::Block && declared < self.par_depth {
            self.problem(
                "sets a local declared outside par_range inside its body: iterations run on \
                 different threads and must be independent (use par_reduce for a reduction)"
                    .to_string(),
            );
        }
        let value = value.into().cast(local.dtype);
        self.push(Stmt::Assign(local.var, value.expr));
    }

    /// `array[index] = value` (converted to the array's dtype).
    pub fn store(&mut self, array: &ArrayParam, index: impl Indices, value: impl Into<Val>) {
        let index = index.into_indices();
        if !array.written {
            self.problem(format!(
                "stores to array parameter {} which is declared read-only (declare it with array_mut)",
                array.position
            ));
        }
        if index.len() != array.ndim {
            self.problem(format!(
                "indexes a {}-d array with {} indices",
                array.ndim,
                index.len()
            ));
        }
        let value = value.into().cast(array.dtype);
        self.store_once(Stmt::Store {
            param: array.param,
            index: array.linear(&index).expr,
            value: value.expr,
        });
    }

    /// `shared[index] = value`.
    pub fn store_shared(
        &mut self,
        shared: &SharedArrayRef,
        index: impl Indices,
        value: impl Into<Val>,
    ) {
        let value = value.into().cast(shared.dtype);
        self.push(Stmt::StoreShared {
            array: shared.array,
            index: shared.linear(&index.into_indices()).expr,
            value: value.expr,
        });
    }

    /// `if (cond) { then }`.
    pub fn if_(&mut self, cond: impl Into<Val>, then: impl FnOnce(&mut KernelScope)) {
        let cond = cond.into().cast(DType::Bool);
        let then = self.nested(then);
        self.push(Stmt::If {
            cond: cond.expr,
            then,
            otherwise: Vec::new(),
        });
    }

    /// `if (cond) { then } else { otherwise }`.
    pub fn if_else(
        &mut self,
        cond: impl Into<Val>,
        then: impl FnOnce(&mut KernelScope),
        otherwise: impl FnOnce(&mut KernelScope),
    ) {
        let cond = cond.into().cast(DType::Bool);
        let then = self.nested(then);
        let otherwise = self.nested(otherwise);
        self.push(Stmt::If {
            cond: cond.expr,
            then,
            otherwise,
        });
    }

    /// `for (i = start; i < end; i += step) { body(i) }` over `i64`.
    pub fn for_range(
        &mut self,
        start: impl Into<Val>,
        end: impl Into<Val>,
        step: impl Into<Val>,
        body: impl FnOnce(&mut KernelScope, Val),
    ) {
        let (stmt, ()) = self.counted_loop((start.into(), end.into(), step.into()), body);
        self.push(stmt);
    }

    /// The `for` statement of [`for_range`](Self::for_range), not yet
    /// pushed, and what its body returned.
    pub(crate) fn counted_loop<R>(
        &mut self,
        (start, end, step): (Val, Val, Val),
        body: impl FnOnce(&mut KernelScope, Val) -> R,
    ) -> (Stmt, R) {
        self.vars.push(DType::I64);
        let var = Var((self.vars.len() - 1) as u32);
        let counter = Val::new(Expr::Var(var), DType::I64);
        let (body, result) = self.nested_with(|k| body(k, counter));
        let stmt = Stmt::For {
            var,
            start: start.cast(DType::I64).expr,
            end: end.cast(DType::I64).expr,
            step: step.cast(DType::I64).expr,
            body,
        };
        (stmt, result)
    }

    /// `while (cond) { body }`; `cond` is evaluated before every iteration
    /// (it reads locals the body changes).
    pub fn while_(&mut self, cond: impl Into<Val>, body: impl FnOnce(&mut KernelScope)) {
        let cond = cond.into().cast(DType::Bool);
        let body = self.nested(body);
        self.push(Stmt::While {
            cond: cond.expr,
            body,
        });
    }

    /// `__syncthreads()`: waits until every thread of the block gets here.
    pub fn syncthreads(&mut self) {
        self.push(Stmt::Barrier);
    }

    /// `__threadfence*()`: the thread's writes before it are seen before
    /// its writes after it by the threads of `scope` (Numba's
    /// `cuda.threadfence`, `threadfence_block`, `threadfence_system`).
    pub fn threadfence(&mut self, scope: FenceScope) {
        self.push(Stmt::Fence(scope));
    }

    /// A warp operation ([`WarpOp`]) over the lanes of `mask` (a u32 of
    /// bits): a shuffle of `value` (from the source lane, distance or lane
    /// mask `lane`; its dtype is `value`'s), a ballot or the active mask
    /// (u32), or a vote on `value` as a predicate (i32 0 or 1). The lanes of
    /// `mask` must all take part, as on the GPU.
    pub fn warp(
        &mut self,
        op: WarpOp,
        mask: impl Into<Val>,
        value: impl Into<Val>,
        lane: impl Into<Val>,
    ) -> Val {
        let value = value.into();
        let dtype = match op {
            WarpOp::Ballot | WarpOp::ActiveMask => DType::U32,
            WarpOp::All | WarpOp::Any => DType::I32,
            _ => value.dtype,
        };
        let dst = self.zeroed_register(dtype);
        self.push(Stmt::Warp {
            dst,
            op,
            mask: mask.into().cast(DType::U32).expr,
            value: value.expr,
            lane: lane.into().cast(DType::I32).expr,
        });
        Val::new(Expr::Var(dst), dtype)
    }

    /// Prints a line from each thread: the pieces, then a newline
    /// (`printf` on a GPU; the simulator writes to standard output).
    /// Values are written as `lazyfuse_device::printf` says.
    pub fn print(&mut self, pieces: impl IntoIterator<Item = Printed>) {
        let pieces = pieces
            .into_iter()
            .map(|piece| match piece {
                Printed::Text(text) => PrintPiece::Text(text),
                Printed::Value(v) => PrintPiece::Value(v.expr, v.dtype),
            })
            .collect();
        self.push(Stmt::Print(pieces));
    }

    /// A new register of `dtype`, declared zero (what a statement that
    /// sets it, an atomic's old value or a warp operation's result, needs).
    fn zeroed_register(&mut self, dtype: DType) -> Var {
        self.vars.push(dtype);
        let register = Var((self.vars.len() - 1) as u32);
        self.push(Stmt::Let(
            register,
            Expr::Const(Literal::cast_from(lazyfuse_core::Wide::Int(0), dtype)),
        ));
        register
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        target: AtomicTarget,
        (dtype, index): (DType, Val),
        compare: Option<Val>,
        value: Val,
    ) -> Val {
        if !op.accepts(dtype) {
            let accepted: Vec<String> = op.dtypes().map(|d| d.to_string()).collect();
            self.problem(format!(
                "atomic {} on {dtype} (expected {})",
                op.name(),
                accepted.join(", ")
            ));
        }
        let old = self.zeroed_register(dtype);
        self.push(Stmt::Atomic {
            op,
            target,
            index: index.expr,
            value: value.cast(dtype).expr,
            compare: compare.map(|c| c.cast(dtype).expr),
            old: Some(old),
        });
        Val::new(Expr::Var(old), dtype)
    }

    fn array_target(
        &mut self,
        array: &ArrayParam,
        index: impl Indices,
    ) -> (AtomicTarget, (DType, Val)) {
        let index = index.into_indices();
        if !array.written {
            self.problem(format!(
                "an atomic update of array parameter {} which is declared read-only",
                array.position
            ));
        }
        (
            AtomicTarget::Global(array.param),
            (array.dtype, array.linear(&index)),
        )
    }

    atomic_methods! {
        /// `atomicAdd(&array[index], value)`; returns the old value.
        atomic_add => Add,
        /// `atomicMin(&array[index], value)`; returns the old value.
        atomic_min => Min,
        /// `atomicMax(&array[index], value)`; returns the old value.
        atomic_max => Max,
        /// `atomicExch(&array[index], value)`; returns the old value.
        atomic_exchange => Exchange,
        /// `atomicSub(&array[index], value)`; returns the old value.
        atomic_sub => Sub,
    }

    /// Any atomic operation but compare-and-swap on `array[index]` (see
    /// [`AtomicOp`]); returns the old value.
    pub fn atomic_update(
        &mut self,
        op: AtomicOp,
        array: &ArrayParam,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = self.array_target(array, index);
        self.atomic_without_compare(op, target, at, value.into())
    }

    /// Any atomic operation but compare-and-swap on `shared[index]`;
    /// returns the old value.
    pub fn atomic_update_shared(
        &mut self,
        op: AtomicOp,
        shared: &SharedArrayRef,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = shared_target(shared, index);
        self.atomic_without_compare(op, target, at, value.into())
    }

    /// `atomicCAS(&shared[index], compare, value)`; returns the old value.
    pub fn atomic_cas_shared(
        &mut self,
        shared: &SharedArrayRef,
        index: impl Indices,
        compare: impl Into<Val>,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = shared_target(shared, index);
        self.atomic(
            AtomicOp::Cas,
            target,
            at,
            Some(compare.into()),
            value.into(),
        )
    }

    fn atomic_without_compare(
        &mut self,
        op: AtomicOp,
        target: AtomicTarget,
        at: (DType, Val),
        value: Val,
    ) -> Val {
        if op == AtomicOp::Cas {
            self.problem("a compare-and-swap without the value to compare (use atomic_cas)".into());
        }
        self.atomic(op, target, at, None, value)
    }

    /// `atomicCAS(&array[index], compare, value)`; returns the old value.
    pub fn atomic_cas(
        &mut self,
        array: &ArrayParam,
        index: impl Indices,
        compare: impl Into<Val>,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = self.array_target(array, index);
        self.atomic(
            AtomicOp::Cas,
            target,
            at,
            Some(compare.into()),
            value.into(),
        )
    }

    /// `atomicAdd(&shared[index], value)`; returns the old value.
    pub fn atomic_add_shared(
        &mut self,
        shared: &SharedArrayRef,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        self.atomic_update_shared(AtomicOp::Add, shared, index, value)
    }
}

/// The memory and element of `shared[index]` for an atomic operation.
fn shared_target(shared: &SharedArrayRef, index: impl Indices) -> (AtomicTarget, (DType, Val)) {
    let at = (shared.dtype, shared.linear(&index.into_indices()));
    (AtomicTarget::Shared(shared.array), at)
}
