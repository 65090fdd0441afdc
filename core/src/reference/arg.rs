//! `argmax`/`argmin` along one axis (`Op::ArgReduce`): the index of the
//! first extreme element of each line, a NaN counting as the extreme (the
//! first NaN wins), as NumPy defines them.

use crate::element::{Element, HostBuffer, Wide};
use crate::error::{Error, Result};
use crate::ops::ArgExtreme;
use crate::reference::Lines;

/// The running best of one line: the extreme so far and its index. The
/// same rule serves every executor, so ties and NaNs resolve alike.
#[derive(Clone, Copy, Debug)]
pub struct ArgBest<T> {
    /// The extreme value so far.
    pub value: T,
    /// Its index along the line.
    pub index: i64,
}

impl<T: PartialOrd + Copy> ArgBest<T> {
    /// True when `candidate` (later in the line than `self`) replaces the
    /// best: it is strictly better, or a NaN after a number. (`x != x` is
    /// a NaN test that also serves integers, which have none.)
    #[inline(always)]
    #[allow(clippy::eq_op)]
    pub fn is_beaten_by(&self, extreme: ArgExtreme, candidate: T) -> bool {
        let best = self.value;
        if best != best {
            return false;
        }
        candidate != candidate || extreme.beats(candidate, best)
    }

    /// The best of `self` and `later` (the best of a later part of the line).
    #[inline(always)]
    pub fn merge(self, extreme: ArgExtreme, later: ArgBest<T>) -> ArgBest<T> {
        if self.is_beaten_by(extreme, later.value) {
            later
        } else {
            self
        }
    }
}

/// The best of `values` (a line's elements, the first at index `start`).
#[inline(always)]
pub fn best_of<T: PartialOrd + Copy>(
    extreme: ArgExtreme,
    values: impl IntoIterator<Item = T>,
    start: i64,
) -> Option<ArgBest<T>> {
    let mut values = values.into_iter();
    let mut best = ArgBest {
        value: values.next()?,
        index: start,
    };
    for (i, v) in values.enumerate() {
        if best.is_beaten_by(extreme, v) {
            best = ArgBest {
                value: v,
                index: start + 1 + i as i64,
            };
        }
    }
    Some(best)
}

/// The index of the extreme of every line of `input` (of `shape`) along
/// `axis`, as i64, in row-major order of the remaining axes.
pub fn arg_reduce(
    extreme: ArgExtreme,
    input: &HostBuffer,
    shape: &[usize],
    axis: usize,
) -> Result<HostBuffer> {
    let lines = Lines::of(shape, axis);
    if lines.n == 0 {
        return Err(Error::invalid(
            format!("arg{}", extreme.name()),
            "an empty axis (expected at least one element)",
        ));
    }
    crate::with_buffer!(input, values => {
        Ok(HostBuffer::I64(lines_of(extreme, values, lines)))
    })
}

fn lines_of<T: Element>(extreme: ArgExtreme, values: &[T], lines: Lines) -> Vec<i64> {
    let mut out = Vec::with_capacity(lines.outer * lines.inner);
    for o in 0..lines.outer {
        for i in 0..lines.inner {
            let line =
                (0..lines.n).map(|j| comparable(values[(o * lines.n + j) * lines.inner + i]));
            out.push(best_of(extreme, line, 0).map_or(0, |b| b.index));
        }
    }
    out
}

/// A value as something ordered like it: floats as f64 (exact for every
/// float dtype, NaN kept), integers and bool as i128.
fn comparable<T: Element>(v: T) -> Comparable {
    match v.to_wide() {
        Wide::Int(i) => Comparable::Int(i),
        Wide::Float(f) => Comparable::Float(f),
    }
}

/// An integer or a float, compared within their kind (a line has one).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Comparable {
    Int(i128),
    Float(f64),
}

impl PartialOrd for Comparable {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Comparable::Int(a), Comparable::Int(b)) => a.partial_cmp(b),
            (Comparable::Float(a), Comparable::Float(b)) => a.partial_cmp(b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_extreme_wins_and_a_nan_beats_everything() {
        let nan = f32::NAN;
        let cases: [(&[f32], i64, i64); 5] = [
            (&[1.0, 3.0, 3.0, -2.0], 1, 3),
            (&[1.0, nan, 5.0, nan], 1, 1),
            (&[-0.0, 0.0], 0, 0),
            (&[f32::NEG_INFINITY], 0, 0),
            (&[2.0, 1.0, nan], 2, 2),
        ];
        for (values, argmax, argmin) in cases {
            let input = HostBuffer::F32(values.to_vec());
            let shape = [values.len()];
            let max = arg_reduce(ArgExtreme::Max, &input, &shape, 0).unwrap();
            let min = arg_reduce(ArgExtreme::Min, &input, &shape, 0).unwrap();
            assert_eq!(max, HostBuffer::I64(vec![argmax]), "{values:?}");
            assert_eq!(min, HostBuffer::I64(vec![argmin]), "{values:?}");
        }
    }

    #[test]
    fn lines_along_a_middle_axis() {
        // shape [2, 3, 2]: argmax along axis 1.
        let input = HostBuffer::I32(vec![0, 9, 5, 1, 5, 9, 7, 7, 7, 8, 6, 8]);
        let got = arg_reduce(ArgExtreme::Max, &input, &[2, 3, 2], 1).unwrap();
        assert_eq!(got, HostBuffer::I64(vec![1, 0, 0, 1]));
        assert!(arg_reduce(ArgExtreme::Max, &input, &[0, 2], 0).is_err());
    }
}
