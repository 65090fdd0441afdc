//! Which accesses of a loop can be checked once, before it, and which
//! `if`s hold in every iteration (the `hoist` module lowers what this
//! finds): a loop counting by 1 whose loads and stores index their
//! buffers with an affine function of the counter (`base + i`,
//! `base + i * stride + j`, with everything but `i` unchanged by the body)
//! touches, over its range, the elements between those of its first and
//! last iterations.
//!
//! The loop over a block's threads is analysed the same way: its counter
//! is `threadIdx.x` (running from 0 to `blockDim.x - 1`), and the index
//! `blockIdx.x * blockDim.x + threadIdx.x` that `cuda.grid(1)` gives is
//! affine in it. An index may go through registers the body defines once,
//! at its top level, before the access (`pos = cuda.grid(1); a[pos]`):
//! the analysis reads them as their definitions.
//!
//! A load from a read-only buffer (an input: no thread of the kernel
//! stores to it, and it shares no memory with a written one) at an
//! unchanging index is unchanging too, so a gather's row
//! `values[indices[row] * inner + threadIdx.x]` is affine.

use std::collections::{HashMap, HashSet};

use lazyfuse_core::{BinaryOp, DType, Wide};
use lazyfuse_device::ir::{Dim, Expr, Special, Stmt, Var};

use super::walk::{self, Node};

/// Expression and statement nodes above which a body is not unrolled.
const MAX_UNROLLED_NODES: usize = 48;

/// Expression and statement nodes above which a body's conditions are not
/// folded (the body is then lowered three times, not twice).
const MAX_FOLDED_NODES: usize = 256;

/// Nodes above which an index is not read through the registers it uses.
const MAX_RESOLVED_NODES: usize = 256;

/// What counts as a loop's counter in an index.
#[derive(Clone, Copy)]
pub(super) enum Counter {
    /// The register of a `for` loop.
    Var(Var),
    /// `threadIdx.x`, in the loop over a block's threads; as an index term
    /// it appears widened to `i64`.
    ThreadX,
}

impl Counter {
    fn is(self, expr: &Expr) -> bool {
        const THREAD_X: Special = Special::ThreadIdx(Dim::X);
        match (self, expr) {
            (Counter::Var(counter), Expr::Var(v)) => *v == counter,
            (Counter::ThreadX, Expr::Special(THREAD_X)) => true,
            // `u32` to `i64` keeps the value: thread `k`'s term is `k`.
            (Counter::ThreadX, Expr::Cast(DType::I64, inner)) => {
                matches!(**inner, Expr::Special(THREAD_X))
            }
            _ => false,
        }
    }
}

/// A load or store whose index is affine in the loop's counter.
pub(super) struct Access<'e> {
    pub(super) param: u32,
    /// The index as the body writes it (the lowering knows accesses by it).
    pub(super) at: &'e Expr,
    /// The index with the registers it reads replaced by their definitions.
    pub(super) index: Expr,
    /// The counter's coefficient; `None` for 1.
    pub(super) stride: Option<Expr>,
}

/// The condition of an `if` at the top of a loop's body that holds in
/// every iteration when each of its terms does in the first and the last.
pub(super) struct Condition<'e> {
    /// The condition as the body writes it.
    pub(super) at: &'e Expr,
    /// What it is the conjunction of.
    pub(super) terms: Vec<Term>,
}

/// A term of a [`Condition`].
pub(super) enum Term {
    /// `x < bound` (`x <= bound` when inclusive), signed, with `x` affine
    /// in the counter (coefficient `stride`, `None` for 1) and `bound`
    /// invariant: `x` only grows, so the last iteration decides.
    Below {
        x: Expr,
        stride: Option<Expr>,
        bound: Expr,
        inclusive: bool,
    },
    /// The same in every iteration.
    Invariant(Expr),
}

/// What a loop that can be checked once needs.
pub(super) struct Hoisted<'e> {
    pub(super) accesses: Vec<Access<'e>>,
    /// Conditions to check once too: where they hold, their `if`s run
    /// their `then` branch unconditionally.
    pub(super) conditions: Vec<Condition<'e>>,
    /// Whether the body is small and loop-free, so worth unrolling.
    pub(super) unroll: bool,
}

/// The accesses of `body` that can be checked before the loop, when the
/// loop counts `counter` by 1 up to an `end` the body does not change
/// (`None`: a value computed before the loop).
pub(super) fn analyse<'e>(
    counter: Var,
    end: Option<&Expr>,
    step: &Expr,
    body: &'e [Stmt],
    read_only: &HashSet<u32>,
) -> Option<Hoisted<'e>> {
    if !matches!(step, Expr::Const(l) if matches!(l.to_wide(), Wide::Int(1))) {
        return None;
    }
    let walk = Walk::of(body, read_only);
    if walk.sets.contains_key(&counter) {
        return None;
    }
    if let Some(end) = end {
        if !invariant(end, Counter::Var(counter), &walk) {
            return None;
        }
    }
    hoistable(Counter::Var(counter), body, &walk)
}

impl Hoisted<'_> {
    /// The indices (by address) of the hoisted accesses whose counter's
    /// coefficient is 1: consecutive threads touch consecutive elements.
    pub(super) fn contiguous(&self) -> Vec<*const Expr> {
        (self.accesses.iter())
            .filter(|a| a.stride.is_none())
            .map(|a| a.at as *const Expr)
            .collect()
    }
}

/// The accesses of a kernel `body` that can be checked once per row of a
/// block's threads (`threadIdx.x` from 0 to `blockDim.x - 1`, the other
/// builtins fixed). `read_only`: the buffer parameters no thread writes.
pub(super) fn analyse_threads<'e>(
    body: &'e [Stmt],
    read_only: &HashSet<u32>,
) -> Option<Hoisted<'e>> {
    hoistable(Counter::ThreadX, body, &Walk::of(body, read_only))
}

/// The accesses of `body` whose indices are affine in `counter`, read
/// through the registers the body defines once at its top level.
fn hoistable<'e>(counter: Counter, body: &'e [Stmt], walk: &Walk) -> Option<Hoisted<'e>> {
    let mut definitions = Definitions::default();
    let (mut accesses, mut conditions) = (Vec::new(), Vec::new());
    for stmt in body {
        for node in walk::nodes(std::slice::from_ref(stmt)) {
            let (param, at) = match node {
                Node::Stmt(Stmt::Store { param, index, .. }) => (*param, index),
                Node::Expr(Expr::Load { param, index }) => (*param, &**index),
                _ => continue,
            };
            let Some(index) = definitions.resolve(at) else {
                continue;
            };
            let invariant = |e: &Expr| invariant(e, counter, walk);
            if let Some(stride) = affine(&index, counter, &invariant) {
                let stride = stride.cloned();
                accesses.push(Access {
                    param,
                    at,
                    index,
                    stride,
                });
            }
        }
        let invariant = |e: &Expr| invariant(e, counter, walk);
        match stmt {
            Stmt::Let(var, value) if walk.sets.get(var) == Some(&1) => {
                definitions.define(*var, value);
            }
            Stmt::If { cond, .. } if walk.nodes <= MAX_FOLDED_NODES => {
                conditions.extend(condition(cond, counter, &definitions, &invariant));
            }
            _ => {}
        }
    }
    (!accesses.is_empty()).then_some(Hoisted {
        accesses,
        conditions,
        unroll: walk.loop_free && walk.nodes <= MAX_UNROLLED_NODES,
    })
}

/// Whether every access of `body` to buffer `param` is at the thread's
/// position along x, `blockIdx.x * blockDim.x + threadIdx.x` (read through
/// registers as above): in a grid of one row of blocks, block `b` then
/// touches only elements `b * blockDim.x .. (b + 1) * blockDim.x` of it.
pub(super) fn blockwise(body: &[Stmt], param: u32) -> bool {
    let widened = |s: Special| Box::new(Expr::Cast(DType::I64, Box::new(Expr::Special(s))));
    let position = Expr::Binary(
        BinaryOp::Add,
        Box::new(Expr::Binary(
            BinaryOp::Mul,
            widened(Special::BlockIdx(Dim::X)),
            widened(Special::BlockDim(Dim::X)),
        )),
        widened(Special::ThreadIdx(Dim::X)),
    );
    let walk = Walk::of(body, &HashSet::new());
    let mut definitions = Definitions::default();
    for stmt in body {
        for node in walk::nodes(std::slice::from_ref(stmt)) {
            let index = match node {
                Node::Stmt(Stmt::Store {
                    param: p, index, ..
                }) if *p == param => index,
                Node::Expr(Expr::Load { param: p, index }) if *p == param => &**index,
                Node::Stmt(Stmt::LoadVector { .. } | Stmt::StoreVector { .. })
                | Node::Stmt(Stmt::Atomic { .. }) => return false,
                _ => continue,
            };
            if definitions.resolve(index).as_ref() != Some(&position) {
                return false;
            }
        }
        if let Stmt::Let(var, value) = stmt {
            if walk.sets.get(var) == Some(&1) {
                definitions.define(*var, value);
            }
        }
    }
    true
}

/// `cond` as a [`Condition`], when each term of its conjunction is a
/// comparison of an affine `x` with an invariant bound, or invariant.
fn condition<'e>(
    cond: &'e Expr,
    counter: Counter,
    definitions: &Definitions,
    invariant: &impl Fn(&Expr) -> bool,
) -> Option<Condition<'e>> {
    let cond_resolved = definitions.resolve(cond)?;
    let mut terms = Vec::new();
    let mut stack = vec![&cond_resolved];
    while let Some(term) = stack.pop() {
        let (x, bound, inclusive) = match term {
            Expr::Binary(BinaryOp::LogicalAnd, a, b) => {
                stack.extend([&**a, &**b]);
                continue;
            }
            t if invariant(t) => {
                terms.push(Term::Invariant(t.clone()));
                continue;
            }
            Expr::Binary(BinaryOp::Lt, x, bound) | Expr::Binary(BinaryOp::Gt, bound, x) => {
                (x, bound, false)
            }
            Expr::Binary(BinaryOp::Le, x, bound) | Expr::Binary(BinaryOp::Ge, bound, x) => {
                (x, bound, true)
            }
            _ => return None,
        };
        if !invariant(bound) {
            return None;
        }
        let stride = affine(x, counter, invariant)?.cloned();
        terms.push(Term::Below {
            x: (**x).clone(),
            stride,
            bound: (**bound).clone(),
            inclusive,
        });
    }
    Some(Condition { at: cond, terms })
}

/// Registers a body sets exactly once, by a `let` at its top level, with
/// their definitions (themselves resolved). Where an access after that
/// `let` reads one, it reads the definition's value: nothing sets the
/// register again, and an expression that is affine in the counter reads
/// no memory and no other register the body sets.
#[derive(Default)]
struct Definitions {
    values: HashMap<Var, Expr>,
}

impl Definitions {
    fn define(&mut self, var: Var, value: &Expr) {
        if let Some(resolved) = self.resolve(value) {
            self.values.insert(var, resolved);
        }
    }

    /// `expr` with every defined register replaced by its definition;
    /// `None` when it is, or would become, larger than
    /// [`MAX_RESOLVED_NODES`] (which also bounds the recursion here).
    fn resolve(&self, expr: &Expr) -> Option<Expr> {
        let mut budget = MAX_RESOLVED_NODES;
        self.substitute(expr, &mut budget)
    }

    fn substitute(&self, expr: &Expr, budget: &mut usize) -> Option<Expr> {
        *budget = budget.checked_sub(1)?;
        let mut sub = |e: &Expr| self.substitute(e, budget).map(Box::new);
        Some(match expr {
            Expr::Var(v) => match self.values.get(v) {
                Some(definition) => {
                    // Resolved already: its size is charged, not walked.
                    *budget = budget.checked_sub(size(definition))?;
                    definition.clone()
                }
                None => expr.clone(),
            },
            Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => expr.clone(),
            Expr::Load { param, index } => Expr::Load {
                param: *param,
                index: sub(index)?,
            },
            Expr::LoadShared { array, index } => Expr::LoadShared {
                array: *array,
                index: sub(index)?,
            },
            Expr::Unary(op, a) => Expr::Unary(*op, sub(a)?),
            Expr::Cast(to, a) => Expr::Cast(*to, sub(a)?),
            Expr::Bitcast(to, a) => Expr::Bitcast(*to, sub(a)?),
            Expr::Binary(op, a, b) => Expr::Binary(*op, sub(a)?, sub(b)?),
            Expr::Index(op, a, b) => Expr::Index(*op, sub(a)?, sub(b)?),
            Expr::Select(c, a, b) => Expr::Select(sub(c)?, sub(a)?, sub(b)?),
            Expr::Fma(a, b, c) => Expr::Fma(sub(a)?, sub(b)?, sub(c)?),
        })
    }
}

/// The nodes of `expr`, counted without recursion.
fn size(expr: &Expr) -> usize {
    let mut stack = vec![expr];
    let mut nodes = 0;
    while let Some(e) = stack.pop() {
        nodes += 1;
        match e {
            Expr::Load { index, .. } | Expr::LoadShared { index, .. } => stack.push(index),
            Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::Bitcast(_, a) => stack.push(a),
            Expr::Index(_, a, b) | Expr::Binary(_, a, b) => stack.extend([&**a, &**b]),
            Expr::Select(c, a, b) | Expr::Fma(a, b, c) => stack.extend([&**c, &**a, &**b]),
            Expr::Var(_) | Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => {}
        }
    }
    nodes
}

/// What [`analyse`] gathers from a loop body in one walk.
struct Walk {
    /// Registers the body declares or sets, with how many statements do.
    sets: HashMap<Var, u32>,
    loop_free: bool,
    nodes: usize,
    /// Buffer parameters no thread of the kernel writes.
    read_only: HashSet<u32>,
}

impl Walk {
    fn of(body: &[Stmt], read_only: &HashSet<u32>) -> Walk {
        let mut sets: HashMap<Var, u32> = HashMap::new();
        let mut set = |var: Var| *sets.entry(var).or_default() += 1;
        let (mut nodes, mut loop_free) = (0, true);
        for node in walk::nodes(body) {
            nodes += 1;
            match node {
                Node::Stmt(Stmt::Let(var, _) | Stmt::Assign(var, _)) => set(*var),
                Node::Stmt(Stmt::For { var, .. }) => {
                    loop_free = false;
                    set(*var);
                }
                Node::Stmt(Stmt::While { .. }) => loop_free = false,
                Node::Stmt(Stmt::LoadVector { dst, .. }) => dst.iter().for_each(|&v| set(v)),
                Node::Stmt(Stmt::Atomic { old, .. }) => old.iter().for_each(|&v| set(v)),
                Node::Stmt(Stmt::ShuffleDown { dst, .. } | Stmt::Warp { dst, .. }) => set(*dst),
                Node::Stmt(_) | Node::Expr(_) => {}
            }
        }
        Walk {
            sets,
            loop_free,
            nodes,
            read_only: read_only.clone(),
        }
    }
}

/// Whether `expr` has the same value in every iteration: it reads neither
/// the counter, nor a register the body sets, nor memory anything may
/// write (only read-only buffers, at indices that are invariant too).
fn invariant(expr: &Expr, counter: Counter, walk: &Walk) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if counter.is(e) {
            return false;
        }
        match e {
            Expr::Var(v) if walk.sets.contains_key(v) => return false,
            Expr::Load { param, index } if walk.read_only.contains(param) => stack.push(index),
            Expr::Load { .. } | Expr::LoadShared { .. } => return false,
            Expr::Var(_) | Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => {}
            Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::Bitcast(_, a) => stack.push(a),
            Expr::Index(_, a, b) | Expr::Binary(_, a, b) => stack.extend([&**a, &**b]),
            Expr::Select(c, a, b) | Expr::Fma(a, b, c) => stack.extend([&**c, &**a, &**b]),
        }
    }
    true
}

/// When `index` is a sum of invariant terms and one term: the counter,
/// `counter * s` or `s * counter` (`s` invariant), that term's coefficient
/// (`None` for 1). Sums are wrapping `i64` adds, as the JIT computes them.
fn affine<'e>(
    index: &'e Expr,
    counter: Counter,
    invariant: &impl Fn(&Expr) -> bool,
) -> Option<Option<&'e Expr>> {
    // The counter's term once found: its coefficient, `None` for 1.
    let mut found: Option<Option<&'e Expr>> = None;
    let mut stack = vec![index];
    while let Some(term) = stack.pop() {
        let coefficient = match term {
            Expr::Binary(BinaryOp::Add, a, b) => {
                stack.extend([&**a, &**b]);
                continue;
            }
            c if counter.is(c) => None,
            Expr::Binary(BinaryOp::Mul, a, b) => match (&**a, &**b) {
                (c, s) | (s, c) if counter.is(c) && invariant(s) => Some(s),
                _ if invariant(term) => continue,
                _ => return None,
            },
            other if invariant(other) => continue,
            _ => return None,
        };
        if found.replace(coefficient).is_some() {
            return None;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_core::Literal;

    fn var(v: u32) -> Expr {
        Expr::Var(Var(v))
    }

    fn add(a: Expr, b: Expr) -> Expr {
        Expr::Binary(BinaryOp::Add, Box::new(a), Box::new(b))
    }

    fn mul(a: Expr, b: Expr) -> Expr {
        Expr::Binary(BinaryOp::Mul, Box::new(a), Box::new(b))
    }

    fn load(index: Expr) -> Stmt {
        Stmt::Let(
            Var(9),
            Expr::Load {
                param: 0,
                index: Box::new(index),
            },
        )
    }

    const I: u32 = 1;

    /// The strides [`analyse`] finds in a body of one load at `index`
    /// (`Some(None)`: stride 1), or `None` when it hoists nothing.
    fn strides(index: Expr, extra: Vec<Stmt>) -> Option<Vec<Option<Expr>>> {
        let mut body = vec![load(index)];
        body.extend(extra);
        let one = Expr::Const(Literal::of(1i64));
        let hoisted = analyse(Var(I), Some(&Expr::Param(3)), &one, &body, &HashSet::new())?;
        Some(hoisted.accesses.iter().map(|a| a.stride.clone()).collect())
    }

    #[test]
    fn affine_indices_are_found_with_their_strides() {
        assert_eq!(strides(var(I), vec![]), Some(vec![None]));
        assert_eq!(strides(add(var(2), var(I)), vec![]), Some(vec![None]));
        let strided = add(var(2), add(mul(var(I), Expr::Param(1)), var(4)));
        assert_eq!(strides(strided, vec![]), Some(vec![Some(Expr::Param(1))]));
        let scaled_base = add(mul(var(2), var(5)), mul(Expr::Param(1), var(I)));
        assert_eq!(
            strides(scaled_base, vec![]),
            Some(vec![Some(Expr::Param(1))])
        );
    }

    #[test]
    fn other_indices_stay_checked_at_every_access() {
        // The counter twice, its square, a register the body sets, a
        // subtraction, a load.
        assert_eq!(strides(add(var(I), var(I)), vec![]), None);
        assert_eq!(strides(mul(var(I), var(I)), vec![]), None);
        let set = vec![Stmt::Assign(Var(2), var(I))];
        assert_eq!(strides(add(var(2), var(I)), set), None);
        let minus = Expr::Binary(BinaryOp::Sub, Box::new(var(2)), Box::new(var(I)));
        assert_eq!(strides(minus, vec![]), None);
        let loaded = Expr::Load {
            param: 1,
            index: Box::new(var(2)),
        };
        assert_eq!(strides(add(loaded.clone(), var(I)), vec![]), None);
        // A load is unchanging only from a read-only buffer at an
        // unchanging index.
        let body = vec![load(add(loaded.clone(), var(I)))];
        let one = Expr::Const(Literal::of(1i64));
        let read_only = HashSet::from([1]);
        let hoisted = analyse(Var(I), Some(&Expr::Param(3)), &one, &body, &read_only).unwrap();
        assert_eq!(hoisted.accesses.len(), 1);
        let moving = Expr::Load {
            param: 1,
            index: Box::new(var(I)),
        };
        let body = vec![load(add(moving, var(I)))];
        let hoisted = analyse(Var(I), Some(&Expr::Param(3)), &one, &body, &read_only).unwrap();
        assert_eq!(hoisted.accesses.len(), 1, "only the inner load, at i");
        assert_eq!(hoisted.accesses[0].param, 1);
        // A loop that sets its own counter is not hoisted at all.
        let sets_counter = vec![Stmt::Assign(Var(I), var(2))];
        assert_eq!(strides(var(I), sets_counter), None);
    }

    /// The body of a kernel of the kernel builder.
    fn body_of(build: impl FnOnce(&mut lazyfuse_kernel::KernelScope)) -> Vec<Stmt> {
        let kernel = lazyfuse_kernel::Kernel::build("k", build).unwrap();
        kernel.device_kernel().body.clone()
    }

    #[test]
    fn the_grid_position_is_affine_in_the_thread_through_its_register() {
        let body = body_of(|k| {
            let a = k.array_mut("a", DType::F32, 1);
            let pos = k.grid(1).remove(0);
            k.if_(pos.lt(a.len(0)), |k| k.store(&a, &pos, a.at(&pos) + 1.0));
        });
        let hoisted = analyse_threads(&body, &HashSet::new()).unwrap();
        assert_eq!(hoisted.accesses.len(), 2);
        assert!(hoisted.accesses.iter().all(|a| a.stride.is_none()));
        assert_eq!(hoisted.conditions.len(), 1);
        assert!(matches!(
            hoisted.conditions[0].terms[..],
            [Term::Below {
                inclusive: false,
                ..
            }]
        ));
        assert!(blockwise(&body, 0));
    }

    #[test]
    fn a_neighbour_or_a_reassigned_position_is_not_blockwise() {
        let neighbour = body_of(|k| {
            let a = k.array_mut("a", DType::F32, 1);
            let pos = k.grid(1).remove(0);
            let next = &pos + 1.0;
            k.if_(next.lt(a.len(0)), |k| k.store(&a, &pos, a.at(&next)));
        });
        // Still checked once per row (both indices are affine)...
        assert_eq!(
            analyse_threads(&neighbour, &HashSet::new())
                .unwrap()
                .accesses
                .len(),
            2
        );
        // ... but block `b` reads its neighbour's first element.
        assert!(!blockwise(&neighbour, 0));
        let reassigned = body_of(|k| {
            let a = k.array_mut("a", DType::F32, 1);
            let pos = k.grid(1).remove(0);
            let at = k.local(pos.clone());
            k.set(&at, at.get() * 2.0);
            k.if_(at.get().lt(a.len(0)), |k| k.store(&a, at.get(), 1.0));
        });
        assert!(analyse_threads(&reassigned, &HashSet::new()).is_none());
        assert!(!blockwise(&reassigned, 0));
    }

    #[test]
    fn a_condition_of_each_thread_is_not_folded() {
        let body = body_of(|k| {
            let a = k.array_mut("a", DType::F64, 1);
            let pos = k.grid(1).remove(0);
            let third = (&pos % 3.0).eq(0i64);
            k.if_(pos.lt(a.len(0)).and(third), |k| k.store(&a, &pos, 1.0));
        });
        let hoisted = analyse_threads(&body, &HashSet::new()).unwrap();
        assert_eq!(hoisted.accesses.len(), 1);
        assert!(hoisted.conditions.is_empty());
    }
}
