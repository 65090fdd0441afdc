//! The vectorised element-wise loop: when every dense buffer a kernel reads
//! or writes has 4- or 8-byte elements, each thread moves 16 bytes per load
//! and store (`float4`, `double2`, …), then a scalar loop finishes the tail.
//! Dense buffers start at offset 0 of their allocation, which the device
//! allocator aligns to 256 bytes, so every vector access is aligned.

use lazyfuse_core::{BinaryOp, DType, Result};
use lazyfuse_fusion::ir::{FusedKernel, InputKind, Inst, Layout};

use super::builder::KernelBuilder;
use super::ir::{ArgSource, Expr, IndexOp, ParamKind, Stmt, Var};

/// Elements per 16-byte access for `kernel`, or `None` when it cannot be
/// vectorised (strided inputs, a reduction, or mixed or small element sizes).
pub(super) fn vector_width(kernel: &FusedKernel) -> Option<usize> {
    if kernel.reduction.is_some() || kernel.inputs.iter().any(|i| i.layout == Layout::Strided) {
        return None;
    }
    // Only memory-bound bodies gain from wider accesses; unrolling costly
    // ones (divisions are subroutine calls) only adds register pressure.
    let costly = kernel.body.insts.iter().any(|inst| {
        inst.cost() > 1
            || matches!(
                inst,
                Inst::Binary(
                    BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Rem | BinaryOp::Pow,
                    ..
                )
            )
    });
    if costly {
        return None;
    }
    let dense_inputs = kernel
        .inputs
        .iter()
        .filter(|i| i.layout == Layout::Contiguous && i.kind == InputKind::Buffer)
        .map(|i| i.dtype);
    let outputs = kernel.outputs.iter().map(|o| kernel.body.dtype(*o));
    let mut sizes = dense_inputs.chain(outputs).map(DType::size);
    let size = sizes.next()?;
    (matches!(size, 4 | 8) && sizes.all(|s| s == size)).then_some(16 / size)
}

/// Emits the vector loop over `n / width` groups; returns the first element
/// the scalar tail loop must handle.
pub(super) fn vector_loop(
    b: &mut KernelBuilder<'_>,
    width: usize,
    (start, step): (Expr, Expr),
) -> Result<Expr> {
    let fused = b.fused;
    let index = b.index;
    let n = b.size(ArgSource::DomainLen);
    let groups = b.let_(
        index,
        Expr::index(IndexOp::Div, n, b.constant(width as i64)),
    );
    b.for_loop(start, Expr::var(groups), step, |b, group| {
        let mut lanes: Vec<Option<Vec<Var>>> = vec![None; fused.inputs.len()];
        for (k, input) in fused.inputs.iter().enumerate() {
            if input.layout == Layout::Contiguous && input.kind == InputKind::Buffer {
                let param = b.param(ArgSource::InputBuffer(k), ParamKind::Input(input.dtype));
                let dst: Vec<Var> = (0..width).map(|_| b.var(input.dtype)).collect();
                b.push(Stmt::LoadVector {
                    param,
                    index: Expr::var(group),
                    dst: dst.clone(),
                });
                lanes[k] = Some(dst);
            }
        }
        let mut stores: Vec<Vec<Expr>> = vec![Vec::new(); fused.outputs.len()];
        for lane in 0..width {
            let element = Expr::index(
                IndexOp::Add,
                Expr::index(IndexOp::Mul, Expr::var(group), b.constant(width as i64)),
                b.constant(lane as i64),
            );
            let values = b.lower_body(&fused.body, &mut |b, inst| match inst {
                Inst::Load(k) => {
                    let k = *k as usize;
                    match &lanes[k] {
                        Some(dst) => Ok(Expr::var(dst[lane])),
                        None => {
                            let input = fused.inputs[k];
                            let param =
                                b.param(ArgSource::InputBuffer(k), ParamKind::Input(input.dtype));
                            Ok(Expr::Load {
                                param,
                                index: Box::new(b.size(ArgSource::Offset(k))),
                            })
                        }
                    }
                }
                Inst::Iota(_) => Ok(Expr::cast(DType::I64, element.clone())),
                _ => Err(lazyfuse_core::Error::internal(
                    "device lowering",
                    "a parameter or reduced value in a kernel body",
                )),
            })?;
            for (j, out) in fused.outputs.iter().enumerate() {
                stores[j].push(Expr::var(values[out.index()]));
            }
        }
        for (j, values) in stores.into_iter().enumerate() {
            let dtype = fused.body.dtype(fused.outputs[j]);
            let param = b.param(ArgSource::OutputBuffer(j), ParamKind::Output(dtype));
            b.push(Stmt::StoreVector {
                param,
                index: Expr::var(group),
                values,
            });
        }
        Ok(())
    })?;
    Ok(Expr::index(
        IndexOp::Mul,
        Expr::var(groups),
        b.constant(width as i64),
    ))
}
