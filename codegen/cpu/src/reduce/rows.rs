//! Whole rows combined element by element: the accumulation of a
//! reduction over leading axes (`acc[i] = acc[i] op values[i]`), with the
//! operation chosen once per row so that each loop vectorises.

use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{Element, ReduceOp};

use crate::reduce_table::{cpu_reduce, CpuReduce};

/// `acc[i] = acc[i] op values[i]`, `op` chosen once for the whole loop.
#[inline(always)]
pub(super) fn combine_rows<T: Element + Arithmetic>(op: ReduceOp, acc: &mut [T], values: &[T]) {
    // Each arm's operation is a constant, so that its loop vectorises.
    macro_rules! each_loop {
        ($($row:ident $({ $field:ident: $value:literal })? => $combine:ident),*) => {
            match cpu_reduce(op) {
                $(CpuReduce::$row $({ $field: $value })? => $combine(acc, values, |a, v| {
                    T::binary(CpuReduce::$row $({ $field: $value })?.combiner(), a, v)
                }),)*
            }
        };
    }
    each_loop!(Plus => combine_in_place, Times => combine_in_place,
               Extreme { max: false } => combine_through_block,
               Extreme { max: true } => combine_through_block)
}

#[inline(always)]
fn combine_in_place<T: Copy>(acc: &mut [T], values: &[T], combine: impl Fn(T, T) -> T) {
    for (a, &v) in acc.iter_mut().zip(values) {
        *a = combine(*a, v);
    }
}

/// [`combine_in_place`] for the extremes, through a block on the stack:
/// written in place, `a = if keep { a } else { v }` is vectorised as a
/// masked store of `v`, which AMD's cores run slowly (measured: `max` of
/// 4·10^6 f32 took 3.7x NumPy's time, `sum` 1.1x). Writing every element
/// of the block, then copying it, is a blend and two plain stores.
#[inline(always)]
fn combine_through_block<T: Element>(acc: &mut [T], values: &[T], combine: impl Fn(T, T) -> T) {
    const BLOCK: usize = 64;
    let mut block = [T::default(); BLOCK];
    for (a, v) in acc.chunks_mut(BLOCK).zip(values.chunks(BLOCK)) {
        for ((b, &x), &y) in block.iter_mut().zip(a.iter()).zip(v) {
            *b = combine(x, y);
        }
        a.copy_from_slice(&block[..a.len()]);
    }
}

/// [`combine_rows`] compiled for AVX2 (vectors twice as wide as the
/// baseline's).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn combine_rows_avx2<T: Element + Arithmetic>(
    op: ReduceOp,
    acc: &mut [T],
    values: &[T],
) {
    combine_rows(op, acc, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows combined through a block (the extremes) and in place (sums,
    /// products) give each element's combination, NaNs and signed zeros
    /// as the operation has them, for lengths around the block's.
    #[test]
    fn rows_combine_element_by_element() {
        let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, -1.5, 2.0];
        for len in [0, 1, 63, 64, 65, 130] {
            let acc: Vec<f32> = (0..len).map(|i| specials[i % 6]).collect();
            let values: Vec<f32> = (0..len).map(|i| specials[(i * 5 + 1) % 6]).collect();
            for &op in ReduceOp::ALL {
                let mut combined = acc.clone();
                combine_rows(op, &mut combined, &values);
                for ((&c, &a), &v) in combined.iter().zip(&acc).zip(&values) {
                    let expected = f32::binary(op.combiner(), a, v);
                    assert_eq!(c.to_bits(), expected.to_bits(), "{op:?} of {a} and {v}");
                }
            }
        }
    }
}
