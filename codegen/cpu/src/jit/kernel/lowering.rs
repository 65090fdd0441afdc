//! The statements and expressions of a kernel body in Cranelift: one
//! thread's work, with every register a Cranelift variable. Used by the
//! launch function and by the piece functions of independent loops.

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, FuncRef, InstBuilder, MemFlags, StackSlot, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use lazyfuse_core::{BinaryOp, DType, Literal, UnaryOp, Wide};
use lazyfuse_device::ir::{DeviceKernel, Dim, Expr, ParamKind, Special, Stmt, Var};
use smallvec::smallvec;

use super::super::callout::scalar_call;
use super::super::ops::Lowering;
use super::super::support::{
    binary_supported, call_binary, call_unary, cast_supported, scalar_type, unary_supported, Call,
    Unsupported,
};

/// A parameter's value in the function.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Buffer { base: Value, len: Value },
    Scalar(Value),
}

/// The state of lowering one function's statements.
pub(super) struct KernelLowering<'a, 'b, 'f> {
    pub(super) ops: Lowering<'b, 'f>,
    pub(super) kernel: &'a DeviceKernel,
    pub(super) vars: Vec<Variable>,
    pub(super) slots: Vec<Slot>,
    /// threadIdx, blockIdx, blockDim, gridDim (x, y, z each), as `u32`.
    pub(super) specials: [Value; 12],
    /// Where an access outside its buffer goes.
    pub(super) out_of_bounds: Block,
    /// Each local array's stack slot, length and dtype.
    pub(super) locals: Vec<(StackSlot, u32, DType)>,
    /// The function's argument table and buffer lengths (see the parent
    /// module), which piece functions receive too.
    pub(super) args: Value,
    pub(super) lens: Value,
    /// The threads independent loops may spread over (a `u64`; 0 or 1:
    /// none but the calling one); `None` in a piece function, which runs
    /// its loop inline.
    pub(super) spread: Option<Value>,
    /// The independent loops compiled into piece functions, by counter.
    pub(super) outlined: &'a HashMap<Var, Outlined>,
    /// The calling convention of calls into Rust.
    pub(super) call_conv: CallConv,
    /// Index expressions (by address) whose accesses the enclosing loops
    /// checked before they started, and conditions they found to hold in
    /// every iteration (the `hoist` module).
    pub(super) proven: Vec<*const Expr>,
}

/// An independent loop compiled into a piece function (see the
/// `independent` module).
pub(super) struct Outlined {
    pub(super) counter: Var,
    pub(super) reduction: Option<(Var, lazyfuse_core::BinaryOp)>,
    /// The registers the body reads or sets that are declared before the
    /// loop, in the order of the environment table (the launch builtins
    /// follow them).
    pub(super) captures: Vec<Var>,
    /// The piece function, once declared in the kernel's function.
    pub(super) function: Option<FuncRef>,
}

/// A loop's exclusive bound: an expression evaluated before every
/// iteration (it may read registers the body sets), or a value.
#[derive(Clone, Copy)]
pub(super) enum Bound<'e> {
    Expr(&'e Expr),
    Value(Value),
}

impl<'a> KernelLowering<'a, '_, '_> {
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), Unsupported> {
        for stmt in stmts {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<(), Unsupported> {
        match stmt {
            Stmt::Let(var, value) | Stmt::Assign(var, value) => {
                let (v, _) = self.expr(value)?;
                let variable = self.vars[var.index()];
                self.ops.b.def_var(variable, v);
            }
            Stmt::Store {
                param,
                index,
                value,
            } => {
                let (address, dtype) = self.element(*param, index)?;
                let (v, _) = self.expr(value)?;
                if dtype == DType::Bool {
                    return Err("a bool buffer");
                }
                self.ops.b.ins().store(MemFlags::trusted(), v, address, 0);
            }
            Stmt::If { cond, then, .. } if self.proven.contains(&(cond as *const Expr)) => {
                self.stmts(then)?;
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let (c, _) = self.expr(cond)?;
                let (then_block, else_block, merge) = (self.block(), self.block(), self.block());
                self.ops.b.ins().brif(c, then_block, &[], else_block, &[]);
                self.ops.b.switch_to_block(then_block);
                self.stmts(then)?;
                self.ops.b.ins().jump(merge, &[]);
                self.ops.b.switch_to_block(else_block);
                self.stmts(otherwise)?;
                self.ops.b.ins().jump(merge, &[]);
                self.ops.b.switch_to_block(merge);
            }
            Stmt::For {
                var,
                start,
                end,
                step,
                body,
            } => match (self.spread, self.outlined_loops().get(var)) {
                (Some(spread), Some(outlined)) => {
                    self.independent_loop(outlined, (start, end), (step, body), spread)?;
                }
                _ => {
                    let (s, _) = self.expr(start)?;
                    self.counted_loop(*var, s, Bound::Expr(end), step, body)?;
                }
            },
            Stmt::While { cond, body } => {
                let (head, inner, exit) = (self.block(), self.block(), self.block());
                self.ops.b.ins().jump(head, &[]);
                self.ops.b.switch_to_block(head);
                let (c, _) = self.expr(cond)?;
                self.ops.b.ins().brif(c, inner, &[], exit, &[]);
                self.ops.b.switch_to_block(inner);
                self.stmts(body)?;
                self.ops.b.ins().jump(head, &[]);
                self.ops.b.switch_to_block(exit);
            }
            Stmt::StoreShared {
                array,
                index,
                value,
            } => {
                let address = self.local_element(*array, index)?;
                let (v, _) = self.expr(value)?;
                self.ops.b.ins().store(MemFlags::trusted(), v, address, 0);
            }
            Stmt::LoadVector { .. }
            | Stmt::StoreVector { .. }
            | Stmt::Atomic { .. }
            | Stmt::Barrier
            | Stmt::Fence(_)
            | Stmt::Print(_)
            | Stmt::Warp { .. }
            | Stmt::ShuffleDown { .. } => return Err("a statement that needs lockstep threads"),
        }
        Ok(())
    }

    /// The independent loops compiled into piece functions (a copy of the
    /// reference, so that lowering one does not hold `self`).
    fn outlined_loops(&self) -> &'a HashMap<Var, Outlined> {
        self.outlined
    }

    /// The value of a loop's bound, evaluated here.
    pub(super) fn bound(&mut self, end: Bound<'_>) -> Result<Value, Unsupported> {
        Ok(match end {
            Bound::Expr(end) => self.expr(end)?.0,
            Bound::Value(end) => end,
        })
    }

    pub(super) fn block(&mut self) -> Block {
        self.ops.b.create_block()
    }

    /// `for (var = start; var < end; var += step) { body }`, signed, with
    /// every access checked (`counted_loop` checks them once where it can).
    pub(super) fn plain_loop(
        &mut self,
        var: Var,
        start: Value,
        end: Bound<'_>,
        step: &Expr,
        body: &[Stmt],
    ) -> Result<(), Unsupported> {
        let variable = self.vars[var.index()];
        self.ops.b.def_var(variable, start);
        let (head, inner, exit) = (self.block(), self.block(), self.block());
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(head);
        let e = self.bound(end)?;
        let counter = self.ops.b.use_var(variable);
        let more = self.ops.b.ins().icmp(IntCC::SignedLessThan, counter, e);
        self.ops.b.ins().brif(more, inner, &[], exit, &[]);
        self.ops.b.switch_to_block(inner);
        self.stmts(body)?;
        let (st, _) = self.expr(step)?;
        let counter = self.ops.b.use_var(variable);
        let next = self.ops.b.ins().iadd(counter, st);
        self.ops.b.def_var(variable, next);
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }

    /// The address of `param[index]`, after checking the index; and the
    /// buffer's dtype.
    fn element(&mut self, param: u32, index: &Expr) -> Result<(Value, DType), Unsupported> {
        let dtype = match self.kernel.params.get(param as usize).map(|p| p.kind) {
            Some(ParamKind::Input(d) | ParamKind::Output(d)) => d,
            _ => return Err("a load from a parameter that is not a buffer"),
        };
        let Some(Slot::Buffer { base, len }) = self.slots.get(param as usize).copied() else {
            return Err("a load from a parameter that is not a buffer");
        };
        let (i, index_dtype) = self.expr(index)?;
        if index_dtype != DType::I64 {
            return Err("an index that is not i64");
        }
        if self.proven.contains(&(index as *const Expr)) {
            return Ok((self.ops.address(base, i, dtype), dtype));
        }
        let inside = self.ops.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
        let next = self.block();
        self.ops
            .b
            .ins()
            .brif(inside, next, &[], self.out_of_bounds, &[]);
        self.ops.b.switch_to_block(next);
        Ok((self.ops.address(base, i, dtype), dtype))
    }

    /// The address of element `index` of local array `array`, after
    /// checking the index.
    fn local_element(&mut self, array: u32, index: &Expr) -> Result<Value, Unsupported> {
        let (slot, len, dtype) = *self
            .locals
            .get(array as usize)
            .ok_or("no such local array")?;
        let (i, index_dtype) = self.expr(index)?;
        if index_dtype != DType::I64 {
            return Err("an index that is not i64");
        }
        let inside = self
            .ops
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, i, i64::from(len));
        let next = self.block();
        self.ops
            .b
            .ins()
            .brif(inside, next, &[], self.out_of_bounds, &[]);
        self.ops.b.switch_to_block(next);
        let base = self.ops.b.ins().stack_addr(types::I64, slot, 0);
        Ok(self.ops.address(base, i, dtype))
    }

    pub(super) fn expr(&mut self, expr: &Expr) -> Result<(Value, DType), Unsupported> {
        Ok(match expr {
            Expr::Var(v) => (
                self.ops.b.use_var(self.vars[v.index()]),
                self.kernel.vars[v.index()],
            ),
            Expr::Param(p) => match (
                self.slots.get(*p as usize),
                self.kernel.params.get(*p as usize),
            ) {
                (Some(Slot::Scalar(v)), Some(param)) => match param.kind {
                    ParamKind::Scalar(dtype) => (*v, dtype),
                    _ => return Err("a buffer used as a value"),
                },
                _ => return Err("a buffer used as a value"),
            },
            Expr::Special(s) => (self.specials[special_slot(*s)], DType::U32),
            Expr::Const(literal) => (self.constant(*literal)?, literal.dtype()),
            Expr::Load { param, index } => {
                let (address, dtype) = self.element(*param, index)?;
                if dtype == DType::Bool {
                    return Err("a bool buffer");
                }
                let ty = scalar_type_of(dtype)?;
                (
                    self.ops.b.ins().load(ty, MemFlags::trusted(), address, 0),
                    dtype,
                )
            }
            Expr::Unary(op, a) => {
                let (x, from) = self.expr(a)?;
                match unary_result(*op, from) {
                    Ok(dtype) => (self.ops.unary(*op, &smallvec![x], from, dtype)?[0], dtype),
                    // A math function: the machine's loop over this value.
                    Err(_) if call_unary(*op, from, from) => {
                        (self.call(Call::Unary(*op), &[x], from)?, from)
                    }
                    Err(e) => return Err(e),
                }
            }
            Expr::Binary(op, a, c) => {
                let (x, from) = self.expr(a)?;
                let (y, _) = self.expr(c)?;
                match binary_result(*op, from) {
                    Ok(dtype) => (
                        self.ops.binary(*op, &smallvec![x], &smallvec![y], from)?[0],
                        dtype,
                    ),
                    Err(_) if call_binary(*op, from, from) => {
                        (self.call(Call::Binary(*op), &[x, y], from)?, from)
                    }
                    Err(e) => return Err(e),
                }
            }
            Expr::Fma(..) => return Err("a fused multiply-add (the simulator runs it)"),
            Expr::Select(c, a, d) => {
                let (cond, _) = self.expr(c)?;
                let (x, dtype) = self.expr(a)?;
                let (y, _) = self.expr(d)?;
                let chosen =
                    self.ops
                        .select(&smallvec![cond], &smallvec![x], &smallvec![y], dtype)?;
                (chosen[0], dtype)
            }
            Expr::Cast(to, a) => {
                let (x, from) = self.expr(a)?;
                if from == *to {
                    (x, from)
                } else if cast_supported(from, *to) {
                    (self.ops.cast(&smallvec![x], from, *to)?[0], *to)
                } else {
                    return Err("a cast the JIT does not compile");
                }
            }
            Expr::Bitcast(..) => return Err("a bitcast"),
            Expr::LoadShared { array, index } => {
                let address = self.local_element(*array, index)?;
                let dtype = self.locals[*array as usize].2;
                let ty = scalar_type_of(dtype)?;
                (
                    self.ops.b.ins().load(ty, MemFlags::trusted(), address, 0),
                    dtype,
                )
            }
            Expr::Index(..) => return Err("an expression of generated kernels"),
        })
    }

    fn constant(&mut self, literal: Literal) -> Result<Value, Unsupported> {
        let dtype = literal.dtype();
        let ty = scalar_type_of(dtype)?;
        let b = &mut self.ops.b;
        Ok(match literal.to_wide() {
            Wide::Float(x) if dtype == DType::F32 => b.ins().f32const(x as f32),
            Wide::Float(x) => b.ins().f64const(x),
            // Two's complement bits: u64 values above i64::MAX wrap as C's do.
            Wide::Int(x) => b.ins().iconst(ty, x as i64),
        })
    }
}

impl KernelLowering<'_, '_, '_> {
    /// `call` of scalar `operands` of `dtype`: the machine's loop over one
    /// value (a function call per thread, where the machine would run it
    /// for every thread of the launch, interpreting the rest).
    fn call(&mut self, call: Call, operands: &[Value], dtype: DType) -> Result<Value, Unsupported> {
        scalar_call(self.ops.b, self.call_conv, call, dtype, operands)
    }
}

/// The dtype of `op` of a `from` value, when the JIT compiles it.
pub(super) fn unary_result(op: UnaryOp, from: DType) -> Result<DType, Unsupported> {
    let dtype = if op.is_predicate() || op == UnaryOp::LogicalNot {
        DType::Bool
    } else {
        from
    };
    if unary_supported(op, from, dtype) {
        Ok(dtype)
    } else {
        Err("an operation the JIT does not compile")
    }
}

/// The dtype of `op` of two `from` values, when the JIT compiles it.
pub(super) fn binary_result(op: BinaryOp, from: DType) -> Result<DType, Unsupported> {
    let dtype = if op.is_comparison() || op.is_logical() {
        DType::Bool
    } else {
        from
    };
    let integer_division = matches!(op, BinaryOp::FloorDiv | BinaryOp::Rem | BinaryOp::Fmod)
        && dtype != DType::Bool
        && !dtype.is_float();
    if binary_supported(op, dtype) || integer_division {
        Ok(dtype)
    } else {
        Err("an operation the JIT does not compile")
    }
}

fn special_slot(special: Special) -> usize {
    let (base, dim) = match special {
        Special::ThreadIdx(d) => (0, d),
        Special::BlockIdx(d) => (3, d),
        Special::BlockDim(d) => (6, d),
        Special::GridDim(d) => (9, d),
    };
    base + match dim {
        Dim::X => 0,
        Dim::Y => 1,
        Dim::Z => 2,
    }
}

/// Ends a compiled kernel function: the current block returns 0 (done),
/// `out_of_bounds` returns 1 (the caller reports the access), and the
/// function is sealed and finalised.
pub(super) fn finish_function(mut b: FunctionBuilder<'_>, out_of_bounds: Block) {
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().return_(&[zero]);
    b.switch_to_block(out_of_bounds);
    let one = b.ins().iconst(types::I64, 1);
    b.ins().return_(&[one]);
    b.seal_all_blocks();
    b.finalize();
}

/// The Cranelift type of a register of `dtype` (bools are bytes).
pub(super) fn scalar_type_of(dtype: DType) -> Result<cranelift_codegen::ir::Type, Unsupported> {
    if dtype == DType::Bool {
        return Ok(types::I8);
    }
    scalar_type(dtype).ok_or("a dtype other than f32, f64, i32, i64, u32, u64 or bool")
}
