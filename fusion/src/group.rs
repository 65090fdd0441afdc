//! Kernel roots → launches: buffers, multi-output grouping, emission and
//! execution order.

use rustc_hash::FxHashMap as HashMap;

use lazyfuse_core::{Error, Op, Result};

use crate::emit::{Buffers, Emitter};
use crate::partition::{FusionOptions, Partition, Placement};
use crate::program::{BufferDesc, BufferId, BufferKind, Launch, OutputBinding, Program};
use crate::simplify::Graph;

/// Builds the program: one buffer per materialised node, one launch per
/// group of roots, launches in dependency order.
pub(crate) fn build_program(
    graph: Graph,
    partition: Partition,
    options: &FusionOptions,
) -> Result<Program> {
    let n = graph.nodes.len();
    let mut buffers = Vec::new();
    let mut of_node: Vec<Option<BufferId>> = vec![None; n];
    for (i, node) in graph.nodes.iter().enumerate() {
        if partition.placement[i] == Placement::Buffer {
            of_node[i] = Some(BufferId(buffers.len() as u32));
            buffers.push(BufferDesc {
                dtype: node.dtype,
                len: node.len(),
                kind: if node.is_leaf() {
                    BufferKind::Leaf { node: i }
                } else {
                    BufferKind::Temp
                },
            });
        }
    }
    // Reduction kernels are keyed by their reduce node, the root by its epilogue tail.
    let mut reduce_of_tail: HashMap<usize, usize> = HashMap::default();
    for (r, tail) in partition.epilogue_tail.iter().enumerate() {
        if let (Some(t), Op::Reduce { .. }) = (tail, &graph.nodes[r].op) {
            reduce_of_tail.insert(*t, r);
        }
    }
    let roots: Vec<usize> = (0..n).filter(|&i| partition.is_root(&graph, i)).collect();
    let mut groups = if options.enabled {
        multi_output_groups(&graph, &partition, &roots, &reduce_of_tail)
    } else {
        roots.iter().map(|&r| vec![r]).collect()
    };
    let mut launches = emit_all(&graph, &partition, &of_node, &groups, &reduce_of_tail)?;
    let order = match execution_order(&launches, &buffers) {
        Some(order) => order,
        None => {
            // Merging created a cycle between groups: fall back to one kernel per root.
            groups = roots.iter().map(|&r| vec![r]).collect();
            launches = emit_all(&graph, &partition, &of_node, &groups, &reduce_of_tail)?;
            execution_order(&launches, &buffers)
                .ok_or_else(|| Error::internal("fusion", "kernel dependencies form a cycle"))?
        }
    };
    let mut slots: Vec<Option<Launch>> = launches.into_iter().map(Some).collect();
    let launches: Vec<Launch> = order.into_iter().filter_map(|i| slots[i].take()).collect();
    let outputs = graph
        .outputs
        .iter()
        .map(|&o| {
            let target = match partition.placement[o] {
                Placement::Alias(t) => t,
                _ => o,
            };
            of_node[target]
                .map(|buffer| OutputBinding {
                    buffer,
                    shape: graph.nodes[o].shape.clone(),
                })
                .ok_or_else(|| Error::internal("fusion", format!("output %{o} has no buffer")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Program {
        notes: partition.notes.clone(),
        graph,
        buffers,
        launches,
        outputs,
    })
}

fn emit_all(
    graph: &Graph,
    partition: &Partition,
    of_node: &[Option<BufferId>],
    groups: &[Vec<usize>],
    reduce_of_tail: &HashMap<usize, usize>,
) -> Result<Vec<Launch>> {
    groups
        .iter()
        .map(|group| {
            let first = group[0];
            let buffer = |i: usize| {
                of_node[i]
                    .ok_or_else(|| Error::internal("fusion", format!("root %{i} has no buffer")))
            };
            if let Some(&reduce) = reduce_of_tail.get(&first) {
                let input = graph.nodes[reduce].inputs[0];
                let emitter = Emitter::new(
                    graph,
                    partition,
                    Buffers { of_node },
                    &graph.nodes[input].shape,
                );
                emitter.reduction(reduce, first, buffer(first)?)
            } else {
                let emitter = Emitter::new(
                    graph,
                    partition,
                    Buffers { of_node },
                    &graph.nodes[first].shape,
                );
                let outputs = group
                    .iter()
                    .map(|&r| buffer(r))
                    .collect::<Result<Vec<_>>>()?;
                emitter.elementwise(group, outputs)
            }
        })
        .collect()
}

/// Groups element-wise roots of the same shape whose fused cones share a
/// computed node, so the shared work runs once in a multi-output kernel.
fn multi_output_groups(
    graph: &Graph,
    partition: &Partition,
    roots: &[usize],
    reduce_of_tail: &HashMap<usize, usize>,
) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..roots.len()).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut owner: HashMap<usize, usize> = HashMap::default();
    for (k, &root) in roots.iter().enumerate() {
        if reduce_of_tail.contains_key(&root) {
            continue;
        }
        let mut stack = vec![root];
        let mut seen = std::collections::HashSet::new();
        while let Some(node) = stack.pop() {
            if !seen.insert(node) {
                continue;
            }
            let fused = node == root || partition.placement[node] == Placement::Fused;
            if !fused {
                continue;
            }
            if node != root && graph.nodes[node].op.is_elementwise() {
                match owner.get(&node) {
                    Some(&other) if graph.nodes[roots[other]].shape == graph.nodes[root].shape => {
                        let (a, b) = (find(&mut parent, other), find(&mut parent, k));
                        parent[a] = b;
                    }
                    Some(_) => {}
                    None => {
                        owner.insert(node, k);
                    }
                }
            }
            stack.extend(graph.nodes[node].inputs.iter().copied());
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::default();
    for (k, &root) in roots.iter().enumerate() {
        let g = find(&mut parent, k);
        groups.entry(g).or_default().push(root);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
    groups.sort_by_key(|g| g[0]);
    groups
}

/// A topological order of launches (each after the producers of its
/// inputs), or `None` if they depend on each other in a cycle.
fn execution_order(launches: &[Launch], buffers: &[BufferDesc]) -> Option<Vec<usize>> {
    let mut producer: Vec<Option<usize>> = vec![None; buffers.len()];
    for (l, launch) in launches.iter().enumerate() {
        for out in &launch.outputs {
            producer[out.index()] = Some(l);
        }
    }
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); launches.len()];
    let mut pending = vec![0usize; launches.len()];
    for (l, launch) in launches.iter().enumerate() {
        for input in launch.inputs.iter().filter_map(|b| b.buffer) {
            if let Some(p) = producer[input.index()] {
                if p == l {
                    return None;
                }
                deps[p].push(l);
                pending[l] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..launches.len())
        .filter(|&l| pending[l] == 0)
        .rev()
        .collect();
    let mut order = Vec::with_capacity(launches.len());
    while let Some(l) = ready.pop() {
        order.push(l);
        for &d in deps[l].iter().rev() {
            pending[d] -= 1;
            if pending[d] == 0 {
                ready.push(d);
            }
        }
    }
    (order.len() == launches.len()).then_some(order)
}
