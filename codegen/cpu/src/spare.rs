//! Scratch buffers kept by each thread between launches: a worker's chunk
//! registers (and a row program's tile buffers) come from here and go
//! back when the worker's scratch is dropped. A launch makes scratch for every piece of work a worker takes
//! (tens per launch), and zeroing fresh registers each time cost more than
//! a short row reduction's arithmetic. Registers are always written before
//! they are read, so what a reused buffer held does not matter.

use std::cell::RefCell;

use lazyfuse_core::{DType, HostBuffer, Result};

/// The most buffers, and bytes, one thread keeps.
const KEPT: usize = 32;
const KEPT_BYTES: usize = 8 << 20;

thread_local! {
    static SPARE: RefCell<Vec<HostBuffer>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of at least `len` elements of `dtype`, a kept one when this
/// thread has one (its elements are whatever it held), else zeros.
pub fn take(dtype: DType, len: usize) -> Result<HostBuffer> {
    let kept = SPARE
        .try_with(|spare| {
            let mut spare = spare.borrow_mut();
            let at = spare
                .iter()
                .position(|b| b.dtype() == dtype && b.len() >= len)?;
            Some(spare.swap_remove(at))
        })
        .ok()
        .flatten();
    match kept {
        Some(buffer) => Ok(buffer),
        None => HostBuffer::try_zeros(dtype, len),
    }
}

/// Keeps `buffer` for this thread's next [`take`] (dropped when the
/// thread keeps enough already).
pub fn give(buffer: HostBuffer) {
    if buffer.is_empty() {
        return;
    }
    // `try_with`: a buffer dropped while its thread ends is freed.
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        let bytes: usize = spare.iter().map(|b| b.len() * b.dtype().size()).sum();
        if spare.len() < KEPT && bytes + buffer.len() * buffer.dtype().size() <= KEPT_BYTES {
            spare.push(buffer);
        }
    });
}

/// Buffers that go back to their thread's spares when dropped (a row
/// program's per-worker tile buffers).
#[derive(Default)]
pub struct Kept(pub Vec<HostBuffer>);

impl Drop for Kept {
    fn drop(&mut self) {
        for buffer in self.0.drain(..) {
            give(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_taken_again_when_it_fits() -> Result<()> {
        let first = take(DType::F32, 100)?;
        assert_eq!((first.dtype(), first.len()), (DType::F32, 100));
        let address = first.as_bytes().as_ptr();
        give(first);
        // Another dtype, or more elements, does not fit: a new buffer.
        assert_eq!(take(DType::F64, 10)?.dtype(), DType::F64);
        assert_eq!(take(DType::F32, 101)?.len(), 101);
        let again = take(DType::F32, 50)?;
        assert_eq!(again.as_bytes().as_ptr(), address);
        Ok(())
    }
}
