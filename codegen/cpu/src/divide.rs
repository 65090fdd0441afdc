//! Integer division by one divisor for a whole chunk (`x // 7`, `i % n`,
//! the index arithmetic of `unravel_index`): a multiply by a precomputed
//! reciprocal instead of the hardware's division, which takes tens of
//! cycles for 64-bit operands. The quotients are exact for every dividend
//! (Granlund and Montgomery's round-up method, as in Hacker's Delight and
//! libdivide), and the results are `core::semantics`' `//`, `%` and `fmod`
//! of the operands' type.

use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{BinaryOp, Kind, Wide};

/// Unsigned 64-bit division by a fixed `d >= 2`: `n / d` as
/// `(t + ((n - t) >> 1)) >> shift` with `t` the high word of `magic * n`.
#[derive(Clone, Copy, Debug)]
pub struct Divider {
    magic: u64,
    shift: u32,
}

impl Divider {
    /// The divider of `divisor`, or `None` for 0 and 1 (nothing to gain).
    pub fn new(divisor: u64) -> Option<Divider> {
        if divisor < 2 {
            return None;
        }
        // l = ceil(log2 d), in 1..=64; magic = floor(2^64 (2^l - d) / d) + 1,
        // below 2^64 since 2^l - d < d.
        let l = 64 - (divisor - 1).leading_zeros();
        let numerator = ((1u128 << l) - u128::from(divisor)) << 64;
        let magic = (numerator / u128::from(divisor)) as u64 + 1;
        Some(Divider {
            magic,
            shift: l - 1,
        })
    }

    /// `n / d`, exactly.
    #[inline(always)]
    pub fn quotient(&self, n: u64) -> u64 {
        let t = ((u128::from(self.magic) * u128::from(n)) >> 64) as u64;
        (t + ((n - t) >> 1)) >> self.shift
    }
}

/// Whether [`by_one_divisor`] computes `op` on integers.
pub fn covers(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::FloorDiv | BinaryOp::Rem | BinaryOp::Fmod)
}

/// `out = xs op divisor` for an integer type `T`: NumPy's floor division
/// and remainder, C's `fmod`, wrapping as `T` does; false, having written
/// nothing, for a divisor of magnitude below 2 (the caller's general loop
/// runs those).
#[inline(always)]
pub fn by_one_divisor<T: Arithmetic>(op: BinaryOp, xs: &[T], divisor: T, out: &mut [T]) -> bool {
    let signed = T::DTYPE.kind() == Kind::Int;
    // Every integer dtype's values as i64 (signed) or u64 (unsigned) bits.
    let d = int(divisor) as i64;
    let magnitude = if signed { d.unsigned_abs() } else { d as u64 };
    let Some(by) = Divider::new(magnitude) else {
        return false;
    };
    let back = |v: i64| {
        T::from_wide(Wide::Int(if signed {
            i128::from(v)
        } else {
            i128::from(v as u64)
        }))
    };
    if !signed {
        for (o, &x) in out.iter_mut().zip(xs) {
            let x = int(x) as u64;
            let q = by.quotient(x);
            let v = if op == BinaryOp::FloorDiv {
                q
            } else {
                x - q * magnitude
            };
            *o = back(v as i64);
        }
        return true;
    }
    let floors = |r: i64| r != 0 && ((r < 0) != (d < 0));
    macro_rules! each {
        ($f:expr) => {
            for (o, &x) in out.iter_mut().zip(xs) {
                let x = int(x) as i64;
                // Truncated quotient and remainder (the remainder takes the
                // dividend's sign), wrapping as `MIN // -1` does.
                let q = by.quotient(x.unsigned_abs()) as i64;
                let q = if (x < 0) != (d < 0) {
                    q.wrapping_neg()
                } else {
                    q
                };
                let r = x.wrapping_sub(q.wrapping_mul(d));
                *o = back($f(q, r));
            }
        };
    }
    match op {
        BinaryOp::FloorDiv => each!(|q: i64, r: i64| if floors(r) { q - 1 } else { q }),
        BinaryOp::Rem => each!(|_q: i64, r: i64| if floors(r) { r + d } else { r }),
        _ => each!(|_q: i64, r: i64| r),
    }
    true
}

/// An integer element's value (every integer dtype fits an i128).
#[inline(always)]
fn int<T: Arithmetic>(x: T) -> i128 {
    match x.to_wide() {
        Wide::Int(v) => v,
        Wide::Float(v) => v as i128,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Divisors and dividends around every power of two, and a spread of
    /// others (a fixed-seed generator: the same cases every run).
    fn values() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 3, 5, 6, 7, 10, 641, 1000, u64::MAX, u64::MAX - 1];
        for k in 1..64 {
            let p = 1u64 << k;
            v.extend([p - 1, p, p + 1]);
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..300 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            v.push(state >> (state % 64));
        }
        v
    }

    #[test]
    fn quotients_are_exact_for_every_dividend() {
        let values = values();
        for &d in values.iter().filter(|&&d| d > 1) {
            let by = Divider::new(d).unwrap();
            for &n in &values {
                assert_eq!(by.quotient(n), n / d, "{n} / {d}");
            }
        }
    }

    #[test]
    fn results_are_core_semantics_for_every_integer_type() {
        fn check<T: Arithmetic + PartialEq + std::fmt::Debug>(xs: &[T], ds: &[T]) {
            for &d in ds {
                if int(d) == 0 {
                    continue;
                }
                for op in [BinaryOp::FloorDiv, BinaryOp::Rem, BinaryOp::Fmod] {
                    let mut out = xs.to_vec();
                    if !by_one_divisor(op, xs, d, &mut out) {
                        assert!(int(d).abs() == 1, "{d:?} refused");
                        continue;
                    }
                    for (&x, &got) in xs.iter().zip(&out) {
                        assert_eq!(got, T::binary(op, x, d), "{op:?}({x:?}, {d:?})");
                    }
                }
            }
        }
        let wide: Vec<i128> = values()
            .into_iter()
            .flat_map(|v| [i128::from(v), -i128::from(v)])
            .collect();
        macro_rules! types {
            ($($t:ty),*) => {$(
                let xs: Vec<$t> = wide.iter().map(|&v| v as $t).collect();
                let divisors: Vec<$t> = xs.iter().step_by(7).copied().collect();
                check::<$t>(&xs, &divisors);
            )*};
        }
        types!(i8, i16, i32, i64, u8, u16, u32, u64);
    }
}
