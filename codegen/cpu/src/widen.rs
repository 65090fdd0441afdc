//! `f16` and `bf16` operations computed in `f32` a chunk at a time: the
//! operands are widened with `half`'s slice conversions (F16C where the CPU
//! has it), the `f32` loop runs, and the result is rounded back — the
//! values of `core::semantics` (each operation in `f32`, rounded to the
//! half type), without a software conversion per element.

use std::cell::RefCell;

use lazyfuse_core::half::slice::HalfFloatSliceExt;
use lazyfuse_core::half::{bf16, f16};
use lazyfuse_core::{BinaryOp, UnaryOp};

use super::loops::{self, Arg};
use super::vmath;

/// A 16-bit float type with vectorised slice conversions.
pub trait Half: Copy {
    /// Widens `src` into `dst` (same length).
    fn widen(src: &[Self], dst: &mut [f32]);
    /// Rounds `src` into `dst` (same length).
    fn narrow(src: &[f32], dst: &mut [Self]);
    /// One value, widened.
    fn to_f32(self) -> f32;
}

macro_rules! half {
    ($($t:ty),*) => {$(
        impl Half for $t {
            fn widen(src: &[Self], dst: &mut [f32]) {
                src.convert_to_f32_slice(dst);
            }
            fn narrow(src: &[f32], dst: &mut [Self]) {
                dst.convert_from_f32_slice(src);
            }
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
        }
    )*};
}
half!(f16, bf16);

/// True for the operations computed here: arithmetic that keeps the dtype,
/// except `minimum`/`maximum` (which keep the first of two equal halves,
/// signed zeros included, as NumPy does) and `nextafter` (a step of the
/// half type's own bits).
pub fn covers_unary(op: UnaryOp) -> bool {
    !op.is_predicate() && op != UnaryOp::LogicalNot
}

/// See [`covers_unary`].
pub fn covers_binary(op: BinaryOp) -> bool {
    !op.is_comparison()
        && !matches!(
            op,
            BinaryOp::Minimum
                | BinaryOp::Maximum
                | BinaryOp::Nextafter
                | BinaryOp::LogicalAnd
                | BinaryOp::LogicalOr
                | BinaryOp::LogicalXor
        )
}

thread_local! {
    /// Per-thread `f32` scratch for two operands and a result.
    static SCRATCH: RefCell<[Vec<f32>; 3]> = const { RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

/// Runs `f` with three `f32` buffers of `len` elements (the thread's
/// scratch, or fresh buffers if it is in use).
fn with_scratch<R>(len: usize, mut f: impl FnMut(&mut [Vec<f32>; 3]) -> R) -> R {
    let reused = SCRATCH.try_with(|cell| {
        cell.try_borrow_mut().ok().map(|mut scratch| {
            for v in scratch.iter_mut() {
                v.resize(len, 0.0);
            }
            f(&mut scratch)
        })
    });
    match reused {
        Ok(Some(result)) => result,
        _ => f(&mut [vec![0.0; len], vec![0.0; len], vec![0.0; len]]),
    }
}

/// The operand in `f32`: a slice is widened into `buffer`.
fn widened<'a, H: Half>(a: Arg<'_, H>, buffer: &'a mut [f32]) -> Arg<'a, f32> {
    match a {
        Arg::Slice(x) => {
            H::widen(x, &mut buffer[..x.len()]);
            Arg::Slice(&buffer[..x.len()])
        }
        Arg::Scalar(x) => Arg::Scalar(x.to_f32()),
    }
}

/// `out = op(a)` computed in `f32`.
pub fn unary<H: Half>(op: UnaryOp, a: Arg<'_, H>, out: &mut [H]) {
    with_scratch(out.len(), |[xa, _, xo]| {
        let len = out.len();
        let a = widened(a, xa);
        if !vmath::unary::<f32>(op, a, &mut xo[..len]) {
            loops::unary::<f32>(op, a, &mut xo[..len]);
        }
        H::narrow(&xo[..len], out);
    });
}

/// `out = a op b` computed in `f32`.
pub fn binary<H: Half>(op: BinaryOp, a: Arg<'_, H>, b: Arg<'_, H>, out: &mut [H]) {
    with_scratch(out.len(), |[xa, xb, xo]| {
        let len = out.len();
        let (a, b) = (widened(a, xa), widened(b, xb));
        loops::binary::<f32>(op, a, b, &mut xo[..len]);
        H::narrow(&xo[..len], out);
    });
}

/// `out = a as f32`.
pub fn widen<H: Half>(a: Arg<'_, H>, out: &mut [f32]) {
    match a {
        Arg::Slice(x) => H::widen(x, out),
        Arg::Scalar(x) => out.fill(x.to_f32()),
    }
}

/// `out = a as H` (rounded to nearest even, as `core::element` casts).
pub fn narrow<H: Half>(a: Arg<'_, f32>, out: &mut [H]) {
    match a {
        Arg::Slice(x) => H::narrow(x, out),
        Arg::Scalar(x) => {
            if let Some(first) = out.first_mut() {
                H::narrow(&[x], std::slice::from_mut(first));
                let v = *first;
                out.fill(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use lazyfuse_core::semantics::Arithmetic;

    use super::*;

    /// Every f16 bit pattern of a coarse grid (normals, subnormals, zeros,
    /// infinities, NaN), and the same for bf16.
    fn halves<H: Copy>(from_bits: impl Fn(u16) -> H) -> Vec<H> {
        (0..=u16::MAX)
            .step_by(97)
            .chain([0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 1, 0x3c00])
            .map(from_bits)
            .collect()
    }

    fn same<H: Copy + PartialEq + Into<f32>>(got: H, want: H) -> bool {
        let (g, w): (f32, f32) = (got.into(), want.into());
        (g.is_nan() && w.is_nan()) || (g == w && g.is_sign_negative() == w.is_sign_negative())
    }

    fn check<H: Half + Arithmetic + PartialEq + Into<f32> + std::fmt::Debug>(values: &[H]) {
        let shifted: Vec<H> = values
            .iter()
            .cycle()
            .skip(13)
            .take(values.len())
            .copied()
            .collect();
        let mut out = values.to_vec();
        for op in [
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Pow,
            BinaryOp::FloorDiv,
            BinaryOp::Rem,
        ] {
            binary(op, Arg::Slice(values), Arg::Slice(&shifted), &mut out);
            for ((&a, &b), &o) in values.iter().zip(&shifted).zip(&out) {
                assert!(
                    same(o, H::binary(op, a, b)),
                    "{op:?}({a:?}, {b:?}) gave {o:?}"
                );
            }
        }
        // Functions `vmath` computes are within 2 f32 ulp before rounding:
        // the half results equal the reference or are one half-ulp apart.
        for op in [
            UnaryOp::Neg,
            UnaryOp::Abs,
            UnaryOp::Sqrt,
            UnaryOp::Square,
            UnaryOp::Floor,
            UnaryOp::Exp,
            UnaryOp::Sin,
            UnaryOp::Tanh,
            UnaryOp::Log,
        ] {
            unary(op, Arg::Slice(values), &mut out);
            for (&a, &o) in values.iter().zip(&out) {
                let want = H::unary(op, a);
                let (g, w): (f32, f32) = (o.into(), want.into());
                let close = same(o, want) || (vmath::covers(op) && (g - w).abs() <= w.abs() * 1e-2);
                assert!(close, "{op:?}({a:?}) gave {o:?}, want {want:?}");
            }
        }
    }

    #[test]
    fn f16_and_bf16_operations_match_the_semantics() {
        check(&halves(f16::from_bits));
        check(&halves(bf16::from_bits));
    }

    #[test]
    fn casts_round_as_the_semantics_do() {
        let wide: Vec<f32> = (0..10_000)
            .map(|i| (i as f32 - 5000.0) * 1.37e-3)
            .chain([f32::NAN, f32::INFINITY, 65520.0, 1e-8])
            .collect();
        let mut half = vec![f16::ZERO; wide.len()];
        narrow(Arg::Slice(&wide), &mut half);
        for (&x, &h) in wide.iter().zip(&half) {
            assert!(same(h, f16::from_f32(x)), "{x} gave {h:?}");
        }
        let mut back = vec![0.0f32; wide.len()];
        widen(Arg::Slice(&half), &mut back);
        assert!(back
            .iter()
            .zip(&half)
            .all(|(&b, &h)| b.to_bits() == h.to_f32().to_bits()));
        let mut filled = [bf16::ZERO; 5];
        narrow(Arg::Scalar(1.1f32), &mut filled);
        assert!(filled.iter().all(|&v| v == bf16::from_f32(1.1)));
    }
}
