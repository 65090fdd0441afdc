//! Index maps: how a value inside a kernel is indexed from the kernel's
//! domain, and the maps its operands are read through.
//!
//! A value is reached through an *index map*: for each of its axes, an
//! affine term of one domain axis (or none: a fixed index, a broadcast).
//! Transposes permute the map, broadcasts drop axes from it, slices scale
//! and offset it; an unrolled reduction reads its input once per reduced
//! element, each at a fixed index along the reduced axes. A buffer read
//! through a map gets an offset and strides over the domain.

use lazyfuse_core::{Error, Op, Result};
use smallvec::SmallVec;

use crate::simplify::Graph;

/// How one axis of a value is indexed from the domain: `offset + scale *
/// index[axis]` (`axis` `None`: always `offset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Term {
    pub(crate) axis: Option<u8>,
    pub(crate) scale: isize,
    pub(crate) offset: isize,
}

/// One term per axis of a value: an affine map from the domain index.
pub(crate) type IndexMap = SmallVec<[Term; 4]>;

/// Index 0 whatever the domain index: a broadcast axis.
pub(crate) const BROADCAST: Term = Term {
    axis: None,
    scale: 0,
    offset: 0,
};

/// The map of a value indexed by the domain itself (of `rank` axes).
pub(crate) fn identity(rank: usize) -> IndexMap {
    (0..rank)
        .map(|d| Term {
            axis: Some(d as u8),
            scale: 1,
            offset: 0,
        })
        .collect()
}

/// True when the map reads one element wherever the domain index is.
pub(crate) fn is_fixed(map: &IndexMap) -> bool {
    map.iter().all(|t| t.axis.is_none())
}

/// True for a reshape that only inserts or removes axes of one element
/// (its other axes in order): a view whose map is its operand's.
pub(crate) fn is_unit_reshape(graph: &Graph, node: &crate::simplify::SNode) -> bool {
    let input = &graph.nodes[node.inputs[0]];
    let long = |shape: &[usize]| {
        shape
            .iter()
            .copied()
            .filter(|&e| e != 1)
            .collect::<Vec<_>>()
    };
    matches!(node.op, Op::Reshape) && long(&node.shape) == long(&input.shape)
}

/// The map of a unit reshape's operand (of `shape`), given the reshape's
/// own map over `outer`: axes longer than one in order, the rest index 0.
fn unit_reshape_map(shape: &[usize], outer: &[usize], map: &IndexMap) -> IndexMap {
    let mut long = outer
        .iter()
        .zip(map)
        .filter(|(&e, _)| e != 1)
        .map(|(_, t)| *t);
    shape
        .iter()
        .map(|&e| match e {
            1 => BROADCAST,
            _ => long.next().unwrap_or(BROADCAST),
        })
        .collect()
}

/// The reduced axes of an unrolled reduction or arg-reduction.
fn reduced_axes(op: &Op) -> Option<SmallVec<[usize; 4]>> {
    match op {
        Op::Reduce { axes, .. } => Some(axes.iter().copied().collect()),
        Op::ArgReduce { axis, .. } => Some(SmallVec::from_elem(*axis, 1)),
        _ => None,
    }
}

/// The operands node `node_id`'s value at `map` reads: each operand node
/// with the map it is read through. `unrolled[i]` says which reductions
/// are unrolled (any other reduction inside a kernel is an error).
pub(crate) fn operands(
    graph: &Graph,
    unrolled: &[bool],
    node_id: usize,
    map: &IndexMap,
) -> Result<Vec<(usize, IndexMap)>> {
    let node = &graph.nodes[node_id];
    if let Some(axes) = reduced_axes(&node.op) {
        if !unrolled[node_id] {
            return Err(Error::internal(
                "fusion",
                format!("the reduction %{node_id} reached inside a kernel"),
            ));
        }
        let input = node.inputs[0];
        return Ok(lanes(&graph.nodes[input].shape, &axes, map)
            .into_iter()
            .map(|lane| (input, lane))
            .collect());
    }
    let broadcast_map = |input: usize| -> IndexMap {
        let shape = &graph.nodes[input].shape;
        let offset = node.shape.len() - shape.len();
        shape
            .iter()
            .enumerate()
            .map(|(j, &extent)| {
                if extent == 1 && node.shape[j + offset] != 1 {
                    BROADCAST
                } else {
                    map[j + offset]
                }
            })
            .collect()
    };
    Ok(match &node.op {
        Op::Permute(perm) => {
            let mut child: IndexMap = SmallVec::from_elem(BROADCAST, perm.len());
            for (i, &p) in perm.iter().enumerate() {
                child[p] = map[i];
            }
            vec![(node.inputs[0], child)]
        }
        Op::Reshape if is_unit_reshape(graph, node) => {
            let input = node.inputs[0];
            let child = unit_reshape_map(&graph.nodes[input].shape, &node.shape, map);
            vec![(input, child)]
        }
        Op::Slice { axis, start, step } => {
            let mut child = map.clone();
            let outer = map[*axis];
            child[*axis] = Term {
                axis: outer.axis,
                scale: step * outer.scale,
                offset: *start as isize + step * outer.offset,
            };
            vec![(node.inputs[0], child)]
        }
        op if op.is_elementwise() || matches!(op, Op::BroadcastTo) => {
            node.inputs.iter().map(|&i| (i, broadcast_map(i))).collect()
        }
        op => {
            return Err(Error::internal(
                "fusion",
                format!("'{}' (%{node_id}) reached inside a kernel", op.name()),
            ))
        }
    })
}

/// The maps of an unrolled reduction's input (of `shape`), one per
/// reduced element in row-major order: the reduced `axes` at that
/// element's fixed index, the kept axes through the reduction's own `map`.
fn lanes(shape: &[usize], axes: &[usize], map: &IndexMap) -> Vec<IndexMap> {
    let count: usize = axes.iter().map(|&a| shape[a]).product();
    (0..count)
        .map(|lane| {
            let mut rest = lane;
            let mut fixed: SmallVec<[isize; 4]> = SmallVec::from_elem(0, axes.len());
            for (k, &a) in axes.iter().enumerate().rev() {
                fixed[k] = (rest % shape[a]) as isize;
                rest /= shape[a];
            }
            let mut kept = map.iter();
            (0..shape.len())
                .map(|a| match axes.iter().position(|&r| r == a) {
                    Some(k) => Term {
                        axis: None,
                        scale: 0,
                        offset: fixed[k],
                    },
                    None => *kept.next().unwrap_or(&BROADCAST),
                })
                .collect()
        })
        .collect()
}
