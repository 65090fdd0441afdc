//! Printing programs for `explain()` and `to_dot()`.

use std::fmt::Write;
use std::sync::Arc;

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{KernelCall, Op};

use crate::plan::{Plan, Step};
use crate::program::{
    BufferId, BufferKind, InputBinding, Launch, Program, ScanKind, ScanLaunch, UserLaunch,
};

/// Kernels with the nodes they compute, their inputs, outputs and the plan.
pub fn program_listing(program: &Program, plan: &Plan) -> String {
    let mut text = format!(
        "fusion: {} graph nodes after simplification ({} removed), {} kernels{}\n",
        program.graph.nodes.len(),
        program.graph.removed,
        program.launches.len(),
        match program.user_launches.len() {
            0 => String::new(),
            n => format!(", {n} user kernel launches"),
        }
    );
    list_buffers(&mut text, program);
    for (k, launch) in program.launches.iter().enumerate() {
        list_launch(&mut text, k, launch);
    }
    for (u, user) in program.user_launches.iter().enumerate() {
        list_user_launch(&mut text, program, u, user);
    }
    for (i, scan) in program.scans.iter().enumerate() {
        list_scan(&mut text, i, scan);
    }
    for note in &program.notes {
        let _ = writeln!(text, "note: {note}");
    }
    let bytes: usize = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Upload(b) => {
                Some(program.buffers[b.index()].len * program.buffers[b.index()].dtype.size())
            }
            _ => None,
        })
        .sum();
    let _ = writeln!(text, "plan ({} uploads, {bytes} bytes):", plan.uploads());
    text.push_str(&plan.to_string());
    text
}

/// One line per buffer: its elements, bytes and where its value comes from.
fn list_buffers(text: &mut String, program: &Program) {
    for (i, b) in program.buffers.iter().enumerate() {
        let what = match b.kind {
            BufferKind::Leaf { node } => format!("input %{node}"),
            BufferKind::Temp => "written by a kernel".to_string(),
        };
        let _ = writeln!(
            text,
            "  b{i}: {} × {} ({} bytes), {what}",
            b.dtype,
            b.len,
            b.len * b.dtype.size()
        );
    }
}

/// Fused launch `k`: its domain, nodes, inputs and outputs, then its kernel.
fn list_launch(text: &mut String, k: usize, launch: &Launch) {
    let nodes: Vec<String> = launch.nodes.iter().map(|n| format!("%{n}")).collect();
    let inputs = grouped_reads(launch);
    let outputs: Vec<String> = launch.outputs.iter().map(|b| b.to_string()).collect();
    let _ = writeln!(
        text,
        "k{k}: domain {} computes [{}] reads [{}] writes [{}]",
        format_shape(&launch.domain),
        nodes.join(" "),
        inputs.join(", "),
        outputs.join(", ")
    );
    for line in launch.kernel.to_string().lines() {
        let _ = writeln!(text, "    {line}");
    }
}

/// A launch's inputs in parameter order (`b0 strides [8]`), except that
/// three or more of one buffer and strides at offsets in a progression (an
/// unrolled reduction's lanes) are one entry where the first stands:
/// `b1+0..=127 step 1 strides [0]`.
fn grouped_reads(launch: &Launch) -> Vec<String> {
    type Key<'a> = (Option<BufferId>, &'a [isize]);
    fn key(input: &InputBinding) -> Key<'_> {
        (input.buffer, input.strides.as_slice())
    }
    let mut offsets: Vec<(Key<'_>, Vec<usize>)> = Vec::new();
    for input in &launch.inputs {
        match offsets.iter_mut().find(|(k, _)| *k == key(input)) {
            Some((_, o)) => o.push(input.offset),
            None => offsets.push((key(input), vec![input.offset])),
        }
    }
    let progression = |o: &[usize]| {
        let step = |w: &[usize]| w[1] as isize - w[0] as isize;
        o.len() > 2 && o.windows(2).all(|w| step(w) == step(&o[..2]))
    };
    let name = |b: Option<BufferId>| b.map_or("iota".to_string(), |b| b.to_string());
    let mut listed: Vec<Key<'_>> = Vec::new();
    let mut reads = Vec::new();
    for input in &launch.inputs {
        let k = key(input);
        let group = offsets
            .iter()
            .find(|(g, _)| *g == k)
            .map(|(_, o)| o.as_slice());
        match group {
            Some(o) if progression(o) => {
                if !listed.contains(&k) {
                    listed.push(k);
                    reads.push(format!(
                        "{}+{}..={} step {} strides {:?}",
                        name(k.0),
                        o[0],
                        o[o.len() - 1],
                        o[1] as isize - o[0] as isize,
                        k.1
                    ));
                }
            }
            _ if input.offset > 0 => {
                reads.push(format!("{}+{} strides {:?}", name(k.0), input.offset, k.1))
            }
            _ => reads.push(format!("{} strides {:?}", name(k.0), k.1)),
        }
    }
    reads
}

/// User kernel launch `u`: the graph nodes it computes, its arguments and
/// the buffers it writes.
fn list_user_launch(text: &mut String, program: &Program, u: usize, user: &UserLaunch) {
    let nodes: Vec<String> = program
        .graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| match (&n.op, user_call(program, user)) {
            (Op::Kernel { launch, .. }, Some(call)) => Arc::ptr_eq(launch, call),
            _ => false,
        })
        .map(|(i, _)| format!("%{i}"))
        .collect();
    let args: Vec<String> = user.args.iter().map(|b| b.to_string()).collect();
    let outputs: Vec<String> = user
        .outputs
        .iter()
        .map(|b| b.map_or("(dropped)".to_string(), |b| b.to_string()))
        .collect();
    let _ = writeln!(
        text,
        "u{u}: user kernel computes [{}] reads [{}] writes [{}]",
        nodes.join(" "),
        args.join(", "),
        outputs.join(", ")
    );
}

/// Scan `i`: what it runs along which axis, and whether its producer is
/// fused into it.
fn list_scan(text: &mut String, i: usize, scan: &ScanLaunch) {
    let producer = match scan.producer {
        Some(k) => format!(
            " (a runtime that fuses scan producers computes k{k} inside it, \
             never writing {})",
            scan.input
        ),
        None => String::new(),
    };
    let what = match scan.kind {
        ScanKind::Running => "cum",
        ScanKind::Arg => "arg",
    };
    let _ = writeln!(
        text,
        "s{i}: {what}{} of {} along axis {} (%{}) reads [{}] writes [{}]{producer}",
        scan.op.name(),
        format_shape(&scan.shape),
        scan.axis,
        scan.node,
        scan.input,
        scan.output
    );
}

/// The launch of `user` as the program's graph holds it.
fn user_call<'p>(program: &'p Program, user: &UserLaunch) -> Option<&'p Arc<KernelCall>> {
    match &program.graph.nodes.get(user.node)?.op {
        Op::Kernel { launch, .. } => Some(launch),
        _ => None,
    }
}

/// Graphviz: one cluster per kernel around the graph nodes it computes.
pub fn program_dot(program: &Program) -> String {
    let mut dot = String::from(
        "digraph lazyfuse {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    let mut placed = vec![false; program.graph.nodes.len()];
    for (k, launch) in program.launches.iter().enumerate() {
        let _ = writeln!(dot, "  subgraph cluster_k{k} {{\n    label=\"k{k}\";");
        for &n in &launch.nodes {
            if !placed[n] {
                placed[n] = true;
                let node = &program.graph.nodes[n];
                let _ = writeln!(
                    dot,
                    "    n{n} [label=\"%{n} {} {}{}\"];",
                    node.op.name().replace('"', "'"),
                    node.dtype,
                    format_shape(&node.shape)
                );
            }
        }
        dot.push_str("  }\n");
    }
    for (n, node) in program.graph.nodes.iter().enumerate() {
        if !placed[n] {
            let _ = writeln!(
                dot,
                "  n{n} [label=\"%{n} {} {}{}\", style=dashed];",
                node.op.name().replace('"', "'"),
                node.dtype,
                format_shape(&node.shape)
            );
        }
        for input in &node.inputs {
            let _ = writeln!(dot, "  n{input} -> n{n};");
        }
    }
    dot.push_str("}\n");
    dot
}
