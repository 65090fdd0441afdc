//! Checking a launch against a kernel's parameters and the hardware's
//! limits, and describing it for the graph ([`KernelLaunch`]). Arguments
//! arrive as dtypes, shapes and scalars ([`ArgValue`]): the `Array`-facing
//! side of a launch (`Kernel::launch` in the facade) turns arrays into
//! these and adds the launch to the graph.

use std::sync::Arc;

use lazyfuse_core::{DType, Error, KernelLaunch, Result, Scalar, UserKernel};

/// Threads a block may have.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Threads a block may have along x, y and z.
pub const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
/// Blocks a grid may have along x, y and z.
pub const MAX_GRID_DIM: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// Static shared memory a block may use.
pub const MAX_SHARED_BYTES: usize = 48 * 1024;

/// Launch geometry: blocks in a grid or threads in a block, along x, y, z
/// (from `n`, `(x, y)` or `(x, y, z)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub [u32; 3]);

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3([x, 1, 1])
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3([x, y, 1])
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3([x, y, z])
    }
}

/// One argument of a launch as the kernel checks it, in parameter order.
#[derive(Clone, Debug)]
pub enum ArgValue<'a> {
    /// An array of `dtype` and `shape`.
    Array {
        /// Its element type.
        dtype: DType,
        /// Its shape.
        shape: &'a [usize],
    },
    /// A scalar (converted to the parameter's dtype, range-checked).
    Scalar(Scalar),
}

/// What a launch must be given, parameter by parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ArgSpec {
    Array {
        name: String,
        dtype: DType,
        /// `None`: any dimensionality (raw kernels).
        ndim: Option<usize>,
        written: bool,
    },
    Scalar {
        name: String,
        dtype: DType,
    },
}

/// Checks a launch of `kernel` against its parameters (`specs`) and the
/// hardware limits; returns the launch the graph records.
pub(crate) fn prepare(
    kernel: Arc<dyn UserKernel>,
    (specs, shared_bytes): (&[ArgSpec], usize),
    (grid, block): (Dim3, Dim3),
    args: &[ArgValue<'_>],
) -> Result<KernelLaunch> {
    let op = format!("kernel '{}'", kernel.name());
    let invalid = |message: String| Error::InvalidArgument {
        op: op.clone(),
        message,
    };
    check_geometry(grid, block, shared_bytes).map_err(invalid)?;
    if args.len() != specs.len() {
        return Err(invalid(format!(
            "takes {} arguments, got {}",
            specs.len(),
            args.len()
        )));
    }
    let (mut shapes, mut scalars, mut written) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (spec, arg)) in specs.iter().zip(args).enumerate() {
        match (spec, arg) {
            (
                ArgSpec::Array {
                    name,
                    dtype,
                    ndim,
                    written: w,
                },
                ArgValue::Array {
                    dtype: given,
                    shape,
                },
            ) => {
                if given != dtype || ndim.is_some_and(|n| n != shape.len()) {
                    return Err(Error::DTypeMismatch {
                        op: op.clone(),
                        message: format!(
                            "argument {i} ('{name}') is a {given} array of shape {shape:?} (expected a {}{dtype} array)",
                            ndim.map_or(String::new(), |n| format!("{n}-d "))
                        ),
                    });
                }
                if *w {
                    written.push(shapes.len());
                }
                shapes.push(shape.to_vec());
            }
            (ArgSpec::Scalar { name, dtype }, ArgValue::Scalar(s)) => {
                scalars.push(s.to_literal(&format!("{op} argument {i} ('{name}')"), *dtype)?);
            }
            (ArgSpec::Array { name, .. } | ArgSpec::Scalar { name, .. }, _) => {
                let expected = if matches!(spec, ArgSpec::Array { .. }) {
                    "an array"
                } else {
                    "a scalar"
                };
                return Err(invalid(format!(
                    "argument {i} ('{name}') must be {expected}"
                )));
            }
        }
    }
    if written.is_empty() {
        return Err(invalid(
            "writes no array: declare its outputs with array_mut (or written: true)".to_string(),
        ));
    }
    Ok(KernelLaunch::new(
        kernel,
        (grid.0, block.0),
        scalars,
        written,
        shapes,
    ))
}

fn check_geometry(grid: Dim3, block: Dim3, shared_bytes: usize) -> std::result::Result<(), String> {
    let threads: u64 = block.0.iter().map(|&d| u64::from(d)).product();
    if grid.0.contains(&0) || block.0.contains(&0) {
        return Err(format!(
            "grid {:?} and block {:?} must have no zero dimension",
            grid.0, block.0
        ));
    }
    if threads > u64::from(MAX_THREADS_PER_BLOCK) {
        return Err(format!(
            "a block of {:?} has {threads} threads (at most {MAX_THREADS_PER_BLOCK})",
            block.0
        ));
    }
    for d in 0..3 {
        if block.0[d] > MAX_BLOCK_DIM[d] || grid.0[d] > MAX_GRID_DIM[d] {
            return Err(format!(
                "grid {:?} or block {:?} exceeds the limits (grid at most {:?}, block at most {:?})",
                grid.0, block.0, MAX_GRID_DIM, MAX_BLOCK_DIM
            ));
        }
    }
    if shared_bytes > MAX_SHARED_BYTES {
        return Err(format!(
            "uses {shared_bytes} bytes of shared memory per block (at most {MAX_SHARED_BYTES})"
        ));
    }
    Ok(())
}
