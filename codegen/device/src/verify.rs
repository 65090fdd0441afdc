//! The `DeviceProgram` verifier: the rules every program must keep for its
//! CUDA C to compile and mean what the simulator runs. Lowering and the
//! kernel builder produce programs; this checks them independently (in
//! debug builds after every lowering, and in the tests over every kernel).
//!
//! Per kernel: a C identifier for a name, distinct parameter and shared
//! array names; a block size within CUDA's limits (a warp multiple where
//! warps shuffle), shared memory within 48 KiB; every register declared
//! once (by `let`, a `for` or a vector load), declared before use and used
//! only inside the block that declares it (C's scoping); parameters read
//! through loads only if they are buffers, written only if they are
//! outputs; scalars read only if they are scalars; shared arrays in range.
//! Per program: distinct kernel names, and a partials buffer exactly when a
//! kernel takes one.

use lazyfuse_core::{Error, Result};

use super::ir::{
    ArgSource, AtomicTarget, DeviceKernel, DeviceProgram, Expr, GridRule, ParamKind, PrintPiece,
    Stmt, Var, WARP,
};

/// Most threads in a block on every CUDA GPU.
const MAX_BLOCK: u32 = 1024;
/// Static shared memory a kernel may declare.
const MAX_SHARED_BYTES: usize = 48 << 10;

/// Checks every kernel of `program` and how they fit together.
pub fn verify(program: &DeviceProgram) -> Result<()> {
    let mut names = std::collections::HashSet::new();
    for kernel in &program.kernels {
        if !names.insert(kernel.name.as_str()) {
            return Err(fail(&program.name, "two kernels share a name"));
        }
        verify_kernel(kernel)?;
    }
    let takes_partials = program
        .kernels
        .iter()
        .flat_map(|k| &k.params)
        .any(|p| p.source == ArgSource::Partials);
    if takes_partials != program.partials.is_some() {
        return Err(fail(
            &program.name,
            "a partials buffer is declared without a kernel taking it, or taken without one",
        ));
    }
    Ok(())
}

/// Checks one kernel.
pub fn verify_kernel(kernel: &DeviceKernel) -> Result<()> {
    let name = &kernel.name;
    if !is_identifier(name) {
        return Err(fail(name, "the kernel's name is not a C identifier"));
    }
    let mut seen = std::collections::HashSet::new();
    for declared in kernel
        .params
        .iter()
        .map(|p| &p.name)
        .chain(kernel.shared.iter().map(|s| &s.name))
    {
        if !is_identifier(declared) || !seen.insert(declared.as_str()) {
            return Err(fail(
                name,
                format!("parameter or shared array '{declared}' is not a distinct C identifier"),
            ));
        }
    }
    if kernel.grid != GridRule::User && !(1..=MAX_BLOCK).contains(&kernel.block) {
        return Err(fail(name, format!("block of {} threads", kernel.block)));
    }
    let shared_bytes: usize = kernel
        .shared
        .iter()
        .filter(|s| !s.local)
        .map(|s| s.len as usize * s.dtype.size())
        .sum();
    if shared_bytes > MAX_SHARED_BYTES {
        return Err(fail(
            name,
            format!("{shared_bytes} bytes of shared memory (at most {MAX_SHARED_BYTES})"),
        ));
    }
    Scopes::new(kernel).check(&kernel.body)
}

fn fail(kernel: &str, message: impl Into<String>) -> Error {
    Error::internal(
        format!("device program verifier ({kernel})"),
        message.into(),
    )
}

/// Whether `name` can name a C function, parameter or variable.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Registers in scope while walking a kernel's statements.
struct Scopes<'k> {
    kernel: &'k DeviceKernel,
    /// Whether each register is in scope now.
    live: Vec<bool>,
    /// Whether each register has been declared anywhere yet.
    declared: Vec<bool>,
}

/// A step of the walk: a block opens (declaring a `for` loop's counter),
/// a statement, or the end of a block, whose declarations go out of scope.
enum Walk<'s> {
    Open(Option<Var>),
    Stmt(&'s Stmt),
    Close,
}

/// Pushes a block's walk onto `work` (popped in order).
fn push_block<'s>(work: &mut Vec<Walk<'s>>, block: &'s [Stmt], counter: Option<Var>) {
    work.push(Walk::Close);
    work.extend(block.iter().rev().map(Walk::Stmt));
    work.push(Walk::Open(counter));
}

impl<'k> Scopes<'k> {
    fn new(kernel: &'k DeviceKernel) -> Scopes<'k> {
        Scopes {
            kernel,
            live: vec![false; kernel.vars.len()],
            declared: vec![false; kernel.vars.len()],
        }
    }

    fn fail(&self, message: impl Into<String>) -> Error {
        fail(&self.kernel.name, message)
    }

    /// Walks `body` without recursion (user kernels may nest deeply).
    fn check(mut self, body: &[Stmt]) -> Result<()> {
        // The registers each open block declares, innermost last.
        let mut scopes: Vec<Vec<Var>> = Vec::new();
        let mut work = Vec::new();
        push_block(&mut work, body, None);
        while let Some(step) = work.pop() {
            let stmt = match step {
                Walk::Open(counter) => {
                    scopes.push(Vec::new());
                    if let Some(v) = counter {
                        self.declare(v, &mut scopes)?;
                    }
                    continue;
                }
                Walk::Close => {
                    for v in scopes.pop().unwrap_or_default() {
                        self.live[v.index()] = false;
                    }
                    continue;
                }
                Walk::Stmt(stmt) => stmt,
            };
            match stmt {
                Stmt::Let(v, e) => {
                    self.expr(e)?;
                    self.declare(*v, &mut scopes)?;
                }
                Stmt::Assign(v, e) => {
                    self.expr(e)?;
                    self.use_var(*v)?;
                }
                Stmt::Store {
                    param,
                    index,
                    value,
                } => {
                    self.expr(index)?;
                    self.expr(value)?;
                    self.writable(*param)?;
                }
                Stmt::StoreShared {
                    array,
                    index,
                    value,
                } => {
                    self.expr(index)?;
                    self.expr(value)?;
                    self.shared(*array)?;
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    self.expr(cond)?;
                    // Pushed last-first: `then` is walked first.
                    push_block(&mut work, otherwise, None);
                    push_block(&mut work, then, None);
                }
                Stmt::For {
                    var,
                    start,
                    end,
                    step,
                    body,
                } => {
                    for e in [start, end, step] {
                        self.expr(e)?;
                    }
                    push_block(&mut work, body, Some(*var));
                }
                Stmt::While { cond, body } => {
                    self.expr(cond)?;
                    push_block(&mut work, body, None);
                }
                Stmt::LoadVector { param, index, dst } => {
                    self.expr(index)?;
                    self.readable(*param)?;
                    for v in dst {
                        self.declare(*v, &mut scopes)?;
                    }
                }
                Stmt::StoreVector {
                    param,
                    index,
                    values,
                } => {
                    self.expr(index)?;
                    for v in values {
                        self.expr(v)?;
                    }
                    self.writable(*param)?;
                }
                Stmt::Atomic {
                    target,
                    index,
                    value,
                    compare,
                    old,
                    ..
                } => {
                    self.expr(index)?;
                    self.expr(value)?;
                    if let Some(c) = compare {
                        self.expr(c)?;
                    }
                    match *target {
                        AtomicTarget::Global(p) => self.writable(p)?,
                        AtomicTarget::Shared(a) => {
                            self.shared(a)?;
                            if self.kernel.shared[a as usize].local {
                                return Err(self.fail(format!(
                                    "an atomic update of local array {a} (atomics need shared or global memory)"
                                )));
                            }
                        }
                    }
                    if let Some(v) = old {
                        self.use_var(*v)?;
                    }
                }
                Stmt::Barrier | Stmt::Fence(_) => {}
                Stmt::Print(pieces) => {
                    for piece in pieces {
                        if let PrintPiece::Value(e, _) = piece {
                            self.expr(e)?;
                        }
                    }
                }
                Stmt::Warp {
                    dst,
                    mask,
                    value,
                    lane,
                    ..
                } => {
                    if !self.kernel.block.is_multiple_of(WARP) {
                        return Err(self.fail(format!(
                            "a warp operation in blocks of {} threads (not whole warps)",
                            self.kernel.block
                        )));
                    }
                    for e in [mask, value, lane] {
                        self.expr(e)?;
                    }
                    self.use_var(*dst)?;
                }
                Stmt::ShuffleDown { dst, src, .. } => {
                    if !self.kernel.block.is_multiple_of(WARP) {
                        return Err(self.fail(format!(
                            "a warp shuffle in blocks of {} threads (not whole warps)",
                            self.kernel.block
                        )));
                    }
                    self.use_var(*src)?;
                    self.use_var(*dst)?;
                }
            }
        }
        Ok(())
    }

    fn declare(&mut self, v: Var, scopes: &mut [Vec<Var>]) -> Result<()> {
        let i = v.index();
        if i >= self.declared.len() {
            return Err(self.fail(format!(
                "register {v} is not among its {} registers",
                self.declared.len()
            )));
        }
        if self.declared[i] {
            return Err(self.fail(format!("register {v} is declared twice")));
        }
        let innermost = scopes
            .last_mut()
            .ok_or_else(|| self.fail("a declaration outside every block"))?;
        innermost.push(v);
        self.declared[i] = true;
        self.live[i] = true;
        Ok(())
    }

    fn use_var(&self, v: Var) -> Result<()> {
        match self.live.get(v.index()) {
            Some(true) => Ok(()),
            Some(false) if self.declared[v.index()] => Err(self.fail(format!(
                "register {v} is used outside the block that declares it"
            ))),
            _ => Err(self.fail(format!("register {v} is used before it is declared"))),
        }
    }

    fn param_kind(&self, p: u32) -> Result<ParamKind> {
        self.kernel
            .params
            .get(p as usize)
            .map(|p| p.kind)
            .ok_or_else(|| self.fail(format!("parameter {p} does not exist")))
    }

    fn readable(&self, p: u32) -> Result<()> {
        match self.param_kind(p)? {
            ParamKind::Input(_) | ParamKind::Output(_) => Ok(()),
            ParamKind::Scalar(_) => Err(self.fail(format!("a load from scalar parameter {p}"))),
        }
    }

    fn writable(&self, p: u32) -> Result<()> {
        match self.param_kind(p)? {
            ParamKind::Output(_) => Ok(()),
            _ => Err(self.fail(format!("a store to parameter {p}, which is not an output"))),
        }
    }

    fn shared(&self, a: u32) -> Result<()> {
        if (a as usize) < self.kernel.shared.len() {
            Ok(())
        } else {
            Err(self.fail(format!("shared array {a} does not exist")))
        }
    }

    /// Checks an expression's registers, parameters and shared arrays,
    /// without recursion.
    fn expr(&self, root: &Expr) -> Result<()> {
        let mut stack = vec![root];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Var(v) => self.use_var(*v)?,
                Expr::Param(p) => match self.param_kind(*p)? {
                    ParamKind::Scalar(_) => {}
                    _ => return Err(self.fail(format!("buffer parameter {p} read as a value"))),
                },
                Expr::Special(_) | Expr::Const(_) => {}
                Expr::Load { param, index } => {
                    self.readable(*param)?;
                    stack.push(index);
                }
                Expr::LoadShared { array, index } => {
                    self.shared(*array)?;
                    stack.push(index);
                }
                Expr::Index(_, a, b) | Expr::Binary(_, a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
                Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::Bitcast(_, a) => stack.push(a),
                Expr::Select(c, a, b) | Expr::Fma(a, b, c) => {
                    stack.push(c);
                    stack.push(a);
                    stack.push(b);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use lazyfuse_core::{DType, Literal};

    use super::*;
    use crate::ir::{Param, SharedArray};

    fn param(name: &str, kind: ParamKind) -> Param {
        Param {
            name: name.into(),
            kind,
            source: ArgSource::Arg(0),
        }
    }

    /// `out[0] = in[0] + n` with one register, in blocks of 64 threads.
    fn kernel(body: Vec<Stmt>) -> DeviceKernel {
        DeviceKernel {
            name: "k".into(),
            params: vec![
                param("input", ParamKind::Input(DType::F32)),
                param("out", ParamKind::Output(DType::F32)),
                param("n", ParamKind::Scalar(DType::F32)),
            ],
            shared: vec![SharedArray {
                name: "tile".into(),
                dtype: DType::F32,
                len: 64,
                local: false,
            }],
            vars: vec![DType::F32, DType::I64],
            body,
            block: 64,
            grid: GridRule::Single,
            independent: Vec::new(),
        }
    }

    fn zero() -> Expr {
        Expr::Const(Literal::of(0i64))
    }

    fn load() -> Expr {
        Expr::Load {
            param: 0,
            index: Box::new(zero()),
        }
    }

    fn store(value: Expr) -> Stmt {
        Stmt::Store {
            param: 1,
            index: zero(),
            value,
        }
    }

    fn rejected(kernel: &DeviceKernel, why: &str) {
        match verify_kernel(kernel) {
            Err(e) => assert!(e.to_string().contains(why), "{e}"),
            Ok(()) => panic!("accepted a kernel where {why}"),
        }
    }

    #[test]
    fn a_well_formed_kernel_passes() {
        let body = vec![
            Stmt::Let(Var(0), load()),
            Stmt::If {
                cond: Expr::Const(Literal::of(true)),
                then: vec![Stmt::Assign(Var(0), Expr::Param(2))],
                otherwise: vec![],
            },
            store(Expr::Var(Var(0))),
        ];
        verify_kernel(&kernel(body)).expect("valid");
    }

    #[test]
    fn registers_must_be_declared_once_before_use_and_in_scope() {
        rejected(
            &kernel(vec![store(Expr::Var(Var(0)))]),
            "used before it is declared",
        );
        rejected(
            &kernel(vec![Stmt::Let(Var(0), load()), Stmt::Let(Var(0), load())]),
            "declared twice",
        );
        rejected(
            &kernel(vec![
                Stmt::If {
                    cond: Expr::Const(Literal::of(true)),
                    then: vec![Stmt::Let(Var(0), load())],
                    otherwise: vec![],
                },
                store(Expr::Var(Var(0))),
            ]),
            "outside the block that declares it",
        );
        rejected(
            &kernel(vec![
                Stmt::For {
                    var: Var(1),
                    start: zero(),
                    end: zero(),
                    step: zero(),
                    body: vec![],
                },
                Stmt::Assign(Var(1), zero()),
            ]),
            "outside the block that declares it",
        );
        rejected(&kernel(vec![Stmt::Let(Var(7), load())]), "not among its");
    }

    #[test]
    fn parameters_and_shared_arrays_are_used_as_declared() {
        let mut wrong = kernel(vec![]);
        wrong.body = vec![Stmt::Store {
            param: 0,
            index: zero(),
            value: zero(),
        }];
        rejected(&wrong, "not an output");
        wrong.body = vec![store(Expr::Load {
            param: 2,
            index: Box::new(zero()),
        })];
        rejected(&wrong, "load from scalar parameter");
        wrong.body = vec![store(Expr::Param(0))];
        rejected(&wrong, "read as a value");
        wrong.body = vec![store(Expr::Param(9))];
        rejected(&wrong, "does not exist");
        wrong.body = vec![Stmt::StoreShared {
            array: 1,
            index: zero(),
            value: zero(),
        }];
        rejected(&wrong, "shared array 1 does not exist");
    }

    #[test]
    fn geometry_and_names_are_checked() {
        let mut wrong = kernel(vec![
            Stmt::Let(Var(0), load()),
            Stmt::ShuffleDown {
                dst: Var(0),
                src: Var(0),
                delta: 1,
            },
        ]);
        verify_kernel(&wrong).expect("64 threads are whole warps");
        wrong.block = 48;
        rejected(&wrong, "not whole warps");
        wrong.block = 2048;
        rejected(&wrong, "block of 2048 threads");
        let mut named = kernel(vec![]);
        named.name = "bad name".into();
        rejected(&named, "not a C identifier");
        named.name = "k".into();
        named.shared[0].name = "out".into();
        rejected(&named, "distinct C identifier");
        named.shared[0].name = "tile".into();
        named.shared[0].len = 1 << 20;
        rejected(&named, "bytes of shared memory");
    }

    #[test]
    fn partials_are_declared_exactly_when_taken() {
        let program = DeviceProgram {
            name: "p".into(),
            index: DType::I32,
            kernels: vec![kernel(vec![])],
            partials: Some(DType::F32),
        };
        assert!(verify(&program).is_err());
        let twice = DeviceProgram {
            partials: None,
            kernels: vec![kernel(vec![]), kernel(vec![])],
            ..program
        };
        assert!(verify(&twice)
            .unwrap_err()
            .to_string()
            .contains("share a name"));
    }
}
