//! The operations of the expression graph.
//!
//! Operations in the graph are *normalised*: promotion has already inserted
//! explicit casts, so every binary operation sees two operands of one dtype
//! and every float-only operation sees a float. Which dtypes each operation
//! accepts after normalisation is stated on the enum; `typing` enforces it.

use crate::{DType, Literal, Wide};
use std::fmt;

macro_rules! named_ops {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant),*
        }

        impl $name {
            /// Every operation of this family.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The NumPy name of the operation (`"add"`, `"sqrt"`, ...).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),*
                }
            }

            /// Looks an operation up by its NumPy name.
            pub fn from_name(name: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|op| op.name() == name)
            }

            /// Looks an operation up by its NumPy name or one of its [`ALIASES`].
            pub fn lookup(name: &str) -> Option<$name> {
                Self::from_name(canonical(name))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// Other names of element-wise operations, each with the operation's
/// NumPy name: NumPy's own aliases (`abs`, `divide`, `mod`) and the short
/// names of Python's `operator` module (`sub`, `lt`, ...). The one table
/// the expression language and the C API both read.
pub const ALIASES: &[(&str, &str)] = &[
    ("neg", "negative"),
    ("abs", "absolute"),
    ("not", "logical_not"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("div", "true_divide"),
    ("divide", "true_divide"),
    ("truediv", "true_divide"),
    ("floordiv", "floor_divide"),
    ("mod", "remainder"),
    ("rem", "remainder"),
    ("pow", "power"),
    ("eq", "equal"),
    ("ne", "not_equal"),
    ("lt", "less"),
    ("le", "less_equal"),
    ("gt", "greater"),
    ("ge", "greater_equal"),
];

/// The NumPy name of an operation named `name` or by one of its [`ALIASES`].
fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, numpy)| numpy)
}

/// The one table of unary operations. Each line gives the operation's
/// variant, its NumPy name, the `Array`/`Expr` method that applies it, its
/// [`UnaryClass`], and its value on a float `x` (f32 and f64; f16 and bf16
/// compute in f32 and round once). The doc comment serves the variant and
/// the method. Everything core knows of a unary operation comes from here:
/// the enum, names, classes, methods, and the float semantics
/// (`semantics.rs`; integer semantics are written there by hand, for the
/// few operations that take integers). Backends add one line per tier: the
/// CUDA prelude's `lf_<name>`, and where they want speed a CPU loop arm.
///
/// `unary_table!(callback [args])` expands to `callback! { [args] lines }`
/// (exported for the kernel builder's `Val` methods; not a public API).
#[doc(hidden)]
#[macro_export]
macro_rules! unary_table {
    ($callback:ident [$($args:tt)*]) => {
        $callback! { [$($args)*]
            /// `-x` (wraps for integers; an error for bool).
            Neg => "negative", neg, Arith, |x| -x;
            /// `|x|` (NumPy's `absolute`; wraps at the minimum of signed integers).
            Abs => "absolute", abs, Arith, |x| x.abs();
            /// -1, 0 or 1 by sign (NaN stays NaN).
            Sign => "sign", sign, Arith, |x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else if x == 0.0 {
                    0.0
                } else {
                    x
                }
            };
            /// `x * x` (bool gives int8, as NumPy).
            Square => "square", square, Arith, |x| x * x;
            /// Square root (integers compute in the smallest float holding them, as NumPy).
            Sqrt => "sqrt", sqrt, Float, |x| x.sqrt();
            /// `e^x`.
            Exp => "exp", exp, Float, |x| x.exp();
            /// `2^x`.
            Exp2 => "exp2", exp2, Float, |x| x.exp2();
            /// `e^x - 1`, accurate near 0.
            Expm1 => "expm1", expm1, Float, |x| x.exp_m1();
            /// Natural logarithm.
            Log => "log", log, Float, |x| x.ln();
            /// Base-2 logarithm.
            Log2 => "log2", log2, Float, |x| x.log2();
            /// Base-10 logarithm.
            Log10 => "log10", log10, Float, |x| x.log10();
            /// `ln(1 + x)`, accurate near 0.
            Log1p => "log1p", log1p, Float, |x| x.ln_1p();
            /// Sine.
            Sin => "sin", sin, Float, |x| x.sin();
            /// Cosine.
            Cos => "cos", cos, Float, |x| x.cos();
            /// Tangent.
            Tan => "tan", tan, Float, |x| x.tan();
            /// Inverse sine.
            Asin => "arcsin", arcsin, Float, |x| x.asin();
            /// Inverse cosine.
            Acos => "arccos", arccos, Float, |x| x.acos();
            /// Inverse tangent.
            Atan => "arctan", arctan, Float, |x| x.atan();
            /// Hyperbolic sine.
            Sinh => "sinh", sinh, Float, |x| x.sinh();
            /// Hyperbolic cosine.
            Cosh => "cosh", cosh, Float, |x| x.cosh();
            /// Hyperbolic tangent.
            Tanh => "tanh", tanh, Float, |x| x.tanh();
            /// Inverse hyperbolic sine.
            Asinh => "arcsinh", arcsinh, Float, |x| x.asinh();
            /// Inverse hyperbolic cosine (NaN below 1).
            Acosh => "arccosh", arccosh, Float, |x| x.acosh();
            /// Inverse hyperbolic tangent (±∞ at ±1, NaN beyond).
            Atanh => "arctanh", arctanh, Float, |x| x.atanh();
            /// Round toward -∞ (integers unchanged).
            Floor => "floor", floor, Rounding, |x| x.floor();
            /// Round toward +∞ (integers unchanged).
            Ceil => "ceil", ceil, Rounding, |x| x.ceil();
            /// Round toward 0 (integers unchanged).
            Trunc => "trunc", trunc, Rounding, |x| x.trunc();
            /// Round half to even, as `np.round` (integers unchanged).
            Round => "round", round, Rounding, |x| x.round_ties_even();
            /// Round half to even, as `np.rint`: integers become the
            /// smallest float holding them first, as NumPy's `rint` does.
            Rint => "rint", rint, Float, |x| x.round_ties_even();
            /// Cube root.
            Cbrt => "cbrt", cbrt, Float, |x| x.cbrt();
            /// The error function, `2/√π ∫₀ˣ e^(-t²) dt` (Python's `math.erf`).
            Erf => "erf", erf, Float, |x| erf(x);
            /// The complementary error function `1 - erf(x)`, without its
            /// cancellation for large `x` (`math.erfc`).
            Erfc => "erfc", erfc, Float, |x| erfc(x);
            /// The gamma function Γ(x) (`math.gamma`; C's `tgamma`: NaN at
            /// the negative integers, ±∞ at ±0).
            Gamma => "gamma", gamma, Float, |x| gamma(x);
            /// `ln |Γ(x)|` (`math.lgamma`; +∞ at the poles).
            Lgamma => "lgamma", lgamma, Float, |x| lgamma(x);
            /// `1 / x` (integers: `1 // x` toward 0, and 0 for 0, as NumPy).
            Reciprocal => "reciprocal", reciprocal, Arith, |x| 1.0 / x;
            /// Degrees to radians, `x * (π / 180)` in the operand's float type, as NumPy.
            Deg2rad => "deg2rad", deg2rad, Float, |x| x * (PI / 180.0);
            /// Radians to degrees, `x * (180 / π)` in the operand's float type, as NumPy.
            Rad2deg => "rad2deg", rad2deg, Float, |x| x * (180.0 / PI);
            /// Bitwise not of integers (`~x`; logical not of bool).
            Invert => "invert", invert, Bitwise, |x| x;
            /// `!x` of the truth value (bool result).
            LogicalNot => "logical_not", logical_not, Logical, |x| x;
            /// True where NaN.
            IsNan => "isnan", isnan, Predicate, |x| x;
            /// True where ±∞.
            IsInf => "isinf", isinf, Predicate, |x| x;
            /// True where neither NaN nor ±∞.
            IsFinite => "isfinite", isfinite, Predicate, |x| x;
        }
    };
}

/// What a unary operation takes and gives, after normalisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryClass {
    /// Integers and floats, keeping the dtype (`negative`, `absolute`, ...).
    Arith,
    /// Floats only (integers are cast to the smallest float holding them first).
    Float,
    /// Floats, keeping the dtype; the identity on integers.
    Rounding,
    /// Bool to bool.
    Logical,
    /// Integers and bool, keeping the dtype (floats are an error).
    Bitwise,
    /// Floats to bool (`isnan`, `isinf`, `isfinite`; constant on integers).
    Predicate,
}

/// Defines [`UnaryOp`] from [`unary_table!`].
macro_rules! define_unary_op {
    ([] $($(#[$doc:meta])* $variant:ident => $numpy:literal, $method:ident, $class:ident, |$x:ident| $value:expr;)*) => {
        named_ops! {
            /// Element-wise operations of one operand (the table:
            /// `unary_table!` in `core/src/ops.rs`). What each takes and
            /// gives is its [`UnaryClass`].
            UnaryOp {
                $($(#[$doc])* $variant => $numpy,)*
            }
        }

        impl UnaryOp {
            /// What the operation takes and gives.
            pub const fn class(self) -> UnaryClass {
                match self {
                    $(UnaryOp::$variant => UnaryClass::$class,)*
                }
            }

            /// The name of the `Array`/`Expr` method that applies it.
            pub const fn method(self) -> &'static str {
                match self {
                    $(UnaryOp::$variant => stringify!($method),)*
                }
            }
        }
    };
}
crate::unary_table!(define_unary_op []);

impl UnaryOp {
    /// True for operations defined on floats only (integers are cast to a float first).
    pub const fn is_float_only(self) -> bool {
        !matches!(
            self.class(),
            UnaryClass::Arith | UnaryClass::Logical | UnaryClass::Bitwise
        )
    }

    /// True for the predicates that give bool (`isnan`, `isinf`, `isfinite`).
    pub const fn is_predicate(self) -> bool {
        matches!(self.class(), UnaryClass::Predicate)
    }

    /// True for the rounding operations, which are the identity on integers.
    pub const fn is_rounding(self) -> bool {
        matches!(self.class(), UnaryClass::Rounding)
    }
}

named_ops! {
    /// Element-wise operations of two operands of the same dtype.
    ///
    /// After normalisation: arithmetic takes integers and floats (`Div` floats
    /// only), `Minimum`/`Maximum` any dtype, comparisons any dtype and give
    /// bool, the logical operations bool.
    BinaryOp {
        /// `a + b` (wraps for integers).
        Add => "add",
        /// `a - b`.
        Sub => "subtract",
        /// `a * b`.
        Mul => "multiply",
        /// True division `a / b` (floats only after normalisation).
        Div => "true_divide",
        /// NumPy's `//`: floor of the quotient; integer division by zero gives 0.
        FloorDiv => "floor_divide",
        /// NumPy's `%`: remainder with the sign of the divisor; integer `% 0` gives 0.
        Rem => "remainder",
        /// `a ** b`.
        Pow => "power",
        /// Smaller of the two; NaN if either is NaN.
        Minimum => "minimum",
        /// Larger of the two; NaN if either is NaN.
        Maximum => "maximum",
        /// `a == b`.
        Eq => "equal",
        /// `a != b`.
        Ne => "not_equal",
        /// `a < b`.
        Lt => "less",
        /// `a <= b`.
        Le => "less_equal",
        /// `a > b`.
        Gt => "greater",
        /// `a >= b`.
        Ge => "greater_equal",
        /// `a && b`.
        LogicalAnd => "logical_and",
        /// `a || b`.
        LogicalOr => "logical_or",
        /// `a != b` on bool.
        LogicalXor => "logical_xor",
        /// The angle of the point `(b, a)`: `atan2(a, b)` (floats only after normalisation).
        Arctan2 => "arctan2",
        /// `sqrt(a² + b²)` without undue overflow (floats only after normalisation).
        Hypot => "hypot",
        /// `|a|` with the sign of `b` (floats only after normalisation).
        Copysign => "copysign",
        /// C's `fmod`: the remainder with the sign of the dividend; integer `fmod(a, 0)` gives 0.
        Fmod => "fmod",
        /// `ln(e^a + e^b)` without undue overflow (floats only after normalisation).
        Logaddexp => "logaddexp",
        /// `log2(2^a + 2^b)` without undue overflow (floats only after normalisation).
        Logaddexp2 => "logaddexp2",
        /// The Heaviside step of `a`: 0 below 0, 1 above, `b` at 0, NaN for
        /// NaN (floats only after normalisation).
        Heaviside => "heaviside",
        /// The float after `a` in the direction of `b` (`b` when they are
        /// equal; floats only after normalisation).
        Nextafter => "nextafter",
        /// The greatest common divisor of `|a|` and `|b|` (integers only;
        /// `gcd(0, 0)` is 0, and `|MIN|` wraps as NumPy's does).
        Gcd => "gcd",
        /// The least common multiple of `|a|` and `|b|` (integers only; 0
        /// when either is 0; wraps on overflow as NumPy's does).
        Lcm => "lcm",
        /// `a & b` (integers; bool is normalised to `logical_and`).
        BitwiseAnd => "bitwise_and",
        /// `a | b` (integers; bool is normalised to `logical_or`).
        BitwiseOr => "bitwise_or",
        /// `a ^ b` (integers; bool is normalised to `logical_xor`).
        BitwiseXor => "bitwise_xor",
        /// `a << b`; 0 when `b` is negative or at least the bit width (as NumPy).
        LeftShift => "left_shift",
        /// `a >> b` (arithmetic for signed types); when `b` is negative or at
        /// least the bit width, -1 for negative `a` and 0 otherwise (as NumPy).
        RightShift => "right_shift",
        /// lazyfuse's counter-based generator: Philox4x32-10 of counter `a`
        /// (words: its low and high halves, 0, 0) under key `b` (its low and
        /// high halves); the first two output words as one u64 (u64 only after
        /// normalisation). What `random_uniform` and `random_normal` compute.
        Philox => "philox",
    }
}

impl BinaryOp {
    /// True for the comparisons, which give bool.
    pub const fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    /// True for the logical operations, defined on bool.
    pub const fn is_logical(self) -> bool {
        matches!(
            self,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor
        )
    }

    /// True for the operations defined on floats only (integers are cast to
    /// the smallest float that holds them, as NumPy's `arctan2`).
    pub const fn is_float_only(self) -> bool {
        matches!(
            self,
            BinaryOp::Arctan2
                | BinaryOp::Hypot
                | BinaryOp::Copysign
                | BinaryOp::Logaddexp
                | BinaryOp::Logaddexp2
                | BinaryOp::Heaviside
                | BinaryOp::Nextafter
        )
    }

    /// True for the operations defined on integers only, bool excluded
    /// (`gcd`, `lcm`: NumPy has no loop for floats or for two bools).
    pub const fn is_integer_only(self) -> bool {
        matches!(self, BinaryOp::Gcd | BinaryOp::Lcm)
    }

    /// True for the operations on the bits of integers: bitwise ones,
    /// shifts, and the Philox generator.
    pub const fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinaryOp::BitwiseAnd
                | BinaryOp::BitwiseOr
                | BinaryOp::BitwiseXor
                | BinaryOp::LeftShift
                | BinaryOp::RightShift
                | BinaryOp::Philox
        )
    }

    /// The operator spelling used when printing expressions (`+`, `//`, ...),
    /// or `None` for operations printed as calls.
    pub const fn symbol(self) -> Option<&'static str> {
        Some(match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Rem => "%",
            BinaryOp::Pow => "**",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::BitwiseAnd => "&",
            BinaryOp::BitwiseOr => "|",
            BinaryOp::BitwiseXor => "^",
            BinaryOp::LeftShift => "<<",
            BinaryOp::RightShift => ">>",
            _ => return None,
        })
    }
}

named_ops! {
    /// Built-in reductions. The operand is already in the accumulator dtype
    /// (promotion inserted the casts); the result has the same dtype.
    ReduceOp {
        /// Sum (pairwise for floats, or better).
        Sum => "sum",
        /// Product.
        Prod => "prod",
        /// Minimum, NaN-propagating; undefined on an empty extent.
        Min => "min",
        /// Maximum, NaN-propagating; undefined on an empty extent.
        Max => "max",
    }
}

impl ReduceOp {
    /// The element-wise operation that combines two partial results.
    pub const fn combiner(self) -> BinaryOp {
        match self {
            ReduceOp::Sum => BinaryOp::Add,
            ReduceOp::Prod => BinaryOp::Mul,
            ReduceOp::Min => BinaryOp::Minimum,
            ReduceOp::Max => BinaryOp::Maximum,
        }
    }

    /// The neutral element in `dtype`: 0, 1, or the largest (smallest)
    /// value for a minimum (maximum), `±inf` for floats.
    pub fn identity(self, dtype: DType) -> Literal {
        let wide = match (self, dtype.int_range()) {
            (ReduceOp::Sum, _) => Wide::Int(0),
            (ReduceOp::Prod, _) => Wide::Int(1),
            (ReduceOp::Min, Some((_, max))) => Wide::Int(max),
            (ReduceOp::Max, Some((min, _))) => Wide::Int(min),
            (ReduceOp::Min, None) if dtype.is_bool() => Wide::Int(1),
            (ReduceOp::Max, None) if dtype.is_bool() => Wide::Int(0),
            (ReduceOp::Min, None) => Wide::Float(f64::INFINITY),
            (ReduceOp::Max, None) => Wide::Float(f64::NEG_INFINITY),
        };
        Literal::cast_from(wide, dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_names_one_operation_and_shadows_none() {
        for (alias, numpy) in ALIASES {
            let unary = UnaryOp::from_name(numpy).is_some();
            let binary = BinaryOp::from_name(numpy).is_some();
            assert!(unary != binary, "alias {alias} -> {numpy}");
            assert!(
                UnaryOp::from_name(alias).is_none() && BinaryOp::from_name(alias).is_none(),
                "alias {alias} is itself an operation's name"
            );
        }
        assert_eq!(BinaryOp::lookup("mod"), Some(BinaryOp::Rem));
        assert_eq!(UnaryOp::lookup("abs"), Some(UnaryOp::Abs));
        assert_eq!(UnaryOp::lookup("sqrt"), Some(UnaryOp::Sqrt));
        assert_eq!(
            BinaryOp::lookup("fmod"),
            Some(BinaryOp::Fmod),
            "C's fmod is its own operation, not NumPy's remainder"
        );
    }
}
