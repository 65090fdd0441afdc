//! The CPU's transforms: `rustfft` plans (cached by its planner per
//! length and direction), lines transformed 16 at a time by tasks spread
//! over the worker threads: each task gathers its lines (rows, or columns
//! 16 neighbours wide) into interleaved complex values, transforms them
//! in place while they are in cache, and writes both parts out.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use lazyfuse_core::{HostBuffer, KernelLaunch, Result, SliceMut, Wide};
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftNum, FftPlanner};

use crate::kernel::{HostRoutine, Workers};
use crate::routine::Args;

/// The CPU's FFT.
#[derive(Debug)]
pub(super) struct CpuFft;

/// Values below which a pass runs on the calling thread.
pub(super) const PARALLEL_ELEMENTS: usize = 1 << 15;

/// Plans of `f32` and `f64` transforms, complex and real, kept for the
/// process (a plan of `n` points costs about as much as transforming a
/// few lines of it).
static PLANNER_F32: Mutex<Option<FftPlanner<f32>>> = Mutex::new(None);
static PLANNER_F64: Mutex<Option<FftPlanner<f64>>> = Mutex::new(None);
static REAL_PLANNER_F32: Mutex<Option<RealFftPlanner<f32>>> = Mutex::new(None);
static REAL_PLANNER_F64: Mutex<Option<RealFftPlanner<f64>>> = Mutex::new(None);

/// A float type the routines transform, with its planners.
pub(super) trait Part: FftNum + Copy + Send + Sync {
    /// The planner of complex transforms.
    fn planner() -> &'static Mutex<Option<FftPlanner<Self>>>;
    /// The planner of real transforms.
    fn real_planner() -> &'static Mutex<Option<RealFftPlanner<Self>>>;

    /// The complex transform of `n` points (`inverse`: its inverse).
    fn plan(n: usize, inverse: bool) -> Arc<dyn Fft<Self>> {
        let mut planner = Self::planner()
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let planner = planner.get_or_insert_with(FftPlanner::new);
        match inverse {
            true => planner.plan_fft_inverse(n),
            false => planner.plan_fft_forward(n),
        }
    }

    /// The transform of `n` real values into `n / 2 + 1` terms.
    fn real_forward(n: usize) -> Arc<dyn RealToComplex<Self>> {
        let mut planner = Self::real_planner()
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        planner
            .get_or_insert_with(RealFftPlanner::new)
            .plan_fft_forward(n)
    }

    /// The transform of `n / 2 + 1` terms into `n` real values.
    fn real_inverse(n: usize) -> Arc<dyn ComplexToReal<Self>> {
        let mut planner = Self::real_planner()
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        planner
            .get_or_insert_with(RealFftPlanner::new)
            .plan_fft_inverse(n)
    }
}

impl Part for f32 {
    fn planner() -> &'static Mutex<Option<FftPlanner<f32>>> {
        &PLANNER_F32
    }
    fn real_planner() -> &'static Mutex<Option<RealFftPlanner<f32>>> {
        &REAL_PLANNER_F32
    }
}

impl Part for f64 {
    fn planner() -> &'static Mutex<Option<FftPlanner<f64>>> {
        &PLANNER_F64
    }
    fn real_planner() -> &'static Mutex<Option<RealFftPlanner<f64>>> {
        &REAL_PLANNER_F64
    }
}

impl HostRoutine for CpuFft {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let args = Args::new("fft", arrays);
        let lines = match launch.shapes.first().map(Vec::as_slice) {
            Some(&[outer, n, inner]) => Lines { outer, n, inner },
            _ => return Err(args.error("a launch without its 3-d shape")),
        };
        let inverse = matches!(
            launch.scalars.first().map(|s| s.to_wide()),
            Some(Wide::Int(1))
        );
        let [re_out, im_out] = outputs else {
            return Err(args.error("a launch without its two outputs"));
        };
        match (re_out, im_out) {
            (SliceMut::F32(re_out), SliceMut::F32(im_out)) => {
                let input = (args.values::<f32>(0)?, args.values::<f32>(1)?);
                lines.transform(inverse, input, (re_out, im_out), workers)
            }
            (SliceMut::F64(re_out), SliceMut::F64(im_out)) => {
                let input = (args.values::<f64>(0)?, args.values::<f64>(1)?);
                lines.transform(inverse, input, (re_out, im_out), workers)
            }
            _ => Err(args.error("outputs neither both f32 nor both f64")),
        }
    }

    fn describe(&self) -> String {
        "a library routine: rustfft's planned transforms (AVX where the CPU has it), rows spread \
         over the worker threads"
            .to_string()
    }
}

/// The lines of a launch: `outer * inner` lines of `n` values, those of
/// outer index `o` and inner index `i` at `(o n + k) inner + i` (the real
/// transforms' half spectra have `n / 2 + 1` terms, at `(o len + k) inner
/// + i` for that length `len`).
#[derive(Clone, Copy)]
pub(super) struct Lines {
    pub(super) outer: usize,
    pub(super) n: usize,
    pub(super) inner: usize,
}

/// Lines transformed together when they are columns (`inner > 1`):
/// gathered into one buffer, 16 values of each row read at a time.
const COLUMNS: usize = 16;

impl Lines {
    /// Transforms every line of `(re, im)` into `(re_out, im_out)`.
    fn transform<T: Part>(
        self,
        inverse: bool,
        input: (&[T], &[T]),
        output: (&mut [T], &mut [T]),
        workers: Workers<'_>,
    ) -> Result<()> {
        if self.n == 0 || input.0.is_empty() {
            return Ok(());
        }
        let plan = T::plan(self.n, inverse);
        match self.inner {
            1 => rows(&*plan, input, output, workers),
            _ => self.columns(&*plan, input, output, workers),
        }
        Ok(())
    }

    /// Lines strided by `inner`: tasks of up to [`COLUMNS`] neighbouring
    /// lines, each gathered, transformed and scattered back.
    fn columns<T: Part>(
        self,
        plan: &dyn Fft<T>,
        (re, im): (&[T], &[T]),
        (re_out, im_out): (&mut [T], &mut [T]),
        workers: Workers<'_>,
    ) {
        let Lines { outer, n, inner } = self;
        let per_outer = inner.div_ceil(COLUMNS);
        let (re_out, im_out) = (Disjoint::new(re_out), Disjoint::new(im_out));
        let task = |t: usize| {
            let (o, first) = (t / per_outer, (t % per_outer) * COLUMNS);
            let width = COLUMNS.min(inner - first);
            let zero = Complex::new(T::zero(), T::zero());
            let mut values = vec![zero; width * n];
            for k in 0..n {
                let at = (o * n + k) * inner + first;
                for w in 0..width {
                    values[w * n + k] = Complex::new(re[at + w], im[at + w]);
                }
            }
            let mut scratch = vec![zero; plan.get_inplace_scratch_len()];
            plan.process_with_scratch(&mut values, &mut scratch);
            for k in 0..n {
                let at = (o * n + k) * inner + first;
                for w in 0..width {
                    // SAFETY: index `at + w` is below the outputs' length
                    // (`outer n inner`), and belongs to line (o, first + w),
                    // which this task alone transforms.
                    unsafe {
                        re_out.write(at + w, values[w * n + k].re);
                        im_out.write(at + w, values[w * n + k].im);
                    }
                }
            }
        };
        let tasks = outer * per_outer;
        match re.len() < PARALLEL_ELEMENTS {
            true => (0..tasks).for_each(task),
            false => (workers.run)(tasks, &task),
        }
    }
}

/// Rows transformed together when lines are contiguous (`inner == 1`):
/// gathered into one buffer that stays in cache while it is transformed
/// and written out.
const ROWS: usize = 16;

/// Contiguous lines (`inner == 1`): tasks of up to [`ROWS`] rows, each
/// reading its rows once and writing them once.
fn rows<T: Part>(
    plan: &dyn Fft<T>,
    (re, im): (&[T], &[T]),
    (re_out, im_out): (&mut [T], &mut [T]),
    workers: Workers<'_>,
) {
    let n = plan.len();
    let rows = re.len() / n;
    let (re_out, im_out) = (Disjoint::new(re_out), Disjoint::new(im_out));
    let task = |t: usize| {
        let start = t * ROWS * n;
        let end = ((t + 1) * ROWS).min(rows) * n;
        let zero = Complex::new(T::zero(), T::zero());
        let mut values: Vec<Complex<T>> =
            (start..end).map(|i| Complex::new(re[i], im[i])).collect();
        let mut scratch = vec![zero; plan.get_inplace_scratch_len()];
        plan.process_with_scratch(&mut values, &mut scratch);
        for (i, value) in (start..end).zip(values) {
            // SAFETY: `i` is below the outputs' length (`rows n`), in the
            // rows of task `t`, which this task alone writes.
            unsafe {
                re_out.write(i, value.re);
                im_out.write(i, value.im);
            }
        }
    };
    let tasks = rows.div_ceil(ROWS);
    match re.len() < PARALLEL_ELEMENTS {
        true => (0..tasks).for_each(task),
        false => (workers.run)(tasks, &task),
    }
}

/// A slice that several tasks write at once, each at indices no other
/// task writes (the caller's promise at every write).
pub(super) struct Disjoint<'a, T> {
    start: *mut T,
    len: usize,
    _slice: PhantomData<&'a mut [T]>,
}

// SAFETY: the tasks sharing a `Disjoint` write disjoint elements (the
// promise of `write`), so sending or sharing it races on nothing; `T:
// Send` lets the values move to the writing threads.
unsafe impl<T: Send> Send for Disjoint<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Disjoint<'_, T> {}

impl<'a, T> Disjoint<'a, T> {
    pub(super) fn new(slice: &'a mut [T]) -> Disjoint<'a, T> {
        Disjoint {
            start: slice.as_mut_ptr(),
            len: slice.len(),
            _slice: PhantomData,
        }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// No other task reads or writes element `index` while the slice is
    /// shared.
    pub(super) unsafe fn write(&self, index: usize, value: T) {
        assert!(index < self.len, "a write past the end of the slice");
        // SAFETY: `index` is inside the slice (checked), which outlives
        // `self`, and no one else touches this element (the caller's
        // promise).
        unsafe { self.start.add(index).write(value) }
    }
}
