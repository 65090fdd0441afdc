//! The timeline of a (simulated) device: what each of its engines did, and
//! when, so that overlap of copies and kernels is observable without a GPU.
//! The `sim` backend keeps one ([`crate::Session::timeline`]): a copy engine
//! in each direction and a compute engine, each doing one thing at a time,
//! with work of one stream in order and work of different streams free to
//! overlap, timed by simulated bandwidths and kernel throughput.

/// One engine of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceEngine {
    /// The copy engine moving host memory to the device.
    HostToDevice,
    /// The copy engine moving device memory to the host.
    DeviceToHost,
    /// The streaming multiprocessors running kernels.
    Compute,
}

/// One interval of a device's timeline, in simulated seconds since the
/// context was made.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEvent {
    /// The engine that did the work.
    pub engine: DeviceEngine,
    /// The stream it was queued on (0: the context's own, for demands made
    /// outside any stream).
    pub stream: u64,
    /// When it started.
    pub start: f64,
    /// When it ended.
    pub end: f64,
    /// What it was: `"upload 4000 bytes"`, `"kernel lf_ew_… (1000 elements)"`.
    pub what: String,
}

impl TimelineEvent {
    /// Whether this interval and `other` share some time.
    pub fn overlaps(&self, other: &TimelineEvent) -> bool {
        self.start < other.end && other.start < self.end
    }
}
