//! The driver alone, on a runtime that records what it is asked to do: the
//! plan's steps reach the runtime in order, each input is uploaded once and
//! kept with its array, results stay in the runtime's memory until read,
//! and `explain()` reads the cached program; a pipelined demand forks its
//! streams, runs its chunks on them and joins them back, holding the
//! buffers of a few chunks at a time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::any::Any;
use std::sync::{Arc, Mutex};

use lazyfuse_core::{
    DType, DeviceBuffer, EvalEnv, HostBuffer, KernelLaunch, Options, Residency, Result, Session,
    UserKernel,
};
use lazyfuse_fusion::{is_pipeline_stream, Driver, Launch, Runtime, ScanLaunch};

/// Buffers of one recorder alive now, and the most alive at once.
type Live = Arc<Mutex<(usize, usize)>>;

/// A device buffer of the recording runtime: its length only.
#[derive(Debug)]
struct Recorded(usize, Live);

impl Drop for Recorded {
    fn drop(&mut self) {
        self.1.lock().unwrap().0 -= 1;
    }
}

impl DeviceBuffer for Recorded {
    fn bytes(&self) -> usize {
        self.0 * 4
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A device runtime that computes nothing and writes down every call.
#[derive(Debug, Default)]
struct Recorder {
    calls: Mutex<Vec<String>>,
    live: Live,
}

impl Recorder {
    /// A buffer of `len` elements, counted alive until dropped.
    fn buffer(&self, len: usize) -> Arc<dyn DeviceBuffer> {
        let mut live = self.live.lock().unwrap();
        live.0 += 1;
        live.1 = live.1.max(live.0);
        Arc::new(Recorded(len, Arc::clone(&self.live)))
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    fn note(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
}

impl Runtime for Recorder {
    type Buffer = Arc<dyn DeviceBuffer>;
    const DEVICE: bool = true;

    fn name(&self) -> &'static str {
        "recorder"
    }

    fn executor(&self) -> String {
        "a recording runtime".into()
    }

    fn resident(&self, value: &Residency) -> Option<Arc<dyn DeviceBuffer>> {
        value.device.clone()
    }

    fn residency(&self, buffer: Arc<dyn DeviceBuffer>) -> Residency {
        Residency::device(buffer)
    }

    fn upload(&self, host: &Arc<HostBuffer>, _env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        self.note(format!("upload {}", host.len()));
        Ok(self.buffer(host.len()))
    }

    fn download(
        &self,
        buffer: &Arc<dyn DeviceBuffer>,
        dtype: DType,
        _env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        self.note("download".into());
        Ok(Arc::new(HostBuffer::try_zeros(dtype, buffer.bytes() / 4)?))
    }

    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        _env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        let read = inputs.iter().flatten().count();
        self.note(format!("launch reading {read}"));
        let outputs = launch.kernel.outputs.len();
        Ok((0..outputs)
            .map(|_| self.buffer(launch.domain_len()))
            .collect())
    }

    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: Vec<(Arc<dyn DeviceBuffer>, DType)>,
        _env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        self.note(format!(
            "user kernel '{}' reading {}",
            launch.kernel.name(),
            arrays.len()
        ));
        Ok(launch
            .written
            .iter()
            .map(|&w| self.buffer(arrays[w].0.bytes() / 4))
            .collect())
    }

    fn scan(
        &self,
        scan: &ScanLaunch,
        input: &Arc<dyn DeviceBuffer>,
        _env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        self.note(format!("scan axis {}", scan.axis));
        Ok(self.buffer(input.bytes() / 4))
    }

    fn wait_streams(&self, waiter: u64, waited: &[u64]) {
        let name = |s: u64| match is_pipeline_stream(s) {
            true => format!("lane {}", s & 3),
            false => format!("stream {s}"),
        };
        let waited: Vec<String> = waited.iter().map(|&s| name(s)).collect();
        self.note(format!("{} waits for {}", name(waiter), waited.join(", ")));
    }

    fn explain_launch(&self, index: usize, _launch: &Launch) -> String {
        format!("k{index} on the recorder\n")
    }

    fn user_kernel_executor(&self, _launch: &KernelLaunch) -> String {
        "nothing".into()
    }
}

#[test]
fn the_plan_reaches_the_runtime_and_inputs_are_uploaded_once() {
    let driver = Arc::new(Driver::new(Recorder::default()));
    let session = Session::new(driver.clone(), Options::default());
    let a = session.from_slice(&[1.0f32, 2.0, 3.0]);
    let b = session.from_slice(&[4.0f32, 5.0, 6.0]);
    let explained = (&a * &b + 1.0f32).explain();
    assert!(explained.contains("k0 on the recorder"), "{explained}");
    assert!(explained.contains("upload"), "{explained}");
    assert!(driver.runtime().take().is_empty(), "explain() runs nothing");

    let y = &a * &b + 1.0f32;
    session.eval(&[&y]).unwrap();
    assert_eq!(
        driver.runtime().take(),
        ["upload 3", "upload 3", "launch reading 2"],
        "one upload per input, then the one fused kernel"
    );
    // The inputs' device copies stay with the arrays; the result with y.
    let z = &y - &a;
    session.eval(&[&z]).unwrap();
    assert_eq!(driver.runtime().take(), ["launch reading 2"]);
    let s = session.stats();
    assert_eq!(
        (s.h2d_copies, s.kernel_launches, s.d2h_copies),
        (2, 2, 0),
        "{s:?}"
    );
    // Reading a result downloads it, once.
    z.to_host().unwrap();
    z.to_host().unwrap();
    assert_eq!(driver.runtime().take(), ["download"]);
}

/// A user kernel the recorder "runs": it has no body.
#[derive(Debug)]
struct Named(&'static str);

impl UserKernel for Named {
    fn name(&self) -> &str {
        self.0
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn run_host(&self, _launch: &KernelLaunch, _arrays: &[&HostBuffer]) -> Result<Vec<HostBuffer>> {
        Ok(Vec::new())
    }

    fn host_executor(&self) -> &'static str {
        "nothing"
    }
}

#[test]
fn a_user_kernel_launch_is_a_step_of_the_plan_between_fused_kernels() {
    let driver = Arc::new(Driver::new(Recorder::default()));
    let session = Session::new(driver.clone(), Options::default());
    let a = session.from_slice(&[1.0f32, 2.0, 3.0]);
    let b = session.from_slice(&[4.0f32, 5.0, 6.0]);
    let before = &a * &b;
    // Reads `before` and `b`, writes new versions of both.
    let launch = KernelLaunch::new(
        Arc::new(Named("twice")),
        ([1, 1, 1], [32, 1, 1]),
        Vec::new(),
        vec![0, 1],
        vec![vec![3], vec![3]],
    );
    let out = session.launch_kernel(launch, &[&before, &b]).unwrap();
    let after = (&out[0] + &a).sum();
    let explained = after.explain();
    assert!(
        explained.contains("launch k0\n  launch user kernel u0\n")
            && explained.contains("u0: kernel 'twice'"),
        "{explained}"
    );
    assert!(driver.runtime().take().is_empty(), "explain() runs nothing");

    session.eval(&[&after]).unwrap();
    assert_eq!(
        driver.runtime().take(),
        [
            "upload 3",
            "upload 3",
            "launch reading 2",
            "user kernel 'twice' reading 2",
            // The sum of 3 elements is unrolled: each element of each input read.
            "launch reading 6",
        ],
        "each input uploaded once; the kernel after its argument's fused kernel, before its reader"
    );
    // Its other output was kept: demanding it runs nothing.
    session.eval(&[&out[1]]).unwrap();
    assert!(driver.runtime().take().is_empty());
    assert_eq!(session.stats().kernel_launches, 3);
}

#[test]
fn a_pipelined_demand_forks_and_joins_its_streams_and_holds_three_chunks() {
    let driver = Arc::new(Driver::new(Recorder::default()));
    let mut options = Options::default();
    options.pipeline_threshold = 1 << 20;
    let session = Session::new(driver.clone(), options);
    let n = 1 << 20;
    let a = session.from_slice(&vec![1.0f32; n]);
    let b = session.from_slice(&vec![2.0f32; n]);
    let y = &a * &b + 1.0f32;
    let explained = y.explain();
    // Chunks move 1 MiB at least: 12 bytes a row, 87,382 rows.
    assert!(
        explained.contains("12 chunks of 87382 elements on 3 streams"),
        "{explained}"
    );
    y.to_vec::<f32>().unwrap();
    let calls = driver.runtime().take();
    let forks = [
        "lane 0 waits for stream 0",
        "lane 1 waits for stream 0",
        "lane 2 waits for stream 0",
    ];
    assert_eq!(calls[..3], forks, "{calls:#?}");
    // Chunk c's uploads and kernel are queued before chunk c - 1 downloads.
    let uploads = |c: usize| {
        let rows = if c < 11 { 87382 } else { n - 11 * 87382 };
        vec![
            format!("upload {rows}"),
            format!("upload {rows}"),
            "launch reading 2".into(),
        ]
    };
    let mut want: Vec<String> = uploads(0);
    for c in 1..12 {
        want.extend(uploads(c));
        want.push("download".into());
    }
    want.push("download".into());
    assert_eq!(calls[3..51], want, "{calls:#?}");
    assert_eq!(calls[51..], ["stream 0 waits for lane 0, lane 1, lane 2"]);
    // Two inputs and one output per chunk, for three chunks at most.
    assert_eq!(driver.runtime().live.lock().unwrap().1, 9);
}
