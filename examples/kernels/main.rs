//! Hand-written kernels (Numba's `@cuda.jit`) in lazyfuse: the tutorials'
//! kernels, launched lazily on the simulated device and on the CPU (which
//! runs them through the same simulator), each result checked against plain
//! Rust. Also the manual-transfer workflow (`to_device`, launch, read back)
//! with the copies it costs, and the generated CUDA C of one kernel.
//!
//! Run: `cargo run --release --example kernels`

mod tutorial;

use lazyfuse::{Context, DType, Error, Result};

fn check<T: PartialEq + std::fmt::Debug>(what: &str, got: Vec<T>, want: Vec<T>) -> Result<()> {
    if got == want {
        println!("  {what}: ok");
        Ok(())
    } else {
        Err(Error::internal(what, format!("got {got:?}, want {want:?}")))
    }
}

fn run_all(cx: &Context) -> Result<()> {
    println!("backend: {}", cx.backend_name());

    // increment_by_one[4, 256](a)
    let n = 1000;
    let a = cx.from_vec((0..n).map(|i| i as f32).collect(), &[n])?;
    let out = tutorial::increment_by_one()?.launch(cx, 4u32, 256u32, &[(&a).into()])?;
    let want: Vec<f32> = (0..n).map(|i| i as f32 + 1.0).collect();
    check("increment_by_one", out[0].to_vec::<f32>()?, want)?;

    // doubled[(3, 2), (16, 16)](a, out) over a 37 × 23 array
    let (rows, cols) = (37, 23);
    let data: Vec<f64> = (0..rows * cols).map(|i| i as f64 * 0.5).collect();
    let a2 = cx.from_vec(data.clone(), &[rows, cols])?;
    let zeros = cx.zeros(&[rows, cols], DType::F64);
    let out = tutorial::doubled()?.launch(
        cx,
        (3u32, 2u32),
        (16u32, 16u32),
        &[(&a2).into(), (&zeros).into()],
    )?;
    check(
        "doubled",
        out[0].to_vec::<f64>()?,
        data.iter().map(|v| v * 2.0).collect(),
    )?;

    // block sums in shared memory
    let sums = cx.zeros(&[4], DType::F32);
    let values = cx.from_vec((0..n).map(|i| (i % 7) as f32).collect(), &[n])?;
    let out = tutorial::block_sum(false)?.launch(
        cx,
        4u32,
        256u32,
        &[(&values).into(), (&sums).into()],
    )?;
    let want: Vec<f32> = (0..4)
        .map(|b| {
            (b * 256..((b + 1) * 256).min(n))
                .map(|i| (i % 7) as f32)
                .sum()
        })
        .collect();
    check("block_sum (shared memory)", out[0].to_vec::<f32>()?, want)?;

    // histogram with atomics
    let samples: Vec<i32> = (0..5000).map(|i| i * 7919 % 1013).collect();
    let data = cx.from_vec(samples.clone(), &[samples.len()])?;
    let bins = cx.zeros(&[16], DType::U32);
    let out = tutorial::histogram()?.launch(cx, 3u32, 128u32, &[(&data).into(), (&bins).into()])?;
    let mut want = vec![0u32; 16];
    for v in &samples {
        want[(*v % 16) as usize] += 1;
    }
    check("histogram (atomicAdd)", out[0].to_vec::<u32>()?, want)?;

    // matrix multiply with shared-memory tiles
    let (m, k, p) = (13, 10, 11);
    let av: Vec<f32> = (0..m * k).map(|i| (i % 5) as f32 - 2.0).collect();
    let bv: Vec<f32> = (0..k * p).map(|i| (i % 3) as f32 + 0.5).collect();
    let (a3, b3) = (
        cx.from_vec(av.clone(), &[m, k])?,
        cx.from_vec(bv.clone(), &[k, p])?,
    );
    let c3 = cx.zeros(&[m, p], DType::F32);
    let tile = tutorial::TILE as u32;
    let grid = ((p as u32).div_ceil(tile), (m as u32).div_ceil(tile));
    let out = tutorial::matmul_tiled()?.launch(
        cx,
        grid,
        (tile, tile),
        &[(&a3).into(), (&b3).into(), (&c3).into()],
    )?;
    let want: Vec<f32> = (0..m * p)
        .map(|ij| {
            (0..k)
                .map(|q| av[(ij / p) * k + q] * bv[q * p + ij % p])
                .sum()
        })
        .collect();
    check("matmul_tiled", out[0].to_vec::<f32>()?, want)?;
    Ok(())
}

/// Numba's `doubled_man_copy`: copy in, launch, copy out — and what it costs.
fn manual_copies(cx: &Context) -> Result<()> {
    let (rows, cols) = (64, 64);
    let host: Vec<f64> = (0..rows * cols).map(|i| i as f64).collect();
    let d_a = cx.from_vec(host.clone(), &[rows, cols])?.to_device()?; // cuda.to_device(a)
    let d_out = cx.zeros(&[rows, cols], DType::F64); // cuda.device_array_like(a)
    cx.reset_stats();
    let result = tutorial::doubled()?.launch(
        cx,
        (4u32, 4u32),
        (16u32, 16u32),
        &[(&d_a).into(), (&d_out).into()],
    )?;
    let back = result[0].to_vec::<f64>()?; // d_out.copy_to_host()
    check(
        "doubled_man_copy",
        back,
        host.iter().map(|v| v * 2.0).collect(),
    )?;
    let s = cx.stats();
    println!(
        "  after to_device: {} upload(s), {} download(s), {} launch(es) (one makes the zeros on the device, one is doubled)",
        s.h2d_copies, s.d2h_copies, s.kernel_launches
    );
    Ok(())
}

fn main() -> Result<()> {
    for cx in [Context::sim(), Context::cpu()] {
        run_all(&cx)?;
    }
    manual_copies(&Context::sim())?;
    let racy = tutorial::block_sum(true)?;
    let cx = Context::sim();
    let a = cx.from_vec(vec![1.0f32; 256], &[256])?;
    let sums = cx.zeros(&[1], DType::F32);
    match racy.launch(&cx, 1u32, 256u32, &[(&a).into(), (&sums).into()])?[0].to_vec::<f32>() {
        Err(e) => println!("without its syncthreads, the simulator says:\n  {e}"),
        Ok(v) => {
            return Err(Error::internal(
                "race check",
                format!("the race went unnoticed: {v:?}"),
            ))
        }
    }
    let source = tutorial::increment_by_one()?.cuda_source();
    let kernel = source
        .find("extern \"C\"")
        .map_or(source.as_str(), |i| &source[i..]);
    println!("the CUDA C of increment_by_one (prelude omitted):\n{kernel}");
    Ok(())
}
