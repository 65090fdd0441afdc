//! `lazyfuse-gpu`: times lazyfuse's cuda backend on a handful of cases whose
//! inputs already live on the device, one upload, one download, and one
//! end-to-end case from host memory to host memory (whose result is checked
//! bit for bit against the host's). Prints one JSON object per case (median
//! milliseconds and effective GB/s over the fewest bytes the case must
//! move); `scripts/gpu_reference.py` times CuPy on the same cases in the
//! same run, and `scripts/gpu-check.sh` prints the ratios.
//!
//! Run on a machine with a GPU: `lazyfuse-gpu [--n 100000000] [--reps 20]`.
//! Without a usable GPU it says why and exits with status 2.

use std::process::ExitCode;
use std::time::Instant;

use lazyfuse::{Array, Context};

/// One timed case.
struct Case {
    name: &'static str,
    /// The fewest bytes the case must move through device memory (or over
    /// the bus, end to end).
    bytes: f64,
    median_ms: f64,
}

fn main() -> ExitCode {
    let mut n = 100_000_000usize;
    let mut reps = 20usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse::<f64>().ok());
        match (arg.as_str(), value) {
            ("--n", Some(v)) => n = v as usize,
            ("--reps", Some(v)) => reps = v.max(3.0) as usize,
            _ => {
                eprintln!("usage: lazyfuse-gpu [--n ELEMENTS] [--reps REPEATS]");
                return ExitCode::from(2);
            }
        }
    }
    let cx = match Context::cuda(0) {
        Ok(cx) => cx,
        Err(e) => {
            eprintln!("lazyfuse-gpu: no usable GPU: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&cx, n, reps) {
        Ok(cases) => {
            for c in cases {
                println!(
                    "{{\"case\": \"{}\", \"n\": {n}, \"median_ms\": {:.4}, \"gbps\": {:.1}}}",
                    c.name,
                    c.median_ms,
                    c.bytes / c.median_ms / 1e6
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lazyfuse-gpu: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Median wall time of `body` over `reps` runs after three warm-ups; the
/// untimed `setup` makes each run's input. Every run ends in a download, so
/// the device is idle when the clock stops.
fn median_ms<S>(
    reps: usize,
    mut setup: impl FnMut() -> S,
    mut body: impl FnMut(S) -> lazyfuse::Result<()>,
) -> lazyfuse::Result<f64> {
    for _ in 0..3 {
        body(setup())?;
    }
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let input = setup();
        let start = Instant::now();
        body(input)?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

fn run(cx: &Context, n: usize, reps: usize) -> lazyfuse::Result<Vec<Case>> {
    let host: Vec<Vec<f32>> = (0..3u32)
        .map(|k| {
            (0..n)
                .map(|i| {
                    ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(k) >> 8) as f32
                        / 16_777_216.0
                })
                .collect()
        })
        .collect();
    let [a, b, c] = [0, 1, 2].map(|k| cx.from_slice(&host[k]));
    let (da, db, dc) = (a.to_device()?, b.to_device()?, c.to_device()?);
    let four = (n * 4) as f64;
    // A device-resident result is made to wait for by a download of one
    // element of it: the single stream runs that copy after the kernel.
    let resident = |x: Array| -> lazyfuse::Result<()> {
        x.eval()?;
        x.slice_axis(0, Some(0), Some(1), 1)
            .to_vec::<f32>()
            .map(|_| ())
    };
    let mut cases = Vec::new();
    let mut time = |name, bytes, body: &mut dyn FnMut() -> lazyfuse::Result<()>| {
        let median_ms = median_ms(reps, || (), |()| body())?;
        cases.push(Case {
            name,
            bytes,
            median_ms,
        });
        lazyfuse::Result::Ok(())
    };
    time("axpy a*b+c (resident)", 4.0 * four, &mut || {
        resident(&(&da * &db) + &dc)
    })?;
    time(
        "chain sin(a)*cos(b)+sqrt(abs(c)) (resident)",
        4.0 * four,
        &mut || resident(&(&da.sin() * &db.cos()) + &dc.abs().sqrt()),
    )?;
    time("sum(a*b) (resident)", 2.0 * four, &mut || {
        (&da * &db).sum().item::<f32>().map(|_| ())
    })?;
    time("max(abs(a-b)) (resident)", 2.0 * four, &mut || {
        (&da - &db).abs().max().item::<f32>().map(|_| ())
    })?;
    let mut out = vec![0f32; n];
    time("download a (read_into)", four, &mut || {
        da.read_into(&mut out)
    })?;
    // Host arrays own their data (from_vec): the clones are made untimed.
    let owned = |k: usize| cx.from_vec(host[k].clone(), &[n]);
    let upload = median_ms(
        reps,
        || owned(0),
        |a| {
            a?.to_device()?;
            resident_sync(cx)
        },
    )?;
    cases.push(Case {
        name: "upload a (to_device)",
        bytes: four,
        median_ms: upload,
    });
    let end_to_end = median_ms(
        reps,
        || (owned(0), owned(1), owned(2)),
        |(a, b, c)| ((&a? * &b?) + &c?).read_into(&mut out),
    )?;
    // Compiled without contraction, the device rounds a*b, then the sum.
    if let Some(i) = (0..n).find(|&i| out[i] != host[0][i] * host[1][i] + host[2][i]) {
        return Err(lazyfuse::Error::invalid(
            "lazyfuse-gpu",
            format!(
                "element {i} of a*b+c is {}, the host computes {}",
                out[i],
                host[0][i] * host[1][i] + host[2][i]
            ),
        ));
    }
    cases.push(Case {
        name: "axpy a*b+c host to host",
        bytes: 4.0 * four,
        median_ms: end_to_end,
    });
    Ok(cases)
}

/// Waits for the device's queued work by a demand that downloads one value.
fn resident_sync(cx: &Context) -> lazyfuse::Result<()> {
    cx.from_slice(&[1f32])
        .to_device()?
        .sum()
        .item::<f32>()
        .map(|_| ())
}
