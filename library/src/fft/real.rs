//! Transforms between real signals and their half spectra (NumPy's `rfft`
//! and `irfft`): half the work of a complex transform. One launch per
//! axis of a kernel over `(outer, len, inner)` lines. The CPU runs
//! `realfft`'s plans (built on rustfft's), a line at a time, tasks of up
//! to 16 lines on the workers; devices run direct transforms in `f64`.

use std::sync::Arc;

use lazyfuse_core::{BinaryOp, DType, Error, HostBuffer, KernelLaunch, Result, SliceMut};
use rustfft::num_complex::Complex;

use super::host::{Disjoint, Lines, Part, PARALLEL_ELEMENTS};
use crate::kernel::{HostRoutine, Kernel, KernelArg, KernelScope, Val, Workers};
use crate::kernel_cache::KernelCache;
use crate::lines;
use crate::routine::Args;

/// Lines per task.
const LINES: usize = 16;

/// Which way a real transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Direction {
    /// `n` real values to `n / 2 + 1` complex terms.
    Forward,
    /// `n / 2 + 1` complex terms to `n` real values.
    Inverse,
}

/// The unscaled half spectrum of the real `x` (3-d, transformed along its
/// middle axis): its real and imaginary parts, `(outer, n / 2 + 1, inner)`.
pub(super) fn forward(x: &Array3) -> Result<(lazyfuse_core::Array, lazyfuse_core::Array)> {
    let [outer, n, inner] = x.lines;
    let session = x.values.session();
    let half = [outer, n / 2 + 1, inner];
    let (re, im) = (session.zeros(&half, x.dtype), session.zeros(&half, x.dtype));
    let args: [KernelArg<'_>; 3] = [(&x.values).into(), (&re).into(), (&im).into()];
    let mut out = real_kernel(x.dtype, Direction::Forward)?
        .launch(
            session,
            lines::blocks(outer * n * inner),
            lines::BLOCK,
            &args,
        )?
        .into_iter();
    match (out.next(), out.next()) {
        (Some(re), Some(im)) => Ok((re, im)),
        _ => Err(Error::internal("rfft", "a launch without its two outputs")),
    }
}

/// The unscaled real signal of `n` points along the middle axis whose
/// half spectrum is `(re, im)` (3-d, `(outer, n / 2 + 1, inner)`).
pub(super) fn inverse(
    (re, im): (&lazyfuse_core::Array, &lazyfuse_core::Array),
    n: usize,
) -> Result<lazyfuse_core::Array> {
    let dtype = re.dtype();
    let (outer, inner) = (re.shape()[0], re.shape()[2]);
    let session = re.session();
    let out = session.zeros(&[outer, n, inner], dtype);
    let args: [KernelArg<'_>; 3] = [re.into(), im.into(), (&out).into()];
    real_kernel(dtype, Direction::Inverse)?
        .launch(
            session,
            lines::blocks(outer * n * inner),
            lines::BLOCK,
            &args,
        )?
        .pop()
        .ok_or_else(|| Error::internal("irfft", "a launch without its output"))
}

/// A real array seen as lines along its middle axis.
pub(super) struct Array3 {
    /// The values, of shape `lines`.
    pub(super) values: lazyfuse_core::Array,
    /// `(outer, n, inner)`.
    pub(super) lines: [usize; 3],
    /// `f32` or `f64`.
    pub(super) dtype: DType,
}

/// The kernel of a real transform of `dtype` (`f32` or `f64`) in
/// `direction`: forward, arguments `x` (outer, n, inner) and the half
/// spectrum's parts; inverse, the half spectrum's parts and the signal.
/// Public to inspect its code (through [`rfft_kernel`](crate::fft::rfft_kernel)).
pub(crate) fn real_kernel(dtype: DType, direction: Direction) -> Result<Kernel> {
    static KERNELS: KernelCache<(DType, Direction)> = KernelCache::new();
    KERNELS.get_or_build((dtype, direction), || {
        let name = match direction {
            Direction::Forward => format!("lf_rfft_{dtype}"),
            Direction::Inverse => format!("lf_irfft_{dtype}"),
        };
        let built = lazyfuse_kernel::Kernel::build(&name, |k| match direction {
            Direction::Forward => direct_forward(k, dtype),
            Direction::Inverse => direct_inverse(k, dtype),
        })?
        .with_host_routine(Arc::new(CpuReal(direction)))?
        .overwriting()?;
        Ok(Kernel::from_built(built))
    })
}

/// `X_k = sum_j x_j e^(-2πi jk/n)` for `k <= n / 2`, one thread per term.
fn direct_forward(k: &mut KernelScope, dtype: DType) {
    let x = k.array("x", dtype, 3);
    let (re, im) = (k.array_mut("re", dtype, 3), k.array_mut("im", dtype, 3));
    let (start, stride) = lines::grid_stride(k);
    let (n, terms, inner) = (x.len(1), re.len(1), x.len(2));
    let step = k.let_(Val::constant(-2.0 * std::f64::consts::PI, DType::F64) / n.cast(DType::F64));
    k.for_range(start, re.len(0) * &terms * &inner, stride, |k, t| {
        let [o, term, i] = lines::line_index(k, &t, &terms, &inner);
        let zero = Val::constant(0.0, DType::F64);
        let (sum_re, sum_im) = (k.local(zero.clone()), k.local(zero));
        k.for_range(0i64, n.clone(), 1i64, |k, j| {
            let turn = (&j * &term).apply_binary(BinaryOp::Rem, &n);
            let angle = k.let_(turn.cast(DType::F64) * &step);
            let value = k.let_(x.at([o.clone(), j, i.clone()]).cast(DType::F64));
            k.set(&sum_re, sum_re.get() + &value * angle.cos());
            k.set(&sum_im, sum_im.get() + value * angle.sin());
        });
        k.store(
            &re,
            [o.clone(), term.clone(), i.clone()],
            sum_re.get().cast(dtype),
        );
        k.store(&im, [o, term, i], sum_im.get().cast(dtype));
    });
}

/// `x_j = sum_k w_k (Re X_k cos θ - Im X_k sin θ)`, `θ = 2π jk/n`, `w_k`
/// 1 for the zero (and, for even `n`, the last) term and 2 for the others,
/// whose conjugates complete the spectrum; one thread per value.
fn direct_inverse(k: &mut KernelScope, dtype: DType) {
    let (re, im) = (k.array("re", dtype, 3), k.array("im", dtype, 3));
    let x = k.array_mut("x", dtype, 3);
    let (start, stride) = lines::grid_stride(k);
    let (n, terms, inner) = (x.len(1), re.len(1), x.len(2));
    let step = k.let_(Val::constant(2.0 * std::f64::consts::PI, DType::F64) / n.cast(DType::F64));
    k.for_range(start, x.len(0) * &n * &inner, stride, |k, t| {
        let [o, j, i] = lines::line_index(k, &t, &n, &inner);
        let sum = k.local(Val::constant(0.0, DType::F64));
        k.for_range(0i64, terms.clone(), 1i64, |k, term| {
            let once = term.eq(0i64).or((&term * Val::from(2i64)).eq(&n));
            let weight = Val::select(&once, 1.0, 2.0);
            let turn = (&j * &term).apply_binary(BinaryOp::Rem, &n);
            let angle = k.let_(turn.cast(DType::F64) * &step);
            let at = [o.clone(), term, i.clone()];
            let value = re.at(at.clone()).cast(DType::F64) * angle.cos()
                - im.at(at).cast(DType::F64) * angle.sin();
            k.set(&sum, sum.get() + weight * value);
        });
        k.store(&x, [o, j, i], sum.get().cast(dtype));
    });
}

/// The CPU's real transforms.
#[derive(Debug)]
struct CpuReal(Direction);

impl HostRoutine for CpuReal {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let args = Args::new("rfft", arrays);
        let shape = |a: usize| match launch.shapes.get(a).map(Vec::as_slice) {
            Some(&[outer, len, inner]) => Ok([outer, len, inner]),
            _ => Err(args.error("a launch without its 3-d shapes")),
        };
        match self.0 {
            Direction::Forward => {
                let [outer, n, inner] = shape(0)?;
                let lines = Lines { outer, n, inner };
                match outputs {
                    [SliceMut::F32(re), SliceMut::F32(im)] => {
                        lines.forward(args.values::<f32>(0)?, (re, im), workers)
                    }
                    [SliceMut::F64(re), SliceMut::F64(im)] => {
                        lines.forward(args.values::<f64>(0)?, (re, im), workers)
                    }
                    _ => return Err(args.error("outputs neither both f32 nor both f64")),
                }
            }
            Direction::Inverse => {
                let [outer, n, inner] = shape(2)?;
                let lines = Lines { outer, n, inner };
                match outputs {
                    [SliceMut::F32(x)] => {
                        let parts = (args.values::<f32>(0)?, args.values::<f32>(1)?);
                        lines.inverse(parts, x, workers)
                    }
                    [SliceMut::F64(x)] => {
                        let parts = (args.values::<f64>(0)?, args.values::<f64>(1)?);
                        lines.inverse(parts, x, workers)
                    }
                    _ => return Err(args.error("an output neither f32 nor f64")),
                }
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "a library routine: realfft's planned transforms, 16 lines per task on the worker threads"
            .to_string()
    }
}

/// The real transforms of the lines, one line at a time.
impl Lines {
    /// Runs `line(o, i)` for every line, in tasks of up to [`LINES`]
    /// neighbouring lines on the workers.
    fn each(self, line: impl Fn(usize, usize) + Sync, workers: Workers<'_>) {
        let Lines { outer, n, inner } = self;
        let per_outer = inner.div_ceil(LINES);
        let (tasks, task): (usize, Box<dyn Fn(usize) + Sync + '_>) = match inner {
            1 => (
                outer.div_ceil(LINES),
                Box::new(|t: usize| {
                    (t * LINES..((t + 1) * LINES).min(outer)).for_each(|o| line(o, 0))
                }),
            ),
            _ => (
                outer * per_outer,
                Box::new(|t: usize| {
                    let (o, first) = (t / per_outer, (t % per_outer) * LINES);
                    (first..(first + LINES).min(inner)).for_each(|i| line(o, i));
                }),
            ),
        };
        match outer * n * inner < PARALLEL_ELEMENTS {
            true => (0..tasks).for_each(task),
            false => (workers.run)(tasks, &task),
        }
    }

    fn forward<T: Part>(self, x: &[T], (re, im): (&mut [T], &mut [T]), workers: Workers<'_>) {
        let Lines { n, inner, .. } = self;
        let terms = n / 2 + 1;
        if x.is_empty() || n == 0 {
            return;
        }
        let plan = T::real_forward(n);
        let (re, im) = (Disjoint::new(re), Disjoint::new(im));
        self.each(
            |o, i| {
                let mut values: Vec<T> = (0..n).map(|k| x[(o * n + k) * inner + i]).collect();
                let mut spectrum = plan.make_output_vec();
                let mut scratch = plan.make_scratch_vec();
                // Lengths are the plan's own: no error to report.
                let _ = plan.process_with_scratch(&mut values, &mut spectrum, &mut scratch);
                for (k, value) in spectrum.into_iter().enumerate() {
                    let at = (o * terms + k) * inner + i;
                    // SAFETY: `at` is inside the outputs (`outer terms
                    // inner` long) and belongs to line (o, i), which only
                    // this call writes.
                    unsafe {
                        re.write(at, value.re);
                        im.write(at, value.im);
                    }
                }
            },
            workers,
        );
    }

    fn inverse<T: Part>(self, (re, im): (&[T], &[T]), x: &mut [T], workers: Workers<'_>) {
        let Lines { n, inner, .. } = self;
        let terms = n / 2 + 1;
        if x.is_empty() || n == 0 {
            return;
        }
        let plan = T::real_inverse(n);
        let x = Disjoint::new(x);
        self.each(
            |o, i| {
                let mut spectrum: Vec<Complex<T>> = (0..terms)
                    .map(|k| {
                        let at = (o * terms + k) * inner + i;
                        Complex::new(re[at], im[at])
                    })
                    .collect();
                // NumPy ignores the imaginary parts of the zero term and,
                // for even n, the last one: realfft wants them zero.
                spectrum[0].im = T::zero();
                if n % 2 == 0 {
                    spectrum[terms - 1].im = T::zero();
                }
                let mut values = plan.make_output_vec();
                let mut scratch = plan.make_scratch_vec();
                let _ = plan.process_with_scratch(&mut spectrum, &mut values, &mut scratch);
                for (k, value) in values.into_iter().enumerate() {
                    // SAFETY: inside the output (`outer n inner` long), in
                    // line (o, i), which only this call writes.
                    unsafe { x.write((o * n + k) * inner + i, value) };
                }
            },
            workers,
        );
    }
}
