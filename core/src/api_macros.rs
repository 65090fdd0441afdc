//! Method lists shared by [`crate::Array`] and [`crate::Expr`], so that both
//! offer exactly the same element-wise vocabulary.

/// Expands to the element-wise methods of a type that has
/// `apply_unary(&self, UnaryOp) -> Self` and
/// `apply_binary(&self, BinaryOp, $operand) -> Self`.
macro_rules! elementwise_methods {
    ($operand:ty) => {
        elementwise_methods!(@unary
            /// `-x` (wraps for integers; an error for bool).
            neg => Neg,
            /// `|x|` (NumPy's `absolute`).
            abs => Abs,
            /// -1, 0 or 1 by sign (NaN stays NaN).
            sign => Sign,
            /// `x * x` (bool gives int8, as NumPy).
            square => Square,
            /// Square root (integers compute in the smallest float holding them, as NumPy).
            sqrt => Sqrt,
            /// `e^x`.
            exp => Exp,
            /// `2^x`.
            exp2 => Exp2,
            /// `e^x - 1`, accurate near 0.
            expm1 => Expm1,
            /// Natural logarithm.
            log => Log,
            /// Base-2 logarithm.
            log2 => Log2,
            /// Base-10 logarithm.
            log10 => Log10,
            /// `ln(1 + x)`, accurate near 0.
            log1p => Log1p,
            /// Sine.
            sin => Sin,
            /// Cosine.
            cos => Cos,
            /// Tangent.
            tan => Tan,
            /// Inverse sine.
            arcsin => Asin,
            /// Inverse cosine.
            arccos => Acos,
            /// Inverse tangent.
            arctan => Atan,
            /// Hyperbolic sine.
            sinh => Sinh,
            /// Hyperbolic cosine.
            cosh => Cosh,
            /// Hyperbolic tangent.
            tanh => Tanh,
            /// Round toward -∞ (integers unchanged).
            floor => Floor,
            /// Round toward +∞ (integers unchanged).
            ceil => Ceil,
            /// Round toward 0 (integers unchanged).
            trunc => Trunc,
            /// Round half to even, as `np.round` (integers unchanged).
            round => Round,
            /// `!x` of the truth value (bool result).
            logical_not => LogicalNot,
            /// True where NaN.
            isnan => IsNan,
            /// True where ±∞.
            isinf => IsInf,
            /// True where neither NaN nor ±∞.
            isfinite => IsFinite,
        );
        elementwise_methods!(@binary $operand;
            /// `self + rhs` (bool: logical or).
            add => Add,
            /// `self - rhs` (an error for bool).
            sub => Sub,
            /// `self * rhs` (bool: logical and).
            mul => Mul,
            /// True division, as NumPy's `/`: integer operands give f64.
            div => Div,
            /// NumPy's `//`: floor of the quotient; integer division by zero gives 0.
            floor_div => FloorDiv,
            /// NumPy's `%`: remainder with the divisor's sign; integer `% 0` gives 0.
            rem => Rem,
            /// `self ** rhs`.
            pow => Pow,
            /// Element-wise minimum; NaN if either is NaN.
            minimum => Minimum,
            /// Element-wise maximum; NaN if either is NaN.
            maximum => Maximum,
            /// `self == rhs` (bool result).
            eq => Eq,
            /// `self != rhs` (bool result).
            ne => Ne,
            /// `self < rhs` (bool result).
            lt => Lt,
            /// `self <= rhs` (bool result).
            le => Le,
            /// `self > rhs` (bool result).
            gt => Gt,
            /// `self >= rhs` (bool result).
            ge => Ge,
            /// Both true (bool result).
            logical_and => LogicalAnd,
            /// Either true (bool result).
            logical_or => LogicalOr,
            /// Exactly one true (bool result).
            logical_xor => LogicalXor,
        );
    };
    (@unary $($(#[$doc:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$doc])*
        pub fn $name(&self) -> Self {
            self.apply_unary($crate::ops::UnaryOp::$op)
        }
    )*};
    (@binary $operand:ty; $($(#[$doc:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, rhs: impl Into<$operand>) -> Self {
            self.apply_binary($crate::ops::BinaryOp::$op, rhs.into())
        }
    )*};
}
