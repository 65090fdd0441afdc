//! Constants bound per demand: the `Fill`s whose values no pass reads, so
//! that one cached program serves every demand differing only in them — a
//! random array's generator key (every draw brings a new one), the Python
//! float of `x * t` in a time loop.
//!
//! A constant is bound when nothing demands it and every operation reading
//! it uses its value only when the kernel runs: the key operand of the
//! Philox generator, and a float operand of an element-wise operation other
//! than a power (whose exponent the simplifier reads: `x ** 2` is
//! `square(x)`). Integer constants stay in the program: the simplifier
//! reads them (`x + 0` is `x`), and they are mostly shapes and indices
//! that do not vary.
//!
//! The program cache keys a bound constant by which other constants it
//! equals, not by its value (equal constants are one value after the
//! simplifier); the simplifier folds no operation of one (its node's
//! `bound`); the emitter gives each its own kernel argument
//! ([`crate::Launch::bound`]), and a cache hit reads the demand's values
//! into those arguments ([`crate::Program::rebind`]).

use lazyfuse_core::{BinaryOp, ExprGraph, Op};
use petgraph::visit::NodeIndexable;

/// Per node index of `graph` (up to its largest), whether the node is a
/// bound constant (see the module documentation).
pub(crate) fn bound_constants(graph: &ExprGraph) -> Vec<bool> {
    let pg = graph.petgraph();
    // First whether a pass reads each node's value, then (in place)
    // whether it is a bound constant.
    let mut flags = vec![false; pg.node_bound()];
    for node in pg.node_weights() {
        for (position, input) in node.inputs.iter().enumerate() {
            if !reads_at_run_time(&node.op, position, pg[*input].dtype) {
                flags[input.index()] = true;
            }
        }
    }
    for output in graph.outputs() {
        flags[output.index()] = true;
    }
    for index in pg.node_indices() {
        let node = &pg[index];
        let constant = node.data.is_none() && matches!(node.op, Op::Fill(_));
        flags[index.index()] = constant && !flags[index.index()];
    }
    flags
}

/// True when operand `position` (of `dtype`) of `op` is used only when the
/// kernel runs: no pass reads a constant there.
fn reads_at_run_time(op: &Op, position: usize, dtype: lazyfuse_core::DType) -> bool {
    match op {
        Op::Binary(BinaryOp::Philox | BinaryOp::PhiloxWord | BinaryOp::PhiloxPair) => position == 1,
        Op::Binary(BinaryOp::Pow) => false,
        Op::Unary(_) | Op::Binary(_) | Op::Select | Op::Cast => dtype.is_float(),
        _ => false,
    }
}
