//! A session: one engine, its settings and statistics. The facade's
//! `Context` is a session chosen for a backend; arrays keep a handle to the
//! session that made them.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::dtype::DType;
use crate::element::{HostBuffer, SliceMut};
use crate::engine::{Counter, Engine, EvalEnv, Options, Stats, StatsCounter};
use crate::error::{Error, Result};
use crate::graph::ExprGraph;
use crate::node::{KernelCall, Node, Op};
use crate::scalar::Literal;
use crate::shape::{checked_len, format_shape, Shape};

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
    /// The host buffers pinned for this session's engine (see the `pinned` module).
    pinned: Mutex<PinnedRegistry>,
    /// The constant node of each scalar operand value met (`x * 2.0`):
    /// one node however often a value is used, so a program's snapshot,
    /// cache key and drop walk each constant once (see [`Session::constant`]).
    constants: Mutex<FxHashMap<Literal, Arc<Node>>>,
}

/// Scalar operand values a session keeps a constant node for; past it the
/// table starts over (a loop over ever-new values keeps at most this many).
const CONSTANTS: usize = 1024;

/// The pinned buffers of a session (see the `pinned` module): the listed ones
/// (found again by `from_slice`), and the retired ones waiting for their
/// last user before they are unpinned.
#[derive(Default)]
pub(crate) struct PinnedRegistry {
    pub(crate) live: Vec<Weak<HostBuffer>>,
    pub(crate) retired: Vec<Arc<HostBuffer>>,
}

/// A `defer_cleanup` guard ([`Session::defer_cleanup`]): dropping the
/// last one releases the device buffers freed meanwhile.
#[must_use = "cleanup is deferred only while the guard lives"]
pub struct CleanupGuard {
    engine: Arc<dyn Engine>,
}

impl fmt::Debug for CleanupGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CleanupGuard")
            .field("backend", &self.engine.name())
            .finish()
    }
}

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        self.engine.end_deferred_cleanup();
    }
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
                pinned: Mutex::default(),
                constants: Mutex::default(),
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

    /// The registry of pinned host buffers.
    pub(crate) fn pinned_registry(&self) -> &Mutex<PinnedRegistry> {
        &self.inner.pinned
    }

    /// Numba's `cuda.defer_cleanup()`: while the returned guard (or any
    /// other) lives, device buffers whose arrays are gone are queued rather
    /// than reused or freed; they are released when the last guard drops.
    /// (Backends without device memory have nothing to defer.)
    pub fn defer_cleanup(&self) -> CleanupGuard {
        self.inner.engine.begin_deferred_cleanup();
        CleanupGuard {
            engine: Arc::clone(&self.inner.engine),
        }
    }

    /// What has been run and copied since creation or the last [`Session::reset_stats`].
    pub fn stats(&self) -> Stats {
        self.inner.stats.snapshot()
    }

    /// What the device's engines did and when, on a backend that simulates
    /// them (`sim` built with `sim_timing`; see [`crate::timeline`]); `None`
    /// elsewhere.
    pub fn timeline(&self) -> Option<Vec<crate::TimelineEvent>> {
        self.inner.engine.timeline()
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
            stream: crate::worker::current_stream(),
            results_to_host: false,
        }
    }

    /// Materialises every node of `nodes` that is not yet, in one evaluation.
    ///
    /// Concurrency: each demanded node's `computing` lock is held while it is
    /// evaluated, taken in address order (so two demands cannot deadlock), and
    /// the memo is checked again under the lock: a node demanded by two
    /// threads at once is computed once. Ancestors' memos are read without
    /// locks, so a demand never waits on anything but its own roots and the
    /// user kernel launches it runs (whose locks are taken first, also in
    /// address order: a launch runs once, whichever of its outputs is asked).
    /// The constant node of scalar operand `literal`: the same node for
    /// every use of the value in this session (while the table holds it).
    /// Such a node is never demanded or given a value (a user's array of
    /// one value is a node of its own), so sharing it changes no result.
    pub(crate) fn constant(&self, literal: Literal) -> Arc<Node> {
        let mut constants = self
            .inner
            .constants
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(node) = constants.get(&literal) {
            return Arc::clone(node);
        }
        if constants.len() >= CONSTANTS {
            constants.clear();
        }
        let node = Node::new(
            Op::Fill(literal),
            literal.dtype(),
            Shape::new(),
            SmallVec::new(),
        );
        constants.insert(literal, Arc::clone(&node));
        node
    }

    pub(crate) fn demand(&self, nodes: &[Arc<Node>]) -> Result<()> {
        self.demand_for(nodes, false)
    }

    /// [`Session::demand`] of values read on the host next when
    /// `results_to_host` (see [`EvalEnv::results_to_host`]).
    fn demand_for(&self, nodes: &[Arc<Node>], results_to_host: bool) -> Result<()> {
        for node in nodes {
            if let Some(error) = node.error() {
                return Err((**error).clone());
            }
        }
        let launches = pending_launches(nodes);
        let _running: Vec<_> = launches.iter().map(|l| l.lock_running()).collect();
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
        self.evaluate(&pending, &graph, results_to_host)
    }

    /// Evaluates `graph` (made from `roots`) and keeps every output's value.
    fn evaluate(
        &self,
        roots: &[Arc<Node>],
        graph: &ExprGraph,
        results_to_host: bool,
    ) -> Result<()> {
        let env = EvalEnv {
            results_to_host,
            ..self.env()
        };
        env.stats.add(Counter::Evaluations, 1);
        let values = guard_panics("evaluate", || self.inner.engine.evaluate(graph, env))?;
        let expected = roots.len() + graph.kernel_outputs().len();
        if values.len() != expected {
            return Err(Error::internal(
                "evaluate",
                format!(
                    "the engine returned {} values for {expected} outputs",
                    values.len(),
                ),
            ));
        }
        let nodes = roots.iter().chain(graph.kernel_outputs());
        for (node, value) in nodes.zip(values) {
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
            let roots = std::slice::from_ref(node);
            let launches = pending_launches(roots);
            let running: Vec<_> = launches.iter().map(|l| l.lock_running()).collect();
            let guard = node.lock_computing();
            if !node.is_materialized() {
                let graph = ExprGraph::from_roots(roots);
                if !graph.kernel_outputs().is_empty() {
                    // Other outputs of a launch must be kept: evaluate.
                    self.evaluate(roots, &graph, true)?;
                } else {
                    let env = self.env();
                    match guard_panics("read_into", || {
                        self.inner.engine.evaluate_into(&graph, out, env)
                    })? {
                        None => {
                            env.stats.add(Counter::Evaluations, 1);
                            return Ok(());
                        }
                        // The engine declined: this graph is evaluated (and
                        // counted) once and kept, and copied below (not
                        // snapshotted again: the engine's program lookup
                        // for it is remembered too).
                        Some(back) => {
                            out = back;
                            self.evaluate(roots, &graph, true)?;
                        }
                    }
                }
            }
            drop(guard);
            drop(running);
        }
        self.demand_for(std::slice::from_ref(node), true)?;
        let residency = node.residency();
        if residency.host.is_none() {
            let env = self.env();
            // A value on the device goes straight into `out`.
            match self.inner.engine.download_into(&residency, out, env)? {
                None => return Ok(()),
                Some(back) => out = back,
            }
        }
        let host = self.host_value(node)?;
        self.count_host_copy(host.len() * host.dtype().size());
        out.copy_from(&host)
    }

    /// Counts `bytes` copied within host memory at the boundary
    /// ([`crate::Stats::host_copy_bytes`]): for bindings that copy a
    /// caller's data into this context's memory themselves.
    pub fn count_host_copy(&self, bytes: usize) {
        self.inner.stats.add(Counter::HostCopyBytes, bytes as u64);
    }

    /// Writes the values of `nodes` into `outs` (one each, of its node's
    /// dtype and length). One node is [`Session::read_into`]. When none is
    /// computed yet, they are distinct and no user kernel launch is pending
    /// among them, the engine may compute them all straight into `outs` in
    /// one program without keeping them; otherwise one demand computes (and
    /// keeps) them all, and each is copied out.
    pub(crate) fn read_all_into_nodes(
        &self,
        nodes: &[Arc<Node>],
        outs: Vec<SliceMut<'_>>,
    ) -> Result<()> {
        for node in nodes {
            if let Some(error) = node.error() {
                return Err((**error).clone());
            }
        }
        let mut outs = outs;
        match (nodes, outs.len()) {
            ([], _) => return Ok(()),
            ([node], 1) => {
                if let Some(out) = outs.pop() {
                    return self.read_into(node, out);
                }
            }
            _ => {}
        }
        let mut by_address: Vec<&Arc<Node>> = nodes.iter().collect();
        by_address.sort_by_key(|n| n.address());
        let distinct = by_address
            .windows(2)
            .all(|w| w[0].address() != w[1].address());
        let fresh = || nodes.iter().all(|n| !n.is_materialized());
        if distinct && fresh() && pending_launches(nodes).is_empty() {
            let guards: Vec<_> = by_address.iter().map(|n| n.lock_computing()).collect();
            if fresh() {
                let graph = ExprGraph::from_roots(nodes);
                if graph.kernel_outputs().is_empty() {
                    let env = self.env();
                    let back = guard_panics("read_all_into", || {
                        self.inner.engine.evaluate_all_into(&graph, outs, env)
                    })?;
                    match back {
                        None => {
                            env.stats.add(Counter::Evaluations, 1);
                            return Ok(());
                        }
                        // The engine declined: this graph is evaluated once
                        // (kept) and each value copied below.
                        Some(back) => {
                            outs = back;
                            self.evaluate(nodes, &graph, true)?;
                        }
                    }
                }
            }
            drop(guards);
        }
        self.demand_for(nodes, true)?;
        for (node, out) in nodes.iter().zip(outs) {
            self.read_into(node, out)?;
        }
        Ok(())
    }

    /// The host copy of a node's value, computing and downloading as needed.
    pub(crate) fn host_value(&self, node: &Arc<Node>) -> Result<Arc<HostBuffer>> {
        self.demand_for(std::slice::from_ref(node), true)?;
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

/// The user kernel launches that `roots` need and that have not run, each
/// once, in address order (the order their locks are taken in).
fn pending_launches(roots: &[Arc<Node>]) -> Vec<Arc<KernelCall>> {
    if !roots
        .iter()
        .any(|r| r.reads_kernel() && !r.is_materialized())
    {
        return Vec::new();
    }
    let mut seen: rustc_hash::FxHashSet<usize> = rustc_hash::FxHashSet::default();
    let mut launches: Vec<Arc<KernelCall>> = Vec::new();
    let mut stack: Vec<&Arc<Node>> = roots.iter().collect();
    while let Some(node) = stack.pop() {
        if node.is_materialized() || !node.reads_kernel() || !seen.insert(node.address()) {
            continue;
        }
        if let Op::Kernel { launch, .. } = node.op() {
            launches.push(Arc::clone(launch));
        }
        stack.extend(node.inputs.iter());
    }
    launches.sort_by_key(|l| Arc::as_ptr(l) as usize);
    launches.dedup_by_key(|l| Arc::as_ptr(l) as usize);
    launches
}
