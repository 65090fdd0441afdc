//! A kernel body compiled to a register machine over chunks.
//!
//! Every SSA value gets a view per chunk: a register (a chunk-sized scratch
//! buffer, reused once the value is dead, as numexpr does), a zero-copy
//! window into a contiguous input, or a single broadcast value (arguments and
//! inputs that do not vary along the chunk). Each instruction is one typed
//! loop from `loops`.

use lazyfuse_core::half::{bf16, f16};
use lazyfuse_core::{
    with_dtype, DType, Element, Error, HostBuffer, Literal, Result, SliceMut, UnaryOp,
};
use lazyfuse_fusion::{Body, Inst, ValueId};

use super::loops::{self, Arg};
use super::{vmath, widen};

/// Elements per chunk. Temporaries of 8 Ki elements stay in L2 (L1 for
/// narrow types); measured on E1/E2/E4 at 10^7 f32, 8 Ki beat 2 Ki and 4 Ki
/// by 12–20 % (fewer passes between a chunk's input loads).
pub const CHUNK: usize = 8192;

fn internal(message: &str) -> Error {
    Error::internal("cpu machine", message)
}

/// Where a value lives during a chunk.
#[derive(Clone, Copy, Debug)]
pub enum View {
    /// Register `r`, elements `0..len`.
    Reg(usize),
    /// Input `k`, elements `offset..offset + len`.
    Input(usize, usize),
    /// Element `offset` of input `k`, everywhere.
    InputScalar(usize, usize),
    /// Argument `k`, everywhere.
    Arg(usize),
    /// Written straight into the output (not readable).
    Written,
}

/// A body ready to run: register assignment and dtypes.
#[derive(Debug)]
pub struct Machine {
    body: Body,
    register: Vec<Option<usize>>,
    register_dtypes: Vec<DType>,
    direct: Option<ValueId>,
}

impl Machine {
    /// Assigns registers: a value's register is free again after its last
    /// use; `keep` values (outputs, the reduced value) live to the end.
    pub fn new(body: &Body, keep: &[ValueId]) -> Machine {
        let n = body.len();
        let mut last_use = vec![0usize; n];
        for (i, inst) in body.insts.iter().enumerate() {
            for v in inst.operands() {
                last_use[v.index()] = i;
            }
        }
        for v in keep {
            last_use[v.index()] = usize::MAX;
        }
        let mut register = vec![None; n];
        let mut register_dtypes: Vec<DType> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        for (i, inst) in body.insts.iter().enumerate() {
            if !matches!(inst, Inst::Arg(_)) {
                let dtype = body.dtypes[i];
                let reg = match free.iter().position(|&r| register_dtypes[r] == dtype) {
                    Some(p) => free.swap_remove(p),
                    None => {
                        register_dtypes.push(dtype);
                        register_dtypes.len() - 1
                    }
                };
                register[i] = Some(reg);
            }
            for v in inst.operands() {
                if last_use[v.index()] == i {
                    if let Some(r) = register[v.index()] {
                        if !free.contains(&r) {
                            free.push(r);
                        }
                    }
                }
            }
        }
        // The last instruction, when it is an operation whose value is only
        // stored, can write straight into the output (one pass fewer).
        let direct = body
            .insts
            .last()
            .filter(|inst| !inst.operands().is_empty())
            .map(|_| ValueId((n - 1) as u32))
            .filter(|v| keep.iter().filter(|k| *k == v).count() == 1);
        Machine {
            body: body.clone(),
            register,
            register_dtypes,
            direct,
        }
    }

    /// The value the last instruction computes straight into an output slice, if any.
    pub fn direct(&self) -> Option<ValueId> {
        self.direct
    }

    /// Scratch registers for one worker running chunks of at most `len`
    /// (small launches do not pay for full-size registers).
    pub fn registers(&self, len: usize) -> Vec<HostBuffer> {
        let len = len.clamp(1, CHUNK);
        self.register_dtypes
            .iter()
            .map(|&d| with_dtype!(d, T => T::into_buffer(vec![T::default(); len])))
            .collect()
    }

    /// The dtype of a value.
    pub fn dtype(&self, v: ValueId) -> DType {
        self.body.dtypes[v.index()]
    }

    /// Runs one chunk of `len` elements. `load(k)` tells where input `k`'s
    /// chunk is (a view, or a gather into the given register); `views` gets
    /// one view per value.
    #[allow(clippy::too_many_arguments)] // one call site per runner; a struct would only rename them
    pub fn run(
        &self,
        len: usize,
        inputs: &[Option<&HostBuffer>],
        args: &[Literal],
        regs: &mut [HostBuffer],
        views: &mut Vec<View>,
        mut direct_out: Option<SliceMut<'_>>,
        mut leaf: impl FnMut(&Inst, Option<usize>, &mut [HostBuffer]) -> Result<View>,
    ) -> Result<()> {
        views.clear();
        for (i, inst) in self.body.insts.iter().enumerate() {
            let dtype = self.body.dtypes[i];
            let view = match inst {
                Inst::Arg(k) => View::Arg(*k as usize),
                Inst::Load(_) | Inst::Iota(_) | Inst::Param(_) | Inst::Reduced => {
                    leaf(inst, self.register[i], regs)?
                }
                op if Some(i) == self.direct.map(ValueId::index) && direct_out.is_some() => {
                    let out = direct_out
                        .take()
                        .ok_or_else(|| internal("no direct output"))?;
                    Ctx::new(inputs, args, regs, views, len).exec(op, dtype, &self.body, out)?;
                    View::Written
                }
                op => {
                    let r = self.register[i]
                        .ok_or_else(|| internal("an operation without a register"))?;
                    let mut dst = std::mem::replace(&mut regs[r], HostBuffer::Bool(Vec::new()));
                    let result = Ctx::new(inputs, args, regs, views, len).exec(
                        op,
                        dtype,
                        &self.body,
                        dst.as_slice_mut(),
                    );
                    regs[r] = dst;
                    result?;
                    View::Reg(r)
                }
            };
            views.push(view);
        }
        Ok(())
    }
}

/// Read access to the values of a chunk.
pub struct Ctx<'a> {
    /// Kernel inputs.
    pub inputs: &'a [Option<&'a HostBuffer>],
    /// Argument values.
    pub args: &'a [Literal],
    /// Registers.
    pub regs: &'a [HostBuffer],
    /// Views of the values computed so far.
    pub views: &'a [View],
    /// Chunk length.
    pub len: usize,
}

impl<'a> Ctx<'a> {
    /// Read access to a chunk's inputs, arguments, registers and values.
    pub fn new(
        inputs: &'a [Option<&'a HostBuffer>],
        args: &'a [Literal],
        regs: &'a [HostBuffer],
        views: &'a [View],
        len: usize,
    ) -> Ctx<'a> {
        Ctx {
            inputs,
            args,
            regs,
            views,
            len,
        }
    }

    /// The operand view of `view` as type `T`.
    pub fn arg<T: Element>(&self, view: View) -> Result<Arg<'a, T>> {
        let wrong = || internal("a value of an unexpected dtype");
        Ok(match view {
            View::Reg(r) => Arg::Slice(
                T::slice_of(&self.regs[r])
                    .and_then(|s| s.get(..self.len))
                    .ok_or_else(wrong)?,
            ),
            View::Input(k, offset) => {
                let buffer = self.inputs.get(k).copied().flatten().ok_or_else(wrong)?;
                Arg::Slice(
                    T::slice_of(buffer)
                        .and_then(|s| s.get(offset..offset + self.len))
                        .ok_or_else(wrong)?,
                )
            }
            View::InputScalar(k, offset) => {
                let buffer = self.inputs.get(k).copied().flatten().ok_or_else(wrong)?;
                Arg::Scalar(
                    *T::slice_of(buffer)
                        .and_then(|s| s.get(offset))
                        .ok_or_else(wrong)?,
                )
            }
            View::Arg(k) => {
                let literal = self.args.get(k).ok_or_else(wrong)?;
                Arg::Scalar(T::from_wide(literal.to_wide()))
            }
            View::Written => return Err(internal("a value written to an output was read")),
        })
    }

    fn operand<T: Element>(&self, v: ValueId) -> Result<Arg<'a, T>> {
        let view = *self
            .views
            .get(v.index())
            .ok_or_else(|| internal("operand out of order"))?;
        self.arg(view)
    }

    /// Runs one instruction, with AVX2 code where the CPU has it (checked
    /// once at run time; the same loops, compiled for wider vectors).
    fn exec(&self, inst: &Inst, dtype: DType, body: &Body, dst: SliceMut<'_>) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU supports AVX2: `has_avx2` asked it at run time.
            return unsafe { self.exec_avx2(inst, dtype, body, dst) };
        }
        self.exec_portable(inst, dtype, body, dst)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn exec_avx2(
        &self,
        inst: &Inst,
        dtype: DType,
        body: &Body,
        dst: SliceMut<'_>,
    ) -> Result<()> {
        self.exec_portable(inst, dtype, body, dst)
    }

    #[inline(always)]
    fn exec_portable(
        &self,
        inst: &Inst,
        dtype: DType,
        body: &Body,
        dst: SliceMut<'_>,
    ) -> Result<()> {
        let len = self.len;
        macro_rules! out {
            ($T:ty) => {
                <$T>::unwrap_mut(dst)
                    .and_then(|s| s.get_mut(..len))
                    .ok_or_else(|| internal("destination dtype"))?
            };
        }
        macro_rules! numeric {
            ($d:expr, $T:ident => $body:expr, bool => $bool:expr) => {
                match $d {
                    DType::F16 => {
                        type $T = f16;
                        $body
                    }
                    DType::BF16 => {
                        type $T = bf16;
                        $body
                    }
                    DType::F32 => {
                        type $T = f32;
                        $body
                    }
                    DType::F64 => {
                        type $T = f64;
                        $body
                    }
                    DType::I8 => {
                        type $T = i8;
                        $body
                    }
                    DType::I16 => {
                        type $T = i16;
                        $body
                    }
                    DType::I32 => {
                        type $T = i32;
                        $body
                    }
                    DType::I64 => {
                        type $T = i64;
                        $body
                    }
                    DType::U8 => {
                        type $T = u8;
                        $body
                    }
                    DType::U16 => {
                        type $T = u16;
                        $body
                    }
                    DType::U32 => {
                        type $T = u32;
                        $body
                    }
                    DType::U64 => {
                        type $T = u64;
                        $body
                    }
                    DType::Bool => $bool,
                }
            };
        }
        match inst {
            Inst::Unary(UnaryOp::LogicalNot, a) => loops::not(self.operand(*a)?, out!(bool)),
            Inst::Unary(op, a) if op.is_predicate() => {
                numeric!(body.dtype(*a), T => loops::predicate::<T>(*op, self.operand(*a)?, out!(bool)),
                    bool => return Err(internal("a predicate of bool")))
            }
            Inst::Unary(op, a)
                if vmath::covers(*op) && matches!(dtype, DType::F32 | DType::F64) =>
            {
                let done = match dtype {
                    DType::F32 => vmath::unary::<f32>(*op, self.operand(*a)?, out!(f32)),
                    _ => vmath::unary::<f64>(*op, self.operand(*a)?, out!(f64)),
                };
                if !done {
                    return Err(internal("a function vmath does not cover"));
                }
            }
            Inst::Unary(op, a) if dtype == DType::F16 && widen::covers_unary(*op) => {
                widen::unary::<f16>(*op, self.operand(*a)?, out!(f16))
            }
            Inst::Unary(op, a) if dtype == DType::BF16 && widen::covers_unary(*op) => {
                widen::unary::<bf16>(*op, self.operand(*a)?, out!(bf16))
            }
            Inst::Unary(op, a) => {
                numeric!(dtype, T => loops::unary::<T>(*op, self.operand(*a)?, out!(T)),
                bool => return Err(internal("arithmetic on bool")))
            }
            Inst::Binary(op, a, b) if op.is_comparison() => {
                with_dtype!(body.dtype(*a), T => loops::comparison::<T>(*op, self.operand(*a)?, self.operand(*b)?, out!(bool)))
            }
            Inst::Binary(op, a, b) if dtype == DType::F16 && widen::covers_binary(*op) => {
                widen::binary::<f16>(*op, self.operand(*a)?, self.operand(*b)?, out!(f16))
            }
            Inst::Binary(op, a, b) if dtype == DType::BF16 && widen::covers_binary(*op) => {
                widen::binary::<bf16>(*op, self.operand(*a)?, self.operand(*b)?, out!(bf16))
            }
            Inst::Binary(op, a, b) => {
                numeric!(dtype, T => loops::binary::<T>(*op, self.operand(*a)?, self.operand(*b)?, out!(T)),
                bool => loops::boolean(*op, self.operand(*a)?, self.operand(*b)?, out!(bool)))
            }
            Inst::Select(c, a, b) => {
                with_dtype!(dtype, T => loops::select::<T>(self.operand(*c)?, self.operand(*a)?, self.operand(*b)?, out!(T)))
            }
            Inst::Cast(a) if (body.dtype(*a), dtype) == (DType::F16, DType::F32) => {
                widen::widen::<f16>(self.operand(*a)?, out!(f32))
            }
            Inst::Cast(a) if (body.dtype(*a), dtype) == (DType::BF16, DType::F32) => {
                widen::widen::<bf16>(self.operand(*a)?, out!(f32))
            }
            Inst::Cast(a) if (body.dtype(*a), dtype) == (DType::F32, DType::F16) => {
                widen::narrow::<f16>(self.operand(*a)?, out!(f16))
            }
            Inst::Cast(a) if (body.dtype(*a), dtype) == (DType::F32, DType::BF16) => {
                widen::narrow::<bf16>(self.operand(*a)?, out!(bf16))
            }
            Inst::Cast(a) => {
                with_dtype!(body.dtype(*a), S => with_dtype!(dtype, D => loops::cast::<S, D>(self.operand(*a)?, out!(D))))
            }
            _ => return Err(internal("a leaf instruction executed as an operation")),
        }
        Ok(())
    }
}

/// True when the CPU runs AVX2 instructions (asked once).
/// `LAZYFUSE_NO_AVX2=1` forces the portable loops (the test suite runs both).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx2() -> bool {
    static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2.get_or_init(|| {
        std::env::var_os("LAZYFUSE_NO_AVX2").is_none()
            && std::arch::is_x86_feature_detected!("avx2")
    })
}

/// Copies `view` (of `len` elements) into `out`.
pub fn store<T: Element>(ctx: &Ctx<'_>, view: View, out: &mut [T]) -> Result<()> {
    match ctx.arg::<T>(view)? {
        Arg::Slice(s) => out.copy_from_slice(s),
        Arg::Scalar(x) => out.fill(x),
    }
    Ok(())
}
