//! A session: one engine, its settings and statistics. The facade's
//! `Context` is a session chosen for a backend; arrays keep a handle to the
//! session that made them.

use std::fmt;
use std::sync::Arc;

use crate::dtype::DType;
use crate::element::{HostBuffer, SliceMut};
use crate::engine::{Counter, Engine, EvalEnv, Options, Stats, StatsCounter};
use crate::error::{Error, Result};
use crate::graph::ExprGraph;
use crate::node::{KernelCall, Node, Op, Residency};
use crate::shape::{checked_len, format_shape};

/// A handle on an engine with its settings and statistics. Cheap to clone;
/// clones share everything.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    engine: Arc<dyn Engine>,
    options: Options,
    stats: StatsCounter,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("backend", &self.inner.engine.name())
            .field("options", &self.inner.options)
            .finish()
    }
}

impl Session {
    /// A session running `engine` with `options`.
    pub fn new(engine: Arc<dyn Engine>, options: Options) -> Session {
        Session {
            inner: Arc::new(SessionInner {
                engine,
                options,
                stats: StatsCounter::default(),
            }),
        }
    }

    /// A session on the reference evaluator, for arrays that belong to no
    /// context (the invalid result of calling a ufunc with no arguments).
    pub(crate) fn detached() -> Session {
        Session::new(
            Arc::new(crate::reference::ReferenceEngine::new()),
            Options::default(),
        )
    }

    /// The engine's name: `"cpu"`, `"sim"`, `"cuda"`, `"reference"`.
    pub fn backend_name(&self) -> &'static str {
        self.inner.engine.name()
    }

    /// The settings.
    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.inner.engine
    }

    /// What has been run and copied since creation or the last [`Session::reset_stats`].
    pub fn stats(&self) -> Stats {
        self.inner.stats.snapshot()
    }

    /// Sets all statistics to zero.
    pub fn reset_stats(&self) {
        self.inner.stats.reset();
    }

    /// True when both handles share one session.
    pub fn same_as(&self, other: &Session) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn env(&self) -> EvalEnv<'_> {
        EvalEnv {
            stats: &self.inner.stats,
            options: &self.inner.options,
        }
    }

    /// Materialises every node of `nodes` that is not yet, in one evaluation.
    ///
    /// Concurrency: each demanded node's `computing` lock is held while it is
    /// evaluated, taken in address order (so two demands cannot deadlock), and
    /// the memo is checked again under the lock: a node demanded by two
    /// threads at once is computed once. Ancestors' memos are read without
    /// locks, so a demand never waits on anything but its own roots.
    pub(crate) fn demand(&self, nodes: &[Arc<Node>]) -> Result<()> {
        for node in nodes {
            if let Some(error) = node.error() {
                return Err((**error).clone());
            }
        }
        // User kernels the demand depends on run first; their outputs then
        // enter the fused plan as materialised leaves.
        self.run_kernels(nodes)?;
        let mut roots: Vec<&Arc<Node>> = nodes.iter().collect();
        roots.sort_by_key(|n| n.address());
        roots.dedup_by_key(|n| n.address());
        let _guards: Vec<_> = roots.iter().map(|n| n.lock_computing()).collect();
        let pending: Vec<Arc<Node>> = roots
            .iter()
            .filter(|n| !n.is_materialized())
            .map(|n| Arc::clone(n))
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        let graph = ExprGraph::from_roots(&pending);
        let env = self.env();
        env.stats.add(Counter::Evaluations, 1);
        let values = guard_panics("evaluate", || self.inner.engine.evaluate(&graph, env))?;
        if values.len() != pending.len() {
            return Err(Error::internal(
                "evaluate",
                format!(
                    "the engine returned {} values for {} outputs",
                    values.len(),
                    pending.len()
                ),
            ));
        }
        for (node, value) in pending.iter().zip(values) {
            node.set_residency(value);
        }
        Ok(())
    }

    /// Writes a node's value into `out` (same dtype and length). A value not
    /// computed yet is computed straight into `out` when the engine can, and
    /// then not kept (`eval` keeps values).
    pub(crate) fn read_into(&self, node: &Arc<Node>, mut out: SliceMut<'_>) -> Result<()> {
        if let Some(error) = node.error() {
            return Err((**error).clone());
        }
        if !node.is_materialized() {
            self.run_kernels(std::slice::from_ref(node))?;
            let guard = node.lock_computing();
            if !node.is_materialized() {
                let graph = ExprGraph::from_roots(std::slice::from_ref(node));
                let env = self.env();
                match guard_panics("read_into", || {
                    self.inner.engine.evaluate_into(&graph, out, env)
                })? {
                    None => {
                        env.stats.add(Counter::Evaluations, 1);
                        return Ok(());
                    }
                    // The engine declined: the demand below evaluates (and counts) once.
                    Some(back) => out = back,
                }
            }
            drop(guard);
        }
        let host = self.host_value(node)?;
        out.copy_from(&host)
    }

    /// Runs the user kernel launches that `roots` depend on and that have
    /// not run, inputs first. A launch runs once even when several threads
    /// demand its outputs.
    fn run_kernels(&self, roots: &[Arc<Node>]) -> Result<()> {
        if !roots.iter().any(|r| r.reads_kernel()) {
            return Ok(());
        }
        for (launch, node) in pending_launches(roots) {
            let _running = launch.lock_running();
            let outputs = launch.outputs();
            if outputs.iter().flatten().all(|n| n.is_materialized()) {
                continue;
            }
            let inputs: Vec<Arc<Node>> = node.inputs.iter().cloned().collect();
            self.demand(&inputs)?;
            let env = self.env();
            // Device backends get every argument on the device, uploaded once
            // and kept with its array like any other upload.
            for input in &inputs {
                let residency = input.residency();
                if residency.device.is_none() {
                    if let Some(device) = self.inner.engine.to_device(&residency, env)? {
                        input.attach_device(device);
                    }
                }
            }
            let arrays: Vec<(Residency, DType)> =
                inputs.iter().map(|n| (n.residency(), n.dtype())).collect();
            let op = format!("kernel '{}'", launch.kernel.name());
            let values = guard_panics(&op, || self.inner.engine.run_kernel(&launch, &arrays, env))?;
            if values.len() != launch.written.len() {
                return Err(Error::internal(
                    op,
                    format!(
                        "{} values for {} outputs",
                        values.len(),
                        launch.written.len()
                    ),
                ));
            }
            for (slot, value) in outputs.iter().zip(values) {
                if let Some(node) = slot {
                    node.set_residency(value);
                }
            }
        }
        Ok(())
    }

    /// The host copy of a node's value, computing and downloading as needed.
    pub(crate) fn host_value(&self, node: &Arc<Node>) -> Result<Arc<HostBuffer>> {
        self.demand(std::slice::from_ref(node))?;
        let residency = node.residency();
        if let Some(host) = residency.host {
            return Ok(host);
        }
        let host = self
            .inner
            .engine
            .to_host(&residency, node.dtype(), self.env())?;
        node.update_residency(|r| r.host = Some(Arc::clone(&host)));
        Ok(host)
    }
}

/// Runs engine code, turning a panic (always a lazyfuse bug) into
/// [`Error::Internal`] so that no demand can take down the caller.
fn guard_panics<T>(op: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::internal(
                op,
                format!("the engine panicked: {message}"),
            ))
        }
    }
}

/// Rejects shapes whose byte size does not fit in memory addressing.
pub(crate) fn check_size(op: &str, shape: &[usize], dtype: DType) -> Result<()> {
    let bytes = checked_len(shape).and_then(|n| n.checked_mul(dtype.size()));
    match bytes {
        Some(b) if b <= isize::MAX as usize => Ok(()),
        _ => Err(Error::invalid(
            op,
            format!(
                "an array of shape {} and dtype {dtype} is too large to address \
                 (expected at most {} bytes)",
                format_shape(shape),
                isize::MAX
            ),
        )),
    }
}

/// The launches of user kernels reachable from `roots` through nodes not
/// yet computed, each once (with one of its output nodes), inputs first.
fn pending_launches(roots: &[Arc<Node>]) -> Vec<(Arc<KernelCall>, Arc<Node>)> {
    let mut seen: rustc_hash::FxHashSet<usize> = rustc_hash::FxHashSet::default();
    let mut launches: Vec<(Arc<KernelCall>, Arc<Node>)> = Vec::new();
    let mut stack: Vec<(Arc<Node>, bool)> = roots.iter().map(|r| (Arc::clone(r), false)).collect();
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            if let Op::Kernel { launch, .. } = node.op() {
                let id = Arc::as_ptr(launch) as usize;
                if !launches.iter().any(|(l, _)| Arc::as_ptr(l) as usize == id) {
                    launches.push((Arc::clone(launch), Arc::clone(&node)));
                }
            }
            continue;
        }
        if node.is_materialized() || !seen.insert(node.address()) {
            continue;
        }
        stack.push((Arc::clone(&node), true));
        for input in node.inputs.iter() {
            stack.push((Arc::clone(input), false));
        }
    }
    launches
}
