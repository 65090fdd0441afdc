//! The operations of lazyfuse that are not element-wise expressions or
//! built-in reductions: each family is a folder with its kernel(s) (written
//! with the user-kernel API, [`kernel`]) and its host routine for the CPU,
//! and each call builds a lazy graph node as every operation does.
//!
//! - [`sort`](sort()), [`argsort`], [`partition`] (`sort/`)
//! - [`take`](take()) and [`scatter`] (`take/`)
//! - [`matmul`](matmul()) (`matmul/`)
//! - [`searchsorted`] (`search/`)
//! - [`bincount`](bincount()) (`bincount/`)
//! - [`assign_region`] (`assign/`)
//! - [`roll`](roll()) (`roll/`)
//! - [`ComplexArray`] (`complex/`): complex arrays as pairs of real ones
//! - [`fft`](mod@fft) (`fft/`): NumPy's `np.fft`
//!
//! Each is also a method of `Array` through [`ArrayLibrary`] (`a.sort(1)`).
//! The `lazyfuse` facade re-exports all of it (`lazyfuse::sort`,
//! `lazyfuse::kernel::Kernel`, …); this crate sits between the kernel
//! builder (`lazyfuse-kernel`) and the facade, which only wires a
//! `Context` (`docs/architecture.md`).

mod assign;
mod bincount;
mod complex;
pub mod fft;
pub mod kernel;
mod kernel_cache;
mod lines;
mod matmul;
mod methods;
mod roll;
mod routine;
mod search;
mod sort;
mod take;

pub use assign::{assign_region, region_kernel, region_kernels, Region};
pub use bincount::{bincount, bincount_kernel};
pub use complex::{
    ComplexArray, ComplexBinary, ComplexDType, ComplexOperand, ComplexResult, ComplexUnary,
};
pub use fft::{fft_kernel, rfft_kernel, Norm};
pub use matmul::{matmul, matmul_kernel};
pub use methods::ArrayLibrary;
pub use roll::{roll, roll_kernel};
pub use search::{searchsorted, searchsorted_kernel, Side};
pub use sort::{
    argsort, argsort_kernel, argsort_stage_kernel, partition, partition_kernel, sort, sort_kernel,
    sort_stage_kernel, STAGED_FROM,
};
pub use take::{scatter, scatter_kernels, take, take_kernels, IndexMode};
