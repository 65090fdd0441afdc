//! Memory: steady use over 10,000 evaluations, buffers freed with their
//! arrays, and demands too large for the machine reported as errors rather
//! than aborts. Host memory (which is also the `sim` device's memory) is
//! measured by a counting global allocator; the `cuda` pool's counters are
//! checked by `tests/cuda.rs` where a GPU exists.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;

use lazyfuse::{Context, DType, Error};

/// Bytes currently allocated by the process.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: every call forwards to the system allocator unchanged; the
// counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests measure the whole process: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

#[test]
fn ten_thousand_evaluations_hold_memory_steady() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for cx in [Context::cpu(), Context::sim()] {
        let a = cx
            .from_vec((0..1000).map(|i| i as f32).collect(), &[1000])
            .unwrap();
        let b = cx.from_vec(vec![0.5f32; 1000], &[1000]).unwrap();
        let round = |c: f32| {
            let y = ((&a * 2.0f32 + &b).sqrt() - c).sum();
            y.item::<f32>().unwrap()
        };
        // Warm up: caches fill, device copies of a and b are made once.
        for _ in 0..100 {
            round(1.0);
        }
        let before = live();
        for _ in 0..10_000 {
            round(1.0);
        }
        let growth = live() - before;
        assert!(
            growth < 64 * 1024,
            "{}: {growth} bytes more live after 10,000 evaluations",
            cx.backend_name()
        );
        let stats = cx.stats();
        assert_eq!(stats.evaluations, 10_100, "{}", cx.backend_name());
        assert_eq!(
            stats.kernels_compiled,
            1,
            "{}: {stats:?}",
            cx.backend_name()
        );
    }
}

#[test]
fn ever_new_constants_fill_the_program_cache_and_no_more() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Programs are cached by structure and constant values, up to CAPACITY
    // at a time: memory saw-tooths with that period and must not climb.
    let period = lazyfuse::codegen::fusion::cache::CAPACITY;
    let cx = Context::cpu();
    let a = cx.from_vec(vec![2.0f32; 1000], &[1000]).unwrap();
    let mut samples = Vec::new();
    for i in 0..period * 16 {
        if i % period == 0 {
            samples.push(live());
        }
        // From 2 on: `a * 1.0` would simplify to `a`, another kernel.
        (&a * (i as f32 + 2.0)).sum().item::<f32>().unwrap();
    }
    // Compare states at the same phase, once the cache has wrapped around.
    let (first, last) = (samples[2], samples[samples.len() - 1]);
    assert!(
        last - first < 64 * 1024,
        "{} bytes more after {} evaluations: {samples:?}",
        last - first,
        period * 13
    );
    // Constants are kernel arguments: one compiled kernel serves them all.
    assert_eq!(cx.stats().kernels_compiled, 1, "{:?}", cx.stats());
}

#[test]
fn dropping_arrays_frees_their_buffers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1 << 20;
    let run = |cx: &Context| {
        let x = cx.from_vec(vec![1.0f32; n], &[n]).unwrap();
        let y = &x * 3.0f32 + 1.0f32;
        y.eval().unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap()[n - 1], 4.0);
        (x, y)
    };
    for cx in common::backends() {
        // A first run leaves what lives on by design: the compiled program
        // in the cache and each worker thread's scratch memory (more of it
        // on a machine with more cores).
        drop(run(&cx));
        cx.release_device_memory();
        let before = live();
        let (x, y) = run(&cx);
        let held = live() - before;
        assert!(
            held >= 8 * n as isize,
            "{}: only {held} bytes held",
            cx.backend_name()
        );
        drop(y);
        drop(x);
        // Device backends keep freed buffers for reuse, as a GPU pool does,
        // until asked to release them.
        cx.release_device_memory();
        let left = live() - before;
        assert!(
            left < 64 * 1024,
            "{}: {left} bytes still live after dropping the arrays",
            cx.backend_name()
        );
    }
}

/// A large result whose arrays are gone is kept as a spare buffer, and the
/// next result of its size is computed into it (no new zeroed memory);
/// `release_device_memory` frees the spares.
#[test]
fn a_result_reuses_the_memory_of_one_dropped_before() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1 << 20;
    let cx = Context::cpu();
    cx.release_device_memory();
    let x = cx.from_vec(vec![1.0f32; n], &[n]).unwrap();
    let first = &x * 3.0f32 + 1.0f32;
    first.eval().unwrap();
    let address = first.host_value().unwrap().as_bytes().as_ptr();
    drop(first);
    let second = &x * 5.0f32 - 1.0f32;
    second.eval().unwrap();
    assert_eq!(second.host_value().unwrap().as_bytes().as_ptr(), address);
    assert!(second.to_vec::<f32>().unwrap().iter().all(|&v| v == 4.0));
    drop(second);
    let before = live();
    assert!(cx.release_device_memory() >= 4 * n);
    assert!(before - live() >= 4 * n as isize);
}

/// A kept result does not keep what it was computed from: a partial sum
/// outliving its chunk (Dask's tree reductions) holds its own few bytes,
/// not the chunk's megabytes, on every backend.
#[test]
fn a_kept_result_frees_its_operands() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1 << 20;
    for cx in common::backends() {
        let partial = |cx: &Context| {
            let chunk = cx.from_vec(vec![0.5f32; n], &[n / 64, 64]).unwrap();
            let sums = (&chunk * 2.0f32).sum_axes(&[0], true);
            sums.eval().unwrap();
            sums
        };
        drop(partial(&cx));
        cx.release_device_memory();
        let before = live();
        let kept: Vec<_> = (0..4).map(|_| partial(&cx)).collect();
        cx.release_device_memory();
        let held = live() - before;
        assert!(
            held < 4 * 64 * 1024,
            "{}: four kept partial sums hold {held} bytes (their chunks are {} each)",
            cx.backend_name(),
            4 * n
        );
        assert_eq!(kept[3].to_vec::<f32>().unwrap()[0], (n / 64) as f32);
        // Expressions built on the old node still read its value.
        let again = &kept[0] + 1.0f32;
        assert_eq!(again.to_vec::<f32>().unwrap()[63], (n / 64) as f32 + 1.0);
    }
}

#[test]
fn a_demand_too_large_for_the_machine_is_an_error() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for cx in common::backends() {
        // 2^42 f32 elements: 16 TiB, more than any host here.
        let huge = cx.full(&[1 << 42], 1.0, DType::F32) + 1.0f32;
        match huge.to_vec::<f32>() {
            Err(Error::Device { message, .. }) => {
                assert!(message.contains("out of memory"), "{message}")
            }
            other => panic!(
                "{}: expected an allocation error, got {other:?}",
                cx.backend_name()
            ),
        }
        // A shape whose byte size overflows is refused when built.
        let overflow = cx.zeros(&[usize::MAX / 2, 4], DType::F64);
        assert!(overflow.check().is_err(), "{}", cx.backend_name());
        // The context goes on working.
        assert_eq!(cx.from_slice(&[1i32, 2]).sum().item::<i64>().unwrap(), 3);
    }
}

/// An array over a buffer shared with other holders (Python's
/// `lf.asarray(np.asarray(y))`) reads it and never writes it, even when a
/// kernel could write a dying input in place.
#[test]
fn an_array_over_a_shared_buffer_reads_it_and_never_writes_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for cx in common::backends() {
        let buffer = std::sync::Arc::new(lazyfuse::HostBuffer::F32(vec![1.0, 2.0, 3.0, 4.0]));
        let a = cx
            .from_shared(std::sync::Arc::clone(&buffer), &[2, 2])
            .unwrap();
        let doubled = (a * 2.0f32).to_vec::<f32>().unwrap();
        assert_eq!(doubled, [2.0, 4.0, 6.0, 8.0], "{}", cx.backend_name());
        assert_eq!(buffer.as_slice::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
        let wrong = cx.from_shared(buffer, &[3]).unwrap_err();
        assert!(wrong.to_string().contains("from_shared"), "{wrong}");
    }
}
