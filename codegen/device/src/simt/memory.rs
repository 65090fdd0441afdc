//! The simulator's memory accesses: bounds-checked gathers and scatters,
//! atomics applied in thread order, and shared memory that remembers who
//! wrote each element since the last barrier, to report races.

use lazyfuse_core::reference::kernels;
use lazyfuse_core::{
    with_buffer, with_dtype, BinaryOp, Element, Error, HostBuffer, Literal, Result, Wide,
};

use super::{at, Binding, BlockState};
use std::collections::HashMap;

use crate::ir::{AtomicOp, AtomicTarget, DeviceKernel, GridRule};

/// No thread wrote the element since the last barrier.
const NOBODY: u32 = u32::MAX;
/// The element was last updated by an atomic operation.
const ATOMIC: u32 = u32::MAX - 1;

/// One block's shared arrays with, per element, the thread that last wrote
/// it and the barrier epoch of that write.
pub(super) struct SharedMemory {
    arrays: Vec<HostBuffer>,
    writers: Vec<Vec<(u32, u32)>>,
    epoch: u32,
    /// User kernels: the thread that wrote each global element since the
    /// last barrier (at most [`GLOBAL_WRITES_TRACKED`] of them).
    global_writers: HashMap<(u32, i64), u32>,
}

/// Global writes per barrier interval the simulator remembers to report
/// two threads of a block writing one element (beyond, it stops looking).
const GLOBAL_WRITES_TRACKED: usize = 1 << 20;

impl SharedMemory {
    /// The block's shared arrays, and its threads' local arrays (`lanes`
    /// copies of each, thread `t`'s at `t * len`).
    pub(super) fn new(kernel: &DeviceKernel, lanes: usize) -> SharedMemory {
        let copies = |local: bool| if local { lanes } else { 1 };
        SharedMemory {
            arrays: kernel
                .shared
                .iter()
                .map(|s| {
                    let len = s.len as usize * copies(s.local);
                    with_dtype!(s.dtype, T => T::into_buffer(vec![T::default(); len]))
                })
                .collect(),
            writers: kernel
                .shared
                .iter()
                .map(|s| vec![(NOBODY, 0); s.len as usize])
                .collect(),
            epoch: 0,
            global_writers: HashMap::new(),
        }
    }

    /// A barrier: writes before it are visible to every thread after it.
    pub(super) fn barrier(&mut self) {
        self.epoch += 1;
        self.global_writers.clear();
    }

    /// Who else wrote `array[i]` since the last barrier, if anyone.
    fn conflict(&self, array: usize, i: usize, thread: usize) -> Option<u32> {
        let (writer, epoch) = *self.writers.get(array)?.get(i)?;
        (writer != NOBODY && writer != thread as u32 && epoch == self.epoch).then_some(writer)
    }
}

fn element(buffer: &HostBuffer, i: usize) -> HostBuffer {
    with_buffer!(buffer, v => Element::into_buffer(vec![v[i]]))
}

fn set_element(buffer: &mut HostBuffer, i: usize, value: &HostBuffer) {
    with_buffer!(value, v => {
        if let Some(dest) = Element::slice_of_mut(buffer) {
            dest[i] = v[0];
        }
    })
}

/// Whether a write of `written` over `current` leaves the element as it
/// was (two NaNs count as the same value).
#[allow(clippy::eq_op)] // `x != x` is the generic test for NaN
fn same_value<T: PartialEq>(current: T, written: T) -> bool {
    current == written || (current != current && written != written)
}

fn who(writer: u32) -> String {
    if writer == ATOMIC {
        "an atomic operation".to_string()
    } else {
        format!("thread {writer}")
    }
}

impl BlockState<'_, '_, '_> {
    /// Reads `source[index[t]]` for every active thread `t`.
    pub(super) fn gather(
        &self,
        source: &HostBuffer,
        index: &[i64],
        mask: &[bool],
        name: &str,
    ) -> Result<HostBuffer> {
        with_buffer!(source, values => {
            let mut out = vec![Default::default(); self.lanes];
            for (t, slot) in out.iter_mut().enumerate() {
                if !mask[t] {
                    continue;
                }
                let i = at(index, t);
                *slot = *usize::try_from(i).ok().and_then(|i| values.get(i)).ok_or_else(|| {
                    self.fault(t, format!("reads {name}[{i}] outside its {} elements", values.len()))
                })?;
            }
            Ok(Element::into_buffer(out))
        })
    }

    /// Writes `value[t]` to `target[index[t]]` for every active thread `t`.
    fn scatter(
        &self,
        target: &mut HostBuffer,
        index: &[i64],
        value: &HostBuffer,
        mask: &[bool],
        name: &str,
    ) -> Result<()> {
        self.scatter_checked(target, index, value, mask, name, &mut |_, _, _| Ok(()))
    }

    /// [`Self::scatter`], calling `check(t, i, unchanged)` before thread
    /// `t`'s write of element `i`, in thread order; `unchanged` says the
    /// element already holds the value written.
    fn scatter_checked(
        &self,
        target: &mut HostBuffer,
        index: &[i64],
        value: &HostBuffer,
        mask: &[bool],
        name: &str,
        check: &mut dyn FnMut(usize, i64, bool) -> Result<()>,
    ) -> Result<()> {
        let len = target.len();
        with_buffer!(value, source => {
            let dest = Element::slice_of_mut(target).ok_or_else(|| {
                Error::internal("sim launch", format!("a {} store to {name}", value.dtype()))
            })?;
            for t in (0..self.lanes).filter(|&t| mask[t]) {
                let i = at(index, t);
                let slot = usize::try_from(i).ok().and_then(|i| dest.get_mut(i)).ok_or_else(|| {
                    self.fault(t, format!("writes {name}[{i}] outside its {len} elements"))
                })?;
                let written = at(source, t);
                check(t, i, same_value(*slot, written))?;
                *slot = written;
            }
            Ok(())
        })
    }

    /// Takes the buffer bound to output parameter `param` out of the bindings.
    fn take_output(&mut self, param: u32) -> Result<(String, HostBuffer)> {
        let name = self.param_name(param).to_string();
        match self.bindings.get_mut(param as usize) {
            Some(Binding::Write(b)) => {
                Ok((name, std::mem::replace(*b, HostBuffer::Bool(Vec::new()))))
            }
            _ => Err(Error::internal(
                "sim launch",
                format!("a write to {name}, which is not an output"),
            )),
        }
    }

    fn put_output(&mut self, param: u32, buffer: HostBuffer) {
        if let Some(Binding::Write(b)) = self.bindings.get_mut(param as usize) {
            **b = buffer;
        }
    }

    /// `param[index[t]] = value[t]` for every active thread `t`.
    pub(super) fn store(
        &mut self,
        param: u32,
        index: &[i64],
        value: &HostBuffer,
        mask: &[bool],
    ) -> Result<()> {
        let (name, mut target) = self.take_output(param)?;
        let stored = if self.kernel.grid == GridRule::User {
            let mut writers = std::mem::take(&mut self.shared.global_writers);
            let stored = self.scatter_checked(
                &mut target,
                index,
                value,
                mask,
                &name,
                &mut |t, i, unchanged| {
                    self.check_global_write(&mut writers, (param, i), t, unchanged, &name)
                },
            );
            self.shared.global_writers = writers;
            stored
        } else {
            self.scatter(&mut target, index, value, mask, &name)
        };
        self.put_output(param, target);
        stored
    }

    /// Reports thread `t` writing element `at` of a global buffer that
    /// another thread of its block wrote since the last barrier, unless it
    /// writes the value already there: that race is benign on a GPU (every
    /// order leaves the same value, as in `found[0] = 1`). Else a race; in
    /// a gufunc, two `par_range` iterations writing one element.
    fn check_global_write(
        &self,
        writers: &mut HashMap<(u32, i64), u32>,
        at: (u32, i64),
        t: usize,
        unchanged: bool,
        name: &str,
    ) -> Result<()> {
        match writers.get(&at) {
            Some(&writer) if writer != t as u32 && !unchanged => Err(self.fault(t, format!(
                "writes {name}[{}] a value other than the one thread {writer} of its block wrote \
                 there since the last __syncthreads() (a race; in a gufunc, two par_range iterations \
                 writing one element)",
                at.1
            ))),
            Some(_) => {
                writers.insert(at, t as u32);
                Ok(())
            }
            None if writers.len() < GLOBAL_WRITES_TRACKED => {
                writers.insert(at, t as u32);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// `array[index[t]]` for every active thread `t`, checking for races.
    pub(super) fn load_shared(
        &self,
        array: u32,
        index: &[i64],
        mask: &[bool],
    ) -> Result<HostBuffer> {
        let a = array as usize;
        let (source, decl) = match (self.shared.arrays.get(a), self.kernel.shared.get(a)) {
            (Some(source), Some(decl)) => (source, decl),
            _ => return Err(Error::internal("sim launch", "no such shared array")),
        };
        let name = &decl.name;
        if decl.local {
            let index = self.local_index(index, mask, decl.len, name, "reads")?;
            return self.gather(source, &index, mask, name);
        }
        let values = self.gather(source, index, mask, name)?;
        for t in (0..self.lanes).filter(|&t| mask[t]) {
            let i = at(index, t) as usize;
            if let Some(writer) = self.shared.conflict(a, i, t) {
                return Err(self.fault(t, format!(
                    "reads {name}[{i}], which {} wrote since the last __syncthreads() (a race: is a syncthreads missing?)",
                    who(writer)
                )));
            }
        }
        Ok(values)
    }

    /// `array[index[t]] = value[t]`, checking for races.
    pub(super) fn store_shared(
        &mut self,
        array: u32,
        index: &[i64],
        value: &HostBuffer,
        mask: &[bool],
    ) -> Result<()> {
        let a = array as usize;
        let (name, local) = match self.kernel.shared.get(a) {
            Some(decl) => (decl.name.clone(), decl.local.then_some(decl.len)),
            None => return Err(Error::internal("sim launch", "no such shared array")),
        };
        if let Some(len) = local {
            let index = self.local_index(index, mask, len, &name, "writes")?;
            let mut target =
                std::mem::replace(&mut self.shared.arrays[a], HostBuffer::Bool(Vec::new()));
            let stored = self.scatter(&mut target, &index, value, mask, &name);
            self.shared.arrays[a] = target;
            return stored;
        }
        let mut target =
            std::mem::replace(&mut self.shared.arrays[a], HostBuffer::Bool(Vec::new()));
        let mut writers = std::mem::take(&mut self.shared.writers[a]);
        let epoch = self.shared.epoch;
        let stored = self.scatter_checked(
            &mut target,
            index,
            value,
            mask,
            &name,
            &mut |t, i, unchanged| {
                // In bounds: the scatter checked `i` before calling.
                let slot = &mut writers[i as usize];
                let (writer, written_in) = *slot;
                if writer != NOBODY && writer != t as u32 && written_in == epoch && !unchanged {
                    return Err(self.fault(
                        t,
                        format!(
                    "writes {name}[{i}] a value other than the one {} wrote there since the last \
                     __syncthreads() (a race)",
                    who(writer)
                ),
                    ));
                }
                *slot = (t as u32, epoch);
                Ok(())
            },
        );
        self.shared.writers[a] = writers;
        self.shared.arrays[a] = target;
        stored
    }

    /// Each active thread's index into its own copy of a local array of
    /// `len` elements, checked against `len`.
    fn local_index(
        &self,
        index: &[i64],
        mask: &[bool],
        len: u32,
        name: &str,
        access: &str,
    ) -> Result<Vec<i64>> {
        let mut translated = vec![0; self.lanes];
        for t in (0..self.lanes).filter(|&t| mask[t]) {
            let i = at(index, t);
            if !(0..i64::from(len)).contains(&i) {
                return Err(self.fault(
                    t,
                    format!("{access} {name}[{i}] outside its {len} elements"),
                ));
            }
            translated[t] = t as i64 * i64::from(len) + i;
        }
        Ok(translated)
    }

    /// Applies an atomic operation for every active thread, in thread order;
    /// returns the old values.
    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        target: AtomicTarget,
        index: &[i64],
        value: &HostBuffer,
        compare: Option<&HostBuffer>,
        mask: &[bool],
    ) -> Result<HostBuffer> {
        let (name, mut memory) = match target {
            AtomicTarget::Global(param) => self.take_output(param)?,
            AtomicTarget::Shared(array) => {
                let a = array as usize;
                let name = self
                    .kernel
                    .shared
                    .get(a)
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                (
                    name,
                    std::mem::replace(&mut self.shared.arrays[a], HostBuffer::Bool(Vec::new())),
                )
            }
        };
        let result = self.apply_atomic(op, &mut memory, index, value, compare, mask, &name);
        match target {
            AtomicTarget::Global(param) => self.put_output(param, memory),
            AtomicTarget::Shared(array) => {
                let a = array as usize;
                self.shared.arrays[a] = memory;
                if result.is_ok() {
                    for t in (0..self.lanes).filter(|&t| mask[t]) {
                        let i = at(index, t) as usize;
                        self.shared.writers[a][i] = (ATOMIC, self.shared.epoch);
                    }
                }
            }
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_atomic(
        &self,
        op: AtomicOp,
        memory: &mut HostBuffer,
        index: &[i64],
        value: &HostBuffer,
        compare: Option<&HostBuffer>,
        mask: &[bool],
        name: &str,
    ) -> Result<HostBuffer> {
        if value.dtype() != memory.dtype() {
            return Err(Error::internal(
                "sim launch",
                format!(
                    "an atomic {} of {} on {name} of {}",
                    op.name(),
                    value.dtype(),
                    memory.dtype()
                ),
            ));
        }
        let mut old =
            with_dtype!(memory.dtype(), T => T::into_buffer(vec![T::default(); self.lanes]));
        let len = memory.len();
        for t in (0..self.lanes).filter(|&t| mask[t]) {
            let i = at(index, t);
            let i = usize::try_from(i)
                .ok()
                .filter(|&i| i < len)
                .ok_or_else(|| {
                    self.fault(
                        t,
                        format!(
                            "atomic {} on {name}[{i}] outside its {len} elements",
                            op.name()
                        ),
                    )
                })?;
            let current = element(memory, i);
            let operand = element(value, if value.len() == 1 { 0 } else { t });
            let expected = compare.map(|c| element(c, if c.len() == 1 { 0 } else { t }));
            let updated = atomic_update(op, &current, &operand, expected.as_ref())?;
            set_element(&mut old, t, &current);
            set_element(memory, i, &updated);
        }
        Ok(old)
    }
}

/// The value an atomic operation stores over `current` (one element each).
fn atomic_update(
    op: AtomicOp,
    current: &HostBuffer,
    operand: &HostBuffer,
    expected: Option<&HostBuffer>,
) -> Result<HostBuffer> {
    let holds = |comparison: BinaryOp, a: &HostBuffer, b: &HostBuffer| -> Result<bool> {
        Ok(matches!(&kernels::binary(comparison, a, b, 1)?, HostBuffer::Bool(v) if v[0]))
    };
    let constant =
        |value: i128| HostBuffer::filled(Literal::cast_from(Wide::Int(value), current.dtype()), 1);
    let is_nan = |x: &HostBuffer| holds(BinaryOp::Ne, x, x);
    let pick = |take: bool| {
        if take {
            operand.clone()
        } else {
            current.clone()
        }
    };
    Ok(match op {
        AtomicOp::Add => kernels::binary(BinaryOp::Add, current, operand, 1)?,
        AtomicOp::Sub => kernels::binary(BinaryOp::Sub, current, operand, 1)?,
        AtomicOp::And => kernels::binary(BinaryOp::BitwiseAnd, current, operand, 1)?,
        AtomicOp::Or => kernels::binary(BinaryOp::BitwiseOr, current, operand, 1)?,
        AtomicOp::Xor => kernels::binary(BinaryOp::BitwiseXor, current, operand, 1)?,
        // Numba's: a NaN on either side leaves memory as it is.
        AtomicOp::Min => pick(holds(BinaryOp::Lt, operand, current)?),
        AtomicOp::Max => pick(holds(BinaryOp::Gt, operand, current)?),
        AtomicOp::NanMin => pick(is_nan(current)? || holds(BinaryOp::Lt, operand, current)?),
        AtomicOp::NanMax => pick(is_nan(current)? || holds(BinaryOp::Gt, operand, current)?),
        AtomicOp::Inc => {
            if holds(BinaryOp::Ge, current, operand)? {
                constant(0)
            } else {
                kernels::binary(BinaryOp::Add, current, &constant(1), 1)?
            }
        }
        AtomicOp::Dec => {
            if holds(BinaryOp::Eq, current, &constant(0))? || holds(BinaryOp::Gt, current, operand)?
            {
                operand.clone()
            } else {
                kernels::binary(BinaryOp::Sub, current, &constant(1), 1)?
            }
        }
        AtomicOp::Exchange => operand.clone(),
        AtomicOp::Cas => {
            let expected = expected
                .ok_or_else(|| Error::internal("sim launch", "a CAS without a compare value"))?;
            // Compared bit for bit, as the hardware does.
            pick(current.as_bytes() == expected.as_bytes())
        }
    })
}
