//! Run-time compilation of printed programs with NVRTC, loaded dynamically
//! through cudarc: nothing here needs CUDA at build time, and a machine
//! without NVRTC gets an `Error`, never a panic.
//!
//! Finding NVRTC: the system's library search path, or `LAZYFUSE_NVRTC`
//! naming `libnvrtc.so.*` by absolute path (it is loaded before cudarc looks,
//! so users of the PyPI wheel `nvidia-cuda-nvrtc-cu12` need no
//! `LD_LIBRARY_PATH`). `LAZYFUSE_CUDA_INCLUDE` names the directory holding
//! `cuda_fp16.h` and `cuda_bf16.h` (e.g. the wheel
//! `nvidia-cuda-runtime-cu12`'s `include/`) when NVRTC does not find them.

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use cudarc::nvrtc::{result, sys};
use lazyfuse_core::{Error, Result};

/// Environment variable: absolute path of the NVRTC library to load.
pub const NVRTC_ENV: &str = "LAZYFUSE_NVRTC";
/// Environment variable: directory with the CUDA headers the kernels include.
pub const INCLUDE_ENV: &str = "LAZYFUSE_CUDA_INCLUDE";

/// What to produce.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// PTX for a virtual architecture such as `compute_80` (JIT-compiled by
    /// the driver for the device it runs on).
    Ptx(String),
    /// A cubin for a real architecture such as `sm_80`, with ptxas's
    /// register and spill report in the log.
    Cubin(String),
}

/// A compiled program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// PTX text or cubin bytes.
    pub image: Vec<u8>,
    /// NVRTC's log (for cubins, ptxas's `-v` report).
    pub log: String,
}

/// ptxas's resource report of one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// The kernel's name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of spill stores.
    pub spill_stores: u32,
    /// Bytes of spill loads.
    pub spill_loads: u32,
    /// Bytes of per-thread stack frame (local memory: spills, or arrays
    /// indexed at run time).
    pub stack_bytes: u32,
}

/// Loads NVRTC if it can be found; `Err` says why not.
pub fn load() -> Result<()> {
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            if let Some(path) = std::env::var_os(NVRTC_ENV) {
                preload(&path)?;
            }
            // SAFETY: only probes whether a library of the expected name loads.
            if unsafe { sys::is_culib_present() } {
                Ok(())
            } else {
                Err(format!(
                    "libnvrtc was not found (set {NVRTC_ENV} to its absolute path, or add its directory to LD_LIBRARY_PATH)"
                ))
            }
        })
        .clone()
        .map_err(|reason| Error::BackendUnavailable {
            backend: "nvrtc".to_string(),
            reason,
        })
}

#[cfg(unix)]
fn preload(path: &std::ffi::OsStr) -> std::result::Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading NVRTC runs only its initialisers, which have no
    // preconditions; the handle is leaked so the library stays loaded for
    // cudarc, which then finds it by its soname.
    let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| format!("{NVRTC_ENV}={}: {e}", path.to_string_lossy()))?;
    std::mem::forget(library);
    Ok(())
}

#[cfg(not(unix))]
fn preload(path: &std::ffi::OsStr) -> std::result::Result<(), String> {
    Err(format!(
        "{NVRTC_ENV}={} is only supported on unix",
        path.to_string_lossy()
    ))
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32)> {
    load()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded; both pointers are valid for writes.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| nvrtc_error("nvrtcVersion", e))?;
    Ok((major, minor))
}

/// The real architectures this NVRTC can compile for, as `major * 10 +
/// minor` (e.g. 80 for `sm_80`), ascending.
pub fn supported_archs() -> Result<Vec<i32>> {
    load()?;
    let mut count = 0;
    // SAFETY: NVRTC is loaded; `count` is writable.
    unsafe { sys::nvrtcGetNumSupportedArchs(&mut count) }
        .result()
        .map_err(|e| nvrtc_error("nvrtcGetNumSupportedArchs", e))?;
    let mut archs = vec![0; usize::try_from(count).unwrap_or(0)];
    if !archs.is_empty() {
        // SAFETY: `archs` has the `count` entries NVRTC asked for.
        unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            .result()
            .map_err(|e| nvrtc_error("nvrtcGetSupportedArchs", e))?;
    }
    archs.sort_unstable();
    Ok(archs)
}

/// What to compile for a device of compute capability `(major, minor)`: a
/// cubin for it when this NVRTC knows it, else PTX for the newest
/// architecture NVRTC knows below it (the driver JIT-compiles that forward).
pub fn target_for(capability: (i32, i32), supported: &[i32]) -> Option<Target> {
    let device = capability.0 * 10 + capability.1;
    if supported.contains(&device) {
        return Some(Target::Cubin(format!("sm_{device}")));
    }
    supported
        .iter()
        .rev()
        .find(|&&a| a <= device)
        .map(|a| Target::Ptx(format!("compute_{a}")))
}

fn nvrtc_error(call: &str, e: result::NvrtcError) -> Error {
    Error::Device {
        op: call.to_string(),
        message: format!("{:?}", e.0),
    }
}

/// The options every lazyfuse kernel is compiled with.
pub fn options(target: &Target) -> Vec<String> {
    let mut options = vec![
        "--std=c++17".to_string(),
        // No contraction of a*b+c into fma: results match the other backends.
        "--fmad=false".to_string(),
        "--device-as-default-execution-space".to_string(),
    ];
    match target {
        Target::Ptx(arch) => options.push(format!("--gpu-architecture={arch}")),
        Target::Cubin(arch) => {
            options.push(format!("--gpu-architecture={arch}"));
            options.push("--ptxas-options=-v".to_string());
        }
    }
    if let Some(dir) = std::env::var_os(INCLUDE_ENV) {
        options.push(format!("--include-path={}", dir.to_string_lossy()));
    }
    options
}

/// Owns an `nvrtcProgram`, destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn log(program: &Program) -> String {
    // SAFETY: the program is live; the log is NUL-terminated by NVRTC.
    match unsafe { result::get_program_log(program.0) } {
        Ok(raw) => {
            let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).collect();
            CStr::from_bytes_until_nul(&bytes)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        }
        Err(_) => String::new(),
    }
}

/// Compiles `source` (named `name` in errors) for `target`. A compile
/// failure is [`Error::Compile`] with the source and NVRTC's log.
///
/// A source that begins with the prelude (every generated kernel does)
/// includes it as a header that NVRTC 12.8+ precompiles once per process
/// (its automatic PCH): parsing the prelude is most of a small kernel's
/// compile time. Measured with NVRTC 12.9 on this project's machine, a
/// fused element-wise kernel took 66 ms to a cubin as one translation unit
/// and 37 ms with the prelude precompiled (the first compile of a process,
/// which builds the precompiled header, 107 ms).
pub fn compile(name: &str, source: &str, target: &Target) -> Result<Compiled> {
    load()?;
    if let Some(kernels) = source.strip_prefix(prelude_text()) {
        if pch_usable() {
            let including = format!("#include \"{PRELUDE_HEADER}\"\n{kernels}");
            let mut with_pch = options(target);
            with_pch.push("-pch".to_string());
            let header = Some((PRELUDE_HEADER, prelude_text()));
            if let Ok(compiled) = run(name, &including, header, &with_pch, target) {
                return Ok(compiled);
            }
            // One translation unit reports any error against the whole
            // source; if it compiles, the precompiled header was at fault
            // and is not tried again.
            let plain = run(name, source, None, &options(target), target)?;
            PCH_FAILED.store(true, Ordering::Relaxed);
            return Ok(plain);
        }
    }
    run(name, source, None, &options(target), target)
}

/// The name under which generated kernels include the precompiled prelude.
const PRELUDE_HEADER: &str = "lazyfuse_prelude.cuh";

/// Set when a compile with the precompiled prelude failed where one
/// translation unit compiled: the process stops using it.
static PCH_FAILED: AtomicBool = AtomicBool::new(false);

/// The prelude every generated kernel begins with, printed once.
fn prelude_text() -> &'static str {
    static PRELUDE: OnceLock<String> = OnceLock::new();
    PRELUDE.get_or_init(super::cuda::prelude)
}

/// Whether to precompile the prelude: NVRTC 12.8 or later (automatic PCH),
/// and it has not failed in this process.
fn pch_usable() -> bool {
    !PCH_FAILED.load(Ordering::Relaxed) && version().is_ok_and(|v| v >= (12, 8))
}

/// One NVRTC compile of `source` with `options`, and `header` (name, text)
/// available to its `#include`s.
fn run(
    name: &str,
    source: &str,
    header: Option<(&str, &str)>,
    options: &[String],
    target: &Target,
) -> Result<Compiled> {
    let nul =
        |what: &str| Error::internal("nvrtc", format!("{what} of {name} contains a NUL byte"));
    let src = CString::new(source).map_err(|_| nul("the source"))?;
    let file = CString::new(format!("{name}.cu")).map_err(|_| nul("the name"))?;
    let (header_text, header_name) = match header {
        Some((name, text)) => (
            Some(CString::new(text).map_err(|_| nul("a header"))?),
            Some(CString::new(name).map_err(|_| nul("a header name"))?),
        ),
        None => (None, None),
    };
    let texts: Vec<*const std::ffi::c_char> = header_text.iter().map(|c| c.as_ptr()).collect();
    let names: Vec<*const std::ffi::c_char> = header_name.iter().map(|c| c.as_ptr()).collect();
    let mut raw = std::mem::MaybeUninit::uninit();
    // SAFETY: every pointer is a live NUL-terminated string for the call;
    // `texts` and `names` both have `texts.len()` entries; NVRTC copies them.
    unsafe {
        sys::nvrtcCreateProgram(
            raw.as_mut_ptr(),
            src.as_ptr(),
            file.as_ptr(),
            texts.len() as i32,
            texts.as_ptr(),
            names.as_ptr(),
        )
    }
    .result()
    .map_err(|e| nvrtc_error("nvrtcCreateProgram", e))?;
    // SAFETY: nvrtcCreateProgram succeeded, so it wrote the program.
    let program = Program(unsafe { raw.assume_init() });
    // SAFETY: the program is live and the options are valid C strings.
    let compiled = unsafe { result::compile_program(program.0, options) };
    let log = log(&program);
    if compiled.is_err() {
        return Err(Error::Compile {
            kernel: name.to_string(),
            source_code: source.to_string(),
            log,
        });
    }
    let image = match target {
        // SAFETY: the program compiled; get_ptx sizes its buffer first.
        Target::Ptx(_) => unsafe { result::get_ptx(program.0) }
            .map_err(|e| nvrtc_error("nvrtcGetPTX", e))?
            .into_iter()
            .map(|c| c as u8)
            .take_while(|&b| b != 0)
            .collect(),
        Target::Cubin(_) => cubin(&program)?,
    };
    Ok(Compiled { image, log })
}

fn cubin(program: &Program) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: the program compiled for a real architecture; `size` is writable.
    unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) }
        .result()
        .map_err(|e| nvrtc_error("nvrtcGetCUBINSize", e))?;
    if size == 0 {
        return Err(Error::internal("nvrtc", "NVRTC returned an empty cubin"));
    }
    let mut image = vec![0u8; size];
    // SAFETY: `image` has the `size` bytes NVRTC asked for.
    unsafe { sys::nvrtcGetCUBIN(program.0, image.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| nvrtc_error("nvrtcGetCUBIN", e))?;
    Ok(image)
}

/// Parses ptxas's `-v` report: one entry per kernel.
pub fn resources(log: &str) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            kernels.push(KernelResources {
                name,
                ..KernelResources::default()
            });
        } else if let Some(current) = kernels.last_mut() {
            let number_before = |key: &str| -> Option<u32> {
                let head = line.split(key).next()?;
                head.split_whitespace().last()?.parse().ok()
            };
            if line.contains(" bytes stack frame") {
                current.stack_bytes = number_before(" bytes stack frame").unwrap_or(0);
            }
            if line.contains("bytes spill stores") {
                current.spill_stores = number_before(" bytes spill stores").unwrap_or(0);
                let loads = line.split("spill stores,").nth(1).unwrap_or_default();
                current.spill_loads = loads
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
            }
            if line.contains(" registers") {
                current.registers = number_before(" registers").unwrap_or(0);
            }
        }
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With NVRTC 12.8+ a kernel after the prelude compiles through the
    /// precompiled header, to the same PTX as one translation unit (this
    /// needs NVRTC: without it there is nothing to check).
    #[test]
    fn the_precompiled_prelude_gives_the_same_ptx() {
        if load().is_err() {
            return;
        }
        let kernel = "extern \"C\" __global__ void k(float* x, int n) {\n\
                      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                      if (i < n) x[i] = lf_sin(lf_add(x[i], 1.0f));\n}\n";
        let source = format!("{}{kernel}", prelude_text());
        let target = Target::Ptx("compute_80".into());
        let plain = run("k", &source, None, &options(&target), &target).unwrap();
        for _ in 0..2 {
            let compiled = compile("k", &source, &target).unwrap();
            assert_eq!(compiled.image, plain.image);
        }
        if version().unwrap() >= (12, 8) {
            assert!(pch_usable(), "the precompiled prelude failed:\n{source}");
        }
    }

    #[test]
    fn the_target_is_the_devices_cubin_or_older_ptx() {
        let known = [50, 52, 60, 70, 75, 80, 86, 89, 90];
        assert_eq!(
            target_for((8, 6), &known),
            Some(Target::Cubin("sm_86".into()))
        );
        assert_eq!(
            target_for((12, 0), &known),
            Some(Target::Ptx("compute_90".into()))
        );
        assert_eq!(
            target_for((8, 7), &known),
            Some(Target::Ptx("compute_86".into()))
        );
        assert_eq!(target_for((3, 5), &known), None);
    }

    #[test]
    fn ptxas_reports_are_parsed() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_80'\n\
                   ptxas info    : Function properties for k\n\
                   8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
                   ptxas info    : Used 18 registers, 380 bytes cmem[0]\n";
        let report = resources(log);
        assert_eq!(
            report,
            vec![KernelResources {
                name: "k".into(),
                registers: 18,
                spill_stores: 4,
                spill_loads: 12,
                stack_bytes: 8,
            }]
        );
    }
}
