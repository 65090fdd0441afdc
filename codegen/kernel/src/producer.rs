//! An element-wise fused launch computed inside another kernel: the fused
//! body of a scan's producer (`ScanLaunch::producer`) replayed on this
//! crate's builder for one flat element index, so that the scan kernels
//! read the producer's inputs instead of a materialised buffer.
//!
//! An input's element for flat index `at` is `offset + at` when the input
//! is read contiguously over the domain, `offset` when it is one broadcast
//! element, and otherwise `offset + Σ coordinate_d * stride_d` with the
//! coordinates unravelled from `at` (broadcast rows, transposes, slices).
//! Bodies with operations the builder has no words for (bitcasts) keep the
//! producer as a launch.

use lazyfuse_core::shape::contiguous_strides;
use lazyfuse_core::{DType, Literal, Scalar, Wide};
use lazyfuse_fusion::{Inst, Launch};

use crate::launch::ArgValue;
use crate::{ArrayParam, KernelScope, Val};

/// A producer launch that can be replayed, with how each input is read.
#[derive(Clone, Debug)]
pub(crate) struct Producer<'a> {
    launch: &'a Launch,
    reads: Vec<Read>,
}

/// How an input's element for flat index `at` is found.
#[derive(Clone, Debug)]
enum Read {
    /// `offset + at`.
    Contiguous(usize),
    /// Element `offset`, for every `at`.
    Broadcast(usize),
    /// `offset + Σ ((at / inner) % extent) * stride` over the dimensions
    /// that move (extent above 1, stride not 0).
    Strided(usize, Vec<(usize, usize, isize)>),
}

/// The parameters a kernel declared for a producer.
pub(crate) struct Declared {
    arrays: Vec<Option<ArrayParam>>,
    args: Vec<Val>,
}

impl<'a> Producer<'a> {
    /// The producer of `launch` when it can be replayed (see the module).
    pub(crate) fn of(launch: &'a Launch) -> Option<Producer<'a>> {
        let kernel = &launch.kernel;
        if kernel.reduction.is_some() || kernel.outputs.len() != 1 {
            return None;
        }
        let replayable = kernel.body.insts.iter().all(|inst| {
            matches!(
                inst,
                Inst::Load(_)
                    | Inst::Iota(_)
                    | Inst::Arg(_)
                    | Inst::Unary(..)
                    | Inst::Binary(..)
                    | Inst::Select(..)
                    | Inst::Cast(_)
            )
        });
        let dense = contiguous_strides(&launch.domain);
        let reads = launch
            .inputs
            .iter()
            .map(|input| {
                let dims = (input.strides.iter().zip(&dense).zip(&launch.domain))
                    .filter(|((&stride, _), &extent)| extent > 1 && stride != 0)
                    .map(|((&stride, &inner), &extent)| (inner, extent, stride));
                let moving: Vec<(usize, usize, isize)> = dims.collect();
                let contiguous = moving.len() == launch.domain.iter().filter(|&&n| n > 1).count()
                    && moving
                        .iter()
                        .all(|&(inner, _, stride)| stride == inner as isize);
                if moving.is_empty() {
                    Read::Broadcast(input.offset)
                } else if contiguous {
                    Read::Contiguous(input.offset)
                } else {
                    Read::Strided(input.offset, moving)
                }
            })
            .collect();
        replayable.then_some(Producer { launch, reads })
    }

    /// A name part that tells producers apart (their structure).
    pub(crate) fn tag(&self) -> String {
        format!("{:016x}", self.launch.kernel.structural_hash())
    }

    /// Declares the producer's buffers (`in<k>`) and scalars (`arg<k>`),
    /// in the order [`Producer::launch_args`] gives their values.
    pub(crate) fn declare(&self, k: &mut KernelScope) -> Declared {
        let kernel = &self.launch.kernel;
        let arrays = (kernel.inputs.iter().enumerate())
            .map(|(i, input)| {
                let read = self.launch.inputs[i].buffer.is_some();
                read.then(|| k.array(&format!("in{i}"), input.dtype, 1))
            })
            .collect();
        let args = (kernel.args.iter().enumerate())
            .map(|(i, &dtype)| k.scalar(&format!("arg{i}"), dtype))
            .collect();
        Declared { arrays, args }
    }

    /// The argument values of the declared parameters: the input buffers'
    /// shapes (flat) and the scalars. `lens[i]` is input `i`'s element count.
    pub(crate) fn launch_args<'s>(&self, lens: &'s [[usize; 1]]) -> Vec<ArgValue<'s>> {
        let kernel = &self.launch.kernel;
        let arrays = (kernel.inputs.iter().zip(lens).enumerate())
            .filter(|(i, _)| self.launch.inputs[*i].buffer.is_some())
            .map(|(_, (input, len))| ArgValue::Array {
                dtype: input.dtype,
                shape: len,
            });
        let scalars = self
            .launch
            .args
            .iter()
            .map(|&a| ArgValue::Scalar(scalar(a)));
        arrays.chain(scalars).collect()
    }

    /// The producer's value at flat index `at`, computed in `k` (each
    /// intermediate value in a register, as the fused kernel would).
    pub(crate) fn element(&self, k: &mut KernelScope, declared: &Declared, at: &Val) -> Val {
        let body = &self.launch.kernel.body;
        let mut values: Vec<Val> = Vec::with_capacity(body.insts.len());
        for (i, inst) in body.insts.iter().enumerate() {
            let dtype = body.dtypes[i];
            let index = |input: usize| match &self.reads[input] {
                Read::Contiguous(offset) => at + Val::from(*offset as i64),
                Read::Broadcast(offset) => Val::from(*offset as i64),
                Read::Strided(offset, dims) => dims.iter().fold(
                    Val::from(*offset as i64),
                    |sum, &(inner, extent, stride)| {
                        let coordinate =
                            at.floor_div(Val::from(inner as i64)) % Val::from(extent as i64);
                        sum + coordinate * Val::from(stride as i64)
                    },
                ),
            };
            let value = match inst {
                Inst::Load(input) => match &declared.arrays[*input as usize] {
                    Some(array) => array.at(index(*input as usize)),
                    None => Val::constant(0.0, dtype),
                },
                Inst::Iota(input) => index(*input as usize),
                Inst::Arg(arg) => declared.args[*arg as usize].clone(),
                Inst::Unary(op, a) => values[a.index()].apply(*op),
                Inst::Binary(op, a, b) => values[a.index()].apply_binary(*op, &values[b.index()]),
                Inst::Select(c, a, b) => {
                    Val::select(&values[c.index()], &values[a.index()], &values[b.index()])
                }
                Inst::Cast(a) => values[a.index()].cast(dtype),
                // `of` admits no other instruction.
                _ => Val::constant(0.0, dtype),
            };
            values.push(k.let_(value));
        }
        values.swap_remove(self.launch.kernel.outputs[0].index())
    }
}

/// A launch's scalar argument as a kernel scalar.
fn scalar(literal: Literal) -> Scalar {
    match literal.to_wide() {
        Wide::Int(v) if literal.dtype() == DType::Bool => Scalar::Bool(v != 0),
        Wide::Int(v) => Scalar::Int(v),
        Wide::Float(v) => Scalar::Float(v),
    }
}
