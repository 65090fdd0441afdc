//! Streaming (non-temporal) stores for outputs larger than the caches.
//!
//! An ordinary store to a line that is not in the cache first reads the
//! line from memory (a read for ownership), so `out = a*b + c` moves five
//! bytes over the memory bus for every four it means to. Streaming stores
//! write whole lines without reading them: measured on this project's
//! machine (E1 at 10^7 and 3·10^7 f32, 2 threads, a throwaway loop with
//! `_mm256_stream_ps` against the same loop with plain stores), 0.80-0.86×
//! the time. They also bypass the caches, which is a loss when the output
//! would have stayed there for its next reader, so a launch streams only
//! when what it reads and writes together exceeds the last-level cache
//! (or [`CpuSettings::streaming_threshold`]).
//!
//! Compiled code does not emit streaming stores itself (Cranelift has no
//! such instruction): it writes each tile of an output into a small staging
//! buffer that stays in L1, and [`copy_streaming`] moves the tile to the
//! output. Through compiled code, E1 at 10^7 and 3·10^7 f32 took
//! 0.87-0.90× the time with plain stores (one process timing both,
//! alternating, in a scratch driver not kept); when the machine's
//! memory was faster at the time, 0.93-0.98×.
//!

use std::sync::OnceLock;

use super::settings::CpuSettings;
use smallvec::SmallVec;

/// Elements per call of compiled code when it streams: small tiles keep
/// reads and streaming writes interleaved. Measured on E1 at 10^7 f32 (the
/// same process timing both, alternating): 128 elements 0.93-0.98× the
/// time of plain stores, 256 0.87-0.88×, 512 0.88-0.91×, 1 Ki 0.94-0.95×,
/// 4 Ki 0.98-1.00×.
pub const TILE: usize = 256;

/// The last-level cache's size assumed when the system does not say.
const DEFAULT_LAST_LEVEL_CACHE: usize = 32 << 20;

/// Whether a launch that reads and writes `bytes` in all streams its
/// outputs under `settings`.
pub fn wanted(bytes: usize, settings: &CpuSettings) -> bool {
    let threshold = settings
        .streaming_threshold
        .unwrap_or_else(last_level_cache);
    cfg!(target_arch = "x86_64") && bytes > threshold
}

/// The size of the largest cache of CPU 0 in bytes, read once from Linux's
/// sysfs (32 MiB where it cannot be read). On CPUs whose L3 comes
/// in slices (AMD's CCDs) that is one slice: the cache a thread's data can
/// stay in.
pub fn last_level_cache() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        (0..8)
            .filter_map(|i| {
                let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
                let text = std::fs::read_to_string(format!("{dir}/size")).ok()?;
                parse_cache_size(&text)
            })
            .max()
            .unwrap_or(DEFAULT_LAST_LEVEL_CACHE)
    })
}

/// Bytes in a sysfs cache size such as `32768K` or `1M`.
fn parse_cache_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, scale) = [("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)]
        .into_iter()
        .find_map(|(suffix, scale)| text.strip_suffix(suffix).map(|d| (d, scale)))
        .unwrap_or((text, 1));
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

/// Staging buffers of one worker: a tile of each output, 16-byte aligned,
/// and the copy of the pointer table that locates them for compiled code.
#[derive(Debug, Default)]
pub struct Stage {
    words: Vec<u128>,
    /// The frame's pointer table with the written slots moved to staging.
    pub table: Vec<*mut u8>,
}

impl Stage {
    /// `count` staging areas of `bytes` bytes each (rounded up to 16): their
    /// start pointers, valid until the next call.
    pub fn areas(&mut self, count: usize, bytes: usize) -> SmallVec<[*mut u8; 4]> {
        let words = bytes.div_ceil(16);
        if self.words.len() < count * words {
            self.words.resize(count * words, 0);
        }
        let base = self.words.as_mut_ptr();
        (0..count)
            .map(|k| base.wrapping_add(k * words).cast::<u8>())
            .collect()
    }
}

/// Copies `bytes` bytes from `src` to `dst` with streaming stores where
/// `dst` is 16-byte aligned (ordinary ones for the unaligned ends). Call
/// [`fence`] before anything else may read `dst`.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `bytes` bytes,
/// and the two must not overlap.
#[cfg(target_arch = "x86_64")]
pub unsafe fn copy_streaming(src: *const u8, dst: *mut u8, bytes: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    let head = dst.align_offset(16).min(bytes);
    let body_end = head + (bytes - head) / 16 * 16;
    // SAFETY: every access lies within the first `bytes` bytes of `src` and
    // `dst` (the caller's contract); each streaming store's address is
    // 16-byte aligned (from `head` on, in steps of 16); SSE2 is part of
    // x86_64.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let mut at = head;
        while at < body_end {
            let value = _mm_loadu_si128(src.add(at).cast::<__m128i>());
            _mm_stream_si128(dst.add(at).cast::<__m128i>(), value);
            at += 16;
        }
        std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), bytes - at);
    }
}

/// Copies `bytes` bytes from `src` to `dst` (no streaming stores on this
/// architecture).
///
/// # Safety
/// As on x86_64.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn copy_streaming(src: *const u8, dst: *mut u8, bytes: usize) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, bytes) }
}

/// Orders this thread's streaming stores before its later stores (such as
/// the one that tells another thread the work is done).
#[cfg(target_arch = "x86_64")]
pub fn fence() {
    // SAFETY: `sfence` has no operands, and SSE is part of x86_64.
    unsafe { std::arch::x86_64::_mm_sfence() }
}

/// Nothing to order on this architecture (no streaming stores).
#[cfg(not(target_arch = "x86_64"))]
pub fn fence() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("lots"), None);
        assert!(last_level_cache() > 0);
    }

    #[test]
    fn copies_every_alignment_and_length() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for offset in 0..16 {
            for len in [0, 1, 15, 16, 17, 63, 64, 65, 250] {
                let mut dst = vec![0u8; 300];
                // SAFETY: `offset + len <= 300` bytes of both; distinct vectors.
                unsafe { copy_streaming(src.as_ptr(), dst.as_mut_ptr().add(offset), len) };
                fence();
                assert_eq!(&dst[offset..offset + len], &src[..len], "{offset} {len}");
                assert!(dst[..offset].iter().all(|&b| b == 0));
                assert!(dst[offset + len..].iter().all(|&b| b == 0));
            }
        }
    }

    #[test]
    fn staging_areas_are_aligned_and_disjoint() {
        let mut stage = Stage::default();
        let areas = stage.areas(3, 100);
        assert_eq!(areas.len(), 3);
        assert!(areas.iter().all(|p| p.align_offset(16) == 0));
        assert!(areas
            .windows(2)
            .all(|w| w[1] as usize - w[0] as usize >= 100));
    }
}
