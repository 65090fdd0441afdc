//! Expressions of a replayed body: values, operations, array reads, the
//! launch geometry, atomics and inlined device functions.

use std::cell::RefCell;
use std::collections::HashMap;

use lazyfuse::core::{BinaryOp, UnaryOp};
use lazyfuse::kernel::{AtomicOp, Dim, FenceScope, KernelScope, Val, WarpOp};
use lazyfuse::DType;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::{dtype, fail, split_tag, statement, Binding, Node, Replay};

/// The indices of an access to `target`; a 0-d array takes `[0]`, as
/// Numba passes a gufunc's `()` core as a one-element array.
pub(super) fn indices(
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

pub(super) fn expr(state: &RefCell<Replay>, k: &mut KernelScope, node: &Node<'_>) -> PyResult<Val> {
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
        "special" | "grid" | "gridsize" | "grid_part" | "sync" | "fence" => {
            thread_expr(k, &tag, &t)?
        }
        "atomic" => atomic_expr(state, k, &t)?,
        "fma" => {
            let a = expr(state, k, &t.get_item(1)?)?;
            let b = expr(state, k, &t.get_item(2)?)?;
            let c = expr(state, k, &t.get_item(3)?)?;
            a.fma(b, c)
        }
        "warp" => {
            // ("warp", op, mask, value, lane)
            let op = match t.get_item(1)?.extract::<String>()?.as_str() {
                "shfl" => WarpOp::ShuffleIndex,
                "shfl_up" => WarpOp::ShuffleUp,
                "shfl_down" => WarpOp::ShuffleDown,
                "shfl_xor" => WarpOp::ShuffleXor,
                "ballot" => WarpOp::Ballot,
                "all" => WarpOp::All,
                "any" => WarpOp::Any,
                "activemask" => WarpOp::ActiveMask,
                other => return Err(fail(format!("no warp operation '{other}'"))),
            };
            let mask = expr(state, k, &t.get_item(2)?)?;
            let value = expr(state, k, &t.get_item(3)?)?;
            let lane = expr(state, k, &t.get_item(4)?)?;
            k.warp(op, mask, value, lane)
        }
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
        "fence" => {
            let scope: String = t.get_item(1)?.extract()?;
            k.threadfence(match scope.as_str() {
                "block" => FenceScope::Block,
                "system" => FenceScope::System,
                "warp" => FenceScope::Warp,
                _ => FenceScope::Device,
            });
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
    let refused = || fail(format!("cuda.atomic.{op} on '{name}' with these arguments"));
    let op = AtomicOp::from_name(&op).ok_or_else(refused)?;
    Ok(match (target, op, values.as_slice()) {
        (Binding::Array(a), AtomicOp::Cas, [old, v]) => k.atomic_cas(&a, at, old, v),
        (Binding::Shared(s), AtomicOp::Cas, [old, v]) => k.atomic_cas_shared(&s, at, old, v),
        (_, AtomicOp::Cas, _) => return Err(refused()),
        (Binding::Array(a), op, [v]) => k.atomic_update(op, &a, at, v),
        (Binding::Shared(s), op, [v]) => k.atomic_update_shared(op, &s, at, v),
        _ => return Err(refused()),
    })
}
