//! Kernels and gufunc bodies written in Python: the tree of tuples the
//! Python side's translator (`_jit.py`) makes from a function's source,
//! replayed on lazyfuse's kernel builder.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use lazyfuse::core::{BinaryOp, UnaryOp};
use lazyfuse::kernel::{
    ArrayParam, Dim, Kernel, KernelArg, KernelScope, LocalArrayRef, SharedArrayRef, Val,
};
use lazyfuse::{promote, DType, GUfunc};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::array::PyArr;
use crate::errors::{compile_error, to_py};

/// What a name means in the body being replayed.
#[derive(Clone)]
enum Binding {
    Array(ArrayParam),
    Value(Val),
    Local(lazyfuse::kernel::Local),
    Shared(SharedArrayRef),
    LocalArray(LocalArrayRef),
}

/// The names visible at the statement being replayed, innermost block last.
struct Replay {
    scopes: Vec<HashMap<String, Binding>>,
    error: Option<PyErr>,
    /// Each local's dtype as an earlier replay learned it (empty on the
    /// first): locals are declared with it.
    learned: Learned,
    /// What this replay learns: each local's dtype, promoted over every
    /// value assigned to it (Numba's type unification: `s = 0` then
    /// `s += 0.5` makes `s` a float64).
    learns: Learned,
    /// The dtype each local was declared with on this replay.
    declared: Learned,
    /// Function-scoped names (first assigned in a nested block, `hoist`)
    /// this replay could not declare at the top: their dtype was unknown.
    pending: HashSet<String>,
}

/// Each local's dtype, learned by one replay for the next.
type Learned = HashMap<String, DType>;

/// At most this many replays unify the locals' dtypes (each one only
/// widens a dtype, so two or three suffice in practice).
const MAX_REPLAYS: usize = 8;

type Node<'py> = Bound<'py, PyAny>;

fn fail(message: String) -> PyErr {
    compile_error(message)
}

fn split_tag<'py>(node: &Node<'py>) -> PyResult<(String, Bound<'py, PyTuple>)> {
    let tuple = node.downcast::<PyTuple>()?.clone();
    let tag: String = tuple.get_item(0)?.extract()?;
    Ok((tag, tuple))
}

fn dtype(name: &str) -> PyResult<DType> {
    name.parse::<DType>()
        .map_err(|_| fail(format!("lazyfuse has no dtype '{name}'")))
}

impl Replay {
    /// A replay with `bindings` (the parameters) and what an earlier
    /// replay learned of the locals (empty on the first).
    fn new(bindings: HashMap<String, Binding>, learned: Learned) -> RefCell<Replay> {
        RefCell::new(Replay {
            scopes: vec![bindings],
            error: None,
            learned,
            learns: Learned::new(),
            declared: Learned::new(),
            pending: HashSet::new(),
        })
    }

    /// True when another replay would declare some local differently:
    /// a local was widened by a later assignment, or a function-scoped
    /// name could not be declared at the top.
    fn needs_another(&self) -> bool {
        !self.pending.is_empty()
            || self
                .learns
                .iter()
                .any(|(name, dt)| self.declared.get(name) != Some(dt))
    }

    fn lookup(&self, name: &str) -> PyResult<Binding> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).cloned())
            .ok_or_else(|| {
                fail(format!(
                    "'{name}' is not defined here (expected an argument, or a local assigned \
                     before this use)"
                ))
            })
    }

    fn bind(&mut self, name: &str, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), binding);
        }
    }

    /// Records that `value_dtype` is assigned to `name`; returns the dtype
    /// to declare `name` with if this assignment declares it.
    fn assigned(&mut self, name: &str, value_dtype: DType) -> DType {
        let unified = self
            .learns
            .get(name)
            .map_or(value_dtype, |&dt| promote(dt, value_dtype));
        self.learns.insert(name.to_string(), unified);
        self.learned.get(name).copied().unwrap_or(value_dtype)
    }
}

/// Replays `stmts` into `k`; the first error is kept in `state`.
fn block(state: &RefCell<Replay>, k: &mut KernelScope, stmts: &Node<'_>) {
    state.borrow_mut().scopes.push(HashMap::new());
    let result = (|| -> PyResult<()> {
        let list = stmts.downcast::<PyList>()?;
        for stmt in list.iter() {
            statement(state, k, &stmt)?;
        }
        Ok(())
    })();
    let mut s = state.borrow_mut();
    s.scopes.pop();
    if let Err(e) = result {
        s.error.get_or_insert(e);
    }
}

fn statement(state: &RefCell<Replay>, k: &mut KernelScope, node: &Node<'_>) -> PyResult<()> {
    let (tag, t) = split_tag(node)?;
    match tag.as_str() {
        "hoist" => {
            // Declared at the top with the dtype an earlier replay learned
            // (none yet on the first replay: the first assignment binds it).
            let names: Vec<String> = t.get_item(1)?.extract()?;
            for name in names {
                let learned = state.borrow().learned.get(&name).copied();
                let mut s = state.borrow_mut();
                match learned {
                    Some(dt) => {
                        let local = k.local(Val::constant(0.0, dt));
                        s.declared.insert(name.clone(), dt);
                        s.bind(&name, Binding::Local(local));
                    }
                    None => {
                        s.pending.insert(name);
                    }
                }
            }
        }
        "assign" => {
            let name: String = t.get_item(1)?.extract()?;
            let value = expr(state, k, &t.get_item(2)?)?;
            let existing = state.borrow().lookup(&name).ok();
            let declare_as = state.borrow_mut().assigned(&name, value.dtype());
            match existing {
                Some(Binding::Local(local)) => k.set(&local, value),
                Some(Binding::Value(_)) | None => {
                    let local = k.local(value.cast(declare_as));
                    let mut s = state.borrow_mut();
                    s.declared.insert(name.clone(), declare_as);
                    if s.pending.contains(&name) {
                        // First replay of a function-scoped name: after the
                        // block it reads as a zero, so that this replay's
                        // kernel (dropped) stays valid.
                        let zero = Binding::Value(Val::constant(0.0, declare_as));
                        s.scopes[0].insert(name.clone(), zero);
                    }
                    s.bind(&name, Binding::Local(local));
                }
                Some(_) => return Err(fail(format!("'{name}' cannot be assigned"))),
            }
        }
        "declare_array" => {
            let name: String = t.get_item(1)?.extract()?;
            let (kind, decl) = split_tag(&t.get_item(2)?)?;
            let dt = dtype(&decl.get_item(1)?.extract::<String>()?)?;
            let shape: Vec<usize> = decl.get_item(2)?.extract()?;
            let binding = if kind == "shared_array" {
                Binding::Shared(k.shared_array(dt, &shape))
            } else {
                Binding::LocalArray(k.local_array(dt, &shape))
            };
            state.borrow_mut().bind(&name, binding);
        }
        "store" => {
            let name: String = t.get_item(1)?.extract()?;
            let target = state.borrow().lookup(&name)?;
            let index = indices(state, k, &t.get_item(2)?, &target)?;
            let value = expr(state, k, &t.get_item(3)?)?;
            match target {
                Binding::Array(a) => k.store(&a, index.as_slice(), value),
                Binding::Shared(s) => k.store_shared(&s, index.as_slice(), value),
                Binding::LocalArray(l) => k.store_local(&l, index.as_slice(), value),
                _ => return Err(fail(format!("'{name}' is not an array"))),
            }
        }
        "if" => {
            let cond = expr(state, k, &t.get_item(1)?)?;
            let (then, otherwise) = (t.get_item(2)?, t.get_item(3)?);
            k.if_else(
                cond,
                |k| block(state, k, &then),
                |k| block(state, k, &otherwise),
            );
        }
        "while" => {
            let cond = expr(state, k, &t.get_item(1)?)?;
            let body = t.get_item(2)?;
            k.while_(cond, |k| block(state, k, &body));
        }
        "for" | "prange" | "for_signed" => {
            let var: String = t.get_item(1)?.extract()?;
            let start = expr(state, k, &t.get_item(2)?)?;
            let stop = expr(state, k, &t.get_item(3)?)?;
            let step = expr(state, k, &t.get_item(4)?)?;
            let body = t.get_item(5)?;
            let run = |k: &mut KernelScope, i: Val| {
                state
                    .borrow_mut()
                    .scopes
                    .push(HashMap::from([(var.clone(), Binding::Value(i))]));
                block(state, k, &body);
                state.borrow_mut().scopes.pop();
            };
            match tag.as_str() {
                "for" => k.for_range(start, stop, step, run),
                "prange" => k.par_range(start, stop, run),
                _ => signed_range(k, (start, stop, step), run),
            }
        }
        "expr" => {
            expr(state, k, &t.get_item(1)?)?;
        }
        other => return Err(fail(format!("no statement '{other}'"))),
    }
    Ok(())
}

/// `for i in range(start, stop, step)` whose step is not a positive
/// constant: Python's meaning for a step of either sign (a negative one
/// counts down). The loop runs over the iteration number `j`, with
/// `i = start + j*step`; `start` and `step` are read once, as Python does.
fn signed_range(
    k: &mut KernelScope,
    (start, stop, step): (Val, Val, Val),
    run: impl FnOnce(&mut KernelScope, Val),
) {
    let start = k.local(start.cast(DType::I64)).get();
    let step = k.local(step.cast(DType::I64)).get();
    // ceil((stop - start) / step) = -((start - stop) // step), for either
    // sign of step; none when it is negative. A zero step runs nothing
    // (integer division by zero is 0 here; Python raises).
    let count = -(&start - stop.cast(DType::I64)).apply_binary(BinaryOp::FloorDiv, &step);
    let count = count.apply_binary(BinaryOp::Maximum, Val::from(0i64));
    k.for_range(0i64, count, 1i64, |k, j| run(k, &start + &j * &step));
}

/// The indices of an access to `target`; a 0-d array takes `[0]`, as
/// Numba passes a gufunc's `()` core as a one-element array.
fn indices(
    state: &RefCell<Replay>,
    k: &mut KernelScope,
    list: &Node<'_>,
    target: &Binding,
) -> PyResult<Vec<Val>> {
    let items = list.downcast::<PyList>()?;
    let values = items
        .iter()
        .map(|i| expr(state, k, &i))
        .collect::<PyResult<Vec<Val>>>()?;
    if let Binding::Array(a) = target {
        if a.ndim() == 0 && values.len() == 1 {
            return Ok(Vec::new());
        }
        if values.len() != a.ndim() {
            return Err(fail(format!(
                "an array of {} dimensions indexed with {} indices (expected one per dimension)",
                a.ndim(),
                values.len()
            )));
        }
    }
    Ok(values)
}

fn operands(state: &RefCell<Replay>, k: &mut KernelScope, list: &Node<'_>) -> PyResult<Vec<Val>> {
    list.downcast::<PyList>()?
        .iter()
        .map(|i| expr(state, k, &i))
        .collect()
}

fn expr(state: &RefCell<Replay>, k: &mut KernelScope, node: &Node<'_>) -> PyResult<Val> {
    let (tag, t) = split_tag(node)?;
    Ok(match tag.as_str() {
        "const" => {
            let value = t.get_item(1)?;
            if t.len() > 2 {
                Val::constant(value.extract::<f64>()?, DType::Bool)
            } else if let Ok(i) = value.extract::<i64>() {
                Val::from(i)
            } else {
                Val::from(value.extract::<f64>()?)
            }
        }
        "var" | "array" => {
            let name: String = t.get_item(1)?.extract()?;
            match state.borrow().lookup(&name)? {
                Binding::Value(v) => v,
                Binding::Local(l) => l.get(),
                // A gufunc's scalar argument (`float64` in the signature,
                // `()` in the layout) is read as its value, as Numba passes it.
                Binding::Array(a) if a.ndim() == 0 => a.at(&[] as &[Val]),
                _ => return Err(fail(format!("the array '{name}' is used as a value"))),
            }
        }
        "bin" => {
            let op: String = t.get_item(1)?.extract()?;
            let a = expr(state, k, &t.get_item(2)?)?;
            let b = expr(state, k, &t.get_item(3)?)?;
            match op.as_str() {
                "logical_and" => a.and(b),
                "logical_or" => a.or(b),
                _ => a.apply_binary(
                    BinaryOp::lookup(&op).ok_or_else(|| fail(format!("no operation '{op}'")))?,
                    b,
                ),
            }
        }
        "unary" => {
            let op: String = t.get_item(1)?.extract()?;
            let a = expr(state, k, &t.get_item(2)?)?;
            match op.as_str() {
                "logical_not" => a.not(),
                _ => a.apply(
                    UnaryOp::lookup(&op).ok_or_else(|| fail(format!("no operation '{op}'")))?,
                ),
            }
        }
        "call" => {
            let op: String = t.get_item(1)?.extract()?;
            let args = operands(state, k, &t.get_item(2)?)?;
            match (args.as_slice(), UnaryOp::lookup(&op), BinaryOp::lookup(&op)) {
                ([a], Some(u), _) => a.apply(u),
                ([a, b], _, Some(bin)) => a.apply_binary(bin, b),
                _ => {
                    return Err(fail(format!(
                        "math function '{op}' with {} arguments",
                        args.len()
                    )))
                }
            }
        }
        "select" => {
            let c = expr(state, k, &t.get_item(1)?)?;
            let a = expr(state, k, &t.get_item(2)?)?;
            let b = expr(state, k, &t.get_item(3)?)?;
            Val::select(&c, a, b)
        }
        "cast" => {
            let dt = dtype(&t.get_item(1)?.extract::<String>()?)?;
            expr(state, k, &t.get_item(2)?)?.cast(dt)
        }
        "let" => inlined_call(state, k, &t)?,
        "load" | "shape" | "size" => array_expr(state, k, &tag, &t)?,
        "special" | "grid" | "gridsize" | "grid_part" | "sync" => thread_expr(k, &tag, &t)?,
        "atomic" => atomic_expr(state, k, &t)?,
        other => return Err(fail(format!("no expression '{other}'"))),
    })
}

/// An inlined device function's call: its statements, in a scope of their
/// own, then the value it returns.
fn inlined_call(
    state: &RefCell<Replay>,
    k: &mut KernelScope,
    t: &Bound<'_, PyTuple>,
) -> PyResult<Val> {
    state.borrow_mut().scopes.push(HashMap::new());
    let result = (|| {
        for stmt in t.get_item(1)?.downcast::<PyList>()?.iter() {
            statement(state, k, &stmt)?;
        }
        expr(state, k, &t.get_item(2)?)
    })();
    state.borrow_mut().scopes.pop();
    result
}

/// An array read: an element, an extent, the size.
fn array_expr(
    state: &RefCell<Replay>,
    k: &mut KernelScope,
    tag: &str,
    t: &Bound<'_, PyTuple>,
) -> PyResult<Val> {
    Ok(match tag {
        "load" => {
            let name: String = t.get_item(1)?.extract()?;
            let target = state.borrow().lookup(&name)?;
            let index = indices(state, k, &t.get_item(2)?, &target)?;
            match target {
                Binding::Array(a) => a.at(index.as_slice()),
                Binding::Shared(s) => s.at(index.as_slice()),
                Binding::LocalArray(l) => l.at(index.as_slice()),
                _ => return Err(fail(format!("'{name}' is not an array"))),
            }
        }
        "shape" | "size" => {
            let name: String = t.get_item(1)?.extract()?;
            let Binding::Array(a) = state.borrow().lookup(&name)? else {
                return Err(fail(format!("'{name}' is not an array argument")));
            };
            if tag == "shape" {
                let dim: i64 = t.get_item(2)?.extract()?;
                let ndim = a.ndim() as i64;
                let axis = if dim < 0 { dim + ndim } else { dim };
                if !(0..ndim).contains(&axis) {
                    return Err(fail(format!(
                        "{name}.shape[{dim}] of an array of {ndim} dimensions"
                    )));
                }
                a.len(axis as usize)
            } else {
                (0..a.ndim()).fold(Val::from(1i64), |n, d| n * a.len(d))
            }
        }
        other => return Err(fail(format!("no expression '{other}'"))),
    })
}

/// The launch geometry and barriers.
fn thread_expr(k: &mut KernelScope, tag: &str, t: &Bound<'_, PyTuple>) -> PyResult<Val> {
    Ok(match tag {
        "special" => {
            let which: String = t.get_item(1)?.extract()?;
            let dim = match t.get_item(2)?.extract::<String>()?.as_str() {
                "x" => Dim::X,
                "y" => Dim::Y,
                _ => Dim::Z,
            };
            match which.as_str() {
                "threadIdx" => k.thread_idx(dim),
                "blockIdx" => k.block_idx(dim),
                "blockDim" => k.block_dim(dim),
                _ => k.grid_dim(dim),
            }
        }
        "grid" | "gridsize" => {
            let n: usize = t.get_item(1)?.extract()?;
            if n != 1 {
                return Err(fail(format!(
                    "cuda.{tag}({n}) as one value (unpack it: x, y = cuda.{tag}({n}))"
                )));
            }
            if tag == "grid" {
                k.grid(1)
            } else {
                k.gridsize(1)
            }
            .remove(0)
        }
        "grid_part" => {
            let kind: String = t.get_item(1)?.extract()?;
            let n: usize = t.get_item(2)?.extract()?;
            let i: usize = t.get_item(3)?.extract()?;
            let mut parts = if kind == "grid" {
                k.grid(n)
            } else {
                k.gridsize(n)
            };
            parts.swap_remove(i.min(n - 1))
        }
        "sync" => {
            k.syncthreads();
            Val::from(0i64)
        }
        other => return Err(fail(format!("no expression '{other}'"))),
    })
}

/// `cuda.atomic.*`: returns the old value.
fn atomic_expr(
    state: &RefCell<Replay>,
    k: &mut KernelScope,
    t: &Bound<'_, PyTuple>,
) -> PyResult<Val> {
    let op: String = t.get_item(1)?.extract()?;
    let name: String = t.get_item(2)?.extract()?;
    let target = state.borrow().lookup(&name)?;
    let index = indices(state, k, &t.get_item(3)?, &target)?;
    let values = operands(state, k, &t.get_item(4)?)?;
    let at = index.as_slice();
    Ok(match (target, op.as_str(), values.as_slice()) {
        (Binding::Array(a), "add", [v]) => k.atomic_add(&a, at, v),
        (Binding::Array(a), "max", [v]) => k.atomic_max(&a, at, v),
        (Binding::Array(a), "min", [v]) => k.atomic_min(&a, at, v),
        (Binding::Array(a), "exchange", [v]) => k.atomic_exchange(&a, at, v),
        (Binding::Array(a), "cas", [old, v]) => k.atomic_cas(&a, at, old, v),
        (Binding::Shared(s), "add", [v]) => k.atomic_add_shared(&s, at, v),
        _ => {
            return Err(fail(format!(
                "cuda.atomic.{op} on '{name}' with these arguments"
            )))
        }
    })
}

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

/// Runs `replay` (given what the previous replay learned, per signature)
/// until no local would be declared differently, or `MAX_REPLAYS` times;
/// returns what the last one built, or its first error.
fn settle<T>(
    signatures: usize,
    mut replay: impl FnMut(&[Learned]) -> (lazyfuse::Result<T>, Option<PyErr>, Vec<Outcome>),
) -> PyResult<T> {
    let mut learned = vec![Learned::new(); signatures];
    for count in 1.. {
        let (built, failure, outcomes) = replay(&learned);
        if outcomes.iter().any(|o| o.again) && count < MAX_REPLAYS {
            learned = outcomes.into_iter().map(|o| o.learned).collect();
            continue;
        }
        if let Some(e) = failure {
            return Err(e);
        }
        return built.map_err(to_py);
    }
    unreachable!("the replays end at MAX_REPLAYS")
}

/// What one replay learned of the locals, and whether another replay
/// would declare some local differently.
#[derive(Default)]
struct Outcome {
    learned: Learned,
    again: bool,
}

impl Outcome {
    fn of(state: Replay) -> (Outcome, Option<PyErr>) {
        let again = state.needs_another();
        let outcome = Outcome {
            learned: state.learns,
            again,
        };
        (outcome, state.error)
    }
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
        let dims = |d: &[u32]| -> PyResult<[u32; 3]> {
            match d {
                [x] => Ok([*x, 1, 1]),
                [x, y] => Ok([*x, *y, 1]),
                [x, y, z] => Ok([*x, *y, *z]),
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
        let written = self
            .inner
            .launch(
                &session,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                &values,
            )
            .map_err(to_py)?;
        Ok(written.into_iter().map(PyArr::new).collect())
    }
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
