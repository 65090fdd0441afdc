//! A row program as kernels of their own: [`split`] (a stage per
//! reduction, the outputs after; what a device lowers inside one kernel)
//! and [`tile_split`] (the same, with the costly values that several parts
//! read computed once per tile and stored: what the CPU runs a tile of
//! rows at a time).

use lazyfuse_core::shape::contiguous_strides;
use lazyfuse_core::DType;
use smallvec::SmallVec;

use crate::ir::{Body, FusedKernel, InputKind, Inst, KernelInput, Layout, ReductionIr, ValueId};

/// A row program as separate kernels, for a runtime that runs it a tile
/// of rows at a time: one reduction kernel per stage (reading the earlier
/// stages' row values as inputs `kernel.inputs.len() + k`, dense over the
/// kept axes, broadcast over the rows) and an element-wise kernel of the
/// outputs (reading every stage so). `None` for other kernels.
pub fn split(kernel: &FusedKernel) -> Option<Vec<FusedKernel>> {
    if !kernel.is_row_program() {
        return None;
    }
    let stage_input = |k: u32| (kernel.inputs.len() + k as usize) as u32;
    // The body with stage reads as loads of the row inputs; every kernel
    // keeps the whole body (backends compute only what their outputs need).
    let mut body = kernel.body.clone();
    for inst in &mut body.insts {
        if let Inst::Stage(k) = *inst {
            *inst = Inst::Load(stage_input(k));
        }
    }
    let row_inputs = |n: usize| -> Vec<KernelInput> {
        let mut inputs = kernel.inputs.clone();
        inputs.extend(kernel.stages[..n].iter().map(|s| KernelInput {
            dtype: s.epilogue.dtypes[s.epilogue.len() - 1],
            layout: Layout::Strided,
            kind: InputKind::Buffer,
        }));
        inputs
    };
    let mut kernels: Vec<FusedKernel> = kernel
        .stages
        .iter()
        .enumerate()
        .map(|(k, stage)| {
            let (body, value) = cone(&body, &[stage.value]);
            FusedKernel {
                rank: kernel.rank,
                inputs: row_inputs(k),
                args: kernel.args.clone(),
                body,
                outputs: vec![ValueId((stage.epilogue.len() - 1) as u32)],
                reduction: Some(ReductionIr {
                    value: value[0],
                    ..stage.clone()
                }),
                stages: Vec::new(),
                per_row: false,
            }
        })
        .collect();
    let (body, outputs) = cone(&body, &kernel.outputs);
    kernels.push(FusedKernel {
        rank: kernel.rank,
        inputs: row_inputs(kernel.stages.len()),
        args: kernel.args.clone(),
        body,
        outputs,
        reduction: None,
        stages: Vec::new(),
        per_row: false,
    });
    Some(kernels)
}

/// The instructions of `body` that `roots` depend on, as a body of their
/// own (inputs and arguments keep their numbers), and the roots' new values.
fn cone(body: &Body, roots: &[ValueId]) -> (Body, Vec<ValueId>) {
    let mut needed = vec![false; body.len()];
    for root in roots {
        needed[root.index()] = true;
    }
    for i in (0..body.len()).rev() {
        if needed[i] {
            for operand in body.insts[i].operands() {
                needed[operand.index()] = true;
            }
        }
    }
    let mut new: Vec<ValueId> = Vec::with_capacity(body.len());
    let mut out = Body::default();
    for (i, (inst, &dtype)) in body.insts.iter().zip(&body.dtypes).enumerate() {
        if !needed[i] {
            new.push(ValueId(u32::MAX));
            continue;
        }
        let at = |v: &ValueId| new[v.index()];
        let inst = match inst {
            Inst::Unary(op, a) => Inst::Unary(*op, at(a)),
            Inst::Binary(op, a, b) => Inst::Binary(*op, at(a), at(b)),
            Inst::Select(c, a, b) => Inst::Select(at(c), at(a), at(b)),
            Inst::Cast(a) => Inst::Cast(at(a)),
            Inst::Bitcast(a) => Inst::Bitcast(at(a)),
            leaf => leaf.clone(),
        };
        new.push(out.push(inst, dtype));
    }
    let roots = roots.iter().map(|r| new[r.index()]).collect();
    (out, roots)
}

/// The strides of a stage's row values as an input of `split`'s kernels
/// over `domain`: dense over the kept axes, 0 over the reduced `axes`.
pub fn row_strides(domain: &[usize], axes: &[usize]) -> SmallVec<[isize; 4]> {
    let kept_dims: Vec<usize> = (0..domain.len())
        .filter(|a| !axes.contains(a))
        .map(|a| domain[a])
        .collect();
    let dense = contiguous_strides(&kept_dims);
    let mut k = 0;
    (0..domain.len())
        .map(|a| {
            if axes.contains(&a) {
                0
            } else {
                k += 1;
                dense[k - 1] as isize
            }
        })
        .collect()
}

/// Where an input of a [`TilePart`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Input `k` of the row program.
    Input(usize),
    /// The tile's row values of stage `k` (dense over the kept axes,
    /// broadcast over the rows: [`row_strides`]).
    Row(usize),
    /// Stored value `t` of the [`TileSplit`] (dense over the tile).
    Stored(usize),
}

/// What a [`TilePart`] writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// The tile's row values of stage `k` (a reduction kernel).
    Row(usize),
    /// These stored values over the tile, in its outputs' order (an
    /// element-wise kernel).
    Stored(Vec<usize>),
    /// The row program's outputs (an element-wise kernel).
    Outputs,
}

/// One kernel of a [`TileSplit`].
#[derive(Clone, Debug)]
pub struct TilePart {
    /// The kernel; its input `i` comes from `sources[i]`.
    pub kernel: FusedKernel,
    /// Where each input comes from.
    pub sources: Vec<Source>,
    /// What it writes.
    pub writes: Writes,
}

/// A row program as the kernels a tile of rows runs, in order.
#[derive(Clone, Debug)]
pub struct TileSplit {
    /// The kernels.
    pub parts: Vec<TilePart>,
    /// The dtype of each stored value.
    pub stored: Vec<DType>,
}

/// The row program `kernel` as [`split`] makes it, except that a
/// transcendental value (cost 8: `exp`, `log`, `power`, ...) that several
/// parts read is computed once, by an element-wise part just before the
/// first of them, and stored for the tile; later parts read it. Softmax's
/// `exp(x - max)`, read by the sum and by the division, is computed once
/// per element instead of twice. `None` for other kernels.
pub fn tile_split(kernel: &FusedKernel) -> Option<TileSplit> {
    if !kernel.is_row_program() {
        return None;
    }
    let body = &kernel.body;
    let mut roots: Vec<Vec<ValueId>> = kernel.stages.iter().map(|s| vec![s.value]).collect();
    roots.push(kernel.outputs.clone());
    // Which parts read each value.
    let mut readers = vec![0u64; body.len()];
    for (p, part_roots) in roots.iter().enumerate().take(64) {
        let needed = needed(body, part_roots, &[]);
        for (v, &n) in needed.iter().enumerate() {
            if n {
                readers[v] |= 1 << p;
            }
        }
    }
    let stored_values: Vec<usize> = (0..body.len())
        .filter(|&v| body.insts[v].cost() >= 8 && readers[v].count_ones() >= 2)
        .collect();
    let mut split = TileSplit {
        parts: Vec::new(),
        stored: stored_values.iter().map(|&v| body.dtypes[v]).collect(),
    };
    let mut available: Vec<usize> = Vec::new();
    for (p, part_roots) in roots.iter().enumerate() {
        let first_read_here: Vec<usize> = (0..stored_values.len())
            .filter(|&t| readers[stored_values[t]].trailing_zeros() as usize == p)
            .collect();
        if !first_read_here.is_empty() {
            let values: Vec<ValueId> = first_read_here
                .iter()
                .map(|&t| ValueId(stored_values[t] as u32))
                .collect();
            let (part_body, sources, outputs) =
                cut_cone(kernel, &values, &stored_values, &available);
            split.parts.push(TilePart {
                kernel: part_kernel(kernel, part_body, &sources, &split.stored, outputs, None),
                sources,
                writes: Writes::Stored(first_read_here.clone()),
            });
            available.extend(first_read_here);
        }
        let (part_body, sources, outputs) =
            cut_cone(kernel, part_roots, &stored_values, &available);
        let (reduction, writes) = match kernel.stages.get(p) {
            Some(stage) => (
                Some(ReductionIr {
                    value: outputs[0],
                    ..stage.clone()
                }),
                Writes::Row(p),
            ),
            None => (None, Writes::Outputs),
        };
        let outputs = match &reduction {
            Some(r) => vec![ValueId((r.epilogue.len() - 1) as u32)],
            None => outputs,
        };
        split.parts.push(TilePart {
            kernel: part_kernel(
                kernel,
                part_body,
                &sources,
                &split.stored,
                outputs,
                reduction,
            ),
            sources,
            writes,
        });
    }
    Some(split)
}

/// The values `roots` depend on, not looking past the values `cut`.
fn needed(body: &Body, roots: &[ValueId], cut: &[bool]) -> Vec<bool> {
    let mut needed = vec![false; body.len()];
    for root in roots {
        needed[root.index()] = true;
    }
    for i in (0..body.len()).rev() {
        if needed[i] && !cut.get(i).copied().unwrap_or(false) {
            for operand in body.insts[i].operands() {
                needed[operand.index()] = true;
            }
        }
    }
    needed
}

/// The body computing `roots` from the program's inputs, the stages' row
/// values and the stored values in `available` (indices into `stored`,
/// whose entries are body values): its instructions, the source of each of
/// its inputs, and the roots' new values.
fn cut_cone(
    kernel: &FusedKernel,
    roots: &[ValueId],
    stored: &[usize],
    available: &[usize],
) -> (Body, Vec<Source>, Vec<ValueId>) {
    let body = &kernel.body;
    let mut cut = vec![false; body.len()];
    for &t in available {
        cut[stored[t]] = true;
    }
    let needed = needed(body, roots, &cut);
    let mut sources: Vec<Source> = Vec::new();
    let mut source_of = |source: Source| -> u32 {
        match sources.iter().position(|&s| s == source) {
            Some(i) => i as u32,
            None => {
                sources.push(source);
                (sources.len() - 1) as u32
            }
        }
    };
    let mut new: Vec<ValueId> = vec![ValueId(u32::MAX); body.len()];
    let mut out = Body::default();
    for (i, (inst, &dtype)) in body.insts.iter().zip(&body.dtypes).enumerate() {
        if !needed[i] {
            continue;
        }
        let at = |v: &ValueId| new[v.index()];
        let inst = if cut[i] {
            let t = stored.iter().position(|&v| v == i).unwrap_or(0);
            Inst::Load(source_of(Source::Stored(t)))
        } else {
            match inst {
                Inst::Load(k) => Inst::Load(source_of(Source::Input(*k as usize))),
                Inst::Iota(k) => Inst::Iota(source_of(Source::Input(*k as usize))),
                Inst::Stage(k) => Inst::Load(source_of(Source::Row(*k as usize))),
                Inst::Unary(op, a) => Inst::Unary(*op, at(a)),
                Inst::Binary(op, a, b) => Inst::Binary(*op, at(a), at(b)),
                Inst::Select(c, a, b) => Inst::Select(at(c), at(a), at(b)),
                Inst::Cast(a) => Inst::Cast(at(a)),
                Inst::Bitcast(a) => Inst::Bitcast(at(a)),
                Inst::Arg(_) | Inst::Param(_) | Inst::Reduced => inst.clone(),
            }
        };
        new[i] = out.push(inst, dtype);
    }
    let roots = roots.iter().map(|r| new[r.index()]).collect();
    (out, sources, roots)
}

/// A part's kernel: `body` over the row program's domain, its inputs as
/// `sources` say.
fn part_kernel(
    kernel: &FusedKernel,
    body: Body,
    sources: &[Source],
    stored: &[DType],
    outputs: Vec<ValueId>,
    reduction: Option<ReductionIr>,
) -> FusedKernel {
    let inputs = sources
        .iter()
        .map(|source| match *source {
            Source::Input(k) => kernel.inputs[k],
            Source::Row(k) => {
                let stage = &kernel.stages[k];
                KernelInput {
                    dtype: stage.epilogue.dtypes[stage.epilogue.len() - 1],
                    layout: Layout::Strided,
                    kind: InputKind::Buffer,
                }
            }
            Source::Stored(t) => KernelInput {
                dtype: stored[t],
                layout: Layout::Contiguous,
                kind: InputKind::Buffer,
            },
        })
        .collect();
    FusedKernel {
        rank: kernel.rank,
        inputs,
        args: kernel.args.clone(),
        body,
        outputs,
        reduction,
        stages: Vec::new(),
        per_row: false,
    }
}
