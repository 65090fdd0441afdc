//! A caching device allocator: freed blocks are kept in bins by size class and
//! handed out again, because device allocation and freeing synchronise the
//! device and cost far more than the kernels of small fused expressions.
//!
//! The pool is generic over [`DeviceAllocator`] so that its bookkeeping is
//! tested without a GPU.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use lazyfuse_core::deferral::Deferral;
use lazyfuse_core::{Error, Result};

/// Smallest size class: tiny requests share one bin instead of fragmenting.
const MIN_CLASS: usize = 512;
/// Above this, classes grow linearly: doubling would waste up to half of a large block.
const MIB: usize = 1 << 20;

/// Device memory operations the pool is built on: cudarc for a real device, a fake in tests.
pub trait DeviceAllocator: Send + Sync {
    /// A block of device memory; freed when dropped.
    type Block: Send;
    /// Allocates `bytes` (already rounded to a size class). An out-of-memory failure
    /// must be reported as an error for which `is_out_of_memory` is true.
    fn allocate(&self, bytes: usize) -> Result<Self::Block>;
    /// True when `error` means the device is out of memory (e.g. the message contains "CUDA_ERROR_OUT_OF_MEMORY").
    fn is_out_of_memory(&self, error: &Error) -> bool;
    /// A point in a queue of device work (a CUDA event) after which a
    /// released block is no longer in use.
    type Fence: Send;
    /// Whether the work before `fence` is done.
    fn is_done(&self, fence: &Self::Fence) -> bool;
}

/// A block handed out by a [`CachingPool`], with the size class it must be given back to.
#[derive(Debug)]
pub struct PooledBlock<B> {
    /// The device memory; at least as large as requested, exactly `class` bytes.
    pub block: B,
    /// The size class the block belongs to.
    pub class: usize,
    /// Whether the device allocator made it (not served from the cache).
    pub fresh: bool,
}

/// Counters of a [`CachingPool`], as returned by [`CachingPool::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Blocks handed out and not yet released.
    pub live_blocks: usize,
    /// Bytes (of size classes) handed out and not yet released.
    pub live_bytes: usize,
    /// Released blocks kept for reuse.
    pub cached_blocks: usize,
    /// Bytes of the released blocks kept for reuse.
    pub cached_bytes: usize,
    /// Requests served by the device allocator.
    pub fresh_allocations: u64,
    /// Requests served from the cache.
    pub reuses: u64,
    /// Times an out-of-memory failure emptied the cache before retrying.
    pub oom_retries: u64,
}

struct State<B> {
    bins: HashMap<usize, Vec<B>>,
    stats: PoolStats,
    /// Blocks released while cleanup is deferred, with their classes.
    deferral: Deferral<(B, usize)>,
}

impl<B> State<B> {
    /// Empties every bin; the caller drops the blocks after unlocking.
    fn take_cached(&mut self) -> (Vec<B>, usize) {
        let freed = self.stats.cached_bytes;
        let blocks = self.bins.drain().flat_map(|(_, bin)| bin).collect();
        self.stats.cached_blocks = 0;
        self.stats.cached_bytes = 0;
        (blocks, freed)
    }
}

/// A released block, its class, and the fences it waits for.
type Pending<A> = (
    <A as DeviceAllocator>::Block,
    usize,
    Vec<<A as DeviceAllocator>::Fence>,
);

/// A thread-safe caching allocator over a [`DeviceAllocator`], shareable as `Arc<CachingPool<A>>`.
pub struct CachingPool<A: DeviceAllocator> {
    allocator: A,
    /// Blocks released while work queued on other streams may still use
    /// them, each with the fences after which it is free (still counted
    /// live until then).
    pending: Mutex<Vec<Pending<A>>>,
    /// The most bytes (of size classes) live and cached at once
    /// (`ContextBuilder::device_memory_limit`); `None`: what the device has.
    limit: Option<usize>,
    state: Mutex<State<A::Block>>,
}

impl<A: DeviceAllocator> CachingPool<A> {
    /// An empty pool over `allocator`.
    pub fn new(allocator: A) -> Self {
        CachingPool {
            allocator,
            pending: Mutex::new(Vec::new()),
            limit: None,
            state: Mutex::new(State {
                bins: HashMap::new(),
                stats: PoolStats::default(),
                deferral: Deferral::default(),
            }),
        }
    }

    /// Makes the pool hold at most `limit` bytes, live and cached (`None`:
    /// no limit of its own).
    pub fn set_limit(&mut self, limit: Option<usize>) {
        self.limit = limit;
    }

    /// Bytes that can still be handed out under the pool's limit, if it
    /// has one (cached blocks count as free: they are freed when needed).
    pub fn available(&self) -> Option<usize> {
        self.collect_pending();
        let live = self.lock().stats.live_bytes;
        self.limit.map(|limit| limit.saturating_sub(live))
    }

    /// The underlying allocator.
    pub fn allocator(&self) -> &A {
        &self.allocator
    }

    /// Size class of a request: at least 512 B (also for 0 bytes); powers of two
    /// from 512 B up to 1 MiB, then multiples of 1 MiB. Saturates at `usize::MAX`
    /// for requests no device could satisfy, so that the allocator reports them.
    pub fn size_class(bytes: usize) -> usize {
        if bytes <= MIN_CLASS {
            MIN_CLASS
        } else if bytes <= MIB {
            bytes.next_power_of_two()
        } else {
            bytes.div_ceil(MIB).saturating_mul(MIB)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<A::Block>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A block of at least `bytes`: a cached block of the same class if any, else a
    /// fresh allocation. When the fresh allocation fails with out-of-memory, every
    /// cached block is freed and the allocation retried once; a second failure is
    /// returned as is.
    pub fn allocate(&self, bytes: usize) -> Result<PooledBlock<A::Block>> {
        let class = Self::size_class(bytes);
        self.collect_pending();
        {
            let mut state = self.lock();
            if let Some(block) = state.bins.get_mut(&class).and_then(Vec::pop) {
                let stats = &mut state.stats;
                stats.cached_blocks -= 1;
                stats.cached_bytes -= class;
                stats.live_blocks += 1;
                stats.live_bytes += class;
                stats.reuses += 1;
                return Ok(PooledBlock {
                    block,
                    class,
                    fresh: false,
                });
            }
        }
        let evicted = self.reserve(class)?;
        drop(evicted);
        // The lock is not held across device calls: they can take milliseconds
        // and other threads may meanwhile be served from the cache.
        let block = match self.allocator.allocate(class) {
            Ok(block) => block,
            Err(error) if self.allocator.is_out_of_memory(&error) => {
                let (cached, _) = {
                    let mut state = self.lock();
                    state.stats.oom_retries += 1;
                    state.take_cached()
                };
                drop(cached);
                self.allocator
                    .allocate(class)
                    .inspect_err(|_| self.unreserve(class))?
            }
            Err(error) => {
                self.unreserve(class);
                return Err(error);
            }
        };
        let mut state = self.lock();
        state.stats.live_blocks += 1;
        state.stats.fresh_allocations += 1;
        Ok(PooledBlock {
            block,
            class,
            fresh: true,
        })
    }

    /// Counts `class` bytes as live before they are allocated, so that
    /// threads allocating at once cannot pass the limit together; frees
    /// the cache first when keeping it would pass the limit (the blocks
    /// returned are dropped by the caller, after the lock). An error when
    /// the live blocks leave no room.
    fn reserve(&self, class: usize) -> Result<Vec<A::Block>> {
        let mut state = self.lock();
        let mut evicted = Vec::new();
        if let Some(limit) = self.limit {
            let stats = state.stats;
            if stats.live_bytes + stats.cached_bytes + class > limit {
                evicted = state.take_cached().0;
            }
            if state.stats.live_bytes + class > limit {
                return Err(Error::Device {
                    op: format!("cuda: allocating {class} bytes"),
                    message: format!(
                        "out of device memory: {} of the {limit}-byte device_memory_limit in use",
                        state.stats.live_bytes
                    ),
                });
            }
        }
        state.stats.live_bytes += class;
        Ok(evicted)
    }

    /// Takes back a [`CachingPool::reserve`] whose allocation failed.
    fn unreserve(&self, class: usize) {
        let mut state = self.lock();
        state.stats.live_bytes = state.stats.live_bytes.saturating_sub(class);
    }

    /// Returns a block for reuse once the work before every fence is done:
    /// until then it is neither reused nor freed (and counts as live).
    pub fn release_after(&self, block: A::Block, class: usize, fences: Vec<A::Fence>) {
        if fences.is_empty() {
            self.release(block, class);
        } else {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((block, class, fences));
        }
    }

    /// Releases the pending blocks whose fences are all done.
    fn collect_pending(&self) {
        let done: Vec<(A::Block, usize)> = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if pending.is_empty() {
                return;
            }
            let (done, waiting): (Vec<_>, Vec<_>) = pending
                .drain(..)
                .partition(|(_, _, fences)| fences.iter().all(|f| self.allocator.is_done(f)));
            *pending = waiting;
            done.into_iter()
                .map(|(block, class, _)| (block, class))
                .collect()
        };
        for (block, class) in done {
            self.release(block, class);
        }
    }

    /// Blocks released with fences not yet done.
    pub fn pending_blocks(&self) -> usize {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Returns a block to the bin of its size class for reuse.
    pub fn release(&self, block: A::Block, class: usize) {
        let mut state = self.lock();
        if let Some((block, class)) = state.deferral.hold((block, class)) {
            state.bin(block, class);
        }
    }

    /// Starts deferring releases (Numba's `defer_cleanup`): blocks released
    /// from now on are queued, neither reused nor freed, until the last
    /// [`CachingPool::defer`] is matched by a [`CachingPool::resume`].
    pub fn defer(&self) {
        self.lock().deferral.defer();
    }

    /// Ends one deferral; at the last, the queued blocks are released.
    pub fn resume(&self) {
        let mut state = self.lock();
        for (block, class) in state.deferral.resume() {
            state.bin(block, class);
        }
    }

    /// Blocks released while deferring, not yet back in the pool.
    pub fn deferred_blocks(&self) -> usize {
        self.lock().deferral.queued()
    }
}

impl<B> State<B> {
    /// Keeps a released block for reuse.
    fn bin(&mut self, block: B, class: usize) {
        // Saturating: a block released twice or with a wrong class must not
        // turn the counters into a panic in a destructor.
        self.stats.live_blocks = self.stats.live_blocks.saturating_sub(1);
        self.stats.live_bytes = self.stats.live_bytes.saturating_sub(class);
        self.stats.cached_blocks += 1;
        self.stats.cached_bytes += class;
        self.bins.entry(class).or_default().push(block);
    }
}

impl<A: DeviceAllocator> CachingPool<A> {
    /// Returns a [`PooledBlock`] to its bin; the same as [`CachingPool::release`].
    pub fn recycle(&self, pooled: PooledBlock<A::Block>) {
        self.release(pooled.block, pooled.class);
    }

    /// Frees every cached (unused) block; returns the bytes freed.
    pub fn trim(&self) -> usize {
        self.collect_pending();
        let (cached, freed) = self.lock().take_cached();
        drop(cached);
        freed
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        self.lock().stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Debug, Default)]
    struct Usage {
        live_blocks: usize,
        used_bytes: usize,
        allocations: usize,
    }

    struct FakeAllocator {
        capacity: usize,
        usage: Arc<Mutex<Usage>>,
    }

    #[derive(Debug)]
    struct FakeBlock {
        bytes: usize,
        usage: Arc<Mutex<Usage>>,
    }

    impl Drop for FakeBlock {
        fn drop(&mut self) {
            let mut usage = self.usage.lock().unwrap();
            usage.live_blocks -= 1;
            usage.used_bytes -= self.bytes;
        }
    }

    impl FakeAllocator {
        fn new(capacity: usize) -> Self {
            FakeAllocator {
                capacity,
                usage: Arc::default(),
            }
        }
        fn live(&self) -> usize {
            self.usage.lock().unwrap().live_blocks
        }
        fn allocations(&self) -> usize {
            self.usage.lock().unwrap().allocations
        }
    }

    impl DeviceAllocator for FakeAllocator {
        type Block = FakeBlock;
        fn allocate(&self, bytes: usize) -> Result<FakeBlock> {
            let mut usage = self.usage.lock().unwrap();
            if usage.used_bytes + bytes > self.capacity {
                return Err(Error::Device {
                    op: "fake allocate".into(),
                    message: "CUDA_ERROR_OUT_OF_MEMORY".into(),
                });
            }
            usage.live_blocks += 1;
            usage.used_bytes += bytes;
            usage.allocations += 1;
            Ok(FakeBlock {
                bytes,
                usage: Arc::clone(&self.usage),
            })
        }
        fn is_out_of_memory(&self, error: &Error) -> bool {
            matches!(error, Error::Device { message, .. } if message.contains("CUDA_ERROR_OUT_OF_MEMORY"))
        }
        /// A flag another stream's work sets when it is done.
        type Fence = Arc<std::sync::atomic::AtomicBool>;
        fn is_done(&self, fence: &Self::Fence) -> bool {
            fence.load(std::sync::atomic::Ordering::Acquire)
        }
    }

    type Pool = CachingPool<FakeAllocator>;

    #[test]
    fn a_block_released_with_fences_is_reused_only_once_they_are_done() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let pool = Pool::new(FakeAllocator::new(1 << 30));
        let a = pool.allocate(1000).unwrap();
        let (first, second) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        pool.release_after(
            a.block,
            a.class,
            vec![Arc::clone(&first), Arc::clone(&second)],
        );
        assert_eq!((pool.pending_blocks(), pool.stats().live_blocks), (1, 1));
        // Work on another stream may still use it: a new block.
        let b = pool.allocate(1000).unwrap();
        assert!(b.fresh);
        first.store(true, Ordering::Release);
        assert!(pool.allocate(1000).unwrap().fresh, "one fence is not done");
        second.store(true, Ordering::Release);
        let c = pool.allocate(1000).unwrap();
        assert!(!c.fresh, "reused once every fence is done");
        assert_eq!(pool.pending_blocks(), 0);
        pool.recycle(b);
        pool.recycle(c);
    }

    #[test]
    fn size_classes() {
        assert_eq!(Pool::size_class(0), 512);
        assert_eq!(Pool::size_class(1), 512);
        assert_eq!(Pool::size_class(512), 512);
        assert_eq!(Pool::size_class(513), 1024);
        assert_eq!(Pool::size_class(4000), 4096);
        assert_eq!(Pool::size_class(MIB), MIB);
        assert_eq!(Pool::size_class(MIB + 1), 2 * MIB);
        assert_eq!(Pool::size_class(3 * MIB - 5), 3 * MIB);
        assert_eq!(Pool::size_class(3 * MIB), 3 * MIB);
        assert_eq!(Pool::size_class(usize::MAX), usize::MAX);
    }

    #[test]
    fn a_limit_frees_the_cache_first_then_refuses_with_an_error() {
        let mut pool = Pool::new(FakeAllocator::new(1 << 30));
        pool.set_limit(Some(4 * MIB));
        assert_eq!(pool.available(), Some(4 * MIB));
        let a = pool.allocate(2 * MIB).unwrap();
        let b = pool.allocate(MIB).unwrap();
        pool.recycle(b);
        assert_eq!(pool.available(), Some(2 * MIB));
        // 2 MiB live + 1 MiB cached + 2 MiB new passes 4 MiB: the cache goes.
        let c = pool.allocate(2 * MIB).unwrap();
        assert_eq!(pool.stats().cached_bytes, 0);
        assert_eq!(pool.allocator().live(), 2);
        let err = pool.allocate(MIB).unwrap_err().to_string();
        assert!(err.contains("device_memory_limit"), "{err}");
        assert_eq!(pool.stats().live_bytes, 4 * MIB);
        pool.recycle(a);
        pool.recycle(c);
        assert_eq!(pool.available(), Some(4 * MIB));
        assert!(pool.allocate(3 * MIB).is_ok());
    }

    #[test]
    fn deferred_releases_are_queued_until_the_last_guard_ends() {
        let pool = Pool::new(FakeAllocator::new(1 << 30));
        pool.defer();
        pool.defer();
        let a = pool.allocate(1000).unwrap();
        pool.recycle(a);
        assert_eq!(pool.deferred_blocks(), 1);
        let b = pool.allocate(1000).unwrap();
        assert!(b.fresh, "a queued block is not reused");
        pool.resume();
        assert_eq!(pool.deferred_blocks(), 1, "one guard still lives");
        pool.resume();
        assert_eq!(pool.deferred_blocks(), 0);
        let c = pool.allocate(1000).unwrap();
        assert!(!c.fresh, "released at the last guard, then reused");
        assert_eq!(pool.allocator().allocations(), 2);
        pool.recycle(b);
        pool.recycle(c);
    }

    #[test]
    fn released_block_is_reused_for_same_class() {
        let pool = Pool::new(FakeAllocator::new(1 << 30));
        let a = pool.allocate(1000).unwrap();
        assert_eq!(a.class, 1024);
        assert_eq!(a.block.bytes, 1024);
        pool.recycle(a);
        let b = pool.allocate(600).unwrap();
        assert_eq!(b.class, 1024);
        assert_eq!(pool.allocator().allocations(), 1);
        let stats = pool.stats();
        assert_eq!((stats.fresh_allocations, stats.reuses), (1, 1));
        assert_eq!((stats.live_blocks, stats.live_bytes), (1, 1024));
        assert_eq!((stats.cached_blocks, stats.cached_bytes), (0, 0));
    }

    #[test]
    fn different_classes_are_not_mixed() {
        let pool = Pool::new(FakeAllocator::new(1 << 30));
        let small = pool.allocate(100).unwrap();
        pool.release(small.block, small.class);
        let large = pool.allocate(5000).unwrap();
        assert_eq!(large.class, 8192);
        assert_eq!(pool.allocator().allocations(), 2);
        let stats = pool.stats();
        assert_eq!((stats.fresh_allocations, stats.reuses), (2, 0));
        assert_eq!((stats.cached_blocks, stats.cached_bytes), (1, 512));
    }

    #[test]
    fn trim_frees_cached_blocks() {
        let pool = Pool::new(FakeAllocator::new(1 << 30));
        let blocks: Vec<_> = (0..4)
            .map(|i| pool.allocate(1 << (10 + i)).unwrap())
            .collect();
        let kept = pool.allocate(100).unwrap();
        blocks.into_iter().for_each(|b| pool.recycle(b));
        assert_eq!(pool.allocator().live(), 5);
        assert_eq!(pool.trim(), 1024 + 2048 + 4096 + 8192);
        assert_eq!(pool.allocator().live(), 1);
        let stats = pool.stats();
        assert_eq!((stats.cached_blocks, stats.cached_bytes), (0, 0));
        assert_eq!((stats.live_blocks, stats.live_bytes), (1, 512));
        assert_eq!(pool.trim(), 0);
        drop(kept);
    }

    #[test]
    fn out_of_memory_trims_and_retries() {
        let pool = Pool::new(FakeAllocator::new(4 * MIB));
        let a = pool.allocate(2 * MIB).unwrap();
        let b = pool.allocate(MIB).unwrap();
        pool.recycle(a);
        pool.recycle(b);
        // 3 MiB are cached and only 1 MiB is free: a 3 MiB request needs the cache emptied.
        let c = pool.allocate(3 * MIB).unwrap();
        assert_eq!(c.class, 3 * MIB);
        let stats = pool.stats();
        assert_eq!(stats.oom_retries, 1);
        assert_eq!((stats.cached_blocks, stats.cached_bytes), (0, 0));
        assert_eq!((stats.live_blocks, stats.live_bytes), (1, 3 * MIB));
        assert_eq!(pool.allocator().live(), 1);
    }

    #[test]
    fn out_of_memory_with_nothing_to_free_is_returned() {
        let pool = Pool::new(FakeAllocator::new(4 * MIB));
        let _held = pool.allocate(3 * MIB).unwrap();
        let error = pool.allocate(2 * MIB).unwrap_err();
        assert!(pool.allocator().is_out_of_memory(&error), "{error}");
        let stats = pool.stats();
        assert_eq!(stats.oom_retries, 1);
        assert_eq!((stats.live_blocks, stats.fresh_allocations), (1, 1));
    }

    #[test]
    fn counters_stay_steady_over_many_cycles() {
        let pool = Arc::new(Pool::new(FakeAllocator::new(64 * MIB)));
        for i in 0..10_000usize {
            let a = pool.allocate(100 + i % 3000).unwrap();
            let b = pool.allocate(2 * MIB).unwrap();
            pool.recycle(a);
            pool.recycle(b);
        }
        let stats = pool.stats();
        assert_eq!((stats.live_blocks, stats.live_bytes), (0, 0));
        // One block per class touched: 512, 1024, 2048, 4096 and 2 MiB.
        assert_eq!(stats.cached_blocks, 5);
        assert_eq!(stats.cached_bytes, 512 + 1024 + 2048 + 4096 + 2 * MIB);
        assert_eq!(stats.fresh_allocations, 5);
        assert_eq!(stats.reuses, 20_000 - 5);
        assert_eq!(pool.allocator().live(), 5);
    }
}
