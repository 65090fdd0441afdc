//! The scaffolding of a generated function: the table of slot pointers,
//! the loops over lines, blocks and elements, and the reduce form's
//! accumulators.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlags, Type, Value};
use cranelift_frontend::FunctionBuilder;
use lazyfuse_core::{DType, ReduceOp};
use lazyfuse_fusion::{Body, Inst};
use smallvec::SmallVec;

use crate::reduce_table::{cpu_reduce, CpuReduce};

use super::super::ops::Val;
use super::super::support::{
    is_float, mask_type, per_vector, scalar_type, vector_type, Unsupported,
};
use super::{Shape, ELEMENTS};

/// The accumulate form's loop over lines: everything else runs once per
/// line `row`, whose slots are `row * stride` bytes further.
#[derive(Clone, Copy)]
pub(super) struct RowLoop {
    head: Block,
    done: Block,
    pub(super) row: Value,
}

impl RowLoop {
    /// Opens the loop over `rows` lines; the builder is left in its body.
    pub(super) fn open(b: &mut FunctionBuilder<'_>, rows: Value) -> RowLoop {
        let head = b.create_block();
        b.append_block_param(head, types::I64);
        let line = b.create_block();
        b.append_block_param(line, types::I64);
        let done = b.create_block();
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(head, &[BlockArg::Value(zero)]);
        b.switch_to_block(head);
        let r = b.block_params(head)[0];
        let more = b.ins().icmp(IntCC::UnsignedLessThan, r, rows);
        b.ins().brif(more, line, &[BlockArg::Value(r)], done, &[]);
        b.switch_to_block(line);
        let row = b.block_params(line)[0];
        RowLoop { head, done, row }
    }

    /// After a line (the current block), the next line; the function
    /// returns after the last.
    pub(super) fn close(self, b: &mut FunctionBuilder<'_>) {
        let next = b.ins().iadd_imm(self.row, 1);
        b.ins().jump(self.head, &[BlockArg::Value(next)]);
        b.switch_to_block(self.done);
        b.ins().return_(&[]);
    }
}

/// The table of slot pointers the function reads its windows from.
pub(super) struct Table {
    pub(super) pointer: Type,
    pub(super) table: Value,
    pub(super) start: Value,
    /// The accumulate form's line (its slots move by their strides).
    pub(super) row: Option<Value>,
    pub(super) slots: usize,
    pub(super) flags: MemFlags,
}

/// Where the loops find each value: `bases[i]`, the pointer of its window
/// at element `start` (loads, generated positions, outputs); or
/// `broadcast[i]`, its single value and that value in every lane.
pub(super) type Bases = Vec<Option<Value>>;
pub(super) type Broadcast = Vec<Option<(Value, Val)>>;

impl Table {
    /// Slot `slot`'s pointer on the current line.
    pub(super) fn slot(&self, b: &mut FunctionBuilder<'_>, slot: usize) -> Value {
        let word = self.pointer.bytes() as usize;
        let p = b
            .ins()
            .load(self.pointer, self.flags, self.table, (slot * word) as i32);
        match self.row {
            Some(r) => {
                let at = ((self.slots + slot) * word) as i32;
                let stride = b.ins().load(self.pointer, self.flags, self.table, at);
                let offset = b.ins().imul(r, stride);
                b.ins().iadd(p, offset)
            }
            None => p,
        }
    }

    /// Slot `slot`'s window of `dtype` elements, at element `start`.
    pub(super) fn window(&self, b: &mut FunctionBuilder<'_>, slot: usize, dtype: DType) -> Value {
        let p = self.slot(b, slot);
        let offset = b.ins().imul_imm(self.start, dtype.size() as i64);
        b.ins().iadd(p, offset)
    }

    /// The windows and broadcast values of the body's leaves and of the
    /// `outputs`' slots.
    pub(super) fn bind_leaves(
        &self,
        b: &mut FunctionBuilder<'_>,
        shape: &Shape<'_>,
        outputs: &[(usize, usize)],
    ) -> Result<(Bases, Broadcast), Unsupported> {
        let body = shape.body;
        let mut bases: Bases = vec![None; body.len() + shape.outputs.len() + 1];
        let mut broadcast: Broadcast = vec![None; body.len()];
        for (i, inst) in body.insts.iter().enumerate() {
            let dtype = body.dtypes[i];
            match inst {
                Inst::Arg(_) | Inst::Load(_) if matches!(inst, Inst::Arg(_)) || shape.scalar[i] => {
                    let (st, vt) = (
                        scalar_type(dtype).ok_or("dtype")?,
                        vector_type(dtype).ok_or("dtype")?,
                    );
                    let p = self.slot(b, i);
                    let x = b.ins().load(st, self.flags, p, 0);
                    let v = b.ins().splat(vt, x);
                    broadcast[i] = Some((x, SmallVec::from_elem(v, 1)));
                }
                Inst::Load(_) | Inst::Iota(_) => bases[i] = Some(self.window(b, i, dtype)),
                _ => {}
            }
        }
        for &(v, slot) in outputs {
            if bases.get(slot).is_none_or(Option::is_none) {
                let base = self.window(b, slot, body.dtypes[v]);
                if let Some(entry) = bases.get_mut(slot) {
                    *entry = Some(base);
                }
            }
        }
        Ok((bases, broadcast))
    }
}

/// The reduce form's accumulators: `parts` vectors (and as many NaN masks),
/// then one scalar.
#[derive(Clone, Copy)]
pub(super) struct Reduced {
    pub(super) value: usize,
    pub(super) op: ReduceOp,
    pub(super) dtype: DType,
    scalar: Type,
    pub(super) vector: Type,
    /// The starting value (the identity at the fourth argument), and that
    /// value in every lane.
    pub(super) identity: Value,
    splat: Value,
    /// Float min/max in the vector loop: `acc < x ? x : acc` (one maxps or
    /// minps, which keeps a NaN accumulator), and a mask of the lanes that
    /// saw a NaN argument, turned into NaN at the end.
    pub(super) nan_masks: bool,
    /// Accumulator vectors: 16 elements of the reduced value.
    pub(super) parts: usize,
    mask_type: Type,
}

impl Reduced {
    /// The accumulators of `value` combined by `op`, starting from `*out`.
    pub(super) fn load(
        b: &mut FunctionBuilder<'_>,
        body: &Body,
        value: usize,
        op: ReduceOp,
        out: Value,
        flags: MemFlags,
    ) -> Result<Reduced, Unsupported> {
        let dtype = body
            .dtypes
            .get(value)
            .copied()
            .ok_or("a reduced value outside the body")?;
        let scalar = scalar_type(dtype).ok_or("dtype")?;
        let vector = vector_type(dtype).ok_or("dtype")?;
        let identity = b.ins().load(scalar, flags, out, 0);
        let splat = b.ins().splat(vector, identity);
        Ok(Reduced {
            value,
            op,
            dtype,
            scalar,
            vector,
            identity,
            splat,
            nan_masks: is_float(dtype) && matches!(cpu_reduce(op), CpuReduce::Extreme { .. }),
            parts: ELEMENTS / per_vector(dtype),
            mask_type: mask_type(dtype),
        })
    }

    /// Vector accumulators and NaN masks.
    pub(super) fn vector_accs(&self) -> usize {
        self.parts * if self.nan_masks { 2 } else { 1 }
    }

    /// The vector loop's first accumulators: the identity, and no NaN seen.
    pub(super) fn first(&self, b: &mut FunctionBuilder<'_>) -> Vec<Value> {
        let mut first = vec![self.splat; self.parts];
        if self.nan_masks {
            let lane = if self.mask_type == types::I32X4 {
                types::I32
            } else {
                types::I64
            };
            let zero = b.ins().iconst(lane, 0);
            let none = b.ins().splat(self.mask_type, zero);
            first.extend(std::iter::repeat_n(none, self.parts));
        }
        first
    }
}

/// The reduce form's loop over blocks of `rows` elements (`rows` = 0: one
/// block), storing one partial per block at `out[k]`: a call may cover a
/// whole chunk (no gaps between calls), and the partials keep the pairwise
/// summation's accuracy.
#[derive(Clone, Copy)]
pub(super) struct Chunks {
    head: Block,
    done: Block,
    /// The current block's end, and its partial's index.
    end: Value,
    k: Value,
}

impl Chunks {
    /// Opens the loop over the blocks of `n` elements; returns the current
    /// block's first element and end, the builder in its body.
    pub(super) fn open(
        b: &mut FunctionBuilder<'_>,
        n: Value,
        rows: Value,
    ) -> (Value, Value, Chunks) {
        let head = b.create_block();
        b.append_block_param(head, types::I64);
        b.append_block_param(head, types::I64);
        let body = b.create_block();
        let done = b.create_block();
        let zero = b.ins().iconst(types::I64, 0);
        b.ins()
            .jump(head, &[BlockArg::Value(zero), BlockArg::Value(zero)]);
        b.switch_to_block(head);
        let (first, k) = (b.block_params(head)[0], b.block_params(head)[1]);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, first, n);
        b.ins().brif(more, body, &[], done, &[]);
        b.switch_to_block(body);
        let whole = b.ins().icmp_imm(IntCC::Equal, rows, 0);
        let len = b.ins().select(whole, n, rows);
        let end = b.ins().iadd(first, len);
        let past = b.ins().icmp(IntCC::UnsignedGreaterThan, end, n);
        let end = b.ins().select(past, n, end);
        (first, end, Chunks { head, done, end, k })
    }

    /// Where the block's partial goes: `out[k]`.
    pub(super) fn partial(&self, b: &mut FunctionBuilder<'_>, out: Value, dtype: DType) -> Value {
        let at = b.ins().imul_imm(self.k, dtype.size() as i64);
        b.ins().iadd(out, at)
    }

    /// Goes on with the next block; the builder is left after the last.
    pub(super) fn next(self, b: &mut FunctionBuilder<'_>) {
        let next = b.ins().iadd_imm(self.k, 1);
        b.ins().jump(
            self.head,
            &[BlockArg::Value(self.end), BlockArg::Value(next)],
        );
        b.switch_to_block(self.done);
    }
}

/// The blocks of the element loops. Each takes the element counter (but
/// the exit), the vector accumulators and NaN masks, and (the scalar loop
/// and the exit) the scalar accumulator.
pub(super) struct Loops {
    /// The wide loop of bodies with calls (`WIDE` vector iterations an
    /// iteration, so that each call covers that many elements), which
    /// tests at its end and leaves to the vector loop's head.
    pub(super) wide_body: Option<Block>,
    /// Enters the vector loop when an iteration fits, else the scalar loop.
    pub(super) vector_head: Block,
    /// The vector loop, which tests at its end (one branch per iteration).
    pub(super) vector_body: Block,
    pub(super) scalar_head: Block,
    pub(super) scalar_body: Block,
    pub(super) exit: Block,
}

impl Loops {
    pub(super) fn create(
        b: &mut FunctionBuilder<'_>,
        reduced: Option<&Reduced>,
        wide: bool,
    ) -> Loops {
        let mut block = |counter: bool, scalar: bool| {
            let block = b.create_block();
            if counter {
                b.append_block_param(block, types::I64);
            }
            if let Some(r) = reduced {
                for _ in 0..r.parts {
                    b.append_block_param(block, r.vector);
                }
                if r.nan_masks {
                    for _ in 0..r.parts {
                        b.append_block_param(block, r.mask_type);
                    }
                }
                if scalar {
                    b.append_block_param(block, r.scalar);
                }
            }
            block
        };
        Loops {
            wide_body: wide.then(|| block(true, false)),
            vector_head: block(true, false),
            vector_body: block(true, false),
            scalar_head: block(true, true),
            scalar_body: block(true, true),
            exit: block(false, true),
        }
    }

    /// Enters the wide loop at `first` when one of its iterations (`wide`
    /// elements) fits before `limit`, else the vector loop's head; fills
    /// that head.
    pub(super) fn enter(
        &self,
        b: &mut FunctionBuilder<'_>,
        reduced: Option<&Reduced>,
        first: Value,
        limit: Value,
        wide: usize,
    ) {
        let mut vector = vec![first];
        if let Some(r) = reduced {
            vector.extend(r.first(b));
        }
        match self.wide_body {
            Some(wide_body) => {
                let first_end = b.ins().iadd_imm(first, wide as i64);
                let fits = b
                    .ins()
                    .icmp(IntCC::UnsignedLessThanOrEqual, first_end, limit);
                let vector = args(&vector);
                b.ins()
                    .brif(fits, wide_body, &vector, self.vector_head, &vector);
            }
            None => {
                b.ins().jump(self.vector_head, &args(&vector));
            }
        }
        b.switch_to_block(self.vector_head);
        let vector = b.block_params(self.vector_head).to_vec();
        let mut scalar = vector.clone();
        if let Some(r) = reduced {
            scalar.push(r.identity);
        }
        let first_end = b.ins().iadd_imm(vector[0], ELEMENTS as i64);
        let fits = b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, first_end, limit);
        b.ins().brif(
            fits,
            self.vector_body,
            &args(&vector),
            self.scalar_head,
            &args(&scalar),
        );
    }
}

pub(super) fn args(values: &[Value]) -> Vec<BlockArg> {
    values.iter().map(|v| BlockArg::Value(*v)).collect()
}
