//! lazyfuse core: element types, shapes, NumPy broadcasting and NEP 50
//! promotion, the lazy expression DAG behind [`Array`], user [`Ufunc`]s and
//! [`Reducer`]s traced over [`Expr`], the [`Engine`] trait a demand runs
//! through, and the [`ReferenceEngine`] every fused backend is tested against.
//!
//! This crate knows nothing of fusion or code generation; the `lazyfuse`
//! facade wires engines from the other crates into a `Context`.
//!
//! ```
//! use lazyfuse_core::{Options, ReferenceEngine, Session};
//! use std::sync::Arc;
//!
//! let cx = Session::new(Arc::new(ReferenceEngine::new()), Options::default());
//! let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
//! let b = (&a * &a + 1.0).sqrt();
//! assert_eq!(cx.stats().kernel_launches, 0); // nothing ran yet
//! let v = b.to_vec::<f32>().unwrap();
//! assert_eq!(v, vec![2f32.sqrt(), 5f32.sqrt(), 10f32.sqrt()]);
//! ```

#[macro_use]
mod api_macros;

pub mod array;
pub mod deferral;
pub mod dtype;
pub mod element;
pub mod engine;
pub mod error;
pub mod format;
pub mod graph;
pub mod kernel;
pub mod node;
pub mod ops;
pub mod philox;
pub mod pinned;
pub mod reference;
pub mod scalar;
pub mod semantics;
pub mod session;
pub mod shape;
pub mod stream;
pub mod timeline;
pub mod trace;
pub mod typing;

mod parse;
mod reducer;
mod ufunc;
mod worker;

pub use array::{Array, Operand};
pub use dtype::{can_cast_safely, promote, DType, Kind};
pub use element::{Element, HostBuffer, SliceMut, Wide};
pub use engine::{
    Counter, Engine, EvalEnv, Options, Stats, StatsCounter, DEFAULT_PIPELINE_THRESHOLD,
};
pub use error::{Error, Result};
pub use graph::{ExprGraph, GraphNode};
pub use kernel::{KernelLaunch, UserKernel};
pub use node::{Combine, CustomCombine, DeviceBuffer, KernelCall, Node, Op, Residency};
pub use ops::{
    ArgExtreme, BinaryClass, BinaryOp, IdentityRule, ReduceClass, ReduceOp, UnaryClass, UnaryOp,
    ALIASES,
};
pub use pinned::{MappedBuf, PinnedBuf, PinnedRanges};
pub use reducer::Reducer;
pub use reference::ReferenceEngine;
pub use scalar::{Literal, Scalar};
pub use session::{CleanupGuard, Session};
pub use shape::{AxisIndex, Shape};
pub use stream::{Pending, Stream};
pub use timeline::{DeviceEngine, TimelineEvent};
pub use trace::{Expr, ExprOperand};
pub use ufunc::{Signature, Ufunc};

/// The `half` crate, for `f16` and `bf16`.
pub use half;
