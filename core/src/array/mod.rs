//! `Array`: a lazy handle on a node of the expression DAG.
//!
//! Building never runs anything: methods only add nodes. An operation that
//! cannot be built (shapes that do not broadcast, a bad axis, ...) returns an
//! invalid array that carries the error; [`Array::check`] or any demand
//! reports it, and every array built on it reports the same error, while
//! sibling expressions stay valid. Only the demand methods (`to_vec`, `item`,
//! `read_into`, `eval`, `to_device`) run the engine.

pub(crate) mod build;
mod constructors;
mod methods;
mod operators;
mod random;
mod scans;
mod statistics;

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use smallvec::SmallVec;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::format;
use crate::graph::ExprGraph;
use crate::node::{Node, Op};
use crate::scalar::Scalar;
use crate::session::Session;
use crate::shape::{format_shape, Shape};
use crate::DType;

/// A lazy n-dimensional array: a handle on a value. Cheap to clone (the
/// clone is a new handle on the same value).
///
/// Values never change; a handle can be re-bound to a new value of the same
/// shape and dtype ([`Array::assign`], a gufunc's or ufunc's `call_into`),
/// as Numba's `out=` arrays are written. Expressions built from the handle
/// before keep its old value, and so do its earlier clones.
pub struct Array {
    node: RwLock<Arc<Node>>,
    /// The shape and dtype of every value the handle holds (fixed when it
    /// is made: `assign` keeps them), read without the lock.
    shape: Shape,
    dtype: DType,
    session: Session,
}

impl Clone for Array {
    fn clone(&self) -> Array {
        Array {
            node: RwLock::new(self.node()),
            shape: self.shape.clone(),
            dtype: self.dtype,
            session: self.session.clone(),
        }
    }
}

/// An operand of an element-wise operation: an array or a (weak) Rust scalar.
#[derive(Clone, Debug)]
pub enum Operand {
    /// An array.
    Array(Array),
    /// A Rust scalar, weak in promotion (NEP 50).
    Scalar(Scalar),
}

impl From<&Array> for Operand {
    fn from(a: &Array) -> Operand {
        Operand::Array(a.clone())
    }
}

impl From<Array> for Operand {
    fn from(a: Array) -> Operand {
        Operand::Array(a)
    }
}

impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Operand {
        Operand::Scalar(s)
    }
}

macro_rules! operand_from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(value: $t) -> Operand {
                Operand::Scalar(Scalar::from(value))
            }
        }
    )*};
}
operand_from_scalar!(
    bool,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    f32,
    f64,
    half::f16,
    half::bf16
);

impl Array {
    pub(crate) fn from_parts(node: Arc<Node>, session: Session) -> Array {
        Array {
            shape: Shape::from_slice(node.shape()),
            dtype: node.dtype(),
            node: RwLock::new(node),
            session,
        }
    }

    /// The node of the value this handle holds now (for passes and engines).
    pub fn node(&self) -> Arc<Node> {
        self.with_node(Arc::clone)
    }

    /// `f` of the node, under the handle's read lock (no reference count
    /// taken).
    pub(crate) fn with_node<R>(&self, f: impl FnOnce(&Arc<Node>) -> R) -> R {
        f(&self.node.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Re-binds the handle to `value` (NumPy's `out[...] = value`, Numba's
    /// `out=`): later reads of the handle see `value`; expressions built
    /// from the handle before, and its earlier clones, keep the old value.
    /// Errors: either array is invalid, belongs to another context, or
    /// `value`'s shape or dtype differ from the handle's.
    pub fn assign(&self, value: &Array) -> Result<()> {
        self.check()?;
        value.check()?;
        if !value.session.same_as(&self.session) {
            return Err(Error::invalid(
                "assign",
                "the value belongs to another context (expected an array of the destination's context)",
            ));
        }
        if value.shape() != self.shape() {
            return Err(Error::ShapeMismatch {
                op: "assign".into(),
                message: format!(
                    "cannot assign a value of shape {} to an array of shape {} (expected equal shapes)",
                    format_shape(value.shape()),
                    format_shape(self.shape())
                ),
            });
        }
        if value.dtype() != self.dtype() {
            return Err(Error::dtype(
                "assign",
                format!(
                    "cannot assign a {} value to a {} array of shape {} (expected {}: astype first)",
                    value.dtype(),
                    self.dtype(),
                    format_shape(self.shape()),
                    self.dtype()
                ),
            ));
        }
        let new = value.node();
        *self.node.write().unwrap_or_else(PoisonError::into_inner) = new;
        Ok(())
    }

    /// The session (context) the array belongs to.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The shape. For an invalid array: `[]` (check with [`Array::check`]).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type. For an invalid array: `F32` (check with [`Array::check`]).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        crate::shape::len(self.shape())
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Validates the expression without running it: the error of the first
    /// invalid operation it was built from, if any.
    pub fn check(&self) -> Result<()> {
        self.with_node(|node| match node.error() {
            Some(e) => Err((**e).clone()),
            None => Ok(()),
        })
    }

    fn expect_dtype<T: Element>(&self, op: &str, what: &str) -> Result<()> {
        self.check()?;
        if T::DTYPE == self.dtype() {
            Ok(())
        } else {
            Err(Error::DTypeMismatch {
                op: op.to_string(),
                message: format!(
                    "the array has dtype {} (shape {}) but {} {} was requested \
                     (expected {op}::<{}>, or astype first)",
                    self.dtype(),
                    format_shape(self.shape()),
                    what,
                    T::DTYPE,
                    element_type_name(self.dtype()),
                ),
            })
        }
    }

    /// Computes the array and returns its elements in row-major order.
    /// Errors if `T` is not the array's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.expect_dtype::<T>("to_vec", "a Vec of")?;
        let host = self.session.host_value(&self.node())?;
        let values = typed::<T>(&host, "to_vec")?;
        self.session.count_host_copy(std::mem::size_of_val(values));
        Ok(values.to_vec())
    }

    /// Computes the array into the caller's buffer (Numba's
    /// `copy_to_host(ary)`). Errors if `T` is not the dtype or the length
    /// differs. An array not yet computed is computed straight into `out`
    /// where the backend can, and then not kept: call [`Array::eval`] first
    /// to keep it for later demands.
    pub fn read_into<T: Element>(&self, out: &mut [T]) -> Result<()> {
        self.expect_dtype::<T>("read_into", "a buffer of")?;
        if out.len() != self.len() {
            return Err(Error::ShapeMismatch {
                op: "read_into".into(),
                message: format!(
                    "the destination holds {} elements but the array has shape {} \
                     (expected {} elements)",
                    out.len(),
                    format_shape(self.shape()),
                    self.len()
                ),
            });
        }
        self.session.read_into(&self.node(), T::wrap_mut(out))
    }

    /// The only element of a size-1 array (any number of dimensions).
    pub fn item<T: Element>(&self) -> Result<T> {
        self.expect_dtype::<T>("item", "an item of")?;
        if self.len() != 1 {
            return Err(Error::InvalidArgument {
                op: "item".into(),
                message: format!(
                    "can only convert an array of size 1 to a scalar (got shape {}, {} elements)",
                    format_shape(self.shape()),
                    self.len()
                ),
            });
        }
        let host = self.session.host_value(&self.node())?;
        typed::<T>(&host, "item")?
            .first()
            .copied()
            .ok_or_else(|| Error::internal("item", "a size-1 array produced no element"))
    }

    /// Computes the array (keeping the value) and returns its host copy:
    /// row-major elements, downloaded from the device if needed.
    pub fn to_host(&self) -> Result<Arc<crate::HostBuffer>> {
        self.check()?;
        let value = self.session.host_value(&self.node())?;
        self.forget_history();
        Ok(value)
    }

    /// Computes the array and keeps the value (on the device, for device
    /// backends); later demands of it, or of expressions using it, reuse it.
    pub fn eval(&self) -> Result<()> {
        self.session.demand(&[self.node()])?;
        self.forget_history();
        Ok(())
    }

    /// After a demand: when the handle's node holds its value and still
    /// reads operands, the handle takes a source over the same value
    /// instead, so that what the operands hold (a Dask chunk behind a
    /// partial sum, an input behind its mean) is freed once nothing else
    /// reads it. Other handles and expressions on the old node keep it.
    pub(crate) fn forget_history(&self) {
        let node = self.node();
        if node.inputs().is_empty() || !node.is_materialized() {
            return;
        }
        let source = Node::new(
            Op::Source,
            node.dtype(),
            node.shape.clone(),
            SmallVec::new(),
        );
        source.set_residency(node.residency());
        let mut slot = self.node.write().unwrap_or_else(PoisonError::into_inner);
        // Unless another thread assigned the handle meanwhile.
        if Arc::ptr_eq(&slot, &node) {
            *slot = source;
        }
    }

    /// Computes the array if needed and copies it to the device now (Numba's
    /// `to_device`); later plans read the device copy. On a backend without
    /// device memory (cpu) the array is only computed.
    pub fn to_device(&self) -> Result<Array> {
        self.eval()?;
        let node = self.node();
        let residency = node.residency();
        if residency.device.is_none() {
            if let Some(device) = self
                .session
                .engine()
                .to_device(&residency, self.session.env())?
            {
                node.update_residency(|r| r.device = Some(device));
            }
        }
        Ok(self.clone())
    }

    /// True when a device copy of the value exists.
    pub fn is_on_device(&self) -> bool {
        self.with_node(|n| n.residency().device.is_some())
    }

    /// True when the value has been computed (or was given).
    pub fn is_materialized(&self) -> bool {
        self.with_node(|n| n.is_materialized())
    }

    /// The value's host copy, when it has been computed (or was given) and
    /// is held in host memory: its elements in row-major order, shared, not
    /// copied. Nothing writes a buffer another holder shares (a kernel
    /// writes a dying input in place only when nothing else holds it), so
    /// a holder may hand the memory out read-only (Python's `np.asarray`).
    /// Runs nothing.
    pub fn host_value(&self) -> Option<Arc<crate::element::HostBuffer>> {
        self.with_node(|n| {
            let host = n.is_materialized().then(|| n.residency().host).flatten()?;
            let dense = host.len() == n.shape.iter().product::<usize>() && host.dtype() == n.dtype;
            dense.then_some(host)
        })
    }

    /// A readable account of the expression: its graph and how the backend
    /// would run it. Runs nothing.
    pub fn explain(&self) -> String {
        explain_together(&self.session, &[self])
    }

    /// The expression graph in Graphviz dot syntax, each fused kernel drawn
    /// as a cluster on fusing backends. Runs nothing.
    pub fn to_dot(&self) -> String {
        let graph = ExprGraph::from_roots(&[self.node()]);
        self.session
            .engine()
            .dot(&graph, self.session.options())
            .unwrap_or_else(|| format::graph_dot(&graph))
    }
}

/// [`Array::explain`] of several arrays of `session` demanded together
/// (`Session::explain`).
pub(crate) fn explain_together(session: &Session, arrays: &[&Array]) -> String {
    for a in arrays {
        if let Err(e) = a.check() {
            return format!("invalid expression: {e}\n");
        }
        if !a.session().same_as(session) {
            return "invalid expression: arrays of two contexts\n".to_string();
        }
    }
    let roots: Vec<_> = arrays.iter().map(|a| a.node()).collect();
    let graph = ExprGraph::from_roots(&roots);
    let mut text = format::graph_listing(&graph);
    text.push_str(&format!("backend: {}\n", session.backend_name()));
    text.push_str(&session.engine().describe(&graph, session.options()));
    text
}

fn element_type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "half::f16",
        DType::BF16 => "half::bf16",
        other => other.short_name(),
    }
}

fn typed<'a, T: Element>(host: &'a crate::HostBuffer, op: &str) -> Result<&'a [T]> {
    host.as_slice::<T>().ok_or_else(|| {
        Error::internal(
            op,
            format!(
                "the engine produced {} data for a {} array",
                host.dtype(),
                T::DTYPE
            ),
        )
    })
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let node = self.node();
        match node.error() {
            Some(e) => write!(f, "Array(invalid: {e})"),
            None => write!(
                f,
                "Array({} {}, {}{})",
                self.dtype(),
                format_shape(self.shape()),
                node.op().name(),
                if self.is_materialized() {
                    ", materialised"
                } else {
                    ""
                }
            ),
        }
    }
}
