//! [`Val`]: a value computed by one thread of a user kernel, with the
//! element operations, Rust operators and math functions on it. Rust numbers
//! mixed with values are weak constants (they take the value's dtype), and
//! values of different dtypes promote as NumPy does.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use lazyfuse_core::{promote, BinaryOp, DType, Literal, UnaryOp};

use lazyfuse_device::ir::Expr;

/// One method per line of core's table of unary operations.
macro_rules! unary_methods {
    ([] $($(#[$doc:meta])* $variant:ident => $numpy:literal, $method:ident, $class:ident, |$x:ident| $value:expr;)*) => {$(
        $(#[$doc])*
        pub fn $method(&self) -> Val {
            self.unary(UnaryOp::$variant)
        }
    )*};
}

/// One method per line of core's table of binary operations that names one.
macro_rules! binary_methods {
    ([] $($(#[$doc:meta])* $variant:ident => $numpy:literal, [$($method:ident)?], $class:ident, [$($symbol:literal)?], |$a:ident, $b:ident| $value:expr;)*) => {$(
        binary_method! { [$(#[$doc])*] $variant [$($method)?] }
    )*};
}

/// The method of one line of core's binary table, if it names one.
macro_rules! binary_method {
    ([$(#[$doc:meta])*] $variant:ident []) => {};
    ([$(#[$doc:meta])*] $variant:ident [$method:ident]) => {
        $(#[$doc])*
        pub fn $method(&self, y: impl Into<Val>) -> Val {
            self.binary(BinaryOp::$variant, &y.into())
        }
    };
}

/// A value computed by one thread: an expression and its dtype.
#[derive(Clone, Debug)]
pub struct Val {
    pub(crate) expr: Expr,
    pub(crate) dtype: DType,
}

impl Val {
    pub(crate) fn new(expr: Expr, dtype: DType) -> Val {
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

    pub(crate) fn unary(&self, op: UnaryOp) -> Val {
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

    pub(crate) fn binary(&self, op: BinaryOp, other: &Val) -> Val {
        let common = promote(self.dtype, other.dtype);
        // True division and the float-only functions (`arctan2`, `hypot`,
        // ...) of integers compute in float64, as NumPy and Numba do.
        let common = if (op == BinaryOp::Div || op.is_float_only()) && !common.is_float() {
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

    lazyfuse_core::unary_table!(unary_methods []);
    /// Any element operation of one value.
    pub fn apply(&self, op: UnaryOp) -> Val {
        self.unary(op)
    }
    /// Any element operation of two values (promoted as NumPy does;
    /// comparisons and logical operations give bools).
    pub fn apply_binary(&self, op: BinaryOp, y: impl Into<Val>) -> Val {
        self.binary(op, &y.into())
    }
    lazyfuse_core::binary_table!(binary_methods []);
    /// The smaller (NaN if either is NaN): [`Val::minimum`].
    pub fn min(&self, y: impl Into<Val>) -> Val {
        self.minimum(y)
    }
    /// The larger (NaN if either is NaN): [`Val::maximum`].
    pub fn max(&self, y: impl Into<Val>) -> Val {
        self.maximum(y)
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
    /// `self * b + c` rounded once (CUDA's `fma`, Numba's `cuda.fma`;
    /// integers wrap), the three promoted to one dtype.
    pub fn fma(&self, b: impl Into<Val>, c: impl Into<Val>) -> Val {
        let (b, c) = (b.into(), c.into());
        let dtype = promote(promote(self.dtype, b.dtype), c.dtype);
        let expr = Expr::Fma(
            Box::new(self.cast(dtype).expr),
            Box::new(b.cast(dtype).expr),
            Box::new(c.cast(dtype).expr),
        );
        Val::new(expr, dtype)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_only_functions_of_integers_compute_in_float64() {
        let (a, b) = (Val::from(1i64), Val::from(2i64));
        for op in [BinaryOp::Arctan2, BinaryOp::Hypot, BinaryOp::Div] {
            assert_eq!(a.apply_binary(op, &b).dtype(), DType::F64, "{op:?}");
        }
        assert_eq!(a.apply_binary(BinaryOp::Add, &b).dtype(), DType::I64);
        let x = Val::from(1.0f32);
        assert_eq!(x.apply_binary(BinaryOp::Arctan2, &x).dtype(), DType::F32);
    }
}
