//! Demands one program of the suite over and over, for a profiler:
//! `cargo run --release -p lazyfuse-bench --example program_loop --
//! kmeans_assign 10000 20000` (program, elements, demands), then e.g.
//! `perf record` of the binary; `THREADS=1` runs it on one worker. Prints
//! the mean time per demand.

use std::time::Instant;

use lazyfuse::{Array, Context, HostBuffer, SliceMut};
use lazyfuse_bench::programs::{build, Host, ProgramId};
use lazyfuse_bench::Result;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let program = ProgramId::parse(args.first().map_or("kmeans_assign", String::as_str))?;
    let n: usize = args.get(1).map_or(Ok(10_000), |s| s.parse())?;
    let demands: usize = args.get(2).map_or(Ok(20_000), |s| s.parse())?;
    let threads: usize = std::env::var("THREADS").map_or(Ok(0), |s| s.parse())?;
    let cx = Context::builder().backend("cpu").threads(threads).build()?;
    let host = Host::new(program, n);
    let inputs = host.arrays(&cx)?;
    let first = build(program, &cx, &host, &inputs)?;
    let mut outs = first
        .iter()
        .map(|a| HostBuffer::try_zeros(a.dtype(), a.shape().iter().product()))
        .collect::<lazyfuse::Result<Vec<_>>>()?;
    let mut demand = || -> Result<()> {
        let results = build(program, &cx, &host, &inputs)?;
        let refs: Vec<&Array> = results.iter().collect();
        let slices: Vec<SliceMut<'_>> = outs.iter_mut().map(HostBuffer::as_slice_mut).collect();
        Ok(cx.read_all_into(&refs, slices)?)
    };
    // Past the JIT's tier and the first compiles.
    for _ in 0..200 {
        demand()?;
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let start = Instant::now();
    for _ in 0..demands {
        demand()?;
    }
    let per = start.elapsed().as_secs_f64() / demands as f64;
    println!("{}: {:.2} us per demand", program.name(), per * 1e6);
    Ok(())
}
