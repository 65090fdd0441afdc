//! The constructors of arrays on a [`Session`], and the calls that take
//! arrays: the array side of a session. (The session itself knows nodes
//! and the engine, not `Array`.)

use std::sync::Arc;

use smallvec::SmallVec;

use super::Array;
use crate::dtype::DType;
use crate::element::{Element, HostBuffer, SliceMut, Wide};
use crate::error::{Error, Result};
use crate::kernel::KernelLaunch;
use crate::node::{KernelCall, Node, Op};
use crate::scalar::{Literal, Scalar};
use crate::session::{check_size, Session};
use crate::shape::{checked_len, format_shape, Shape};

impl Session {
    pub(crate) fn wrap(&self, node: Arc<Node>) -> Array {
        Array::from_parts(node, self.clone())
    }

    pub(super) fn invalid(&self, error: Error) -> Array {
        self.wrap(Node::invalid(error))
    }

    /// A 1-D array holding a copy of `data` (all of a pinned buffer,
    /// [`Session::pinned`], is shared instead: uploads read it in place).
    pub fn from_slice<T: Element>(&self, data: &[T]) -> Array {
        let shape = Shape::from_slice(&[data.len()]);
        if let Some(pinned) = self.pinned_buffer_of(data) {
            // All of a pinned buffer: shared, not copied (PinnedBuf copies
            // on write while arrays share it).
            return self.wrap(Node::source_shared(pinned, shape));
        }
        self.count_host_copy(std::mem::size_of_val(data));
        self.wrap(Node::source(T::into_buffer(data.to_vec()), shape))
    }

    /// An array of `shape` (row-major) owning `data`; errors if the element
    /// count differs from the shape's.
    pub fn from_vec<T: Element>(&self, data: Vec<T>, shape: &[usize]) -> Result<Array> {
        match checked_len(shape) {
            Some(n) if n == data.len() => {
                Ok(self.wrap(Node::source(T::into_buffer(data), Shape::from_slice(shape))))
            }
            _ => Err(Error::shape(
                "from_vec",
                format!(
                    "{} elements cannot have shape {} (expected {} elements)",
                    data.len(),
                    format_shape(shape),
                    checked_len(shape).map_or("too many".to_string(), |n| n.to_string())
                ),
            )),
        }
    }

    /// An array taking ownership of a host buffer.
    pub fn from_buffer(&self, buffer: HostBuffer, shape: &[usize]) -> Result<Array> {
        self.source_over("from_buffer", Arc::new(buffer), shape)
    }

    /// An array over `buffer` itself, shared with its other holders (no
    /// copy): a value computed before, handed out read-only and taken back
    /// (Python's `lf.asarray(np.asarray(y))`). Values never change, so a
    /// shared buffer is never written.
    pub fn from_shared(&self, buffer: Arc<HostBuffer>, shape: &[usize]) -> Result<Array> {
        self.source_over("from_shared", buffer, shape)
    }

    /// A source array over `buffer` of `shape`; an error naming `op` when
    /// their lengths differ.
    fn source_over(&self, op: &str, buffer: Arc<HostBuffer>, shape: &[usize]) -> Result<Array> {
        if checked_len(shape) != Some(buffer.len()) {
            return Err(Error::shape(
                op,
                format!(
                    "{} elements cannot have shape {}",
                    buffer.len(),
                    format_shape(shape)
                ),
            ));
        }
        Ok(self.wrap(Node::source_shared(buffer, Shape::from_slice(shape))))
    }

    /// An array of `shape` filled with `value` cast to `dtype` (lazy: nothing
    /// is allocated until a plan needs it). Integers out of an integer
    /// dtype's range are an error, as in NumPy 2; floats are truncated.
    pub fn full(&self, shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Array {
        let value = value.into();
        let literal = match value {
            Scalar::Float(v) if dtype.is_integer() => Ok(Literal::cast_from(Wide::Float(v), dtype)),
            _ => value.to_literal("full", dtype),
        };
        match literal {
            Ok(literal) => self.generator(Op::Fill(literal), dtype, shape, "full"),
            Err(e) => self.invalid(e),
        }
    }

    /// Zeros of `shape` and `dtype`.
    pub fn zeros(&self, shape: &[usize], dtype: DType) -> Array {
        self.full(shape, 0, dtype)
    }

    /// Ones of `shape` and `dtype`.
    pub fn ones(&self, shape: &[usize], dtype: DType) -> Array {
        self.full(shape, 1, dtype)
    }

    /// A destination of `shape` and `dtype` whose contents are unspecified
    /// (NumPy's `empty`, Numba's `device_array`): never undefined behaviour —
    /// lazyfuse gives zeros, generated where they are read, so nothing is
    /// allocated or copied until a plan needs it.
    pub fn empty(&self, shape: &[usize], dtype: DType) -> Array {
        self.zeros(shape, dtype)
    }

    /// [`Session::empty`] of `like`'s shape and dtype (Numba's `device_array_like`).
    pub fn empty_like(&self, like: &Array) -> Array {
        self.like(like, |cx, shape, dtype| cx.empty(shape, dtype))
    }

    /// Zeros of `like`'s shape and dtype.
    pub fn zeros_like(&self, like: &Array) -> Array {
        self.like(like, |cx, shape, dtype| cx.zeros(shape, dtype))
    }

    /// Ones of `like`'s shape and dtype.
    pub fn ones_like(&self, like: &Array) -> Array {
        self.like(like, |cx, shape, dtype| cx.ones(shape, dtype))
    }

    /// `value` (cast as [`Session::full`] casts) of `like`'s shape and dtype.
    pub fn full_like(&self, like: &Array, value: impl Into<Scalar>) -> Array {
        let value = value.into();
        self.like(like, |cx, shape, dtype| cx.full(shape, value, dtype))
    }

    /// `make(shape, dtype)` of `like`, or `like`'s error.
    fn like(&self, like: &Array, make: impl FnOnce(&Session, &[usize], DType) -> Array) -> Array {
        match like.check() {
            Ok(()) => make(self, like.shape(), like.dtype()),
            Err(e) => self.invalid(e),
        }
    }

    /// `start, start + step, ...` below `stop` (above, for a negative step),
    /// computed in f64 and cast to `dtype`; generated where it is used.
    pub fn arange(&self, start: f64, stop: f64, step: f64, dtype: DType) -> Array {
        let count = (stop - start) / step;
        if step == 0.0 || !count.is_finite() && !count.is_nan() || start.is_nan() || stop.is_nan() {
            return self.invalid(Error::invalid(
                "arange",
                format!(
                    "cannot step from {start} to {stop} by {step} (expected a finite, non-zero step)"
                ),
            ));
        }
        let len = if count > 0.0 { count.ceil() } else { 0.0 };
        if len > usize::MAX as f64 / 16.0 {
            return self.invalid(Error::invalid(
                "arange",
                format!("{len} elements is too many"),
            ));
        }
        self.generator(Op::Arange { start, step }, dtype, &[len as usize], "arange")
    }

    /// `num` evenly spaced values from `start` to `stop` inclusive (NumPy's
    /// `linspace` with its arithmetic: `i * step + start` in f64, the last
    /// exactly `stop`, floored for integer dtypes), cast to `dtype`;
    /// generated where it is used.
    pub fn linspace(&self, start: f64, stop: f64, num: usize, dtype: DType) -> Array {
        let index = self.arange(0.0, num as f64, 1.0, DType::F64);
        let div = num.saturating_sub(1);
        let delta = stop - start;
        let values = if div == 0 {
            index * delta + start
        } else {
            let step = delta / div as f64;
            let scaled = if step == 0.0 {
                &index / div as f64 * delta
            } else {
                &index * step
            };
            index.eq(div as f64).where_(stop, scaled + start)
        };
        // NumPy 2 rounds toward -∞ for integer dtypes.
        let values = if dtype.is_integer() {
            values.floor()
        } else {
            values
        };
        values.astype(dtype)
    }

    /// The `n × n` identity matrix of `dtype`; generated where it is used.
    pub fn eye(&self, n: usize, dtype: DType) -> Array {
        let index = self.arange(0.0, n as f64, 1.0, DType::I64);
        index
            .reshape(&[n, 1])
            .eq(index.reshape(&[1, n]))
            .astype(dtype)
    }

    fn generator(&self, op: Op, dtype: DType, shape: &[usize], name: &str) -> Array {
        if let Err(e) = check_size(name, shape, dtype) {
            return self.invalid(e);
        }
        self.wrap(Node::new(
            op,
            dtype,
            Shape::from_slice(shape),
            SmallVec::new(),
        ))
    }

    /// [`Array::explain`] of several arrays demanded together (as
    /// [`Session::eval`] computes them): one graph, one plan. Runs nothing.
    pub fn explain(&self, arrays: &[&Array]) -> String {
        super::explain_together(self, arrays)
    }

    /// Computes several arrays in one plan (inputs they share are read or
    /// uploaded once) and keeps their values.
    pub fn eval(&self, arrays: &[&Array]) -> Result<()> {
        let mut nodes = Vec::with_capacity(arrays.len());
        for a in arrays {
            if !a.session().same_as(self) {
                return Err(Error::invalid(
                    "eval",
                    "an array belongs to another context (expected arrays of this context)",
                ));
            }
            nodes.push(a.node());
        }
        self.demand(&nodes)?;
        arrays.iter().for_each(|a| a.forget_history());
        Ok(())
    }

    /// Computes several arrays into the caller's memory (`outs[i]` for
    /// `arrays[i]`, each of its array's dtype and length) in one program:
    /// work they share runs once, and on the CPU a program whose last
    /// kernel writes them all writes them straight into `outs`, keeping
    /// nothing. Python's `lazyfuse.compute` reads into new NumPy arrays
    /// this way.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use lazyfuse_core::{Options, ReferenceEngine, Session, SliceMut};
    /// let cx = Session::new(Arc::new(ReferenceEngine::new()), Options::default());
    /// let x = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    /// let (mut twice, mut squares) = (vec![0.0f32; 3], vec![0.0f32; 3]);
    /// cx.read_all_into(
    ///     &[&(&x * 2.0), &(&x * &x)],
    ///     vec![SliceMut::F32(&mut twice), SliceMut::F32(&mut squares)],
    /// )?;
    /// assert_eq!((twice, squares), (vec![2.0, 4.0, 6.0], vec![1.0, 4.0, 9.0]));
    /// # Ok::<(), lazyfuse_core::Error>(())
    /// ```
    pub fn read_all_into(&self, arrays: &[&Array], outs: Vec<SliceMut<'_>>) -> Result<()> {
        if arrays.len() != outs.len() {
            return Err(Error::invalid(
                "read_all_into",
                format!(
                    "{} arrays and {} destinations (expected one destination per array)",
                    arrays.len(),
                    outs.len()
                ),
            ));
        }
        let mut nodes = Vec::with_capacity(arrays.len());
        for (i, (a, out)) in arrays.iter().zip(&outs).enumerate() {
            if !a.session().same_as(self) {
                return Err(Error::invalid(
                    "read_all_into",
                    "an array belongs to another context (expected arrays of this context)",
                ));
            }
            if out.dtype() != a.dtype() || out.len() != a.len() {
                return Err(Error::invalid(
                    "read_all_into",
                    format!(
                        "destination {i} holds {} {} elements for an array of {} {} \
                         elements (expected its dtype and length)",
                        out.len(),
                        out.dtype(),
                        a.len(),
                        a.dtype()
                    ),
                ));
            }
            a.check()?;
            nodes.push(a.node());
        }
        self.read_all_into_nodes(&nodes, outs)
    }

    /// Launches a user kernel over `arrays` (its array arguments, in
    /// parameter order): lazily, returning one new array per written
    /// argument (`launch.written`), with that argument's dtype and shape.
    pub fn launch_kernel(&self, launch: KernelLaunch, arrays: &[&Array]) -> Result<Vec<Array>> {
        let name = launch.kernel.name().to_string();
        for a in arrays {
            if !a.session().same_as(self) {
                return Err(Error::invalid(
                    format!("kernel '{name}'"),
                    "an array belongs to another context (expected arrays of this context)",
                ));
            }
            a.check()?;
        }
        if let Some(&bad) = launch.written.iter().find(|&&w| w >= arrays.len()) {
            return Err(Error::internal(
                format!("kernel '{name}'"),
                format!("written argument {bad} of {} arrays", arrays.len()),
            ));
        }
        let launch = Arc::new(KernelCall::new(launch));
        let inputs: SmallVec<[Arc<Node>; 2]> = arrays.iter().map(|a| a.node()).collect();
        let nodes: Vec<Arc<Node>> = (0..launch.written.len())
            .map(|output| {
                let like = arrays[launch.written[output]];
                Node::new(
                    Op::Kernel {
                        launch: Arc::clone(&launch),
                        output,
                    },
                    like.dtype(),
                    Shape::from_slice(like.shape()),
                    inputs.clone(),
                )
            })
            .collect();
        launch.set_outputs(nodes.iter().map(Arc::downgrade).collect());
        Ok(nodes.into_iter().map(|n| self.wrap(n)).collect())
    }
}
