//! `+ - * / %`, `& | ^ << >>`, unary `-` and `!` (NumPy's `~`) on arrays,
//! with arrays or Rust scalars.

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Shl, Shr, Sub};

use super::{Array, Operand};
use crate::ops::BinaryOp;
use crate::scalar::Scalar;

macro_rules! array_operators {
    ($($trait:ident $method:ident $op:ident),*) => {$(
        impl<R: Into<Operand>> $trait<R> for &Array {
            type Output = Array;
            fn $method(self, rhs: R) -> Array {
                self.apply_binary(BinaryOp::$op, rhs.into())
            }
        }

        impl<R: Into<Operand>> $trait<R> for Array {
            type Output = Array;
            fn $method(self, rhs: R) -> Array {
                self.apply_binary(BinaryOp::$op, rhs.into())
            }
        }

        array_operators!(@scalar_left $trait $method $op: f64, i64);
    )*};
    (@scalar_left $trait:ident $method:ident $op:ident: $($scalar:ty),*) => {$(
        impl $trait<&Array> for $scalar {
            type Output = Array;
            fn $method(self, rhs: &Array) -> Array {
                rhs.apply_binary_reversed(BinaryOp::$op, Operand::Scalar(Scalar::from(self)))
            }
        }

        impl $trait<Array> for $scalar {
            type Output = Array;
            fn $method(self, rhs: Array) -> Array {
                self.$method(&rhs)
            }
        }
    )*};
}

array_operators!(
    Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem,
    BitAnd bitand BitwiseAnd, BitOr bitor BitwiseOr, BitXor bitxor BitwiseXor,
    Shl shl LeftShift, Shr shr RightShift
);

impl Not for &Array {
    type Output = Array;
    /// NumPy's `~`: bitwise not of integers, logical not of bool.
    fn not(self) -> Array {
        self.apply_unary(crate::ops::UnaryOp::Invert)
    }
}

impl Not for Array {
    type Output = Array;
    /// NumPy's `~`: bitwise not of integers, logical not of bool.
    fn not(self) -> Array {
        self.apply_unary(crate::ops::UnaryOp::Invert)
    }
}

impl Neg for &Array {
    type Output = Array;
    fn neg(self) -> Array {
        self.apply_unary(crate::ops::UnaryOp::Neg)
    }
}

impl Neg for Array {
    type Output = Array;
    fn neg(self) -> Array {
        self.apply_unary(crate::ops::UnaryOp::Neg)
    }
}
