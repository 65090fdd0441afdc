//! What kernels read and write: array parameters, block-shared arrays and
//! thread-local variables, indexed with one value per dimension.

use lazyfuse_core::DType;

use super::val::Val;
use lazyfuse_device::ir::{Expr, Var};

/// What indexes an array: one value per dimension — a single index
/// (`&i`, `i`, `3i64`), a tuple (`(&row, &col)`), or a slice of values.
pub trait Indices {
    /// The indices, outermost first.
    fn into_indices(self) -> Vec<Val>;
}

/// No index: the element of a 0-d array (a gufunc's `()` core).
impl Indices for () {
    fn into_indices(self) -> Vec<Val> {
        Vec::new()
    }
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
    pub(crate) extents: Vec<Val>,
    /// Where element 0 is in the buffer: 0, or the start of one loop
    /// element's core of a gufunc argument.
    pub(crate) base: Option<Val>,
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

    /// Its number of dimensions.
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    pub(crate) fn linear(&self, index: &[Val]) -> Val {
        let mut position = Val::from(0i64);
        for (d, i) in index.iter().enumerate() {
            let i = i.cast(DType::I64);
            position = if d == 0 {
                i
            } else {
                position * self.len(d) + i
            };
        }
        match &self.base {
            Some(base) => base.clone() + position,
            None => position,
        }
    }

    /// Elements in one core of a gufunc argument whose buffer is
    /// `[loop elements, core dimensions…]`.
    pub(crate) fn core_len(&self) -> Val {
        self.extents[1..]
            .iter()
            .fold(Val::from(1i64), |len, extent| len * extent.clone())
    }

    /// The core starting at element `base` of such an argument: its last
    /// dimensions.
    pub(crate) fn core_at(&self, base: Val) -> ArrayParam {
        ArrayParam {
            ndim: self.ndim - 1,
            extents: self.extents[1..].to_vec(),
            base: Some(base),
            ..self.clone()
        }
    }
}

/// A block-shared array.
#[derive(Clone, Debug)]
pub struct SharedArrayRef {
    pub(crate) array: u32,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
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

    pub(crate) fn linear(&self, index: &[Val]) -> Val {
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

/// A per-thread array ([`crate::KernelScope::local_array`]).
#[derive(Clone, Debug)]
pub struct LocalArrayRef(pub(crate) SharedArrayRef);

impl LocalArrayRef {
    /// Element `index` (one index per dimension, row-major) of this
    /// thread's array.
    pub fn at(&self, index: impl Indices) -> Val {
        self.0.at(index)
    }
}

/// A mutable local variable of one thread.
#[derive(Clone, Debug)]
pub struct Local {
    pub(crate) var: Var,
    pub(crate) dtype: DType,
}

impl Local {
    /// Its current value.
    pub fn get(&self) -> Val {
        Val::new(Expr::Var(self.var), self.dtype)
    }
}
