//! Binding a fusion `Launch` to a lowered program: the index width, the
//! values of size parameters, and grid sizes. Shared by the simulator and
//! the CUDA launcher so both launch exactly the same way.

use lazyfuse_core::{DType, Error, Literal, Result};
use lazyfuse_fusion::Launch;

use super::ir::{ArgSource, DeviceKernel, DeviceProgram, GridRule, MAX_GRID};
use super::lower::BLOCK;

/// The sizes of one launch that parameters and grids are derived from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Elements of the domain.
    pub domain_len: usize,
    /// Outputs of a reduction (1 for element-wise kernels).
    pub kept_len: usize,
    /// Elements reduced into each output.
    pub reduced_len: usize,
    /// Block partials written by a full reduction's first pass.
    pub partial_count: usize,
}

impl Sizes {
    /// The sizes of `launch`.
    pub fn of(launch: &Launch) -> Sizes {
        let domain_len = launch.domain_len();
        let (kept_len, reduced_len) = match launch.kernel.reduced_axes() {
            Some(axes) => (0..launch.domain.len()).fold((1, 1), |(kept, reduced), a| {
                match axes.contains(&a) {
                    true => (kept, reduced * launch.domain[a]),
                    false => (kept * launch.domain[a], reduced),
                }
            }),
            None => (domain_len, 1),
        };
        Sizes {
            domain_len,
            kept_len,
            reduced_len,
            partial_count: GridRule::ThreadPerItem(ArgSource::DomainLen).blocks(domain_len, BLOCK),
        }
    }

    fn work(&self, source: ArgSource) -> usize {
        match source {
            ArgSource::KeptLen => self.kept_len,
            ArgSource::ReducedLen => self.reduced_len,
            ArgSource::PartialCount => self.partial_count,
            _ => self.domain_len,
        }
    }
}

/// `I32` when every index a kernel of `launch` computes (with the slack of
/// one grid-stride step) fits in 31 bits, else `I64`.
pub fn index_type(launch: &Launch) -> DType {
    let limit = (i32::MAX as usize).saturating_sub(MAX_GRID * BLOCK as usize);
    let fits_domain = launch.domain_len() <= limit && launch.domain.iter().all(|&e| e <= limit);
    let fits_inputs = launch.inputs.iter().all(|input| {
        let reach = input
            .strides
            .iter()
            .zip(launch.domain.iter())
            .map(|(s, &e)| s.unsigned_abs().saturating_mul(e.saturating_sub(1)))
            .fold(input.offset, usize::saturating_add);
        reach <= limit
    });
    if fits_domain && fits_inputs {
        DType::I32
    } else {
        DType::I64
    }
}

fn index_literal(value: i64, index: DType) -> Result<Literal> {
    match index {
        DType::I32 => i32::try_from(value).map(Literal::of).map_err(|_| {
            Error::internal(
                "device launch",
                format!("{value} does not fit the 32-bit index"),
            )
        }),
        _ => Ok(Literal::of(value)),
    }
}

/// The value of a scalar parameter fed from `source`.
pub fn scalar(source: ArgSource, launch: &Launch, program: &DeviceProgram) -> Result<Literal> {
    let sizes = Sizes::of(launch);
    let missing = || Error::internal("device launch", format!("no value for {source:?}"));
    let value: i64 = match source {
        ArgSource::Arg(i) => return launch.args.get(i).copied().ok_or_else(missing),
        ArgSource::Offset(k) => launch.inputs.get(k).ok_or_else(missing)?.offset as i64,
        ArgSource::Stride(k, d) => *launch
            .inputs
            .get(k)
            .and_then(|i| i.strides.get(d))
            .ok_or_else(missing)? as i64,
        ArgSource::Extent(d) => *launch.domain.get(d).ok_or_else(missing)? as i64,
        ArgSource::DomainLen
        | ArgSource::KeptLen
        | ArgSource::ReducedLen
        | ArgSource::PartialCount => sizes.work(source) as i64,
        ArgSource::UserArray(_) | ArgSource::UserExtent(..) | ArgSource::UserScalar(_) => {
            return Err(Error::internal(
                "device launch",
                format!("{source:?} belongs to a user kernel, not a fused launch"),
            ))
        }
        ArgSource::InputBuffer(_) | ArgSource::OutputBuffer(_) | ArgSource::Partials => {
            return Err(Error::internal(
                "device launch",
                format!("{source:?} is a buffer, not a scalar"),
            ))
        }
    };
    index_literal(value, program.index)
}

/// Blocks to launch `kernel` with for `launch`.
pub fn blocks(kernel: &DeviceKernel, launch: &Launch) -> usize {
    let sizes = Sizes::of(launch);
    let work = match kernel.grid {
        GridRule::ThreadPerItem(s) | GridRule::BlockPerItem(s) => sizes.work(s),
        GridRule::Single | GridRule::User => 1,
    };
    kernel.grid.blocks(work, kernel.block)
}
