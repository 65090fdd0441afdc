//! Typed loops over one chunk: one monomorphised loop per (operation, dtype,
//! operand shape), with the operation chosen outside the loop so the
//! compiler vectorises the body. Values come from `core::semantics`, the
//! definitions every executor shares.

use crate::divide;
use crate::primitive::{Bits, Primitive};
use lazyfuse_core::semantics::{compare, logical, Arithmetic};
use lazyfuse_core::{philox, BinaryOp, Element, Kind, UnaryOp};

/// An operand: `len` elements, or one value broadcast over the chunk.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a, T> {
    /// One element per position.
    Slice(&'a [T]),
    /// The same value everywhere.
    Scalar(T),
}

#[inline(always)]
fn map1<A: Copy, O: Copy>(a: Arg<'_, A>, out: &mut [O], f: impl Fn(A) -> O) {
    match a {
        Arg::Slice(x) => {
            for (o, &x) in out.iter_mut().zip(x) {
                *o = f(x);
            }
        }
        Arg::Scalar(x) => {
            let v = f(x);
            for o in out.iter_mut() {
                *o = v;
            }
        }
    }
}

#[inline(always)]
fn map2<A: Copy, B: Copy, O: Copy>(
    a: Arg<'_, A>,
    b: Arg<'_, B>,
    out: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    match (a, b) {
        (Arg::Slice(x), Arg::Slice(y)) => {
            for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
                *o = f(x, y);
            }
        }
        (Arg::Slice(x), Arg::Scalar(y)) => {
            for (o, &x) in out.iter_mut().zip(x) {
                *o = f(x, y);
            }
        }
        (Arg::Scalar(x), Arg::Slice(y)) => {
            for (o, &y) in out.iter_mut().zip(y) {
                *o = f(x, y);
            }
        }
        (Arg::Scalar(x), Arg::Scalar(y)) => {
            let v = f(x, y);
            for o in out.iter_mut() {
                *o = v;
            }
        }
    }
}

/// `out = op(a)` for an operation that keeps the dtype.
#[inline(always)]
pub fn unary<T: Arithmetic>(op: UnaryOp, a: Arg<'_, T>, out: &mut [T]) {
    macro_rules! arms {
        ($($name:ident),*) => {
            match op {
                $(UnaryOp::$name => map1(a, out, |x| T::unary(UnaryOp::$name, x)),)*
                _ => map1(a, out, |x| T::unary(op, x)),
            }
        };
    }
    arms!(
        Neg, Abs, Sign, Square, Sqrt, Exp, Log, Sin, Cos, Tan, Tanh, Floor, Ceil, Trunc, Round,
        Rint
    )
}

/// `out = isnan(a)` and the other predicates.
#[inline(always)]
pub fn predicate<T: Arithmetic>(op: UnaryOp, a: Arg<'_, T>, out: &mut [bool]) {
    match op {
        UnaryOp::IsNan => map1(a, out, |x| T::predicate(UnaryOp::IsNan, x)),
        UnaryOp::IsInf => map1(a, out, |x| T::predicate(UnaryOp::IsInf, x)),
        _ => map1(a, out, |x| T::predicate(UnaryOp::IsFinite, x)),
    }
}

/// `out = !a`.
#[inline(always)]
pub fn not(a: Arg<'_, bool>, out: &mut [bool]) {
    map1(a, out, |x| !x);
}

/// `out = a op b` for arithmetic operations.
#[inline(always)]
pub fn binary<T: Arithmetic>(op: BinaryOp, a: Arg<'_, T>, b: Arg<'_, T>, out: &mut [T]) {
    if let (Arg::Slice(xs), Arg::Scalar(d)) = (a, b) {
        let integer = matches!(T::DTYPE.kind(), Kind::Int | Kind::UInt);
        if integer && divide::covers(op) && divide::by_one_divisor(op, xs, d, out) {
            return;
        }
    }
    macro_rules! arms {
        ($($name:ident),*) => {
            match op {
                $(BinaryOp::$name => map2(a, b, out, |x, y| T::binary(BinaryOp::$name, x, y)),)*
                _ => map2(a, b, out, |x, y| T::binary(op, x, y)),
            }
        };
    }
    arms!(
        Add, Sub, Mul, Div, FloorDiv, Rem, Pow, Minimum, Maximum, BitwiseAnd, BitwiseOr,
        BitwiseXor, LeftShift, RightShift
    )
}

/// `out = op(counter, key)` for the generator's three forms (`op` is
/// `philox`, `philox_word` or `philox_pair`; any other operation is an
/// error of the caller's, computed as `philox`).
#[inline(always)]
pub fn generator(op: BinaryOp, counter: Arg<'_, u64>, key: Arg<'_, u64>, out: &mut [u64]) {
    match op {
        BinaryOp::PhiloxWord => philox_word(counter, key, out),
        BinaryOp::PhiloxPair => philox_pair(counter, key, out),
        _ => philox(counter, key, out),
    }
}

/// `out = op(counters, keys)` for the generator's two forms with a key per
/// counter (compiled code's calls pass them so), its rounds over many
/// counters at a time when the keys are one value, as a random array's are.
#[inline(always)]
pub fn generator_slice(op: BinaryOp, counters: &[u64], keys: &[u64], out: &mut [u64]) {
    let key = match keys.first() {
        // A fold without an early exit: it vectorises (its u64 comparisons
        // need SSE4.1 at least: the callers enable AVX2 or AVX-512).
        Some(&key) if keys.iter().fold(true, |same, &k| same & (k == key)) => Arg::Scalar(key),
        _ => Arg::Slice(keys),
    };
    generator(op, Arg::Slice(counters), key, out)
}

/// One of the generator's forms that share a block between consecutive
/// counters: `PER_BLOCK` of them from a multiple of it.
trait SharedBlock {
    const PER_BLOCK: usize;
    /// The form's value of one counter (a whole block computed for it).
    fn one(counter: u64, key: u64) -> u64;
    /// The values of the `PER_BLOCK * L` counters from `first` into `out`.
    fn lanes<const L: usize>(first: u64, key: u64, out: &mut [u64]);
}

/// `philox_word`: four counters to a block.
struct Words;

impl SharedBlock for Words {
    const PER_BLOCK: usize = 4;
    fn one(counter: u64, key: u64) -> u64 {
        philox::word(counter, key)
    }
    #[inline(always)]
    fn lanes<const L: usize>(first: u64, key: u64, out: &mut [u64]) {
        philox::words_lanes::<L>(first, key, out)
    }
}

/// `philox_pair`: two counters to a block.
struct Pairs;

impl SharedBlock for Pairs {
    const PER_BLOCK: usize = 2;
    fn one(counter: u64, key: u64) -> u64 {
        philox::pair(counter, key)
    }
    #[inline(always)]
    fn lanes<const L: usize>(first: u64, key: u64, out: &mut [u64]) {
        philox::pairs_lanes::<L>(first, key, out)
    }
}

/// `out = philox_word(counter, key)` (see `shared_blocks`).
#[inline(always)]
pub fn philox_word(counter: Arg<'_, u64>, key: Arg<'_, u64>, out: &mut [u64]) {
    shared_blocks::<Words>(counter, key, out)
}

/// `out = philox_pair(counter, key)` (see `shared_blocks`).
#[inline(always)]
pub fn philox_pair(counter: Arg<'_, u64>, key: Arg<'_, u64>, out: &mut [u64]) {
    shared_blocks::<Pairs>(counter, key, out)
}

/// `out` of form `F` of the counters under one key: where they run on from
/// a multiple of `F::PER_BLOCK` (a random array's do, but where a slice of
/// it starts or a tail ends), 32 blocks at a time (a wide call of compiled
/// code's: 128 words or 64 pairs) or 4 (its vector loop's), so that each
/// block is computed once and the rounds vectorise; each other counter on
/// its own. (32 blocks at once take 0.75x the time of 16 and 0.6x that of
/// 8 on AVX-512: Monte Carlo π over 10^5 points.)
#[inline(always)]
fn shared_blocks<F: SharedBlock>(counter: Arg<'_, u64>, key: Arg<'_, u64>, out: &mut [u64]) {
    let (Arg::Slice(counters), Arg::Scalar(key)) = (counter, key) else {
        return map2(counter, key, out, F::one);
    };
    let len = out.len().min(counters.len());
    let mut at = 0;
    while at < len {
        let first = counters[at];
        let run = |blocks: usize| {
            let end = at + F::PER_BLOCK * blocks;
            first % F::PER_BLOCK as u64 == 0 && end <= len && runs_on(&counters[at..end], first)
        };
        if run(32) {
            let end = at + 32 * F::PER_BLOCK;
            F::lanes::<32>(first, key, &mut out[at..end]);
            at = end;
        } else if run(4) {
            let end = at + 4 * F::PER_BLOCK;
            F::lanes::<4>(first, key, &mut out[at..end]);
            at = end;
        } else {
            out[at] = F::one(first, key);
            at += 1;
        }
    }
}

/// Whether `counters` are `first, first + 1, ...` (a fold without an early
/// exit: it vectorises).
#[inline(always)]
fn runs_on(counters: &[u64], first: u64) -> bool {
    (counters.iter().zip(0u64..)).fold(true, |all, (&c, j)| all & (c == first.wrapping_add(j)))
}

/// `out = philox(counter, key)`, sixteen counters at a time when the key is
/// one value (as every random array's is), so that the rounds vectorise.
#[inline(always)]
pub fn philox(counter: Arg<'_, u64>, key: Arg<'_, u64>, out: &mut [u64]) {
    const LANES: usize = 16;
    let (Arg::Slice(counters), Arg::Scalar(key)) = (counter, key) else {
        return map2(counter, key, out, philox::bits);
    };
    let mut outs = out.chunks_exact_mut(LANES);
    let mut ins = counters.chunks_exact(LANES);
    for (o, c) in (&mut outs).zip(&mut ins) {
        let lanes: [u64; LANES] = std::array::from_fn(|i| c[i]);
        o.copy_from_slice(&philox::bits_lanes(&lanes, key));
    }
    for (o, &c) in outs.into_remainder().iter_mut().zip(ins.remainder()) {
        *o = philox::bits(c, key);
    }
}

/// `out = a op b` for comparisons.
#[inline(always)]
pub fn comparison<T: Copy + PartialOrd>(
    op: BinaryOp,
    a: Arg<'_, T>,
    b: Arg<'_, T>,
    out: &mut [bool],
) {
    macro_rules! arms {
        ($($name:ident),*) => {
            match op {
                $(BinaryOp::$name => map2(a, b, out, |x, y| compare(BinaryOp::$name, x, y)),)*
                _ => map2(a, b, out, |x, y| compare(op, x, y)),
            }
        };
    }
    arms!(Eq, Ne, Lt, Le, Gt, Ge)
}

/// `out = a op b` on bool (logical operations, and min/max/add/mul of bools).
#[inline(always)]
pub fn boolean(op: BinaryOp, a: Arg<'_, bool>, b: Arg<'_, bool>, out: &mut [bool]) {
    macro_rules! arms {
        ($($name:ident),*) => {
            match op {
                $(BinaryOp::$name => map2(a, b, out, |x, y| logical(BinaryOp::$name, x, y)),)*
                _ => map2(a, b, out, |x, y| logical(op, x, y)),
            }
        };
    }
    arms!(LogicalAnd, LogicalOr, LogicalXor, Minimum, Maximum)
}

/// `out = cond ? a : b`, without a branch per element: a condition of
/// data (Black–Scholes' `where(d < 0, 1 - w, w)`) is as often true as
/// false, and a branch on it was mispredicted half the time (the select
/// steps took 13 % of Black–Scholes' time). Indexing a pair by the
/// condition compiles to a blend.
#[inline(always)]
pub fn select<T: Copy>(cond: Arg<'_, bool>, a: Arg<'_, T>, b: Arg<'_, T>, out: &mut [T]) {
    let c = match cond {
        Arg::Scalar(c) => return map1(if c { a } else { b }, out, |x| x),
        Arg::Slice(c) => c,
    };
    match (a, b) {
        (Arg::Slice(x), Arg::Slice(y)) => {
            for (((o, &c), &x), &y) in out.iter_mut().zip(c).zip(x).zip(y) {
                *o = [y, x][usize::from(c)];
            }
        }
        (Arg::Slice(x), Arg::Scalar(y)) => {
            for ((o, &c), &x) in out.iter_mut().zip(c).zip(x) {
                *o = [y, x][usize::from(c)];
            }
        }
        (Arg::Scalar(x), Arg::Slice(y)) => {
            for ((o, &c), &y) in out.iter_mut().zip(c).zip(y) {
                *o = [y, x][usize::from(c)];
            }
        }
        (Arg::Scalar(x), Arg::Scalar(y)) => {
            for (o, &c) in out.iter_mut().zip(c) {
                *o = [y, x][usize::from(c)];
            }
        }
    }
}

/// `out = a as D` by the casting rules of `core::element`.
#[inline(always)]
pub fn cast<S: Element, D: Element>(a: Arg<'_, S>, out: &mut [D]) {
    map1(a, out, |x| D::from_wide(x.to_wide()));
}

/// `out = a as D` for primitive types, where `as` is the casting rule
/// (`crate::primitive`) and vectorises.
#[inline(always)]
pub fn primitive_cast<S: Primitive, D: Primitive>(a: Arg<'_, S>, out: &mut [D]) {
    map1(a, out, D::from_primitive);
}

/// `out` = the bits of `a` read as `D` (of the same size as `S`).
#[inline(always)]
pub fn bitcast<S: Bits, D: Bits>(a: Arg<'_, S>, out: &mut [D]) {
    map1(a, out, |x| D::from_bits64(x.to_bits64()));
}

/// `out = a`.
#[inline(always)]
pub fn copy<T: Copy>(a: Arg<'_, T>, out: &mut [T]) {
    map1(a, out, |x| x);
}
