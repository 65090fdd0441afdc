//! `FusedKernel`: the backend-neutral description of one kernel.
//!
//! Invariants (checked by [`FusedKernel::verify`]):
//! - A kernel iterates a *domain* of `rank` dimensions (sizes are launch
//!   arguments, not part of the kernel). Element-wise kernels write each
//!   output densely over the domain; a reduction kernel reduces `axes` of the
//!   domain and writes its outputs densely over the kept dimensions.
//! - Bodies are SSA: value `%i` is `insts[i]`, operands refer to earlier
//!   values only, and `dtypes[i]` is its dtype. Operations are normalised as
//!   in the expression graph (operands of a binary op share a dtype).
//! - Scalar constants are *arguments* (`Inst::Arg`): their values are bound
//!   at launch, so kernels that differ only in sizes and constants are equal
//!   and hash equal: [`FusedKernel::structural_hash`] is the compile-cache key.
//! - A *row program* (`stages` not empty, no `reduction`) reduces the
//!   trailing (or the leading) `axes` of its domain several times per
//!   row, one stage after another: stage `k` reduces its body value over the row, its epilogue
//!   gives the row's value (its last value), which later stages and the
//!   outputs read as `Inst::Stage(k)`; then the outputs are written densely
//!   over the domain, or (`per_row`) once per row over the kept axes, from
//!   the row values alone. A stage's value depends on earlier stages only.
//! - Each input has a layout class: `Contiguous` (dense over the domain),
//!   `Scalar` (one element, broadcast everywhere) or `Strided` (per-dimension
//!   strides bound at launch; 0 for broadcast dimensions).

use std::collections::hash_map::DefaultHasher;
use std::fmt::{self, Write};
use std::hash::{Hash, Hasher};

use lazyfuse_core::{BinaryOp, DType, Error, ReduceOp, Result, UnaryOp};
use smallvec::SmallVec;

/// An SSA value of a kernel body, printed `%3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

impl ValueId {
    /// The value's position in its body.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One instruction of a kernel body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Inst {
    /// Element of input `i` at the current domain index.
    Load(u32),
    /// The linear position `Σ index[d] * stride[d]` given by input `i`'s
    /// strides, as i64 (generated values such as `arange`; no memory read).
    Iota(u32),
    /// Scalar argument `i` of the kernel (a constant bound at launch).
    Arg(u32),
    /// Parameter `i` of a combine body.
    Param(u32),
    /// The reduced value (epilogue bodies only).
    Reduced,
    /// The row's value of stage `k` of a row program (the last value of
    /// its epilogue), the same for every element of the row.
    Stage(u32),
    /// Element-wise operation of one value.
    Unary(UnaryOp, ValueId),
    /// Element-wise operation of two values of one dtype.
    Binary(BinaryOp, ValueId, ValueId),
    /// `cond ? a : b`.
    Select(ValueId, ValueId, ValueId),
    /// Conversion to the instruction's dtype.
    Cast(ValueId),
    /// The value's bits read as the instruction's dtype (of the same size).
    Bitcast(ValueId),
}

impl Inst {
    /// The values this instruction reads.
    pub fn operands(&self) -> SmallVec<[ValueId; 3]> {
        match self {
            Inst::Unary(_, a) | Inst::Cast(a) | Inst::Bitcast(a) => SmallVec::from_slice(&[*a]),
            Inst::Binary(_, a, b) => SmallVec::from_slice(&[*a, *b]),
            Inst::Select(c, a, b) => SmallVec::from_slice(&[*c, *a, *b]),
            _ => SmallVec::new(),
        }
    }

    /// Relative cost for fusion limits (transcendental functions count more).
    pub fn cost(&self) -> u32 {
        match self {
            Inst::Unary(op, _) if op.is_float_only() && !op.is_rounding() && !op.is_predicate() => {
                8
            }
            Inst::Binary(BinaryOp::Pow, ..) => 8,
            Inst::Load(_)
            | Inst::Iota(_)
            | Inst::Arg(_)
            | Inst::Param(_)
            | Inst::Reduced
            | Inst::Stage(_) => 0,
            _ => 1,
        }
    }
}

/// A straight-line SSA body.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Body {
    /// Instructions; value `%i` is `insts[i]`.
    pub insts: Vec<Inst>,
    /// `dtypes[i]` is the dtype of `%i`.
    pub dtypes: Vec<DType>,
}

impl Body {
    /// Appends an instruction, returning its value.
    pub fn push(&mut self, inst: Inst, dtype: DType) -> ValueId {
        self.insts.push(inst);
        self.dtypes.push(dtype);
        ValueId((self.insts.len() - 1) as u32)
    }

    /// The dtype of a value.
    pub fn dtype(&self, value: ValueId) -> DType {
        self.dtypes[value.index()]
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// True when the body has no instructions.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    fn verify(&self, what: &str, inputs: usize, args: usize) -> Result<()> {
        if self.insts.len() != self.dtypes.len() {
            return Err(Error::internal(what, "insts and dtypes differ in length"));
        }
        for (i, inst) in self.insts.iter().enumerate() {
            if inst.operands().iter().any(|v| v.index() >= i) {
                return Err(Error::internal(what, format!("%{i} reads a later value")));
            }
            let bad = match inst {
                Inst::Load(k) | Inst::Iota(k) => *k as usize >= inputs,
                Inst::Arg(k) => *k as usize >= args,
                _ => false,
            };
            if bad {
                return Err(Error::internal(
                    what,
                    format!("%{i} refers to a missing input or argument"),
                ));
            }
        }
        Ok(())
    }
}

/// How an input is laid out relative to the domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Dense, row-major over the whole domain.
    Contiguous,
    /// A single element read everywhere.
    Scalar,
    /// General strides (bound at launch).
    Strided,
}

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// A buffer in memory.
    Buffer,
    /// No memory: only its strides are used, by [`Inst::Iota`].
    Iota,
}

/// One input of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelInput {
    /// Element type (i64 for iota inputs).
    pub dtype: DType,
    /// Layout class.
    pub layout: Layout,
    /// Buffer or generated.
    pub kind: InputKind,
}

/// How partial results of a reduction combine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CombineIr {
    /// A built-in reduction.
    Builtin(ReduceOp),
    /// A user reduction: a body over `Param(0)` and `Param(1)` whose result
    /// is its last value.
    Custom {
        /// The reducer's name.
        name: String,
        /// The combine body.
        body: Body,
    },
}

/// The reduction part of a kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReductionIr {
    /// The combining operation.
    pub combine: CombineIr,
    /// Argument index holding the identity.
    pub identity_arg: u32,
    /// Accumulator dtype (the reduced value's dtype).
    pub acc: DType,
    /// Reduced domain axes, sorted.
    pub axes: SmallVec<[usize; 4]>,
    /// The body value that is reduced.
    pub value: ValueId,
    /// Element-wise work after the reduction, over `Inst::Reduced` and arguments.
    pub epilogue: Body,
}

/// One fused kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FusedKernel {
    /// Number of domain dimensions.
    pub rank: usize,
    /// Inputs, in parameter order.
    pub inputs: Vec<KernelInput>,
    /// Dtypes of the scalar arguments.
    pub args: Vec<DType>,
    /// The per-element body.
    pub body: Body,
    /// Output values: in `body` for element-wise kernels, in the reduction's
    /// `epilogue` for reduction kernels.
    pub outputs: Vec<ValueId>,
    /// Present for reduction kernels.
    pub reduction: Option<ReductionIr>,
    /// The stages of a row program, in order (empty for other kernels):
    /// reductions over the same trailing (or leading) axes, whose row
    /// values the body reads as `Inst::Stage`.
    pub stages: Vec<ReductionIr>,
    /// A row program whose outputs are written once per row, over the
    /// kept axes, not over the whole domain: values of its row values
    /// and arguments only (logsumexp's `m + log(s)`).
    pub per_row: bool,
}

/// True when `axes` (ascending) are the trailing or the leading axes of a
/// domain of `rank`, some but not all of them: what a row program reduces.
pub fn row_axes(axes: &[usize], rank: usize) -> bool {
    let n = axes.len();
    let leading = axes.iter().enumerate().all(|(i, &a)| a == i);
    let trailing = axes.iter().enumerate().all(|(i, &a)| a + n == rank + i);
    n > 0 && n < rank && (leading || trailing)
}

impl FusedKernel {
    /// The compile-cache key: equal for kernels that differ only in sizes,
    /// strides and constant values.
    pub fn structural_hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }

    /// A stable name derived from the structure: `lf_ew_1a2b3c4d`,
    /// `lf_red_...` or `lf_row_...`.
    pub fn name(&self) -> String {
        let kind = if self.reduction.is_some() {
            "red"
        } else if self.is_row_program() {
            "row"
        } else {
            "ew"
        };
        format!("lf_{kind}_{:016x}", self.structural_hash())
    }

    /// The dtype of output `i`.
    pub fn output_dtype(&self, i: usize) -> DType {
        let body = match &self.reduction {
            Some(r) => &r.epilogue,
            None => &self.body,
        };
        body.dtype(self.outputs[i])
    }

    /// Number of body and epilogue instructions.
    pub fn size(&self) -> usize {
        let epilogues = self.reduction.iter().chain(&self.stages);
        self.body.len() + epilogues.map(|r| r.epilogue.len()).sum::<usize>()
    }

    /// True for a row program (see the module documentation).
    pub fn is_row_program(&self) -> bool {
        !self.stages.is_empty()
    }

    /// The reduced axes: of the reduction, or of a row program's stages.
    pub fn reduced_axes(&self) -> Option<&[usize]> {
        self.reduction
            .as_ref()
            .or(self.stages.first())
            .map(|r| r.axes.as_slice())
    }

    /// True when a row program reduces its domain's leading axes (a column
    /// program: standardisation's `x.mean(0)` and `x.std(0)`, each row value
    /// broadcast down the kept trailing axes), false when it reduces the
    /// trailing ones (softmax's rows) or is no row program.
    pub fn reduces_leading_axes(&self) -> bool {
        self.is_row_program()
            && self
                .reduced_axes()
                .is_some_and(|axes| axes.first() == Some(&0) && !axes.contains(&(self.rank - 1)))
    }

    /// True when the outputs are dense over the whole domain (element-wise
    /// kernels and row programs), false when over the kept axes
    /// (reductions, and row programs that write per row).
    pub fn writes_domain(&self) -> bool {
        self.reduction.is_none() && !self.per_row
    }

    /// Checks the invariants of the module documentation.
    pub fn verify(&self) -> Result<()> {
        let what = "verify FusedKernel";
        self.body.verify(what, self.inputs.len(), self.args.len())?;
        let out_body = match &self.reduction {
            Some(r) => {
                r.epilogue.verify(what, 0, self.args.len())?;
                if r.value.index() >= self.body.len() || r.axes.iter().any(|&a| a >= self.rank) {
                    return Err(Error::internal(what, "reduction refers outside its kernel"));
                }
                if let CombineIr::Custom { body, .. } = &r.combine {
                    body.verify(what, 0, self.args.len())?;
                }
                &r.epilogue
            }
            None => &self.body,
        };
        if self.outputs.is_empty() || self.outputs.iter().any(|o| o.index() >= out_body.len()) {
            return Err(Error::internal(what, "missing or dangling outputs"));
        }
        self.verify_stages()
    }

    /// A row program's stages: one set of trailing or leading axes, builtin
    /// combines, values that read earlier stages only; no `Stage`
    /// elsewhere.
    fn verify_stages(&self) -> Result<()> {
        let what = "verify FusedKernel";
        let reads_stage = self.body.insts.iter().any(|i| matches!(i, Inst::Stage(_)));
        if self.stages.is_empty() {
            return match (reads_stage, self.per_row) {
                (true, _) => Err(Error::internal(what, "a stage read outside a row program")),
                (_, true) => Err(Error::internal(
                    what,
                    "per-row outputs outside a row program",
                )),
                _ => Ok(()),
            };
        }
        let axes = self.stages[0].axes.as_slice();
        if self.reduction.is_some() || !row_axes(axes, self.rank) {
            return Err(Error::internal(
                what,
                "a row program's stages must reduce its trailing or its leading axes",
            ));
        }
        if self.per_row && self.outputs.iter().any(|o| self.reads_input(*o)) {
            return Err(Error::internal(
                what,
                "a row program's per-row output reads an input",
            ));
        }
        // The stages each value depends on (1 + the latest stage it reads).
        let mut after = vec![0usize; self.body.len()];
        for (i, inst) in self.body.insts.iter().enumerate() {
            after[i] = match inst {
                Inst::Stage(k) if (*k as usize) < self.stages.len() => *k as usize + 1,
                Inst::Stage(_) => return Err(Error::internal(what, "a read of a missing stage")),
                _ => inst
                    .operands()
                    .iter()
                    .map(|v| after[v.index()])
                    .max()
                    .unwrap_or(0),
            };
        }
        for (k, stage) in self.stages.iter().enumerate() {
            let ok = stage.axes.as_slice() == axes
                && matches!(stage.combine, CombineIr::Builtin(_))
                && stage.value.index() < self.body.len()
                && after[stage.value.index()] <= k
                && !stage.epilogue.is_empty();
            if !ok {
                return Err(Error::internal(what, format!("stage {k} is malformed")));
            }
            stage.epilogue.verify(what, 0, self.args.len())?;
        }
        Ok(())
    }

    /// True when body value `value` depends on a load (or position) of an
    /// input, not only on stages and arguments.
    fn reads_input(&self, value: ValueId) -> bool {
        let mut reads = vec![false; self.body.len()];
        for (i, inst) in self.body.insts.iter().enumerate().take(value.index() + 1) {
            reads[i] = match inst {
                Inst::Load(_) | Inst::Iota(_) | Inst::Param(_) | Inst::Reduced => true,
                _ => inst.operands().iter().any(|v| reads[v.index()]),
            };
        }
        reads.get(value.index()).copied().unwrap_or(true)
    }
}

/// `in0: f32 Strided`, ...: each item numbered, three or more equal ones
/// in a row as one entry (`in16..=in135: f32 Scalar`: an unrolled
/// reduction's fixed-element reads).
fn numbered_runs(prefix: &str, items: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < items.len() {
        let end = (start..items.len())
            .find(|&i| items[i] != items[start])
            .unwrap_or(items.len());
        if end - start >= 3 {
            out.push(format!(
                "{prefix}{start}..={prefix}{}: {}",
                end - 1,
                items[start]
            ));
        } else {
            out.extend((start..end).map(|i| format!("{prefix}{i}: {}", items[i])));
        }
        start = end;
    }
    out
}

fn write_body(text: &mut String, body: &Body, indent: &str) {
    for (i, (inst, dtype)) in body.insts.iter().zip(&body.dtypes).enumerate() {
        let rhs = match inst {
            Inst::Load(k) => format!("load in{k}"),
            Inst::Iota(k) => format!("iota in{k}"),
            Inst::Arg(k) => format!("arg{k}"),
            Inst::Param(k) => format!("param{k}"),
            Inst::Reduced => "reduced".to_string(),
            Inst::Stage(k) => format!("stage {k}"),
            Inst::Unary(op, a) => format!("{op} {a}"),
            Inst::Binary(op, a, b) => format!("{op} {a}, {b}"),
            Inst::Select(c, a, b) => format!("where {c}, {a}, {b}"),
            Inst::Cast(a) => format!("cast {a}"),
            Inst::Bitcast(a) => format!("bitcast {a}"),
        };
        let _ = writeln!(text, "{indent}%{i}: {dtype} = {rhs}");
    }
}

impl fmt::Display for FusedKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|input| {
                let kind = match input.kind {
                    InputKind::Buffer => "",
                    InputKind::Iota => " iota",
                };
                format!("{} {:?}{kind}", input.dtype, input.layout)
            })
            .collect();
        let inputs = numbered_runs("in", &inputs);
        let args: Vec<String> = self.args.iter().map(|d| d.to_string()).collect();
        let args = numbered_runs("arg", &args);
        let _ = writeln!(
            text,
            "kernel {} (rank {}) [{}] [{}]",
            self.name(),
            self.rank,
            inputs.join(", "),
            args.join(", ")
        );
        write_body(&mut text, &self.body, "    ");
        if let Some(r) = &self.reduction {
            let combine = match &r.combine {
                CombineIr::Builtin(op) => op.name().to_string(),
                CombineIr::Custom { name, .. } => format!("reducer '{name}'"),
            };
            let _ = writeln!(
                text,
                "  reduce {} over axes {:?} with {combine} in {} (identity arg{})",
                r.value,
                r.axes.as_slice(),
                r.acc,
                r.identity_arg
            );
            if let CombineIr::Custom { body, .. } = &r.combine {
                write_body(&mut text, body, "    combine ");
            }
            write_body(&mut text, &r.epilogue, "    then ");
        }
        let per = match self.reduces_leading_axes() {
            true => "column",
            false => "row",
        };
        for (k, r) in self.stages.iter().enumerate() {
            let combine = match &r.combine {
                CombineIr::Builtin(op) => op.name().to_string(),
                CombineIr::Custom { name, .. } => format!("reducer '{name}'"),
            };
            let _ = writeln!(
                text,
                "  stage {k}: reduce {} over axes {:?} with {combine} in {} (identity arg{}) per {per}",
                r.value,
                r.axes.as_slice(),
                r.acc,
                r.identity_arg
            );
            write_body(&mut text, &r.epilogue, "    then ");
        }
        let outputs: Vec<String> = self.outputs.iter().map(|o| o.to_string()).collect();
        let _ = write!(text, "  outputs {}", outputs.join(", "));
        if self.per_row {
            let _ = write!(text, " once per {per}");
        }
        f.write_str(&text)
    }
}
