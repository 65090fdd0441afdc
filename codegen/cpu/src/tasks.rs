//! Sharing a launch's tasks between the calling thread and the team of
//! workers (`team`).
//!
//! The calling thread works too: it takes tasks from the same queue as
//! the team's workers (`team`), so a launch never waits for a worker to
//! start before work starts, and a worker that comes late simply finds
//! fewer tasks left. (Handing the whole launch to a rayon pool, as
//! `ThreadPool::install` does, cost a wake-up of each worker and one of
//! the caller: a 2-D stencil over 10^5 elements took 60 µs on two threads
//! and 38 µs on one.)

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use lazyfuse_core::{Error, Result};

use super::team::Team;

/// Launches of fewer weighted elements than this run on the calling
/// thread alone: small arrays pay no thread hand-off. (With workers that
/// stay awake, two threads already pay off at one task's worth: a 2-D
/// stencil over 10^5 elements took 30 µs on two and 38 µs on one.) One
/// task's worth, `run::TASK` (not imported: the copies in `pages` share
/// work here too, and `run` builds on `pages`).
pub const PARALLEL_MIN: usize = 64 * 1024;

/// The length of each task when `len` items (elements, rows) are cut into
/// tasks of at most `most` for `workers` workers: as many tasks as a
/// multiple of the workers, of one length (a multiple of `granule`), so that
/// no worker waits while another runs an extra or longer task (10^5
/// elements in tasks of at most 65,536 on 2 workers: 50,176 and 49,824, not
/// 65,536 and 34,464). Only for work whose values do not depend on the
/// cut: element-wise tasks and whole rows, not a reduction's blocks.
pub(crate) fn balanced_task(len: usize, most: usize, workers: usize, granule: usize) -> usize {
    let (most, granule) = (most.max(1), granule.max(1));
    let tasks = len.div_ceil(most);
    if workers <= 1 || tasks <= 1 {
        return most;
    }
    let even = len.div_ceil(tasks.next_multiple_of(workers));
    even.next_multiple_of(granule).clamp(1, most)
}

/// The workers a launch of `work` weighted elements runs on (the calling
/// thread counts as one).
pub(crate) fn workers(pool: Option<&rayon::ThreadPool>, work: usize) -> usize {
    match pool {
        Some(pool) if work >= PARALLEL_MIN => pool.current_num_threads(),
        _ => 1,
    }
}

/// Runs `run` on each task of `work` (with its index), in parallel when
/// `total` weighted elements are enough: the calling thread and up to
/// `workers - 1` of the team's take tasks in order from one queue until
/// none is left or one fails (the first failure is returned). Each
/// participant makes its scratch state with `init` when it takes its first
/// task and keeps it for the next ones.
pub(crate) fn for_each_task<W: Send, S>(
    pool: Option<&rayon::ThreadPool>,
    total: usize,
    work: Vec<W>,
    init: impl Fn() -> Result<S> + Sync,
    run: impl Fn(&mut S, usize, W) -> Result<()> + Sync,
) -> Result<()> {
    let helpers = workers(pool, total).min(work.len()).saturating_sub(1);
    let queue = Mutex::new(work.into_iter().enumerate());
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let failed = AtomicBool::new(false);
    let drain = || {
        let mut state: Option<S> = None;
        while !failed.load(Ordering::Relaxed) {
            // The guard is dropped at the end of this statement: the task
            // runs with the queue unlocked.
            let Some((i, w)) = lock(&queue).next() else {
                return;
            };
            let done = match &mut state {
                Some(state) => run(state, i, w),
                None => init().and_then(|s| run(state.insert(s), i, w)),
            };
            if let Err(error) = done {
                failed.store(true, Ordering::Relaxed);
                lock(&failure).get_or_insert(error);
            }
        }
    };
    share(
        pool.map_or(1, rayon::ThreadPool::current_num_threads),
        helpers,
        &drain,
    );
    failure
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .map_or(Ok(()), Err)
}

/// Runs `run(i)` for each `i` in `0..count` until one returns `false`
/// (then whether all did): on the calling thread and up to `threads - 1` of
/// the team's workers, which take the indices in order from one counter
/// (a routine's few long tasks, the pieces of a user kernel's blocks or of
/// an independent loop, which return `false` at an access outside a
/// buffer).
pub(crate) fn all_indices(
    threads: usize,
    count: usize,
    run: impl Fn(usize) -> bool + Sync,
) -> bool {
    let helpers = threads.min(count).saturating_sub(1);
    let next = AtomicUsize::new(0);
    let all = AtomicBool::new(true);
    let drain = || {
        while all.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return;
            }
            if !run(i) {
                all.store(false, Ordering::Relaxed);
            }
        }
    };
    share(threads, helpers, &drain);
    all.into_inner()
}

/// Runs `drain` on the calling thread and on up to `helpers` workers of
/// the team for `threads` threads (looked up only when there are helpers:
/// a global lock).
fn share(threads: usize, helpers: usize, drain: &(dyn Fn() + Sync)) {
    match (helpers > 0).then(|| Team::for_threads(threads)).flatten() {
        Some(team) => team.run(helpers, drain),
        None => drain(),
    }
}

/// Locks `mutex`; a panic in another task propagates through the scope
/// anyway, so a poisoned lock's data is still used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::{balanced_task, for_each_task};

    #[test]
    fn tasks_are_shared_evenly_by_the_workers() {
        // 10^5 elements, tasks of at most 65,536, two workers: two halves.
        assert_eq!(balanced_task(100_000, 65_536, 2, 512), 50_176);
        // 97 rows, tiles of at most 32: four tiles of 25 (the last 22).
        assert_eq!(balanced_task(97, 32, 2, 1), 25);
        // One worker, or one task: the most.
        assert_eq!(balanced_task(97, 32, 1, 1), 32);
        assert_eq!(balanced_task(20, 32, 2, 1), 32);
        // Never above the most, never zero.
        assert_eq!(balanced_task(65_537, 65_536, 2, 512), 33_280);
        assert_eq!(balanced_task(3, 1, 2, 512), 1);
        for (len, most, workers) in [(1_000_003, 8_192, 2), (5, 2, 3), (4_096, 1_000, 4)] {
            let task = balanced_task(len, most, workers, 1);
            assert!(task >= 1 && task <= most);
            let tasks = len.div_ceil(most).next_multiple_of(workers);
            assert!(len.div_ceil(task) <= tasks, "{len} {most} {workers}");
            assert!(task * tasks - len < tasks, "{len} {most} {workers}");
        }
    }

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
    }

    #[test]
    fn every_task_runs_once_with_its_index() {
        let pool = pool();
        let seen = std::sync::Mutex::new(Vec::new());
        let work: Vec<usize> = (0..37).map(|i| i * 10).collect();
        for_each_task(
            Some(&pool),
            usize::MAX,
            work,
            || Ok(()),
            |_, i, w| {
                assert_eq!(w, i * 10);
                seen.lock().unwrap().push(i);
                Ok(())
            },
        )
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..37).collect::<Vec<_>>());
    }

    #[test]
    fn a_failed_task_stops_the_rest_and_is_returned() {
        let pool = pool();
        let ran = std::sync::atomic::AtomicUsize::new(0);
        let error = for_each_task(
            Some(&pool),
            usize::MAX,
            (0..1000).collect(),
            || Ok(()),
            |_, i, _: usize| {
                ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                match i {
                    3 => Err(lazyfuse_core::Error::internal("test", "task 3")),
                    _ => Ok(()),
                }
            },
        )
        .unwrap_err();
        assert!(error.to_string().contains("task 3"), "{error}");
        assert!(ran.into_inner() < 1000);
    }

    #[test]
    fn state_is_made_once_per_participant() {
        let pool = pool();
        let made = std::sync::atomic::AtomicUsize::new(0);
        for_each_task(
            Some(&pool),
            usize::MAX,
            vec![(); 64],
            || Ok(made.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            |_, _, ()| Ok(()),
        )
        .unwrap();
        assert!((1..=2).contains(&made.into_inner()));
    }

    #[test]
    fn every_index_runs_once_until_one_fails() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let seen: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        for threads in [1, 2, 3] {
            assert!(super::all_indices(threads, 100, |i| {
                seen[i].fetch_add(1, Ordering::Relaxed);
                true
            }));
        }
        assert!(seen.iter().all(|n| n.load(Ordering::Relaxed) == 3));
        let ran = AtomicUsize::new(0);
        assert!(!super::all_indices(1, 100, |i| {
            ran.fetch_add(1, Ordering::Relaxed);
            i != 10
        }));
        assert_eq!(ran.into_inner(), 11);
    }
}
