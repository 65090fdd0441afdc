//! Numba's `prange` for kernel bodies: [`KernelScope::par_range`] and
//! [`KernelScope::par_reduce`].
//!
//! A generalized ufunc whose body uses them runs one block per loop
//! element ([`Parallel::Block`]): every thread of the block runs the body,
//! computing the same values, and the iterations of a `par_range` are
//! dealt out over the threads. So that all threads always see the same
//! memory, a store outside `par_range` is made by thread 0 and followed by a
//! barrier, and every `par_range` ends with a barrier. Iterations must be
//! independent: no two write one element, none reads what another writes,
//! and none sets a local declared outside (an error: use `par_reduce`).
//! Elsewhere (plain kernels, gufuncs traced one thread per loop element, and
//! inside another `par_range`) the iterations run in order in one thread;
//! the outermost loops of a gufunc traced one thread per loop element are
//! recorded as independent, and the CPU backend runs a long one in pieces
//! on all its cores.

use lazyfuse_core::{BinaryOp, DType, ReduceOp};

use super::scope::{KernelScope, Parallel, PAR_BLOCK};
use super::val::Val;
use lazyfuse_device::ir::{Dim, Expr, IndependentLoop, Special, Stmt, Var};

impl KernelScope {
    /// `for i in prange(start, end): body(i)` — iterations that may run on
    /// different threads at once (see the module documentation).
    pub fn par_range(
        &mut self,
        start: impl Into<Val>,
        end: impl Into<Val>,
        body: impl FnOnce(&mut KernelScope, Val),
    ) {
        self.used_par = true;
        let (start, end) = (start.into(), end.into());
        if !self.spreads() {
            self.par_depth += 1;
            let (stmt, ()) = self.counted_loop((start, end, Val::from(1i64)), body);
            self.par_depth -= 1;
            self.record_independent(&stmt, None);
            self.push(stmt);
            return;
        }
        let (thread, threads) = self.thread_and_threads();
        self.par_depth += 1;
        self.for_range(start + thread, end, threads, body);
        self.par_depth -= 1;
        self.syncthreads();
    }

    /// Combines `body(i)` for `i` in `start..end` with `op` (Numba's
    /// `prange` reduction `s += f(i)`): iterations spread as in
    /// [`par_range`](Self::par_range), and partial results combine in a
    /// fixed order (a tree over the block's threads on a device, pieces of
    /// the range in order on the CPU), so each backend gives the same
    /// result for any number of threads; float sums and products of
    /// different backends may differ in the last bits. An empty range gives the operation's identity (0, 1, +inf or
    /// -inf; the dtype's extreme value for integers). Bools are summed as
    /// `i64`.
    pub fn par_reduce(
        &mut self,
        start: impl Into<Val>,
        end: impl Into<Val>,
        op: ReduceOp,
        body: impl FnOnce(&mut KernelScope, Val) -> Val,
    ) -> Val {
        self.used_par = true;
        let (start, end) = (start.into(), end.into());
        let spreads = self.spreads();
        let (first, step) = if spreads {
            let (thread, threads) = self.thread_and_threads();
            (start + thread, threads)
        } else {
            (start, Val::from(1i64))
        };
        self.par_depth += 1;
        let (mut stmt, value) = self.counted_loop((first, end, step), body);
        self.par_depth -= 1;
        let value = if value.dtype() == DType::Bool {
            value.cast(DType::I64)
        } else {
            value
        };
        let dtype = value.dtype();
        let acc = self.new_var(dtype);
        let acc_val = Val::new(Expr::Var(acc), dtype);
        if let Stmt::For { body, .. } = &mut stmt {
            body.push(Stmt::Assign(
                acc,
                acc_val.binary(op.combiner(), &value).expr,
            ));
        }
        self.push(Stmt::Let(acc, Expr::Const(op.identity(dtype))));
        if !spreads {
            self.record_independent(&stmt, Some((acc, op.combiner())));
            self.push(stmt);
            return self.let_(acc_val);
        }
        self.push(stmt);
        self.combine_over_block(op, acc_val)
    }

    /// Combines one value per thread of the block in a fixed tree through
    /// shared memory; every thread gets the result.
    fn combine_over_block(&mut self, op: ReduceOp, value: Val) -> Val {
        let dtype = value.dtype();
        let partials = self.shared_array(dtype, &[PAR_BLOCK as usize]);
        let (thread, _) = self.thread_and_threads();
        self.store_shared(&partials, &thread, value);
        self.syncthreads();
        let mut half = PAR_BLOCK / 2;
        while half > 0 {
            let other = thread.clone() + Val::from(i64::from(half));
            self.if_(thread.lt(i64::from(half)), |k| {
                let combined = partials
                    .at(&thread)
                    .binary(op.combiner(), &partials.at(&other));
                k.store_shared(&partials, &thread, combined);
            });
            self.syncthreads();
            half /= 2;
        }
        let result = self.let_(partials.at(0i64));
        // The next use of the same partials (an enclosing loop) must not
        // overwrite them before every thread has read the result.
        self.syncthreads();
        result
    }

    /// Notes `stmt`, the loop of a `par_range` or `par_reduce` that runs in
    /// order here, as independent when no other encloses it: the kernel's
    /// block trace checked that its iterations are (a CPU may spread them
    /// over cores).
    fn record_independent(&mut self, stmt: &Stmt, reduction: Option<(Var, BinaryOp)>) {
        if let (0, Stmt::For { var, .. }) = (self.par_depth, stmt) {
            self.independent.push(IndependentLoop {
                counter: *var,
                reduction,
            });
        }
    }

    /// Whether iterations of a `par_range` here are dealt out over threads.
    fn spreads(&self) -> bool {
        self.parallel == Parallel::Block && self.par_depth == 0
    }

    fn thread_and_threads(&mut self) -> (Val, Val) {
        let thread = self.let_(Self::special(Special::ThreadIdx(Dim::X)));
        let threads = self.let_(Self::special(Special::BlockDim(Dim::X)));
        (thread, threads)
    }

    /// Pushes a store to global memory. In a body that runs on a whole
    /// block, a store outside `par_range` is made once, by thread 0, and
    /// every thread waits until it is visible.
    pub(crate) fn store_once(&mut self, store: Stmt) {
        if !self.spreads() {
            self.push(store);
            return;
        }
        let thread = Self::special(Special::ThreadIdx(Dim::X));
        self.push(Stmt::If {
            cond: thread.eq(0i64).expr,
            then: vec![store],
            otherwise: Vec::new(),
        });
        self.syncthreads();
    }
}
