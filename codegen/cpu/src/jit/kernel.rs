//! User kernels (and gufunc kernels) compiled for the CPU: a kernel
//! without barriers, shared memory, shuffles or atomics needs no lockstep,
//! so its threads can run one after another. The whole launch becomes one
//! Cranelift function looping over a range of blocks and, in each, over
//! its threads (x fastest), running the body with every register in a
//! machine register. Blocks are independent, so ranges of them run on
//! different cores.
//!
//! The function is `extern "C" fn(args, lens, geometry, first, end) -> u64`:
//! `args[p]` is parameter `p`'s buffer address or its scalar's bits,
//! `lens[p]` the buffer's element count, `geometry` the grid's and the
//! block's x, y, z (six `u64`s); it runs blocks `first..end` (linear, x
//! fastest) and returns 0, or 1 at the first load or store outside its
//! buffer (then the simulator runs the launch again, to report it).
//! Operations are those the JIT's `ops` module lowers, with the same semantics.

use std::sync::Mutex;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, InstBuilder, MemFlags, StackSlot, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use lazyfuse_core::{DType, Literal, UnaryOp, Wide};
use lazyfuse_device::ir::{DeviceKernel, Dim, Expr, ParamKind, Special, Stmt};
use lazyfuse_fusion::Body;
use smallvec::smallvec;

use super::ops::Lowering;
use super::support::{
    binary_supported, cast_supported, scalar_type, unary_supported, Lanes, Unsupported,
};

/// The most bytes of local arrays a compiled kernel keeps on its stack.
const MAX_LOCAL_BYTES: usize = 64 * 1024;

/// `(args, lens, geometry, first block, end block) -> status`.
type LaunchFn = unsafe extern "C" fn(*const u64, *const u64, *const u64, u64, u64) -> u64;

/// The machine code of one user kernel.
pub struct KernelCode {
    /// Owns the code (touched again only when dropped).
    module: Mutex<Option<JITModule>>,
    function: LaunchFn,
}

impl std::fmt::Debug for KernelCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KernelCode")
    }
}

impl Drop for KernelCode {
    fn drop(&mut self) {
        let module = self
            .module
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(module) = module.take() {
            // SAFETY: `function` points into this module's memory and is
            // only reachable through `self`, which is being dropped.
            unsafe { module.free_memory() };
        }
    }
}

impl KernelCode {
    /// Runs blocks `blocks` of the launch; `false` when an access fell
    /// outside its buffer (the code stopped there).
    ///
    /// # Safety
    /// `args` and `lens` hold one entry per parameter of the kernel this
    /// code was compiled from: for a buffer, the address of `lens[p]`
    /// elements of its dtype (writable for an output, and not read or
    /// written by anything else meanwhile except other blocks of this
    /// launch); for a scalar, its bits. `geometry` is the launch's grid and
    /// block, and `blocks` lies within the grid.
    pub unsafe fn run(
        &self,
        args: &[u64],
        lens: &[u64],
        geometry: &[u64; 6],
        blocks: std::ops::Range<u64>,
    ) -> bool {
        // SAFETY: the caller's contract; the code checks every index
        // against `lens` before it touches memory.
        let status = unsafe {
            (self.function)(
                args.as_ptr(),
                lens.as_ptr(),
                geometry.as_ptr(),
                blocks.start,
                blocks.end,
            )
        };
        status == 0
    }
}

/// Compiles `kernel`, or says why it cannot be (the simulator runs it).
pub fn compile(kernel: &DeviceKernel) -> Result<KernelCode, Unsupported> {
    check_kernel(kernel)?;
    let isa = super::isa().ok_or("no instruction set")?.clone();
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    let word = types::I64;
    for _ in 0..5 {
        ctx.func.signature.params.push(AbiParam::new(word));
    }
    ctx.func.signature.returns.push(AbiParam::new(word));
    let mut builder_ctx = FunctionBuilderContext::new();
    let body = Body::default();
    {
        let b = FunctionBuilder::new(&mut ctx.func, &mut builder_ctx);
        emit(b, &body, kernel)?;
    }
    let id = module
        .declare_function("user_kernel", Linkage::Local, &ctx.func.signature)
        .map_err(|_| "declaration failed")?;
    module
        .define_function(id, &mut ctx)
        .map_err(|_| "Cranelift refused the function")?;
    module.clear_context(&mut ctx);
    module
        .finalize_definitions()
        .map_err(|_| "finalisation failed")?;
    let code = module.get_finalized_function(id);
    // SAFETY: `code` is the function `emit` built, whose signature is
    // `LaunchFn`'s (five 64-bit arguments, a 64-bit result) with the
    // platform's default calling convention, which `extern "C"` names.
    let function = unsafe { std::mem::transmute::<*const u8, LaunchFn>(code) };
    Ok(KernelCode {
        module: Mutex::new(Some(module)),
        function,
    })
}

/// Emits the launch loops and the body.
fn emit(mut b: FunctionBuilder<'_>, body: &Body, kernel: &DeviceKernel) -> Result<(), Unsupported> {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let (args, lens, geometry, first, end) = (p[0], p[1], p[2], p[3], p[4]);
    let flags = MemFlags::trusted();
    let dims: Vec<Value> = (0..6)
        .map(|i| b.ins().load(types::I64, flags, geometry, 8 * i))
        .collect();
    let mut slots = Vec::with_capacity(kernel.params.len());
    for (i, param) in kernel.params.iter().enumerate() {
        let offset = (8 * i) as i32;
        slots.push(match param.kind {
            ParamKind::Input(_) | ParamKind::Output(_) => Slot::Buffer {
                base: b.ins().load(types::I64, flags, args, offset),
                len: b.ins().load(types::I64, flags, lens, offset),
            },
            ParamKind::Scalar(dtype) => {
                let ty = scalar_type_of(dtype)?;
                Slot::Scalar(b.ins().load(ty, flags, args, offset))
            }
        });
    }
    let out_of_bounds = b.create_block();
    // Threads run one after another: one stack copy of each local array
    // serves them all (its contents are undefined until written, as in CUDA).
    let locals = (kernel.shared.iter())
        .map(|s| {
            let bytes = (s.len as usize * s.dtype.size()).max(1) as u32;
            let slot = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                bytes,
                4,
            ));
            (slot, s.len, s.dtype)
        })
        .collect();

    // for block in first..end { for z, y, x in the block { body } }: the
    // threads' coordinates are loop counters (no division per thread).
    let zero = b.ins().iconst(types::I64, 0);
    let blocks = open_loop(&mut b, first, end);
    let block = b.use_var(blocks.0);
    let block_idx = split(&mut b, block, [dims[0], dims[1]]);
    let z = open_loop(&mut b, zero, dims[5]);
    let y = open_loop(&mut b, zero, dims[4]);
    let x = open_loop(&mut b, zero, dims[3]);
    let thread_idx = [x.0, y.0, z.0].map(|v| b.use_var(v));
    let mut specials = [zero; 12];
    specials[0..3].copy_from_slice(&thread_idx);
    specials[3..6].copy_from_slice(&block_idx);
    specials[6..9].copy_from_slice(&dims[3..6]);
    specials[9..12].copy_from_slice(&dims[0..3]);
    let specials = specials.map(|v| b.ins().ireduce(types::I32, v));
    let vars = (kernel.vars.iter())
        .map(|&dtype| Ok(b.declare_var(scalar_type_of(dtype)?)))
        .collect::<Result<Vec<Variable>, Unsupported>>()?;
    {
        let mut lowering = KernelLowering {
            ops: Lowering {
                b: &mut b,
                body,
                lanes: Lanes::W64,
                vector: false,
                group: 0,
                flags,
            },
            kernel,
            vars,
            slots,
            specials,
            out_of_bounds,
            locals,
        };
        lowering.stmts(&kernel.body)?;
    }
    for level in [x, y, z, blocks] {
        close_loop(&mut b, level);
    }
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().return_(&[zero]);

    b.switch_to_block(out_of_bounds);
    let one = b.ins().iconst(types::I64, 1);
    b.ins().return_(&[one]);
    b.seal_all_blocks();
    b.finalize();
    Ok(())
}

/// A loop's counter, head and exit.
type Loop = (Variable, Block, Block);

/// Opens `for counter in start..end` (unsigned) and leaves the builder in
/// its body.
fn open_loop(b: &mut FunctionBuilder<'_>, start: Value, end: Value) -> Loop {
    let counter = b.declare_var(types::I64);
    b.def_var(counter, start);
    let (head, body, exit) = (b.create_block(), b.create_block(), b.create_block());
    b.ins().jump(head, &[]);
    b.switch_to_block(head);
    let i = b.use_var(counter);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, i, end);
    b.ins().brif(more, body, &[], exit, &[]);
    b.switch_to_block(body);
    (counter, head, exit)
}

/// Closes a loop [`open_loop`] opened; leaves the builder after it.
fn close_loop(b: &mut FunctionBuilder<'_>, (counter, head, exit): Loop) {
    let i = b.use_var(counter);
    let next = b.ins().iadd_imm(i, 1);
    b.def_var(counter, next);
    b.ins().jump(head, &[]);
    b.switch_to_block(exit);
}

/// The x, y, z coordinates of linear position `i` in dimensions whose x
/// and y extents are `x` and `y` (x fastest).
fn split(b: &mut FunctionBuilder<'_>, i: Value, [x, y]: [Value; 2]) -> [Value; 3] {
    let cx = b.ins().urem(i, x);
    let rest = b.ins().udiv(i, x);
    let cy = b.ins().urem(rest, y);
    let cz = b.ins().udiv(rest, y);
    [cx, cy, cz]
}

/// A parameter's value in the function.
#[derive(Clone, Copy)]
enum Slot {
    Buffer { base: Value, len: Value },
    Scalar(Value),
}

struct KernelLowering<'a, 'b, 'f> {
    ops: Lowering<'b, 'f>,
    kernel: &'a DeviceKernel,
    vars: Vec<Variable>,
    slots: Vec<Slot>,
    /// threadIdx, blockIdx, blockDim, gridDim (x, y, z each), as `u32`.
    specials: [Value; 12],
    out_of_bounds: Block,
    /// Each local array's stack slot, length and dtype.
    locals: Vec<(StackSlot, u32, DType)>,
}

impl KernelLowering<'_, '_, '_> {
    fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), Unsupported> {
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
            } => {
                let variable = self.vars[var.index()];
                let (s, _) = self.expr(start)?;
                self.ops.b.def_var(variable, s);
                let (head, inner, exit) = (self.block(), self.block(), self.block());
                self.ops.b.ins().jump(head, &[]);
                self.ops.b.switch_to_block(head);
                let (e, _) = self.expr(end)?;
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
            }
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
            | Stmt::ShuffleDown { .. } => return Err("a statement that needs lockstep threads"),
        }
        Ok(())
    }

    fn block(&mut self) -> Block {
        self.ops.b.create_block()
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

    fn expr(&mut self, expr: &Expr) -> Result<(Value, DType), Unsupported> {
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
                let dtype = if op.is_predicate() || *op == UnaryOp::LogicalNot {
                    DType::Bool
                } else {
                    from
                };
                if !unary_supported(*op, from, dtype) {
                    return Err("an operation the JIT does not compile");
                }
                (self.ops.unary(*op, &smallvec![x], from, dtype)?[0], dtype)
            }
            Expr::Binary(op, a, c) => {
                let (x, from) = self.expr(a)?;
                let (y, _) = self.expr(c)?;
                let dtype = if op.is_comparison() || op.is_logical() {
                    DType::Bool
                } else {
                    from
                };
                if !binary_supported(*op, dtype) {
                    return Err("an operation the JIT does not compile");
                }
                (
                    self.ops.binary(*op, &smallvec![x], &smallvec![y], from)?[0],
                    dtype,
                )
            }
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

/// The Cranelift type of a register of `dtype` (bools are bytes).
fn scalar_type_of(dtype: DType) -> Result<cranelift_codegen::ir::Type, Unsupported> {
    if dtype == DType::Bool {
        return Ok(types::I8);
    }
    scalar_type(dtype).ok_or("a dtype other than f32, f64, i32, i64, u32, u64 or bool")
}

/// Refuses kernels that need the simulator before any code is emitted.
fn check_kernel(kernel: &DeviceKernel) -> Result<(), Unsupported> {
    if kernel.shared.iter().any(|s| !s.local) {
        return Err("shared memory");
    }
    let local_bytes: usize = (kernel.shared.iter())
        .map(|s| s.len as usize * s.dtype.size())
        .sum();
    if local_bytes > MAX_LOCAL_BYTES || kernel.shared.iter().any(|s| s.dtype == DType::Bool) {
        return Err("local arrays too large, or of bools");
    }
    for dtype in &kernel.vars {
        scalar_type_of(*dtype)?;
    }
    for param in &kernel.params {
        let (ParamKind::Input(d) | ParamKind::Output(d) | ParamKind::Scalar(d)) = param.kind;
        scalar_type_of(d)?;
    }
    Ok(())
}
