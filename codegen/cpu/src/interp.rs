//! Executes one kernel launch over host buffers, chunk by chunk (numexpr's
//! idea): the domain is walked in lines along its innermost (merged)
//! dimension, each line in chunks of `CHUNK` elements, and every body value
//! of a chunk is a short buffer, so temporaries stay in cache.
//!
//! Reductions walk the domain with the reduced axes innermost; each run of
//! reduced elements is reduced pairwise, runs are combined by a binary
//! counter (pairwise again), so float error grows with log n and the result
//! does not depend on chunking or threads.

use lazyfuse_core::reference::kernels;
use lazyfuse_core::{with_buffer, DType, Element, Error, HostBuffer, Literal, Result};
use lazyfuse_fusion::{Body, CombineIr, FusedKernel, Inst, Launch, ReductionIr};
use smallvec::SmallVec;

/// Elements per chunk: a few KiB per temporary.
pub const CHUNK: usize = 2048;

/// A kernel's inputs resolved to memory (`None` for iota inputs).
pub type Inputs<'a> = [Option<&'a HostBuffer>];

fn internal(message: impl Into<String>) -> Error {
    Error::internal("cpu kernel", message)
}

/// The iteration space: extents and per-input strides, innermost last.
pub(crate) struct Space {
    pub(crate) extents: SmallVec<[usize; 4]>,
    pub(crate) strides: Vec<SmallVec<[isize; 4]>>,
    pub(crate) offsets: Vec<isize>,
}

impl Space {
    /// `order` lists domain axes outermost first; adjacent axes that every
    /// input walks contiguously are merged.
    pub(crate) fn new(launch: &Launch, order: &[usize]) -> Space {
        Space::merged(launch, order, None)
    }

    /// The domain in its own order, adjacent axes merged except into
    /// `axis`: lines are (at most) the axes from `axis` on, so that a
    /// leading-axes reduction walks whole rows of its kept axes.
    pub(crate) fn rows_from(launch: &Launch, axis: usize) -> Space {
        let order: Vec<usize> = (0..launch.domain.len()).collect();
        Space::merged(launch, &order, Some(axis))
    }

    fn merged(launch: &Launch, order: &[usize], boundary: Option<usize>) -> Space {
        let mut extents: SmallVec<[usize; 4]> = SmallVec::new();
        let mut strides: Vec<SmallVec<[isize; 4]>> = vec![SmallVec::new(); launch.inputs.len()];
        // The boundary holds until an axis past it (not of length 1) starts a line.
        let mut boundary = boundary;
        for &axis in order {
            let extent = launch.domain[axis];
            let at_boundary = boundary.is_some_and(|b| axis >= b);
            let mergeable = !extents.is_empty()
                && !at_boundary
                && launch.inputs.iter().zip(&strides).all(|(binding, s)| {
                    s.last().copied() == Some(binding.strides[axis] * extent as isize)
                });
            if extent == 1 && !extents.is_empty() {
                continue;
            }
            if at_boundary {
                boundary = None;
            }
            if mergeable {
                if let Some(last) = extents.last_mut() {
                    *last *= extent;
                }
                for (binding, s) in launch.inputs.iter().zip(strides.iter_mut()) {
                    if let Some(last) = s.last_mut() {
                        *last = binding.strides[axis];
                    }
                }
            } else {
                extents.push(extent);
                for (binding, s) in launch.inputs.iter().zip(strides.iter_mut()) {
                    s.push(binding.strides[axis]);
                }
            }
        }
        if extents.is_empty() {
            extents.push(1);
            for s in strides.iter_mut() {
                s.push(0);
            }
        }
        let offsets = launch.inputs.iter().map(|b| b.offset as isize).collect();
        Space {
            extents,
            strides,
            offsets,
        }
    }

    /// The domain in its own order (outermost first), adjacent axes merged.
    pub(crate) fn natural(launch: &Launch) -> Space {
        let order: Vec<usize> = (0..launch.domain.len()).collect();
        Space::new(launch, &order)
    }

    pub(crate) fn line_len(&self) -> usize {
        self.extents.last().copied().unwrap_or(1)
    }

    pub(crate) fn lines(&self) -> usize {
        self.extents[..self.extents.len() - 1].iter().product()
    }

    /// Element offset of every input at the start of line `line`.
    pub(crate) fn bases(&self, line: usize) -> Vec<isize> {
        let outer = &self.extents[..self.extents.len() - 1];
        let mut rest = line;
        let mut index: SmallVec<[usize; 4]> = SmallVec::from_elem(0, outer.len());
        for (slot, &extent) in index.iter_mut().zip(outer).rev() {
            *slot = rest % extent;
            rest /= extent;
        }
        self.strides
            .iter()
            .zip(&self.offsets)
            .map(|(s, &o)| {
                o + index
                    .iter()
                    .zip(s.iter())
                    .map(|(&i, st)| i as isize * st)
                    .sum::<isize>()
            })
            .collect()
    }

    /// The outer indices of line `line` (outermost first).
    pub(crate) fn line_index(&self, line: usize) -> SmallVec<[usize; 4]> {
        let outer = &self.extents[..self.extents.len() - 1];
        let mut rest = line;
        let mut index: SmallVec<[usize; 4]> = SmallVec::from_elem(0, outer.len());
        for (slot, &extent) in index.iter_mut().zip(outer).rev() {
            *slot = rest % extent;
            rest /= extent;
        }
        index
    }

    /// Moves `index` and the inputs' `bases` from a line to the next one.
    pub(crate) fn next_line(&self, index: &mut [usize], bases: &mut [isize]) {
        for d in (0..index.len()).rev() {
            index[d] += 1;
            let wrap = index[d] == self.extents[d];
            for (base, strides) in bases.iter_mut().zip(&self.strides) {
                *base += strides[d];
                if wrap {
                    *base -= self.extents[d] as isize * strides[d];
                }
            }
            if !wrap {
                return;
            }
            index[d] = 0;
        }
    }

    /// Stride of `input` from a line to the next one along the innermost
    /// outer axis (0 in a space of one line).
    pub(crate) fn line_step(&self, input: usize) -> isize {
        let strides = &self.strides[input];
        match strides.len() {
            0 | 1 => 0,
            n => strides[n - 2],
        }
    }

    /// Lines from `line` to the end of its run along the innermost outer
    /// axis: consecutive lines whose inputs move by [`Space::line_step`].
    pub(crate) fn lines_in_run(&self, line: usize) -> usize {
        match self.extents.len() {
            0 | 1 => 1,
            n => self.extents[n - 2] - line % self.extents[n - 2],
        }
    }

    /// Stride of `input` along the line.
    pub(crate) fn inner_stride(&self, input: usize) -> isize {
        self.strides[input].last().copied().unwrap_or(0)
    }

    /// Element offset of `input` at position `offset` of a line starting at `bases`.
    pub(crate) fn at(&self, bases: &[isize], input: usize, offset: usize) -> isize {
        bases[input] + offset as isize * self.inner_stride(input)
    }
}

/// True when `len` reads from `base`, `stride` apart, stay inside `size` elements.
pub(crate) fn in_bounds(base: isize, stride: isize, len: usize, size: usize) -> bool {
    let last = base + stride * (len.max(1) as isize - 1);
    base >= 0 && last >= 0 && (base as usize) < size && (last as usize) < size
}

/// Reads `len` elements of `input` starting at `base`, `stride` apart.
fn load(buffer: &HostBuffer, base: isize, stride: isize, len: usize) -> Result<HostBuffer> {
    // A one-element buffer is read as a broadcast scalar, whatever the strides.
    let (base, stride) = if buffer.len() == 1 {
        (0, 0)
    } else {
        (base, stride)
    };
    if !in_bounds(base, stride, len, buffer.len()) {
        return Err(internal("a read outside an input"));
    }
    let index = |i: usize| (base + i as isize * stride) as usize;
    Ok(with_buffer!(buffer, v => {
        if stride == 0 {
            Element::into_buffer(vec![v[index(0)]])
        } else if stride == 1 {
            Element::into_buffer(v[index(0)..index(0) + len].to_vec())
        } else {
            Element::into_buffer((0..len).map(|i| v[index(i)]).collect::<Vec<_>>())
        }
    }))
}

/// Evaluates `body` over `len` elements; `leaf` supplies loads, iotas,
/// arguments and parameters. Returns every value (later ones may be dropped
/// early by the caller's needs; bodies are small).
fn eval(
    body: &Body,
    len: usize,
    args: &[Literal],
    mut leaf: impl FnMut(&Inst) -> Result<HostBuffer>,
) -> Result<Vec<HostBuffer>> {
    let mut values: Vec<HostBuffer> = Vec::with_capacity(body.len());
    for (inst, &dtype) in body.insts.iter().zip(&body.dtypes) {
        let get = |v: &lazyfuse_fusion::ValueId| {
            values
                .get(v.index())
                .ok_or_else(|| internal("operand out of order"))
        };
        let value = match inst {
            Inst::Arg(k) => HostBuffer::filled(
                *args
                    .get(*k as usize)
                    .ok_or_else(|| internal("missing argument"))?,
                1,
            ),
            Inst::Unary(op, a) => match super::vmath::buffer(*op, get(a)?) {
                Some(value) => value,
                None => {
                    kernels::elementwise(&lazyfuse_core::Op::Unary(*op), dtype, &[get(a)?], len)?
                }
            },
            Inst::Binary(op, a, b) => kernels::elementwise(
                &lazyfuse_core::Op::Binary(*op),
                dtype,
                &[get(a)?, get(b)?],
                len,
            )?,
            Inst::Select(c, a, b) => kernels::elementwise(
                &lazyfuse_core::Op::Select,
                dtype,
                &[get(c)?, get(a)?, get(b)?],
                len,
            )?,
            Inst::Cast(a) => {
                kernels::elementwise(&lazyfuse_core::Op::Cast, dtype, &[get(a)?], len)?
            }
            Inst::Bitcast(a) => {
                kernels::elementwise(&lazyfuse_core::Op::Bitcast, dtype, &[get(a)?], len)?
            }
            leaf_inst => leaf(leaf_inst)?,
        };
        values.push(value);
    }
    Ok(values)
}

/// Evaluates the kernel body for one chunk of a line.
fn eval_chunk(
    kernel: &FusedKernel,
    space: &Space,
    inputs: &Inputs<'_>,
    args: &[Literal],
    bases: &[isize],
    offset: usize,
    len: usize,
) -> Result<Vec<HostBuffer>> {
    eval(&kernel.body, len, args, |inst| match inst {
        Inst::Load(k) => {
            let k = *k as usize;
            let buffer = inputs
                .get(k)
                .copied()
                .flatten()
                .ok_or_else(|| internal("missing input buffer"))?;
            load(
                buffer,
                space.at(bases, k, offset),
                space.inner_stride(k),
                len,
            )
        }
        Inst::Iota(k) => {
            let k = *k as usize;
            let stride = space.inner_stride(k) as i64;
            let base = space.at(bases, k, offset) as i64;
            Ok(HostBuffer::I64(
                (0..len as i64).map(|i| base + i * stride).collect(),
            ))
        }
        _ => Err(internal("a parameter or reduced value in a kernel body")),
    })
}

/// Copies `value` (of `len` elements, or one broadcast) into `out[start..start + len]`.
fn store(out: &mut HostBuffer, start: usize, len: usize, value: &HostBuffer) -> Result<()> {
    with_buffer!(out, o => {
        let v = Element::slice_of(value).ok_or_else(|| internal("output dtype mismatch"))?;
        let dest = o.get_mut(start..start + len).ok_or_else(|| internal("a write past the end of an output"))?;
        if v.len() == len {
            dest.copy_from_slice(v);
        } else if let [x] = v {
            dest.fill(*x);
        } else {
            return Err(internal("a value of the wrong length"));
        }
        Ok(())
    })
}

fn allocate(dtype: DType, len: usize) -> Result<HostBuffer> {
    crate::pages::zeroed(dtype, len)
}

/// Runs an element-wise launch; returns one buffer per output.
pub fn run_elementwise_generic(launch: &Launch, inputs: &Inputs<'_>) -> Result<Vec<HostBuffer>> {
    let kernel = &launch.kernel;
    let n = launch.domain_len();
    let mut outputs: Vec<HostBuffer> = (0..kernel.outputs.len())
        .map(|i| allocate(kernel.output_dtype(i), n))
        .collect::<Result<_>>()?;
    if n == 0 {
        return Ok(outputs);
    }
    let space = Space::natural(launch);
    let line_len = space.line_len();
    for line in 0..space.lines() {
        let bases = space.bases(line);
        let mut offset = 0;
        while offset < line_len {
            let len = CHUNK.min(line_len - offset);
            let values = eval_chunk(kernel, &space, inputs, &launch.args, &bases, offset, len)?;
            for (out, value) in outputs.iter_mut().zip(&kernel.outputs) {
                store(out, line * line_len + offset, len, &values[value.index()])?;
            }
            offset += len;
        }
    }
    Ok(outputs)
}

/// Combines two equally long partial results.
fn combine(
    reduction: &ReductionIr,
    args: &[Literal],
    a: &HostBuffer,
    b: &HostBuffer,
) -> Result<HostBuffer> {
    let len = a.len();
    match &reduction.combine {
        CombineIr::Builtin(op) => kernels::binary(op.combiner(), a, b, len),
        CombineIr::Custom { body, .. } => {
            let values = eval(body, len, args, |inst| match inst {
                Inst::Param(0) => Ok(a.clone()),
                Inst::Param(1) => Ok(b.clone()),
                _ => Err(internal("unexpected leaf in a combine body")),
            })?;
            let last = values
                .into_iter()
                .last()
                .ok_or_else(|| internal("empty combine body"))?;
            if last.len() == len {
                Ok(last)
            } else {
                with_buffer!(&last, v => Ok(Element::into_buffer(vec![v[0]; len])))
            }
        }
    }
}

fn slice(buffer: &HostBuffer, start: usize, end: usize) -> HostBuffer {
    with_buffer!(buffer, v => Element::into_buffer(v[start..end].to_vec()))
}

/// Pairwise (halving) reduction of `values` to one element.
fn pairwise(reduction: &ReductionIr, args: &[Literal], values: HostBuffer) -> Result<HostBuffer> {
    let mut current = values;
    while current.len() > 1 {
        let count = current.len();
        let half = count / 2;
        let mut next = combine(
            reduction,
            args,
            &slice(&current, 0, half),
            &slice(&current, half, 2 * half),
        )?;
        if count % 2 == 1 {
            next = with_buffer!(&next, v => {
                let mut v = v.clone();
                v.extend_from_slice(Element::slice_of(&slice(&current, 2 * half, count)).ok_or_else(|| internal("dtype"))?);
                Element::into_buffer(v)
            });
        }
        current = next;
    }
    Ok(current)
}

/// A binary counter of partial results: level `l` holds the combination of
/// 2^l runs, so runs combine pairwise whatever their number.
struct Cascade {
    levels: Vec<(u32, HostBuffer)>,
}

impl Cascade {
    fn push(&mut self, reduction: &ReductionIr, args: &[Literal], value: HostBuffer) -> Result<()> {
        let mut value = (0u32, value);
        while let Some((level, top)) = self.levels.last() {
            if *level != value.0 {
                break;
            }
            let merged = combine(reduction, args, top, &value.1)?;
            value = (level + 1, merged);
            self.levels.pop();
        }
        self.levels.push(value);
        Ok(())
    }

    fn finish(
        &mut self,
        reduction: &ReductionIr,
        args: &[Literal],
        identity: &HostBuffer,
    ) -> Result<HostBuffer> {
        let mut result: Option<HostBuffer> = None;
        while let Some((_, top)) = self.levels.pop() {
            result = Some(match result {
                None => top,
                Some(r) => combine(reduction, args, &top, &r)?,
            });
        }
        Ok(result.unwrap_or_else(|| identity.clone()))
    }
}

/// Runs a reduction launch; returns its one output.
pub fn run_reduction_generic(launch: &Launch, inputs: &Inputs<'_>) -> Result<Vec<HostBuffer>> {
    let kernel = &launch.kernel;
    let reduction = kernel
        .reduction
        .as_ref()
        .ok_or_else(|| internal("not a reduction"))?;
    let kept: Vec<usize> = (0..launch.domain.len())
        .filter(|a| !reduction.axes.contains(a))
        .collect();
    let kept_len: usize = kept.iter().map(|&a| launch.domain[a]).product();
    let reduced_len: usize = reduction.axes.iter().map(|&a| launch.domain[a]).product();
    let identity_literal = *launch
        .args
        .get(reduction.identity_arg as usize)
        .ok_or_else(|| internal("no identity"))?;
    let identity = HostBuffer::filled(identity_literal, 1);
    let mut acc = if reduced_len == 0 || kept_len == 0 {
        HostBuffer::try_filled(identity_literal, kept_len)?
    } else {
        allocate(reduction.acc, kept_len)?
    };
    if reduced_len > 0 && kept_len > 0 {
        let order: Vec<usize> = kept.iter().chain(reduction.axes.iter()).copied().collect();
        let space = Space::new(launch, &order);
        let line_len = space.line_len();
        let mut cascade = Cascade { levels: Vec::new() };
        let mut position = 0usize;
        for line in 0..space.lines() {
            let bases = space.bases(line);
            let mut offset = 0;
            while offset < line_len {
                let len = CHUNK.min(line_len - offset);
                let values = eval_chunk(kernel, &space, inputs, &launch.args, &bases, offset, len)?;
                let chunk = &values[reduction.value.index()];
                let chunk = if chunk.len() == len {
                    chunk.clone()
                } else {
                    with_buffer!(chunk, v => Element::into_buffer(vec![v[0]; len]))
                };
                // Split the chunk where the kept index changes.
                let mut start = 0;
                while start < len {
                    let within = position % reduced_len;
                    let take = (reduced_len - within).min(len - start);
                    let run =
                        pairwise(reduction, &launch.args, slice(&chunk, start, start + take))?;
                    cascade.push(reduction, &launch.args, run)?;
                    position += take;
                    start += take;
                    if position.is_multiple_of(reduced_len) {
                        let total = cascade.finish(reduction, &launch.args, &identity)?;
                        store(&mut acc, position / reduced_len - 1, 1, &total)?;
                    }
                }
                offset += len;
            }
        }
    }
    Ok(vec![epilogue(launch, acc)?])
}

/// Runs a launch of either kind, slowly but for every kernel (the fallback
/// of the fast paths, and the executor tests compare them with).
pub fn run_generic(launch: &Launch, inputs: &Inputs<'_>) -> Result<Vec<HostBuffer>> {
    if launch.kernel.reduction.is_some() {
        run_reduction_generic(launch, inputs)
    } else {
        run_elementwise_generic(launch, inputs)
    }
}

/// Evaluates a reduction's epilogue over the accumulated values.
pub(crate) fn epilogue(launch: &Launch, acc: HostBuffer) -> Result<HostBuffer> {
    let kernel = &launch.kernel;
    let reduction = kernel
        .reduction
        .as_ref()
        .ok_or_else(|| internal("not a reduction"))?;
    let len = acc.len();
    let values = eval(&reduction.epilogue, len, &launch.args, |inst| match inst {
        Inst::Reduced => Ok(acc.clone()),
        _ => Err(internal("unexpected leaf in an epilogue")),
    })?;
    let out = values
        .get(kernel.outputs[0].index())
        .ok_or_else(|| internal("missing epilogue output"))?;
    let mut result = allocate(kernel.output_dtype(0), len)?;
    if len > 0 {
        store(&mut result, 0, len, out)?;
    }
    Ok(result)
}
