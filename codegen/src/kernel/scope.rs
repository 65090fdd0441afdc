//! Writing a kernel: [`KernelScope`] is what `Kernel::build` hands the
//! user's closure, [`Val`] a value computed by one thread. Values combine
//! with Rust operators and methods; statements (stores, branches, loops,
//! barriers, atomics) go through the scope. Helper Rust functions over
//! `Val`s are the device functions: define them once, call them from any
//! kernel (they are inlined).

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use lazyfuse_core::{promote, BinaryOp, DType, Error, Literal, UnaryOp};

use crate::device::ir::{
    ArgSource, AtomicOp, AtomicTarget, Dim, Expr, Param, ParamKind, SharedArray, Special, Stmt, Var,
};

/// A value computed by one thread: an expression and its dtype.
#[derive(Clone, Debug)]
pub struct Val {
    pub(crate) expr: Expr,
    pub(crate) dtype: DType,
}

impl Val {
    fn new(expr: Expr, dtype: DType) -> Val {
        Val { expr, dtype }
    }

    /// A constant of `dtype`.
    pub fn constant(value: f64, dtype: DType) -> Val {
        let literal = Literal::cast_from(lazyfuse_core::Wide::Float(value), dtype);
        Val::new(Expr::Const(literal), dtype)
    }

    /// The value's dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// This value converted to `dtype` (lazyfuse's cast rules).
    pub fn cast(&self, dtype: DType) -> Val {
        if dtype == self.dtype {
            return self.clone();
        }
        Val::new(Expr::cast(dtype, self.expr.clone()), dtype)
    }

    fn unary(&self, op: UnaryOp) -> Val {
        let x = if op.is_float_only() && !self.dtype.is_float() {
            self.cast(DType::F64)
        } else {
            self.clone()
        };
        let dtype = if op.is_predicate() || op == UnaryOp::LogicalNot {
            DType::Bool
        } else {
            x.dtype
        };
        Val::new(Expr::Unary(op, Box::new(x.expr)), dtype)
    }

    fn binary(&self, op: BinaryOp, other: &Val) -> Val {
        let common = promote(self.dtype, other.dtype);
        let common = if op == BinaryOp::Div && !common.is_float() {
            DType::F64
        } else {
            common
        };
        let (a, b) = (self.cast(common), other.cast(common));
        let dtype = if op.is_comparison() || op.is_logical() {
            DType::Bool
        } else {
            common
        };
        Val::new(Expr::Binary(op, Box::new(a.expr), Box::new(b.expr)), dtype)
    }

    /// `sqrt(x)`
    pub fn sqrt(&self) -> Val {
        self.unary(UnaryOp::Sqrt)
    }
    /// `exp(x)`
    pub fn exp(&self) -> Val {
        self.unary(UnaryOp::Exp)
    }
    /// `log(x)`
    pub fn log(&self) -> Val {
        self.unary(UnaryOp::Log)
    }
    /// `sin(x)`
    pub fn sin(&self) -> Val {
        self.unary(UnaryOp::Sin)
    }
    /// `cos(x)`
    pub fn cos(&self) -> Val {
        self.unary(UnaryOp::Cos)
    }
    /// `tanh(x)`
    pub fn tanh(&self) -> Val {
        self.unary(UnaryOp::Tanh)
    }
    /// `|x|`
    pub fn abs(&self) -> Val {
        self.unary(UnaryOp::Abs)
    }
    /// `floor(x)`
    pub fn floor(&self) -> Val {
        self.unary(UnaryOp::Floor)
    }
    /// `x * x`
    pub fn square(&self) -> Val {
        self.unary(UnaryOp::Square)
    }
    /// Any element operation of one value.
    pub fn apply(&self, op: UnaryOp) -> Val {
        self.unary(op)
    }
    /// `x ** y`
    pub fn pow(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Pow, &y.into())
    }
    /// The smaller (NaN if either is NaN).
    pub fn min(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Minimum, &y.into())
    }
    /// The larger (NaN if either is NaN).
    pub fn max(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Maximum, &y.into())
    }
    /// NumPy's `//`.
    pub fn floor_div(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::FloorDiv, &y.into())
    }
    /// `x < y`
    pub fn lt(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Lt, &y.into())
    }
    /// `x <= y`
    pub fn le(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Le, &y.into())
    }
    /// `x > y`
    pub fn gt(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Gt, &y.into())
    }
    /// `x >= y`
    pub fn ge(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Ge, &y.into())
    }
    /// `x == y`
    pub fn eq(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Eq, &y.into())
    }
    /// `x != y`
    pub fn ne(&self, y: impl Into<Val>) -> Val {
        self.binary(BinaryOp::Ne, &y.into())
    }
    /// Both true.
    pub fn and(&self, y: impl Into<Val>) -> Val {
        self.cast(DType::Bool)
            .binary(BinaryOp::LogicalAnd, &y.into().cast(DType::Bool))
    }
    /// Either true.
    pub fn or(&self, y: impl Into<Val>) -> Val {
        self.cast(DType::Bool)
            .binary(BinaryOp::LogicalOr, &y.into().cast(DType::Bool))
    }
    /// Not true.
    pub fn not(&self) -> Val {
        self.cast(DType::Bool).unary(UnaryOp::LogicalNot)
    }
    /// `cond ? self : other`.
    pub fn select(cond: &Val, a: impl Into<Val>, b: impl Into<Val>) -> Val {
        let (a, b) = (a.into(), b.into());
        let common = promote(a.dtype, b.dtype);
        let (a, b) = (a.cast(common), b.cast(common));
        Val::new(
            Expr::Select(
                Box::new(cond.cast(DType::Bool).expr),
                Box::new(a.expr),
                Box::new(b.expr),
            ),
            common,
        )
    }
}

/// Rust numbers are weak constants: they take the other operand's dtype
/// (an `f64` next to an integer makes the operation float).
fn weak(value: f64, like: DType) -> Val {
    let dtype = if like.is_float() || value.fract() == 0.0 {
        like
    } else {
        DType::F64
    };
    Val::constant(value, dtype)
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::new(Expr::Const(Literal::of(v)), DType::I64)
    }
}
impl From<i32> for Val {
    fn from(v: i32) -> Val {
        Val::new(Expr::Const(Literal::of(v)), DType::I32)
    }
}
impl From<f64> for Val {
    fn from(v: f64) -> Val {
        Val::new(Expr::Const(Literal::of(v)), DType::F64)
    }
}
impl From<f32> for Val {
    fn from(v: f32) -> Val {
        Val::new(Expr::Const(Literal::of(v)), DType::F32)
    }
}
impl From<&Val> for Val {
    fn from(v: &Val) -> Val {
        v.clone()
    }
}

macro_rules! operators {
    ($($trait:ident $method:ident $op:ident),*) => {$(
        impl $trait<Val> for Val {
            type Output = Val;
            fn $method(self, rhs: Val) -> Val { self.binary(BinaryOp::$op, &rhs) }
        }
        impl $trait<&Val> for Val {
            type Output = Val;
            fn $method(self, rhs: &Val) -> Val { self.binary(BinaryOp::$op, rhs) }
        }
        impl $trait<Val> for &Val {
            type Output = Val;
            fn $method(self, rhs: Val) -> Val { self.binary(BinaryOp::$op, &rhs) }
        }
        impl $trait<&Val> for &Val {
            type Output = Val;
            fn $method(self, rhs: &Val) -> Val { self.binary(BinaryOp::$op, rhs) }
        }
        impl $trait<f64> for Val {
            type Output = Val;
            fn $method(self, rhs: f64) -> Val { let c = weak(rhs, self.dtype); self.binary(BinaryOp::$op, &c) }
        }
        impl $trait<f64> for &Val {
            type Output = Val;
            fn $method(self, rhs: f64) -> Val { let c = weak(rhs, self.dtype); self.binary(BinaryOp::$op, &c) }
        }
        impl $trait<Val> for f64 {
            type Output = Val;
            fn $method(self, rhs: Val) -> Val { weak(self, rhs.dtype).binary(BinaryOp::$op, &rhs) }
        }
        impl $trait<&Val> for f64 {
            type Output = Val;
            fn $method(self, rhs: &Val) -> Val { weak(self, rhs.dtype).binary(BinaryOp::$op, rhs) }
        }
    )*};
}
operators!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem);

impl Neg for Val {
    type Output = Val;
    fn neg(self) -> Val {
        self.unary(UnaryOp::Neg)
    }
}
impl Neg for &Val {
    type Output = Val;
    fn neg(self) -> Val {
        self.unary(UnaryOp::Neg)
    }
}

/// What indexes an array: one value per dimension — a single index
/// (`&i`, `i`, `3i64`), a tuple (`(&row, &col)`), or a slice of values.
pub trait Indices {
    /// The indices, outermost first.
    fn into_indices(self) -> Vec<Val>;
}

impl Indices for Val {
    fn into_indices(self) -> Vec<Val> {
        vec![self]
    }
}
impl Indices for &Val {
    fn into_indices(self) -> Vec<Val> {
        vec![self.clone()]
    }
}
impl Indices for i64 {
    fn into_indices(self) -> Vec<Val> {
        vec![Val::from(self)]
    }
}
impl Indices for &[Val] {
    fn into_indices(self) -> Vec<Val> {
        self.to_vec()
    }
}
impl<const N: usize> Indices for [Val; N] {
    fn into_indices(self) -> Vec<Val> {
        self.to_vec()
    }
}
impl<A: Into<Val>, B: Into<Val>> Indices for (A, B) {
    fn into_indices(self) -> Vec<Val> {
        vec![self.0.into(), self.1.into()]
    }
}
impl<A: Into<Val>, B: Into<Val>, C: Into<Val>> Indices for (A, B, C) {
    fn into_indices(self) -> Vec<Val> {
        vec![self.0.into(), self.1.into(), self.2.into()]
    }
}

/// An array parameter of a kernel.
#[derive(Clone, Debug)]
pub struct ArrayParam {
    pub(crate) param: u32,
    pub(crate) position: usize,
    pub(crate) dtype: DType,
    pub(crate) ndim: usize,
    pub(crate) written: bool,
    extents: Vec<Val>,
}

impl ArrayParam {
    /// The extent of dimension `d` (an `i64`), as `a.shape[d]` in Numba.
    pub fn len(&self, d: usize) -> Val {
        self.extents
            .get(d)
            .cloned()
            .unwrap_or_else(|| Val::from(0i64))
    }

    /// Element `index` (one index per dimension, row-major).
    pub fn at(&self, index: impl Indices) -> Val {
        Val::new(
            Expr::Load {
                param: self.param,
                index: Box::new(self.linear(&index.into_indices()).expr),
            },
            self.dtype,
        )
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    fn linear(&self, index: &[Val]) -> Val {
        let mut position = Val::from(0i64);
        for (d, i) in index.iter().enumerate() {
            let i = i.cast(DType::I64);
            position = if d == 0 {
                i
            } else {
                position * self.len(d) + i
            };
        }
        position
    }
}

/// A block-shared array.
#[derive(Clone, Debug)]
pub struct SharedArrayRef {
    array: u32,
    dtype: DType,
    shape: Vec<usize>,
}

impl SharedArrayRef {
    /// Element `index` (one index per dimension, row-major).
    pub fn at(&self, index: impl Indices) -> Val {
        Val::new(
            Expr::LoadShared {
                array: self.array,
                index: Box::new(self.linear(&index.into_indices()).expr),
            },
            self.dtype,
        )
    }

    fn linear(&self, index: &[Val]) -> Val {
        let mut position = Val::from(0i64);
        for (d, i) in index.iter().enumerate() {
            let i = i.cast(DType::I64);
            position = if d == 0 {
                i
            } else {
                position * (self.shape[d] as f64) + i
            };
        }
        position
    }
}

/// A mutable local variable of one thread.
#[derive(Clone, Debug)]
pub struct Local {
    var: Var,
    dtype: DType,
}

impl Local {
    /// Its current value.
    pub fn get(&self) -> Val {
        Val::new(Expr::Var(self.var), self.dtype)
    }
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
}

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
        }
    }

    fn problem(&mut self, message: String) {
        if self.problems.first.is_none() {
            self.problems.first = Some(Error::InvalidArgument {
                op: format!("kernel '{}'", self.name),
                message,
            });
        }
    }

    fn push(&mut self, stmt: Stmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    fn nested(&mut self, body: impl FnOnce(&mut KernelScope)) -> Vec<Stmt> {
        self.blocks.push(Vec::new());
        body(self);
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        }
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

    fn special(special: Special) -> Val {
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
        });
        SharedArrayRef {
            array,
            dtype,
            shape: shape.to_vec(),
        }
    }

    /// A mutable local variable starting at `init`.
    pub fn local(&mut self, init: impl Into<Val>) -> Local {
        let init = init.into();
        self.vars.push(init.dtype);
        let var = Var((self.vars.len() - 1) as u32);
        self.push(Stmt::Let(var, init.expr));
        Local {
            var,
            dtype: self.vars[var.index()],
        }
    }

    /// `local = value` (converted to the local's dtype).
    pub fn set(&mut self, local: &Local, value: impl Into<Val>) {
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
        self.push(Stmt::Store {
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
        self.vars.push(DType::I64);
        let var = Var((self.vars.len() - 1) as u32);
        let counter = Val::new(Expr::Var(var), DType::I64);
        let body = self.nested(|k| body(k, counter));
        self.push(Stmt::For {
            var,
            start: start.into().cast(DType::I64).expr,
            end: end.into().cast(DType::I64).expr,
            step: step.into().cast(DType::I64).expr,
            body,
        });
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

    fn atomic(
        &mut self,
        op: AtomicOp,
        target: AtomicTarget,
        (dtype, index): (DType, Val),
        compare: Option<Val>,
        value: Val,
    ) -> Val {
        if !crate::device::simt::atomic_supported(dtype) {
            self.problem(format!(
                "atomic {} on {dtype} (expected i32, u32, i64, u64, f32 or f64)",
                op.name()
            ));
        }
        self.vars.push(dtype);
        let old = Var((self.vars.len() - 1) as u32);
        self.push(Stmt::Let(
            old,
            Expr::Const(Literal::cast_from(lazyfuse_core::Wide::Int(0), dtype)),
        ));
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

    /// `atomicAdd(&array[index], value)`; returns the old value.
    pub fn atomic_add(
        &mut self,
        array: &ArrayParam,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = self.array_target(array, index);
        self.atomic(AtomicOp::Add, target, at, None, value.into())
    }

    /// `atomicMin(&array[index], value)`; returns the old value.
    pub fn atomic_min(
        &mut self,
        array: &ArrayParam,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = self.array_target(array, index);
        self.atomic(AtomicOp::Min, target, at, None, value.into())
    }

    /// `atomicMax(&array[index], value)`; returns the old value.
    pub fn atomic_max(
        &mut self,
        array: &ArrayParam,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = self.array_target(array, index);
        self.atomic(AtomicOp::Max, target, at, None, value.into())
    }

    /// `atomicExch(&array[index], value)`; returns the old value.
    pub fn atomic_exchange(
        &mut self,
        array: &ArrayParam,
        index: impl Indices,
        value: impl Into<Val>,
    ) -> Val {
        let (target, at) = self.array_target(array, index);
        self.atomic(AtomicOp::Exchange, target, at, None, value.into())
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
        let at = (shared.dtype, shared.linear(&index.into_indices()));
        self.atomic(
            AtomicOp::Add,
            AtomicTarget::Shared(shared.array),
            at,
            None,
            value.into(),
        )
    }
}
