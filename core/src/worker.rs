//! Which stream the calling thread works for: a stream's worker thread
//! runs every demand of that stream, so a demand learns its stream
//! ([`crate::EvalEnv::stream`]) from the thread it runs on.

use std::cell::Cell;

thread_local! {
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// The stream the calling thread works for (0: none).
pub(crate) fn current_stream() -> u64 {
    CURRENT.with(Cell::get)
}

/// Makes the calling thread the worker of stream `id`.
pub(crate) fn work_for(id: u64) {
    CURRENT.with(|c| c.set(id));
}
