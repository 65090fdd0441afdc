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
//!
//! The loop over a block's threads is checked the same way, once per row
//! of threads, with `threadIdx.x` as its counter; the `affine` module
//! finds the accesses. An `if` at the top of a body whose condition
//! compares an affine value with an unchanging bound holds in every
//! iteration when it holds in the first and the last: where it does, the
//! loop runs its body with the `if` folded away (and a row of threads may
//! then run on vectors, see `simd`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use std::collections::HashSet;

use lazyfuse_core::DType;
use lazyfuse_device::ir::ParamKind;
use lazyfuse_device::ir::{Expr, Stmt, Var};

use super::super::support::Unsupported;
use super::affine::{analyse, analyse_threads, Condition, Counter, Hoisted, Term};
use super::lowering::{Bound, KernelLowering, Slot};

/// Iterations per turn of an unrolled loop.
const UNROLL: i64 = 4;

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
        let end_expr = match end {
            Bound::Expr(end) => Some(end),
            Bound::Value(_) => None,
        };
        match analyse(var, end_expr, step, body, &self.read_only()) {
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
        let e = self.bound(end)?;
        let proof = self.checked_once(Counter::Var(var), (start, e), hoisted)?;
        let variable = self.vars[var.index()];
        let counter = Counter::Var(var);
        self.either(&proof, |this, path| {
            this.ops.b.def_var(variable, start);
            if path == Path::Checked {
                return this.plain_loop(var, start, Bound::Value(e), step, body);
            }
            if hoisted.unroll {
                let last_turn = this.ops.b.ins().iadd_imm(e, 1 - UNROLL);
                this.turns(counter, variable, last_turn, UNROLL, body)?;
            }
            this.turns(counter, variable, e, 1, body)
        })
    }

    /// The loop over a row of a block's threads: `threadIdx.x` from 0 to
    /// `width - 1` (the other builtins set), each running `body`; its
    /// accesses checked once per row where they can be.
    /// With `vectorize`, where every access is checked once and every
    /// condition folded, groups of threads run on vectors (`simd`); says
    /// whether they do.
    pub(super) fn threads(
        &mut self,
        width: Value,
        body: &[Stmt],
        vectorize: bool,
    ) -> Result<bool, Unsupported> {
        let zero = self.ops.b.ins().iconst(types::I64, 0);
        let variable = self.ops.b.declare_var(types::I64);
        let Some(hoisted) = analyse_threads(body, &self.read_only()) else {
            self.ops.b.def_var(variable, zero);
            self.turns(Counter::ThreadX, variable, width, 1, body)?;
            return Ok(false);
        };
        let proof = self.checked_once(Counter::ThreadX, (zero, width), &hoisted)?;
        let mut on_vectors = false;
        self.either(&proof, |this, path| {
            this.ops.b.def_var(variable, zero);
            if vectorize && path == Path::Folded {
                let contiguous = hoisted.contiguous();
                this.vector_row(variable, width, body, &contiguous)?;
                on_vectors = true;
            } else if path != Path::Checked && hoisted.unroll {
                let last_turn = this.ops.b.ins().iadd_imm(width, 1 - UNROLL);
                this.turns(Counter::ThreadX, variable, last_turn, UNROLL, body)?;
            }
            this.turns(Counter::ThreadX, variable, width, 1, body)
        })?;
        Ok(on_vectors)
    }

    /// Lowers `run` on each path: where `proof` holds, with its accesses
    /// unchecked ([`Path::InBounds`]) and, where its conditions hold too,
    /// their `if`s folded ([`Path::Folded`]); where it does not, with every
    /// access checked ([`Path::Checked`]).
    fn either(
        &mut self,
        proof: &Proof,
        mut run: impl FnMut(&mut Self, Path) -> Result<(), Unsupported>,
    ) -> Result<(), Unsupported> {
        let (fast, checked, exit) = (self.block(), self.block(), self.block());
        self.ops
            .b
            .ins()
            .brif(proof.in_bounds, fast, &[], checked, &[]);
        self.ops.b.switch_to_block(fast);
        let before = self.proven.len();
        self.proven.extend_from_slice(&proof.accesses);
        if let Some(hold) = proof.conditions_hold {
            let (folded, unfolded) = (self.block(), self.block());
            self.ops.b.ins().brif(hold, folded, &[], unfolded, &[]);
            self.ops.b.switch_to_block(folded);
            let accesses_only = self.proven.len();
            self.proven.extend_from_slice(&proof.conditions);
            run(self, Path::Folded)?;
            self.proven.truncate(accesses_only);
            self.ops.b.ins().jump(exit, &[]);
            self.ops.b.switch_to_block(unfolded);
        }
        // With no conditions to fold, every `if` that can be is.
        let unfolded = match proof.conditions_hold {
            Some(_) => Path::InBounds,
            None => Path::Folded,
        };
        run(self, unfolded)?;
        self.proven.truncate(before);
        self.ops.b.ins().jump(exit, &[]);
        self.ops.b.switch_to_block(checked);
        run(self, Path::Checked)?;
        self.ops.b.ins().jump(exit, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }

    /// The kernel's input buffers: no thread writes them, and none shares
    /// memory with a written buffer (each written argument is a buffer of
    /// its own, copied or taken whole), so loads from them are unchanging.
    fn read_only(&self) -> HashSet<u32> {
        (self.kernel.params.iter().enumerate())
            .filter(|(_, p)| matches!(p.kind, ParamKind::Input(_)))
            .filter_map(|(i, _)| u32::try_from(i).ok())
            .collect()
    }

    /// Sets `counter` to `at` (a register counter's variable, or
    /// `threadIdx.x`).
    fn set_counter(&mut self, counter: Counter, at: Value) {
        match counter {
            Counter::Var(var) => self.ops.b.def_var(self.vars[var.index()], at),
            Counter::ThreadX => self.specials[0] = self.ops.b.ins().ireduce(types::I32, at),
        }
    }

    /// Evaluates, before the loop, whether every access of `hoisted`
    /// stays inside its buffer while `counter` runs over `start..end`, and
    /// whether its conditions hold throughout; leaves a register counter
    /// undefined for the loop, and `threadIdx.x` as it was.
    fn checked_once(
        &mut self,
        counter: Counter,
        (start, end): (Value, Value),
        hoisted: &Hoisted<'_>,
    ) -> Result<Proof, Unsupported> {
        let b = &mut self.ops.b;
        let last = b.ins().iadd_imm(end, -1);
        let span = b.ins().isub(last, start);
        let nonempty = b.ins().icmp(IntCC::SignedLessThan, start, end);
        let short = b.ins().icmp_imm(IntCC::UnsignedLessThan, span, 1 << 32);
        let mut in_bounds = b.ins().band(nonempty, short);
        let thread_x = self.specials[0];
        for access in &hoisted.accesses {
            let Some(Slot::Buffer { len, .. }) = self.slots.get(access.param as usize).copied()
            else {
                return Err("a load from a parameter that is not a buffer");
            };
            let small = self.small_stride(access.stride.as_ref())?;
            in_bounds = self.ops.b.ins().band(in_bounds, small);
            for at in [start, last] {
                self.set_counter(counter, at);
                let (i, _) = self.expr(&access.index)?;
                let inside = (self.ops.b.ins()).icmp(IntCC::UnsignedLessThan, i, len);
                in_bounds = self.ops.b.ins().band(in_bounds, inside);
            }
        }
        let mut proof = Proof {
            in_bounds,
            accesses: (hoisted.accesses.iter())
                .map(|a| a.at as *const Expr)
                .collect(),
            conditions_hold: None,
            conditions: Vec::new(),
        };
        for condition in &hoisted.conditions {
            if let Some(holds) = self.holds_throughout(counter, (start, last), condition)? {
                let all = proof.conditions_hold.unwrap_or(holds);
                proof.conditions_hold = Some(self.ops.b.ins().band(all, holds));
                proof.conditions.push(condition.at as *const Expr);
            }
        }
        self.specials[0] = thread_x;
        Ok(proof)
    }

    /// Whether `condition` holds for every value of `counter` from `first`
    /// to `last` (a `bool`), or `None` when a compared `x` is not an `i64`
    /// (the signed reasoning below is for 64 bits).
    ///
    /// `x` steps by a stride below `2^31` over fewer than `2^32`
    /// iterations, so its exact span is below `2^63`: when its last value
    /// is not below its first, no iteration wrapped, every value lies
    /// between them, and the last one decides `x < bound`.
    fn holds_throughout(
        &mut self,
        counter: Counter,
        (first, last): (Value, Value),
        condition: &Condition<'_>,
    ) -> Result<Option<Value>, Unsupported> {
        let mut holds = self.ops.b.ins().iconst(types::I8, 1);
        for term in &condition.terms {
            let term_holds = match term {
                Term::Invariant(t) => {
                    let (v, _) = self.expr(t)?;
                    self.ops.b.ins().icmp_imm(IntCC::NotEqual, v, 0)
                }
                Term::Below {
                    x,
                    stride,
                    bound,
                    inclusive,
                } => {
                    let small = self.small_stride(stride.as_ref())?;
                    let (bound, _) = self.expr(bound)?;
                    self.set_counter(counter, first);
                    let (x_first, dtype) = self.expr(x)?;
                    if dtype != DType::I64 {
                        return Ok(None);
                    }
                    self.set_counter(counter, last);
                    let (x_last, _) = self.expr(x)?;
                    let b = &mut self.ops.b;
                    let grows = b.ins().icmp(IntCC::SignedLessThanOrEqual, x_first, x_last);
                    let below = if *inclusive {
                        IntCC::SignedLessThanOrEqual
                    } else {
                        IntCC::SignedLessThan
                    };
                    let below = b.ins().icmp(below, x_last, bound);
                    let both = b.ins().band(grows, below);
                    b.ins().band(both, small)
                }
            };
            holds = self.ops.b.ins().band(holds, term_holds);
        }
        Ok(Some(holds))
    }

    /// Whether a counter's coefficient is below `2^31` (a `bool`; true for
    /// the coefficient 1).
    fn small_stride(&mut self, stride: Option<&Expr>) -> Result<Value, Unsupported> {
        Ok(match stride {
            Some(stride) => {
                let (s, _) = self.expr(stride)?;
                (self.ops.b.ins()).icmp_imm(IntCC::UnsignedLessThan, s, 1 << 31)
            }
            None => self.ops.b.ins().iconst(types::I8, 1),
        })
    }

    /// `while counter < bound { body; counter += 1 }` with the counter in
    /// `variable`, the body repeated `times` times per turn (`bound` is the
    /// end less `times - 1`).
    fn turns(
        &mut self,
        counter: Counter,
        variable: cranelift_frontend::Variable,
        bound: Value,
        times: i64,
        body: &[Stmt],
    ) -> Result<(), Unsupported> {
        let (head, inner, exit) = (self.block(), self.block(), self.block());
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(head);
        let at = self.ops.b.use_var(variable);
        let more = (self.ops.b.ins()).icmp(IntCC::SignedLessThan, at, bound);
        self.ops.b.ins().brif(more, inner, &[], exit, &[]);
        self.ops.b.switch_to_block(inner);
        for _ in 0..times {
            if let Counter::ThreadX = counter {
                let at = self.ops.b.use_var(variable);
                self.set_counter(counter, at);
            }
            self.stmts(body)?;
            let at = self.ops.b.use_var(variable);
            let next = self.ops.b.ins().iadd_imm(at, 1);
            self.ops.b.def_var(variable, next);
        }
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }
}

/// The variants of a loop that [`KernelLowering::either`] lowers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Every access checked where it happens.
    Checked,
    /// The hoisted accesses unchecked.
    InBounds,
    /// Those, and the `if`s of the hoisted conditions folded.
    Folded,
}

/// What [`KernelLowering::checked_once`] found, as values of the function.
struct Proof {
    /// Whether every hoisted access stays inside its buffer.
    in_bounds: Value,
    /// Those accesses' indices.
    accesses: Vec<*const Expr>,
    /// Whether the conditions below hold throughout (`None`: none to fold).
    conditions_hold: Option<Value>,
    conditions: Vec<*const Expr>,
}
