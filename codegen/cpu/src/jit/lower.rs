//! A kernel body as one Cranelift function: a loop over 128-bit vectors
//! (16 elements per iteration, one vector of every value at a time) and a
//! scalar loop for the last elements, with every value in a machine
//! register — one pass over memory.
//!
//! The function is `extern "C" fn(table, start, n, out, rows)`: `table[slot]`
//! points at slot `slot`'s element 0 of the chunk (windows: inputs, gathered
//! registers and outputs) or at its single value (scalar slots); it computes
//! elements `start..start + n`. The accumulate form repeats that for `rows`
//! consecutive lines, slot `s` moving `table[slots + s]` bytes from a line
//! to the next (the others take `rows` = 1).
//!
//! Values follow `core::semantics` exactly (no fused multiply-add; NaN
//! propagation of `minimum`/`maximum` as `a.is_nan() || a < b ? a : b`).
//! Bools are lane masks (all ones or zero) in the vector loop and 0/1 bytes
//! in the scalar loop; they are computed, never loaded or stored.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, BlockArg, InstBuilder, MemFlags, Type, Value};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use lazyfuse_core::{DType, ReduceOp};
use lazyfuse_fusion::{Body, Inst};
use smallvec::SmallVec;

use super::ops::{Lowering, Val};
use super::support::{
    check, is_float, mask_type, per_vector, scalar_type, vector_type, Unsupported,
};

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

/// What the function does with the body's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Stores the outputs.
    Map,
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
/// `(table, start, n, out)`.
pub fn emit(
    ctx: &mut Context,
    pointer: Type,
    shape: &Shape<'_>,
    form: Form,
) -> Result<(), Unsupported> {
    let lanes = check(shape.body, shape.outputs)?;
    let outputs: &[(usize, usize)] = match form {
        Form::Map => shape.outputs,
        Form::Reduce { .. } | Form::Accumulate { .. } => &[],
    };
    let accumulated = match form {
        Form::Accumulate { value, op } => Some((value, op)),
        _ => None,
    };
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
    let body = shape.body;
    // Groups of elements per iteration (see `Lowering`).
    let groups = ELEMENTS / lanes.group();

    // The accumulate form loops over lines: everything below runs once per
    // line `row`, whose slots are `row * stride` bytes further.
    let row_loop = accumulated.map(|_| {
        let head = b.create_block();
        b.append_block_param(head, types::I64);
        let line = b.create_block();
        b.append_block_param(line, types::I64);
        let done = b.create_block();
        (head, line, done)
    });
    let mut row = None;
    if let Some((head, line, done)) = row_loop {
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(head, &[BlockArg::Value(zero)]);
        b.switch_to_block(head);
        let r = b.block_params(head)[0];
        let more = b.ins().icmp(IntCC::UnsignedLessThan, r, rows);
        b.ins().brif(more, line, &[BlockArg::Value(r)], done, &[]);
        b.switch_to_block(line);
        row = Some(b.block_params(line)[0]);
    }

    // Pointers of windows at element `start`, and broadcast values.
    let mut bases: Vec<Option<Value>> = vec![None; body.len() + shape.outputs.len() + 1];
    let mut broadcast: Vec<Option<(Value, Val)>> = vec![None; body.len()];
    let word = pointer.bytes() as usize;
    let slot_pointer = |b: &mut FunctionBuilder<'_>, slot: usize| {
        let p = b.ins().load(pointer, flags, table, (slot * word) as i32);
        match row {
            Some(r) => {
                let stride =
                    b.ins()
                        .load(pointer, flags, table, ((shape.slots + slot) * word) as i32);
                let offset = b.ins().imul(r, stride);
                b.ins().iadd(p, offset)
            }
            None => p,
        }
    };
    let window = |b: &mut FunctionBuilder<'_>, slot: usize, dtype: DType| -> Value {
        let p = slot_pointer(b, slot);
        let offset = b.ins().imul_imm(start, dtype.size() as i64);
        b.ins().iadd(p, offset)
    };
    for (i, inst) in body.insts.iter().enumerate() {
        let dtype = body.dtypes[i];
        match inst {
            Inst::Arg(_) | Inst::Load(_) if matches!(inst, Inst::Arg(_)) || shape.scalar[i] => {
                let (st, vt) = (
                    scalar_type(dtype).ok_or("dtype")?,
                    vector_type(dtype).ok_or("dtype")?,
                );
                let p = slot_pointer(&mut b, i);
                let x = b.ins().load(st, flags, p, 0);
                let v = b.ins().splat(vt, x);
                broadcast[i] = Some((x, SmallVec::from_elem(v, 1)));
            }
            Inst::Load(_) | Inst::Iota(_) => bases[i] = Some(window(&mut b, i, dtype)),
            _ => {}
        }
    }
    for &(v, slot) in outputs {
        if bases.get(slot).is_none_or(Option::is_none) {
            let base = window(&mut b, slot, body.dtypes[v]);
            if let Some(entry) = bases.get_mut(slot) {
                *entry = Some(base);
            }
        }
    }

    // Accumulators of a reduction: `parts` vectors, then one scalar.
    let reduced = match form {
        Form::Reduce { value, op } => {
            let dtype = body
                .dtypes
                .get(value)
                .copied()
                .ok_or("a reduced value outside the body")?;
            let st = scalar_type(dtype).ok_or("dtype")?;
            let vt = vector_type(dtype).ok_or("dtype")?;
            let identity = b.ins().load(st, flags, out, 0);
            let splat = b.ins().splat(vt, identity);
            Some((value, op, dtype, st, vt, identity, splat))
        }
        Form::Map | Form::Accumulate { .. } => None,
    };
    // Float min/max in the vector loop: `acc < x ? x : acc` (one maxps or
    // minps, which keeps a NaN accumulator), and a mask of the lanes that
    // saw a NaN argument, turned into NaN at the end.
    let nan_masks = reduced.is_some_and(|(_, op, dtype, ..)| {
        is_float(dtype) && matches!(op, ReduceOp::Min | ReduceOp::Max)
    });
    // Accumulator vectors: 16 elements of the reduced value, `per_group`
    // vectors of them in each group.
    let parts = reduced.map_or(0, |(_, _, dtype, ..)| ELEMENTS / per_vector(dtype));
    let per_group = parts / groups;
    let mask_type = reduced.map_or(types::I32X4, |(_, _, dtype, ..)| mask_type(dtype));
    let vector_accs = reduced.map_or(0, |_| parts * if nan_masks { 2 } else { 1 });
    // A block's parameters: the element counter (but at the exit), the
    // vector accumulators and NaN masks, and the scalar accumulator.
    let params_of = |b: &mut FunctionBuilder<'_>, block, counter: bool, scalar: bool| {
        if counter {
            b.append_block_param(block, types::I64);
        }
        if let Some((_, _, _, st, vt, ..)) = reduced {
            for _ in 0..parts {
                b.append_block_param(block, vt);
            }
            if nan_masks {
                for _ in 0..parts {
                    b.append_block_param(block, mask_type);
                }
            }
            if scalar {
                b.append_block_param(block, st);
            }
        }
    };
    let args = |values: &[Value]| -> Vec<BlockArg> {
        values.iter().map(|v| BlockArg::Value(*v)).collect()
    };

    // The vector loop tests at its end (one branch per iteration).
    let step = ELEMENTS as i64;
    let vector_body = b.create_block();
    params_of(&mut b, vector_body, true, false);
    let scalar_head = b.create_block();
    params_of(&mut b, scalar_head, true, true);
    let scalar_body = b.create_block();
    params_of(&mut b, scalar_body, true, true);
    let exit = b.create_block();
    params_of(&mut b, exit, false, true);

    // The reduce form works in blocks of `rows` elements (`rows` = 0: one
    // block), storing one partial per block at `out[k]`: a call may cover
    // a whole chunk (no gaps between calls), and the partials keep the
    // pairwise summation's accuracy.
    let blocks = reduced.map(|_| {
        let head = b.create_block();
        b.append_block_param(head, types::I64);
        b.append_block_param(head, types::I64);
        let body = b.create_block();
        let done = b.create_block();
        (head, body, done)
    });
    let (zero, limit, block) = match blocks {
        Some((head, block_body, done)) => {
            let zero = b.ins().iconst(types::I64, 0);
            b.ins()
                .jump(head, &[BlockArg::Value(zero), BlockArg::Value(zero)]);
            b.switch_to_block(head);
            let (bs, k) = (b.block_params(head)[0], b.block_params(head)[1]);
            let more = b.ins().icmp(IntCC::UnsignedLessThan, bs, n);
            b.ins().brif(more, block_body, &[], done, &[]);
            b.switch_to_block(block_body);
            let whole = b.ins().icmp_imm(IntCC::Equal, rows, 0);
            let len = b.ins().select(whole, n, rows);
            let be = b.ins().iadd(bs, len);
            let past = b.ins().icmp(IntCC::UnsignedGreaterThan, be, n);
            let be = b.ins().select(past, n, be);
            (bs, be, Some((head, done, be, k)))
        }
        None => (b.ins().iconst(types::I64, 0), n, None),
    };
    let mut first = vec![zero];
    let mut first_scalar = vec![zero];
    if let Some((.., identity, splat)) = reduced {
        first.extend(std::iter::repeat_n(splat, parts));
        if nan_masks {
            let lane = if mask_type == types::I32X4 {
                types::I32
            } else {
                types::I64
            };
            let zero = b.ins().iconst(lane, 0);
            let none = b.ins().splat(mask_type, zero);
            first.extend(std::iter::repeat_n(none, parts));
        }
        first_scalar.extend(first[1..].iter().copied());
        first_scalar.push(identity);
    }
    let first_end = b.ins().iadd_imm(zero, step);
    let fits = b
        .ins()
        .icmp(IntCC::UnsignedLessThanOrEqual, first_end, limit);
    b.ins().brif(
        fits,
        vector_body,
        &args(&first),
        scalar_head,
        &args(&first_scalar),
    );

    b.switch_to_block(vector_body);
    let block_params = b.block_params(vector_body).to_vec();
    let i = block_params[0];
    // One vector at a time through the whole body: only one vector of
    // each value is live at once (all of them at once spill registers).
    let mut combined: Vec<Value> = Vec::new();
    let mut masks_out: Vec<Value> = Vec::new();
    let mut pending: Option<Val> = None;
    for g in 0..groups {
        let mut lowering = Lowering {
            b: &mut b,
            body,
            lanes,
            vector: true,
            group: g,
            flags,
        };
        let values = lowering.iteration(i, &bases, &broadcast, outputs)?;
        if let Some((value, op)) = accumulated {
            lowering.accumulate(out, i, value, op, &values[value])?;
        }
        if let Some((value, op, dtype, ..)) = reduced {
            for (v, &x) in values[value].iter().enumerate().take(per_group) {
                let p = g * per_group + v;
                let acc: Val = SmallVec::from_elem(block_params[1 + p], 1);
                let x: Val = SmallVec::from_elem(x, 1);
                if nan_masks {
                    combined.extend(lowering.min_max(op, &acc, &x, dtype)?);
                    // One unordered compare tests two vectors: NaN lanes of
                    // the pair mark the even vector's mask (any NaN lane
                    // makes the result NaN); odd vectors' masks stay.
                    let mask: Val = SmallVec::from_elem(block_params[1 + parts + p], 1);
                    match pending.take() {
                        None => pending = Some(x),
                        Some(previous) => {
                            let nan = lowering.fcmp(FloatCC::Unordered, &previous, &x);
                            let even: Val = SmallVec::from_elem(block_params[parts + p], 1);
                            masks_out.extend(lowering.or(&even, &nan));
                            masks_out.extend(mask);
                        }
                    }
                } else {
                    combined.extend(lowering.binary(op.combiner(), &acc, &x, dtype)?);
                }
            }
        }
    }
    let mut next_args = combined;
    next_args.extend(masks_out);
    let next = b.ins().iadd_imm(i, step);
    let end = b.ins().iadd_imm(i, 2 * step);
    let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, limit);
    let mut again = vec![next];
    again.extend(&next_args);
    let mut leave = again.clone();
    if let Some((.., identity, _)) = reduced {
        leave.push(identity);
    }
    b.ins()
        .brif(fits, vector_body, &args(&again), scalar_head, &args(&leave));

    b.switch_to_block(scalar_head);
    let head = b.block_params(scalar_head).to_vec();
    let more = b.ins().icmp(IntCC::UnsignedLessThan, head[0], limit);
    b.ins()
        .brif(more, scalar_body, &args(&head), exit, &args(&head[1..]));

    b.switch_to_block(scalar_body);
    let mut current = b.block_params(scalar_body).to_vec();
    let i = current[0];
    let mut lowering = Lowering {
        b: &mut b,
        body,
        lanes,
        vector: false,
        group: 0,
        flags,
    };
    let values = lowering.iteration(i, &bases, &broadcast, outputs)?;
    if let Some((value, op)) = accumulated {
        lowering.accumulate(out, i, value, op, &values[value])?;
    }
    if let Some((value, op, dtype, ..)) = reduced {
        let acc: Val = SmallVec::from_elem(current[1 + vector_accs], 1);
        let combined = lowering.binary(op.combiner(), &acc, &values[value], dtype)?;
        current[1 + vector_accs] = combined[0];
    }
    current[0] = b.ins().iadd_imm(i, 1);
    b.ins().jump(scalar_head, &args(&current));

    // After each line of the accumulate form, the next line.
    if let (Some((head, _, done)), Some(r)) = (row_loop, row) {
        b.switch_to_block(exit);
        let next = b.ins().iadd_imm(r, 1);
        b.ins().jump(head, &[BlockArg::Value(next)]);
        b.switch_to_block(done);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize();
        return Ok(());
    }

    b.switch_to_block(exit);
    if let Some((_, op, dtype, ..)) = reduced {
        let accs: Vec<Value> = b.block_params(exit).to_vec();
        // The vectors, then their lanes, pairwise (a fixed order), then
        // the scalar loop's accumulator.
        let mut lowering = Lowering {
            b: &mut b,
            body,
            lanes,
            vector: true,
            group: 0,
            flags,
        };
        let mut level: Vec<Val> = accs[..parts]
            .iter()
            .map(|&v| SmallVec::from_elem(v, 1))
            .collect();
        if nan_masks {
            // Lanes that saw a NaN become NaN (the quiet NaN of `f32::NAN`
            // or `f64::NAN`).
            let little = MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
            let vt = vector_type(dtype).ok_or("dtype")?;
            let nan = lowering.constant(dtype, f64::NAN, vt)[0];
            for (acc, &mask) in level.iter_mut().zip(&accs[parts..2 * parts]) {
                let mask = lowering.b.ins().bitcast(vt, little, mask);
                acc[0] = lowering.b.ins().bitselect(mask, nan, acc[0]);
            }
        }
        while level.len() > 1 {
            let half = level.len() / 2;
            let mut next = Vec::with_capacity(half);
            for j in 0..half {
                next.push(lowering.binary(op.combiner(), &level[j], &level[j + half], dtype)?);
            }
            level = next;
        }
        let vector = level
            .first()
            .and_then(|v| v.first().copied())
            .ok_or("no accumulator")?;
        lowering.vector = false;
        let mut lanes_level: Vec<Val> = (0..per_vector(dtype))
            .map(|l| SmallVec::from_elem(lowering.b.ins().extractlane(vector, l as u8), 1))
            .collect();
        while lanes_level.len() > 1 {
            let half = lanes_level.len() / 2;
            let mut next = Vec::with_capacity(half);
            for j in 0..half {
                next.push(lowering.binary(
                    op.combiner(),
                    &lanes_level[j],
                    &lanes_level[j + half],
                    dtype,
                )?);
            }
            lanes_level = next;
        }
        let scalar: Val = SmallVec::from_elem(accs[vector_accs], 1);
        let total = lowering.binary(op.combiner(), &lanes_level[0], &scalar, dtype)?;
        if let Some((head, done, be, k)) = block {
            let at = b.ins().imul_imm(k, dtype.size() as i64);
            let at = b.ins().iadd(out, at);
            b.ins().store(flags, total[0], at, 0);
            let next = b.ins().iadd_imm(k, 1);
            b.ins()
                .jump(head, &[BlockArg::Value(be), BlockArg::Value(next)]);
            b.switch_to_block(done);
        } else {
            b.ins().store(flags, total[0], out, 0);
        }
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize();
    Ok(())
}
