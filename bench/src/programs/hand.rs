//! The program suite's hand-written Rust: each program as one would write
//! it without lazyfuse — a pass per row (or per block of elements) on a
//! rayon pool, `f32` data, `f64` accumulators where a sum runs long, std's
//! scalar math (`f32::exp`, `ln`, `sqrt`), results into preallocated slices.

use lazyfuse::core::philox;
use rayon::prelude::*;
use rayon::ThreadPool;

use super::{Host, ProgramId, A, R, RSQRT2PI, V};

/// Elements per parallel task of the element-wise programs.
const CHUNK: usize = 1 << 14;

/// Runs `program` on `host` into `outs` (one slice per output, as
/// lazyfuse's arrays of the program have them).
pub fn run(
    program: ProgramId,
    host: &Host,
    pool: &ThreadPool,
    outs: &mut [Out<'_>],
) -> crate::Result<()> {
    pool.install(|| {
        match (program, outs) {
            (ProgramId::BlackScholes, [Out::F32(call), Out::F32(put)]) => {
                black_scholes(host, call, put)
            }
            (ProgramId::Softmax, [Out::F32(out)]) => softmax(host, out),
            (ProgramId::Standardise, [Out::F32(out)]) => standardise(host, out),
            (ProgramId::KmeansAssign, [Out::I64(out)]) => kmeans_assign(host, out),
            (ProgramId::Logsumexp, [Out::F32(out)]) => logsumexp(host, out),
            (ProgramId::LayerNorm, [Out::F32(out)]) => layer_norm(host, out),
            (ProgramId::HeatStep, [Out::F32(out)]) => heat_step(host, out),
            (ProgramId::MaskedMean, [Out::F64([out])]) => *out = masked_mean(&host.inputs[0]),
            (ProgramId::MonteCarloPi, [Out::F64([out])]) => *out = monte_carlo_pi(host.cols),
            (ProgramId::Pairwise, [Out::F32(out)]) => pairwise(host, out),
            (program, _) => {
                return Err(format!(
                    "{}: outputs of other dtypes than the hand loop writes",
                    program.name()
                )
                .into())
            }
        }
        Ok(())
    })
}

/// One output slice of a hand loop.
pub enum Out<'a> {
    /// A float32 result.
    F32(&'a mut [f32]),
    /// A float64 result (a mean of float32 values and an integer count).
    F64(&'a mut [f64]),
    /// Indices.
    I64(&'a mut [i64]),
}

fn cnd(d: f32) -> f32 {
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))));
    let w = 1.0 - RSQRT2PI * (-0.5 * d * d).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

fn black_scholes(host: &Host, call: &mut [f32], put: &mut [f32]) {
    let [s, x, t] = [&host.inputs[0], &host.inputs[1], &host.inputs[2]];
    call.par_chunks_mut(CHUNK)
        .zip(put.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (call, put))| {
            for (i, (call, put)) in call.iter_mut().zip(put).enumerate() {
                let j = c * CHUNK + i;
                let (s, x, t) = (s[j], x[j], t[j]);
                let sqrt_t = t.sqrt();
                let d1 = ((s / x).ln() + (R + 0.5 * V * V) * t) / (V * sqrt_t);
                let d2 = d1 - V * sqrt_t;
                let (cnd1, cnd2) = (cnd(d1), cnd(d2));
                let exp_rt = (-R * t).exp();
                *call = s * cnd1 - x * exp_rt * cnd2;
                *put = x * exp_rt * (1.0 - cnd2) - s * (1.0 - cnd1);
            }
        });
}

fn softmax(host: &Host, out: &mut [f32]) {
    let x = &host.inputs[0];
    out.par_chunks_mut(host.cols)
        .zip(x.par_chunks(host.cols))
        .for_each(|(out, row)| {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for (o, &v) in out.iter_mut().zip(row) {
                *o = (v - m).exp();
                sum += *o;
            }
            out.iter_mut().for_each(|o| *o /= sum);
        });
}

fn logsumexp(host: &Host, out: &mut [f32]) {
    let x = &host.inputs[0];
    out.par_iter_mut()
        .zip(x.par_chunks(host.cols))
        .for_each(|(out, row)| {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let sum: f32 = row.iter().map(|&v| (v - m).exp()).sum();
            *out = m + sum.ln();
        });
}

fn layer_norm(host: &Host, out: &mut [f32]) {
    let (x, g, b) = (&host.inputs[0], &host.inputs[1], &host.inputs[2]);
    let cols = host.cols;
    out.par_chunks_mut(cols)
        .zip(x.par_chunks(cols))
        .for_each(|(out, row)| {
            let mean = row.iter().sum::<f32>() / cols as f32;
            let var = row.iter().map(|&v| (v - mean) * (v - mean)).sum::<f32>() / cols as f32;
            let scale = 1.0 / (var + 1e-5).sqrt();
            for (j, o) in out.iter_mut().enumerate() {
                *o = (row[j] - mean) * scale * g[j] + b[j];
            }
        });
}

/// Per column of `x` (`cols` wide), the sum of `f` of each element.
fn column_sums(x: &[f32], cols: usize, f: impl Fn(usize, f32) -> f64 + Sync) -> Vec<f64> {
    let rows_per_task = (CHUNK / cols).max(1);
    x.par_chunks(rows_per_task * cols)
        .map(|block| {
            let mut sums = vec![0.0f64; cols];
            for row in block.chunks(cols) {
                for (j, (s, &v)) in sums.iter_mut().zip(row).enumerate() {
                    *s += f(j, v);
                }
            }
            sums
        })
        .reduce(
            || vec![0.0; cols],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            },
        )
}

fn standardise(host: &Host, out: &mut [f32]) {
    let (x, cols) = (&host.inputs[0], host.cols);
    let rows = (x.len() / cols) as f64;
    let mean: Vec<f64> = column_sums(x, cols, |_, v| f64::from(v))
        .into_iter()
        .map(|s| s / rows)
        .collect();
    let squares = column_sums(x, cols, |j, v| (f64::from(v) - mean[j]).powi(2));
    let scale: Vec<f32> = squares
        .iter()
        .map(|s| (1.0 / (s / rows).sqrt()) as f32)
        .collect();
    let mean: Vec<f32> = mean.iter().map(|&m| m as f32).collect();
    out.par_chunks_mut(cols)
        .zip(x.par_chunks(cols))
        .for_each(|(out, row)| {
            for (j, o) in out.iter_mut().enumerate() {
                *o = (row[j] - mean[j]) * scale[j];
            }
        });
}

fn kmeans_assign(host: &Host, out: &mut [i64]) {
    let (points, centroids, features) = (&host.inputs[0], &host.inputs[1], host.cols);
    out.par_iter_mut()
        .zip(points.par_chunks(features))
        .for_each(|(out, p)| {
            let mut best = (f32::INFINITY, 0);
            for (k, c) in centroids.chunks(features).enumerate() {
                let d: f32 = p.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum();
                if d < best.0 {
                    best = (d, k as i64);
                }
            }
            *out = best.1;
        });
}

fn heat_step(host: &Host, out: &mut [f32]) {
    let (u, side) = (&host.inputs[0], host.cols);
    let inner = side - 2;
    out.par_chunks_mut(inner).enumerate().for_each(|(r, out)| {
        let i = r + 1;
        let at = |i: usize, j: usize| u[i * side + j];
        for (c, o) in out.iter_mut().enumerate() {
            let j = c + 1;
            let lap = at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0 * at(i, j);
            *o = at(i, j) + 0.1 * lap;
        }
    });
}

fn masked_mean(x: &[f32]) -> f64 {
    let (sum, count) = x
        .par_chunks(CHUNK)
        .map(|c| {
            c.iter().fold((0.0f64, 0u64), |(s, n), &v| match v > 0.25 {
                true => (s + f64::from(v), n + 1),
                false => (s, n),
            })
        })
        .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    sum / count as f64
}

/// lazyfuse's uniform float32 value `i` of the generator under `key`: the
/// top 24 bits of word `i % 4` of Philox4x32-10 at counter `i / 4`, scaled.
fn uniform(i: u64, key: u64) -> f32 {
    (philox::word(i, key) >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
}

fn monte_carlo_pi(n: usize) -> f64 {
    let inside: u64 = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            (start as u64..end as u64)
                .map(|i| {
                    let (u, v) = (uniform(i, super::PI_KEYS[0]), uniform(i, super::PI_KEYS[1]));
                    u64::from(u * u + v * v < 1.0)
                })
                .sum::<u64>()
        })
        .sum();
    4.0 * inside as f64 / n as f64
}

fn pairwise(host: &Host, out: &mut [f32]) {
    let (a, b, features) = (&host.inputs[0], &host.inputs[1], host.cols);
    let rows = b.len() / features;
    out.par_chunks_mut(rows)
        .zip(a.par_chunks(features))
        .for_each(|(out, p)| {
            for (o, q) in out.iter_mut().zip(b.chunks(features)) {
                *o = p
                    .iter()
                    .zip(q)
                    .map(|(x, y)| (x - y) * (x - y))
                    .sum::<f32>()
                    .sqrt();
            }
        });
}
