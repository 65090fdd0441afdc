//! Lowering of a `FusedKernel` to a [`DeviceProgram`].
//!
//! - Element-wise: a grid-stride loop over the domain. Contiguous inputs and
//!   outputs are indexed by the loop counter; strided (broadcast, sliced,
//!   transposed) inputs get per-input index arithmetic from the coordinates,
//!   computed once per element for all of them. When all dense buffers have
//!   4- or 8-byte elements, a first loop moves 16 bytes per access
//!   (`vector.rs`) and the scalar loop handles the tail.
//! - Full reduction: each thread accumulates a grid-stride slice in the
//!   accumulator dtype; warp shuffles then shared memory reduce the block;
//!   block partials go to a scratch buffer that a second, single-block kernel
//!   reduces in a fixed order (the same result on every run) before the
//!   epilogue.
//! - Axis reduction with the last domain axis reduced: one block per output,
//!   its threads striding over the reduced elements, then a block reduction.
//! - Row program (`FusedKernel::stages`): one block per row; per stage its
//!   threads stride over the row accumulating, the block reduces, thread 0
//!   computes the stage's epilogue into shared memory, and after a barrier
//!   every thread holds the row's value in a register; then they stride
//!   over the row again writing the outputs (the row is read once per
//!   stage and once more, from L1/L2 after the first time). A column
//!   program (leading axes reduced) is the same with a block per column,
//!   its threads striding down the column. Outputs of the row values alone
//!   (`per_row`: logsumexp's `m + log(s)`) are written by thread 0, one
//!   per row.
//! - Axis reduction with the last axis kept: one thread per output, looping
//!   over the reduced elements while neighbouring threads read neighbouring
//!   addresses.

use lazyfuse_core::{DType, Error, Result};
use lazyfuse_fusion::ir::{Body, FusedKernel, Inst, Layout, ReductionIr, ValueId};

use super::builder::KernelBuilder;
use super::ir::{
    ArgSource, DeviceKernel, DeviceProgram, Dim, Expr, GridRule, IndexOp, ParamKind, Special, Stmt,
    Var, WARP,
};
use super::vector;

/// Threads per block of every generated kernel.
pub const BLOCK: u32 = 256;

fn internal(message: impl Into<String>) -> Error {
    Error::internal("device lowering", message)
}

/// Lowers `kernel` with indices of dtype `index` (`I32` or `I64`); the
/// program is checked by the verifier before it is returned.
pub fn lower(kernel: &FusedKernel, index: DType) -> Result<DeviceProgram> {
    let program = lower_unverified(kernel, index)?;
    super::verify::verify(&program)?;
    Ok(program)
}

fn lower_unverified(kernel: &FusedKernel, index: DType) -> Result<DeviceProgram> {
    kernel.verify()?;
    if !matches!(index, DType::I32 | DType::I64) {
        return Err(internal(format!("index type {index}")));
    }
    let suffix = if index == DType::I32 { "" } else { "_i64" };
    let name = format!("{}{suffix}", kernel.name());
    match &kernel.reduction {
        None if kernel.is_row_program() => Ok(DeviceProgram {
            kernels: vec![row_program(kernel, index, name.clone())?],
            name,
            index,
            partials: None,
        }),
        None => Ok(DeviceProgram {
            kernels: vec![elementwise(kernel, index, name.clone())?],
            name,
            index,
            partials: None,
        }),
        Some(r) if r.axes.len() == kernel.rank => {
            let partial = full_partial(kernel, r, index, format!("{name}_partial"))?;
            let last = full_final(kernel, r, index, format!("{name}_final"))?;
            Ok(DeviceProgram {
                kernels: vec![partial, last],
                name,
                index,
                partials: Some(r.acc),
            })
        }
        Some(r) => {
            let kernel = if r.axes.contains(&(kernel.rank - 1)) {
                axis_block_per_output(kernel, r, index, name.clone())?
            } else {
                axis_thread_per_output(kernel, r, index, name.clone())?
            };
            Ok(DeviceProgram {
                kernels: vec![kernel],
                name,
                index,
                partials: None,
            })
        }
    }
}

/// Index expressions of every input, given the element's coordinates
/// (`None` when no input needs them) and its dense position. They are
/// computed where each load is, not all up front: a body of a hundred
/// inputs (an unrolled reduction) keeps no hundred indices live at once.
fn input_indices(
    b: &mut KernelBuilder<'_>,
    coords: Option<&[(usize, Var)]>,
    dense: Option<&Expr>,
    bases: Option<&[Option<Var>]>,
) -> Result<Vec<Expr>> {
    let mut indices = Vec::with_capacity(b.fused.inputs.len());
    for (k, input) in b.fused.inputs.iter().enumerate() {
        let expr = match (input.layout, dense) {
            (Layout::Scalar, _) => b.size(ArgSource::Offset(k)),
            (Layout::Contiguous, Some(dense)) => dense.clone(),
            _ => {
                let coords = coords.ok_or_else(|| internal("strided input without coordinates"))?;
                let base = match bases.and_then(|bases| bases.get(k).copied().flatten()) {
                    Some(base) => Expr::var(base),
                    None => b.size(ArgSource::Offset(k)),
                };
                b.strided(base, k, coords)
            }
        };
        indices.push(expr);
    }
    Ok(indices)
}

/// The kernel body over one element whose input indices are `indices`.
fn body_values(b: &mut KernelBuilder<'_>, indices: &[Expr]) -> Result<Vec<Var>> {
    let fused = b.fused;
    b.lower_body(&fused.body, &mut |b, inst| match inst {
        Inst::Load(k) => {
            let k = *k as usize;
            let input = fused.inputs[k];
            let param = b.param(ArgSource::InputBuffer(k), ParamKind::Input(input.dtype));
            Ok(Expr::Load {
                param,
                index: Box::new(indices[k].clone()),
            })
        }
        Inst::Iota(k) => Ok(Expr::cast(DType::I64, indices[*k as usize].clone())),
        _ => Err(internal("a parameter or reduced value in a kernel body")),
    })
}

fn needs_coords(kernel: &FusedKernel) -> bool {
    kernel.inputs.iter().any(|i| i.layout == Layout::Strided)
}

fn grid_stride_start(b: &mut KernelBuilder<'_>) -> (Expr, Expr) {
    let (bid, dim, tid, grid) = (
        b.special(Special::BlockIdx(Dim::X)),
        b.special(Special::BlockDim(Dim::X)),
        b.special(Special::ThreadIdx(Dim::X)),
        b.special(Special::GridDim(Dim::X)),
    );
    let start = Expr::index(
        IndexOp::Add,
        Expr::index(IndexOp::Mul, bid, dim.clone()),
        tid,
    );
    (start, Expr::index(IndexOp::Mul, dim, grid))
}

fn elementwise(kernel: &FusedKernel, index: DType, name: String) -> Result<DeviceKernel> {
    let mut b = KernelBuilder::new(kernel, index);
    let (start, step) = grid_stride_start(&mut b);
    // The scalar loop covers what the vector loop (if any) leaves over.
    let start = match vector::vector_width(kernel) {
        Some(width) => {
            let done = vector::vector_loop(&mut b, width, (start.clone(), step.clone()))?;
            Expr::index(IndexOp::Add, done, start)
        }
        None => start,
    };
    let n = b.size(ArgSource::DomainLen);
    let all: Vec<usize> = (0..kernel.rank).collect();
    b.for_loop(start, n, step, |b, e| {
        let coords = needs_coords(kernel).then(|| b.coords(Expr::var(e), &all));
        let indices = input_indices(b, coords.as_deref(), Some(&Expr::var(e)), None)?;
        let values = body_values(b, &indices)?;
        store_outputs(b, (&kernel.body, &kernel.outputs), &values, Expr::var(e));
        Ok(())
    })?;
    let grid = GridRule::ThreadPerItem(ArgSource::DomainLen);
    Ok(b.finish(name, BLOCK, grid))
}

/// Reduces `acc` across the block; the result is valid in thread 0.
fn block_reduce(b: &mut KernelBuilder<'_>, r: &ReductionIr, acc: Var) -> Result<()> {
    warp_reduce(b, r, acc)?;
    let warps = BLOCK / WARP;
    let shared = b.shared("warp_partials", r.acc, warps);
    let tid = b.special(Special::ThreadIdx(Dim::X));
    let lane = Expr::index(IndexOp::Rem, tid.clone(), b.constant(WARP as i64));
    let warp = Expr::index(IndexOp::Div, tid.clone(), b.constant(WARP as i64));
    let zero = b.constant(0);
    b.if_then(Expr::index(IndexOp::Eq, lane, zero), |b| {
        b.push(Stmt::StoreShared {
            array: shared,
            index: warp,
            value: Expr::var(acc),
        });
        Ok(())
    })?;
    b.push(Stmt::Barrier);
    let first_warp = Expr::index(IndexOp::Lt, tid.clone(), b.constant(WARP as i64));
    b.if_then(first_warp, |b| {
        let identity = b.arg(r.identity_arg as usize)?;
        let has_partial = Expr::index(IndexOp::Lt, tid.clone(), b.constant(warps as i64));
        b.push(Stmt::If {
            cond: has_partial,
            then: vec![Stmt::Assign(
                acc,
                Expr::LoadShared {
                    array: shared,
                    index: Box::new(tid),
                },
            )],
            otherwise: vec![Stmt::Assign(acc, identity)],
        });
        warp_reduce(b, r, acc)
    })
}

/// Tree reduction of `acc` within each warp by shuffles; lane 0 holds the result.
fn warp_reduce(b: &mut KernelBuilder<'_>, r: &ReductionIr, acc: Var) -> Result<()> {
    let mut delta = WARP / 2;
    while delta > 0 {
        let other = b.let_(r.acc, Expr::var(acc));
        b.push(Stmt::ShuffleDown {
            dst: other,
            src: acc,
            delta,
        });
        let combined = b.combine(r, acc, other)?;
        b.push(Stmt::Assign(acc, Expr::var(combined)));
        delta /= 2;
    }
    Ok(())
}

/// Writes the epilogue of the reduced value `acc` to every output at `at`.
fn store_epilogue(b: &mut KernelBuilder<'_>, r: &ReductionIr, acc: Var, at: Expr) -> Result<()> {
    let values = b.lower_body(&r.epilogue, &mut |_, inst| match inst {
        Inst::Reduced => Ok(Expr::var(acc)),
        _ => Err(internal("an epilogue reads an input")),
    })?;
    let outputs = b.fused.outputs.clone();
    store_outputs(b, (&r.epilogue, &outputs), &values, at);
    Ok(())
}

/// Stores each of `outputs` (values of `body`, lowered to `values`) at
/// `at` of its output buffer.
fn store_outputs(
    b: &mut KernelBuilder<'_>,
    (body, outputs): (&Body, &[ValueId]),
    values: &[Var],
    at: Expr,
) {
    for (j, out) in outputs.iter().enumerate() {
        let dtype = body.dtype(*out);
        let param = b.param(ArgSource::OutputBuffer(j), ParamKind::Output(dtype));
        b.push(Stmt::Store {
            param,
            index: at.clone(),
            value: Expr::var(values[out.index()]),
        });
    }
}

/// `acc = combine(acc, value of the element with input indices `indices`)`.
fn accumulate(
    b: &mut KernelBuilder<'_>,
    r: &ReductionIr,
    acc: Var,
    indices: &[Expr],
) -> Result<()> {
    let values = body_values(b, indices)?;
    let combined = b.combine(r, acc, values[r.value.index()])?;
    b.push(Stmt::Assign(acc, Expr::var(combined)));
    Ok(())
}

fn identity_register(b: &mut KernelBuilder<'_>, r: &ReductionIr) -> Result<Var> {
    let identity = b.arg(r.identity_arg as usize)?;
    Ok(b.let_(r.acc, identity))
}

fn full_partial(
    kernel: &FusedKernel,
    r: &ReductionIr,
    index: DType,
    name: String,
) -> Result<DeviceKernel> {
    let mut b = KernelBuilder::new(kernel, index);
    let acc = identity_register(&mut b, r)?;
    let n = b.size(ArgSource::DomainLen);
    let (start, step) = grid_stride_start(&mut b);
    let all: Vec<usize> = (0..kernel.rank).collect();
    b.for_loop(start, n, step, |b, e| {
        let coords = needs_coords(kernel).then(|| b.coords(Expr::var(e), &all));
        let indices = input_indices(b, coords.as_deref(), Some(&Expr::var(e)), None)?;
        accumulate(b, r, acc, &indices)
    })?;
    block_reduce(&mut b, r, acc)?;
    let partials = b.param(ArgSource::Partials, ParamKind::Output(r.acc));
    let tid = b.special(Special::ThreadIdx(Dim::X));
    let zero = b.constant(0);
    let bid = b.special(Special::BlockIdx(Dim::X));
    b.if_then(Expr::index(IndexOp::Eq, tid, zero), |b| {
        b.push(Stmt::Store {
            param: partials,
            index: bid,
            value: Expr::var(acc),
        });
        Ok(())
    })?;
    let grid = GridRule::ThreadPerItem(ArgSource::DomainLen);
    Ok(b.finish(name, BLOCK, grid))
}

fn full_final(
    kernel: &FusedKernel,
    r: &ReductionIr,
    index: DType,
    name: String,
) -> Result<DeviceKernel> {
    let mut b = KernelBuilder::new(kernel, index);
    let acc = identity_register(&mut b, r)?;
    let partials = b.param(ArgSource::Partials, ParamKind::Input(r.acc));
    let count = b.size(ArgSource::PartialCount);
    let tid = b.special(Special::ThreadIdx(Dim::X));
    let dim = b.special(Special::BlockDim(Dim::X));
    b.for_loop(tid.clone(), count, dim, |b, e| {
        let partial = b.let_(
            r.acc,
            Expr::Load {
                param: partials,
                index: Box::new(Expr::var(e)),
            },
        );
        let combined = b.combine(r, acc, partial)?;
        b.push(Stmt::Assign(acc, Expr::var(combined)));
        Ok(())
    })?;
    block_reduce(&mut b, r, acc)?;
    let zero = b.constant(0);
    b.if_then(Expr::index(IndexOp::Eq, tid, zero.clone()), |b| {
        store_epilogue(b, r, acc, zero)
    })?;
    Ok(b.finish(name, BLOCK, GridRule::Single))
}

fn kept_axes(kernel: &FusedKernel, r: &ReductionIr) -> Vec<usize> {
    (0..kernel.rank).filter(|a| !r.axes.contains(a)).collect()
}

/// Per-input offsets of output `k` (its kept coordinates), for strided inputs.
fn kept_bases(b: &mut KernelBuilder<'_>, kept: &[usize], k: Var) -> Vec<Option<Var>> {
    let coords = b.coords(Expr::var(k), kept);
    let index = b.index;
    let inputs = b.fused.inputs.clone();
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            (input.layout != Layout::Scalar).then(|| {
                let offset = b.size(ArgSource::Offset(i));
                let base = b.strided(offset, i, &coords);
                b.let_(index, base)
            })
        })
        .collect()
}

/// Input indices of reduced element `r` of the output whose bases are `bases`.
fn reduced_indices(
    b: &mut KernelBuilder<'_>,
    reduced: &[usize],
    bases: &[Option<Var>],
    r: Var,
) -> Result<Vec<Expr>> {
    let coords = b.coords(Expr::var(r), reduced);
    input_indices(b, Some(&coords), None, Some(bases))
}

fn axis_block_per_output(
    kernel: &FusedKernel,
    r: &ReductionIr,
    index: DType,
    name: String,
) -> Result<DeviceKernel> {
    let mut b = KernelBuilder::new(kernel, index);
    let kept = kept_axes(kernel, r);
    let outputs = b.size(ArgSource::KeptLen);
    let per_output = b.size(ArgSource::ReducedLen);
    let bid = b.special(Special::BlockIdx(Dim::X));
    let grid = b.special(Special::GridDim(Dim::X));
    let tid = b.special(Special::ThreadIdx(Dim::X));
    let dim = b.special(Special::BlockDim(Dim::X));
    b.for_loop(bid, outputs, grid, |b, k| {
        let bases = kept_bases(b, &kept, k);
        let acc = identity_register(b, r)?;
        b.for_loop(tid.clone(), per_output, dim, |b, e| {
            let indices = reduced_indices(b, &r.axes, &bases, e)?;
            accumulate(b, r, acc, &indices)
        })?;
        block_reduce(b, r, acc)?;
        let zero = b.constant(0);
        b.if_then(Expr::index(IndexOp::Eq, tid.clone(), zero), |b| {
            store_epilogue(b, r, acc, Expr::var(k))
        })?;
        // The next output reuses the shared partials.
        b.push(Stmt::Barrier);
        Ok(())
    })?;
    let grid = GridRule::BlockPerItem(ArgSource::KeptLen);
    Ok(b.finish(name, BLOCK, grid))
}

fn axis_thread_per_output(
    kernel: &FusedKernel,
    r: &ReductionIr,
    index: DType,
    name: String,
) -> Result<DeviceKernel> {
    let mut b = KernelBuilder::new(kernel, index);
    let kept = kept_axes(kernel, r);
    let outputs = b.size(ArgSource::KeptLen);
    let per_output = b.size(ArgSource::ReducedLen);
    let (start, step) = grid_stride_start(&mut b);
    b.for_loop(start, outputs, step, |b, k| {
        let bases = kept_bases(b, &kept, k);
        let acc = identity_register(b, r)?;
        let (zero, one) = (b.constant(0), b.constant(1));
        b.for_loop(zero, per_output, one, |b, e| {
            let indices = reduced_indices(b, &r.axes, &bases, e)?;
            accumulate(b, r, acc, &indices)
        })?;
        store_epilogue(b, r, acc, Expr::var(k))
    })?;
    let grid = GridRule::ThreadPerItem(ArgSource::KeptLen);
    Ok(b.finish(name, BLOCK, grid))
}

/// The registers of `body` (a stage's or the outputs' part of a row
/// program, as `rows::split` makes them) over the element whose input
/// indices are `indices`: loads of the kernel's inputs, and of the split's
/// extra inputs as the row values `stages`.
fn split_body_values(
    b: &mut KernelBuilder<'_>,
    body: &Body,
    indices: &[Expr],
    stages: &[Var],
) -> Result<Vec<Var>> {
    let fused = b.fused;
    let inputs = fused.inputs.len();
    b.lower_body(body, &mut |b, inst| match inst {
        Inst::Load(k) if (*k as usize) < inputs => {
            let k = *k as usize;
            let param = b.param(
                ArgSource::InputBuffer(k),
                ParamKind::Input(fused.inputs[k].dtype),
            );
            Ok(Expr::Load {
                param,
                index: Box::new(indices[k].clone()),
            })
        }
        Inst::Load(k) => stages
            .get(*k as usize - inputs)
            .map(|&v| Expr::var(v))
            .ok_or_else(|| internal("a read of a later stage")),
        Inst::Iota(k) => Ok(Expr::cast(DType::I64, indices[*k as usize].clone())),
        _ => Err(internal("a parameter or reduced value in a kernel body")),
    })
}

fn row_program(kernel: &FusedKernel, index: DType, name: String) -> Result<DeviceKernel> {
    let parts =
        lazyfuse_fusion::rows::split(kernel).ok_or_else(|| internal("not a row program"))?;
    let (outputs_part, stage_parts) = parts.split_last().ok_or_else(|| internal("no stages"))?;
    let axes = kernel
        .reduced_axes()
        .ok_or_else(|| internal("no stages"))?
        .to_vec();
    let leading = kernel.reduces_leading_axes();
    let mut b = KernelBuilder::new(kernel, index);
    let kept: Vec<usize> = (0..kernel.rank).filter(|a| !axes.contains(a)).collect();
    let rows = b.size(ArgSource::KeptLen);
    let per_row = b.size(ArgSource::ReducedLen);
    let bid = b.special(Special::BlockIdx(Dim::X));
    let grid = b.special(Special::GridDim(Dim::X));
    let tid = b.special(Special::ThreadIdx(Dim::X));
    let dim = b.special(Special::BlockDim(Dim::X));
    let row_values: Vec<(u32, DType)> = kernel
        .stages
        .iter()
        .map(|stage| {
            let dtype = stage.epilogue.dtypes[stage.epilogue.len() - 1];
            (b.shared("row_value", dtype, 1), dtype)
        })
        .collect();
    b.for_loop(bid, rows.clone(), grid, |b, row| {
        let bases = kept_bases(b, &kept, row);
        let mut stages: Vec<Var> = Vec::with_capacity(stage_parts.len());
        for (part, &(shared, dtype)) in stage_parts.iter().zip(&row_values) {
            let r = part
                .reduction
                .as_ref()
                .ok_or_else(|| internal("a stage without a reduction"))?;
            let acc = identity_register(b, r)?;
            b.for_loop(tid.clone(), per_row.clone(), dim.clone(), |b, e| {
                let indices = reduced_indices(b, &axes, &bases, e)?;
                let values = split_body_values(b, &part.body, &indices, &stages)?;
                let combined = b.combine(r, acc, values[r.value.index()])?;
                b.push(Stmt::Assign(acc, Expr::var(combined)));
                Ok(())
            })?;
            block_reduce(b, r, acc)?;
            let zero = b.constant(0);
            b.if_then(Expr::index(IndexOp::Eq, tid.clone(), zero.clone()), |b| {
                let values = b.lower_body(&r.epilogue, &mut |_, inst| match inst {
                    Inst::Reduced => Ok(Expr::var(acc)),
                    _ => Err(internal("an epilogue reads an input")),
                })?;
                let last = *values.last().ok_or_else(|| internal("an empty epilogue"))?;
                b.push(Stmt::StoreShared {
                    array: shared,
                    index: zero.clone(),
                    value: Expr::var(last),
                });
                Ok(())
            })?;
            b.push(Stmt::Barrier);
            let value = Expr::LoadShared {
                array: shared,
                index: Box::new(zero),
            };
            stages.push(b.let_(dtype, value));
        }
        if kernel.per_row {
            // Outputs of the row values alone: thread 0 writes the row's.
            let zero = b.constant(0);
            b.if_then(Expr::index(IndexOp::Eq, tid.clone(), zero.clone()), |b| {
                let indices = vec![zero.clone(); kernel.inputs.len()];
                let values = split_body_values(b, &outputs_part.body, &indices, &stages)?;
                let part = (&outputs_part.body, &outputs_part.outputs[..]);
                store_outputs(b, part, &values, Expr::var(row));
                Ok(())
            })?;
        } else {
            b.for_loop(tid.clone(), per_row.clone(), dim.clone(), |b, e| {
                let indices = reduced_indices(b, &axes, &bases, e)?;
                let values = split_body_values(b, &outputs_part.body, &indices, &stages)?;
                // The element's place in the domain: rows are its leading
                // indices, or (a column program) its trailing ones.
                let at = match leading {
                    false => Expr::index(
                        IndexOp::Add,
                        Expr::index(IndexOp::Mul, Expr::var(row), per_row.clone()),
                        Expr::var(e),
                    ),
                    true => Expr::index(
                        IndexOp::Add,
                        Expr::index(IndexOp::Mul, Expr::var(e), rows.clone()),
                        Expr::var(row),
                    ),
                };
                let part = (&outputs_part.body, &outputs_part.outputs[..]);
                store_outputs(b, part, &values, at);
                Ok(())
            })?;
        }
        // The next row reuses the shared partials and row values.
        b.push(Stmt::Barrier);
        Ok(())
    })?;
    let grid = GridRule::BlockPerItem(ArgSource::KeptLen);
    Ok(b.finish(name, BLOCK, grid))
}
