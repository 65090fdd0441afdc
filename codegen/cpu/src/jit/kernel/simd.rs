//! A row of threads run on vectors, four (or two) threads at a time, where
//! nothing can tell it from one at a time: every access of the body was
//! checked once for the whole row and touches consecutive elements in
//! consecutive threads, every `if` was found to hold for the whole row,
//! and the body has no loop, local array or reassigned register (the
//! `hoist` module proves the first two). A load or store then moves the
//! group's elements in one vector access at the first thread's index,
//! and every value computed from loaded data is a vector of the group's
//! values. Registers that only feed indices stay scalars of the first
//! thread (indices use nothing else: they are affine in `threadIdx.x`).
//!
//! A math function (no vector instruction) is a call of the register
//! machine's loop over the group's values, through a stack buffer. What
//! the vectors cannot lower (`threadIdx.x` used as data, a bool from a
//! uniform value) fails the lowering: the kernel is then compiled again
//! without vectors (`compile`).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::Variable;
use lazyfuse_core::DType;
use lazyfuse_device::ir::{Dim, Expr, ParamKind, Special, Stmt, Var};
use smallvec::SmallVec;

use super::super::callout::Scratch;
use super::super::ops::Val;
use super::super::support::{call_binary, call_unary, cast_supported, Call, Lanes, Unsupported};
use super::lowering::{binary_result, unary_result, KernelLowering, Slot};

/// Groups of threads per turn of the vector loop.
const GROUPS: usize = 2;

/// Where a register's value is needed.
#[derive(Default)]
struct Uses {
    /// As a vector of the group's values (data).
    vector: HashSet<Var>,
    /// As the first thread's scalar (indices).
    scalar: HashSet<Var>,
}

impl Uses {
    /// The uses of the registers `body` defines, given that `if`s run their
    /// `then` branch: walked from the last statement back, so that a
    /// definition's registers are needed where the register is.
    fn of(body: &[Stmt]) -> Uses {
        let mut flat: Vec<&Stmt> = Vec::new();
        let mut stack: Vec<&Stmt> = body.iter().rev().collect();
        while let Some(stmt) = stack.pop() {
            flat.push(stmt);
            if let Stmt::If { then, .. } = stmt {
                stack.extend(then.iter().rev());
            }
        }
        let mut uses = Uses::default();
        for stmt in flat.iter().rev() {
            match stmt {
                Stmt::Store { index, value, .. } => {
                    uses.note(index, false);
                    uses.note(value, true);
                }
                Stmt::Let(var, value) | Stmt::Assign(var, value) => {
                    if uses.vector.contains(var) {
                        uses.note(value, true);
                    }
                    if uses.scalar.contains(var) {
                        uses.note(value, false);
                    }
                }
                _ => {}
            }
        }
        uses
    }

    /// Notes the registers `expr` reads, as vectors when `vector` (the
    /// indices of its loads are always scalars).
    fn note(&mut self, expr: &Expr, vector: bool) {
        let mut stack = vec![(expr, vector)];
        while let Some((e, vector)) = stack.pop() {
            match e {
                Expr::Var(v) if vector => {
                    self.vector.insert(*v);
                }
                Expr::Var(v) => {
                    self.scalar.insert(*v);
                }
                Expr::Load { index, .. } | Expr::LoadShared { index, .. } => {
                    stack.push((index, false));
                }
                Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::Bitcast(_, a) => {
                    stack.push((a, vector));
                }
                Expr::Index(_, a, b) | Expr::Binary(_, a, b) => {
                    stack.extend([(&**a, vector), (&**b, vector)]);
                }
                Expr::Select(c, a, b) | Expr::Fma(a, b, c) => {
                    stack.extend([(&**c, vector), (&**a, vector), (&**b, vector)]);
                }
                Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => {}
            }
        }
    }
}

/// The state of lowering one group of a vector row.
struct Group<'c> {
    uses: &'c Uses,
    /// Indices (by address) of the accesses that touch consecutive
    /// elements, checked once for the row.
    contiguous: &'c [*const Expr],
    /// The vector registers defined so far.
    vectors: HashMap<Var, (Val, DType)>,
}

impl KernelLowering<'_, '_, '_> {
    /// `while x + GROUPS * group <= width { threads x.. on vectors }`, the
    /// counter in `variable` (from its current value): leaves the last
    /// threads of the row to the scalar loop after it.
    pub(super) fn vector_row(
        &mut self,
        variable: Variable,
        width: Value,
        body: &[Stmt],
        contiguous: &[*const Expr],
    ) -> Result<(), Unsupported> {
        let lanes = self.narrowest_lanes();
        let step = (GROUPS * lanes.group()) as i64;
        let uses = Uses::of(body);
        let (head, inner, exit) = (self.block(), self.block(), self.block());
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(head);
        let x = self.ops.b.use_var(variable);
        let bound = self.ops.b.ins().iadd_imm(width, 1 - step);
        let more = (self.ops.b.ins()).icmp(IntCC::SignedLessThan, x, bound);
        self.ops.b.ins().brif(more, inner, &[], exit, &[]);
        self.ops.b.switch_to_block(inner);
        self.specials[0] = self.ops.b.ins().ireduce(types::I32, x);
        let saved = (self.ops.vector, self.ops.lanes, self.ops.group);
        self.ops.lanes = lanes;
        let mut lowered = Ok(());
        for group in 0..GROUPS {
            self.ops.group = group;
            let mut state = Group {
                uses: &uses,
                contiguous,
                vectors: HashMap::new(),
            };
            lowered = self.vector_stmts(body, &mut state);
            if lowered.is_err() {
                break;
            }
        }
        (self.ops.vector, self.ops.lanes, self.ops.group) = saved;
        lowered?;
        let next = self.ops.b.ins().iadd_imm(x, step);
        self.ops.b.def_var(variable, next);
        self.ops.b.ins().jump(head, &[]);
        self.ops.b.switch_to_block(exit);
        Ok(())
    }

    /// 32-bit lanes when the kernel has a 32-bit buffer or register (its
    /// 64-bit values then take two vectors), else 64-bit lanes.
    fn narrowest_lanes(&self) -> Lanes {
        let buffers = self.kernel.params.iter().filter_map(|p| match p.kind {
            ParamKind::Input(d) | ParamKind::Output(d) => Some(d),
            ParamKind::Scalar(_) => None,
        });
        let narrow = (buffers.chain(self.kernel.vars.iter().copied()))
            .any(|d| Lanes::of(d) == Some(Lanes::W32));
        if narrow {
            Lanes::W32
        } else {
            Lanes::W64
        }
    }

    fn vector_stmts(&mut self, stmts: &[Stmt], group: &mut Group<'_>) -> Result<(), Unsupported> {
        for stmt in stmts {
            match stmt {
                Stmt::Let(var, value) => {
                    if group.uses.vector.contains(var) {
                        let v = self.vector_expr(value, group)?;
                        group.vectors.insert(*var, v);
                    }
                    if group.uses.scalar.contains(var) {
                        let (v, _) = self.scalar_expr(value)?;
                        self.ops.b.def_var(self.vars[var.index()], v);
                    }
                }
                Stmt::Store {
                    param,
                    index,
                    value,
                } => {
                    let (base, i, dtype) = self.contiguous_element(*param, index, group)?;
                    let (v, value_dtype) = self.vector_expr(value, group)?;
                    if value_dtype != dtype {
                        return Err("a store of another dtype");
                    }
                    self.ops.vector = true;
                    self.ops.store(base, i, dtype, &v)?;
                }
                Stmt::If { cond, then, .. } if self.proven.contains(&(cond as *const Expr)) => {
                    self.vector_stmts(then, group)?;
                }
                _ => return Err("a statement the vector row does not lower"),
            }
        }
        Ok(())
    }

    /// `expr` with `self.ops` scalar (the first thread's value).
    fn scalar_expr(&mut self, expr: &Expr) -> Result<(Value, DType), Unsupported> {
        self.ops.vector = false;
        self.expr(expr)
    }

    /// The buffer, first thread's index and dtype of a contiguous access.
    fn contiguous_element(
        &mut self,
        param: u32,
        index: &Expr,
        group: &Group<'_>,
    ) -> Result<(Value, Value, DType), Unsupported> {
        if !group.contiguous.contains(&(index as *const Expr)) {
            return Err("an access that is not contiguous");
        }
        let dtype = match self.kernel.params.get(param as usize).map(|p| p.kind) {
            Some(ParamKind::Input(d) | ParamKind::Output(d)) if d != DType::Bool => d,
            _ => return Err("an access the vector row does not lower"),
        };
        let Some(Slot::Buffer { base, .. }) = self.slots.get(param as usize).copied() else {
            return Err("an access the vector row does not lower");
        };
        let (i, _) = self.scalar_expr(index)?;
        Ok((base, i, dtype))
    }

    /// `expr`'s values for the group's threads (vectors of `self.ops`).
    fn vector_expr(&mut self, expr: &Expr, group: &Group<'_>) -> Result<(Val, DType), Unsupported> {
        let value = match expr {
            Expr::Var(v) => group
                .vectors
                .get(v)
                .cloned()
                .ok_or("a register the vector row lacks")?,
            Expr::Special(Special::ThreadIdx(Dim::X)) => return Err("threadIdx.x as data"),
            Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => {
                let (x, dtype) = self.scalar_expr(expr)?;
                self.ops.vector = true;
                (self.splat(x, dtype)?, dtype)
            }
            Expr::Load { param, index } => {
                let (base, i, dtype) = self.contiguous_element(*param, index, group)?;
                self.ops.vector = true;
                (self.ops.load(base, i, dtype)?, dtype)
            }
            Expr::Unary(op, a) => {
                let (x, from) = self.vector_expr(a, group)?;
                match unary_result(*op, from) {
                    Ok(dtype) => (self.ops.unary(*op, &x, from, dtype)?, dtype),
                    // A math function: the machine's loop over the group.
                    Err(_) if call_unary(*op, from, from) => {
                        (self.vector_call(Call::Unary(*op), &[&x], from)?, from)
                    }
                    Err(e) => return Err(e),
                }
            }
            Expr::Binary(op, a, c) => {
                let (x, from) = self.vector_expr(a, group)?;
                let (y, _) = self.vector_expr(c, group)?;
                match binary_result(*op, from) {
                    Ok(dtype) => (self.ops.binary(*op, &x, &y, from)?, dtype),
                    Err(_) if call_binary(*op, from, from) => {
                        (self.vector_call(Call::Binary(*op), &[&x, &y], from)?, from)
                    }
                    Err(e) => return Err(e),
                }
            }
            Expr::Fma(..) => return Err("a fused multiply-add (the simulator runs it)"),
            Expr::Select(c, a, d) => {
                let (cond, _) = self.vector_expr(c, group)?;
                let (x, dtype) = self.vector_expr(a, group)?;
                let (y, _) = self.vector_expr(d, group)?;
                (self.ops.select(&cond, &x, &y, dtype)?, dtype)
            }
            Expr::Cast(to, a) => {
                let (x, from) = self.vector_expr(a, group)?;
                if from != *to && !cast_supported(from, *to) {
                    return Err("a cast the JIT does not compile");
                }
                (self.ops.cast(&x, from, *to)?, *to)
            }
            Expr::Bitcast(..) | Expr::LoadShared { .. } | Expr::Index(..) => {
                return Err("an expression the vector row does not lower")
            }
        };
        self.ops.vector = true;
        Ok(value)
    }

    /// `call` of the group's `operands` (vectors of `dtype`): stored to a
    /// stack buffer, the machine's loop called over the group's elements,
    /// the results loaded back (as the element-wise JIT's wide loops call
    /// it over theirs).
    fn vector_call(
        &mut self,
        call: Call,
        operands: &[&Val],
        dtype: DType,
    ) -> Result<Val, Unsupported> {
        let elements = self.ops.lanes.group();
        let scratch = Scratch::new(self.ops.b, types::I64, elements);
        // The buffer holds this group alone: its elements start at 0.
        let group = std::mem::replace(&mut self.ops.group, 0);
        for (k, x) in operands.iter().enumerate() {
            scratch.put(&mut self.ops, (k, 0), x, dtype);
        }
        let result = scratch
            .call(self.ops.b, call, dtype, elements)
            .and_then(|()| scratch.take(&mut self.ops, 0, dtype));
        self.ops.group = group;
        result
    }

    /// The scalar `x` of `dtype` in every lane of the group.
    fn splat(&mut self, x: Value, dtype: DType) -> Result<Val, Unsupported> {
        let ty = self.ops.ty(dtype)?;
        let v = self.ops.b.ins().splat(ty, x);
        Ok(SmallVec::from_elem(v, self.ops.vectors(dtype)))
    }
}
