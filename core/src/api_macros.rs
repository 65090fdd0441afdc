//! Method lists shared by [`crate::Array`] and [`crate::Expr`], so that both
//! offer exactly the same element-wise vocabulary. The unary methods come
//! from the table of unary operations (`unary_table!` in `ops.rs`).

/// Expands to the element-wise methods of a type that has
/// `apply_unary(&self, UnaryOp) -> Self` and
/// `apply_binary(&self, BinaryOp, $operand) -> Self`.
macro_rules! elementwise_methods {
    ($operand:ty) => {
        $crate::unary_table!(unary_methods []);
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
            /// `atan2(self, rhs)`: the angle of the point `(rhs, self)`.
            arctan2 => Arctan2,
            /// `sqrt(self² + rhs²)` without undue overflow.
            hypot => Hypot,
            /// `|self|` with the sign of `rhs`.
            copysign => Copysign,
            /// C's `fmod`: remainder with the sign of `self` (integer `fmod(a, 0)` gives 0).
            fmod => Fmod,
            /// `ln(e^self + e^rhs)` without undue overflow.
            logaddexp => Logaddexp,
            /// `log2(2^self + 2^rhs)` without undue overflow.
            logaddexp2 => Logaddexp2,
            /// The Heaviside step: 0 where `self < 0`, 1 where `self > 0`, `rhs` where `self == 0`.
            heaviside => Heaviside,
            /// The float after `self` in the direction of `rhs`.
            nextafter => Nextafter,
            /// The greatest common divisor of `|self|` and `|rhs|` (integers).
            gcd => Gcd,
            /// The least common multiple of `|self|` and `|rhs|` (integers).
            lcm => Lcm,
            /// `self & rhs` (integers and bool).
            bitwise_and => BitwiseAnd,
            /// `self | rhs` (integers and bool).
            bitwise_or => BitwiseOr,
            /// `self ^ rhs` (integers and bool).
            bitwise_xor => BitwiseXor,
            /// `self << rhs` (0 for counts that are negative or at least the bit width).
            left_shift => LeftShift,
            /// `self >> rhs`, arithmetic for signed types.
            right_shift => RightShift,
        );
    };
    (@binary $operand:ty; $($(#[$doc:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, rhs: impl Into<$operand>) -> Self {
            self.apply_binary($crate::ops::BinaryOp::$op, rhs.into())
        }
    )*};
}

/// One method per line of `unary_table!` (`core/src/ops.rs`), for a type
/// that has `apply_unary(&self, UnaryOp) -> Self`.
macro_rules! unary_methods {
    ([] $($(#[$doc:meta])* $variant:ident => $numpy:literal, $method:ident, $class:ident, |$x:ident| $value:expr;)*) => {$(
        $(#[$doc])*
        pub fn $method(&self) -> Self {
            self.apply_unary($crate::ops::UnaryOp::$variant)
        }
    )*};
}
