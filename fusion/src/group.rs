//! Kernel roots → launches: buffers, multi-output grouping, emission, user
//! kernel launches, and the execution order of both.

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use lazyfuse_core::{Error, Op, Result};

use crate::emit::{Buffers, Emitter};
use crate::partition::{FusionOptions, Partition, Placement};
use crate::program::{
    BufferDesc, BufferId, BufferKind, Launch, OutputBinding, Program, ScanKind, ScanLaunch,
    UserLaunch, Work,
};
use crate::simplify::Graph;

/// Builds the program: one buffer per materialised node, one launch per
/// group of roots and per user kernel launch, all in dependency order.
///
/// Merging roots into multi-output kernels can make two kernels read each
/// other's results (a cycle). Then, where the partition fused values
/// shared within a domain (which relies on that merge), the graph is
/// partitioned again without doing so; failing that, every root is a
/// kernel of its own.
pub(crate) fn build_program(
    graph: Graph,
    partition: Partition,
    options: &FusionOptions,
) -> Result<Program> {
    let mut partition = partition;
    if options.enabled {
        if let Some(work) = lay_out(&graph, &partition, true)? {
            return finish(graph, partition, work, options);
        }
        if partition.shares_within_domains {
            let unshared = FusionOptions {
                share_within_domains: false,
                ..options.clone()
            };
            partition = crate::partition::partition(&graph, &unshared)?;
            if let Some(work) = lay_out(&graph, &partition, true)? {
                return finish(graph, partition, work, options);
            }
        }
    }
    let work = lay_out(&graph, &partition, false)?
        .ok_or_else(|| Error::internal("fusion", "kernel dependencies form a cycle"))?;
    finish(graph, partition, work, options)
}

/// A program's work before it is put in order.
struct LaidOut {
    buffers: Vec<BufferDesc>,
    of_node: Vec<Option<BufferId>>,
    launches: Vec<Launch>,
    users: Vec<UserLaunch>,
    scans: Vec<ScanLaunch>,
    order: Vec<usize>,
}

/// The buffers and the work of `partition`, its element-wise roots
/// merged into multi-output kernels when `grouped`; `None` when the work
/// so made depends on itself in a cycle.
fn lay_out(graph: &Graph, partition: &Partition, grouped: bool) -> Result<Option<LaidOut>> {
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
    let roots: Vec<usize> = (0..n).filter(|&i| partition.is_root(graph, i)).collect();
    let groups = if grouped {
        multi_output_groups(graph, partition, &roots, &reduce_of_tail)
    } else {
        roots.iter().map(|&r| vec![r]).collect()
    };
    let users = user_launches(graph, partition, &of_node)?;
    let scans = scan_launches(graph, partition, &of_node)?;
    let launches = emit_all(graph, partition, &of_node, &groups, &reduce_of_tail)?;
    Ok(
        execution_order(&launches, &users, &scans, buffers.len()).map(|order| LaidOut {
            buffers,
            of_node,
            launches,
            users,
            scans,
            order,
        }),
    )
}

/// The program of laid-out work: in order, with its outputs, scan
/// producers and the last reader of each buffer.
fn finish(
    graph: Graph,
    partition: Partition,
    work: LaidOut,
    options: &FusionOptions,
) -> Result<Program> {
    let LaidOut {
        buffers,
        of_node,
        launches,
        users,
        scans,
        order,
    } = work;
    let (launches, user_launches, scans, schedule) = in_order(launches, users, scans, &order);
    let outputs = graph
        .outputs
        .iter()
        .map(|&o| {
            Ok(OutputBinding {
                buffer: buffer_of(&partition, &of_node, o)?,
                shape: graph.nodes[o].shape.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut program = Program {
        notes: partition.notes.clone(),
        graph,
        buffers,
        launches,
        user_launches,
        scans,
        schedule,
        outputs,
        dies_after: Vec::new(),
    };
    if options.enabled && options.row_programs {
        crate::rows::merge_rows(&mut program);
    }
    for s in 0..program.scans.len() {
        program.scans[s].producer = sole_producer(&program, &program.scans[s]);
    }
    // After the producers: a scan computing its producer reads its inputs.
    program.dies_after = program.deaths();
    Ok(program)
}

/// The element-wise launch whose only output is `scan`'s input, over as
/// many elements, when nothing else reads that buffer (no other work, no
/// demanded output): the scan may compute it itself.
fn sole_producer(program: &Program, scan: &ScanLaunch) -> Option<usize> {
    let input = scan.input;
    let len: usize = scan.shape.iter().product();
    let producer = program.launches.iter().position(|l| l.outputs == [input])?;
    let launch = &program.launches[producer];
    let readers = program
        .schedule
        .iter()
        .filter(|&&work| program.reads(work).any(|b| b == input))
        .count();
    let demanded = program.outputs.iter().any(|o| o.buffer == input);
    // A row program computes whole rows: not a chunk at a time.
    let fusable = launch.kernel.reduction.is_none()
        && !launch.kernel.is_row_program()
        && launch.domain_len() == len
        && program.buffers[input.index()].kind == BufferKind::Temp;
    (fusable && readers == 1 && !demanded).then_some(producer)
}

/// The buffer holding a materialised node's value (its own, or the one it
/// is an alias of).
fn buffer_of(partition: &Partition, of_node: &[Option<BufferId>], node: usize) -> Result<BufferId> {
    let target = match partition.placement[node] {
        Placement::Alias(t) => t,
        _ => node,
    };
    of_node[target].ok_or_else(|| Error::internal("fusion", format!("%{node} has no buffer")))
}

/// One [`UserLaunch`] per user kernel launch among the graph's nodes, in
/// graph order.
fn user_launches(
    graph: &Graph,
    partition: &Partition,
    of_node: &[Option<BufferId>],
) -> Result<Vec<UserLaunch>> {
    let mut found: Vec<(usize, UserLaunch)> = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let Op::Kernel { launch, output } = &node.op else {
            continue;
        };
        let id = Arc::as_ptr(launch) as usize;
        let position = match found.iter().position(|(l, _)| *l == id) {
            Some(position) => position,
            None => {
                let args = node
                    .inputs
                    .iter()
                    .map(|&input| buffer_of(partition, of_node, input))
                    .collect::<Result<Vec<_>>>()?;
                let outputs = vec![None; launch.written.len()];
                found.push((
                    id,
                    UserLaunch {
                        node: i,
                        args,
                        outputs,
                    },
                ));
                found.len() - 1
            }
        };
        let slot = found[position].1.outputs.get_mut(*output).ok_or_else(|| {
            Error::internal(
                "fusion",
                format!("%{i} is output {output} of a launch with fewer"),
            )
        })?;
        *slot = Some(buffer_of(partition, of_node, i)?);
    }
    Ok(found.into_iter().map(|(_, user)| user).collect())
}

/// One [`ScanLaunch`] per scan and arg-reduction node, in graph order.
fn scan_launches(
    graph: &Graph,
    partition: &Partition,
    of_node: &[Option<BufferId>],
) -> Result<Vec<ScanLaunch>> {
    let mut scans = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let (kind, op, axis) = match node.op {
            Op::Scan { combine, axis } => (ScanKind::Running, combine, axis),
            Op::ArgReduce { .. } if partition.unrolled[i] => continue,
            Op::ArgReduce { extreme, axis } => (ScanKind::Arg, extreme.reduce_op(), axis),
            _ => continue,
        };
        let input = &graph.nodes[node.inputs[0]];
        scans.push(ScanLaunch {
            kind,
            op,
            axis,
            shape: input.shape.clone(),
            dtype: input.dtype,
            input: buffer_of(partition, of_node, node.inputs[0])?,
            output: buffer_of(partition, of_node, i)?,
            node: i,
            producer: None,
        });
    }
    Ok(scans)
}

/// The work of every kind sorted by `order` (indices into fused launches,
/// then user launches, then scans), and the schedule that interleaves them.
fn in_order(
    launches: Vec<Launch>,
    users: Vec<UserLaunch>,
    scans: Vec<ScanLaunch>,
    order: &[usize],
) -> (Vec<Launch>, Vec<UserLaunch>, Vec<ScanLaunch>, Vec<Work>) {
    let (fused_count, user_count) = (launches.len(), users.len());
    let mut fused: Vec<Option<Launch>> = launches.into_iter().map(Some).collect();
    let mut user: Vec<Option<UserLaunch>> = users.into_iter().map(Some).collect();
    let mut scan: Vec<Option<ScanLaunch>> = scans.into_iter().map(Some).collect();
    let (mut launches, mut users, mut scans, mut schedule) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &w in order {
        if w < fused_count {
            schedule.push(Work::Fused(launches.len()));
            launches.extend(fused[w].take());
        } else if w < fused_count + user_count {
            schedule.push(Work::User(users.len()));
            users.extend(user[w - fused_count].take());
        } else {
            schedule.push(Work::Scan(scans.len()));
            scans.extend(scan[w - fused_count - user_count].take());
        }
    }
    (launches, users, scans, schedule)
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
            if node != root && (graph.nodes[node].op.is_elementwise() || partition.unrolled[node]) {
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

/// A topological order of the work (fused launches numbered first, then
/// user launches, then scans), each after the producers of its inputs, or
/// `None` if they depend on each other in a cycle.
fn execution_order(
    launches: &[Launch],
    users: &[UserLaunch],
    scans: &[ScanLaunch],
    buffers: usize,
) -> Option<Vec<usize>> {
    let reads: Vec<Vec<BufferId>> = launches
        .iter()
        .map(|l| l.inputs.iter().filter_map(|i| i.buffer).collect())
        .chain(users.iter().map(|u| u.args.clone()))
        .chain(scans.iter().map(|s| vec![s.input]))
        .collect();
    let writes: Vec<Vec<BufferId>> = launches
        .iter()
        .map(|l| l.outputs.clone())
        .chain(
            users
                .iter()
                .map(|u| u.outputs.iter().flatten().copied().collect()),
        )
        .chain(scans.iter().map(|s| vec![s.output]))
        .collect();
    let works = reads.len();
    let mut producer: Vec<Option<usize>> = vec![None; buffers];
    for (w, outputs) in writes.iter().enumerate() {
        for out in outputs {
            producer[out.index()] = Some(w);
        }
    }
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); works];
    let mut pending = vec![0usize; works];
    for (w, inputs) in reads.iter().enumerate() {
        for input in inputs {
            if let Some(p) = producer[input.index()] {
                if p == w {
                    return None;
                }
                deps[p].push(w);
                pending[w] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..works).filter(|&w| pending[w] == 0).rev().collect();
    let mut order = Vec::with_capacity(works);
    while let Some(w) = ready.pop() {
        order.push(w);
        for &d in deps[w].iter().rev() {
            pending[d] -= 1;
            if pending[d] == 0 {
                ready.push(d);
            }
        }
    }
    (order.len() == works).then_some(order)
}
