//! User ufuncs (Numba's `@vectorize`): a closure over `Expr`s, traced once,
//! then built into the graph at each call and fused like any operation.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::array::Array;
use crate::dtype::{can_cast_safely, DType};
use crate::error::{Error, Result};
use crate::session::Session;
use crate::shape::format_shape;
use crate::trace::{record, Expr, Trace};

/// A Numba-style type signature: `"f32(f32, f32)"` is two f32 inputs giving f32.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    /// Input dtypes, in argument order.
    pub inputs: Vec<DType>,
    /// Result dtype.
    pub output: DType,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inputs: Vec<&str> = self.inputs.iter().map(|d| d.short_name()).collect();
        write!(f, "{}({})", self.output, inputs.join(","))
    }
}

impl FromStr for Signature {
    type Err = Error;

    /// Parses `"out(in, in, ...)"` with short (`f32`) or NumPy (`float32`) names.
    fn from_str(text: &str) -> Result<Signature> {
        let bad = |why: String| {
            Error::invalid(
                "signature",
                format!("cannot parse '{text}': {why} (expected e.g. \"f32(f32,f32)\")"),
            )
        };
        let open = text.find('(').ok_or_else(|| bad("no '('".into()))?;
        let inner = text[open + 1..]
            .trim_end()
            .strip_suffix(')')
            .ok_or_else(|| bad("no closing ')'".into()))?;
        let output = text[..open]
            .parse::<DType>()
            .map_err(|e| bad(e.to_string()))?;
        let inputs = if inner.trim().is_empty() {
            Vec::new()
        } else {
            inner
                .split(',')
                .map(|t| t.parse::<DType>().map_err(|e| bad(e.to_string())))
                .collect::<Result<Vec<_>>>()?
        };
        Ok(Signature { inputs, output })
    }
}

/// A user-defined element-wise function, traced from a closure over [`Expr`]s.
///
/// ```
/// # use lazyfuse_core::{Expr, Ufunc};
/// let disc = Ufunc::new("discriminant", |[a, b, c]: [Expr; 3]| (b * b - 4.0 * a * c).sqrt());
/// let disc = disc.with_signatures(&["f32(f32,f32,f32)", "f64(f64,f64,f64)"]).unwrap();
/// assert_eq!(disc.arity(), 3);
/// ```
#[derive(Clone)]
pub struct Ufunc {
    inner: Arc<UfuncInner>,
}

struct UfuncInner {
    name: String,
    arity: usize,
    trace: Result<Trace>,
    signatures: Vec<Signature>,
}

impl fmt::Debug for Ufunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ufunc")
            .field("name", &self.inner.name)
            .field("arity", &self.inner.arity)
            .field("signatures", &self.inner.signatures)
            .finish()
    }
}

impl Ufunc {
    /// Traces `f` once on `N` symbolic arguments. Errors in the closure
    /// (such as an `Expr` from another closure) are reported when called.
    pub fn new<const N: usize>(name: &str, f: impl FnOnce([Expr; N]) -> Expr) -> Ufunc {
        let context = format!("ufunc '{name}'");
        Ufunc {
            inner: Arc::new(UfuncInner {
                name: name.to_string(),
                arity: N,
                trace: record(&context, f),
                signatures: Vec::new(),
            }),
        }
    }

    /// A ufunc from an expression string over the named arguments
    /// (numexpr style): numbers, names, `+ - * / // % **`, comparisons,
    /// `& | ~`, unary minus, parentheses and calls of the built-in functions
    /// (`sqrt`, `exp`, `log`, `sin`, `cos`, `tanh`, `abs`, `minimum`,
    /// `maximum`, `where`, ... — every unary and binary operation by its
    /// NumPy name). Errors name the column:
    ///
    /// ```
    /// # use lazyfuse_core::Ufunc;
    /// let err = Ufunc::parse("d", "sqrt(b*b - 4*a*c", &["a", "b", "c"]).unwrap_err();
    /// assert!(err.to_string().contains("expected ')' at column 17"));
    /// ```
    pub fn parse(name: &str, expr: &str, arg_names: &[&str]) -> Result<Ufunc> {
        let context = format!("ufunc '{name}'");
        for (i, arg) in arg_names.iter().enumerate() {
            let valid = arg
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && arg.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !valid || arg_names[..i].contains(arg) {
                return Err(Error::invalid(
                    context,
                    format!("argument name '{arg}' is not a distinct identifier"),
                ));
            }
        }
        let mut failure = None;
        let trace =
            crate::trace::record_dyn(
                &context,
                arg_names.len(),
                |params| match crate::parse::parse(expr, arg_names, params) {
                    Ok(e) => e,
                    Err(e) => {
                        failure = Some(e);
                        params.first().copied().unwrap_or_else(Expr::select_stray)
                    }
                },
            );
        if let Some(e) = failure {
            return Err(e.within(&context));
        }
        Ok(Ufunc {
            inner: Arc::new(UfuncInner {
                name: name.to_string(),
                arity: arg_names.len(),
                trace: Ok(trace?),
                signatures: Vec::new(),
            }),
        })
    }

    /// The same function restricted to Numba-style signatures such as
    /// `"f32(f32,f32)"`: a call uses the first signature all its arguments
    /// cast to safely, casts them, and casts the result to its output type.
    pub fn with_signatures(&self, signatures: &[&str]) -> Result<Ufunc> {
        let parsed = signatures
            .iter()
            .map(|s| s.parse::<Signature>())
            .collect::<Result<Vec<_>>>()?;
        if let Some(bad) = parsed.iter().find(|s| s.inputs.len() != self.inner.arity) {
            return Err(Error::invalid(
                format!("ufunc '{}'", self.inner.name),
                format!(
                    "signature {bad} has {} inputs (expected {}, the function's arity)",
                    bad.inputs.len(),
                    self.inner.arity
                ),
            ));
        }
        Ok(Ufunc {
            inner: Arc::new(UfuncInner {
                name: self.inner.name.clone(),
                arity: self.inner.arity,
                trace: self.inner.trace.clone(),
                signatures: parsed,
            }),
        })
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Number of arguments.
    pub fn arity(&self) -> usize {
        self.inner.arity
    }

    /// The declared signatures (empty: any dtypes, promoted as NumPy).
    pub fn signatures(&self) -> &[Signature] {
        &self.inner.signatures
    }

    /// Applies the function element-wise, with broadcasting (lazy). Arity and
    /// signature mismatches give an invalid array, reported at demand.
    pub fn call(&self, args: &[&Array]) -> Array {
        let Some(first) = args.first() else {
            return Array::built(&Session::detached(), Err(self.arity_error(0)));
        };
        let session = first.session();
        Array::built(session, self.build(session, args))
    }

    /// Numba's and NumPy's `out=`: applies the function and re-binds `out`
    /// to the result ([`Array::assign`]), the arguments broadcast to `out`'s
    /// shape and the result cast to its dtype where that is safe. Errors:
    /// those of [`Ufunc::call`], a result that does not broadcast to `out`'s
    /// shape, or a dtype that does not cast safely to `out`'s.
    pub fn call_into(&self, args: &[&Array], out: &Array) -> Result<()> {
        let result = self.call(args);
        result.check()?;
        let op = self.context();
        let result = if result.shape() == out.shape() {
            result
        } else if crate::shape::broadcasts_to(result.shape(), out.shape()) {
            result.broadcast_to(out.shape())
        } else {
            return Err(Error::ShapeMismatch {
                op,
                message: format!(
                    "the result has shape {} which does not broadcast to the output's shape {}",
                    crate::shape::format_shape(result.shape()),
                    crate::shape::format_shape(out.shape())
                ),
            });
        };
        let result = if result.dtype() == out.dtype() {
            result
        } else if crate::can_cast_safely(result.dtype(), out.dtype()) {
            result.astype(out.dtype())
        } else {
            return Err(Error::dtype(
                op,
                format!(
                    "the result is {} and cannot be cast safely to the {} output",
                    result.dtype(),
                    out.dtype()
                ),
            ));
        };
        out.assign(&result)
    }

    fn context(&self) -> String {
        format!("ufunc '{}'", self.inner.name)
    }

    fn arity_error(&self, got: usize) -> Error {
        Error::invalid(
            self.context(),
            format!("takes {} arguments (got {got})", self.inner.arity),
        )
    }

    fn build(&self, session: &Session, args: &[&Array]) -> Result<Arc<crate::node::Node>> {
        if args.len() != self.inner.arity {
            return Err(self.arity_error(args.len()));
        }
        for a in args {
            a.check()?;
        }
        let trace = self.inner.trace.as_ref().map_err(Clone::clone)?;
        let result = if self.inner.signatures.is_empty() {
            let owned: Vec<Array> = args.iter().map(|a| (*a).clone()).collect();
            trace.replay(session, &owned)
        } else {
            let signature = self.dispatch(args)?;
            let cast: Vec<Array> = args
                .iter()
                .zip(&signature.inputs)
                .map(|(a, &d)| a.astype(d))
                .collect();
            trace.replay(session, &cast).astype(signature.output)
        };
        result.check().map_err(|e| e.within(&self.context()))?;
        Ok(result.node())
    }

    /// The first signature every argument casts to safely.
    fn dispatch(&self, args: &[&Array]) -> Result<&Signature> {
        self.inner
            .signatures
            .iter()
            .find(|s| {
                args.iter()
                    .zip(&s.inputs)
                    .all(|(a, &d)| can_cast_safely(a.dtype(), d))
            })
            .ok_or_else(|| {
                let given: Vec<String> = args
                    .iter()
                    .map(|a| format!("{}{}", a.dtype(), format_shape(a.shape())))
                    .collect();
                let known: Vec<String> = self
                    .inner
                    .signatures
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                Error::DTypeMismatch {
                    op: self.context(),
                    message: format!(
                        "no signature matches the arguments ({}) \
                         (expected arguments that cast safely to one of: {})",
                        given.join(", "),
                        known.join(", ")
                    ),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse() {
        let s: Signature = "f32(f32, float32,i8)".parse().unwrap();
        assert_eq!(s.inputs, vec![DType::F32, DType::F32, DType::I8]);
        assert_eq!(s.output, DType::F32);
        assert_eq!(s.to_string(), "f32(f32,f32,i8)");
        assert!("f32(f32".parse::<Signature>().is_err());
        assert!("x(f32)".parse::<Signature>().is_err());
    }
}
