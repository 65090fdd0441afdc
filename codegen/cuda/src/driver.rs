//! Finding a usable GPU without ever panicking: the driver library, its
//! initialisation, the device count, and NVRTC, each failure a reason.

use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::driver::{result, sys, CudaContext, DriverError};
use lazyfuse_core::{Error, Result};

use lazyfuse_device::nvrtc;

/// A driver error as lazyfuse's [`Error::Device`], naming the CUDA error.
pub fn device_error(op: impl Into<String>, e: DriverError) -> Error {
    let detail = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error::Device {
        op: op.into(),
        message: format!("{:?}: {detail}", e.0),
    }
}

/// True when a device error means out of memory.
pub fn is_out_of_memory(error: &Error) -> bool {
    matches!(error, Error::Device { message, .. } if message.contains("CUDA_ERROR_OUT_OF_MEMORY"))
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        backend: "cuda".to_string(),
        reason: reason.into(),
    }
}

/// Runs a call into cudarc, turning a panic inside it (cudarc panics, for
/// example, when a library it expects cannot be loaded) into an error.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic inside cudarc".to_string());
        Err(unavailable(format!("{what}: {message}")))
    })
}

/// Checks, in order, that the driver library loads, initialises, has device
/// `ordinal`, and that NVRTC is available. `Err` carries the first reason.
pub fn probe(ordinal: usize) -> Result<usize> {
    // SAFETY: only probes whether a library of the expected name loads.
    if !unsafe { sys::is_culib_present() } {
        return Err(unavailable(
            "no CUDA driver library (libcuda.so) was found: no NVIDIA driver is installed",
        ));
    }
    guarded("cuInit", || {
        result::init()
            .map_err(|e| unavailable(format!("cuInit failed: {}", device_error("cuInit", e))))
    })?;
    let count = guarded("cuDeviceGetCount", || {
        CudaContext::device_count().map_err(|e| device_error("cuDeviceGetCount", e))
    })?;
    let count = usize::try_from(count).unwrap_or(0);
    if ordinal >= count {
        return Err(unavailable(format!(
            "device {ordinal} was requested and {count} CUDA device(s) are present"
        )));
    }
    nvrtc::load().map_err(|e| unavailable(format!("a GPU is present but NVRTC is not: {e}")))?;
    compiles_the_prelude()?;
    Ok(count)
}

/// Compiles the prelude once per process, so that missing CUDA headers make
/// the backend unavailable up front rather than failing the first launch.
pub(crate) fn compiles_the_prelude() -> Result<()> {
    static CHECKED: std::sync::OnceLock<std::result::Result<(), String>> =
        std::sync::OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let arch = nvrtc::supported_archs()
                .ok()
                .and_then(|a| a.first().copied())
                .unwrap_or(52);
            let source =
                lazyfuse_device::cuda::prelude() + "extern \"C\" __global__ void lf_probe() {}\n";
            nvrtc::compile(
                "lf_probe",
                &source,
                &nvrtc::Target::Ptx(format!("compute_{arch}")),
            )
            .map(|_| ())
            .map_err(|e| match e {
                Error::Compile { log, .. } => format!(
                    "NVRTC cannot compile lazyfuse's kernels (are cuda_fp16.h and cuda_bf16.h \
                         found? set {}): {log}",
                    nvrtc::INCLUDE_ENV
                ),
                other => other.to_string(),
            })
        })
        .clone()
        .map_err(unavailable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_is_recognised_by_its_cuda_name() {
        let oom = Error::Device {
            op: "cuMemAlloc".into(),
            message: "CUDA_ERROR_OUT_OF_MEMORY: out of memory".into(),
        };
        assert!(is_out_of_memory(&oom));
        assert!(!is_out_of_memory(&Error::internal("x", "y")));
    }

    #[test]
    fn a_panic_inside_cudarc_becomes_an_error() {
        let err = guarded("test call", || -> Result<()> { panic!("library missing") });
        let text = err.unwrap_err().to_string();
        assert!(
            text.contains("test call") && text.contains("library missing"),
            "{text}"
        );
    }

    #[test]
    fn the_prelude_check_passes_where_nvrtc_and_the_headers_are() {
        if nvrtc::load().is_err() {
            return; // device.rs's NVRTC tests say SKIPPED (or fail when required).
        }
        if let Err(e) = compiles_the_prelude() {
            panic!("{e}");
        }
    }

    #[test]
    fn probing_without_a_device_never_panics() {
        // On a machine with a GPU this succeeds; elsewhere it explains why not.
        match probe(0) {
            Ok(count) => assert!(count >= 1),
            Err(Error::BackendUnavailable { backend, reason }) => {
                assert_eq!(backend, "cuda");
                assert!(!reason.is_empty());
                eprintln!("note: no usable GPU here: {reason}");
            }
            Err(other) => panic!("unexpected error kind: {other:?}"),
        }
        assert!(probe(usize::MAX).is_err());
    }
}
