//! The reductions NumPy programs use beyond `sum`/`prod`/`min`/`max`/`mean`,
//! composed lazily from them and element-wise work (which fuses into the
//! reductions like any other): several axes at once with `keepdims`,
//! `any`/`all`/`count_nonzero`, `var`/`std` (two passes: the mean, then
//! the sum of squared deviations — never `E[x²] - E[x]²`), the NaN-ignoring
//! reductions, and `argmax`/`argmin`: one `Op::ArgReduce` node where the
//! engine runs it in one pass (the CPU), else one reduction of packed
//! (ordered value, reversed index) keys for values of at most 32 bits, or
//! the extreme, then the first index holding it, for 64-bit ones.

use smallvec::smallvec;

use super::build::new_node;
use super::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::node::{Axes, Op};
use crate::ops::{ArgExtreme, ReduceOp};
use crate::shape::{format_shape, normalize_axis, AxisIndex};
use crate::typing::Reduction;

const SUM: Reduction = Reduction::Builtin(ReduceOp::Sum);

impl Array {
    /// Sum over several axes (negative count from the end); `keepdims`
    /// keeps them with length 1, so the result broadcasts against `self`.
    pub fn sum_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.over_axes(SUM, axes, keepdims)
    }

    /// The built-in reduction `op` over several axes, as
    /// [`Array::sum_axes`]: `a.apply_reduce_axes(ReduceOp::Sum, &[0],
    /// true)` is `a.sum_axes(&[0], true)`.
    pub fn apply_reduce_axes(&self, op: ReduceOp, axes: &[isize], keepdims: bool) -> Array {
        self.over_axes(Reduction::Builtin(op), axes, keepdims)
    }

    /// Product over several axes, as [`Array::sum_axes`].
    pub fn prod_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.apply_reduce_axes(ReduceOp::Prod, axes, keepdims)
    }

    /// Minimum over several axes, as [`Array::sum_axes`].
    pub fn min_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.apply_reduce_axes(ReduceOp::Min, axes, keepdims)
    }

    /// Maximum over several axes, as [`Array::sum_axes`].
    pub fn max_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.apply_reduce_axes(ReduceOp::Max, axes, keepdims)
    }

    /// Mean over several axes, as [`Array::sum_axes`].
    pub fn mean_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.over_axes(Reduction::Mean, axes, keepdims)
    }

    /// Whether any element over several axes is true (non-zero; NaN is
    /// true), as [`Array::sum_axes`]; bool.
    pub fn any_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.keep(self.several_axes("any", axes), keepdims, |axes| {
            self.truth().reduce_over(SUM, Ok(axes)).gt(0i64)
        })
    }

    /// Whether every element over several axes is true, as [`Array::sum_axes`]; bool.
    pub fn all_axes(&self, axes: &[isize], keepdims: bool) -> Array {
        self.keep(self.several_axes("all", axes), keepdims, |axes| {
            self.truth()
                .logical_not()
                .reduce_over(SUM, Ok(axes))
                .eq(0i64)
        })
    }

    /// Whether any element is true (non-zero; NaN is true); false when empty.
    pub fn any(&self) -> Array {
        self.keep(Ok(self.every_axis()), false, |axes| {
            self.truth().reduce_over(SUM, Ok(axes)).gt(0i64)
        })
    }

    /// Whether every element is true; true when empty.
    pub fn all(&self) -> Array {
        self.keep(Ok(self.every_axis()), false, |axes| {
            self.truth()
                .logical_not()
                .reduce_over(SUM, Ok(axes))
                .eq(0i64)
        })
    }

    /// [`Array::any`] along one axis.
    pub fn any_axis(&self, axis: impl AxisIndex) -> Array {
        self.keep(self.reduction_axes("any", Some(axis)), false, |axes| {
            self.truth().reduce_over(SUM, Ok(axes)).gt(0i64)
        })
    }

    /// [`Array::all`] along one axis.
    pub fn all_axis(&self, axis: impl AxisIndex) -> Array {
        self.keep(self.reduction_axes("all", Some(axis)), false, |axes| {
            self.truth()
                .logical_not()
                .reduce_over(SUM, Ok(axes))
                .eq(0i64)
        })
    }

    /// How many elements are non-zero (NaN counts), as an i64 0-d array.
    pub fn count_nonzero(&self) -> Array {
        self.truth().reduce_over(SUM, Ok(self.every_axis()))
    }

    /// Variance of all elements with `ddof` delta degrees of freedom
    /// (NumPy's `var`): the mean, then the mean of squared deviations from
    /// it (two passes, each summed pairwise). Integers give f64; f16 and
    /// bf16 compute in f32. `ddof` at least the count gives inf or NaN, as
    /// NumPy.
    pub fn var(&self, ddof: usize) -> Array {
        self.variance(Ok(self.every_axis()), ddof)
    }

    /// Standard deviation: the square root of [`Array::var`].
    pub fn std(&self, ddof: usize) -> Array {
        self.variance(Ok(self.every_axis()), ddof).sqrt()
    }

    /// [`Array::var`] along one axis.
    pub fn var_axis(&self, axis: impl AxisIndex, ddof: usize) -> Array {
        self.variance(self.reduction_axes("var", Some(axis)), ddof)
    }

    /// [`Array::std`] along one axis.
    pub fn std_axis(&self, axis: impl AxisIndex, ddof: usize) -> Array {
        self.variance(self.reduction_axes("std", Some(axis)), ddof)
            .sqrt()
    }

    /// Sum treating NaN as zero (integers: [`Array::sum`]).
    pub fn nansum(&self) -> Array {
        self.without_nan(0.0).sum()
    }

    /// Mean of the elements that are not NaN (NaN when all are; integers:
    /// [`Array::mean`]).
    pub fn nanmean(&self) -> Array {
        if !self.dtype().is_float() {
            return self.mean();
        }
        let x = self.astype(compute_float(self.dtype()));
        let count = x.isnan().logical_not().sum().astype(x.dtype());
        (x.without_nan(0.0).sum() / count).astype(self.dtype())
    }

    /// Minimum ignoring NaN (NaN when all are; an error when empty).
    pub fn nanmin(&self) -> Array {
        self.nan_extreme(f64::INFINITY, Array::min)
    }

    /// Maximum ignoring NaN (NaN when all are; an error when empty).
    pub fn nanmax(&self) -> Array {
        self.nan_extreme(f64::NEG_INFINITY, Array::max)
    }

    /// Index of the largest element of the flattened array (i64): the
    /// first of equal ones, the first NaN if there is one (as NumPy); an
    /// error when empty.
    pub fn argmax(&self) -> Array {
        self.arg_extreme("argmax", ArgExtreme::Max, None)
    }

    /// Index of the smallest element, as [`Array::argmax`].
    pub fn argmin(&self) -> Array {
        self.arg_extreme("argmin", ArgExtreme::Min, None)
    }

    /// Indices of the largest elements along one axis, as [`Array::argmax`].
    pub fn argmax_axis(&self, axis: impl AxisIndex) -> Array {
        self.arg_extreme("argmax", ArgExtreme::Max, axis.to_axis().or(Some(i64::MAX)))
    }

    /// Indices of the smallest elements along one axis, as [`Array::argmax`].
    pub fn argmin_axis(&self, axis: impl AxisIndex) -> Array {
        self.arg_extreme("argmin", ArgExtreme::Min, axis.to_axis().or(Some(i64::MAX)))
    }

    /// Every axis, in order.
    fn every_axis(&self) -> Axes {
        (0..self.ndim()).collect()
    }

    /// Truth values: bool as is, others `!= 0` (NaN is true).
    fn truth(&self) -> Array {
        if self.dtype() == DType::Bool {
            self.clone()
        } else {
            self.ne(0i64)
        }
    }

    /// `reduce(axes)`, reshaped to keep the reduced axes with length 1
    /// when `keepdims`; an error of choosing the axes gives an invalid array.
    fn keep(
        &self,
        axes: Result<Axes>,
        keepdims: bool,
        reduce: impl FnOnce(Axes) -> Array,
    ) -> Array {
        let axes = match axes {
            Ok(axes) => axes,
            Err(e) => return Array::built(self.session(), Err(e)),
        };
        let kept = self.kept_shape(&axes);
        let result = reduce(axes);
        if keepdims {
            result.reshape(&kept)
        } else {
            result
        }
    }

    /// The shape with `axes` of length 1.
    fn kept_shape(&self, axes: &[usize]) -> Vec<usize> {
        let shape = self.shape();
        (0..shape.len())
            .map(|i| if axes.contains(&i) { 1 } else { shape[i] })
            .collect()
    }

    fn over_axes(&self, reduction: Reduction, axes: &[isize], keepdims: bool) -> Array {
        let chosen = self.several_axes(reduction.name(), axes);
        self.keep(chosen, keepdims, |axes| {
            self.reduce_over(reduction, Ok(axes))
        })
    }

    fn variance(&self, axes: Result<Axes>, ddof: usize) -> Array {
        self.keep(axes, false, |axes| {
            let x = self.astype(compute_float(self.dtype()));
            let count = axes.iter().map(|&a| self.shape()[a]).product::<usize>();
            let mean = x
                .reduce_over(Reduction::Mean, Ok(axes.clone()))
                .reshape(&self.kept_shape(&axes));
            let deviation = &x - &mean;
            let squares = (&deviation * &deviation).reduce_over(SUM, Ok(axes));
            let divisor = count.saturating_sub(ddof) as f64;
            let out = if self.dtype().is_float() {
                self.dtype()
            } else {
                DType::F64
            };
            (squares / divisor).astype(out)
        })
    }

    /// Floats with NaN replaced by `value`; others unchanged.
    fn without_nan(&self, value: f64) -> Array {
        if self.dtype().is_float() {
            self.isnan().where_(value, self)
        } else {
            self.clone()
        }
    }

    fn nan_extreme(&self, neutral: f64, extreme: fn(&Array) -> Array) -> Array {
        if !self.dtype().is_float() {
            return extreme(self);
        }
        let all_nan = self.isnan().all();
        all_nan.where_(f64::NAN, extreme(&self.without_nan(neutral)))
    }

    /// The index of the first element equal to the extreme along `axis`
    /// (`None`: of the flattened array; a NaN counts as equal when the
    /// extreme is NaN, which it is when there is one).
    fn arg_extreme(&self, name: &str, extreme: ArgExtreme, axis: Option<i64>) -> Array {
        let result = (|| -> Result<Array> {
            self.valid_node()?;
            let (a, k) = match axis {
                None => (self.reshape(&[self.len()]), 0),
                Some(axis) => (self.clone(), normalize_axis(name, axis, self.ndim())?),
            };
            let n = a.shape()[k];
            if n == 0 {
                return Err(Error::invalid(
                    name,
                    format!(
                        "attempt to get {name} of an empty sequence (shape {}; expected a \
                         non-empty axis)",
                        format_shape(self.shape())
                    ),
                ));
            }
            if self.session().engine().runs_arg_reductions(a.dtype()) {
                let node = a.valid_node()?;
                let shape: Vec<usize> = (0..a.ndim())
                    .filter(|&i| i != k)
                    .map(|i| a.shape()[i])
                    .collect();
                let index = new_node(
                    name,
                    Op::ArgReduce { extreme, axis: k },
                    DType::I64,
                    shape.as_slice().into(),
                    smallvec![node],
                )?;
                return Ok(Array::built(self.session(), Ok(index)));
            }
            let along: Vec<usize> = (0..a.ndim()).map(|i| if i == k { n } else { 1 }).collect();
            let index = self
                .session()
                .arange(0.0, n as f64, 1.0, DType::I64)
                .reshape(&along);
            let one_axis: Axes = [k].into_iter().collect();
            if let (Some(ordered), true) = (a.ordered_key(extreme), n <= u32::MAX as usize) {
                // One reduction: the largest (ordered value, reversed index)
                // pair, packed in an i64, holds the first extreme's index.
                const LOW: i64 = u32::MAX as i64;
                let key = ordered * (LOW + 1) + (index * -1i64 + LOW);
                let best = key.reduce_over(Reduction::Builtin(ReduceOp::Max), Ok(one_axis));
                return Ok(best.bitwise_and(LOW) * -1i64 + LOW);
            }
            let extreme = a
                .reduce_over(
                    Reduction::Builtin(extreme.reduce_op()),
                    Ok(one_axis.clone()),
                )
                .reshape(&a.kept_shape(&one_axis));
            let mut hits = a.eq(&extreme);
            if a.dtype().is_float() {
                hits = hits.logical_or(a.isnan());
            }
            Ok(hits
                .where_(&index, n as i64)
                .reduce_over(Reduction::Builtin(ReduceOp::Min), Ok(one_axis)))
        })();
        match result {
            Ok(array) => array,
            Err(e) => Array::built(self.session(), Err(e)),
        }
    }
}

impl Array {
    /// The values as i64 keys in the order `extreme` is the largest
    /// (`Max`: the values' order; `Min`: reversed), a NaN above every
    /// number, -0.0 equal to 0.0, each key within ±2^31; `None` for 64-bit
    /// dtypes, whose keys would not leave room for an index.
    fn ordered_key(&self, extreme: ArgExtreme) -> Option<Array> {
        let reverse = |key: Array| match extreme {
            ArgExtreme::Min => key.invert(),
            ArgExtreme::Max => key,
        };
        Some(match self.dtype() {
            DType::F32 | DType::F16 | DType::BF16 => {
                let (bits, magnitude) = if self.dtype() == DType::F32 {
                    (DType::I32, i64::from(i32::MAX))
                } else {
                    (DType::I16, i64::from(i16::MAX))
                };
                // + 0.0 turns -0.0 into 0.0. A negative float's bits order
                // backwards: flipping all but the sign bit sets them right.
                let signed = (self + 0.0).view(bits).astype(DType::I64);
                let ordered = signed
                    .lt(0i64)
                    .where_(signed.bitwise_xor(magnitude), &signed);
                self.isnan().where_(magnitude, reverse(ordered))
            }
            DType::U32 => reverse(self.astype(DType::I64) - (1i64 << 31)),
            DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 | DType::Bool => {
                reverse(self.astype(DType::I64))
            }
            _ => return None,
        })
    }
}

/// The float type a statistic computes in: f64 for integers and bool, f32
/// for f16 and bf16, the type itself otherwise.
fn compute_float(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        d if d.is_float() => d,
        _ => DType::F64,
    }
}
