//! Loops whose accesses are checked once, before the loop: a `for` loop
//! counting by 1 whose loads and stores index their buffers with an affine
//! function of the counter (`base + i`, `base + i * stride + j`, with
//! everything but `i` unchanged by the body) touches, over its range, the
//! elements between those of its first and last iterations. When both are
//! inside their buffers, the loop runs a copy of its body with those
//! accesses unchecked, four iterations per turn when the body is small
//! and has no loop of its own; otherwise the checked loop runs, and stops
//! at the first bad access as before.
//!
//! Why the two checks suffice: the body computes every index with wrapping
//! 64-bit adds and multiplies, so the index of iteration `k` is
//! `(c + k * stride) mod 2^64` for a fixed `c`. With `0 <= stride < 2^31`
//! and fewer than `2^32` iterations, the indices of the range span less
//! than `2^63`; starting from a first index below the buffer's length
//! (below `2^63`) they cannot wrap, so they grow from the first to the
//! last, and both inside the buffer means all are.

use std::collections::HashSet;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_core::{BinaryOp, Wide};
use lazyfuse_device::ir::{Expr, Stmt, Var};

use super::super::support::Unsupported;
use super::lowering::{Bound, KernelLowering, Slot};
use super::walk::{self, Node};

/// Iterations per turn of an unrolled loop.
const UNROLL: i64 = 4;

/// Expression and statement nodes above which a body is not unrolled.
const MAX_UNROLLED_NODES: usize = 48;

/// A load or store whose index is affine in the loop's counter.
struct Access<'e> {
    param: u32,
    index: &'e Expr,
    /// The counter's coefficient; `None` for 1.
    stride: Option<&'e Expr>,
}

/// What a loop that can be checked once needs.
struct Hoisted<'e> {
    accesses: Vec<Access<'e>>,
    /// Whether the body is small and loop-free, so worth unrolling.
    unroll: bool,
}

/// The accesses of `body` that can be checked before the loop, when the
/// loop counts `counter` by 1 up to an `end` the body does not change.
fn analyse<'e>(counter: Var, end: Bound<'_>, step: &Expr, body: &'e [Stmt]) -> Option<Hoisted<'e>> {
    if !matches!(step, Expr::Const(l) if matches!(l.to_wide(), Wide::Int(1))) {
        return None;
    }
    let walk = Walk::of(body);
    if walk.set.contains(&counter) {
        return None;
    }
    let invariant = |e: &Expr| invariant(e, counter, &walk.set);
    if let Bound::Expr(end) = end {
        if !invariant(end) {
            return None;
        }
    }
    let accesses: Vec<Access<'e>> = (walk.accesses.iter())
        .filter_map(|&(param, index)| {
            let stride = affine(index, counter, &invariant)?;
            Some(Access {
                param,
                index,
                stride,
            })
        })
        .collect();
    (!accesses.is_empty()).then_some(Hoisted {
        accesses,
        unroll: walk.loop_free && walk.nodes <= MAX_UNROLLED_NODES,
    })
}

/// What [`analyse`] gathers from a loop body in one walk.
#[derive(Default)]
struct Walk<'e> {
    /// Registers the body declares or sets.
    set: HashSet<Var>,
    /// Every load and store of a buffer: its parameter and index.
    accesses: Vec<(u32, &'e Expr)>,
    loop_free: bool,
    nodes: usize,
}

impl<'e> Walk<'e> {
    fn of(body: &'e [Stmt]) -> Walk<'e> {
        let mut walk = Walk {
            loop_free: true,
            ..Walk::default()
        };
        for node in walk::nodes(body) {
            walk.nodes += 1;
            match node {
                Node::Stmt(Stmt::Let(var, _) | Stmt::Assign(var, _)) => {
                    walk.set.insert(*var);
                }
                Node::Stmt(Stmt::Store { param, index, .. }) => {
                    walk.accesses.push((*param, index));
                }
                Node::Expr(Expr::Load { param, index }) => walk.accesses.push((*param, index)),
                Node::Stmt(Stmt::For { var, .. }) => {
                    walk.loop_free = false;
                    walk.set.insert(*var);
                }
                Node::Stmt(Stmt::While { .. }) => walk.loop_free = false,
                Node::Stmt(Stmt::LoadVector { dst, .. }) => walk.set.extend(dst.iter().copied()),
                Node::Stmt(Stmt::Atomic { old, .. }) => walk.set.extend(*old),
                Node::Stmt(Stmt::ShuffleDown { dst, .. }) => {
                    walk.set.insert(*dst);
                }
                Node::Stmt(_) | Node::Expr(_) => {}
            }
        }
        walk
    }
}

/// Whether `expr` has the same value in every iteration: it reads no
/// memory, not the counter, and no register the body sets.
fn invariant(expr: &Expr, counter: Var, set: &HashSet<Var>) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Var(v) if *v == counter || set.contains(v) => return false,
            Expr::Load { .. } | Expr::LoadShared { .. } => return false,
            Expr::Var(_) | Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => {}
            Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::Bitcast(_, a) => stack.push(a),
            Expr::Index(_, a, b) | Expr::Binary(_, a, b) => stack.extend([&**a, &**b]),
            Expr::Select(c, a, b) => stack.extend([&**c, &**a, &**b]),
        }
    }
    true
}

/// When `index` is a sum of invariant terms and one term `counter`,
/// `counter * s` or `s * counter` (`s` invariant), that term's coefficient
/// (`None` for 1). Sums are wrapping `i64` adds, as the JIT computes them.
fn affine<'e>(
    index: &'e Expr,
    counter: Var,
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
            Expr::Var(v) if *v == counter => None,
            Expr::Binary(BinaryOp::Mul, a, b) => match (&**a, &**b) {
                (Expr::Var(v), s) | (s, Expr::Var(v)) if *v == counter && invariant(s) => Some(s),
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

impl KernelLowering<'_, '_, '_> {
    /// `for (var = start; var < end; var += step) { body }`, signed; its
    /// accesses checked once before it where they can be.
    pub(super) fn counted_loop(
        &mut self,
        var: Var,
        start: Value,
        end: Bound<'_>,
        step: &Expr,
        body: &[Stmt],
    ) -> Result<(), Unsupported> {
        match analyse(var, end, step, body) {
            Some(hoisted) => self.hoisted_loop(var, (start, end), step, body, &hoisted),
            None => self.plain_loop(var, start, end, step, body),
        }
    }

    /// `for (var = start; var < end; var += 1) { body }` with the accesses
    /// of `hoisted` checked once before it (see the module documentation).
    fn hoisted_loop(
        &mut self,
        var: Var,
        (start, end): (Value, Bound<'_>),
        step: &Expr,
        body: &[Stmt],
        hoisted: &Hoisted<'_>,
    ) -> Result<(), Unsupported> {
        let e = match end {
            Bound::Expr(end) => self.expr(end)?.0,
            Bound::Value(end) => end,
        };
        let in_bounds = self.checked_once(var, (start, e), hoisted)?;
        let (fast, checked, exit) = (self.block(), self.block(), self.block());
        self.ops.b.ins().brif(in_bounds, fast, &[], checked, &[]);

        self.ops.b.switch_to_block(fast);
        let before = self.proven.len();
        self.proven
            .extend(hoisted.accesses.iter().map(|a| a.index as *const Expr));
        let variable = self.vars[var.index()];
        self.ops.b.def_var(variable, start);
        if hoisted.unroll {
            let last_turn = self.ops.b.ins().iadd_imm(e, 1 - UNROLL);
            self.turns(variable, last_turn, UNROLL, body)?;
        }
        self.turns(variable, e, 1, body)?;
        self.proven.truncate(before);
        self.ops.b.ins().jump(exit, &[]);

        self.ops.b.switch_to_block(checked);
        self.plain_loop(var, start, Bound::Value(e), step, body)?;
        self.ops.b.ins().jump(exit, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }

    /// Whether every access of `hoisted` stays inside its buffer over
    /// `start..end` (a `bool`); leaves the counter undefined for the loop.
    fn checked_once(
        &mut self,
        var: Var,
        (start, end): (Value, Value),
        hoisted: &Hoisted<'_>,
    ) -> Result<Value, Unsupported> {
        let b = &mut self.ops.b;
        let last = b.ins().iadd_imm(end, -1);
        let span = b.ins().isub(last, start);
        let nonempty = b.ins().icmp(IntCC::SignedLessThan, start, end);
        let short = b.ins().icmp_imm(IntCC::UnsignedLessThan, span, 1 << 32);
        let mut ok = b.ins().band(nonempty, short);
        let variable = self.vars[var.index()];
        for access in &hoisted.accesses {
            let Some(Slot::Buffer { len, .. }) = self.slots.get(access.param as usize).copied()
            else {
                return Err("a load from a parameter that is not a buffer");
            };
            if let Some(stride) = access.stride {
                let (s, _) = self.expr(stride)?;
                let small = (self.ops.b.ins()).icmp_imm(IntCC::UnsignedLessThan, s, 1 << 31);
                ok = self.ops.b.ins().band(ok, small);
            }
            for at in [start, last] {
                self.ops.b.def_var(variable, at);
                let (i, _) = self.expr(access.index)?;
                let inside = (self.ops.b.ins()).icmp(IntCC::UnsignedLessThan, i, len);
                ok = self.ops.b.ins().band(ok, inside);
            }
        }
        Ok(ok)
    }

    /// `while var < bound { body; var += 1 }`, the body repeated `times`
    /// times per turn (`bound` is the end less `times - 1`).
    fn turns(
        &mut self,
        variable: cranelift_frontend::Variable,
        bound: Value,
        times: i64,
        body: &[Stmt],
    ) -> Result<(), Unsupported> {
        let (head, inner, exit) = (self.block(), self.block(), self.block());
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(head);
        let counter = self.ops.b.use_var(variable);
        let more = (self.ops.b.ins()).icmp(IntCC::SignedLessThan, counter, bound);
        self.ops.b.ins().brif(more, inner, &[], exit, &[]);
        self.ops.b.switch_to_block(inner);
        for _ in 0..times {
            self.stmts(body)?;
            let counter = self.ops.b.use_var(variable);
            let next = self.ops.b.ins().iadd_imm(counter, 1);
            self.ops.b.def_var(variable, next);
        }
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }
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
        let hoisted = analyse(Var(I), Bound::Expr(&Expr::Param(3)), &one, &body)?;
        Some(hoisted.accesses.iter().map(|a| a.stride.cloned()).collect())
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
        assert_eq!(strides(add(loaded, var(I)), vec![]), None);
        // A loop that sets its own counter is not hoisted at all.
        let sets_counter = vec![Stmt::Assign(Var(I), var(2))];
        assert_eq!(strides(var(I), sets_counter), None);
    }
}
