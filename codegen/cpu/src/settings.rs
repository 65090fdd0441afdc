//! The CPU backend's own settings: when kernels are compiled to machine
//! code, and when outputs are written with streaming stores. They live with
//! the backend, not in the context's [`Options`](lazyfuse_core::Options),
//! which hold what every backend honours.

/// When the CPU backend compiles kernels to machine code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JitMode {
    /// Once a kernel has processed enough elements to repay compiling it
    /// (small, one-off kernels stay on the interpreter).
    Auto,
    /// At the first launch of every kernel it can compile.
    Always,
    /// Never: every kernel runs on the register-machine interpreter.
    Never,
}

impl JitMode {
    /// The mode named by `LAZYFUSE_JIT` (`auto`, `always` or `never`;
    /// `Auto` when unset or unknown), read once.
    pub fn from_env() -> JitMode {
        static MODE: std::sync::OnceLock<JitMode> = std::sync::OnceLock::new();
        *MODE.get_or_init(|| match std::env::var("LAZYFUSE_JIT").as_deref() {
            Ok("always") => JitMode::Always,
            Ok("never") => JitMode::Never,
            _ => JitMode::Auto,
        })
    }
}

/// Settings of the CPU backend (start from `CpuSettings::default()`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuSettings {
    /// When kernels are compiled to machine code.
    pub jit: JitMode,
    /// The outputs of a compiled element-wise launch are written with
    /// streaming (non-temporal) stores, which bypass the caches, when the
    /// launch reads and writes more than this many bytes in all (`None`:
    /// the size of the last-level cache).
    pub streaming_threshold: Option<usize>,
}

impl Default for CpuSettings {
    /// The JIT mode of `LAZYFUSE_JIT` (default `Auto`), streaming stores
    /// above the last-level cache's size.
    fn default() -> Self {
        CpuSettings {
            jit: JitMode::from_env(),
            streaming_threshold: None,
        }
    }
}
