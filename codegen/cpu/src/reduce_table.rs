//! The CPU's table of built-in reductions: one line per operation of
//! core's `reduce_table!`, saying which of the CPU's specialised loops runs
//! it. Everything op-specific in the CPU's reductions and scans (the
//! blocks of `pairwise`, the rows of `reduce`, the half-precision extremes,
//! the scans, the JIT's NaN masks and `minps`/`maxps`) asks this table,
//! never the operation itself, so a new operation is one line here; the
//! match is exhaustive, so it fails to compile until that line is written.

use lazyfuse_core::{BinaryOp, ReduceOp};

/// The loop that runs a reduction on the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuReduce {
    /// `a + b` as a plain function that vectorises (floats: starting
    /// from -0.0, which keeps a lone -0.0's sign).
    Plus,
    /// `a * b`, as [`CpuReduce::Plus`].
    Times,
    /// A select of the larger (`max`) or the smaller operand, with NaN
    /// tracked apart (a mask in the JIT, a flag in the blocks), rows
    /// combined through a block, f16 and bf16 computed in f32.
    Extreme {
        /// Whether the larger operand is kept.
        max: bool,
    },
}

/// The CPU's loop for `op`: one line per operation.
pub(crate) const fn cpu_reduce(op: ReduceOp) -> CpuReduce {
    match op {
        ReduceOp::Sum => CpuReduce::Plus,
        ReduceOp::Prod => CpuReduce::Times,
        ReduceOp::Min => CpuReduce::Extreme { max: false },
        ReduceOp::Max => CpuReduce::Extreme { max: true },
    }
}

impl CpuReduce {
    /// The element-wise operation the loop computes: the operation's
    /// combiner, which the table's test holds it to.
    pub(crate) const fn combiner(self) -> BinaryOp {
        match self {
            CpuReduce::Plus => BinaryOp::Add,
            CpuReduce::Times => BinaryOp::Mul,
            CpuReduce::Extreme { max: true } => BinaryOp::Maximum,
            CpuReduce::Extreme { max: false } => BinaryOp::Minimum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation of core's table has a line, and the loop it names
    /// computes the operation's combiner (an extreme's loop runs the
    /// extremes only).
    #[test]
    fn the_cpu_table_runs_every_reduction_with_its_combiner() {
        for &op in ReduceOp::ALL {
            let row = cpu_reduce(op);
            assert_eq!(row.combiner(), op.combiner(), "{op}");
            assert_eq!(
                matches!(row, CpuReduce::Extreme { .. }),
                op.is_extreme(),
                "{op}"
            );
        }
    }
}
