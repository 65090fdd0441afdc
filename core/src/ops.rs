//! The operations of the expression graph.
//!
//! Operations in the graph are *normalised*: promotion has already inserted
//! explicit casts, so every binary operation sees two operands of one dtype
//! and every float-only operation sees a float. Which dtypes each operation
//! accepts after normalisation is stated on the enum; `typing` enforces it.

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

            /// Looks an operation up by its NumPy name or one of its
            /// [`ALIASES`](crate::ops::ALIASES).
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

// After `named_ops!`, which it uses (a macro is in scope below its definition).
mod reduce;
pub use reduce::{ArgExtreme, IdentityRule, ReduceClass, ReduceOp};

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
            /// The number of set bits (CUDA's `__popc`), in the operand's dtype.
            Popc => "popc", popc, Bitwise, |x| x;
            /// The zero bits above the highest set bit in the dtype's width (`__clz`).
            Clz => "clz", clz, Bitwise, |x| x;
            /// The position of the lowest set bit counted from 1, 0 for 0 (`__ffs`).
            Ffs => "ffs", ffs, Bitwise, |x| x;
            /// The bits in reverse order (`__brev`).
            Brev => "brev", brev, Bitwise, |x| x;
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

/// The one table of binary operations, shaped as [`unary_table!`]'s. Each
/// line gives the operation's variant, its NumPy name, the `Array`/`Expr`
/// method that applies it (`[]`: none), its [`BinaryClass`], the operator
/// that prints it (`[]`: printed as a call), and its value on floats `a`
/// and `b` (f32 and f64; f16 and bf16 compute in f32 and round once;
/// operations no float reaches — the class says which — give `a`). The
/// doc comment serves the variant and the method, whose receiver is `a`.
/// Everything core knows of a binary operation comes from here: the enum,
/// names, classes, methods, operators and the float semantics
/// (`semantics.rs`; integer and bool semantics are written there by hand,
/// in matches that name every operation). Backends add one line per table:
/// the CUDA prelude's `lf_<name>`, the CPU JIT's lowering, each checked
/// for every operation by a test.
///
/// `binary_table!(callback [args])` expands to `callback! { [args] lines }`
/// (exported for the facade's methods; not a public API).
#[doc(hidden)]
#[macro_export]
macro_rules! binary_table {
    ($callback:ident [$($args:tt)*]) => {
        $callback! { [$($args)*]
            /// `a + b` (wraps for integers; bool: logical or).
            Add => "add", [add], Arith, ["+"], |a, b| a + b;
            /// `a - b` (wraps for integers; an error for bool).
            Sub => "subtract", [sub], Arith, ["-"], |a, b| a - b;
            /// `a * b` (wraps for integers; bool: logical and).
            Mul => "multiply", [mul], Arith, ["*"], |a, b| a * b;
            /// True division `a / b`, as NumPy's `/`: integer operands give
            /// f64 (floats only after normalisation).
            Div => "true_divide", [div], Arith, ["/"], |a, b| a / b;
            /// NumPy's `//`: floor of the quotient; integer division by zero gives 0.
            FloorDiv => "floor_divide", [floor_div], Arith, ["//"], |a, b| divmod(a, b).0;
            /// NumPy's `%`: remainder with the sign of the divisor; integer `% 0` gives 0.
            Rem => "remainder", [rem], Arith, ["%"], |a, b| divmod(a, b).1;
            /// `a ** b`.
            Pow => "power", [pow], Arith, ["**"], |a, b| a.powf(b);
            /// Smaller of the two; NaN if either is NaN.
            Minimum => "minimum", [minimum], Extreme, [], |a, b| {
                if a.is_nan() || a < b {
                    a
                } else {
                    b
                }
            };
            /// Larger of the two; NaN if either is NaN.
            Maximum => "maximum", [maximum], Extreme, [], |a, b| {
                if a.is_nan() || a > b {
                    a
                } else {
                    b
                }
            };
            /// `a == b` (bool result).
            Eq => "equal", [eq], Comparison, ["=="], |a, _b| a;
            /// `a != b` (bool result).
            Ne => "not_equal", [ne], Comparison, ["!="], |a, _b| a;
            /// `a < b` (bool result).
            Lt => "less", [lt], Comparison, ["<"], |a, _b| a;
            /// `a <= b` (bool result).
            Le => "less_equal", [le], Comparison, ["<="], |a, _b| a;
            /// `a > b` (bool result).
            Gt => "greater", [gt], Comparison, [">"], |a, _b| a;
            /// `a >= b` (bool result).
            Ge => "greater_equal", [ge], Comparison, [">="], |a, _b| a;
            /// Both true (bool result).
            LogicalAnd => "logical_and", [logical_and], Logical, [], |a, _b| a;
            /// Either true (bool result).
            LogicalOr => "logical_or", [logical_or], Logical, [], |a, _b| a;
            /// Exactly one true (bool result).
            LogicalXor => "logical_xor", [logical_xor], Logical, [], |a, _b| a;
            /// The angle of the point `(b, a)`: `atan2(a, b)`.
            Arctan2 => "arctan2", [arctan2], Float, [], |a, b| a.atan2(b);
            /// `sqrt(a² + b²)` without undue overflow.
            Hypot => "hypot", [hypot], Float, [], |a, b| a.hypot(b);
            /// `|a|` with the sign of `b`.
            Copysign => "copysign", [copysign], Float, [], |a, b| a.copysign(b);
            /// C's `fmod`: the remainder with the sign of the dividend;
            /// integer `fmod(a, 0)` gives 0.
            Fmod => "fmod", [fmod], Arith, [], |a, b| a % b;
            /// `ln(e^a + e^b)` without undue overflow.
            Logaddexp => "logaddexp", [logaddexp], Float, [], |a, b| {
                logaddexp(a, b, LN_2, |d| (-d).exp().ln_1p())
            };
            /// `log2(2^a + 2^b)` without undue overflow.
            Logaddexp2 => "logaddexp2", [logaddexp2], Float, [], |a, b| {
                logaddexp(a, b, 1.0, |d| (-d).exp2().ln_1p() * LOG2_E)
            };
            /// The Heaviside step of `a`: 0 below 0, 1 above, `b` at 0, NaN for NaN.
            Heaviside => "heaviside", [heaviside], Float, [], |a, b| match a {
                _ if a < 0.0 => 0.0,
                _ if a > 0.0 => 1.0,
                _ if a == 0.0 => b,
                _ => a,
            };
            /// The float after `a` in the direction of `b` (`b` when they are equal).
            Nextafter => "nextafter", [nextafter], Float, [], |a, b| nextafter(a, b);
            /// The greatest common divisor of `|a|` and `|b|` (`gcd(0, 0)`
            /// is 0, and `|MIN|` wraps as NumPy's does).
            Gcd => "gcd", [gcd], Integer, [], |a, _b| a;
            /// The least common multiple of `|a|` and `|b|` (0 when either
            /// is 0; wraps on overflow as NumPy's does).
            Lcm => "lcm", [lcm], Integer, [], |a, _b| a;
            /// `a & b` (bool is normalised to `logical_and`).
            BitwiseAnd => "bitwise_and", [bitwise_and], Bitwise, ["&"], |a, _b| a;
            /// `a | b` (bool is normalised to `logical_or`).
            BitwiseOr => "bitwise_or", [bitwise_or], Bitwise, ["|"], |a, _b| a;
            /// `a ^ b` (bool is normalised to `logical_xor`).
            BitwiseXor => "bitwise_xor", [bitwise_xor], Bitwise, ["^"], |a, _b| a;
            /// `a << b`; 0 when `b` is negative or at least the bit width (as NumPy).
            LeftShift => "left_shift", [left_shift], Bitwise, ["<<"], |a, _b| a;
            /// `a >> b` (arithmetic for signed types); when `b` is negative
            /// or at least the bit width, -1 for negative `a` and 0
            /// otherwise (as NumPy).
            RightShift => "right_shift", [right_shift], Bitwise, [">>"], |a, _b| a;
            /// lazyfuse's counter-based generator: Philox4x32-10 of counter
            /// `a` (words: its low and high halves, 0, 0) under key `b` (its
            /// low and high halves); the first two output words as one u64
            /// (u64 only after normalisation). What `random_uniform` and
            /// `random_normal` compute.
            Philox => "philox", [], Bitwise, [], |a, _b| a;
            /// One 32-bit word of the generator, four counters to a block:
            /// word `a % 4` of Philox4x32-10 of counter `a / 4` (words as
            /// `philox`'s) under key `b`, as a u64 below 2^32 (u64 only
            /// after normalisation). What `random_uniform` of f32, f16 and
            /// bf16 computes: a run of counters costs one block per four.
            PhiloxWord => "philox_word", [], Bitwise, [], |a, _b| a;
            /// Two 32-bit words of the generator, two counters to a block:
            /// words `2 * (a % 2)` (low) and `2 * (a % 2) + 1` (high) of
            /// Philox4x32-10 of counter `a / 2` (words as `philox`'s)
            /// under key `b` (u64 only after normalisation). What
            /// `random_uniform` of f64 and `random_normal` compute.
            PhiloxPair => "philox_pair", [], Bitwise, [], |a, _b| a;
        }
    };
}

/// What a binary operation takes and gives, after normalisation (both
/// operands of one dtype).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryClass {
    /// Integers and floats, keeping the dtype (`Div`: floats only).
    Arith,
    /// Any dtype, keeping it (`minimum`, `maximum`).
    Extreme,
    /// Any dtype, giving bool.
    Comparison,
    /// Bool to bool.
    Logical,
    /// Floats only (integers are cast to the smallest float holding them
    /// first, as NumPy's `arctan2`).
    Float,
    /// Integers only, bool excluded (`gcd`, `lcm`: NumPy has no loop for
    /// floats or for two bools).
    Integer,
    /// The bits of integers: bitwise operations, shifts, the generator.
    Bitwise,
}

/// `Some(symbol)` of the table's operator column, `None` where it is empty.
macro_rules! operator_of {
    () => {
        None
    };
    ($symbol:literal) => {
        Some($symbol)
    };
}

/// `Some(method)` of the table's method column, `None` where it is empty.
macro_rules! method_of {
    () => {
        None
    };
    ($method:ident) => {
        Some(stringify!($method))
    };
}

/// Defines [`BinaryOp`] from [`binary_table!`].
macro_rules! define_binary_op {
    ([] $($(#[$doc:meta])* $variant:ident => $numpy:literal, [$($method:ident)?], $class:ident, [$($symbol:literal)?], |$a:ident, $b:ident| $value:expr;)*) => {
        named_ops! {
            /// Element-wise operations of two operands of the same dtype
            /// (the table: `binary_table!` in `core/src/ops.rs`). What each
            /// takes and gives is its [`BinaryClass`].
            BinaryOp {
                $($(#[$doc])* $variant => $numpy,)*
            }
        }

        impl BinaryOp {
            /// What the operation takes and gives.
            pub const fn class(self) -> BinaryClass {
                match self {
                    $(BinaryOp::$variant => BinaryClass::$class,)*
                }
            }

            /// The name of the `Array`/`Expr` method that applies it
            /// (`None` for the generator, applied by `random_*`).
            pub const fn method(self) -> Option<&'static str> {
                match self {
                    $(BinaryOp::$variant => method_of!($($method)?),)*
                }
            }

            /// The operator spelling used when printing expressions (`+`,
            /// `//`, ...), or `None` for operations printed as calls.
            pub const fn symbol(self) -> Option<&'static str> {
                match self {
                    $(BinaryOp::$variant => operator_of!($($symbol)?),)*
                }
            }
        }
    };
}
crate::binary_table!(define_binary_op []);

impl BinaryOp {
    /// True for the comparisons, which give bool.
    pub const fn is_comparison(self) -> bool {
        matches!(self.class(), BinaryClass::Comparison)
    }

    /// True for the logical operations, defined on bool.
    pub const fn is_logical(self) -> bool {
        matches!(self.class(), BinaryClass::Logical)
    }

    /// True for the operations defined on floats only (integers are cast to
    /// the smallest float that holds them, as NumPy's `arctan2`).
    pub const fn is_float_only(self) -> bool {
        matches!(self.class(), BinaryClass::Float)
    }

    /// True for the operations defined on integers only, bool excluded
    /// (`gcd`, `lcm`: NumPy has no loop for floats or for two bools).
    pub const fn is_integer_only(self) -> bool {
        matches!(self.class(), BinaryClass::Integer)
    }

    /// True for the operations on the bits of integers: bitwise ones,
    /// shifts, and the Philox generator.
    pub const fn is_bitwise(self) -> bool {
        matches!(self.class(), BinaryClass::Bitwise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_table_gives_each_operation_one_class_method_and_operator() {
        let methods: Vec<&str> = BinaryOp::ALL.iter().filter_map(|op| op.method()).collect();
        let mut unique = methods.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), methods.len(), "a method named twice");
        // Only the generator's three forms have no method.
        assert_eq!(methods.len() + 3, BinaryOp::ALL.len());
        assert_eq!(BinaryOp::Philox.method(), None);
        assert_eq!(BinaryOp::PhiloxWord.method(), None);
        assert_eq!(BinaryOp::PhiloxPair.method(), None);
        let symbols: Vec<&str> = BinaryOp::ALL.iter().filter_map(|op| op.symbol()).collect();
        let mut distinct = symbols.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            symbols.len(),
            "an operator printed for two operations"
        );
        let comparisons = BinaryOp::ALL.iter().filter(|op| op.is_comparison()).count();
        assert_eq!(comparisons, 6);
        assert!(BinaryOp::Arctan2.is_float_only() && !BinaryOp::Div.is_float_only());
        assert!(BinaryOp::Gcd.is_integer_only() && BinaryOp::Philox.is_bitwise());
        assert_eq!(BinaryOp::FloorDiv.symbol(), Some("//"));
        assert_eq!(BinaryOp::Minimum.symbol(), None);
    }

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
