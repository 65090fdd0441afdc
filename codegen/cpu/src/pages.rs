//! Host buffers for results, on transparent huge pages where they are large.
//!
//! A fresh buffer's pages are faulted in by whatever first writes them.
//! With 4 KiB pages a 32 MB result costs ~8,000 faults; on the virtual
//! machines measured, a histogram of 4·10^6 values spent half its time
//! there (15,600 faults a call). Large buffers therefore ask the kernel
//! for huge pages, as NumPy's own allocator does (`madvise(MADV_HUGEPAGE)`
//! for arrays of 4 MiB or more): 2 MiB at a fault, 512 times fewer.

use super::tasks::for_each_task;
use lazyfuse_core::{DType, HostBuffer, Result};

/// Buffers of at least this many bytes are advised (NumPy's threshold).
/// Below it a copy into new memory is best made into a plain allocation:
/// [`zeroed`]'s zeroing would be a pass of its own.
pub const HUGE_BYTES: usize = 4 << 20;

/// `len` zeros of `dtype` ([`HostBuffer::try_zeros`]), on huge pages when
/// large and the system allows them.
pub fn zeroed(dtype: DType, len: usize) -> Result<HostBuffer> {
    let mut buffer = HostBuffer::try_zeros(dtype, len)?;
    let bytes = len * dtype.size();
    if bytes >= HUGE_BYTES {
        advise_huge_pages(buffer.as_mut_ptr(), bytes);
    }
    Ok(buffer)
}

/// A buffer of `len` elements of `dtype` for a result its kernel writes
/// whole: a spare one of that size when there is one (its values are
/// whatever it held: `lazyfuse_core::element::spare`), else [`zeroed`].
pub fn for_overwrite(dtype: DType, len: usize) -> Result<HostBuffer> {
    match lazyfuse_core::element::spare::take(dtype, len) {
        Some(buffer) => Ok(buffer),
        None => zeroed(dtype, len),
    }
}

/// Asks for huge pages under the whole 4 KiB pages of `bytes` bytes at
/// `start`. Only advice: contents are unchanged, and a refusal (no
/// transparent huge pages, another system) leaves ordinary pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    const PAGE: usize = 4096;
    let address = start as usize;
    let first = address.next_multiple_of(PAGE);
    let end = (address + bytes) / PAGE * PAGE;
    if end > first {
        // SAFETY: `[first, end)` lies inside the live allocation of
        // `bytes` bytes at `start`, which the caller owns; MADV_HUGEPAGE
        // changes neither its mapping's contents nor its protection, and
        // its result is ignored on purpose (advice a system may refuse).
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _bytes: usize) {}

/// Bytes per piece of a parallel copy.
pub const COPY_PIECE: usize = 1 << 20;

/// `to.copy_from_slice(from)` in pieces of [`COPY_PIECE`] shared by the
/// calling thread and the workers (one thread copies at most ~60 % of
/// what the memory gives two: measured on this project's 2-core
/// machines), on the calling thread alone without a pool or below two
/// pieces.
///
/// # Panics
/// If the lengths differ, as `copy_from_slice` does.
pub fn copy_bytes(to: &mut [u8], from: &[u8], pool: Option<&rayon::ThreadPool>) {
    match pool {
        Some(pool) if pool.current_num_threads() > 1 && from.len() >= 2 * COPY_PIECE => {
            assert_eq!(to.len(), from.len(), "copy_bytes: lengths differ");
            let pieces: Vec<_> = to
                .chunks_mut(COPY_PIECE)
                .zip(from.chunks(COPY_PIECE))
                .collect();
            let copied = for_each_task(
                Some(pool),
                usize::MAX,
                pieces,
                || Ok(()),
                |(), _, (to, from)| {
                    to.copy_from_slice(from);
                    Ok(())
                },
            );
            // Neither the state nor a piece can fail.
            debug_assert!(copied.is_ok());
        }
        _ => to.copy_from_slice(from),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn large_and_small_buffers_are_zeros_of_their_dtype() {
        for len in [0, 3, HUGE_BYTES / 8 + 5] {
            let buffer = zeroed(DType::F64, len).unwrap();
            assert_eq!(buffer.len(), len);
            assert!(buffer.as_slice::<f64>().unwrap().iter().all(|&x| x == 0.0));
        }
    }
}
