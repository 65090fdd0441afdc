//! Warp operations on the simulator ([`Stmt::Warp`](crate::ir::Stmt)):
//! the lanes of a warp run in lockstep here, so a shuffle reads the other
//! lanes' values as they are at the statement, and a vote reads every
//! running lane of the mask.

use lazyfuse_core::{with_buffer, DType, Element, HostBuffer, Result};

use super::{as_indices, at, BlockState};
use crate::ir::{Expr, Var, WarpOp, WARP};

impl BlockState<'_, '_, '_> {
    /// `dst = op(members, value, lane)` for every running lane.
    pub(super) fn warp(
        &mut self,
        dst: Var,
        op: WarpOp,
        members: &Expr,
        value: &Expr,
        lane: &Expr,
        mask: &[bool],
    ) -> Result<()> {
        let warp = WARP as usize;
        let members = as_indices(&self.eval(members, mask)?.cast(DType::I64));
        let lanes = as_indices(&self.eval(lane, mask)?.cast(DType::I64));
        let value = self.eval(value, mask)?;
        let n = self.lanes;
        let result = if op.is_shuffle() {
            let source = |t: usize| {
                let (first, l) = (t - t % warp, (t % warp) as i64);
                let d = at(&lanes, t);
                let from = match op {
                    WarpOp::ShuffleIndex => d.rem_euclid(warp as i64),
                    WarpOp::ShuffleUp => {
                        if l - d >= 0 {
                            l - d
                        } else {
                            l
                        }
                    }
                    WarpOp::ShuffleDown => {
                        if l + d < warp as i64 {
                            l + d
                        } else {
                            l
                        }
                    }
                    _ => l ^ d.rem_euclid(warp as i64),
                };
                let from = first + from as usize;
                if from < n {
                    from
                } else {
                    t
                }
            };
            with_buffer!(&value, values => {
                let out: Vec<_> = (0..n).map(|t| at(values, source(t))).collect();
                Element::into_buffer(out)
            })
        } else {
            let truth = as_indices(&value.cast(DType::I64));
            let votes: Vec<u32> = (0..n)
                .map(|t| {
                    let first = t - t % warp;
                    let member = at(&members, t) as u32;
                    (first..(first + warp).min(n))
                        .filter(|&u| mask[u])
                        .filter(|&u| op == WarpOp::ActiveMask || member >> (u - first) & 1 == 1)
                        .filter(|&u| op == WarpOp::ActiveMask || at(&truth, u) != 0)
                        .fold(0u32, |bits, u| bits | 1 << (u - first))
                })
                .collect();
            match op {
                WarpOp::Ballot | WarpOp::ActiveMask => HostBuffer::U32(votes),
                _ => {
                    let all = (0..n)
                        .map(|t| {
                            let first = t - t % warp;
                            let member = at(&members, t) as u32;
                            let asked = (first..(first + warp).min(n))
                                .filter(|&u| mask[u] && member >> (u - first) & 1 == 1)
                                .fold(0u32, |bits, u| bits | 1 << (u - first));
                            let held = votes[t];
                            i32::from(if op == WarpOp::All {
                                held == asked
                            } else {
                                held != 0
                            })
                        })
                        .collect();
                    HostBuffer::I32(all)
                }
            }
        };
        self.write(dst, result, mask)
    }
}
