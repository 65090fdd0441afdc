//! The SIMT interpreter: runs a [`DeviceKernel`] on the CPU with the
//! semantics of a GPU launch.
//!
//! Blocks run one after another; the threads of a block run in lockstep, one
//! statement at a time for all of them, each register a column with one
//! value per thread. Divergence is a mask of active threads: both sides of
//! an `if` run under complementary masks and a loop runs until no active
//! thread continues. The simulator is strict where hardware is silent:
//! a barrier reached by part of a block, a shuffle with part of a warp, a
//! read or write outside a buffer or shared array, each stop the launch with
//! an [`Error::Device`] naming the kernel, the thread and the index.

use lazyfuse_core::reference::kernels;
use lazyfuse_core::{with_buffer, with_dtype, DType, Element, Error, HostBuffer, Literal, Result};

use super::ir::{DeviceKernel, Expr, IndexOp, Special, Stmt, Var, WARP};

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

/// Runs `kernel` over `blocks` blocks with `bindings` (one per parameter).
pub fn run(kernel: &DeviceKernel, blocks: usize, bindings: &mut [Binding<'_>]) -> Result<()> {
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
    let lanes = kernel.block as usize;
    for block in 0..blocks {
        let mut state = BlockState {
            kernel,
            bindings: &mut *bindings,
            regs: vec![None; kernel.vars.len()],
            shared: kernel
                .shared
                .iter()
                .map(|s| zeros(s.dtype, s.len as usize))
                .collect(),
            block: block as u32,
            grid: blocks as u32,
            lanes,
        };
        state.exec(&kernel.body, &vec![true; lanes])?;
    }
    Ok(())
}

fn zeros(dtype: DType, len: usize) -> HostBuffer {
    with_dtype!(dtype, T => T::into_buffer(vec![T::default(); len]))
}

struct BlockState<'k, 'b, 'a> {
    kernel: &'k DeviceKernel,
    bindings: &'b mut [Binding<'a>],
    regs: Vec<Option<HostBuffer>>,
    shared: Vec<HostBuffer>,
    block: u32,
    grid: u32,
    lanes: usize,
}

/// `column[i]`, where a one-element column stands for all threads.
fn at<T: Copy>(column: &[T], i: usize) -> T {
    column[if column.len() == 1 { 0 } else { i }]
}

fn as_indices(column: &HostBuffer) -> Vec<i64> {
    match column.cast(DType::I64) {
        HostBuffer::I64(v) => v,
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
        Error::Device {
            op: format!("sim kernel {}", self.kernel.name),
            message: format!("thread {thread} of block {}: {message}", self.block),
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
            Expr::Special(s) => HostBuffer::U32(match s {
                Special::ThreadIdx => (0..self.lanes as u32).collect(),
                Special::BlockIdx => vec![self.block],
                Special::BlockDim => vec![self.lanes as u32],
                Special::GridDim => vec![self.grid],
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
                let source = self
                    .shared
                    .get(*array as usize)
                    .ok_or_else(|| Error::internal("sim launch", "no such shared array"))?;
                let name = &self.kernel.shared[*array as usize].name;
                self.gather(source, &index, mask, name)?
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
            Expr::Select(c, a, b) => {
                let (c, a, b) = (
                    self.eval(c, mask)?,
                    self.eval(a, mask)?,
                    self.eval(b, mask)?,
                );
                let n = c.len().max(a.len()).max(b.len());
                kernels::select(&c, &a, &b, n)?
            }
            Expr::Cast(dtype, a) => self.eval(a, mask)?.cast(*dtype),
        })
    }

    fn reg(&self, v: Var) -> Result<&HostBuffer> {
        self.regs
            .get(v.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::internal("sim launch", format!("{v} is read before it is set")))
    }

    /// Reads `source[index[t]]` for every active thread `t`.
    fn gather(
        &self,
        source: &HostBuffer,
        index: &[i64],
        mask: &[bool],
        name: &str,
    ) -> Result<HostBuffer> {
        with_buffer!(source, values => {
            let mut out = vec![Default::default(); self.lanes];
            for (t, slot) in out.iter_mut().enumerate() {
                if !mask[t] {
                    continue;
                }
                let i = at(index, t);
                *slot = *usize::try_from(i).ok().and_then(|i| values.get(i)).ok_or_else(|| {
                    self.fault(t, format!("reads {name}[{i}] outside its {} elements", values.len()))
                })?;
            }
            Ok(Element::into_buffer(out))
        })
    }

    /// Writes `value[t]` to `target[index[t]]` for every active thread `t`.
    fn scatter(
        &self,
        target: &mut HostBuffer,
        index: &[i64],
        value: &HostBuffer,
        mask: &[bool],
        name: &str,
    ) -> Result<()> {
        let len = target.len();
        with_buffer!(value, source => {
            let dest = Element::slice_of_mut(target).ok_or_else(|| {
                Error::internal("sim launch", format!("a {} store to {name}", value.dtype()))
            })?;
            for t in (0..self.lanes).filter(|&t| mask[t]) {
                let i = at(index, t);
                let slot = usize::try_from(i).ok().and_then(|i| dest.get_mut(i)).ok_or_else(|| {
                    self.fault(t, format!("writes {name}[{i}] outside its {len} elements"))
                })?;
                *slot = at(source, t);
            }
            Ok(())
        })
    }

    /// `param[index[t]] = value[t]` for every active thread `t`.
    fn store(
        &mut self,
        param: u32,
        index: &[i64],
        value: &HostBuffer,
        mask: &[bool],
    ) -> Result<()> {
        let name = self.param_name(param).to_string();
        let mut target = match self.bindings.get_mut(param as usize) {
            Some(Binding::Write(b)) => std::mem::replace(*b, HostBuffer::Bool(Vec::new())),
            _ => {
                return Err(Error::internal(
                    "sim launch",
                    format!("a store to {name}, which is not an output"),
                ))
            }
        };
        let stored = self.scatter(&mut target, index, value, mask, &name);
        if let Some(Binding::Write(b)) = self.bindings.get_mut(param as usize) {
            **b = target;
        }
        stored
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
                    let name = self.kernel.shared[*array as usize].name.clone();
                    let mut target = std::mem::replace(
                        &mut self.shared[*array as usize],
                        HostBuffer::Bool(Vec::new()),
                    );
                    let stored = self.scatter(&mut target, &index, &value, mask, &name);
                    self.shared[*array as usize] = target;
                    stored?;
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
                Stmt::Barrier => {
                    if let Some(t) = mask.iter().position(|&m| !m) {
                        return Err(self.fault(
                            t,
                            "does not reach a __syncthreads() the rest of its block waits at"
                                .to_string(),
                        ));
                    }
                }
                Stmt::ShuffleDown { dst, src, delta } => self.shuffle(*dst, *src, *delta, mask)?,
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
mod tests {
    use super::*;
    use crate::device::ir::{ArgSource, GridRule, Param, ParamKind};

    fn kernel(
        params: Vec<(ParamKind, ArgSource)>,
        vars: Vec<DType>,
        body: Vec<Stmt>,
    ) -> DeviceKernel {
        DeviceKernel {
            name: "test_kernel".to_string(),
            params: params
                .into_iter()
                .enumerate()
                .map(|(i, (kind, source))| Param {
                    name: format!("p{i}"),
                    kind,
                    source,
                })
                .collect(),
            shared: Vec::new(),
            vars,
            body,
            block: 64,
            grid: GridRule::Single,
        }
    }

    fn tid() -> Expr {
        Expr::cast(DType::I32, Expr::Special(Special::ThreadIdx))
    }

    fn int(v: i32) -> Expr {
        Expr::Const(Literal::of(v))
    }

    #[test]
    fn an_out_of_bounds_read_names_the_kernel_thread_and_index() {
        let k = kernel(
            vec![(ParamKind::Input(DType::F32), ArgSource::InputBuffer(0))],
            vec![DType::F32],
            vec![Stmt::Let(
                Var(0),
                Expr::Load {
                    param: 0,
                    index: Box::new(tid()),
                },
            )],
        );
        let data = HostBuffer::F32(vec![1.0; 4]);
        let err = run(&k, 1, &mut [Binding::Read(&data)]).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Device { .. }), "{err:?}");
        assert!(
            text.contains("test_kernel") && text.contains("thread 4 of block 0"),
            "{text}"
        );
        assert!(text.contains("p0[4] outside its 4 elements"), "{text}");
    }

    #[test]
    fn a_guarded_read_is_fine_and_stores_land() {
        let k = kernel(
            vec![
                (ParamKind::Input(DType::F32), ArgSource::InputBuffer(0)),
                (ParamKind::Output(DType::F32), ArgSource::OutputBuffer(0)),
            ],
            vec![DType::F32],
            vec![Stmt::If {
                cond: Expr::index(IndexOp::Lt, tid(), int(4)),
                then: vec![
                    Stmt::Let(
                        Var(0),
                        Expr::Load {
                            param: 0,
                            index: Box::new(tid()),
                        },
                    ),
                    Stmt::Store {
                        param: 1,
                        index: tid(),
                        value: Expr::Unary(
                            lazyfuse_core::UnaryOp::Neg,
                            Box::new(Expr::Var(Var(0))),
                        ),
                    },
                ],
                otherwise: Vec::new(),
            }],
        );
        let data = HostBuffer::F32(vec![1.0, 2.0, 3.0, 4.0]);
        let mut out = HostBuffer::F32(vec![0.0; 4]);
        run(&k, 1, &mut [Binding::Read(&data), Binding::Write(&mut out)]).unwrap();
        assert_eq!(out, HostBuffer::F32(vec![-1.0, -2.0, -3.0, -4.0]));
    }

    #[test]
    fn a_barrier_in_divergent_code_is_an_error() {
        let k = kernel(
            Vec::new(),
            Vec::new(),
            vec![Stmt::If {
                cond: Expr::index(IndexOp::Lt, tid(), int(5)),
                then: vec![Stmt::Barrier],
                otherwise: Vec::new(),
            }],
        );
        let err = run(&k, 1, &mut []).unwrap_err().to_string();
        assert!(err.contains("__syncthreads"), "{err}");
    }

    #[test]
    fn shuffle_down_reads_the_lane_below_within_its_warp() {
        let k = kernel(
            vec![(ParamKind::Output(DType::I32), ArgSource::OutputBuffer(0))],
            vec![DType::I32, DType::I32],
            vec![
                Stmt::Let(Var(0), tid()),
                Stmt::Let(Var(1), int(0)),
                Stmt::ShuffleDown {
                    dst: Var(1),
                    src: Var(0),
                    delta: 1,
                },
                Stmt::Store {
                    param: 0,
                    index: tid(),
                    value: Expr::Var(Var(1)),
                },
            ],
        );
        let mut out = HostBuffer::I32(vec![0; 64]);
        run(&k, 1, &mut [Binding::Write(&mut out)]).unwrap();
        let want: Vec<i32> = (0..64)
            .map(|t| if t % 32 == 31 { t } else { t + 1 })
            .collect();
        assert_eq!(out, HostBuffer::I32(want));
    }

    #[test]
    fn a_shuffle_by_part_of_a_warp_is_an_error() {
        let k = kernel(
            Vec::new(),
            vec![DType::I32, DType::I32],
            vec![
                Stmt::Let(Var(0), tid()),
                Stmt::Let(Var(1), int(0)),
                Stmt::If {
                    cond: Expr::index(IndexOp::Lt, tid(), int(16)),
                    then: vec![Stmt::ShuffleDown {
                        dst: Var(1),
                        src: Var(0),
                        delta: 8,
                    }],
                    otherwise: Vec::new(),
                },
            ],
        );
        let err = run(&k, 1, &mut []).unwrap_err().to_string();
        assert!(
            err.contains("__shfl_down_sync") && err.contains("thread 16"),
            "{err}"
        );
    }
}
