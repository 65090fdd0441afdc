//! Printing expression graphs: a text listing (for `explain`) and Graphviz dot.

use std::fmt::Write;

use crate::graph::{ExprGraph, GraphNode};
use crate::node::Op;
use crate::shape::format_shape;

/// `%i = op(%a, %b) : dtype(shape)`, one line per node, inputs first.
pub fn graph_listing(graph: &ExprGraph) -> String {
    let mut text = format!(
        "graph: {} nodes, outputs {}\n",
        graph.node_count(),
        graph
            .outputs()
            .iter()
            .map(|o| format!("%{}", o.index()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for index in graph.topological_order() {
        let node = graph.node(index);
        let _ = writeln!(text, "  %{} = {}", index.index(), describe_node(node));
    }
    text
}

/// One node as `op(%a, %b) : dtype(shape)` plus its materialisation.
pub fn describe_node(node: &GraphNode) -> String {
    let operands: Vec<String> = node
        .inputs
        .iter()
        .map(|i| format!("%{}", i.index()))
        .collect();
    let call = if operands.is_empty() {
        node.op.name()
    } else {
        format!("{}({})", node.op.name(), operands.join(", "))
    };
    let mut line = format!("{call} : {}{}", node.dtype, format_shape(&node.shape));
    if let Some(data) = &node.data {
        let place = match (data.host.is_some(), data.device.is_some()) {
            (true, true) => "host+device",
            (false, true) => "device",
            _ => "host",
        };
        let what = if matches!(node.op, Op::Source) {
            "data"
        } else {
            "memoised"
        };
        let _ = write!(line, "  [{what} on {place}]");
    }
    line
}

/// The graph in Graphviz dot syntax; outputs are drawn with a double border.
pub fn graph_dot(graph: &ExprGraph) -> String {
    let mut dot = String::from(
        "digraph lazyfuse {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    for index in graph.topological_order() {
        let node = graph.node(index);
        let label = describe_node(node)
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        let peripheries = if graph.outputs().contains(&index) {
            2
        } else {
            1
        };
        let _ = writeln!(
            dot,
            "  n{} [label=\"%{} = {}\", peripheries={}];",
            index.index(),
            index.index(),
            label,
            peripheries
        );
        for input in &node.inputs {
            let _ = writeln!(dot, "  n{} -> n{};", input.index(), index.index());
        }
    }
    dot.push_str("}\n");
    dot
}
