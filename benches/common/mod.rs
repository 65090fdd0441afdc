//! What the criterion benches against hand-written rayon loops share: the
//! thread count, a cpu context and a rayon pool of that many threads.

use lazyfuse::Context;

/// Threads of both the lazyfuse context and the hand loops' pool.
pub const THREADS: usize = 2;

/// The cpu backend on [`THREADS`] threads.
pub fn context() -> Context {
    Context::builder()
        .backend("cpu")
        .threads(THREADS)
        .build()
        .expect("the cpu backend builds")
}

/// A rayon pool of [`THREADS`] threads for the hand loops.
pub fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a pool")
}
