//! Streams: ordered queues of asynchronous demands (CUDA's streams,
//! Numba's `cuda.stream()`).
//!
//! A [`Stream`] owns a worker thread that runs its demands one after
//! another; [`Stream::eval`] returns at once with a [`Pending`]. Work on
//! one stream is ordered; work on different streams runs at the same time.
//! A demand that needs a value another stream is computing waits for it
//! (a node is computed once: the second demand waits on its lock), so
//! results never depend on timing. On every backend the plan of each
//! demand runs on the worker; the `cuda` backend does not yet map streams
//! onto CUDA streams of its own (its copies and kernels stay on the
//! context's stream).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use crate::array::Array;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::session::Session;

type Job = Box<dyn FnOnce() + Send>;

/// Stream identities: 0 is no stream.
static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

/// An ordered queue of asynchronous work on one context. Cheap to clone
/// (clones share the queue); `Send + Sync`.
#[derive(Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

struct StreamInner {
    id: u64,
    session: Session,
    /// The worker's queue (the worker starts with the first work and ends
    /// when the last handle is dropped, after the work queued before).
    jobs: Mutex<Option<Sender<Job>>>,
    /// The first error of work queued without a [`Pending`]
    /// (`to_device_on`), reported by the next `synchronize`.
    failed: Arc<Mutex<Option<Error>>>,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("session", &self.inner.session)
            .finish()
    }
}

/// The outcome of asynchronous work, to wait for.
#[derive(Debug)]
#[must_use = "the work's outcome is only known by waiting for it"]
pub struct Pending {
    outcome: Receiver<Result<()>>,
}

impl Pending {
    /// Waits until the work is done; its error, if it failed.
    pub fn wait(self) -> Result<()> {
        self.outcome.recv().unwrap_or_else(|_| Err(worker_lost()))
    }

    /// The outcome if the work is done, without waiting; `Err(self)` to
    /// wait again later.
    pub fn try_wait(self) -> std::result::Result<Result<()>, Pending> {
        match self.outcome.try_recv() {
            Ok(outcome) => Ok(outcome),
            Err(mpsc::TryRecvError::Empty) => Err(self),
            Err(mpsc::TryRecvError::Disconnected) => Ok(Err(worker_lost())),
        }
    }
}

fn worker_lost() -> Error {
    Error::internal(
        "stream",
        "the stream's worker stopped before finishing the work",
    )
}

impl Stream {
    /// A new stream on `session` (its worker starts with the first work).
    pub(crate) fn new(session: &Session) -> Stream {
        Stream {
            inner: Arc::new(StreamInner {
                id: NEXT_STREAM.fetch_add(1, Ordering::Relaxed),
                session: session.clone(),
                jobs: Mutex::new(None),
                failed: Arc::default(),
            }),
        }
    }

    /// The worker's queue, starting the worker if needed.
    fn start_worker(id: u64) -> Result<Sender<Job>> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("lazyfuse-stream-{id}"))
            .spawn(move || {
                crate::worker::work_for(id);
                for job in queue {
                    job();
                }
            })
            .map_err(|e| Error::Device {
                op: "stream".into(),
                message: format!("could not start the stream's worker thread: {e}"),
            })?;
        Ok(jobs)
    }

    /// Queues `work`; returns its outcome to wait for.
    fn enqueue(&self, work: impl FnOnce() -> Result<()> + Send + 'static) -> Result<Pending> {
        let (done, outcome) = mpsc::channel();
        let job: Job = Box::new(move || {
            // A panic in the work must not end the worker: it becomes an error.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err(Error::internal("stream", "the work panicked")));
            let _ = done.send(result);
        });
        let mut jobs = self
            .inner
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if jobs.is_none() {
            *jobs = Some(Stream::start_worker(self.inner.id)?);
        }
        jobs.as_ref()
            .ok_or_else(worker_lost)?
            .send(job)
            .map_err(|_| worker_lost())?;
        Ok(Pending { outcome })
    }

    fn check_arrays(&self, op: &str, arrays: &[&Array]) -> Result<()> {
        for a in arrays {
            a.check()?;
            if !a.session().same_as(&self.inner.session) {
                return Err(Error::invalid(
                    op,
                    "an array belongs to another context than the stream (expected arrays of the stream's context)",
                ));
            }
        }
        Ok(())
    }

    /// The stream's identity in timelines ([`crate::TimelineEvent::stream`]).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Queues the demand of `arrays` (as [`Array::eval`]: their values are
    /// kept) after the work already queued; returns at once.
    pub fn eval(&self, arrays: &[&Array]) -> Result<Pending> {
        self.check_arrays("stream eval", arrays)?;
        let nodes: Vec<_> = arrays.iter().map(|a| a.node()).collect();
        let session = self.inner.session.clone();
        self.enqueue(move || session.demand(&nodes))
    }

    /// Queues `array`'s copy to the device (Numba's `cuda.to_device(a,
    /// stream=s)`); its error, if any, is reported by the next
    /// [`Stream::synchronize`].
    pub(crate) fn to_device(&self, array: &Array) -> Result<()> {
        self.check_arrays("to_device_on", &[array])?;
        let array = array.clone();
        let failed = Arc::clone(&self.inner.failed);
        let pending = self.enqueue(move || {
            if let Err(e) = array.to_device() {
                let mut first = failed.lock().unwrap_or_else(PoisonError::into_inner);
                first.get_or_insert(e);
            }
            Ok(())
        })?;
        drop(pending);
        Ok(())
    }

    /// Waits until all work queued so far is done; the first error of work
    /// queued without a [`Pending`] since the last call, if any.
    pub fn synchronize(&self) -> Result<()> {
        self.enqueue(|| Ok(()))?.wait()?;
        let failed = self
            .inner
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        failed.map_or(Ok(()), Err)
    }
}

impl Array {
    /// Queues the copy of this array to the device on `stream` and returns
    /// the array at once (Numba's `cuda.to_device(a, stream=s)`); later
    /// demands use the copy once it is made.
    pub fn to_device_on(&self, stream: &Stream) -> Result<Array> {
        stream.to_device(self)?;
        Ok(self.clone())
    }

    /// Reads the array into `out` after the work queued on `stream` before
    /// (Numba's `copy_to_host(ary, stream=s)`): the value is computed and
    /// downloaded on the stream. It returns when `out` holds the value (a
    /// borrowed buffer cannot be written later).
    pub fn read_into_on<T: Element>(&self, out: &mut [T], stream: &Stream) -> Result<()> {
        stream.check_arrays("read_into_on", &[self])?;
        if out.len() != self.len() || T::DTYPE != self.dtype() {
            // The checks and their messages are read_into's.
            return self.read_into(out);
        }
        let (array, host) = (self.clone(), Arc::new(Mutex::new(None)));
        let into = Arc::clone(&host);
        stream
            .enqueue(move || {
                let value = array.to_host()?;
                *into.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
                Ok(())
            })?
            .wait()?;
        let value = host.lock().unwrap_or_else(PoisonError::into_inner).take();
        let value = value.ok_or_else(worker_lost)?;
        let elements = value.as_slice::<T>().ok_or_else(|| {
            Error::internal("read_into_on", "the engine produced data of another dtype")
        })?;
        out.copy_from_slice(elements);
        Ok(())
    }
}

impl Session {
    /// A new [`Stream`] on this context (Numba's `cuda.stream()`).
    pub fn stream(&self) -> Stream {
        Stream::new(self)
    }
}
