//! Row programs: a reduction over the trailing axes of a domain, the
//! reductions after it that read its result back over the rows, and the
//! element-wise kernel that reads them (softmax's `max`, `sum` and
//! division; layer norm's mean, variance and normalisation) merged into one
//! kernel that runs per row ([`FusedKernel::stages`]): a device runs a
//! block per row with the row's values in registers and shared memory, the
//! CPU a tile of rows at a time while they are in cache
//! ([`split`] gives it the stages as kernels of their own).
//!
//! Reductions over the leading axes merge the same way (column programs:
//! standardisation's `(x - x.mean(0)) / x.std(0)`, a "row" being a column):
//! a device runs a block per column, the CPU the whole domain as one tile
//! ([`FusedKernel::reduces_leading_axes`]).
//!
//! The merge runs on a finished program: a chain starts at a reduction
//! kernel whose axes are the trailing (or the leading) ones of its domain;
//! the earliest kernel reading one of the chain's row buffers joins it if
//! it reads them only broadcast over the rows (`x - m[:, None]`) over the
//! same domain — a reduction over the same axes as a further stage, an
//! element-wise kernel as the end — or if it is element-wise over the rows
//! themselves reading nothing but row values (logsumexp's `m + log(s)`:
//! an end computed once per row, [`FusedKernel::per_row`]). A reduction
//! over the same domain and axes that the joining kernel reads besides
//! the chain's rows (min-max scaling's `max` beside its `min`) joins as a
//! stage too. The chain becomes one kernel when it has such an end and
//! nothing else reads its row buffers (no other kernel, no demand): they
//! are never stored.

use std::sync::Arc;

use lazyfuse_core::shape::contiguous_strides;
use lazyfuse_core::{DType, Literal};
use rustc_hash::FxHashMap as HashMap;

mod split;

pub use split::{row_strides, split, tile_split, Source, TilePart, TileSplit, Writes};

use crate::ir::{Body, CombineIr, FusedKernel, Inst, KernelInput, ReductionIr, ValueId};
use crate::program::{BufferId, InputBinding, Launch, Program, Work};

/// Merges every chain of the module documentation into one launch; the
/// row buffers it no longer writes are dropped from the program.
pub(crate) fn merge_rows(program: &mut Program) {
    let mut merged_any = false;
    let mut start = 0;
    while start < program.schedule.len() {
        if let Some(chain) = chain_from(program, start) {
            if let Some(launch) = merge(program, &chain) {
                replace(program, &chain, launch);
                merged_any = true;
            }
        }
        start += 1;
    }
    if merged_any {
        drop_unused_buffers(program);
    }
}

/// A chain: schedule positions of its launches (the first a reduction,
/// the last element-wise) and the row buffers of its reductions.
struct Chain {
    positions: Vec<usize>,
    rows: Vec<BufferId>,
    /// The end is element-wise over the rows themselves (`per_row`).
    per_row: bool,
}

fn fused(program: &Program, position: usize) -> Option<&Launch> {
    match program.schedule.get(position)? {
        Work::Fused(l) => program.launches.get(*l),
        _ => None,
    }
}

/// A reduction over the trailing or the leading axes of a domain with
/// kept axes, by a built-in combine, writing one row buffer that no demand
/// returns. Not over an empty domain: a row of no elements has no tile to
/// run its stages in (its reductions give their identities through kernels
/// of their own).
fn row_reduction<'p>(program: &'p Program, launch: &'p Launch) -> Option<&'p ReductionIr> {
    let r = launch.kernel.reduction.as_ref()?;
    let rank = launch.domain.len();
    let row_axes = crate::ir::row_axes(&r.axes, rank);
    let demanded = program
        .outputs
        .iter()
        .any(|o| o.buffer == launch.outputs[0]);
    (row_axes
        && launch.domain_len() > 0
        && matches!(r.combine, CombineIr::Builtin(_))
        && launch.outputs.len() == 1
        && !demanded)
        .then_some(r)
}

/// Whether `binding` reads a row buffer of `domain`'s rows (dense over the
/// kept axes) broadcast over the reduced `axes`.
fn reads_rows(binding: &InputBinding, domain: &[usize], axes: &[usize]) -> bool {
    let kept: Vec<usize> = (0..domain.len()).filter(|a| !axes.contains(a)).collect();
    let kept_dims: Vec<usize> = kept.iter().map(|&a| domain[a]).collect();
    let dense = contiguous_strides(&kept_dims);
    binding.offset == 0
        && binding.strides.len() == domain.len()
        && (0..domain.len()).all(|a| match kept.iter().position(|&k| k == a) {
            Some(i) => binding.strides[a] == dense[i] as isize || domain[a] == 1,
            None => binding.strides[a] == 0,
        })
}

/// Whether `launch` is element-wise over the rows of `domain` (its kept
/// axes) and reads only the chain's row buffers `rows`, each densely, and
/// arguments: logsumexp's `m + log(s)`, which the chain then computes once
/// per row.
fn ends_per_row(launch: &Launch, domain: &[usize], axes: &[usize], rows: &[BufferId]) -> bool {
    // The rows' shape without the reduced axes, or with them of length 1
    // (`keepdims`).
    let kept: Vec<usize> = (0..domain.len())
        .filter(|a| !axes.contains(a))
        .map(|a| domain[a])
        .collect();
    let kept_dims: Vec<usize> = (0..domain.len())
        .map(|a| if axes.contains(&a) { 1 } else { domain[a] })
        .collect();
    let shape = launch.domain.as_slice();
    if shape != kept.as_slice() && shape != kept_dims.as_slice() {
        return false;
    }
    let dense = contiguous_strides(shape);
    let reads_a_row = |binding: &InputBinding| {
        binding.buffer.is_some_and(|b| rows.contains(&b))
            && binding.offset == 0
            && binding.strides.len() == shape.len()
            && (0..shape.len()).all(|a| binding.strides[a] == dense[a] as isize || shape[a] == 1)
    };
    let kernel = &launch.kernel;
    kernel.reduction.is_none()
        && !kernel.is_row_program()
        && launch.inputs.iter().all(reads_a_row)
        && !kernel.body.insts.iter().any(|i| matches!(i, Inst::Iota(_)))
}

/// The chain starting at schedule position `start`, when there is one.
fn chain_from(program: &Program, start: usize) -> Option<Chain> {
    let first = fused(program, start)?;
    let axes = row_reduction(program, first)?.axes.clone();
    let mut chain = Chain {
        positions: vec![start],
        rows: vec![first.outputs[0]],
        per_row: false,
    };
    let reads_row_buffer = |p: usize, rows: &[BufferId]| {
        program
            .reads(program.schedule[p])
            .any(|b| rows.contains(&b))
    };
    loop {
        let after = *chain.positions.last()? + 1;
        let next = (after..program.schedule.len()).find(|&p| reads_row_buffer(p, &chain.rows))?;
        let launch = fused(program, next)?;
        add_siblings(
            program,
            &mut chain,
            (start, next),
            launch,
            (&first.domain, &axes),
        );
        if ends_per_row(launch, &first.domain, &axes, &chain.rows) {
            chain.positions.push(next);
            chain.per_row = true;
            break;
        }
        let row_reads_fit = launch.inputs.iter().all(|binding| {
            binding.buffer.is_none_or(|b| !chain.rows.contains(&b))
                || reads_rows(binding, &first.domain, &axes)
        });
        if launch.domain != first.domain || !row_reads_fit || launch.kernel.is_row_program() {
            return None;
        }
        chain.positions.push(next);
        match &launch.kernel.reduction {
            None => break,
            Some(r) if r.axes == axes && row_reduction(program, launch).is_some() => {
                chain.rows.push(launch.outputs[0]);
            }
            Some(_) => return None,
        }
    }
    // Nothing outside the chain reads its row buffers.
    let outside = (0..program.schedule.len())
        .filter(|p| !chain.positions.contains(p))
        .any(|p| reads_row_buffer(p, &chain.rows));
    (!outside).then_some(chain)
}

/// Adds to `chain` the sibling reductions `reader` (at schedule position
/// `next`) reads besides the chain's rows: reductions over the same
/// domain and axes as the chain's first, scheduled between it and
/// `reader`, that read none of the chain's rows (min-max scaling's `min`
/// and `max`, a masked mean's sums of the values and of the mask) — so
/// that they become stages of the same row program instead of kernels
/// that store their rows; one that another kernel reads too stays apart.
/// Each joins in schedule order, its row buffer with it (the chain's
/// positions are all reductions until its end).
fn add_siblings(
    program: &Program,
    chain: &mut Chain,
    (start, next): (usize, usize),
    reader: &Launch,
    (domain, axes): (&[usize], &[usize]),
) {
    for buffer in reader.inputs.iter().filter_map(|b| b.buffer) {
        if chain.rows.contains(&buffer) {
            continue;
        }
        let sibling = (start + 1..next).find(|&p| {
            fused(program, p).is_some_and(|l| {
                l.outputs.first() == Some(&buffer)
                    && l.domain.as_slice() == domain
                    && row_reduction(program, l).is_some_and(|r| r.axes.as_slice() == axes)
                    && !program
                        .reads(program.schedule[p])
                        .any(|b| chain.rows.contains(&b))
            })
        });
        // Read by `reader` alone: a sibling another kernel reads stays a
        // kernel of its own (joined, it would stop the whole chain).
        let only_reader = (0..program.schedule.len())
            .filter(|&q| q != next)
            .all(|q| !program.reads(program.schedule[q]).any(|b| b == buffer));
        if let Some(p) = sibling.filter(|p| only_reader && !chain.positions.contains(p)) {
            let at = chain.positions.partition_point(|&q| q < p);
            chain.positions.insert(at, p);
            chain.rows.insert(at, buffer);
        }
    }
}

/// The kernel of a chain being merged, with its launch's bindings.
struct Merged {
    kernel: FusedKernel,
    bindings: Vec<InputBinding>,
    args: Vec<Literal>,
    /// The merged launch's [`Launch::bound`].
    bound: Vec<(u32, u32)>,
    nodes: Vec<usize>,
    /// Every instruction of the body, so that the same computation
    /// appended again (softmax's `exp(x - max)` in the sum's kernel and in
    /// the division's) is one value.
    known: HashMap<(Inst, DType), ValueId>,
}

impl Merged {
    fn input(&mut self, input: KernelInput, binding: &InputBinding) -> u32 {
        let same = |(k, b): (&KernelInput, &InputBinding)| *k == input && b == binding;
        match self.kernel.inputs.iter().zip(&self.bindings).position(same) {
            Some(i) => i as u32,
            None => {
                self.kernel.inputs.push(input);
                self.bindings.push(binding.clone());
                (self.kernel.inputs.len() - 1) as u32
            }
        }
    }

    /// Argument `a` of `launch` in the merged kernel: one for every equal
    /// value the program keeps, its own for a constant bound per demand.
    fn arg(&mut self, launch: &Launch, a: usize) -> u32 {
        let (dtype, value) = (launch.kernel.args[a], launch.args[a]);
        let source = launch.bound.iter().find(|(b, _)| *b as usize == a);
        let found = match source {
            Some(&(_, source)) => self.bound.iter().find(|(_, s)| *s == source).map(|b| b.0),
            None => {
                let kept = |i: &usize| !self.bound.iter().any(|(b, _)| *b as usize == *i);
                (0..self.args.len())
                    .filter(kept)
                    .find(|&i| self.kernel.args[i] == dtype && self.args[i] == value)
                    .map(|i| i as u32)
            }
        };
        found.unwrap_or_else(|| {
            self.kernel.args.push(dtype);
            self.args.push(value);
            let new = (self.args.len() - 1) as u32;
            if let Some(&(_, source)) = source {
                self.bound.push((new, source));
            }
            new
        })
    }

    /// Appends `launch`'s body, its loads of row buffer `rows[k]` read as
    /// stage `k`; returns the new value of each of its values.
    fn append(&mut self, launch: &Launch, rows: &[BufferId]) -> Vec<ValueId> {
        let kernel = &launch.kernel;
        let args: Vec<u32> = (0..kernel.args.len())
            .map(|a| self.arg(launch, a))
            .collect();
        let mut values = Vec::with_capacity(kernel.body.len());
        for (inst, &dtype) in kernel.body.insts.iter().zip(&kernel.body.dtypes) {
            let at = |v: &ValueId| values[v.index()];
            let inst = match inst {
                Inst::Load(k) | Inst::Iota(k) => {
                    let binding = &launch.inputs[*k as usize];
                    match binding
                        .buffer
                        .and_then(|b| rows.iter().position(|&r| r == b))
                    {
                        Some(stage) => Inst::Stage(stage as u32),
                        None => {
                            let input = self.input(kernel.inputs[*k as usize], binding);
                            match inst {
                                Inst::Load(_) => Inst::Load(input),
                                _ => Inst::Iota(input),
                            }
                        }
                    }
                }
                Inst::Arg(a) => Inst::Arg(args[*a as usize]),
                Inst::Unary(op, a) => Inst::Unary(*op, at(a)),
                Inst::Binary(op, a, b) => Inst::Binary(*op, at(a), at(b)),
                Inst::Select(c, a, b) => Inst::Select(at(c), at(a), at(b)),
                Inst::Cast(a) => Inst::Cast(at(a)),
                Inst::Bitcast(a) => Inst::Bitcast(at(a)),
                Inst::Param(_) | Inst::Reduced | Inst::Stage(_) => inst.clone(),
            };
            let value = match self.known.get(&(inst.clone(), dtype)) {
                Some(&known) => known,
                None => {
                    let value = self.kernel.body.push(inst.clone(), dtype);
                    self.known.insert((inst, dtype), value);
                    value
                }
            };
            values.push(value);
        }
        self.nodes.extend(&launch.nodes);
        values
    }

    /// `launch`'s reduction as the next stage, its body appended.
    fn stage(&mut self, launch: &Launch, rows: &[BufferId]) -> Option<()> {
        let values = self.append(launch, rows);
        let r = launch.kernel.reduction.as_ref()?;
        let mut epilogue = Body::default();
        for (inst, &dtype) in r.epilogue.insts.iter().zip(&r.epilogue.dtypes) {
            let inst = match inst {
                Inst::Arg(a) => {
                    let a = *a as usize;
                    Inst::Arg(self.arg(launch, a))
                }
                inst => inst.clone(),
            };
            epilogue.push(inst, dtype);
        }
        // The row value is the epilogue's last value: values after the
        // kernel's one output are dead (SSA: nothing before reads them).
        let output = *launch.kernel.outputs.first()?;
        epilogue.insts.truncate(output.index() + 1);
        epilogue.dtypes.truncate(output.index() + 1);
        let identity_arg = self.arg(launch, r.identity_arg as usize);
        self.kernel.stages.push(ReductionIr {
            identity_arg,
            value: values[r.value.index()],
            epilogue,
            ..r.clone()
        });
        Some(())
    }
}

/// The one launch of `chain`, when its kernel verifies.
fn merge(program: &Program, chain: &Chain) -> Option<Launch> {
    let launches: Vec<&Launch> = chain
        .positions
        .iter()
        .map(|&p| fused(program, p))
        .collect::<Option<_>>()?;
    let (first, last) = (launches.first()?, launches.last()?);
    let mut merged = Merged {
        kernel: FusedKernel {
            rank: first.domain.len(),
            inputs: Vec::new(),
            args: Vec::new(),
            body: Body::default(),
            outputs: Vec::new(),
            reduction: None,
            stages: Vec::new(),
            per_row: false,
        },
        bindings: Vec::new(),
        args: Vec::new(),
        bound: Vec::new(),
        nodes: Vec::new(),
        known: HashMap::default(),
    };
    for (k, launch) in launches[..launches.len() - 1].iter().enumerate() {
        merged.stage(launch, &chain.rows[..k])?;
    }
    let values = merged.append(last, &chain.rows);
    merged.kernel.outputs = last
        .kernel
        .outputs
        .iter()
        .map(|o| values[o.index()])
        .collect();
    merged.kernel.per_row = chain.per_row;
    merged.kernel.verify().ok()?;
    Some(Launch {
        kernel: Arc::new(merged.kernel),
        domain: first.domain.clone(),
        inputs: merged.bindings,
        args: merged.args,
        bound: merged.bound,
        outputs: last.outputs.clone(),
        nodes: merged.nodes,
    })
}

/// Puts `launch` where the chain's last launch was and removes the others.
fn replace(program: &mut Program, chain: &Chain, launch: Launch) {
    let Some(&last) = chain.positions.last() else {
        return;
    };
    if let Work::Fused(l) = program.schedule[last] {
        program.launches[l] = launch;
    }
    let mut position = 0;
    program.schedule.retain(|_| {
        let keep = position == last || !chain.positions.contains(&position);
        position += 1;
        keep
    });
    // Launches in schedule order again, numbered from 0.
    let mut launches = std::mem::take(&mut program.launches)
        .into_iter()
        .map(Some)
        .collect::<Vec<_>>();
    let mut kept = Vec::new();
    for work in &mut program.schedule {
        if let Work::Fused(l) = work {
            if let Some(launch) = launches[*l].take() {
                *l = kept.len();
                kept.push(launch);
            }
        }
    }
    program.launches = kept;
}

/// Removes the buffers no work reads or writes and no demand returns,
/// renumbering the others.
fn drop_unused_buffers(program: &mut Program) {
    let mut used = vec![false; program.buffers.len()];
    for &work in &program.schedule {
        for b in program.reads(work).chain(program.writes(work)) {
            used[b.index()] = true;
        }
    }
    for output in &program.outputs {
        used[output.buffer.index()] = true;
    }
    for (b, desc) in program.buffers.iter().enumerate() {
        used[b] |= desc.kind != crate::program::BufferKind::Temp;
    }
    let mut renumbered: Vec<Option<BufferId>> = vec![None; used.len()];
    let mut next = 0u32;
    for (b, &u) in used.iter().enumerate() {
        if u {
            renumbered[b] = Some(BufferId(next));
            next += 1;
        }
    }
    let map = |b: &mut BufferId| {
        if let Some(new) = renumbered[b.index()] {
            *b = new;
        }
    };
    let mut position = 0;
    program.buffers.retain(|_| {
        position += 1;
        used[position - 1]
    });
    for launch in &mut program.launches {
        launch
            .inputs
            .iter_mut()
            .filter_map(|i| i.buffer.as_mut())
            .for_each(map);
        launch.outputs.iter_mut().for_each(map);
    }
    for user in &mut program.user_launches {
        user.args.iter_mut().for_each(map);
        user.outputs.iter_mut().flatten().for_each(map);
    }
    for scan in &mut program.scans {
        map(&mut scan.input);
        map(&mut scan.output);
    }
    for output in &mut program.outputs {
        map(&mut output.buffer);
    }
}
