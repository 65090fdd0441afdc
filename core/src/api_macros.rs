//! Method lists shared by [`crate::Array`] and [`crate::Expr`], so that both
//! offer exactly the same element-wise vocabulary, from the tables of
//! unary and binary operations (`unary_table!` and `binary_table!` in
//! `ops.rs`).

/// Expands to the element-wise methods of a type that has
/// `apply_unary(&self, UnaryOp) -> Self` and
/// `apply_binary(&self, BinaryOp, $operand) -> Self`.
macro_rules! elementwise_methods {
    ($operand:ty) => {
        $crate::unary_table!(unary_methods []);
        $crate::binary_table!(binary_methods [$operand]);
    };
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

/// One method per line of `binary_table!` (`core/src/ops.rs`) that names
/// one, for a type that has `apply_binary(&self, BinaryOp, $operand) -> Self`.
macro_rules! binary_methods {
    ([$operand:ty] $($(#[$doc:meta])* $variant:ident => $numpy:literal, [$($method:ident)?], $class:ident, [$($symbol:literal)?], |$a:ident, $b:ident| $value:expr;)*) => {$(
        binary_method! { [$operand] [$(#[$doc])*] $variant [$($method)?] }
    )*};
}

/// The method of one line of `binary_table!`, if it names one.
macro_rules! binary_method {
    ([$operand:ty] [$(#[$doc:meta])*] $variant:ident []) => {};
    ([$operand:ty] [$(#[$doc:meta])*] $variant:ident [$method:ident]) => {
        $(#[$doc])*
        pub fn $method(&self, rhs: impl Into<$operand>) -> Self {
            self.apply_binary($crate::ops::BinaryOp::$variant, rhs.into())
        }
    };
}
