//! The SIMT interpreter: runs a [`DeviceKernel`] on the CPU with the
//! semantics of a GPU launch.
//!
//! Blocks run one after another; the threads of a block run in lockstep, one
//! statement at a time for all of them, each register a column with one
//! value per thread. Divergence is a mask of active threads: both sides of
//! an `if` run under complementary masks and a loop runs until no active
//! thread continues; atomics of one step are applied in thread order. The
//! simulator is strict where hardware is silent: a barrier reached by part
//! of a block, a shuffle with part of a warp, a read or write outside a
//! buffer or shared array, and a race (a thread reading a shared element
//! another thread wrote since the last barrier, or writing a different
//! value over it; writing the same value is benign on hardware) each
//! stop the launch with an [`Error::Device`] naming the kernel, the thread
//! and the index.

mod fma;
mod memory;
mod warp;

use lazyfuse_core::reference::kernels;
use lazyfuse_core::{with_buffer, DType, Element, Error, HostBuffer, Literal, Result};

use super::ir::{DeviceKernel, Expr, IndexOp, PrintPiece, Special, Stmt, Var, WARP};
use super::printf;
use memory::SharedMemory;

/// A kernel argument.
#[derive(Debug)]
pub enum Binding<'a> {
    /// A buffer the kernel reads.
    Read(&'a HostBuffer),
    /// A buffer the kernel writes.
    Write(&'a mut HostBuffer),
    /// A scalar passed by value.
    Value(Literal),
}

/// The shape of a launch: blocks in the grid and threads in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Blocks along x, y, z.
    pub grid: [u32; 3],
    /// Threads per block along x, y, z.
    pub block: [u32; 3],
}

impl Geometry {
    /// A 1-D launch of `blocks` blocks of `threads` threads.
    pub fn linear(blocks: usize, threads: u32) -> Geometry {
        Geometry {
            grid: [blocks as u32, 1, 1],
            block: [threads, 1, 1],
        }
    }

    fn count(dims: [u32; 3]) -> usize {
        dims.iter().map(|&d| d as usize).product()
    }

    /// The x, y, z coordinates of linear position `i` in `dims` (x fastest).
    fn coords(dims: [u32; 3], i: usize) -> [u32; 3] {
        let (x, y) = (dims[0].max(1) as usize, dims[1].max(1) as usize);
        [(i % x) as u32, ((i / x) % y) as u32, (i / (x * y)) as u32]
    }
}

/// Iterations after which a `while` loop is taken for an endless one.
const MAX_WHILE_ITERATIONS: u64 = 100_000_000;

/// Runs `kernel` with `bindings` (one per parameter), block after block.
pub fn run(kernel: &DeviceKernel, geometry: Geometry, bindings: &mut [Binding<'_>]) -> Result<()> {
    if bindings.len() != kernel.params.len() {
        return Err(Error::internal(
            "sim launch",
            format!(
                "{} takes {} parameters, got {}",
                kernel.name,
                kernel.params.len(),
                bindings.len()
            ),
        ));
    }
    let lanes = Geometry::count(geometry.block);
    for block in 0..Geometry::count(geometry.grid) {
        let mut state = BlockState {
            kernel,
            bindings: &mut *bindings,
            regs: vec![None; kernel.vars.len()],
            shared: SharedMemory::new(kernel, lanes),
            block,
            geometry,
            lanes,
        };
        state.exec(&kernel.body, &vec![true; lanes])?;
    }
    Ok(())
}

struct BlockState<'k, 'b, 'a> {
    kernel: &'k DeviceKernel,
    bindings: &'b mut [Binding<'a>],
    regs: Vec<Option<HostBuffer>>,
    shared: SharedMemory,
    /// Linear index of the block in the grid.
    block: usize,
    geometry: Geometry,
    lanes: usize,
}

/// `column[i]`, where a one-element column stands for all threads.
fn at<T: Copy>(column: &[T], i: usize) -> T {
    column[if column.len() == 1 { 0 } else { i }]
}

fn as_indices(column: &HostBuffer) -> Vec<i64> {
    match &mut column.cast(DType::I64) {
        HostBuffer::I64(v) => std::mem::take(v),
        _ => Vec::new(),
    }
}

fn as_bools(column: &HostBuffer) -> Result<Vec<bool>> {
    match column {
        HostBuffer::Bool(v) => Ok(v.clone()),
        other => Err(Error::internal(
            "sim launch",
            format!("a condition of dtype {}", other.dtype()),
        )),
    }
}

impl BlockState<'_, '_, '_> {
    fn fault(&self, thread: usize, message: String) -> Error {
        let mut place = format!("thread {thread} of block {}", self.block);
        if self.geometry.grid[1..] != [1, 1] || self.geometry.block[1..] != [1, 1] {
            let t = Geometry::coords(self.geometry.block, thread);
            let b = Geometry::coords(self.geometry.grid, self.block);
            place += &format!(
                " (threadIdx ({}, {}, {}), blockIdx ({}, {}, {}))",
                t[0], t[1], t[2], b[0], b[1], b[2]
            );
        }
        Error::Device {
            op: format!("sim kernel {}", self.kernel.name),
            message: format!("{place}: {message}"),
        }
    }

    fn param_name(&self, param: u32) -> &str {
        self.kernel
            .params
            .get(param as usize)
            .map_or("?", |p| p.name.as_str())
    }

    fn eval(&self, expr: &Expr, mask: &[bool]) -> Result<HostBuffer> {
        Ok(match expr {
            Expr::Var(v) => self.reg(*v)?.clone(),
            Expr::Param(p) => match self.bindings.get(*p as usize) {
                Some(Binding::Value(literal)) => HostBuffer::filled(*literal, 1),
                _ => {
                    return Err(Error::internal(
                        "sim launch",
                        format!("{} is not a scalar", self.param_name(*p)),
                    ))
                }
            },
            Expr::Special(s) => HostBuffer::U32(match *s {
                Special::ThreadIdx(d) => (0..self.lanes)
                    .map(|t| Geometry::coords(self.geometry.block, t)[d.index()])
                    .collect(),
                Special::BlockIdx(d) => {
                    vec![Geometry::coords(self.geometry.grid, self.block)[d.index()]]
                }
                Special::BlockDim(d) => vec![self.geometry.block[d.index()]],
                Special::GridDim(d) => vec![self.geometry.grid[d.index()]],
            }),
            Expr::Const(literal) => HostBuffer::filled(*literal, 1),
            Expr::Load { param, index } => {
                let index = as_indices(&self.eval(index, mask)?);
                let source = match self.bindings.get(*param as usize) {
                    Some(Binding::Read(b)) => &**b,
                    Some(Binding::Write(b)) => &**b,
                    _ => {
                        return Err(Error::internal(
                            "sim launch",
                            format!("{} is not a buffer", self.param_name(*param)),
                        ))
                    }
                };
                self.gather(source, &index, mask, self.param_name(*param))?
            }
            Expr::LoadShared { array, index } => {
                let index = as_indices(&self.eval(index, mask)?);
                self.load_shared(*array, &index, mask)?
            }
            Expr::Index(op, a, b) => {
                let a = self.eval(a, mask)?;
                let dtype = a.dtype();
                let (a, b) = (as_indices(&a), as_indices(&self.eval(b, mask)?));
                let n = a.len().max(b.len());
                let pairs = (0..n).map(|i| (at(&a, i), at(&b, i)));
                if op.is_comparison() {
                    HostBuffer::Bool(
                        pairs
                            .map(|(x, y)| if *op == IndexOp::Lt { x < y } else { x == y })
                            .collect(),
                    )
                } else {
                    let values: Vec<i64> = pairs
                        .map(|(x, y)| match op {
                            IndexOp::Add => x.wrapping_add(y),
                            IndexOp::Mul => x.wrapping_mul(y),
                            IndexOp::Div => x.checked_div(y).unwrap_or(0),
                            _ => x.checked_rem(y).unwrap_or(0),
                        })
                        .collect();
                    HostBuffer::I64(values).cast(dtype)
                }
            }
            Expr::Unary(op, a) => {
                let a = self.eval(a, mask)?;
                kernels::unary(*op, &a, a.len())?
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.eval(a, mask)?, self.eval(b, mask)?);
                kernels::binary(*op, &a, &b, a.len().max(b.len()))?
            }
            // As C's `?:`, each side is evaluated only by the threads that
            // take it (a guarded load must not fault in the others).
            Expr::Select(c, a, b) => {
                let c = self.eval(c, mask)?;
                let holds = as_bools(&c)?;
                let (yes, no): (Vec<bool>, Vec<bool>) = (0..self.lanes)
                    .map(|t| (mask[t] && at(&holds, t), mask[t] && !at(&holds, t)))
                    .unzip();
                let (a, b) = (self.eval(a, &yes)?, self.eval(b, &no)?);
                let n = c.len().max(a.len()).max(b.len());
                kernels::select(&c, &a, &b, n)?
            }
            Expr::Fma(a, b, c) => {
                let (a, b, c) = (
                    self.eval(a, mask)?,
                    self.eval(b, mask)?,
                    self.eval(c, mask)?,
                );
                fma::fused(&a, &b, &c)?
            }
            Expr::Cast(dtype, a) => self.eval(a, mask)?.cast(*dtype),
            Expr::Bitcast(dtype, a) => self.eval(a, mask)?.bitcast(*dtype)?,
        })
    }

    fn reg(&self, v: Var) -> Result<&HostBuffer> {
        self.regs
            .get(v.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::internal("sim launch", format!("{v} is read before it is set")))
    }

    fn write(&mut self, v: Var, value: HostBuffer, mask: &[bool]) -> Result<()> {
        let expected = self.kernel.vars.get(v.index()).copied();
        if expected != Some(value.dtype()) {
            return Err(Error::internal(
                "sim launch",
                format!("{v} is {expected:?}, assigned a {}", value.dtype()),
            ));
        }
        let lanes = self.lanes;
        let slot = &mut self.regs[v.index()];
        match slot {
            Some(old) if !mask.iter().all(|&m| m) => with_buffer!(&value, new => {
                let dest = Element::slice_of_mut(old)
                    .ok_or_else(|| Error::internal("sim launch", "register dtype changed"))?;
                for t in (0..lanes).filter(|&t| mask[t]) {
                    dest[t] = at(new, t);
                }
            }),
            _ => {
                *slot = Some(if value.len() == lanes {
                    value
                } else {
                    with_buffer!(&value, v => Element::into_buffer(vec![v[0]; lanes]))
                });
            }
        }
        Ok(())
    }

    /// `print`: each active thread, in order, writes its line (formatted
    /// as the CUDA printer's `printf` formats it).
    fn print(&self, pieces: &[PrintPiece], mask: &[bool]) -> Result<()> {
        use std::io::Write;
        let values = pieces
            .iter()
            .map(|piece| match piece {
                PrintPiece::Value(e, _) => self.eval(e, mask).map(Some),
                PrintPiece::Text(_) => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut text = String::new();
        for t in (0..self.lanes).filter(|&t| mask[t]) {
            for (piece, value) in pieces.iter().zip(&values) {
                match (piece, value) {
                    (PrintPiece::Text(s), _) => text.push_str(s),
                    (PrintPiece::Value(..), Some(v)) => text.push_str(&printf::host_value(v, t)),
                    (PrintPiece::Value(..), None) => {}
                }
            }
            text.push('\n');
        }
        // One write of the block's lines: a line is never split by another
        // block's (as CUDA's printf keeps each call's line whole).
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        Ok(())
    }

    fn exec(&mut self, stmts: &[Stmt], mask: &[bool]) -> Result<()> {
        if !mask.iter().any(|&m| m) {
            return Ok(());
        }
        for stmt in stmts {
            match stmt {
                Stmt::Let(v, e) | Stmt::Assign(v, e) => {
                    let value = self.eval(e, mask)?;
                    self.write(*v, value, mask)?;
                }
                Stmt::Store {
                    param,
                    index,
                    value,
                } => {
                    let index = as_indices(&self.eval(index, mask)?);
                    let value = self.eval(value, mask)?;
                    self.store(*param, &index, &value, mask)?;
                }
                Stmt::LoadVector { param, index, dst } => {
                    let groups = as_indices(&self.eval(index, mask)?);
                    let source = match self.bindings.get(*param as usize) {
                        Some(Binding::Read(b)) => &**b,
                        Some(Binding::Write(b)) => &**b,
                        _ => {
                            return Err(Error::internal("sim launch", "a vector load of a scalar"))
                        }
                    };
                    let name = self.param_name(*param);
                    let width = dst.len() as i64;
                    let columns = (0..width)
                        .map(|lane| {
                            let index: Vec<i64> = groups
                                .iter()
                                .map(|g| g.wrapping_mul(width) + lane)
                                .collect();
                            self.gather(source, &index, mask, name)
                        })
                        .collect::<Result<Vec<_>>>()?;
                    for (v, column) in dst.iter().zip(columns) {
                        self.write(*v, column, mask)?;
                    }
                }
                Stmt::StoreVector {
                    param,
                    index,
                    values,
                } => {
                    let groups = as_indices(&self.eval(index, mask)?);
                    let width = values.len() as i64;
                    for (lane, value) in values.iter().enumerate() {
                        let index: Vec<i64> = groups
                            .iter()
                            .map(|g| g.wrapping_mul(width) + lane as i64)
                            .collect();
                        let value = self.eval(value, mask)?;
                        self.store(*param, &index, &value, mask)?;
                    }
                }
                Stmt::StoreShared {
                    array,
                    index,
                    value,
                } => {
                    let index = as_indices(&self.eval(index, mask)?);
                    let value = self.eval(value, mask)?;
                    self.store_shared(*array, &index, &value, mask)?;
                }
                Stmt::While { cond, body } => self.run_while(cond, body, mask)?,
                Stmt::Atomic {
                    op,
                    target,
                    index,
                    value,
                    compare,
                    old,
                } => {
                    let index = as_indices(&self.eval(index, mask)?);
                    let value = self.eval(value, mask)?;
                    let compare = compare.as_ref().map(|c| self.eval(c, mask)).transpose()?;
                    let previous =
                        self.atomic(*op, *target, &index, &value, compare.as_ref(), mask)?;
                    if let Some(old) = old {
                        self.write(*old, previous, mask)?;
                    }
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let cond = as_bools(&self.eval(cond, mask)?)?;
                    let (yes, no): (Vec<bool>, Vec<bool>) = (0..self.lanes)
                        .map(|t| (mask[t] && at(&cond, t), mask[t] && !at(&cond, t)))
                        .unzip();
                    self.exec(then, &yes)?;
                    self.exec(otherwise, &no)?;
                }
                Stmt::For {
                    var,
                    start,
                    end,
                    step,
                    body,
                } => self.run_loop(*var, start, end, step, body, mask)?,
                // The simulator's threads see each write as it happens: a
                // fence orders nothing more.
                Stmt::Print(pieces) => self.print(pieces, mask)?,
                Stmt::Fence(_) => {}
                Stmt::Barrier => {
                    if let Some(t) = mask.iter().position(|&m| !m) {
                        return Err(self.fault(
                            t,
                            "does not reach a __syncthreads() the rest of its block waits at"
                                .to_string(),
                        ));
                    }
                    self.shared.barrier();
                }
                Stmt::ShuffleDown { dst, src, delta } => self.shuffle(*dst, *src, *delta, mask)?,
                Stmt::Warp {
                    dst,
                    op,
                    mask: members,
                    value,
                    lane,
                } => self.warp(*dst, *op, members, value, lane, mask)?,
            }
        }
        Ok(())
    }

    fn run_loop(
        &mut self,
        var: Var,
        start: &Expr,
        end: &Expr,
        step: &Expr,
        body: &[Stmt],
        mask: &[bool],
    ) -> Result<()> {
        let first = self.eval(start, mask)?;
        self.write(var, first, mask)?;
        loop {
            let counter = as_indices(self.reg(var)?);
            let bound = as_indices(&self.eval(end, mask)?);
            let active: Vec<bool> = (0..self.lanes)
                .map(|t| mask[t] && at(&counter, t) < at(&bound, t))
                .collect();
            if !active.iter().any(|&a| a) {
                return Ok(());
            }
            self.exec(body, &active)?;
            let next = Expr::index(IndexOp::Add, Expr::Var(var), step.clone());
            let next = self.eval(&next, &active)?;
            self.write(var, next, &active)?;
        }
    }

    fn run_while(&mut self, cond: &Expr, body: &[Stmt], mask: &[bool]) -> Result<()> {
        let mut active = mask.to_vec();
        for _ in 0..MAX_WHILE_ITERATIONS {
            let holds = as_bools(&self.eval(cond, &active)?)?;
            for (t, a) in active.iter_mut().enumerate() {
                *a = *a && at(&holds, t);
            }
            if !active.iter().any(|&a| a) {
                return Ok(());
            }
            self.exec(body, &active)?;
        }
        let t = active.iter().position(|&a| a).unwrap_or(0);
        Err(self.fault(
            t,
            format!("a while loop ran {MAX_WHILE_ITERATIONS} iterations (an endless loop?)"),
        ))
    }

    fn shuffle(&mut self, dst: Var, src: Var, delta: u32, mask: &[bool]) -> Result<()> {
        let warp = WARP as usize;
        for (w, lanes) in mask.chunks(warp).enumerate() {
            let active = lanes.iter().filter(|&&m| m).count();
            if active != 0 && active != lanes.len() {
                let t = w * warp + lanes.iter().position(|&m| !m).unwrap_or(0);
                return Err(self.fault(
                    t,
                    "misses a __shfl_down_sync the rest of its warp takes part in".to_string(),
                ));
            }
        }
        let source = self.reg(src)?.clone();
        let shifted = with_buffer!(&source, values => {
            let out: Vec<_> = (0..self.lanes)
                .map(|t| {
                    let lane = t % warp;
                    if lane + (delta as usize) < warp && t + (delta as usize) < self.lanes {
                        values[t + delta as usize]
                    } else {
                        values[t]
                    }
                })
                .collect();
            Element::into_buffer(out)
        });
        self.write(dst, shifted, mask)
    }
}

#[cfg(test)]
mod tests;
