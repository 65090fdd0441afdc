//! Kernels and gufunc bodies written in Python (`@cuda.jit`,
//! `@guvectorize`): built by replaying their translated source
//! (`replay`) until the locals' dtypes settle, then launched or called.

use std::cell::RefCell;
use std::collections::HashMap;

use lazyfuse::kernel::{Kernel, KernelArg};
use lazyfuse::GUfunc;
use pyo3::prelude::*;

use crate::array::PyArr;
use crate::errors::to_py;
use crate::replay::{block, dtype, settle, Binding, Learned, Outcome, Replay};

/// A kernel built from Python source, for one set of argument types.
#[pyclass(name = "Kernel", module = "lazyfuse", frozen)]
pub(crate) struct PyKernel {
    inner: Kernel,
}

/// Builds the kernel `name` over `params` (`(name, dtype, ndim, written)`,
/// `ndim` < 0 for a scalar) from the translated `body`. The body is
/// replayed until every local is declared with the dtype of all the
/// values assigned to it (usually once; twice when a local widens or is
/// first assigned in a nested block).
#[pyfunction]
pub(crate) fn build_kernel(
    name: &str,
    params: Vec<(String, String, i64, bool)>,
    body: &Bound<'_, PyAny>,
) -> PyResult<PyKernel> {
    let inner = settle(1, |learned| {
        let (kernel, failure, outcome) = replay_kernel(name, &params, body, learned[0].clone());
        (kernel, failure, vec![outcome])
    })?;
    Ok(PyKernel { inner })
}

/// One replay of `body` on the kernel builder, given what an earlier one
/// learned.
fn replay_kernel(
    name: &str,
    params: &[(String, String, i64, bool)],
    body: &Bound<'_, PyAny>,
    learned: Learned,
) -> (lazyfuse::Result<Kernel>, Option<PyErr>, Outcome) {
    let mut failure = None;
    let mut outcome = Outcome::default();
    let kernel = Kernel::build(name, |k| {
        let mut bindings = HashMap::new();
        for (pname, dt, ndim, written) in params {
            let dt = match dtype(dt) {
                Ok(d) => d,
                Err(e) => {
                    failure = Some(e);
                    return;
                }
            };
            let binding = match (*ndim, *written) {
                (n, _) if n < 0 => Binding::Value(k.scalar(pname, dt)),
                (n, true) => Binding::Array(k.array_mut(pname, dt, n as usize)),
                (n, false) => Binding::Array(k.array(pname, dt, n as usize)),
            };
            bindings.insert(pname.clone(), binding);
        }
        let state = Replay::new(bindings, learned);
        block(&state, k, body);
        (outcome, failure) = Outcome::of(state.into_inner());
    });
    (kernel, failure, outcome)
}

#[pymethods]
impl PyKernel {
    /// Launches over `grid` blocks of `block` threads (each 1 to 3 ints);
    /// `args` are arrays or Python numbers, in parameter order. Returns the
    /// new values of the written arrays (lazy).
    fn launch(
        &self,
        grid: Vec<u32>,
        block: Vec<u32>,
        args: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyArr>> {
        launch_with(grid, block, &args, |session, grid, block, values| {
            self.inner.launch(session, grid, block, values)
        })
    }
}

/// A launch from Python: `grid` and `block` of 1 to 3 ints, `args` arrays
/// and numbers (ints as ints), run by `launch` on the first array's
/// session; the arrays it writes, wrapped.
pub(crate) fn launch_with(
    grid: Vec<u32>,
    block: Vec<u32>,
    args: &[Bound<'_, PyAny>],
    launch: impl FnOnce(
        &lazyfuse::Session,
        (u32, u32, u32),
        (u32, u32, u32),
        &[KernelArg<'_>],
    ) -> lazyfuse::Result<Vec<lazyfuse::Array>>,
) -> PyResult<Vec<PyArr>> {
    let dims = |d: &[u32]| -> PyResult<(u32, u32, u32)> {
        match d {
            [x] => Ok((*x, 1, 1)),
            [x, y] => Ok((*x, *y, 1)),
            [x, y, z] => Ok((*x, *y, *z)),
            _ => Err(pyo3::exceptions::PyValueError::new_err(
                "a grid or block is 1 to 3 ints",
            )),
        }
    };
    let (grid, block) = (dims(&grid)?, dims(&block)?);
    let arrays: Vec<Option<PyRef<'_, PyArr>>> = args
        .iter()
        .map(|a| a.downcast::<PyArr>().ok().map(|a| a.borrow()))
        .collect();
    let mut values = Vec::with_capacity(args.len());
    for (arg, array) in args.iter().zip(&arrays) {
        values.push(match array {
            Some(a) => KernelArg::Array(&a.inner),
            None => match arg.extract::<i64>() {
                Ok(i) if !arg.is_instance_of::<pyo3::types::PyFloat>() => KernelArg::from(i),
                _ => KernelArg::from(arg.extract::<f64>()?),
            },
        });
    }
    let Some(session) = arrays
        .iter()
        .flatten()
        .next()
        .map(|a| a.inner.session().clone())
    else {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a kernel launch needs at least one array argument",
        ));
    };
    let written = launch(&session, grid, block, &values).map_err(to_py)?;
    Ok(written.into_iter().map(PyArr::new).collect())
}

/// A gufunc whose body comes from Python source.
#[pyclass(name = "GUfunc", module = "lazyfuse", frozen)]
pub(crate) struct PyGUfunc {
    inner: GUfunc,
}

/// Builds a gufunc over `layout` and `signatures` whose body (translated,
/// over the argument names `params`) is `body`, replayed as a kernel's is
/// until its locals' dtypes settle.
#[pyfunction]
pub(crate) fn build_gufunc(
    name: &str,
    layout: &str,
    signatures: Vec<String>,
    params: Vec<String>,
    body: &Bound<'_, PyAny>,
) -> PyResult<PyGUfunc> {
    let sigs: Vec<&str> = signatures.iter().map(String::as_str).collect();
    // The body is traced once per signature, each with its own dtypes, so
    // the locals' dtypes are learned per signature.
    let inner = settle(sigs.len(), |learned| {
        replay_gufunc(name, layout, &sigs, &params, body, learned)
    })?;
    Ok(PyGUfunc { inner })
}

/// One replay of a gufunc's `body`, once per signature, given what an
/// earlier one learned per signature; returns what this one learned.
fn replay_gufunc(
    name: &str,
    layout: &str,
    sigs: &[&str],
    params: &[String],
    body: &Bound<'_, PyAny>,
    learned: &[Learned],
) -> (lazyfuse::Result<GUfunc>, Option<PyErr>, Vec<Outcome>) {
    let failure: RefCell<Option<PyErr>> = RefCell::new(None);
    let outcomes: RefCell<Vec<Outcome>> = RefCell::new(Vec::new());
    let built = GUfunc::build(name, layout, sigs, |k, args| {
        let bindings = params
            .iter()
            .cloned()
            .zip(args.iter().cloned().map(Binding::Array))
            .collect();
        let index = outcomes.borrow().len();
        let earlier = learned.get(index).cloned().unwrap_or_default();
        let state = Replay::new(bindings, earlier);
        block(&state, k, body);
        let (outcome, error) = Outcome::of(state.into_inner());
        if let Some(e) = error {
            failure.borrow_mut().get_or_insert(e);
        }
        outcomes.borrow_mut().push(outcome);
    });
    (built, failure.into_inner(), outcomes.into_inner())
}

#[pymethods]
impl PyGUfunc {
    /// Applies the gufunc (lazy): one array per output.
    fn call(&self, inputs: Vec<PyRef<'_, PyArr>>) -> PyResult<Vec<PyArr>> {
        let refs: Vec<&lazyfuse::Array> = inputs.iter().map(|a| &a.inner).collect();
        let outs = self.inner.call(&refs).map_err(to_py)?;
        Ok(outs.into_iter().map(PyArr::new).collect())
    }

    /// Applies it and re-binds `outputs` (Numba's output arguments).
    fn call_into(
        &self,
        inputs: Vec<PyRef<'_, PyArr>>,
        outputs: Vec<PyRef<'_, PyArr>>,
    ) -> PyResult<()> {
        let refs: Vec<&lazyfuse::Array> = inputs.iter().map(|a| &a.inner).collect();
        let outs: Vec<&lazyfuse::Array> = outputs.iter().map(|a| &a.inner).collect();
        self.inner.call_into(&refs, &outs).map_err(to_py)
    }

    /// Inputs and outputs the layout names.
    #[getter]
    fn arity(&self) -> (usize, usize) {
        let layout = self.inner.layout();
        (layout.inputs.len(), layout.outputs.len())
    }
}
