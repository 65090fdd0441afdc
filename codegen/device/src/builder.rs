//! The kernel builder the lowering writes statements through: registers,
//! parameters (deduplicated by where their value comes from), nested
//! statement blocks, and the lowering of `FusedKernel` bodies to registers.

use lazyfuse_core::{DType, Error, Result};
use lazyfuse_fusion::ir::{Body, CombineIr, FusedKernel, Inst, ReductionIr, ValueId};

use super::ir::{
    ArgSource, DeviceKernel, Expr, GridRule, IndexOp, Param, ParamKind, SharedArray, Special, Stmt,
    Var,
};

/// Builds one [`DeviceKernel`].
pub(crate) struct KernelBuilder<'k> {
    pub(crate) fused: &'k FusedKernel,
    /// The index dtype (`I32` or `I64`).
    pub(crate) index: DType,
    params: Vec<Param>,
    shared: Vec<SharedArray>,
    vars: Vec<DType>,
    /// Open statement blocks; the last is being written.
    blocks: Vec<Vec<Stmt>>,
}

fn internal(message: impl Into<String>) -> Error {
    Error::internal("device lowering", message)
}

impl<'k> KernelBuilder<'k> {
    pub(crate) fn new(fused: &'k FusedKernel, index: DType) -> KernelBuilder<'k> {
        KernelBuilder {
            fused,
            index,
            params: Vec::new(),
            shared: Vec::new(),
            vars: Vec::new(),
            blocks: vec![Vec::new()],
        }
    }

    /// The parameter fed from `source`, added on first use.
    pub(crate) fn param(&mut self, source: ArgSource, kind: ParamKind) -> u32 {
        if let Some(i) = self.params.iter().position(|p| p.source == source) {
            return i as u32;
        }
        let name = match source {
            ArgSource::InputBuffer(k) => format!("in{k}"),
            ArgSource::OutputBuffer(k) => format!("out{k}"),
            ArgSource::Partials => "partials".to_string(),
            ArgSource::Arg(i) => format!("arg{i}"),
            ArgSource::Offset(k) => format!("off{k}"),
            ArgSource::Stride(k, d) => format!("st{k}_{d}"),
            ArgSource::Extent(d) => format!("ext{d}"),
            ArgSource::DomainLen => "n".to_string(),
            ArgSource::KeptLen => "kept".to_string(),
            ArgSource::ReducedLen => "reduced".to_string(),
            ArgSource::PartialCount => "count".to_string(),
            ArgSource::UserArray(k) => format!("array{k}"),
            ArgSource::UserExtent(k, d) => format!("array{k}_extent{d}"),
            ArgSource::UserScalar(i) => format!("scalar{i}"),
        };
        self.params.push(Param { name, kind, source });
        (self.params.len() - 1) as u32
    }

    /// A scalar of the index type (sizes, offsets, strides).
    pub(crate) fn size(&mut self, source: ArgSource) -> Expr {
        let index = self.index;
        Expr::Param(self.param(source, ParamKind::Scalar(index)))
    }

    /// Scalar argument `i` of the fused kernel (a constant).
    pub(crate) fn arg(&mut self, i: usize) -> Result<Expr> {
        let dtype = *self
            .fused
            .args
            .get(i)
            .ok_or_else(|| internal(format!("argument {i} is missing")))?;
        Ok(Expr::Param(
            self.param(ArgSource::Arg(i), ParamKind::Scalar(dtype)),
        ))
    }

    /// A launch builtin converted to the index type.
    pub(crate) fn special(&self, special: Special) -> Expr {
        Expr::cast(self.index, Expr::Special(special))
    }

    /// A constant of the index type.
    pub(crate) fn constant(&self, value: i64) -> Expr {
        match self.index {
            DType::I32 => Expr::Const(lazyfuse_core::Literal::of(value as i32)),
            _ => Expr::Const(lazyfuse_core::Literal::of(value)),
        }
    }

    /// A shared array of `len` elements (named `name`, or `name_3` when
    /// the kernel has one of that name already: names are C identifiers).
    pub(crate) fn shared(&mut self, name: &str, dtype: DType, len: u32) -> u32 {
        let taken = self.shared.iter().any(|s| s.name == name);
        let name = match taken {
            true => format!("{name}_{}", self.shared.len()),
            false => name.to_string(),
        };
        self.shared.push(SharedArray {
            name,
            dtype,
            len,
            local: false,
        });
        (self.shared.len() - 1) as u32
    }

    /// A fresh register.
    pub(crate) fn var(&mut self, dtype: DType) -> Var {
        self.vars.push(dtype);
        Var((self.vars.len() - 1) as u32)
    }

    /// Declares a register holding `value`.
    pub(crate) fn let_(&mut self, dtype: DType, value: Expr) -> Var {
        let var = self.var(dtype);
        self.push(Stmt::Let(var, value));
        var
    }

    /// Appends a statement to the open block.
    pub(crate) fn push(&mut self, stmt: Stmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    /// Opens a nested block (a loop or branch body).
    pub(crate) fn open(&mut self) {
        self.blocks.push(Vec::new());
    }

    /// Closes the innermost block and returns its statements.
    pub(crate) fn close(&mut self) -> Vec<Stmt> {
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        }
    }

    /// `for (var = start; var < end; var += step) { inner }`.
    pub(crate) fn for_loop(
        &mut self,
        start: Expr,
        end: Expr,
        step: Expr,
        inner: impl FnOnce(&mut Self, Var) -> Result<()>,
    ) -> Result<()> {
        let var = self.var(self.index);
        self.open();
        inner(self, var)?;
        let body = self.close();
        self.push(Stmt::For {
            var,
            start,
            end,
            step,
            body,
        });
        Ok(())
    }

    /// `if (cond) { then }`.
    pub(crate) fn if_then(
        &mut self,
        cond: Expr,
        then: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.open();
        then(self)?;
        let then = self.close();
        self.push(Stmt::If {
            cond,
            then,
            otherwise: Vec::new(),
        });
        Ok(())
    }

    /// Decomposes `linear` into coordinates over `extents` (domain dimensions,
    /// row-major); returns one register per dimension.
    pub(crate) fn coords(&mut self, linear: Expr, dims: &[usize]) -> Vec<(usize, Var)> {
        let mut coords = Vec::with_capacity(dims.len());
        let mut rest = linear;
        for (i, &d) in dims.iter().enumerate().rev() {
            if i == 0 {
                coords.push((d, self.let_(self.index, rest)));
                break;
            }
            let extent = self.size(ArgSource::Extent(d));
            let coord = Expr::index(IndexOp::Rem, rest.clone(), extent.clone());
            coords.push((d, self.let_(self.index, coord)));
            let quotient = Expr::index(IndexOp::Div, rest, extent);
            rest = Expr::var(self.let_(self.index, quotient));
        }
        coords.reverse();
        coords
    }

    /// `base + Σ coord[d] * stride(input, d)`.
    pub(crate) fn strided(&mut self, base: Expr, input: usize, coords: &[(usize, Var)]) -> Expr {
        coords.iter().fold(base, |sum, &(d, c)| {
            let stride = self.size(ArgSource::Stride(input, d));
            Expr::index(
                IndexOp::Add,
                sum,
                Expr::index(IndexOp::Mul, Expr::var(c), stride),
            )
        })
    }

    /// Emits `body` as registers; leaves other than arguments come from `leaf`.
    pub(crate) fn lower_body(
        &mut self,
        body: &Body,
        leaf: &mut dyn FnMut(&mut Self, &Inst) -> Result<Expr>,
    ) -> Result<Vec<Var>> {
        let mut values: Vec<Var> = Vec::with_capacity(body.len());
        let at = |values: &[Var], v: ValueId| -> Result<Expr> {
            values
                .get(v.index())
                .map(|&r| Expr::var(r))
                .ok_or_else(|| internal(format!("{v} is read before it is defined")))
        };
        for (inst, &dtype) in body.insts.iter().zip(&body.dtypes) {
            let expr = match inst {
                Inst::Arg(i) => self.arg(*i as usize)?,
                Inst::Unary(op, a) => Expr::Unary(*op, Box::new(at(&values, *a)?)),
                Inst::Binary(op, a, b) => {
                    Expr::Binary(*op, Box::new(at(&values, *a)?), Box::new(at(&values, *b)?))
                }
                Inst::Select(c, a, b) => Expr::Select(
                    Box::new(at(&values, *c)?),
                    Box::new(at(&values, *a)?),
                    Box::new(at(&values, *b)?),
                ),
                Inst::Cast(a) => Expr::cast(dtype, at(&values, *a)?),
                Inst::Bitcast(a) => Expr::Bitcast(dtype, Box::new(at(&values, *a)?)),
                Inst::Load(_) | Inst::Iota(_) | Inst::Param(_) | Inst::Reduced | Inst::Stage(_) => {
                    leaf(self, inst)?
                }
            };
            values.push(self.let_(dtype, expr));
        }
        Ok(values)
    }

    /// `combine(acc, x)` of `reduction` (the kernel's, or a stage of its
    /// row program), as a register.
    pub(crate) fn combine(&mut self, reduction: &ReductionIr, acc: Var, x: Var) -> Result<Var> {
        match &reduction.combine {
            CombineIr::Builtin(op) => {
                let value = Expr::Binary(
                    op.combiner(),
                    Box::new(Expr::var(acc)),
                    Box::new(Expr::var(x)),
                );
                Ok(self.let_(reduction.acc, value))
            }
            CombineIr::Custom { body, .. } => {
                let values = self.lower_body(body, &mut |_, inst| match inst {
                    Inst::Param(0) => Ok(Expr::var(acc)),
                    Inst::Param(1) => Ok(Expr::var(x)),
                    _ => Err(internal(
                        "a combine body reads more than its two parameters",
                    )),
                })?;
                values
                    .last()
                    .copied()
                    .ok_or_else(|| internal("an empty combine body"))
            }
        }
    }

    /// Finishes the kernel.
    pub(crate) fn finish(self, name: String, block: u32, grid: GridRule) -> DeviceKernel {
        DeviceKernel {
            name,
            params: self.params,
            shared: self.shared,
            vars: self.vars,
            body: self.blocks.into_iter().next().unwrap_or_default(),
            block,
            grid,
            independent: Vec::new(),
        }
    }
}
