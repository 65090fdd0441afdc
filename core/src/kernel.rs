//! Kernels written by users (Numba's `@cuda.jit`), as nodes of the lazy
//! graph. Core knows a kernel only through [`UserKernel`]; the code
//! generator implements it. A launch ([`KernelLaunch`]) reads all of its
//! array arguments and writes new versions of some of them: each written
//! argument becomes a new array (a node `Op::Kernel`), so handles to the
//! old arrays keep their values. A launch is a step of the plan of the
//! demand that first needs one of its outputs: it runs once, after the
//! fused kernels that compute its arguments and before those that read
//! its results.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::element::HostBuffer;
use crate::error::Result;
use crate::scalar::Literal;

/// A user kernel, as core sees it.
pub trait UserKernel: Send + Sync + fmt::Debug + std::panic::RefUnwindSafe {
    /// The kernel's name.
    fn name(&self) -> &str;

    /// For the backend that compiled it to downcast.
    fn as_any(&self) -> &dyn Any;

    /// Runs `launch` over host copies of its array arguments; returns the
    /// new values of the arrays it writes, in `launch.written` order. This
    /// is how backends without a device of their own run user kernels.
    fn run_host(&self, launch: &KernelLaunch, arrays: &[&HostBuffer]) -> Result<Vec<HostBuffer>>;

    /// What runs `run_host`, for `explain()`.
    fn host_executor(&self) -> &'static str;
}

/// One launch of a user kernel: its geometry, scalar arguments, and which
/// array arguments it writes.
pub struct KernelLaunch {
    /// The kernel.
    pub kernel: Arc<dyn UserKernel>,
    /// Blocks along x, y, z.
    pub grid: [u32; 3],
    /// Threads per block along x, y, z.
    pub block: [u32; 3],
    /// Scalar arguments, in parameter order.
    pub scalars: Vec<Literal>,
    /// Positions among the array arguments of those the kernel writes.
    pub written: Vec<usize>,
    /// The shapes of the array arguments.
    pub shapes: Vec<Vec<usize>>,
    /// Every element of each written array is written by the launch
    /// before anything reads it: the arrays' values before the launch are
    /// never needed, so a runtime need not copy them in (a library kernel's
    /// fresh output, such as a gather's).
    pub overwrites: bool,
}

impl fmt::Debug for KernelLaunch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[grid {:?}, block {:?}]",
            self.kernel.name(),
            self.grid,
            self.block
        )
    }
}

impl KernelLaunch {
    /// A launch of `kernel` over array arguments of `shapes`, writing those
    /// at `written`.
    pub fn new(
        kernel: Arc<dyn UserKernel>,
        (grid, block): ([u32; 3], [u32; 3]),
        scalars: Vec<Literal>,
        written: Vec<usize>,
        shapes: Vec<Vec<usize>>,
    ) -> KernelLaunch {
        KernelLaunch {
            kernel,
            grid,
            block,
            scalars,
            written,
            shapes,
            overwrites: false,
        }
    }

    /// This launch with [`KernelLaunch::overwrites`] set to `overwrites`.
    pub fn overwriting(mut self, overwrites: bool) -> KernelLaunch {
        self.overwrites = overwrites;
        self
    }
}
