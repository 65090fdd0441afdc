//! Generalized ufuncs (Numba's `@guvectorize`): a body over the *core*
//! dimensions of its arguments (the last ones, named by the layout),
//! applied to every element of the *loop* dimensions (the leading ones,
//! broadcast as NumPy does).
//!
//! [`GUfunc::build`] traces the body once per signature into a user
//! kernel whose arguments are the call's arrays flattened to
//! `[loop elements, core dimensions…]`: one thread per loop element, or,
//! when the body uses `par_range`/`par_reduce`, one block per loop element
//! with the iterations dealt out over its threads. [`GUfunc::prepare`]
//! checks a call (arity, dtypes, core sizes, broadcasting) and says how to
//! launch it; the facade's `GUfunc::call` turns that into a lazy launch.

mod layout;

use std::collections::HashMap;
use std::sync::Arc;

use lazyfuse_core::shape::{broadcast_shapes, format_shape};
use lazyfuse_core::{can_cast_safely, DType, Error, KernelLaunch, Result};
use lazyfuse_device::verify::is_identifier;

pub use layout::{CoreDim, Layout};

use super::launch::{ArgValue, Dim3};
use super::memory::ArrayParam;
use super::scope::{KernelScope, Parallel, PAR_BLOCK};
use super::Kernel;

/// Threads per block of a gufunc that runs one thread per loop element.
const THREAD_BLOCK: u32 = 128;
/// The most blocks a gufunc launch uses (the kernel strides over the rest).
const MAX_BLOCKS: usize = 65_535;

/// A generalized ufunc built with [`GUfunc::build`].
#[derive(Clone, Debug)]
pub struct GUfunc {
    inner: Arc<Built>,
}

#[derive(Debug)]
struct Built {
    name: String,
    layout: Layout,
    loops: Vec<Loop>,
}

/// The kernel traced for one signature.
#[derive(Debug)]
struct Loop {
    signature: String,
    dtypes: Vec<DType>,
    kernel: Kernel,
    parallel: Parallel,
}

/// A checked call of a gufunc: the shapes and dtypes of its arguments and
/// how to launch it.
#[derive(Clone, Debug)]
pub struct GUfuncCall {
    /// The dtype of each input in the chosen loop (an input of another
    /// dtype is cast to it first).
    pub input_dtypes: Vec<DType>,
    /// The shape each input is broadcast to: the loop shape, then its core.
    pub input_shapes: Vec<Vec<usize>>,
    /// The dtype of each output.
    pub output_dtypes: Vec<DType>,
    /// The shape of each output: the loop shape, then its core.
    pub output_shapes: Vec<Vec<usize>>,
    /// The broadcast loop dimensions.
    pub loop_shape: Vec<usize>,
    kernel: Kernel,
    grid: Dim3,
    block: Dim3,
    parallel: Parallel,
}

impl GUfunc {
    /// Traces `body` once per signature. The body receives one
    /// [`ArrayParam`] per argument (inputs, then outputs) holding that
    /// argument's core dimensions only: a `()` core is 0-d (`x.at(())`).
    /// Errors: a name that is not a C identifier, a layout or signature
    /// that does not parse (naming the column), a signature whose ranks
    /// disagree with the layout, or a body the kernel builder refuses.
    pub fn build(
        name: &str,
        layout: &str,
        signatures: &[&str],
        body: impl Fn(&mut KernelScope, &[ArrayParam]),
    ) -> Result<GUfunc> {
        let op = format!("gufunc '{name}'");
        if !is_identifier(name) {
            return Err(Error::invalid(
                op,
                "the name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)",
            ));
        }
        let layout = Layout::parse(&op, layout)?;
        if signatures.is_empty() {
            return Err(Error::invalid(
                op,
                "needs at least one signature, as \"void(f32[:], f32[:])\"",
            ));
        }
        let mut loops: Vec<Loop> = Vec::with_capacity(signatures.len());
        for signature in signatures {
            let mut args = layout::parse_signature(&op, signature)?;
            // Numba writes a `()` core as a one-element array (`intp[:]`).
            for (arg, core) in args.iter_mut().zip(layout.args()) {
                if core.is_empty() && arg.1 == 1 {
                    arg.1 = 0;
                }
            }
            check_ranks(&op, &layout, signature, &args)?;
            let dtypes: Vec<DType> = args.iter().map(|&(dtype, _)| dtype).collect();
            if loops.iter().any(|l| l.dtypes == dtypes) {
                return Err(Error::invalid(
                    op,
                    format!("signature \"{signature}\" is given twice"),
                ));
            }
            let kernel_name = format!(
                "{name}_{}",
                dtypes
                    .iter()
                    .map(|d| d.short_name())
                    .collect::<Vec<_>>()
                    .join("_")
            );
            let trace = |parallel| trace(&kernel_name, &layout, &args, parallel, &body);
            let (kernel, used_par) = trace(Parallel::Sequential)?;
            let (kernel, parallel) = if used_par {
                let spread = trace(Parallel::Block)?.0;
                (spread.with_host_variant(kernel), Parallel::Block)
            } else {
                (kernel, Parallel::Sequential)
            };
            loops.push(Loop {
                signature: signature.to_string(),
                dtypes,
                kernel,
                parallel,
            });
        }
        Ok(GUfunc {
            inner: Arc::new(Built {
                name: name.to_string(),
                layout,
                loops,
            }),
        })
    }

    /// The gufunc's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Its layout.
    pub fn layout(&self) -> &Layout {
        &self.inner.layout
    }

    /// The kernel traced for each signature, in the order given.
    pub fn kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.inner.loops.iter().map(|l| &l.kernel)
    }

    /// Checks a call with `inputs` (and, for Numba's `out=`, `outputs`),
    /// each given as its dtype and shape, and describes it.
    pub fn prepare(
        &self,
        inputs: &[(DType, &[usize])],
        outputs: Option<&[(DType, &[usize])]>,
    ) -> Result<GUfuncCall> {
        let built = &*self.inner;
        let op = format!("gufunc '{}' ({})", built.name, built.layout);
        let layout = &built.layout;
        if inputs.len() != layout.inputs.len() {
            return Err(Error::invalid(
                op,
                format!("takes {} inputs, got {}", layout.inputs.len(), inputs.len()),
            ));
        }
        if let Some(outputs) = outputs {
            if outputs.len() != layout.outputs.len() {
                return Err(Error::invalid(
                    op,
                    format!(
                        "has {} outputs, got {} output arrays",
                        layout.outputs.len(),
                        outputs.len()
                    ),
                ));
            }
        }
        let chosen = built.choose_loop(&op, inputs)?;
        let mut sizes = CoreSizes::default();
        let mut loop_parts = Vec::with_capacity(inputs.len());
        for (i, (&(_, shape), dims)) in inputs.iter().zip(&layout.inputs).enumerate() {
            loop_parts.push(sizes.bind(&op, &format!("input {i}"), shape, dims)?);
        }
        let loop_shape = broadcast_shapes(&op, &loop_parts)?.to_vec();
        let n_in = inputs.len();
        if let Some(outputs) = outputs {
            for (j, ((dtype, shape), dims)) in outputs.iter().zip(&layout.outputs).enumerate() {
                let what = format!("output {j}");
                let loop_part = sizes.bind(&op, &what, shape, dims)?;
                let expected = chosen.dtypes[n_in + j];
                if *dtype != expected {
                    return Err(Error::DTypeMismatch {
                        op,
                        message: format!(
                            "{what} is a {dtype} array but signature \"{}\" writes {expected}",
                            chosen.signature
                        ),
                    });
                }
                if loop_part != loop_shape.as_slice() {
                    return Err(Error::ShapeMismatch {
                        op,
                        message: format!(
                            "{what} has shape {} whose loop dimensions {} are not the inputs' \
                             broadcast loop dimensions {}",
                            format_shape(shape),
                            format_shape(loop_part),
                            format_shape(&loop_shape)
                        ),
                    });
                }
            }
        }
        let full = |dims: &[CoreDim], what: &str| -> Result<Vec<usize>> {
            let mut shape = loop_shape.clone();
            for dim in dims {
                shape.push(sizes.size_of(&op, what, dim)?);
            }
            Ok(shape)
        };
        let input_shapes = (layout.inputs.iter().enumerate())
            .map(|(i, dims)| full(dims, &format!("input {i}")))
            .collect::<Result<Vec<_>>>()?;
        let output_shapes = (layout.outputs.iter().enumerate())
            .map(|(j, dims)| full(dims, &format!("output {j}")))
            .collect::<Result<Vec<_>>>()?;
        let elements: usize = loop_shape.iter().product();
        let (blocks, threads) = match chosen.parallel {
            Parallel::Sequential => (elements.div_ceil(THREAD_BLOCK as usize), THREAD_BLOCK),
            Parallel::Block => (elements, PAR_BLOCK),
        };
        Ok(GUfuncCall {
            input_dtypes: chosen.dtypes[..n_in].to_vec(),
            input_shapes,
            output_dtypes: chosen.dtypes[n_in..].to_vec(),
            output_shapes,
            loop_shape,
            kernel: chosen.kernel.clone(),
            grid: Dim3::from(blocks.clamp(1, MAX_BLOCKS) as u32),
            block: Dim3::from(threads),
            parallel: chosen.parallel,
        })
    }
}

impl Built {
    /// The loop whose input dtypes are the inputs', or else the first
    /// whose inputs they cast to safely (NumPy's and Numba's dispatch).
    fn choose_loop(&self, op: &str, inputs: &[(DType, &[usize])]) -> Result<&Loop> {
        let given: Vec<DType> = inputs.iter().map(|&(dtype, _)| dtype).collect();
        let n = given.len();
        self.loops
            .iter()
            .find(|l| l.dtypes[..n] == given[..])
            .or_else(|| {
                self.loops.iter().find(|l| {
                    given
                        .iter()
                        .zip(&l.dtypes)
                        .all(|(&from, &to)| can_cast_safely(from, to))
                })
            })
            .ok_or_else(|| {
                let names: Vec<&str> = given.iter().map(|d| d.short_name()).collect();
                let have: Vec<String> = self
                    .loops
                    .iter()
                    .map(|l| format!("\"{}\"", l.signature))
                    .collect();
                Error::DTypeMismatch {
                    op: op.to_string(),
                    message: format!(
                        "no signature takes inputs ({}) (expected one of {})",
                        names.join(", "),
                        have.join(", ")
                    ),
                }
            })
    }
}

impl GUfuncCall {
    /// `shape` (an argument's full shape) as the kernel sees it:
    /// `[loop elements, core dimensions…]`.
    pub fn flat_shape(&self, shape: &[usize]) -> Vec<usize> {
        let loop_ndim = self.loop_shape.len();
        let mut flat = vec![self.loop_shape.iter().product()];
        flat.extend_from_slice(&shape[loop_ndim.min(shape.len())..]);
        flat
    }

    /// Checks the launch of the gufunc's kernel over `args` (inputs, then
    /// outputs, in their flat shapes) and describes it for the graph.
    pub fn prepare_launch(&self, args: &[ArgValue<'_>]) -> Result<KernelLaunch> {
        self.kernel.prepare_launch(self.grid, self.block, args)
    }

    /// How the kernel spreads the work: for `explain()` and the docs.
    pub fn schedule(&self) -> &'static str {
        match self.parallel {
            Parallel::Sequential => "one thread per loop element",
            Parallel::Block => "one block per loop element, par_range over its threads",
        }
    }
}

/// The size bound to each core-dimension symbol, and where it came from.
#[derive(Default)]
struct CoreSizes {
    bound: HashMap<String, (usize, String)>,
}

impl CoreSizes {
    /// Binds the core dimensions of argument `what` of `shape`; returns its
    /// loop dimensions.
    fn bind<'s>(
        &mut self,
        op: &str,
        what: &str,
        shape: &'s [usize],
        dims: &[CoreDim],
    ) -> Result<&'s [usize]> {
        let listed = || {
            let names: Vec<String> = dims.iter().map(ToString::to_string).collect();
            format!("({})", names.join(","))
        };
        if shape.len() < dims.len() {
            return Err(Error::ShapeMismatch {
                op: op.to_string(),
                message: format!(
                    "{what} has shape {} but its core {} needs at least {} dimensions",
                    format_shape(shape),
                    listed(),
                    dims.len()
                ),
            });
        }
        let split = shape.len() - dims.len();
        for (dim, &size) in dims.iter().zip(&shape[split..]) {
            let here = format!("{what} (shape {})", format_shape(shape));
            match dim {
                CoreDim::Fixed(n) if *n != size => {
                    return Err(Error::ShapeMismatch {
                        op: op.to_string(),
                        message: format!("core dimension of fixed size {n} is {size} in {here}"),
                    })
                }
                CoreDim::Fixed(_) => {}
                CoreDim::Symbol(symbol) => match self.bound.get(symbol) {
                    Some((bound, there)) if *bound != size => {
                        return Err(Error::ShapeMismatch {
                            op: op.to_string(),
                            message: format!(
                                "core dimension '{symbol}' is {bound} in {there} but {size} in \
                                 {here} (expected equal sizes)"
                            ),
                        })
                    }
                    Some(_) => {}
                    None => {
                        self.bound.insert(symbol.clone(), (size, here));
                    }
                },
            }
        }
        Ok(&shape[..split])
    }

    fn size_of(&self, op: &str, what: &str, dim: &CoreDim) -> Result<usize> {
        match dim {
            CoreDim::Fixed(n) => Ok(*n),
            CoreDim::Symbol(symbol) => self.bound.get(symbol).map(|(n, _)| *n).ok_or_else(|| {
                Error::invalid(
                    op,
                    format!(
                        "the size of core dimension '{symbol}' of {what} is given by no input \
                         (pass the outputs with call_into)"
                    ),
                )
            }),
        }
    }
}

/// Checks that each argument of `signature` has as many dimensions as
/// its core in the layout.
fn check_ranks(op: &str, layout: &Layout, signature: &str, args: &[(DType, usize)]) -> Result<()> {
    let cores: Vec<&Vec<CoreDim>> = layout.args().collect();
    if cores.len() != args.len() {
        return Err(Error::invalid(
            op,
            format!(
                "signature \"{signature}\" has {} arguments but layout \"{layout}\" has {}",
                args.len(),
                cores.len()
            ),
        ));
    }
    for (i, (core, &(dtype, rank))) in cores.iter().zip(args).enumerate() {
        if core.len() != rank {
            return Err(Error::invalid(
                op,
                format!(
                    "argument {i} of signature \"{signature}\" is a {rank}-d {dtype} array but \
                     the layout \"{layout}\" gives it {} core dimensions",
                    core.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Records the kernel of one signature: a loop over loop elements (one per
/// thread, or one per block) running `body` on each element's cores.
/// Returns the kernel and whether the body used `par_range`.
fn trace(
    name: &str,
    layout: &Layout,
    args: &[(DType, usize)],
    parallel: Parallel,
    body: &impl Fn(&mut KernelScope, &[ArrayParam]),
) -> Result<(Kernel, bool)> {
    let mut scope = KernelScope::new(name);
    scope.parallel = parallel;
    let n_in = layout.inputs.len();
    let params: Vec<ArrayParam> = (args.iter().enumerate())
        .map(|(i, &(dtype, rank))| {
            if i < n_in {
                scope.array(&format!("in{i}"), dtype, rank + 1)
            } else {
                scope.array_mut(&format!("out{}", i - n_in), dtype, rank + 1)
            }
        })
        .collect();
    let (first, step) = match parallel {
        Parallel::Sequential => (scope.grid(1).remove(0), scope.gridsize(1).remove(0)),
        Parallel::Block => {
            let block = scope.block_idx(super::Dim::X);
            (block, scope.grid_dim(super::Dim::X))
        }
    };
    let elements = params[0].len(0);
    scope.for_range(first, elements, step, |k, element| {
        let cores: Vec<ArrayParam> = (params.iter())
            .map(|p| {
                // Each core's start is computed once, into a register.
                let base = k.let_(element.clone() * p.core_len());
                p.core_at(base)
            })
            .collect();
        body(k, &cores);
    });
    let used_par = scope.used_par;
    Ok((Kernel::finish(scope)?, used_par))
}
