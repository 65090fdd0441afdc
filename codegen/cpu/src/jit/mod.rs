//! The JIT tier of the CPU backend: kernel bodies compiled to machine code
//! with Cranelift, so that a chunk is one pass over memory with every value
//! in a register, as in a hand-written fused loop.
//!
//! The register machine runs one step per operation and tile: each step
//! stores its result and the next loads it again, so when memory is fast
//! the machine is bound by those extra passes, not by memory. A body whose
//! operations are all in [`lower`]'s set (f32/f64/i32/i64/u32/u64
//! arithmetic, comparisons, `where`, NaN-propagating `minimum`/`maximum`,
//! and as calls of the machine's own loops the math functions, `power` and
//! integer division: `callout`) is compiled instead, once per pattern of broadcast leaves, the first
//! time a launch is large enough to repay the compilation (tiering: small
//! launches keep using the machine until the kernel has processed
//! [`JIT_AFTER`] elements). Anything else, or a compilation that fails,
//! runs on the machine, which stays the reference for what the JIT computes.
//! [`JitMode`] (`Context::builder().jit(..)`, `LAZYFUSE_JIT`) chooses
//! between tiering, always and never; the test suite runs all of them.

mod callout;
mod casts;
pub mod kernel;
pub mod lower;
mod ops;
pub mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::settings::JitMode;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use lazyfuse_fusion::{Body, CombineIr, FusedKernel};

/// Elements a kernel processes on the register machine before it is
/// compiled: a program run twice over 10^5 elements is compiled. The
/// compilation (2–40 ms for a fused body) runs on a thread of its own
/// while the machine goes on, so small launches do not wait for it.
pub const JIT_AFTER: u64 = 1 << 17;

/// Launches of this many elements wait for their code to be compiled
/// (the machine running them would cost more than the compilation).
pub const COMPILE_AT_ONCE: u64 = 1 << 20;

pub use lower::Form;

/// [`Jit::bits`] of a slot always broadcast, and of a slot no leaf.
const FIXED: u8 = 64;
const NONE: u8 = 65;

/// Variants compiled, and compilations that failed, in this process.
static COMPILED: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

/// How many kernel variants this process compiled to machine code, and how
/// many compilations of bodies the JIT accepts failed (then the register
/// machine ran them; a failure is a gap in [`lower`] that tests catch).
pub fn counts() -> (u64, u64) {
    (
        COMPILED.load(Ordering::Relaxed),
        FAILED.load(Ordering::Relaxed),
    )
}

/// The generated function: `(table, start, n, out, rows)` (see [`lower`]).
type KernelFn = unsafe extern "C" fn(*const *mut u8, usize, usize, *mut u8, usize);

/// Machine code of one kernel variant, freed when the last user drops it.
pub struct JitCode {
    /// The module owning the code (behind a mutex only so that the code
    /// can be shared between threads: the module is touched again only
    /// when dropped).
    module: Mutex<Option<JITModule>>,
    function: KernelFn,
}

impl std::fmt::Debug for JitCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JitCode")
    }
}

impl Drop for JitCode {
    fn drop(&mut self) {
        let module = self
            .module
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(module) = module.take() {
            // SAFETY: `function` points into this module's memory and is
            // only reachable through `self`, which is being dropped.
            unsafe { module.free_memory() };
        }
    }
}

impl JitCode {
    /// Computes elements `start..start + n` of the chunk whose slots are
    /// `table`.
    ///
    /// # Safety
    /// `table` must be the pointer table of a frame bound for the variant
    /// this code was compiled for (checked by `Frame::jit_table`), and
    /// `start + n` must not exceed the frame's chunk length.
    pub unsafe fn call(&self, table: &[*mut u8], start: usize, n: usize) {
        // SAFETY: the caller's contract: every window the code reads or
        // writes holds the chunk, every scalar slot one value, and outputs
        // are writable and overlap nothing the code reads. The map form
        // does not touch its fourth argument.
        unsafe { (self.function)(table.as_ptr(), start, n, std::ptr::null_mut(), 1) }
    }

    /// Combines the reduced value of elements `start..start + n` into
    /// `acc` element by element (code of the accumulate form).
    ///
    /// # Safety
    /// As for [`JitCode::call`]; the code must be of the accumulate form for
    /// a value of type `T`, and `acc` must hold `n` elements.
    pub unsafe fn accumulate<T: Copy>(&self, table: &[*mut u8], start: usize, acc: &mut [T]) {
        // SAFETY: as in `call`; the accumulate form reads and writes `n`
        // elements of `T` from its fourth argument, `acc`'s elements.
        unsafe { (self.function)(table.as_ptr(), start, acc.len(), acc.as_mut_ptr().cast(), 1) }
    }

    /// As [`JitCode::accumulate`] over `rows` consecutive lines from
    /// element 0, slot `s` moving `table[slots + s]` bytes from a line to
    /// the next.
    ///
    /// # Safety
    /// As for [`JitCode::accumulate`], for every one of the `rows` lines:
    /// each slot's window (or value), moved by its stride, must hold the
    /// line (`Machine::accumulate_lines` checks the first and last lines).
    pub unsafe fn accumulate_lines<T: Copy>(&self, table: &[*mut u8], acc: &mut [T], rows: usize) {
        // SAFETY: the caller's contract, line by line.
        unsafe { (self.function)(table.as_ptr(), 0, acc.len(), acc.as_mut_ptr().cast(), rows) }
    }

    /// Computes `rows` consecutive lines of `len` elements from element 0
    /// (code of the map-lines form), slot `s` moving `table[slots + s]`
    /// bytes from a line to the next.
    ///
    /// # Safety
    /// As for [`JitCode::call`], for every one of the `rows` lines: each
    /// slot's window (or value), moved by its stride, must hold the line
    /// (`Machine::map_lines` checks the first and last lines of the inputs
    /// and that the outputs hold every line).
    pub unsafe fn map_lines(&self, table: &[*mut u8], len: usize, rows: usize) {
        // SAFETY: the caller's contract, line by line; the form does not
        // touch its fourth argument.
        unsafe { (self.function)(table.as_ptr(), 0, len, std::ptr::null_mut(), rows) }
    }

    /// Combines the reduced value over elements `start..start + n` in
    /// blocks of `block` elements (the last may be shorter), each block
    /// starting from `identity`, into one partial per block in `partials`;
    /// `false`, having run nothing, when `partials` is shorter than
    /// `n.div_ceil(block).max(1)` (code of the reduce form).
    ///
    /// # Safety
    /// As for [`JitCode::call`]; the code must be of the reduce form for a
    /// value of type `T`.
    pub unsafe fn reduce_blocks<T: Copy>(
        &self,
        table: &[*mut u8],
        start: usize,
        n: usize,
        block: usize,
        identity: T,
        partials: &mut [T],
    ) -> bool {
        // A block longer than `n` is one block (and cannot overflow).
        let block = block.clamp(1, n.max(1));
        if partials.len() < n.div_ceil(block).max(1) {
            return false;
        }
        partials[0] = identity;
        // SAFETY: as in `call`; the reduce form reads its identity from the
        // first partial and writes `n.div_ceil(block)` values of `T` from
        // its fourth argument, which `partials` holds (checked above).
        unsafe {
            (self.function)(
                table.as_ptr(),
                start,
                n,
                partials.as_mut_ptr().cast(),
                block,
            )
        };
        true
    }
}

/// Where a variant's code stands: being compiled (in the background), or
/// compiled (`None`: it did not compile).
#[derive(Clone, Debug)]
enum State {
    Pending,
    Done(Option<Arc<JitCode>>),
}

/// A variant's key (broadcast leaves, form) and its state.
type Variant = ((u64, Form), State);

/// What a compilation reads, shared with a background compilation.
#[derive(Debug)]
struct Source {
    body: Body,
    /// `(value, slot)` the code stores.
    outputs: Vec<(usize, usize)>,
    /// Leaf slots whose broadcast-or-window kind selects the variant.
    leaves: Vec<usize>,
    /// Leaf slots that are always one broadcast element (inputs of
    /// `Layout::Scalar`): not part of the variant's key.
    fixed: Vec<usize>,
    /// Slots in a frame (line strides follow the pointers in the table).
    slots: usize,
}

/// The compiled variants of one kernel body (one per pattern of leaves
/// bound to broadcast values), made on demand: at once for a launch of
/// [`COMPILE_AT_ONCE`] elements or more (or in `JitMode::Always`), else on
/// a thread of its own while the register machine runs the launches.
#[derive(Debug)]
pub struct Jit {
    source: Arc<Source>,
    /// Per value slot: its bit in a variant's key (a leaf), or `FIXED`
    /// (always broadcast), or `NONE`.
    bits: Vec<u8>,
    variants: Arc<Mutex<Vec<Variant>>>,
    elements: AtomicU64,
    /// The last launch asked for code at once (see [`Jit::wanted`]).
    at_once: AtomicBool,
}

/// The host's instruction set for Cranelift, without AVX-512 (whether a
/// body compiles must not depend on it: the tests that show every accepted
/// body compiling run on machines with it) and with AVX off under
/// `LAZYFUSE_NO_AVX2`.
fn isa() -> Option<&'static OwnedTargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        flags.set("is_pic", "false").ok()?;
        let mut builder = cranelift_native::builder().ok()?;
        #[cfg(target_arch = "x86_64")]
        for feature in [
            "has_avx512bitalg",
            "has_avx512dq",
            "has_avx512vl",
            "has_avx512vbmi",
            "has_avx512f",
        ] {
            builder.set(feature, "false").ok()?;
        }
        if std::env::var_os("LAZYFUSE_NO_AVX2").is_some() {
            builder.set("has_avx", "false").ok()?;
            builder.set("has_avx2", "false").ok()?;
        }
        builder.finish(settings::Flags::new(flags)).ok()
    })
    .as_ref()
}

impl Jit {
    /// The JIT of `body` storing `outputs` (`(value, slot)`), or why it has none.
    pub fn new(
        body: &Body,
        outputs: Vec<(usize, usize)>,
        (leaves, fixed): (Vec<usize>, Vec<usize>),
        slots: usize,
    ) -> Result<Jit, support::Unsupported> {
        if leaves.len() > 64 {
            return Err("more than 64 leaves");
        }
        support::supports(body, &outputs)?;
        let mut bits = vec![NONE; body.len()];
        for (bit, &slot) in leaves.iter().enumerate() {
            bits[slot] = bit as u8;
        }
        for &slot in &fixed {
            bits[slot] = FIXED;
        }
        Ok(Jit {
            bits,
            source: Arc::new(Source {
                body: body.clone(),
                outputs,
                leaves,
                fixed,
                slots,
            }),
            variants: Arc::new(Mutex::new(Vec::new())),
            elements: AtomicU64::new(0),
            at_once: AtomicBool::new(true),
        })
    }

    /// True when the code stores nothing: a reduction of a leaf, which
    /// only the accumulate form computes (the machine reduces a leaf's
    /// windows in place as fast).
    pub fn stores_nothing(&self) -> bool {
        self.source.outputs.is_empty()
    }

    /// The leaf slots whose kind selects a variant.
    pub fn leaves(&self) -> &[usize] {
        &self.source.leaves
    }

    /// Whether slot `slot`, a leaf, is one broadcast element in the
    /// variant whose broadcast leaves are `scalar`.
    pub fn broadcasts(&self, slot: usize, scalar: u64) -> bool {
        match self.bits.get(slot).copied().unwrap_or(NONE) {
            FIXED => true,
            NONE => false,
            bit => scalar & (1 << bit) != 0,
        }
    }

    /// The leaf slots that are always a broadcast element.
    pub fn fixed(&self) -> &[usize] {
        &self.source.fixed
    }

    /// Whether a launch of `elements` elements should use compiled code
    /// in `mode` (counting them towards the tiering threshold), and
    /// whether code not compiled yet is compiled at once (`Always`, or a
    /// launch of [`COMPILE_AT_ONCE`] elements) or in the background.
    pub fn wanted(&self, elements: usize, mode: JitMode) -> bool {
        let at_once = mode == JitMode::Always || elements as u64 >= COMPILE_AT_ONCE;
        self.at_once.store(at_once, Ordering::Relaxed);
        match mode {
            JitMode::Always => true,
            JitMode::Never => false,
            JitMode::Auto => {
                let before = self.elements.fetch_add(elements as u64, Ordering::Relaxed);
                before.saturating_add(elements as u64) >= JIT_AFTER
            }
        }
    }

    /// The code of the variant whose broadcast leaves are `scalar`
    /// (a bit per entry of [`Jit::leaves`]): compiled on first use, at once
    /// or on a thread of its own (see [`Jit::wanted`]); `None` while that
    /// runs, or when it does not compile.
    pub fn variant(&self, scalar: u64, form: Form) -> Option<Arc<JitCode>> {
        let key = (scalar, form);
        let mut variants = self.variants.lock().unwrap_or_else(PoisonError::into_inner);
        match variants.iter().find(|(k, _)| *k == key) {
            Some((_, State::Done(code))) => return code.clone(),
            Some((_, State::Pending)) if !self.at_once.load(Ordering::Relaxed) => return None,
            Some((_, State::Pending)) => {}
            None if !self.at_once.load(Ordering::Relaxed) => {
                variants.push((key, State::Pending));
                drop(variants);
                let (source, variants) = (Arc::clone(&self.source), Arc::clone(&self.variants));
                let spawned = std::thread::Builder::new()
                    .name("lazyfuse-jit".into())
                    .spawn(move || {
                        let code = source.compile(scalar, form).map(Arc::new);
                        settle(&variants, key, code);
                    });
                if spawned.is_err() {
                    // No thread: compile here.
                    let code = self.source.compile(scalar, form).map(Arc::new);
                    settle(&self.variants, key, code.clone());
                    return code;
                }
                return None;
            }
            None => {}
        }
        // At once (also when a background compilation of it still runs:
        // whichever finishes first is kept).
        let code = self.source.compile(scalar, form).map(Arc::new);
        let kept = match variants.iter_mut().find(|(k, _)| *k == key) {
            Some((_, state @ State::Pending)) => {
                *state = State::Done(code.clone());
                code
            }
            Some((_, State::Done(done))) => done.clone(),
            None => {
                variants.push((key, State::Done(code.clone())));
                code
            }
        };
        kept
    }
}

/// Records a background compilation's code, unless the variant was
/// compiled at once meanwhile.
fn settle(variants: &Mutex<Vec<Variant>>, key: (u64, Form), code: Option<Arc<JitCode>>) {
    let mut variants = variants.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, state @ State::Pending)) = variants.iter_mut().find(|(k, _)| *k == key) {
        *state = State::Done(code);
    }
}

impl Source {
    fn compile(&self, scalar: u64, form: Form) -> Option<JitCode> {
        let mut broadcast = vec![false; self.body.len()];
        for &slot in &self.fixed {
            if let Some(b) = broadcast.get_mut(slot) {
                *b = true;
            }
        }
        for (bit, &slot) in self.leaves.iter().enumerate() {
            if scalar & (1 << bit) != 0 {
                if let Some(b) = broadcast.get_mut(slot) {
                    *b = true;
                }
            }
        }
        let shape = lower::Shape {
            body: &self.body,
            outputs: &self.outputs,
            scalar: &broadcast,
            slots: self.slots,
        };
        // Cranelift reports most failures as errors, but an unexpected
        // lowering gap may panic: either way the machine runs the kernel.
        let code = std::panic::catch_unwind(|| compile(&shape, form))
            .ok()
            .flatten();
        let counter = if code.is_some() { &COMPILED } else { &FAILED };
        counter.fetch_add(1, Ordering::Relaxed);
        code
    }
}

/// How many of `body`'s instructions compiled code computes by calling the
/// machine's vectorised loops (math functions, `power`, integer division):
/// each costs tens of simple instructions' time.
pub fn calls(body: &Body) -> usize {
    (0..body.insts.len())
        .filter(|&k| support::call_of(body, k).is_some())
        .count()
}

/// Whether the JIT compiles `kernel`'s body, for `explain()`: `Ok`, or why
/// the register machine runs it.
pub fn accepts(kernel: &FusedKernel) -> Result<(), support::Unsupported> {
    let stored: Vec<(usize, usize)> = match &kernel.reduction {
        Some(r) => match r.combine {
            CombineIr::Builtin(_) if kernel.body.dtype(r.value) == r.acc => {
                vec![(r.value.index(), r.value.index())]
            }
            _ => return Err("a user reducer, or an accumulator wider than the values"),
        },
        None => kernel
            .outputs
            .iter()
            .map(|v| (v.index(), v.index()))
            .collect(),
    };
    support::supports(&kernel.body, &stored)
}

fn compile(shape: &lower::Shape<'_>, form: Form) -> Option<JitCode> {
    let isa = isa()?.clone();
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    lower::emit(&mut ctx, module.target_config().pointer_type(), shape, form).ok()?;
    let id = module
        .declare_function("kernel", Linkage::Local, &ctx.func.signature)
        .ok()?;
    module.define_function(id, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let code = module.get_finalized_function(id);
    // SAFETY: `code` is the function `lower::emit` built, whose signature
    // is `KernelFn`'s (five pointer-sized arguments, no result), with the
    // platform's default calling convention, which `extern "C"` names.
    let function = unsafe { std::mem::transmute::<*const u8, KernelFn>(code) };
    Some(JitCode {
        module: Mutex::new(Some(module)),
        function,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_core::{BinaryOp, DType};
    use lazyfuse_fusion::Inst;
    use std::time::{Duration, Instant};

    #[test]
    fn small_launches_compile_in_the_background_and_large_ones_at_once() {
        let mut body = Body::default();
        let a = body.push(Inst::Load(0), DType::F32);
        let b = body.push(Inst::Load(1), DType::F32);
        body.push(Inst::Binary(BinaryOp::Add, a, b), DType::F32);
        let jit = Jit::new(&body, vec![(2, 2)], (vec![0, 1], Vec::new()), 4).unwrap();
        // Twice 10^5 elements: wanted, compiled on a thread of its own.
        assert!(!jit.wanted(100_000, JitMode::Auto));
        assert!(jit.wanted(100_000, JitMode::Auto));
        assert!(jit.variant(0, Form::Map).is_none(), "not waited for");
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut code = None;
        while code.is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            code = jit.variant(0, Form::Map);
        }
        assert!(code.is_some(), "the background compilation never finished");
        // A launch of 2^20 elements waits for its variant's code.
        assert!(jit.wanted(1 << 20, JitMode::Auto));
        assert!(jit.variant(1, Form::Map).is_some());
        // So does every launch in `Always`, and `Never` wants none.
        assert!(jit.wanted(10, JitMode::Always));
        assert!(jit.variant(2, Form::Map).is_some());
        assert!(!jit.wanted(1 << 20, JitMode::Never));
    }
}
