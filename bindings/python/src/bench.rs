//! The reference of `bindings/python/bench.py`: the expression suite's
//! cases E1–E5 built and demanded through lazyfuse's Rust API, timed in the
//! Python process itself, so the cost of going through Python is the ratio
//! of the two measurements of one run.

use std::time::Instant;

use lazyfuse::Array;
use numpy::PyReadwriteArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::array::PyArr;
use crate::errors::to_py;

/// The best time in seconds of `repeats` runs of case `case` ("E1" … "E5")
/// over `a`, `b`, `c` (f32 arrays of one context) by the Rust API: each run
/// builds the expression and demands it, element-wise cases into `out`
/// (`read_into`), reductions as one number (`item`), as the Rust bench
/// harness does. The GIL is released while it runs.
#[pyfunction]
pub(crate) fn bench_rust_case(
    py: Python<'_>,
    case: &str,
    abc: [PyRef<'_, PyArr>; 3],
    mut out: PyReadwriteArray1<'_, f32>,
    repeats: usize,
) -> PyResult<f64> {
    let [a, b, c] = abc.map(|x| x.inner.clone());
    let build: fn(&Array, &Array, &Array) -> Array = match case {
        "E1" => |a, b, c| a * b + c,
        "E2" => |a, b, c| (b * b - 4.0 * a * c).sqrt(),
        "E3" => |a, b, c| {
            ((a + 1.5) * b - c) / (a + 2.0) * 0.5 + a.sin() * b.cos() - (-c).exp() + (a * b).tanh()
        },
        "E4" => |a, b, _| (a - b).pow(2.0).sum(),
        "E5" => |a, b, _| (a - b).abs().max(),
        other => {
            return Err(PyValueError::new_err(format!(
                "bench_rust_case: unknown case {other:?} (expected E1 … E5)"
            )))
        }
    };
    let out = out
        .as_slice_mut()
        .map_err(|_| PyValueError::new_err("bench_rust_case: out must be contiguous"))?;
    py.allow_threads(|| {
        let mut best = f64::INFINITY;
        for _ in 0..repeats.max(1) {
            let start = Instant::now();
            let result = build(&a, &b, &c);
            if result.shape().is_empty() {
                std::hint::black_box(result.item::<f32>()?);
            } else {
                result.read_into(out)?;
            }
            best = best.min(start.elapsed().as_secs_f64());
        }
        Ok(best)
    })
    .map_err(to_py)
}
