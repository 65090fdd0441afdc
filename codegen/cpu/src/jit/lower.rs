//! A kernel body as one Cranelift function: a loop over 128-bit vectors
//! (16 elements per iteration, one vector of every value at a time) and a
//! scalar loop for the last elements, with every value in a machine
//! register — one pass over memory.
//!
//! The function is `extern "C" fn(table, start, n, out, rows)`: `table[slot]`
//! points at slot `slot`'s element 0 of the chunk (windows: inputs, gathered
//! registers and outputs) or at its single value (scalar slots); it computes
//! elements `start..start + n`. The accumulate and map-lines forms repeat
//! that for `rows` consecutive lines, slot `s` moving `table[slots + s]`
//! bytes from a line to the next (the others take `rows` = 1).
//!
//! Values follow `core::semantics` exactly (no fused multiply-add; NaN
//! propagation of `minimum`/`maximum` as `a.is_nan() || a < b ? a : b`).
//! Bools are lane masks (all ones or zero) in the vector loop and 0/1 bytes
//! in the scalar loop; they are computed, never loaded or stored.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, Block, InstBuilder, MemFlags, Type, Value};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use lazyfuse_core::{DType, ReduceOp};
use lazyfuse_fusion::Body;
use smallvec::SmallVec;

mod scaffold;

use scaffold::{args, Bases, Broadcast, Chunks, Loops, Reduced, RowLoop, Table};

use super::callout::Scratch;
use super::ops::{Lowering, Val};
use super::support::{call_of, check, per_vector, Call, Lanes, Unsupported};

/// What the generated function computes: the body, and which slots its
/// leaves and outputs are.
#[derive(Clone, Debug)]
pub struct Shape<'a> {
    /// The kernel body.
    pub body: &'a Body,
    /// `(value, slot)` of every value written to an output window.
    pub outputs: &'a [(usize, usize)],
    /// Slots (= value indices) of leaves bound to a single broadcast value.
    pub scalar: &'a [bool],
    /// Slots in a frame: where the line strides start in the table.
    pub slots: usize,
}

/// Elements per iteration of the vector loop (4 or 8 vectors per value).
pub(super) const ELEMENTS: usize = 16;

/// Vector iterations per iteration of the wide loop of bodies with calls:
/// a call then covers 128 elements (over 16, the called loops are bound
/// by their latency; the body's code is repeated this many times).
pub(super) const WIDE: usize = 8;

/// What the function does with the body's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Stores the outputs.
    Map,
    /// Stores the outputs of `rows` consecutive lines (the fifth argument)
    /// of `n` elements, every slot, outputs included, moving by its stride
    /// from a line to the next (short lines of a 2-D domain in one call).
    MapLines,
    /// Combines `value` with `op` over the elements and stores the result
    /// at the fourth argument, which holds the starting value (identity).
    Reduce {
        /// The reduced value.
        value: usize,
        /// How values combine.
        op: ReduceOp,
    },
    /// Combines `value` element-wise into the array at the fourth argument
    /// (`acc[j] = op(acc[j], value[start + j])`): rows of a reduction over
    /// leading axes.
    Accumulate {
        /// The reduced value.
        value: usize,
        /// How values combine.
        op: ReduceOp,
    },
}

/// Emits the function of `shape` in `form` into `ctx` (signature included):
/// `(table, start, n, out, rows)`.
pub fn emit(
    ctx: &mut Context,
    pointer: Type,
    shape: &Shape<'_>,
    form: Form,
) -> Result<(), Unsupported> {
    let lanes = check(shape.body, shape.outputs)?;
    let sig = &mut ctx.func.signature;
    for _ in 0..5 {
        sig.params.push(AbiParam::new(pointer));
    }
    let mut builder_ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut builder_ctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (table, start, n, out, rows) = (params[0], params[1], params[2], params[3], params[4]);
    let flags = MemFlags::new().with_notrap();

    let (outputs, accumulated) = match form {
        Form::Map | Form::MapLines => (shape.outputs, None),
        Form::Reduce { .. } => (&[][..], None),
        Form::Accumulate { value, op } => (&[][..], Some((value, op))),
    };
    let by_lines = matches!(form, Form::MapLines | Form::Accumulate { .. });
    let row_loop = by_lines.then(|| RowLoop::open(&mut b, rows));
    let table = Table {
        pointer,
        table,
        start,
        row: row_loop.map(|r| r.row),
        slots: shape.slots,
        flags,
    };
    let (bases, broadcast) = table.bind_leaves(&mut b, shape, outputs)?;
    let reduced = match form {
        Form::Reduce { value, op } => {
            Some(Reduced::load(&mut b, shape.body, value, op, out, flags)?)
        }
        Form::Map | Form::MapLines | Form::Accumulate { .. } => None,
    };
    let calls: Vec<Option<Call>> = (0..shape.body.len())
        .map(|k| call_of(shape.body, k))
        .collect();
    let scratch = calls
        .iter()
        .any(Option::is_some)
        .then(|| Scratch::new(&mut b, pointer, WIDE * ELEMENTS));
    let frame = Frame {
        calls,
        scratch,
        body: shape.body,
        lanes,
        flags,
        bases,
        broadcast,
        outputs,
        accumulated,
        reduced,
        out,
    };

    let loops = Loops::create(&mut b, reduced.as_ref(), frame.scratch.is_some());
    let (first, limit, chunks) = match reduced {
        Some(_) => {
            let (first, limit, chunks) = Chunks::open(&mut b, n, rows);
            (first, limit, Some(chunks))
        }
        None => (b.ins().iconst(types::I64, 0), n, None),
    };
    loops.enter(&mut b, reduced.as_ref(), first, limit, WIDE * ELEMENTS);
    if let Some(wide) = loops.wide_body {
        let blocks = (wide, WIDE, loops.vector_head);
        frame.vector_loop(&mut b, blocks, &loops, limit)?;
    }
    let blocks = (loops.vector_body, 1, loops.scalar_head);
    frame.vector_loop(&mut b, blocks, &loops, limit)?;
    frame.scalar_loop(&mut b, &loops, limit)?;

    b.switch_to_block(loops.exit);
    match (row_loop, reduced) {
        (Some(row_loop), _) => row_loop.close(&mut b),
        (None, Some(reduced)) => frame.finish_reduction(&mut b, loops.exit, &reduced, chunks)?,
        (None, None) => {}
    }
    if row_loop.is_none() {
        b.ins().return_(&[]);
    }
    b.seal_all_blocks();
    b.finalize();
    Ok(())
}

/// What the loops compute from: the body, where its values are, and what
/// the form does with them.
struct Frame<'a> {
    body: &'a Body,
    lanes: Lanes,
    flags: MemFlags,
    bases: Bases,
    broadcast: Broadcast,
    outputs: &'a [(usize, usize)],
    accumulated: Option<(usize, ReduceOp)>,
    reduced: Option<Reduced>,
    out: Value,
    /// Per instruction: the call computing it, if it is compiled as one.
    calls: Vec<Option<Call>>,
    /// The calls' operands and results (present when there are calls).
    scratch: Option<Scratch>,
}

impl Frame<'_> {
    fn lowering<'b, 'f>(
        &'b self,
        b: &'b mut FunctionBuilder<'f>,
        vector: bool,
        group: usize,
    ) -> Lowering<'b, 'f> {
        Lowering {
            b,
            body: self.body,
            lanes: self.lanes,
            vector,
            group,
            flags: self.flags,
        }
    }

    /// One iteration at element `i`: the values of each of its groups (one
    /// group in the scalar loop), the outputs stored and the accumulate
    /// form's value combined.
    ///
    /// The body runs in segments ending at each operation compiled as a
    /// call: one group at a time through a segment (only one vector of
    /// each value is live at once; all groups at once would spill
    /// registers), the call's operand of every group put in the scratch
    /// buffer, one call over the iteration's elements, its result taken
    /// back by every group.
    fn iteration(
        &self,
        b: &mut FunctionBuilder<'_>,
        vector: bool,
        i: Value,
        subs: usize,
    ) -> Result<Vec<Vec<Val>>, Unsupported> {
        let (groups, elements) = if vector {
            (ELEMENTS / self.lanes.group(), subs * ELEMENTS)
        } else {
            (1, 1)
        };
        // Each sub-iteration's first element.
        let positions: Vec<Value> = (0..subs)
            .map(|u| match u {
                0 => i,
                u => b.ins().iadd_imm(i, (u * ELEMENTS) as i64),
            })
            .collect();
        let len = self.body.len();
        let mut values: Vec<Vec<Val>> = (0..subs * groups)
            .map(|_| Vec::with_capacity(len))
            .collect();
        let mut start = 0;
        loop {
            let end = (start..len)
                .find(|&k| self.calls[k].is_some())
                .unwrap_or(len);
            let call = self.calls.get(end).copied().flatten();
            for (j, group) in values.iter_mut().enumerate() {
                let (sub, g) = (j / groups, j % groups);
                let i = positions[sub];
                let mut lowering = self.lowering(b, vector, g);
                lowering.lower_range(group, start..end, i, &self.bases, &self.broadcast)?;
                match (call, &self.scratch) {
                    (Some(_), Some(scratch)) => {
                        let operands = self.body.insts[end].operands();
                        for (k, operand) in operands.iter().enumerate() {
                            let (dtype, x) = (self.body.dtype(*operand), &group[operand.index()]);
                            scratch.put(&mut lowering, (k, sub * ELEMENTS), x, dtype);
                        }
                    }
                    (Some(_), None) => return Err("a call without a scratch buffer"),
                    (None, _) => {
                        lowering.store_outputs(group, i, &self.bases, self.outputs)?;
                        if let Some((value, op)) = self.accumulated {
                            lowering.accumulate(self.out, i, value, op, &group[value])?;
                        }
                    }
                }
            }
            let (Some(call), Some(scratch)) = (call, &self.scratch) else {
                return Ok(values);
            };
            let dtype = self.body.dtypes[end];
            scratch.call(b, call, dtype, elements)?;
            for (j, group) in values.iter_mut().enumerate() {
                let mut lowering = self.lowering(b, vector, j % groups);
                group.push(scratch.take(&mut lowering, (j / groups) * ELEMENTS, dtype)?);
            }
            start = end + 1;
        }
    }

    /// A vector loop in block `body`: `subs` times 16 elements an
    /// iteration, each 16 in groups of one vector of the narrowest values,
    /// combined into the accumulators in order (as `subs` iterations of 16
    /// would be: the same bits); it leaves to `leave` (the scalar loop's
    /// head takes the scalar accumulator too).
    fn vector_loop(
        &self,
        b: &mut FunctionBuilder<'_>,
        (body, subs, leave): (Block, usize, Block),
        loops: &Loops,
        limit: Value,
    ) -> Result<(), Unsupported> {
        b.switch_to_block(body);
        let params = b.block_params(body).to_vec();
        let i = params[0];
        let groups = ELEMENTS / self.lanes.group();
        let iteration = self.iteration(b, true, i, subs)?;
        let mut accs = params[1..].to_vec();
        if let Some(r) = &self.reduced {
            for sub in iteration.chunks(groups) {
                accs = self.combine_vectors(b, r, sub, &accs)?;
            }
        }
        let width = (subs * ELEMENTS) as i64;
        let next = b.ins().iadd_imm(i, width);
        let end = b.ins().iadd_imm(i, 2 * width);
        let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, limit);
        let mut again = vec![next];
        again.extend(accs);
        let mut out = again.clone();
        if let (Some(r), true) = (&self.reduced, leave == loops.scalar_head) {
            out.push(r.identity);
        }
        b.ins().brif(fits, body, &args(&again), leave, &args(&out));
        Ok(())
    }

    /// The accumulators (`parts` vectors, then as many NaN masks) after
    /// combining the reduced value of one 16-element iteration's `groups`.
    fn combine_vectors(
        &self,
        b: &mut FunctionBuilder<'_>,
        r: &Reduced,
        groups: &[Vec<Val>],
        accs: &[Value],
    ) -> Result<Vec<Value>, Unsupported> {
        let per_group = r.parts / groups.len();
        let mut combined: Vec<Value> = Vec::new();
        let mut masks_out: Vec<Value> = Vec::new();
        let mut pending: Option<Val> = None;
        for (g, values) in groups.iter().enumerate() {
            let mut lowering = self.lowering(b, true, g);
            for (v, &x) in values[r.value].iter().enumerate().take(per_group) {
                let p = g * per_group + v;
                let acc: Val = SmallVec::from_elem(accs[p], 1);
                let x: Val = SmallVec::from_elem(x, 1);
                if r.nan_masks {
                    combined.extend(lowering.min_max(r.op, &acc, &x, r.dtype)?);
                    // One unordered compare tests two vectors: NaN lanes of
                    // the pair mark the even vector's mask (any NaN lane
                    // makes the result NaN); odd vectors' masks stay.
                    let mask: Val = SmallVec::from_elem(accs[r.parts + p], 1);
                    match pending.take() {
                        None => pending = Some(x),
                        Some(previous) => {
                            let nan = lowering.fcmp(FloatCC::Unordered, &previous, &x);
                            let even: Val = SmallVec::from_elem(accs[r.parts + p - 1], 1);
                            masks_out.extend(lowering.or(&even, &nan));
                            masks_out.extend(mask);
                        }
                    }
                } else {
                    combined.extend(lowering.binary(r.op.combiner(), &acc, &x, r.dtype)?);
                }
            }
        }
        combined.extend(masks_out);
        Ok(combined)
    }

    /// The scalar loop: the elements after the vector loop, one at a time.
    fn scalar_loop(
        &self,
        b: &mut FunctionBuilder<'_>,
        loops: &Loops,
        limit: Value,
    ) -> Result<(), Unsupported> {
        b.switch_to_block(loops.scalar_head);
        let head = b.block_params(loops.scalar_head).to_vec();
        let more = b.ins().icmp(IntCC::UnsignedLessThan, head[0], limit);
        b.ins().brif(
            more,
            loops.scalar_body,
            &args(&head),
            loops.exit,
            &args(&head[1..]),
        );

        b.switch_to_block(loops.scalar_body);
        let mut current = b.block_params(loops.scalar_body).to_vec();
        let i = current[0];
        let values = self.iteration(b, false, i, 1)?.pop().ok_or("no group")?;
        let mut lowering = self.lowering(b, false, 0);
        if let Some(r) = &self.reduced {
            let scalar = 1 + r.vector_accs();
            let acc: Val = SmallVec::from_elem(current[scalar], 1);
            let combined = lowering.binary(r.op.combiner(), &acc, &values[r.value], r.dtype)?;
            current[scalar] = combined[0];
        }
        current[0] = b.ins().iadd_imm(i, 1);
        b.ins().jump(loops.scalar_head, &args(&current));
        Ok(())
    }

    /// At the loops' exit: the vector accumulators combined, then their
    /// lanes, pairwise (a fixed order), then the scalar loop's accumulator;
    /// the total stored (per block, with `chunks`).
    fn finish_reduction(
        &self,
        b: &mut FunctionBuilder<'_>,
        exit: Block,
        r: &Reduced,
        chunks: Option<Chunks>,
    ) -> Result<(), Unsupported> {
        let accs: Vec<Value> = b.block_params(exit).to_vec();
        let combine = r.op.combiner();
        let mut lowering = self.lowering(b, true, 0);
        let mut level: Vec<Val> = accs[..r.parts]
            .iter()
            .map(|&v| SmallVec::from_elem(v, 1))
            .collect();
        if r.nan_masks {
            // Lanes that saw a NaN become NaN (the quiet NaN of `f32::NAN`
            // or `f64::NAN`).
            let little = MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
            let nan = lowering.constant(r.dtype, f64::NAN, r.vector)[0];
            for (acc, &mask) in level.iter_mut().zip(&accs[r.parts..2 * r.parts]) {
                let mask = lowering.b.ins().bitcast(r.vector, little, mask);
                acc[0] = lowering.b.ins().bitselect(mask, nan, acc[0]);
            }
        }
        let vector = pairwise(&mut lowering, level, combine, r.dtype)?;
        let vector = vector.first().copied().ok_or("no accumulator")?;
        lowering.vector = false;
        let lanes: Vec<Val> = (0..per_vector(r.dtype))
            .map(|l| SmallVec::from_elem(lowering.b.ins().extractlane(vector, l as u8), 1))
            .collect();
        let lanes = pairwise(&mut lowering, lanes, combine, r.dtype)?;
        let scalar: Val = SmallVec::from_elem(accs[r.vector_accs()], 1);
        let total = lowering.binary(combine, &lanes, &scalar, r.dtype)?;
        let at = match &chunks {
            Some(chunks) => chunks.partial(b, self.out, r.dtype),
            None => self.out,
        };
        b.ins().store(self.flags, total[0], at, 0);
        if let Some(chunks) = chunks {
            chunks.next(b);
        }
        Ok(())
    }
}

/// `level`'s values combined by `op` in halves, pairwise (a fixed order).
fn pairwise(
    lowering: &mut Lowering<'_, '_>,
    mut level: Vec<Val>,
    op: lazyfuse_core::BinaryOp,
    dtype: DType,
) -> Result<Val, Unsupported> {
    while level.len() > 1 {
        let half = level.len() / 2;
        let mut next = Vec::with_capacity(half);
        for j in 0..half {
            next.push(lowering.binary(op, &level[j], &level[j + half], dtype)?);
        }
        level = next;
    }
    level.into_iter().next().ok_or("no accumulator")
}
