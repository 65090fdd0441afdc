//! The expression suite: what each case computes with lazyfuse and with the
//! hand loop, its inputs, and the bytes it must move.

use lazyfuse::{Array, Context};
use rayon::ThreadPool;

use crate::reference::{axis0, e3_vectorised, elementwise3, reduce2};
use crate::types::{uniform, BenchElem, Float};
use crate::Result;

/// One case of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseId {
    /// `a*b + c`.
    E1,
    /// `sqrt(b*b - 4*a*c)`.
    E2,
    /// A long element-wise expression with transcendental functions.
    E3,
    /// `sum((a - b)**2)`.
    E4,
    /// `max(abs(a - b))`.
    E5,
    /// `(X + r*k).sum_axis(0)`.
    E6,
    /// E1 on 100 and 1000 elements: time per evaluation, demand included.
    Lat,
}

/// The sizes of the latency case.
pub const LATENCY_SIZES: [usize; 2] = [100, 1000];

/// How a case produces its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One output element per input element (`read_into`).
    Elementwise,
    /// A 0-d result (`item`).
    Full,
    /// One output per column of the matrix (`read_into`).
    Axis,
}

impl CaseId {
    /// The whole suite, in order.
    pub const ALL: [CaseId; 7] = [
        CaseId::E1,
        CaseId::E2,
        CaseId::E3,
        CaseId::E4,
        CaseId::E5,
        CaseId::E6,
        CaseId::Lat,
    ];

    /// Parses `e1` … `e6`, `lat`.
    pub fn parse(text: &str) -> Result<CaseId> {
        CaseId::ALL
            .into_iter()
            .find(|c| c.label().eq_ignore_ascii_case(text))
            .ok_or_else(|| format!("unknown case '{text}' (expected e1 … e6 or lat)").into())
    }

    /// `E1` … `E6`, `LAT`.
    pub fn label(self) -> &'static str {
        match self {
            CaseId::E1 => "E1",
            CaseId::E2 => "E2",
            CaseId::E3 => "E3",
            CaseId::E4 => "E4",
            CaseId::E5 => "E5",
            CaseId::E6 => "E6",
            CaseId::Lat => "LAT",
        }
    }

    /// The expression, as NumPy would write it.
    pub fn formula(self) -> &'static str {
        match self {
            CaseId::E1 | CaseId::Lat => "a*b + c",
            CaseId::E2 => "sqrt(b*b - 4*a*c)",
            CaseId::E3 => "((a + 1.5)*b - c)/(a + 2.0)*0.5 + sin(a)*cos(b) - exp(-c) + tanh(a*b)",
            CaseId::E4 => "sum((a - b)**2)",
            CaseId::E5 => "max(abs(a - b))",
            CaseId::E6 => "(X + r*k).sum_axis(0)",
        }
    }

    /// How the result is produced and read.
    pub fn shape(self) -> Shape {
        match self {
            CaseId::E1 | CaseId::E2 | CaseId::E3 | CaseId::Lat => Shape::Elementwise,
            CaseId::E4 | CaseId::E5 => Shape::Full,
            CaseId::E6 => Shape::Axis,
        }
    }

    /// A remark recorded with the case's results.
    pub fn note(self) -> Option<&'static str> {
        match self {
            CaseId::E2 => Some("with inputs in [1, 2) b*b < 4ac: most results are NaN (same work)"),
            CaseId::E3 => Some(match crate::mvec::get().map(|m| m.instruction_set()) {
                Some("AVX-512") => {
                    "the hand loop calls glibc's vectorised math (libmvec, AVX-512 variants)"
                }
                Some(_) => "the hand loop calls glibc's vectorised math (libmvec, AVX2 variants)",
                None => "the hand loop uses std's scalar math (libmvec is not available here)",
            }),
            _ => None,
        }
    }
}

/// The host data of one size: `a`, `b`, `c` of `n` elements and the E6
/// matrix `x` of `m * m` elements with `r` (m,) and `k` (m, 1).
pub struct HostInputs<T> {
    /// Elements of `a`, `b`, `c`.
    pub n: usize,
    /// The element-wise inputs.
    pub abc: [Vec<T>; 3],
    /// The side of the E6 matrix (`m * m` close to `n`).
    pub m: usize,
    /// The E6 matrix, row-major (empty when E6 is not run).
    pub x: Vec<T>,
    /// The E6 row vector.
    pub r: Vec<T>,
    /// The E6 column vector.
    pub k: Vec<T>,
}

impl<T: BenchElem> HostInputs<T> {
    /// Inputs for size `n`; the E6 matrix only when `matrix` is set.
    pub fn new(n: usize, matrix: bool) -> HostInputs<T> {
        let m = if matrix {
            ((n as f64).sqrt().round() as usize).max(1)
        } else {
            0
        };
        HostInputs {
            n,
            abc: [uniform(n, 1), uniform(n, 2), uniform(n, 3)],
            m,
            x: uniform(m * m, 4),
            r: uniform(m, 5),
            k: uniform(m, 6),
        }
    }

    /// Elements a case reads from its main input (E6: `m * m`).
    pub fn elements(&self, case: CaseId) -> usize {
        match case.shape() {
            Shape::Axis => self.m * self.m,
            _ => self.n,
        }
    }

    /// Elements of a case's result.
    pub fn output_len(&self, case: CaseId) -> usize {
        match case.shape() {
            Shape::Elementwise => self.n,
            Shape::Full => 1,
            Shape::Axis => self.m,
        }
    }

    /// Bytes a case must read and write once.
    pub fn bytes(&self, case: CaseId) -> u64 {
        let elems = match case {
            CaseId::E1 | CaseId::E2 | CaseId::E3 | CaseId::Lat => 4 * self.n,
            CaseId::E4 | CaseId::E5 => 2 * self.n + 1,
            CaseId::E6 => self.m * self.m + 3 * self.m,
        };
        (elems * std::mem::size_of::<T>()) as u64
    }

    /// The case by hand, into `out` (of [`HostInputs::output_len`] elements).
    pub fn hand(&self, case: CaseId, pool: &ThreadPool, out: &mut [T]) {
        let [a, b, c] = &self.abc;
        let abc = [a.as_slice(), b, c];
        let lit = <T::Acc as Float>::lit;
        match case {
            CaseId::E1 | CaseId::Lat => elementwise3(pool, abc, out, |a, b, c| a * b + c),
            CaseId::E2 => elementwise3(pool, abc, out, |a, b, c| (b * b - lit(4.0) * a * c).sqrt()),
            CaseId::E3 => {
                let e3 = |a: T::Acc, b: T::Acc, c: T::Acc| {
                    ((a + lit(1.5)) * b - c) / (a + lit(2.0)) * lit(0.5) + a.sin() * b.cos()
                        - (-c).exp()
                        + (a * b).tanh()
                };
                if !e3_vectorised(pool, abc, out, e3) {
                    elementwise3(pool, abc, out, e3)
                }
            }
            CaseId::E4 => {
                out[0] = reduce2(
                    pool,
                    [a, b],
                    T::Acc::ZERO,
                    |x, y| (x - y) * (x - y),
                    |p, q| p + q,
                )
            }
            CaseId::E5 => {
                let max = |p: T::Acc, q: T::Acc| if q > p { q } else { p };
                out[0] = reduce2(
                    pool,
                    [a, b],
                    T::Acc::NEG_INFINITY,
                    |x, y| (x - y).abs(),
                    max,
                )
            }
            CaseId::E6 => axis0(pool, &self.x, self.m, &self.r, &self.k, out),
        }
    }
}

/// The inputs of one size as arrays of one context (created once, reused
/// by every repeat).
pub struct LazyInputs {
    abc: [Array; 3],
    x: Array,
    r: Array,
    k: Array,
}

impl LazyInputs {
    /// Copies the host inputs into arrays of `cx`.
    pub fn new<T: BenchElem>(cx: &Context, host: &HostInputs<T>) -> Result<LazyInputs> {
        let [a, b, c] = &host.abc;
        Ok(LazyInputs {
            abc: [cx.from_slice(a), cx.from_slice(b), cx.from_slice(c)],
            x: cx.from_slice(&host.x).reshape(&[host.m, host.m]),
            r: cx.from_slice(&host.r),
            k: cx.from_vec(host.k.clone(), &[host.m, 1])?,
        })
    }

    /// A new expression node for the case (arrays memoise their results, so
    /// every repeat builds its own).
    pub fn build(&self, case: CaseId) -> Array {
        let [a, b, c] = &self.abc;
        match case {
            CaseId::E1 | CaseId::Lat => a * b + c,
            CaseId::E2 => (b * b - 4.0 * a * c).sqrt(),
            CaseId::E3 => {
                ((a + 1.5) * b - c) / (a + 2.0) * 0.5 + a.sin() * b.cos() - (-c).exp()
                    + (a * b).tanh()
            }
            CaseId::E4 => (a - b).pow(2.0).sum(),
            CaseId::E5 => (a - b).abs().max(),
            CaseId::E6 => (&self.x + &self.r * &self.k).sum_axis(0),
        }
    }

    /// Builds the case and demands it into `out`: `read_into` for arrays,
    /// `item` for the 0-d reductions.
    pub fn run<T: BenchElem>(&self, case: CaseId, out: &mut [T]) -> Result<()> {
        let result = self.build(case);
        match case.shape() {
            Shape::Full => {
                let value = result.item::<T>()?;
                match out.first_mut() {
                    Some(slot) => *slot = value,
                    None => return Err("empty output buffer for a full reduction".into()),
                }
            }
            Shape::Elementwise | Shape::Axis => result.read_into(out)?,
        }
        Ok(())
    }
}
