//! A team of worker threads that stay awake between launches.
//!
//! A launch shared with sleeping threads pays for waking them: on the
//! virtual machines this project runs on a futex wake-up costs 10–20 µs,
//! as much as a whole launch over 10^5 elements, so a parallel launch of
//! that size was slower than the calling thread alone. A team's workers
//! spin for [`SPIN`] after each launch before they sleep (as OpenMP's
//! threads do by default), so launches that follow one another, as a
//! program's do, start on awake threads.
//!
//! The calling thread always works too ([`Team::run`]), and workers
//! *join* a launch rather than being handed a share of it: once the
//! caller has found no work left, a worker that has not joined yet (still
//! waking, or not given a core) is no longer waited for. Beside another
//! library's spinning threads (Numba's OpenMP workers spin for
//! milliseconds after each parallel loop) a worker that was counted on
//! from the start made the caller wait for its core: a 2-D stencil over
//! 10^5 elements took 230–310 µs a call in such a process, 73–78 µs with
//! joining (38 µs alone on one thread, 31 µs on the team).
//!
//! One launch runs on a team at a time; a caller that finds it busy (a
//! second thread of the user's, or a launch from inside a launch) runs
//! alone, which is always correct, only slower.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::time::{Duration, Instant};

/// How long a worker spins for the next launch before it sleeps.
pub const SPIN: Duration = Duration::from_micros(200);

/// A yield that takes this long ran another thread: the core is wanted.
const CROWDED: Duration = Duration::from_micros(20);

/// The job of the current launch, its lifetime erased (see [`Team::run`]).
type Job = &'static (dyn Fn() + Sync);

/// What the caller and the workers share.
struct Shared {
    /// Held by the caller for the whole of a launch.
    launch: Mutex<()>,
    /// The current launch's job and how many more workers may join it
    /// (empty once the caller has finished its share).
    job: Mutex<Option<(Job, usize)>>,
    /// Bumped once per launch; workers wait for it to change.
    generation: AtomicU64,
    /// Workers that joined the current launch and have not left it.
    pending: AtomicUsize,
    /// A worker's panic, raised again in the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Workers asleep wait on `wake` (with `sleepers` counting them).
    sleepers: Mutex<usize>,
    wake: Condvar,
    /// Set when the team is dropped: the workers then end.
    closed: AtomicBool,
}

/// Worker threads shared by every launch asking for the same number of
/// threads.
pub struct Team {
    shared: Arc<Shared>,
    workers: usize,
}

impl Team {
    /// The team for launches on `threads` threads: the caller and
    /// `threads - 1` workers, started on first use and kept for the
    /// process (as a thread pool is). `None` for one thread, or when the
    /// system refuses the threads.
    pub fn for_threads(threads: usize) -> Option<Arc<Team>> {
        static TEAMS: OnceLock<Mutex<HashMap<usize, Option<Arc<Team>>>>> = OnceLock::new();
        if threads <= 1 {
            return None;
        }
        let mut teams = lock(TEAMS.get_or_init(Default::default));
        teams
            .entry(threads)
            .or_insert_with(|| Team::start(threads - 1).map(Arc::new))
            .clone()
    }

    fn start(workers: usize) -> Option<Team> {
        let shared = Arc::new(Shared {
            launch: Mutex::new(()),
            job: Mutex::new(None),
            generation: AtomicU64::new(0),
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
            sleepers: Mutex::new(0),
            wake: Condvar::new(),
            closed: AtomicBool::new(false),
        });
        let mut team = Team { shared, workers: 0 };
        for index in 0..workers {
            let shared = Arc::clone(&team.shared);
            // On failure the team is dropped, which ends the workers
            // started so far.
            std::thread::Builder::new()
                .name(format!("lazyfuse-team-{index}"))
                .spawn(move || work(&shared))
                .ok()?;
            team.workers += 1;
        }
        Some(team)
    }

    /// Runs `job` on the calling thread and on up to `helpers` workers at
    /// once, returning when every call has returned. `job` shares out the
    /// work itself (each call takes tasks until none is left). When the
    /// team is busy with another launch `job` runs on the caller alone. A
    /// panic in any call is raised again here.
    pub fn run(&self, helpers: usize, job: &(dyn Fn() + Sync)) {
        let helpers = helpers.min(self.workers);
        let shared = &*self.shared;
        let launch = match shared.launch.try_lock() {
            Ok(guard) if helpers > 0 => Some(guard),
            // A panic raised through an earlier launch left nothing half
            // done: the slot is emptied before any panic is raised.
            Err(TryLockError::Poisoned(poisoned)) if helpers > 0 => Some(poisoned.into_inner()),
            Ok(_) | Err(_) => None,
        };
        let Some(_launch) = launch else {
            return job();
        };
        // SAFETY: the erased lifetime is never outlived: a worker calls
        // the job only after joining (taking a seat from the slot, under
        // its lock, while the slot holds it) and before leaving (its
        // decrement of `pending`); this function empties the slot, so that
        // nobody joins any more, and then waits for `pending` to be zero
        // before it returns (it does not unwind before then either: its
        // own call is caught).
        let erased: Job = unsafe { std::mem::transmute::<&(dyn Fn() + Sync), Job>(job) };
        {
            // The slot and the generation change together, under the
            // slot's lock, so a worker reads them consistently.
            let mut slot = lock(&shared.job);
            *slot = Some((erased, helpers));
            shared.generation.fetch_add(1, Ordering::AcqRel);
        }
        if *lock(&shared.sleepers) > 0 {
            shared.wake.notify_all();
        }
        let own = catch_unwind(AssertUnwindSafe(job));
        // The caller has found no task left: a worker still asleep or not
        // yet running would find none either, so it is not waited for.
        *lock(&shared.job) = None;
        wait_for(|| shared.pending.load(Ordering::Acquire) == 0);
        if let Err(panic) = own {
            resume_unwind(panic);
        }
        if let Some(panic) = lock(&shared.panic).take() {
            resume_unwind(panic);
        }
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        let shared = &*self.shared;
        shared.closed.store(true, Ordering::Release);
        {
            let _slot = lock(&shared.job);
            shared.generation.fetch_add(1, Ordering::AcqRel);
        }
        let _sleepers = lock(&shared.sleepers);
        shared.wake.notify_all();
    }
}

/// A worker's life: wait for a launch, join it while it has seats left,
/// repeat (until the team is dropped).
fn work(shared: &Shared) {
    // Not the generation now: a launch may already have started since
    // the thread was spawned (the team starts with generation 0).
    let mut seen = 0;
    loop {
        let changed = || shared.generation.load(Ordering::Acquire) != seen;
        if !spin_until(changed, SPIN) {
            let mut sleepers = lock(&shared.sleepers);
            *sleepers += 1;
            while !changed() {
                sleepers = shared
                    .wake
                    .wait(sleepers)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            *sleepers -= 1;
        }
        let job = {
            let mut slot = lock(&shared.job);
            // Under the slot's lock, the generation is the slot's own: a
            // worker joins a launch at most once.
            seen = shared.generation.load(Ordering::Acquire);
            match &mut *slot {
                Some((job, seats)) if *seats > 0 => {
                    *seats -= 1;
                    shared.pending.fetch_add(1, Ordering::AcqRel);
                    Some(*job)
                }
                _ => None,
            }
        };
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        let Some(job) = job else {
            continue;
        };
        if let Err(panic) = catch_unwind(AssertUnwindSafe(job)) {
            lock(&shared.panic).get_or_insert(panic);
        }
        shared.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Spins until `done` (true) or for `limit` (false), or less when the
/// core is wanted by another thread (false).
///
/// Spinning pays only on a core nobody else wants, so the spinner yields
/// between rounds and stops as soon as a yield takes long enough to show
/// that another thread ran meanwhile (the caller's own thread placed on
/// this core, another library's threads).
fn spin_until(done: impl Fn() -> bool, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if done() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= limit {
            return done();
        }
        let before = Instant::now();
        std::thread::yield_now();
        if before.elapsed() >= CROWDED {
            return done();
        }
    }
}

/// Waits until `done`: spins a while (the workers' share is usually about
/// as long as the caller's), then yields the core.
fn wait_for(done: impl Fn() -> bool) {
    if spin_until(&done, SPIN) {
        return;
    }
    while !done() {
        std::thread::yield_now();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::Team;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Counts a call in, then waits until `count` calls have come in (so
    /// that the caller's own call keeps the launch open for the workers).
    fn arrive_and_wait(arrived: &AtomicUsize, count: usize) {
        arrived.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        while arrived.load(Ordering::SeqCst) < count {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "a worker never joined"
            );
            std::thread::yield_now();
        }
    }

    #[test]
    fn workers_join_while_the_caller_works() {
        let team = Team::start(2).unwrap();
        for _ in 0..50 {
            let arrived = AtomicUsize::new(0);
            team.run(2, &|| arrive_and_wait(&arrived, 3));
            assert_eq!(arrived.into_inner(), 3);
        }
    }

    #[test]
    fn no_more_workers_join_than_asked() {
        let team = Team::start(2).unwrap();
        for _ in 0..50 {
            let calls = AtomicUsize::new(0);
            team.run(1, &|| {
                calls.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_micros(200));
            });
            assert!((1..=2).contains(&calls.into_inner()));
        }
    }

    #[test]
    fn a_busy_team_leaves_the_caller_alone() {
        let team = Team::start(1).unwrap();
        let inner_calls = AtomicUsize::new(0);
        team.run(1, &|| {
            team.run(1, &|| {
                inner_calls.fetch_add(1, Ordering::Relaxed);
            });
        });
        // Each outer call ran the inner launch alone (the team was busy):
        // no deadlock, one or two inner calls.
        assert!((1..=2).contains(&inner_calls.into_inner()));
    }

    #[test]
    fn a_workers_panic_reaches_the_caller() {
        let team = Team::start(1).unwrap();
        let caller = std::thread::current().id();
        let arrived = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            team.run(1, &|| {
                arrive_and_wait(&arrived, 2);
                if std::thread::current().id() != caller {
                    panic!("in a worker");
                }
            });
        }));
        assert!(result.is_err());
        // The team still works afterwards.
        let arrived = AtomicUsize::new(0);
        team.run(1, &|| arrive_and_wait(&arrived, 2));
        assert_eq!(arrived.into_inner(), 2);
    }
}
