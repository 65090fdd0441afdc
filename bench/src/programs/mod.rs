//! The program suite (issue 42): whole programs as NumPy users write them —
//! Black–Scholes, softmax, standardisation, k-means assignment, logsumexp,
//! layer norm, a heat-equation step, a masked mean, Monte Carlo π with
//! lazyfuse's own random numbers, pairwise distances — each demanded as one
//! program (`Context::read_all_into` into preallocated memory), fused and
//! with `fusion(false)`, against the same program written by hand in Rust
//! ([`hand`]), measured in one run and checked against the hand loop's
//! results. `bindings/python/bench_programs.py` measures the same programs
//! from Python against NumPy, numexpr, Numba and JAX.

use lazyfuse::{Array, Context, DType, HostBuffer, SliceMut};
use rayon::ThreadPool;
use serde::Serialize;

use crate::measure::{measure_interleaved, Budget, Timing};
use crate::Result;

pub mod hand;
mod report;

pub use report::{markdown, write_files, ProgramReport};

/// Black–Scholes' rate and volatility.
const R: f32 = 0.02;
const V: f32 = 0.30;
/// The polynomial of the cumulative normal distribution (Numba's and
/// CuPy's Black–Scholes examples).
const A: [f32; 5] = [
    0.319_381_53,
    -0.356_563_78,
    1.781_477_9,
    -1.821_256,
    1.330_274_5,
];
const RSQRT2PI: f32 = 0.398_942_3;
/// The generator keys of Monte Carlo π's two coordinates.
const PI_KEYS: [u64; 2] = [1, 2];

/// One program of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ProgramId {
    /// `call` and `put` of `S`, `X`, `T`.
    BlackScholes,
    /// Row softmax, rows of 1024.
    Softmax,
    /// `(x - x.mean(0)) / x.std(0)`, 64 columns.
    Standardise,
    /// `((p[:, None] - c[None]) ** 2).sum(-1).argmin(1)`: 16 centroids, 8 features.
    KmeansAssign,
    /// `m + log(exp(x - m[:, None]).sum(1))`, rows of 1024.
    Logsumexp,
    /// `(x - mean) / sqrt(var + 1e-5) * g + b`, rows of 1024.
    LayerNorm,
    /// `u[1:-1, 1:-1] + 0.1 * (laplacian of u)`.
    HeatStep,
    /// `where(x > 0.25, x, 0).sum() / (x > 0.25).sum()`.
    MaskedMean,
    /// `4 * mean(u*u + v*v < 1)` of lazyfuse's uniform draws.
    MonteCarloPi,
    /// `sqrt(((a[:, None] - b[None]) ** 2).sum(-1))`, 8 features.
    Pairwise,
}

impl ProgramId {
    /// The whole suite, in order.
    pub const ALL: [ProgramId; 10] = [
        ProgramId::BlackScholes,
        ProgramId::Softmax,
        ProgramId::Standardise,
        ProgramId::KmeansAssign,
        ProgramId::Logsumexp,
        ProgramId::LayerNorm,
        ProgramId::HeatStep,
        ProgramId::MaskedMean,
        ProgramId::MonteCarloPi,
        ProgramId::Pairwise,
    ];

    /// The name `bench_programs.py` gives it.
    pub fn name(self) -> &'static str {
        match self {
            ProgramId::BlackScholes => "black_scholes",
            ProgramId::Softmax => "softmax",
            ProgramId::Standardise => "standardise",
            ProgramId::KmeansAssign => "kmeans_assign",
            ProgramId::Logsumexp => "logsumexp",
            ProgramId::LayerNorm => "layer_norm",
            ProgramId::HeatStep => "heat_step",
            ProgramId::MaskedMean => "masked_mean",
            ProgramId::MonteCarloPi => "monte_carlo_pi",
            ProgramId::Pairwise => "pairwise",
        }
    }

    /// Parses a name of [`ProgramId::name`].
    pub fn parse(text: &str) -> Result<ProgramId> {
        ProgramId::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = ProgramId::ALL.iter().map(|p| p.name()).collect();
                format!("unknown program '{text}' (expected {})", names.join(", ")).into()
            })
    }
}

/// The host inputs of one program at one size, and the length its rows
/// (or feature vectors, or the grid's side; the draws of π) have.
pub struct Host {
    /// Each input's values, row-major.
    pub inputs: Vec<Vec<f32>>,
    /// Each input's shape.
    pub shapes: Vec<Vec<usize>>,
    /// Row length, features, grid side, or (π) the number of draws.
    pub cols: usize,
}

/// An input's values and shape.
type Input = (Vec<f32>, Vec<usize>);

/// `n` values in `[lo, hi)` from a fixed stream (SplitMix64).
fn values(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let unit = ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * unit
        })
        .collect()
}

impl Host {
    /// The inputs of `program` for about `n` elements of work (the shapes
    /// of `bench_programs.py`).
    pub fn new(program: ProgramId, n: usize) -> Host {
        let matrix = |rows: usize, cols: usize, seed| {
            (values(rows * cols, seed, -4.0, 4.0), vec![rows, cols])
        };
        let (parts, cols): (Vec<Input>, usize) = match program {
            ProgramId::BlackScholes => (
                vec![
                    (values(n, 1, 5.0, 30.0), vec![n]),
                    (values(n, 2, 1.0, 100.0), vec![n]),
                    (values(n, 3, 0.25, 10.0), vec![n]),
                ],
                1,
            ),
            ProgramId::Softmax | ProgramId::Logsumexp => {
                (vec![matrix((n / 1024).max(1), 1024, 4)], 1024)
            }
            ProgramId::LayerNorm => (
                vec![
                    matrix((n / 1024).max(1), 1024, 5),
                    (values(1024, 6, 0.5, 1.5), vec![1024]),
                    (values(1024, 7, -1.0, 1.0), vec![1024]),
                ],
                1024,
            ),
            ProgramId::Standardise => (vec![matrix((n / 64).max(2), 64, 8)], 64),
            ProgramId::KmeansAssign => (vec![matrix((n / 128).max(1), 8, 9), matrix(16, 8, 10)], 8),
            ProgramId::HeatStep => {
                let side = ((n as f64).sqrt() as usize).max(3);
                (vec![matrix(side, side, 11)], side)
            }
            ProgramId::MaskedMean => (vec![(values(n, 12, -1.0, 1.0), vec![n])], 1),
            ProgramId::MonteCarloPi => (Vec::new(), n),
            ProgramId::Pairwise => {
                let rows = (((n / 8) as f64).sqrt() as usize).max(1);
                (vec![matrix(rows, 8, 13), matrix(rows, 8, 14)], 8)
            }
        };
        let (inputs, shapes) = parts.into_iter().unzip();
        Host {
            inputs,
            shapes,
            cols,
        }
    }

    /// The inputs as arrays of `cx` (made once, read by every demand).
    pub fn arrays(&self, cx: &Context) -> Result<Vec<Array>> {
        self.inputs
            .iter()
            .zip(&self.shapes)
            .map(|(v, s)| Ok(cx.from_vec(v.clone(), s)?))
            .collect()
    }
}

fn cnd(d: &Array) -> Array {
    let f = |v: f32| f64::from(v);
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = &k * (f(A[0]) + &k * (f(A[1]) + &k * (f(A[2]) + &k * (f(A[3]) + &k * f(A[4])))));
    let w = 1.0 - f(RSQRT2PI) * (-0.5 * d * d).exp() * poly;
    d.lt(0.0).where_(1.0 - &w, &w)
}

/// The program's results built over `inputs` (nothing runs yet).
pub fn build(
    program: ProgramId,
    cx: &Context,
    host: &Host,
    inputs: &[Array],
) -> Result<Vec<Array>> {
    let (r, v) = (f64::from(R), f64::from(V));
    let rows = |a: &Array| a.shape()[0];
    Ok(match (program, inputs) {
        (ProgramId::BlackScholes, [s, x, t]) => {
            let sqrt_t = t.sqrt();
            let d1 = ((s / x).log() + (r + 0.5 * v * v) * t) / (v * &sqrt_t);
            let d2 = &d1 - v * &sqrt_t;
            let (cnd1, cnd2) = (cnd(&d1), cnd(&d2));
            let exp_rt = (-r * t).exp();
            let call = s * &cnd1 - x * &exp_rt * &cnd2;
            let put = x * &exp_rt * (1.0 - &cnd2) - s * (1.0 - &cnd1);
            vec![call, put]
        }
        (ProgramId::Softmax, [x]) => {
            let e = (x - x.max_axes(&[1], true)).exp();
            vec![&e / e.sum_axes(&[1], true)]
        }
        (ProgramId::Standardise, [x]) => vec![(x - x.mean_axes(&[0], false)) / x.std_axis(0, 0)],
        (ProgramId::KmeansAssign, [p, c]) => {
            let d = p.reshape(&[rows(p), 1, host.cols]) - c.reshape(&[1, rows(c), host.cols]);
            vec![d.pow(2.0).sum_axes(&[-1], false).argmin_axis(1)]
        }
        (ProgramId::Logsumexp, [x]) => {
            let m = x.max_axes(&[1], false);
            let s = (x - m.reshape(&[rows(x), 1])).exp().sum_axes(&[1], false);
            vec![&m + s.log()]
        }
        (ProgramId::LayerNorm, [x, g, b]) => {
            let mean = x.mean_axes(&[1], true);
            let var = (x - &mean).pow(2.0).mean_axes(&[1], true);
            vec![(x - &mean) / (var + 1e-5).sqrt() * g + b]
        }
        (ProgramId::HeatStep, [u]) => {
            let at = |r: (isize, isize), c: (isize, isize)| {
                let end = |e: isize| (e != 0).then_some(e);
                u.slice_axis(0, Some(r.0), end(r.1), 1)
                    .slice_axis(1, Some(c.0), end(c.1), 1)
            };
            let inner = at((1, -1), (1, -1));
            let lap = at((0, -2), (1, -1))
                + at((2, 0), (1, -1))
                + at((1, -1), (0, -2))
                + at((1, -1), (2, 0))
                - 4.0 * &inner;
            vec![&inner + 0.1 * lap]
        }
        (ProgramId::MaskedMean, [x]) => {
            let keep = x.gt(0.25);
            vec![keep.where_(x, 0.0).sum() / keep.sum()]
        }
        (ProgramId::MonteCarloPi, []) => {
            let n = host.cols;
            let u = cx.random_uniform(&[n], DType::F32, PI_KEYS[0]);
            let v = cx.random_uniform(&[n], DType::F32, PI_KEYS[1]);
            vec![(&u * &u + &v * &v).lt(1.0).mean() * 4.0]
        }
        (ProgramId::Pairwise, [a, b]) => {
            let d = a.reshape(&[rows(a), 1, host.cols]) - b.reshape(&[1, rows(b), host.cols]);
            vec![d.pow(2.0).sum_axes(&[-1], false).sqrt()]
        }
        _ => return Err(format!("{}: the wrong number of inputs", program.name()).into()),
    })
}

/// Buffers for `arrays`' values, of their dtypes and lengths.
fn buffers_for(arrays: &[Array]) -> Result<Vec<HostBuffer>> {
    arrays
        .iter()
        .map(|a| {
            Ok(HostBuffer::try_zeros(
                a.dtype(),
                a.shape().iter().product(),
            )?)
        })
        .collect()
}

/// The hand loop's view of `buffers`.
fn hand_outs(buffers: &mut [HostBuffer]) -> Result<Vec<hand::Out<'_>>> {
    buffers
        .iter_mut()
        .map(|b| match b {
            HostBuffer::F32(v) => Ok(hand::Out::F32(v)),
            HostBuffer::F64(v) => Ok(hand::Out::F64(v)),
            HostBuffer::I64(v) => Ok(hand::Out::I64(v)),
            other => Err(format!("no hand loop writes {}", other.dtype()).into()),
        })
        .collect()
}

/// The largest difference of `got` from `want`, relative to `max(1, |want|)`;
/// for integer results (k-means' indices) the share of elements that differ.
fn difference(got: &[HostBuffer], want: &[HostBuffer]) -> f64 {
    let mut worst = 0.0f64;
    for (g, w) in got.iter().zip(want) {
        let integer = matches!(w, HostBuffer::I64(_));
        let mut differing = 0usize;
        for i in 0..w.len() {
            let value = |b: &HostBuffer| b.get_wide(i).map_or(f64::NAN, |v| v.as_f64());
            let (g, w) = (value(g), value(w));
            match integer {
                true => differing += usize::from(g != w),
                false => worst = worst.max((g - w).abs() / w.abs().max(1.0)),
            }
        }
        if integer {
            worst = worst.max(differing as f64 / w.len().max(1) as f64);
        }
        if g.len() != w.len() || worst.is_nan() {
            return f64::INFINITY;
        }
    }
    worst
}

/// How far a result may be from the hand loop's: float32 programs summed
/// in other orders, with other `exp` and `log` routines; k-means may
/// assign a point on a near tie differently in one case in a thousand.
pub const TOLERANCE: f64 = 1e-3;

/// One measurement of one program at one size on one backend.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramRecord {
    /// [`ProgramId::name`].
    pub program: &'static str,
    /// The backend.
    pub backend: &'static str,
    /// About how many elements of work (the size asked for).
    pub elements: usize,
    /// The hand-written Rust.
    pub hand: Timing,
    /// lazyfuse, building the program and demanding every result at once.
    pub fused: Timing,
    /// The same with `fusion(false)`: one kernel per operation.
    pub unfused: Timing,
    /// Kernel launches of one fused demand (its last measured repeat).
    pub launches: u64,
    /// Kernel launches of one demand with `fusion(false)`.
    pub unfused_launches: u64,
    /// The largest difference of the fused results from the hand loop's,
    /// relative to `max(1, |value|)` (for indices: the share that differ).
    pub difference: f64,
    /// Within [`TOLERANCE`] (for fused and unfused alike).
    pub ok: bool,
}

/// Measures `program` at size `n` on the `fused` context and its
/// `fusion(false)` twin against the hand loop on `pool`.
pub fn measure(
    program: ProgramId,
    n: usize,
    (backend, fused, unfused): (&'static str, &Context, &Context),
    pool: &ThreadPool,
    budget: Budget,
) -> Result<ProgramRecord> {
    let host = Host::new(program, n);
    let (fused_in, unfused_in) = (host.arrays(fused)?, host.arrays(unfused)?);
    let mut want = buffers_for(&build(program, fused, &host, &fused_in)?)?;
    let mut got = want
        .iter()
        .map(|b| HostBuffer::try_zeros(b.dtype(), b.len()))
        .collect::<lazyfuse::Result<Vec<_>>>()?;
    let mut got_unfused = got.clone();
    let demand = |cx: &Context, inputs: &[Array], outs: &mut [HostBuffer]| -> Result<()> {
        let results = build(program, cx, &host, inputs)?;
        let refs: Vec<&Array> = results.iter().collect();
        let slices: Vec<SliceMut<'_>> = outs.iter_mut().map(HostBuffer::as_slice_mut).collect();
        Ok(cx.read_all_into(&refs, slices)?)
    };
    let mut run_hand = || -> Result<()> {
        let mut outs = hand_outs(&mut want)?;
        hand::run(program, &host, pool, &mut outs)
    };
    let mut run_fused = || demand(fused, &fused_in, &mut got);
    let mut run_unfused = || demand(unfused, &unfused_in, &mut got_unfused);
    let measured = measure_interleaved(
        budget,
        &mut [
            (None, &mut run_hand),
            (Some(fused), &mut run_fused),
            (Some(unfused), &mut run_unfused),
        ],
    )?;
    let difference = difference(&got, &want);
    let ok = difference <= TOLERANCE && self::difference(&got_unfused, &want) <= TOLERANCE;
    Ok(ProgramRecord {
        program: program.name(),
        backend,
        elements: n,
        hand: measured[0].timing,
        fused: measured[1].timing,
        unfused: measured[2].timing,
        launches: measured[1].steady.kernel_launches,
        unfused_launches: measured[2].steady.kernel_launches,
        difference,
        ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_program_agrees_with_its_hand_loop_fused_and_not() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let once = Budget {
            target: Duration::ZERO,
            min_repeats: 1,
            max_repeats: 1,
        };
        for backend in ["cpu", "sim"] {
            let context = |fusion| {
                Context::builder()
                    .backend(backend)
                    .fusion(fusion)
                    .build()
                    .unwrap()
            };
            let (fused, unfused) = (context(true), context(false));
            for program in ProgramId::ALL {
                let record =
                    measure(program, 3000, (backend, &fused, &unfused), &pool, once).unwrap();
                assert!(
                    record.ok,
                    "{backend} {}: {}",
                    record.program, record.difference
                );
                assert!(record.launches <= record.unfused_launches, "{record:?}");
            }
        }
    }

    #[test]
    fn names_parse_back() {
        for program in ProgramId::ALL {
            assert_eq!(ProgramId::parse(program.name()).unwrap(), program);
        }
        assert!(ProgramId::parse("fft").is_err());
    }
}
