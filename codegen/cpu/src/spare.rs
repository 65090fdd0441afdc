//! Scratch kept by each thread between launches: a worker's chunk
//! registers, tile registers (`frame::TileReg`) and a row program's tile
//! buffers come from here and go back when the worker's scratch is
//! dropped. A launch makes scratch for every piece of work a worker takes
//! (tens per launch), and zeroing fresh registers each time cost more
//! than a short row reduction's arithmetic. Scratch is always written
//! before it is read, so what a reused piece held does not matter.

use std::cell::RefCell;
use std::thread::LocalKey;

use lazyfuse_core::{DType, HostBuffer, Result};

/// A thread's store of spare pieces of one kind.
pub type Store<T> = RefCell<Vec<T>>;

/// The first piece in this thread's `store` that `fits`, taken out of it.
pub fn take_from<T: 'static>(
    store: &'static LocalKey<Store<T>>,
    fits: impl Fn(&T) -> bool,
) -> Option<T> {
    // `try_with`: a thread that is ending keeps nothing.
    store
        .try_with(|spare| {
            let mut spare = spare.borrow_mut();
            let at = spare.iter().position(fits)?;
            Some(spare.swap_remove(at))
        })
        .ok()
        .flatten()
}

/// Puts `piece` into this thread's `store` when `room` says the store has
/// room for it (else it is freed).
pub fn give_to<T: 'static>(
    store: &'static LocalKey<Store<T>>,
    piece: T,
    room: impl Fn(&[T], &T) -> bool,
) {
    let _ = store.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        if room(&spare, &piece) {
            spare.push(piece);
        }
    });
}

/// The most buffers, and bytes, one thread keeps.
const KEPT: usize = 32;
const KEPT_BYTES: usize = 8 << 20;

thread_local! {
    static BUFFERS: Store<HostBuffer> = const { RefCell::new(Vec::new()) };
}

/// A buffer of at least `len` elements of `dtype`, a kept one when this
/// thread has one (its elements are whatever it held), else zeros.
pub fn take(dtype: DType, len: usize) -> Result<HostBuffer> {
    match take_from(&BUFFERS, |b| b.dtype() == dtype && b.len() >= len) {
        Some(buffer) => Ok(buffer),
        None => HostBuffer::try_zeros(dtype, len),
    }
}

/// Keeps `buffer` for this thread's next [`take`] (freed when the thread
/// keeps enough already).
pub fn give(buffer: HostBuffer) {
    if buffer.is_empty() {
        return;
    }
    let bytes = |b: &HostBuffer| b.len() * b.dtype().size();
    give_to(&BUFFERS, buffer, |kept, buffer| {
        kept.len() < KEPT && kept.iter().map(bytes).sum::<usize>() + bytes(buffer) <= KEPT_BYTES
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
