//! The operations of this crate as methods of [`Array`]: `a.sort(1)` as
//! `a.sum()` is, next to the free functions (`lazyfuse::sort(&a, 1)`).
//! `Array` lives in `lazyfuse-core`, below this crate, so the methods are
//! a trait's; the facade re-exports it (`use lazyfuse::ArrayLibrary`).
//!
//! ```
//! use lazyfuse::{ArrayLibrary, Context};
//!
//! let cx = Context::cpu();
//! let a = cx.from_vec(vec![3.0f32, 1.0, 2.0, 0.5, 9.0, 4.0], &[2, 3])?;
//! assert_eq!(a.sort(1)?.to_vec::<f32>()?, [1.0, 2.0, 3.0, 0.5, 4.0, 9.0]);
//! assert_eq!(a.argsort(1)?.to_vec::<i64>()?, [1, 2, 0, 0, 2, 1]);
//! let b = cx.from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2])?;
//! assert_eq!(a.matmul(&b)?.shape(), &[2, 2]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use lazyfuse_core::{Array, Result};

use crate::{IndexMode, Region, Side};

/// This crate's operations as methods of [`Array`] (each is the free
/// function of the same name, whose documentation says what it does and
/// which errors it gives).
pub trait ArrayLibrary {
    /// [`sort`](crate::sort()) along `axis`.
    fn sort(&self, axis: usize) -> Result<Array>;
    /// [`argsort`](crate::argsort) along `axis`.
    fn argsort(&self, axis: usize) -> Result<Array>;
    /// [`partition`](crate::partition) along `axis` around the `kth` elements.
    fn partition(&self, axis: usize, kth: &[i64]) -> Result<Array>;
    /// [`take`](crate::take()) of `indices` along `axis`.
    fn take(&self, indices: &Array, axis: usize, mode: IndexMode) -> Result<Array>;
    /// [`scatter`](crate::scatter) of `value` at `indices` along `axis`.
    fn scatter(
        &self,
        indices: &Array,
        axis: usize,
        value: &Array,
        mode: IndexMode,
    ) -> Result<Array>;
    /// [`matmul`](crate::matmul()) by `other`.
    fn matmul(&self, other: &Array) -> Result<Array>;
    /// [`searchsorted`](crate::searchsorted) of `values` in this sorted array.
    fn searchsorted(&self, values: &Array, side: Side) -> Result<Array>;
    /// [`bincount`](crate::bincount()) with optional `weights` and at least `length` bins.
    fn bincount(&self, weights: Option<&Array>, length: usize) -> Result<Array>;
    /// [`assign_region`](crate::assign_region): this array with `value` in `region`.
    fn assign_region(&self, region: &[Region], value: &Array) -> Result<Array>;
    /// [`roll`](crate::roll()) by `shift` places along `axis`.
    fn roll(&self, shift: i64, axis: usize) -> Result<Array>;
}

impl ArrayLibrary for Array {
    fn sort(&self, axis: usize) -> Result<Array> {
        crate::sort(self, axis)
    }
    fn argsort(&self, axis: usize) -> Result<Array> {
        crate::argsort(self, axis)
    }
    fn partition(&self, axis: usize, kth: &[i64]) -> Result<Array> {
        crate::partition(self, axis, kth)
    }
    fn take(&self, indices: &Array, axis: usize, mode: IndexMode) -> Result<Array> {
        crate::take(self, indices, axis, mode)
    }
    fn scatter(
        &self,
        indices: &Array,
        axis: usize,
        value: &Array,
        mode: IndexMode,
    ) -> Result<Array> {
        crate::scatter(self, indices, axis, value, mode)
    }
    fn matmul(&self, other: &Array) -> Result<Array> {
        crate::matmul(self, other)
    }
    fn searchsorted(&self, values: &Array, side: Side) -> Result<Array> {
        crate::searchsorted(self, values, side)
    }
    fn bincount(&self, weights: Option<&Array>, length: usize) -> Result<Array> {
        crate::bincount(self, weights, length)
    }
    fn assign_region(&self, region: &[Region], value: &Array) -> Result<Array> {
        crate::assign_region(self, region, value)
    }
    fn roll(&self, shift: i64, axis: usize) -> Result<Array> {
        crate::roll(self, shift, axis)
    }
}
