//! What an index kernel does and how its threads cover the indexed shape:
//! the variants the kernel module builds and the host module runs on the
//! CPU.

/// Which way an index kernel copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Direction {
    /// `out[t] = values[at(t)]`.
    Gather,
    /// `target[at(t)] = value[t]`.
    Scatter,
    /// `target[at(t)] = value[0]`: one value everywhere.
    ScatterOne,
    /// `target[at(t)] = value[t]` where the index is not negative: the
    /// indices come resolved into `[0, n)`, with -1 where a later index
    /// names the same element (so that the last one lands, as in NumPy).
    ScatterLast,
}

/// How an index kernel's threads cover the indexed shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Layout {
    /// One thread per element, the indexed shape being the indices' (one
    /// axis indexed along its only axis, or its first with nothing after):
    /// thread `t` uses index `t`.
    Flat,
    /// One thread per element: thread `t` splits into `(a, k, b)`.
    Elements,
    /// Each row of `inner` elements (one `(a, k)`) in blocks of its own,
    /// thread `x` of a row's block `c` at `b = c * blockDim.x + x`: the
    /// row's index is the same for the whole block, so its accesses are
    /// consecutive (the CPU runs them on vectors) and nothing divides per
    /// element.
    Rows,
    /// With `inner` 1, each row of `count` elements (one `a`) in blocks of
    /// its own, thread `x` of block `c` at `k = c * blockDim.x + x`:
    /// nothing divides per element.
    IndexRows,
}

/// What an index kernel copies and may assume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Variant {
    pub(super) direction: Direction,
    /// Every index is in `[-n, n)`: a negative one needs `n` added, no
    /// division.
    pub(super) in_range: bool,
    pub(super) layout: Layout,
}

impl Variant {
    /// Every variant of `direction` (for a [`Direction::ScatterLast`], whose
    /// indices come resolved, only those in range).
    pub(super) fn all(direction: Direction) -> impl Iterator<Item = Variant> {
        let layouts = [
            Layout::Flat,
            Layout::Elements,
            Layout::Rows,
            Layout::IndexRows,
        ];
        [false, true]
            .into_iter()
            .filter(move |&in_range| in_range || direction != Direction::ScatterLast)
            .flat_map(move |in_range| {
                layouts.map(|layout| Variant {
                    direction,
                    in_range,
                    layout,
                })
            })
    }
}
