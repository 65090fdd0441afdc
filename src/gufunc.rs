//! Generalized ufuncs (Numba's `@guvectorize`) on arrays: a call is a lazy
//! user-kernel launch over the arguments flattened to `[loop elements,
//! core dimensions…]`, so inputs are uploaded once, outputs stay on the
//! device and element-wise work around the call fuses as it does around
//! any kernel launch.
//!
//! ```
//! use lazyfuse::{Context, GUfunc};
//!
//! let doubled = GUfunc::build("doubled", "(m,n)->(m,n)", &["void(f32[:,:], f32[:,:])"], |k, args| {
//!     let (arr, out) = (&args[0], &args[1]);
//!     k.for_range(0i64, arr.len(0), 1i64, |k, i| {
//!         k.for_range(0i64, arr.len(1), 1i64, |k, j| {
//!             k.store(out, (&i, &j), arr.at((&i, &j)) * 2.0)
//!         });
//!     });
//! })?;
//! let cx = Context::sim();
//! let a = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape(&[2, 2]);
//! let out = doubled.call(&[&a])?.remove(0); // lazy
//! assert_eq!(out.to_vec::<f32>()?, [2.0, 4.0, 6.0, 8.0]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use lazyfuse_core::{Array, DType, Error, Result};
use lazyfuse_kernel::{ArgValue, ArrayParam, GUfuncCall, KernelScope};

pub use lazyfuse_kernel::{CoreDim, Layout};

/// A generalized ufunc: a body over core dimensions applied to every
/// element of the loop dimensions (see the module documentation).
#[derive(Clone, Debug)]
pub struct GUfunc {
    built: lazyfuse_kernel::GUfunc,
}

impl GUfunc {
    /// Traces `body` once per Numba signature (`"void(f32[:,:], f32[:,:])"`,
    /// long names such as `float32` too) for `layout` as Numba writes it
    /// (`"(m,n),(n,p)->(m,p)"`). The body receives one [`ArrayParam`] per
    /// argument, inputs then outputs, holding its core dimensions only.
    /// Errors: a bad name, layout or signature (naming the column), ranks
    /// that disagree with the layout, or a body the kernel builder refuses.
    pub fn build(
        name: &str,
        layout: &str,
        signatures: &[&str],
        body: impl Fn(&mut KernelScope, &[ArrayParam]),
    ) -> Result<GUfunc> {
        lazyfuse_kernel::GUfunc::build(name, layout, signatures, body).map(|built| GUfunc { built })
    }

    /// The gufunc's name.
    pub fn name(&self) -> &str {
        self.built.name()
    }

    /// Its layout.
    pub fn layout(&self) -> &Layout {
        self.built.layout()
    }

    /// The builder's gufunc (its kernels, for code below the facade).
    pub fn built(&self) -> &lazyfuse_kernel::GUfunc {
        &self.built
    }

    /// Applies the gufunc to `inputs`, lazily: one new array per output,
    /// of the inputs' broadcast loop shape followed by its core. Errors:
    /// wrong arity, no signature for the inputs' dtypes, core sizes that
    /// disagree, loop shapes that do not broadcast.
    pub fn call(&self, inputs: &[&Array]) -> Result<Vec<Array>> {
        self.apply(inputs, None)
    }

    /// Numba's `out=`: applies the gufunc and re-binds each of `outputs` to
    /// its result ([`Array::assign`]). Each output must have the broadcast
    /// loop shape followed by its core, and its signature's dtype.
    pub fn call_into(&self, inputs: &[&Array], outputs: &[&Array]) -> Result<()> {
        let results = self.apply(inputs, Some(outputs))?;
        for (out, result) in outputs.iter().zip(&results) {
            out.assign(result)?;
        }
        Ok(())
    }

    fn apply<'a>(&self, inputs: &[&'a Array], outputs: Option<&[&'a Array]>) -> Result<Vec<Array>> {
        let op = || format!("gufunc '{}' ({})", self.name(), self.layout());
        for a in inputs.iter().chain(outputs.unwrap_or_default()) {
            a.check().map_err(|e| e.within(&op()))?;
        }
        let described = |arrays: &[&'a Array]| -> Vec<(DType, &'a [usize])> {
            arrays.iter().map(|a| (a.dtype(), a.shape())).collect()
        };
        let given_outputs = outputs.map(described);
        let call = self
            .built
            .prepare(&described(inputs), given_outputs.as_deref())?;
        let Some(first) = inputs.first() else {
            return Err(Error::internal(op(), "a gufunc call without inputs"));
        };
        let session = first.session();
        let mut args: Vec<Array> = inputs
            .iter()
            .zip(call.input_dtypes.iter().zip(&call.input_shapes))
            .map(|(a, (&dtype, shape))| {
                let cast = if a.dtype() == dtype {
                    (*a).clone()
                } else {
                    a.astype(dtype)
                };
                let broadcast = if cast.shape() == shape.as_slice() {
                    cast
                } else {
                    cast.broadcast_to(shape)
                };
                broadcast.reshape(&call.flat_shape(shape))
            })
            .collect();
        for (j, (&dtype, shape)) in call
            .output_dtypes
            .iter()
            .zip(&call.output_shapes)
            .enumerate()
        {
            let flat = call.flat_shape(shape);
            args.push(match outputs {
                Some(outputs) => outputs[j].reshape(&flat),
                None => session.empty(&flat, dtype),
            });
        }
        let launch = launch_args(&call, &args)?;
        let refs: Vec<&Array> = args.iter().collect();
        let results = session.launch_kernel(launch, &refs)?;
        Ok(results
            .iter()
            .zip(&call.output_shapes)
            .map(|(r, shape)| r.reshape(shape))
            .collect())
    }
}

fn launch_args(call: &GUfuncCall, args: &[Array]) -> Result<lazyfuse_core::KernelLaunch> {
    let values: Vec<ArgValue<'_>> = args
        .iter()
        .map(|a| ArgValue::Array {
            dtype: a.dtype(),
            shape: a.shape(),
        })
        .collect();
    call.prepare_launch(&values)
}
