//! NumPy's `np.roll` along one axis, lazily: one launch of a kernel whose
//! threads each move one element `shift` places along the axis (those
//! past the end coming back at the start). The CPU runs a host routine
//! instead, two contiguous copies per index of the axes before it, as
//! NumPy's slices do, spread over the worker threads.
//!
//! ```
//! use lazyfuse::{roll, Context};
//!
//! let cx = Context::cpu();
//! let x = cx.from_vec((0..6).collect::<Vec<i32>>(), &[2, 3])?;
//! assert_eq!(roll(&x, 1, 1)?.to_vec::<i32>()?, [2, 0, 1, 5, 3, 4]);
//! assert_eq!(roll(&x, -1, 0)?.to_vec::<i32>()?, [3, 4, 5, 0, 1, 2]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use std::sync::Arc;

use lazyfuse_core::{
    with_slice_mut, Array, DType, Element, Error, HostBuffer, KernelLaunch, Result, SliceMut, Wide,
};

use crate::kernel::{HostRoutine, Kernel, KernelArg, Val, Workers};
use crate::kernel_cache::KernelCache;
use crate::lines;
use crate::routine::Args;

/// Elements below which the CPU copies on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 16;

/// `x` with its elements moved `shift` places along `axis` (negative:
/// towards the start), those past one end coming back at the other
/// (NumPy's `np.roll(x, shift, axis)`). Lazy.
///
/// Errors: an axis outside the array, an invalid array.
pub fn roll(x: &Array, shift: i64, axis: usize) -> Result<Array> {
    x.check()?;
    let shape = x.shape().to_vec();
    let Some(&n) = shape.get(axis) else {
        return Err(Error::invalid(
            "roll",
            format!("axis {axis} of an array of {} axes", shape.len()),
        ));
    };
    let shift = shift.rem_euclid(n.max(1) as i64);
    if shift == 0 || x.is_empty() {
        return Ok(x.clone());
    }
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let session = x.session();
    let lines = [outer, n, inner];
    let out = session.empty(&lines, x.dtype());
    let from = x.reshape(&lines);
    let args: [KernelArg<'_>; 3] = [(&from).into(), (&out).into(), shift.into()];
    let mut moved =
        roll_kernel(x.dtype())?.launch(session, lines::blocks(x.len()), lines::BLOCK, &args)?;
    match moved.pop() {
        Some(moved) => Ok(moved.reshape(&shape)),
        None => Err(Error::internal("roll", "a launch without its output")),
    }
}

/// The kernel [`roll`] launches for `dtype` (arguments: the array as
/// `(outer, n, inner)`, the output, the shift in `[0, n)`); public to
/// inspect its code.
pub fn roll_kernel(dtype: DType) -> Result<Kernel> {
    static KERNELS: KernelCache<DType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_roll_{dtype}"), |k| {
            let from = k.array("from", dtype, 3);
            let to = k.array_mut("to", dtype, 3);
            let shift = k.scalar("shift", DType::I64);
            let (start, stride) = lines::grid_stride(k);
            let (outer, n, inner) = (from.len(0), from.len(1), from.len(2));
            k.for_range(start, &outer * &n * &inner, stride, |k, t| {
                let [o, j, i] = lines::line_index(k, &t, &n, &inner);
                // j + shift < 2n: one subtraction wraps it.
                let moved = k.let_(&j + &shift);
                let wrapped = Val::select(&moved.ge(&n), &moved - &n, &moved);
                let value = from.at([o.clone(), j, i.clone()]);
                k.store(&to, [o, wrapped, i], value);
            });
        })?
        .with_host_routine(Arc::new(CpuRoll))?
        .overwriting()?;
        Ok(Kernel::from_built(built))
    })
}

/// The CPU's roll: two contiguous copies per outer index.
#[derive(Debug)]
struct CpuRoll;

impl HostRoutine for CpuRoll {
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()> {
        let args = Args::new("roll", arrays);
        let Some(&[_, n, inner]) = launch.shapes.first().map(Vec::as_slice) else {
            return Err(args.error("a launch without its 3-d shape"));
        };
        let shift = match launch.scalars.first().map(|s| s.to_wide()) {
            Some(Wide::Int(s)) if (0..n as i128).contains(&s) => s as usize,
            _ => return Err(args.error("a shift outside the axis")),
        };
        let from = args.array(0)?;
        let to = args.output(outputs, 0)?;
        with_slice_mut!(to, to => {
            let from = from.as_slice().ok_or_else(|| args.error("arrays of two dtypes"))?;
            copy_rolled(from, to, (n * inner, shift * inner), workers);
            Ok(())
        })
    }

    fn describe(&self) -> String {
        "a library routine: two contiguous copies per line, spread over the worker threads"
            .to_string()
    }
}

/// Each line of `line` elements of `from` into `to`, moved `moved`
/// elements along it.
fn copy_rolled<T: Element>(
    from: &[T],
    to: &mut [T],
    (line, moved): (usize, usize),
    workers: Workers<'_>,
) {
    workers.split_mut(to, line, PARALLEL_ELEMENTS, |first, part| {
        for (l, to) in (first..).zip(part.chunks_mut(line)) {
            let from = &from[l * line..(l + 1) * line];
            to[moved..].copy_from_slice(&from[..line - moved]);
            to[..moved].copy_from_slice(&from[line - moved..]);
        }
    });
}

#[cfg(test)]
mod tests {
    use lazyfuse::Context;

    use super::*;

    #[test]
    fn every_axis_and_shift_matches_rotating_by_hand_on_cpu_and_sim() {
        let shape = [3usize, 4, 5];
        let values: Vec<i32> = (0..60).collect();
        for cx in [Context::cpu(), Context::sim()] {
            let x = cx.from_vec(values.clone(), &shape).unwrap();
            for axis in 0..3 {
                for shift in [-7i64, -1, 0, 1, 2, 9] {
                    let got = roll(&x, shift, axis).unwrap().to_vec::<i32>().unwrap();
                    let n = shape[axis] as i64;
                    for (flat, &value) in got.iter().enumerate() {
                        let mut at = [flat / 20, flat / 5 % 4, flat % 5];
                        at[axis] = ((at[axis] as i64 - shift).rem_euclid(n)) as usize;
                        assert_eq!(
                            value,
                            values[at[0] * 20 + at[1] * 5 + at[2]],
                            "{axis} {shift}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn large_arrays_roll_on_the_workers_and_bad_axes_are_errors() {
        let cx = Context::cpu();
        let x = cx
            .from_vec((0..300_000).map(|i| i as f32).collect(), &[300, 1000])
            .unwrap();
        let got = roll(&x, 999, 1).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(&got[..3], &[1.0, 2.0, 3.0]);
        assert_eq!(got[999], 0.0);
        assert!(roll(&x, 1, 2).is_err_and(|e| e.to_string().contains("axis 2")));
        let empty = cx.zeros(&[0, 3], DType::F64);
        assert_eq!(roll(&empty, 1, 1).unwrap().shape(), [0, 3]);
    }
}
