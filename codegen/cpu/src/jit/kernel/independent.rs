//! Independent loops on several cores: a gufunc's `par_range` and
//! `par_reduce` ([`IndependentLoop`]) when the kernel runs one thread per
//! loop element, so that a gufunc with few loop elements (one long row)
//! still uses the whole machine.
//!
//! Each such loop is compiled a second time as a function of its own, a
//! *piece function* running the iterations `start..end` of one piece of the
//! range. When the range is at least two pieces long ([`PIECE`] iterations
//! each) the kernel calls [`run_pieces`] instead of looping: it cuts the
//! range into at most
//! [`MAX_PIECES`] pieces and runs them on the worker pool. The registers the
//! body reads (and the launch builtins) reach the piece functions through
//! an environment table the kernel fills before the call. A reduction's
//! pieces each start from the identity and store their partial result;
//! the kernel then combines the partial results in order. The pieces depend
//! on the range's length only, never on the number of threads, so the
//! result is the same for any thread count.

use std::collections::{BTreeSet, HashSet};

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, InstBuilder, MemFlags, Signature, StackSlotData, StackSlotKind, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use lazyfuse_core::{BinaryOp, DType, Wide};
use lazyfuse_device::ir::{DeviceKernel, Expr, IndependentLoop, Stmt, Var};
use smallvec::smallvec;

use super::super::super::tasks::all_indices;
use super::super::ops::Lowering;
use super::super::support::Unsupported;
use super::lowering::{finish_function, scalar_type_of, Bound, KernelLowering, Outlined};
use super::walk::{self, Node};

/// Iterations per piece at least (below twice this, a loop runs inline):
/// enough to repay handing a piece to another thread.
pub(super) const PIECE: i64 = 1 << 14;

/// The most pieces of one loop: enough to balance the work over the cores.
pub(super) const MAX_PIECES: usize = 64;

/// `(env, args, lens, start, end, partial) -> status`: a piece function.
type PieceFn = unsafe extern "C" fn(*const u64, *const u64, *const u64, i64, i64, *mut u64) -> u64;

/// An independent loop of a kernel, to be compiled into a piece function.
pub(super) struct Plan<'k> {
    pub(super) outlined: Outlined,
    step: &'k Expr,
    body: &'k [Stmt],
}

/// The kernel's independent loops that can become piece functions: those
/// counting by 1 whose bodies use no local array (a thread's local array
/// would be shared by the pieces) and, for a reduction, end by combining
/// the accumulator.
pub(super) fn plan(kernel: &DeviceKernel) -> Vec<Plan<'_>> {
    let mut plans = Vec::new();
    if kernel.independent.is_empty() {
        return plans;
    }
    let mut stack: Vec<&Stmt> = kernel.body.iter().collect();
    while let Some(stmt) = stack.pop() {
        match stmt {
            Stmt::For {
                var, step, body, ..
            } => match kernel.independent.iter().find(|l| l.counter == *var) {
                Some(independent) => plans.extend(plan_loop(independent, step, body)),
                None => stack.extend(body),
            },
            Stmt::If {
                then, otherwise, ..
            } => stack.extend(then.iter().chain(otherwise)),
            Stmt::While { body, .. } => stack.extend(body),
            _ => {}
        }
    }
    plans
}

fn plan_loop<'k>(
    independent: &IndependentLoop,
    step: &'k Expr,
    body: &'k [Stmt],
) -> Option<Plan<'k>> {
    let counts_by_one = matches!(step, Expr::Const(l) if matches!(l.to_wide(), Wide::Int(1)));
    let combines = match (independent.reduction, body.last()) {
        (None, _) => true,
        (Some((acc, op)), Some(Stmt::Assign(target, Expr::Binary(last, a, _)))) => {
            *target == acc && *last == op && **a == Expr::Var(acc)
        }
        _ => false,
    };
    let (captures, uses_locals) = free_registers(body);
    (counts_by_one && combines && !uses_locals).then(|| Plan {
        outlined: Outlined {
            counter: independent.counter,
            reduction: independent.reduction,
            captures: captures
                .into_iter()
                .filter(|&v| v != independent.counter)
                .collect(),
            function: None,
        },
        step,
        body,
    })
}

/// The registers `body` reads or sets without declaring them, in order,
/// and whether it touches a local array.
fn free_registers(body: &[Stmt]) -> (Vec<Var>, bool) {
    let (mut used, mut declared) = (BTreeSet::new(), HashSet::new());
    let mut uses_locals = false;
    for node in walk::nodes(body) {
        match node {
            Node::Stmt(Stmt::Let(var, _) | Stmt::For { var, .. }) => {
                declared.insert(var.0);
            }
            Node::Stmt(Stmt::Assign(var, _)) | Node::Expr(Expr::Var(var)) => {
                used.insert(var.0);
            }
            // Statements the JIT refuses count as local arrays, so that no
            // piece function is attempted.
            Node::Stmt(
                Stmt::StoreShared { .. }
                | Stmt::LoadVector { .. }
                | Stmt::StoreVector { .. }
                | Stmt::Atomic { .. }
                | Stmt::Barrier
                | Stmt::Fence(_)
                | Stmt::Print(_)
                | Stmt::Warp { .. }
                | Stmt::ShuffleDown { .. },
            )
            | Node::Expr(Expr::LoadShared { .. }) => uses_locals = true,
            Node::Stmt(_) | Node::Expr(_) => {}
        }
    }
    let free = used.into_iter().filter(|v| !declared.contains(v));
    (free.map(Var).collect(), uses_locals)
}

/// The signature of a piece function.
pub(super) fn piece_signature(call_conv: CallConv) -> Signature {
    let mut signature = Signature::new(call_conv);
    signature.params.extend([AbiParam::new(types::I64); 6]);
    signature.returns.push(AbiParam::new(types::I64));
    signature
}

/// The signature of [`run_pieces`].
fn run_pieces_signature(call_conv: CallConv) -> Signature {
    let mut signature = Signature::new(call_conv);
    signature.params.extend([AbiParam::new(types::I64); 8]);
    signature.returns.push(AbiParam::new(types::I64));
    signature
}

/// Bytes of the environment table of `outlined`: its captured registers,
/// then the twelve launch builtins, eight bytes each.
fn env_bytes(outlined: &Outlined) -> u32 {
    8 * (outlined.captures.len() as u32 + 12)
}

/// Emits the piece function of `plan`: loads the environment, runs the
/// loop over `start..end`, stores a reduction's partial result.
pub(super) fn emit_piece(
    mut b: FunctionBuilder<'_>,
    kernel: &DeviceKernel,
    plan: &Plan<'_>,
    call_conv: CallConv,
) -> Result<(), Unsupported> {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let (env, args, lens, start, end, partial) = (p[0], p[1], p[2], p[3], p[4], p[5]);
    let flags = MemFlags::trusted();
    let slots = super::load_slots(&mut b, kernel, args, lens)?;
    let vars = super::declare_vars(&mut b, kernel)?;
    let outlined = &plan.outlined;
    for (k, var) in outlined.captures.iter().enumerate() {
        let ty = scalar_type_of(kernel.vars[var.index()])?;
        let value = b.ins().load(ty, flags, env, (8 * k) as i32);
        b.def_var(vars[var.index()], value);
    }
    let first_special = 8 * outlined.captures.len();
    let specials: [Value; 12] = std::array::from_fn(|s| {
        b.ins()
            .load(types::I32, flags, env, (first_special + 8 * s) as i32)
    });
    let out_of_bounds = b.create_block();
    let none = Default::default();
    let body = lazyfuse_fusion::Body::default();
    {
        let mut lowering = KernelLowering {
            ops: Lowering::scalar(&mut b, &body),
            kernel,
            vars: vars.clone(),
            slots,
            specials,
            out_of_bounds,
            locals: Vec::new(),
            args,
            lens,
            spread: None,
            outlined: &none,
            call_conv,
            proven: Vec::new(),
        };
        lowering.counted_loop(
            outlined.counter,
            start,
            Bound::Value(end),
            plan.step,
            plan.body,
        )?;
    }
    if let Some((acc, _)) = outlined.reduction {
        let value = b.use_var(vars[acc.index()]);
        b.ins().store(flags, value, partial, 0);
    }
    finish_function(b, out_of_bounds);
    Ok(())
}

impl KernelLowering<'_, '_, '_> {
    /// An independent loop of the launch function: inline when its range
    /// is shorter than two pieces, else through [`run_pieces`], then the reduction's
    /// partial results combined in order.
    pub(super) fn independent_loop(
        &mut self,
        outlined: &Outlined,
        (start, end): (&Expr, &Expr),
        (step, body): (&Expr, &[Stmt]),
        spread: Value,
    ) -> Result<(), Unsupported> {
        let function = outlined.function.ok_or("a piece function not declared")?;
        let (s, _) = self.expr(start)?;
        let (e, _) = self.expr(end)?;
        let n = self.ops.b.ins().isub(e, s);
        let long = self
            .ops
            .b
            .ins()
            .icmp_imm(IntCC::SignedGreaterThanOrEqual, n, 2 * PIECE);
        let (inline, pieces, merge) = (self.block(), self.block(), self.block());
        self.ops.b.ins().brif(long, pieces, &[], inline, &[]);

        self.ops.b.switch_to_block(inline);
        self.counted_loop(outlined.counter, s, Bound::Value(e), step, body)?;
        self.ops.b.ins().jump(merge, &[]);

        self.ops.b.switch_to_block(pieces);
        let env = self.environment(outlined)?;
        let partials = self.ops.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            8 * MAX_PIECES as u32,
            3,
        ));
        let b = &mut self.ops.b;
        let partials = b.ins().stack_addr(types::I64, partials, 0);
        let piece = b.ins().func_addr(types::I64, function);
        let helper = b
            .ins()
            .iconst(types::I64, run_pieces as *const () as usize as i64);
        let signature = b.import_signature(run_pieces_signature(self.call_conv));
        let call_args = [piece, env, self.args, self.lens, s, e, spread, partials];
        let call = b.ins().call_indirect(signature, helper, &call_args);
        let count = b.inst_results(call)[0];
        let combine = b.create_block();
        b.ins().brif(count, combine, &[], self.out_of_bounds, &[]);
        b.switch_to_block(combine);
        if let Some((acc, op)) = outlined.reduction {
            self.combine_partials((acc, op), partials, count)?;
        }
        self.ops.b.ins().jump(merge, &[]);
        self.ops.b.switch_to_block(merge);
        Ok(())
    }

    /// Fills the environment table of `outlined` on the stack; its address.
    fn environment(&mut self, outlined: &Outlined) -> Result<Value, Unsupported> {
        let flags = MemFlags::trusted();
        let slot = self.ops.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            env_bytes(outlined),
            3,
        ));
        let env = self.ops.b.ins().stack_addr(types::I64, slot, 0);
        for (k, var) in outlined.captures.iter().enumerate() {
            let value = self.ops.b.use_var(self.vars[var.index()]);
            self.ops.b.ins().store(flags, value, env, (8 * k) as i32);
        }
        let first_special = 8 * outlined.captures.len();
        for (s, &value) in self.specials.iter().enumerate() {
            let offset = (first_special + 8 * s) as i32;
            self.ops.b.ins().store(flags, value, env, offset);
        }
        Ok(env)
    }

    /// `acc = acc op partials[c]` for `c` in `0..count`, in order.
    fn combine_partials(
        &mut self,
        (acc, op): (Var, BinaryOp),
        partials: Value,
        count: Value,
    ) -> Result<(), Unsupported> {
        let dtype: DType = self.kernel.vars[acc.index()];
        let ty = scalar_type_of(dtype)?;
        let variable = self.vars[acc.index()];
        let c = self.ops.b.declare_var(types::I64);
        let zero = self.ops.b.ins().iconst(types::I64, 0);
        self.ops.b.def_var(c, zero);
        let (head, inner, exit) = (self.block(), self.block(), self.block());
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(head);
        let i = self.ops.b.use_var(c);
        let more = self.ops.b.ins().icmp(IntCC::UnsignedLessThan, i, count);
        self.ops.b.ins().brif(more, inner, &[], exit, &[]);
        self.ops.b.switch_to_block(inner);
        let offset = self.ops.b.ins().imul_imm(i, 8);
        let address = self.ops.b.ins().iadd(partials, offset);
        let partial = self.ops.b.ins().load(ty, MemFlags::trusted(), address, 0);
        let current = self.ops.b.use_var(variable);
        let combined = self
            .ops
            .binary(op, &smallvec![current], &smallvec![partial], dtype)?[0];
        self.ops.b.def_var(variable, combined);
        let next = self.ops.b.ins().iadd_imm(i, 1);
        self.ops.b.def_var(c, next);
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }
}

/// How many pieces a range of `n` iterations is cut into.
fn pieces(n: i64) -> usize {
    usize::try_from(n.div_euclid(PIECE).max(1))
        .unwrap_or(MAX_PIECES)
        .min(MAX_PIECES)
}

/// The pointers a piece function receives, shared by the threads running
/// pieces.
#[derive(Clone, Copy)]
struct Shared {
    env: *const u64,
    args: *const u64,
    lens: *const u64,
    partials: *mut u64,
}

// SAFETY: the tables behind `env`, `args` and `lens` are only read while
// the pieces run, and each piece writes its own element of `partials`; the
// buffers the arguments point to are written by the pieces at elements no
// other piece touches (the loop's iterations are independent).
unsafe impl Send for Shared {}
// SAFETY: as for `Send`.
unsafe impl Sync for Shared {}

impl Shared {
    /// Runs `piece` over `range`, its partial result into `partials[p]`;
    /// `false` when it stopped at an access outside its buffer.
    ///
    /// # Safety
    /// As for [`run_pieces`], with `p < MAX_PIECES`.
    unsafe fn run(&self, piece: PieceFn, range: std::ops::Range<i64>, p: usize) -> bool {
        // SAFETY: the caller's contract: `piece` belongs to the kernel whose
        // tables these are, and `partials[p]` lies inside the table.
        unsafe {
            piece(
                self.env,
                self.args,
                self.lens,
                range.start,
                range.end,
                self.partials.add(p),
            ) == 0
        }
    }
}

/// Runs the pieces of the range `start..end` of an independent loop with
/// `piece` (on the calling thread and the team's workers, `spread` threads
/// in all; one after another for 0 or 1) and returns how many there were,
/// or 0 when one stopped at an access outside its buffer. Piece `p` stores a reduction's partial
/// result in `partials[p]`.
///
/// # Safety
/// `piece` is a piece function of a kernel whose launch function calls
/// this with its own environment table, argument table and buffer lengths;
/// `partials` has room for [`MAX_PIECES`] values; `start < end`.
unsafe extern "C" fn run_pieces(
    piece: PieceFn,
    env: *const u64,
    args: *const u64,
    lens: *const u64,
    start: i64,
    end: i64,
    spread: u64,
    partials: *mut u64,
) -> u64 {
    let n = end - start;
    let count = pieces(n);
    let shared = Shared {
        env,
        args,
        lens,
        partials,
    };
    let run = |p: usize| {
        let (p64, count64) = (p as i64, count as i64);
        let range = start + n * p64 / count64..start + n * (p64 + 1) / count64;
        // SAFETY: this function's contract; `p < count <= MAX_PIECES`.
        unsafe { shared.run(piece, range, p) }
    };
    if all_indices(spread as usize, count, run) {
        count as u64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_depend_on_the_length_only_and_are_bounded() {
        assert_eq!(pieces(1), 1);
        assert_eq!(pieces(2 * PIECE - 1), 1);
        assert_eq!(pieces(2 * PIECE), 2);
        assert_eq!(pieces(10_000_000), MAX_PIECES);
        assert_eq!(pieces(i64::MAX), MAX_PIECES);
    }
}
