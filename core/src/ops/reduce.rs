//! The built-in reductions and their scans: one table, `reduce_table!`,
//! from which [`ReduceOp`] and everything core knows of a reduction come.

use super::{canonical, BinaryOp};
use crate::{DType, Literal, Wide};
use std::fmt;

/// The one table of built-in reductions, shaped as `binary_table!`'s.
/// Each line gives the operation's variant, its NumPy name (the reduction:
/// `np.sum`, and the `Array` method family `sum`, `sum_axis`,
/// `sum_axes`), the name of its scan (NumPy's accumulation: `cumsum`),
/// the [`BinaryOp`] that combines two partial results, its [`ReduceClass`]
/// (the dtypes it accumulates in and returns) and its [`IdentityRule`]
/// (what it starts from). The doc comment serves the variant.
///
/// Everything core knows of a built-in reduction comes from here: the
/// enum, both names and their lookups (the C API's `lf_reduce` and the
/// Python package's `reduce` dispatch by them), the combiner, the typing
/// and the identities, which reductions and scans share (a scan is
/// `Op::Scan` of a [`ReduceOp`]: it combines with the same operation from
/// the same start, so it is a column here rather than a table of its
/// own). Backends that specialise an operation keep one line per
/// operation in an exhaustive match of their own (the CPU's
/// `reduce/table.rs`), so a new line fails to compile until each has one;
/// every other backend combines with [`ReduceOp::combiner`].
///
/// `reduce_table!(callback [args])` expands to `callback! { [args] lines }`
/// (exported as the other tables are; not a public API).
#[doc(hidden)]
#[macro_export]
macro_rules! reduce_table {
    ($callback:ident [$($args:tt)*]) => {
        $callback! { [$($args)*]
            /// Sum (pairwise for floats, or better).
            Sum => "sum", "cumsum", Add, Arith, Zero;
            /// Product.
            Prod => "prod", "cumprod", Mul, Arith, One;
            /// Minimum, NaN-propagating; undefined on an empty extent.
            Min => "min", "cummin", Minimum, Extreme, Greatest;
            /// Maximum, NaN-propagating; undefined on an empty extent.
            Max => "max", "cummax", Maximum, Extreme, Least;
        }
    };
}

/// What a reduction accumulates in and returns (NumPy's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceClass {
    /// Arithmetic: bool and integers accumulate in and give i64 (u64 for
    /// unsigned); floats keep their dtype (f16 and bf16 accumulate in
    /// f32). `sum`, `prod`.
    Arith,
    /// One of the operands, NaN-propagating: the dtype is kept. `min`,
    /// `max`.
    Extreme,
}

/// The value a reduction starts from: its operation's neutral element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdentityRule {
    /// 0 (NumPy's identity; a float sum that must keep a lone -0.0's sign
    /// starts from -0.0, see [`ReduceOp::scan_start`]).
    Zero,
    /// 1 (NumPy's identity).
    One,
    /// The dtype's greatest value (+∞, `true`): neutral, but not NumPy's
    /// identity, so an empty extent is an error.
    Greatest,
    /// The dtype's least value (-∞, `false`), as [`IdentityRule::Greatest`].
    Least,
}

/// Defines [`ReduceOp`] from [`reduce_table!`].
macro_rules! define_reduce_op {
    ([] $($(#[$doc:meta])* $variant:ident => $numpy:literal, $scan:literal, $combiner:ident, $class:ident, $identity:ident;)*) => {
        named_ops! {
            /// Built-in reductions (the table: `reduce_table!` in
            /// `core/src/ops/reduce.rs`). The operand is already in the
            /// accumulator dtype (promotion inserted the casts); the
            /// result has the same dtype. Scans (`cumsum`, ...) are
            /// `Op::Scan` of one of these.
            ReduceOp {
                $($(#[$doc])* $variant => $numpy,)*
            }
        }

        impl ReduceOp {
            /// The name of the operation's scan (`"cumsum"`, ...).
            pub const fn scan_name(self) -> &'static str {
                match self {
                    $(ReduceOp::$variant => $scan,)*
                }
            }

            /// The element-wise operation that combines two partial results.
            pub const fn combiner(self) -> BinaryOp {
                match self {
                    $(ReduceOp::$variant => BinaryOp::$combiner,)*
                }
            }

            /// What the operation accumulates in and returns.
            pub const fn class(self) -> ReduceClass {
                match self {
                    $(ReduceOp::$variant => ReduceClass::$class,)*
                }
            }

            /// What the operation starts from.
            pub const fn identity_rule(self) -> IdentityRule {
                match self {
                    $(ReduceOp::$variant => IdentityRule::$identity,)*
                }
            }
        }
    };
}
crate::reduce_table!(define_reduce_op []);

impl ReduceOp {
    /// Looks an operation up by the name of its scan (`"cumsum"`, ...).
    pub fn from_scan_name(name: &str) -> Option<ReduceOp> {
        Self::ALL.iter().copied().find(|op| op.scan_name() == name)
    }

    /// The neutral element in `dtype`: 0, 1, or the largest (smallest)
    /// value for a minimum (maximum), `±inf` for floats.
    pub fn identity(self, dtype: DType) -> Literal {
        let wide = match (self.identity_rule(), dtype.int_range()) {
            (IdentityRule::Zero, _) => Wide::Int(0),
            (IdentityRule::One, _) => Wide::Int(1),
            (IdentityRule::Greatest, Some((_, max))) => Wide::Int(max),
            (IdentityRule::Least, Some((min, _))) => Wide::Int(min),
            (IdentityRule::Greatest, None) if dtype.is_bool() => Wide::Int(1),
            (IdentityRule::Least, None) if dtype.is_bool() => Wide::Int(0),
            (IdentityRule::Greatest, None) => Wide::Float(f64::INFINITY),
            (IdentityRule::Least, None) => Wide::Float(f64::NEG_INFINITY),
        };
        Literal::cast_from(wide, dtype)
    }

    /// NumPy's identity in `dtype`: what an empty extent reduces to, or
    /// `None` where NumPy has none (`min`, `max`: an empty extent is an
    /// error).
    pub fn numpy_identity(self, dtype: DType) -> Option<Literal> {
        match self.identity_rule() {
            IdentityRule::Zero | IdentityRule::One => Some(self.identity(dtype)),
            IdentityRule::Greatest | IdentityRule::Least => None,
        }
    }

    /// The value a scan (or a block of a reduction) starts from in
    /// `dtype`, as an f64 that converts to it (saturating for integers):
    /// the identity, except -0.0 for float zeros, which keeps the sign of
    /// a lone -0.0 (0.0 + -0.0 would not); ±inf for the extremes.
    pub fn scan_start(self, dtype: DType) -> f64 {
        match (self.identity_rule(), dtype.is_float()) {
            (IdentityRule::Zero, true) => -0.0,
            (IdentityRule::Zero, false) => 0.0,
            (IdentityRule::One, _) => 1.0,
            (IdentityRule::Greatest, _) => f64::INFINITY,
            (IdentityRule::Least, _) => f64::NEG_INFINITY,
        }
    }

    /// True for the extremes (`min`, `max`): they select an operand, keep
    /// the dtype and propagate NaN.
    pub const fn is_extreme(self) -> bool {
        matches!(self.class(), ReduceClass::Extreme)
    }
}

/// The extreme an arg-reduction finds: `argmax`'s or `argmin`'s
/// (`Op::ArgReduce`). Its own type, so that no arg-reduction can be asked
/// for a sum, and every match on it names both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgExtreme {
    /// The smallest element (`argmin`).
    Min,
    /// The largest element (`argmax`).
    Max,
}

impl ArgExtreme {
    /// The reduction that finds the extreme's value.
    pub const fn reduce_op(self) -> ReduceOp {
        match self {
            ArgExtreme::Min => ReduceOp::Min,
            ArgExtreme::Max => ReduceOp::Max,
        }
    }

    /// The extreme `op` finds, when it finds one (`min`, `max`).
    pub const fn of(op: ReduceOp) -> Option<ArgExtreme> {
        match op {
            ReduceOp::Min => Some(ArgExtreme::Min),
            ReduceOp::Max => Some(ArgExtreme::Max),
            ReduceOp::Sum | ReduceOp::Prod => None,
        }
    }

    /// `"min"` or `"max"` (`argmin`, `argmax` without the prefix).
    pub const fn name(self) -> &'static str {
        self.reduce_op().name()
    }

    /// The comparison by which a later value is strictly more extreme than
    /// an earlier one (`Gt` for the maximum): the first extreme is kept.
    pub const fn beyond(self) -> BinaryOp {
        match self {
            ArgExtreme::Min => BinaryOp::Lt,
            ArgExtreme::Max => BinaryOp::Gt,
        }
    }

    /// Whether `candidate` is strictly more extreme than `best`.
    #[inline(always)]
    pub fn beats<T: PartialOrd>(self, candidate: T, best: T) -> bool {
        match self {
            ArgExtreme::Min => candidate < best,
            ArgExtreme::Max => candidate > best,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::Arithmetic;

    /// Names and scan names are distinct and name no element-wise
    /// operation, so a name dispatch (C, Python) finds one thing; the
    /// identity of each is neutral for its combiner.
    /// `combiner(identity, x)` is `x` for a few `T` values.
    fn neutral<T: Arithmetic + PartialEq + fmt::Debug>(op: ReduceOp) {
        let start = T::from_wide(op.identity(T::DTYPE).to_wide());
        for x in [-3.5, 0.0, 2.0, f64::INFINITY] {
            let x = T::from_wide(Wide::Float(x));
            assert_eq!(T::binary(op.combiner(), start, x), x, "{op} of {x:?}");
        }
    }

    #[test]
    fn the_reduce_table_gives_each_operation_its_own_names_and_a_neutral_start() {
        let mut names: Vec<&str> = ReduceOp::ALL.iter().map(|op| op.name()).collect();
        names.extend(ReduceOp::ALL.iter().map(|op| op.scan_name()));
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a name given twice");
        for &op in ReduceOp::ALL {
            assert_eq!(ReduceOp::from_name(op.name()), Some(op));
            assert_eq!(ReduceOp::from_scan_name(op.scan_name()), Some(op));
            assert!(super::super::BinaryOp::from_name(op.name()).is_none());
            let combiner = op.combiner();
            assert!(!combiner.is_comparison() && !combiner.is_logical(), "{op}");
            neutral::<f64>(op);
            neutral::<f32>(op);
            neutral::<i32>(op);
            neutral::<u8>(op);
        }
        assert_eq!(
            ReduceOp::Sum.numpy_identity(DType::I64),
            Some(Literal::of(0i64))
        );
        assert_eq!(ReduceOp::Max.numpy_identity(DType::I64), None);
        assert!(ReduceOp::Min.is_extreme() && !ReduceOp::Prod.is_extreme());
    }
}
