//! Looking at the generated device code, as Numba's `inspect_asm`: the CUDA
//! C that the `cuda` backend compiles (and the `sim` backend executes) for
//! some arrays, on any machine.

use lazyfuse_core::{Array, ExprGraph, Options, Result};
use lazyfuse_device::{bind, cuda, lower};
use lazyfuse_fusion::{compile, FusionOptions};

/// The CUDA C of the fused kernels that computing `arrays` launches: the
/// shared prelude once, then each kernel under a comment naming it.
///
/// ```
/// let cx = lazyfuse::Context::cpu();
/// let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
/// let source = lazyfuse::cuda_source(&[&(&a * 2.0f32 + 1.0f32).sum()]).unwrap();
/// assert!(source.contains("__global__"));
/// ```
pub fn cuda_source(arrays: &[&Array]) -> Result<String> {
    for a in arrays {
        a.check()?;
    }
    let roots: Vec<_> = arrays.iter().map(|a| a.node()).collect();
    let options = arrays
        .first()
        .map_or_else(Options::default, |a| a.session().options().clone());
    // As the device backends partition it (they run row programs).
    let fusion = FusionOptions {
        row_programs: true,
        ..FusionOptions::of(&options)
    };
    let program = compile(&ExprGraph::from_roots(&roots), &fusion)?;
    let mut text = cuda::prelude();
    // Each kernel once, as a device compiles it once (two launches may
    // share one: the same structure over other sizes).
    let mut printed = std::collections::HashSet::new();
    for launch in &program.launches {
        let index = bind::index_type(launch);
        if !printed.insert((launch.kernel.structural_hash(), index)) {
            continue;
        }
        let lowered = lower::lower(&launch.kernel, index)?;
        text.push_str(&format!(
            "\n// ---- fused kernel {} ----{}",
            launch.kernel.name(),
            cuda::print_kernels(&lowered)
        ));
    }
    Ok(text)
}
