//! Large host buffers kept for reuse once their last holder drops them,
//! as a GPU memory pool keeps freed blocks (CuPy's, XLA's).
//!
//! A program run again and again makes a result of the same size each
//! time, and the result before it is usually gone by then. New memory for
//! it is zeroed by the allocator (`calloc` clears reused memory with a
//! pass of its own) or faulted in page by page, and the kernel then writes
//! it all again: softmax over 10^6 float32 from Python took 960 µs a call
//! with new memory and 670 µs with the result before it reused. A result
//! that its kernel writes whole ([`take`]'s callers) takes a spare buffer
//! of its dtype and length; what that held does not matter.
//!
//! The store is small (at most [`MOST_BUFFERS`] buffers and
//! [`most_bytes`]) and first in, first out; `Context::release_device_memory`
//! empties it.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::{machine_memory, Element, HostBuffer};
use crate::dtype::DType;
use crate::with_buffer;

/// Smaller buffers are left to the allocator, whose reuse of small blocks
/// costs little. (At 1 MiB, `lf.asarray` of 10^5 float32 took 1.9× a
/// NumPy copy, at 64 KiB 1.2×: `bench_vectorize.py`.)
pub const SMALLEST_BYTES: usize = 64 << 10;

/// The most buffers kept.
pub const MOST_BUFFERS: usize = 16;

/// The most bytes kept: 256 MiB, or a 32nd of the machine's memory where
/// that is less.
pub fn most_bytes() -> usize {
    const CEILING: usize = 256 << 20;
    machine_memory().map_or(CEILING, |total| (total / 32).min(CEILING))
}

/// The spare buffers, oldest first, and their bytes.
struct Store {
    buffers: VecDeque<HostBuffer>,
    bytes: usize,
}

static SPARE: Mutex<Store> = Mutex::new(Store {
    buffers: VecDeque::new(),
    bytes: 0,
});

/// Bytes a buffer holds (its capacity: a taken buffer may have been
/// shortened).
fn held_bytes(buffer: &HostBuffer) -> usize {
    with_buffer!(buffer, v => v.capacity() * element_size(v.as_slice()))
}

fn element_size<T>(_: &[T]) -> usize {
    std::mem::size_of::<T>()
}

/// Moves the elements of `buffer` (being dropped) into the store when it
/// is large enough and fits; the oldest spare buffers make room. Called by
/// `HostBuffer`'s `Drop`.
pub(super) fn keep(buffer: &mut HostBuffer) {
    let bytes = held_bytes(buffer);
    if bytes < SMALLEST_BYTES || bytes > most_bytes() {
        return;
    }
    // `try_lock`: the store's own buffers dropped below, while it is
    // locked, are freed (their `keep` finds it locked), not kept again.
    let Ok(mut store) = SPARE.try_lock() else {
        return;
    };
    let kept = with_buffer!(buffer, v => Element::into_buffer(std::mem::take(v)));
    store.bytes += bytes;
    store.buffers.push_back(kept);
    let most = most_bytes();
    while store.bytes > most || store.buffers.len() > MOST_BUFFERS {
        let Some(oldest) = store.buffers.pop_front() else {
            break;
        };
        store.bytes -= held_bytes(&oldest);
        drop(oldest);
    }
}

/// A spare buffer of `len` elements of `dtype` (the newest that fits: it
/// may still be in cache), with whatever values it held; `None` when none
/// fits. For results their kernel writes whole.
pub fn take(dtype: DType, len: usize) -> Option<HostBuffer> {
    if len.saturating_mul(dtype.size()) < SMALLEST_BYTES {
        return None;
    }
    let mut store = SPARE.lock().ok()?;
    // At most a quarter longer than needed: the rest stays unused.
    let fits = |b: &HostBuffer| b.dtype() == dtype && (len..=len + len / 4).contains(&b.len());
    let at = store.buffers.iter().rposition(fits)?;
    let mut buffer = store.buffers.remove(at)?;
    store.bytes -= held_bytes(&buffer);
    with_buffer!(&mut buffer, v => v.truncate(len));
    Some(buffer)
}

/// Frees every spare buffer; returns their bytes.
pub fn release() -> usize {
    let Ok(mut store) = SPARE.lock() else {
        return 0;
    };
    let bytes = std::mem::take(&mut store.bytes);
    // Dropped while the store is locked: freed, not kept again.
    store.buffers.clear();
    bytes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    // A length no other test of this crate makes, so that the buffers
    // taken are this test's (the store is the process's).
    const LEN: usize = SMALLEST_BYTES / 4 + 4_099;

    #[test]
    fn a_dropped_large_buffer_is_taken_again_and_released() {
        let buffer = HostBuffer::try_zeros(DType::F32, LEN).unwrap();
        let address = buffer.as_bytes().as_ptr();
        drop(buffer);
        assert!(take(DType::F64, LEN).is_none_or(|b| b.as_bytes().as_ptr() != address));
        let again = take(DType::F32, LEN - 7).unwrap();
        assert_eq!((again.len(), again.as_bytes().as_ptr()), (LEN - 7, address));
        drop(again);
        assert!(release() >= LEN * 4);
        assert!(take(DType::F32, LEN).is_none());
    }

    #[test]
    fn small_buffers_are_left_to_the_allocator() {
        let small = SMALLEST_BYTES / 4 - 1;
        drop(HostBuffer::try_zeros(DType::F32, small).unwrap());
        assert!(take(DType::F32, small).is_none());
    }
}
