//! User kernels (and gufunc kernels) compiled for the CPU: a kernel
//! without barriers, shared memory, shuffles or atomics needs no lockstep,
//! so its threads can run one after another. The whole launch becomes one
//! Cranelift function looping over a range of blocks and, in each, over
//! its threads (x fastest), running the body with every register in a
//! machine register. Blocks are independent, so ranges of them run on
//! different cores; so do the pieces of a long independent loop (a
//! gufunc's `par_range` or `par_reduce`, see `independent.rs`).
//!
//! The function is `extern "C" fn(args, lens, geometry, first, end) -> u64`:
//! `args[p]` is parameter `p`'s buffer address or its scalar's bits,
//! `lens[p]` the buffer's element count, `geometry` the grid's and the
//! block's x, y, z and the threads independent loops may spread over
//! (seven `u64`s); it runs blocks `first..end` (linear, x
//! fastest) and returns 0, or 1 at the first load or store outside its
//! buffer (then the simulator runs the launch again, to report it).
//! Operations are those the JIT's `ops` module lowers, with the same semantics.

mod affine;
mod hoist;
mod independent;
mod lowering;
mod simd;
mod walk;

use std::collections::HashMap;
use std::sync::Mutex;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, InstBuilder, MemFlags, StackSlotData, StackSlotKind, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};
use lazyfuse_core::DType;
use lazyfuse_device::ir::{DeviceKernel, ParamKind};
use lazyfuse_fusion::Body;

use super::ops::Lowering;
use super::support::Unsupported;
use lowering::{finish_function, scalar_type_of, KernelLowering, Outlined, Slot};

/// The most bytes of local arrays a compiled kernel keeps on its stack.
const MAX_LOCAL_BYTES: usize = 64 * 1024;

/// `(args, lens, geometry, first block, end block) -> status`.
type LaunchFn = unsafe extern "C" fn(*const u64, *const u64, *const u64, u64, u64) -> u64;

/// What [`KernelCode::run`] needs besides the buffers: the grid's and the
/// block's x, y, z, then the threads independent loops may spread over:
/// the calling thread and the team's workers (0 or 1: the calling thread
/// alone).
pub type Geometry = [u64; 7];

/// The machine code of one user kernel.
pub struct KernelCode {
    /// Owns the code (touched again only when dropped).
    module: Mutex<Option<JITModule>>,
    function: LaunchFn,
    /// For each parameter, whether the kernel touches it only at each
    /// thread's position along x (see [`KernelCode::blockwise`]).
    blockwise: Vec<bool>,
    on_vectors: bool,
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
        geometry: &Geometry,
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

    /// Whether every load and store of buffer parameter `param` is at the
    /// thread's position along x, `blockIdx.x * blockDim.x + threadIdx.x`:
    /// in a grid of one row of blocks, block `b` touches only elements
    /// `b * blockDim.x .. (b + 1) * blockDim.x` of it (so a range of blocks
    /// can run as soon as its part of the buffer is ready).
    pub fn blockwise(&self, param: usize) -> bool {
        self.blockwise.get(param).copied().unwrap_or(false)
    }

    /// Whether rows of threads run on vectors where they can (the `simd`
    /// module; rows whose accesses or conditions fail their check run one
    /// thread at a time).
    pub fn on_vectors(&self) -> bool {
        self.on_vectors
    }
}

/// Compiles `kernel`, or says why it cannot be (the simulator runs it):
/// with rows of threads on vectors where the `simd` module can lower
/// them, else without.
pub fn compile(kernel: &DeviceKernel) -> Result<KernelCode, Unsupported> {
    check_kernel(kernel)?;
    compile_with(kernel, true).or_else(|_| compile_with(kernel, false))
}

/// [`compile`], with or without vector rows.
fn compile_with(kernel: &DeviceKernel, vectorize: bool) -> Result<KernelCode, Unsupported> {
    let isa = super::isa().ok_or("no instruction set")?.clone();
    let call_conv = isa.default_call_conv();
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    let mut builder_ctx = FunctionBuilderContext::new();
    // Each independent loop first, as its own piece function.
    let mut pieces: Vec<(Outlined, FuncId)> = Vec::new();
    for (k, plan) in independent::plan(kernel).into_iter().enumerate() {
        ctx.func.signature = independent::piece_signature(call_conv);
        {
            let b = FunctionBuilder::new(&mut ctx.func, &mut builder_ctx);
            independent::emit_piece(b, kernel, &plan, call_conv)?;
        }
        let id = define(&mut module, &mut ctx, &format!("independent_{k}"))?;
        pieces.push((plan.outlined, id));
    }
    let word = types::I64;
    ctx.func.signature = cranelift_codegen::ir::Signature::new(call_conv);
    for _ in 0..5 {
        ctx.func.signature.params.push(AbiParam::new(word));
    }
    ctx.func.signature.returns.push(AbiParam::new(word));
    let on_vectors;
    let outlined: HashMap<_, _> = pieces
        .into_iter()
        .map(|(mut plan, id)| {
            plan.function = Some(module.declare_func_in_func(id, &mut ctx.func));
            (plan.counter, plan)
        })
        .collect();
    {
        let b = FunctionBuilder::new(&mut ctx.func, &mut builder_ctx);
        on_vectors = emit(b, kernel, (&outlined, vectorize), call_conv)?;
    }
    let id = define(&mut module, &mut ctx, "user_kernel")?;
    module
        .finalize_definitions()
        .map_err(|_| "finalisation failed")?;
    let code = module.get_finalized_function(id);
    // SAFETY: `code` is the function `emit` built, whose signature is
    // `LaunchFn`'s (five 64-bit arguments, a 64-bit result) with the
    // platform's default calling convention, which `extern "C"` names.
    let function = unsafe { std::mem::transmute::<*const u8, LaunchFn>(code) };
    let blockwise = (0..kernel.params.len())
        .map(|p| u32::try_from(p).is_ok_and(|p| affine::blockwise(&kernel.body, p)))
        .collect();
    Ok(KernelCode {
        module: Mutex::new(Some(module)),
        function,
        blockwise,
        on_vectors,
    })
}

/// Declares and defines the function built in `ctx`, then clears it.
fn define(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    name: &str,
) -> Result<FuncId, Unsupported> {
    let id = module
        .declare_function(name, Linkage::Local, &ctx.func.signature)
        .map_err(|_| "declaration failed")?;
    module
        .define_function(id, ctx)
        .map_err(|_| "Cranelift refused the function")?;
    module.clear_context(ctx);
    Ok(id)
}

/// Emits the launch loops and the body; says whether rows of threads run
/// on vectors.
fn emit(
    mut b: FunctionBuilder<'_>,
    kernel: &DeviceKernel,
    (outlined, vectorize): (&HashMap<lazyfuse_device::ir::Var, Outlined>, bool),
    call_conv: CallConv,
) -> Result<bool, Unsupported> {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let (args, lens, geometry, first, end) = (p[0], p[1], p[2], p[3], p[4]);
    let flags = MemFlags::trusted();
    let dims: Vec<Value> = (0..7)
        .map(|i| b.ins().load(types::I64, flags, geometry, 8 * i))
        .collect();
    let slots = load_slots(&mut b, kernel, args, lens)?;
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
    // Thread x is set by the innermost loop (`KernelLowering::threads`).
    let thread_idx = [zero, b.use_var(y.0), b.use_var(z.0)];
    let mut specials = [zero; 12];
    specials[0..3].copy_from_slice(&thread_idx);
    specials[3..6].copy_from_slice(&block_idx);
    specials[6..9].copy_from_slice(&dims[3..6]);
    specials[9..12].copy_from_slice(&dims[0..3]);
    let specials = specials.map(|v| b.ins().ireduce(types::I32, v));
    let vars = declare_vars(&mut b, kernel)?;
    let body = Body::default();
    let on_vectors;
    {
        let mut lowering = KernelLowering {
            ops: Lowering::scalar(&mut b, &body),
            kernel,
            vars,
            slots,
            specials,
            out_of_bounds,
            locals,
            args,
            lens,
            spread: Some(dims[6]),
            outlined,
            call_conv,
            proven: Vec::new(),
        };
        on_vectors = lowering.threads(dims[3], &kernel.body, vectorize)?;
    }
    for level in [y, z, blocks] {
        close_loop(&mut b, level);
    }
    finish_function(b, out_of_bounds);
    Ok(on_vectors)
}

/// Loads each parameter's buffer address and length, or its scalar, from
/// the argument table.
fn load_slots(
    b: &mut FunctionBuilder<'_>,
    kernel: &DeviceKernel,
    args: Value,
    lens: Value,
) -> Result<Vec<Slot>, Unsupported> {
    let flags = MemFlags::trusted();
    (kernel.params.iter().enumerate())
        .map(|(i, param)| {
            let offset = (8 * i) as i32;
            Ok(match param.kind {
                ParamKind::Input(_) | ParamKind::Output(_) => Slot::Buffer {
                    base: b.ins().load(types::I64, flags, args, offset),
                    len: b.ins().load(types::I64, flags, lens, offset),
                },
                ParamKind::Scalar(dtype) => {
                    let ty = scalar_type_of(dtype)?;
                    Slot::Scalar(b.ins().load(ty, flags, args, offset))
                }
            })
        })
        .collect()
}

/// One Cranelift variable per register of the kernel.
fn declare_vars(
    b: &mut FunctionBuilder<'_>,
    kernel: &DeviceKernel,
) -> Result<Vec<Variable>, Unsupported> {
    (kernel.vars.iter())
        .map(|&dtype| Ok(b.declare_var(scalar_type_of(dtype)?)))
        .collect()
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
