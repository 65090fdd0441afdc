//! The replay of a body written in Python: the tree of tuples the Python
//! side's translator (`_jit.py`) makes from a function's source, replayed
//! statement by statement on lazyfuse's kernel builder, the names it binds
//! kept in scopes.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use lazyfuse::core::BinaryOp;
use lazyfuse::kernel::{ArrayParam, KernelScope, LocalArrayRef, Printed, SharedArrayRef, Val};
use lazyfuse::{promote, DType};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::errors::{compile_error, to_py};

mod expr;

use expr::{expr, indices};

/// What a name means in the body being replayed.
#[derive(Clone)]
pub(crate) enum Binding {
    Array(ArrayParam),
    Value(Val),
    Local(lazyfuse::kernel::Local),
    Shared(SharedArrayRef),
    LocalArray(LocalArrayRef),
}

/// The names visible at the statement being replayed, innermost block last.
pub(crate) struct Replay {
    pub(super) scopes: Vec<HashMap<String, Binding>>,
    pub(crate) error: Option<PyErr>,
    /// Each local's dtype as an earlier replay learned it (empty on the
    /// first): locals are declared with it.
    learned: Learned,
    /// What this replay learns: each local's dtype, promoted over every
    /// value assigned to it (Numba's type unification: `s = 0` then
    /// `s += 0.5` makes `s` a float64).
    pub(crate) learns: Learned,
    /// The dtype each local was declared with on this replay.
    declared: Learned,
    /// Function-scoped names (first assigned in a nested block, `hoist`)
    /// this replay could not declare at the top: their dtype was unknown.
    pending: HashSet<String>,
}

/// Each local's dtype, learned by one replay for the next.
pub(crate) type Learned = HashMap<String, DType>;

/// At most this many replays unify the locals' dtypes (each one only
/// widens a dtype, so two or three suffice in practice).
const MAX_REPLAYS: usize = 8;

pub(crate) type Node<'py> = Bound<'py, PyAny>;

pub(crate) fn fail(message: String) -> PyErr {
    compile_error(message)
}

pub(super) fn split_tag<'py>(node: &Node<'py>) -> PyResult<(String, Bound<'py, PyTuple>)> {
    let tuple = node.downcast::<PyTuple>()?.clone();
    let tag: String = tuple.get_item(0)?.extract()?;
    Ok((tag, tuple))
}

pub(crate) fn dtype(name: &str) -> PyResult<DType> {
    name.parse::<DType>()
        .map_err(|_| fail(format!("lazyfuse has no dtype '{name}'")))
}

impl Replay {
    /// A replay with `bindings` (the parameters) and what an earlier
    /// replay learned of the locals (empty on the first).
    pub(crate) fn new(bindings: HashMap<String, Binding>, learned: Learned) -> RefCell<Replay> {
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
    pub(crate) fn needs_another(&self) -> bool {
        !self.pending.is_empty()
            || self
                .learns
                .iter()
                .any(|(name, dt)| self.declared.get(name) != Some(dt))
    }

    pub(super) fn lookup(&self, name: &str) -> PyResult<Binding> {
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
pub(crate) fn block(state: &RefCell<Replay>, k: &mut KernelScope, stmts: &Node<'_>) {
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

/// `print(...)`: `("print", [("text", s) | expression, ...])`.
fn print(state: &RefCell<Replay>, k: &mut KernelScope, t: &Bound<'_, PyTuple>) -> PyResult<()> {
    let mut pieces = Vec::new();
    for item in t.get_item(1)?.downcast::<PyList>()?.iter() {
        let (tag, piece) = split_tag(&item)?;
        pieces.push(if tag == "text" {
            Printed::Text(piece.get_item(1)?.extract()?)
        } else {
            Printed::Value(expr(state, k, &item)?)
        });
    }
    k.print(pieces);
    Ok(())
}

/// Replays one statement into `k`.
fn statement(state: &RefCell<Replay>, k: &mut KernelScope, node: &Node<'_>) -> PyResult<()> {
    let (tag, t) = split_tag(node)?;
    match tag.as_str() {
        "hoist" => hoist(state, k, t.get_item(1)?.extract()?),
        "assign" => assign(state, k, &t)?,
        "declare_array" => declare_array(state, k, &t)?,
        "print" => print(state, k, &t)?,
        "store" => store(state, k, &t)?,
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
        "for" | "prange" | "for_signed" => range_loop(state, k, &tag, &t)?,
        "expr" => {
            expr(state, k, &t.get_item(1)?)?;
        }
        other => return Err(fail(format!("no statement '{other}'"))),
    }
    Ok(())
}

/// Function-scoped `names`, declared at the top with the dtype an earlier
/// replay learned (none yet on the first replay: the first assignment
/// binds it).
fn hoist(state: &RefCell<Replay>, k: &mut KernelScope, names: Vec<String>) {
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

/// `name = value`: sets a local, or declares one.
fn assign(state: &RefCell<Replay>, k: &mut KernelScope, t: &Bound<'_, PyTuple>) -> PyResult<()> {
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
    Ok(())
}

/// `name = cuda.shared.array(shape, dtype)` or `cuda.local.array(…)`.
fn declare_array(
    state: &RefCell<Replay>,
    k: &mut KernelScope,
    t: &Bound<'_, PyTuple>,
) -> PyResult<()> {
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
    Ok(())
}

/// `name[indices] = value`.
fn store(state: &RefCell<Replay>, k: &mut KernelScope, t: &Bound<'_, PyTuple>) -> PyResult<()> {
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
    Ok(())
}

/// `for var in range(start, stop, step)` (`prange`: its iterations are
/// independent; `for_signed`: a step of unknown sign).
fn range_loop(
    state: &RefCell<Replay>,
    k: &mut KernelScope,
    tag: &str,
    t: &Bound<'_, PyTuple>,
) -> PyResult<()> {
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
    match tag {
        "for" => k.for_range(start, stop, step, run),
        "prange" => k.par_range(start, stop, run),
        _ => signed_range(k, (start, stop, step), run),
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

/// Runs `replay` (given what the previous replay learned, per signature)
/// until no local would be declared differently, or `MAX_REPLAYS` times;
/// returns what the last one built, or its first error.
pub(crate) fn settle<T>(
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
pub(crate) struct Outcome {
    learned: Learned,
    again: bool,
}

impl Outcome {
    pub(crate) fn of(state: Replay) -> (Outcome, Option<PyErr>) {
        let again = state.needs_another();
        let outcome = Outcome {
            learned: state.learns,
            again,
        };
        (outcome, state.error)
    }
}
