//! `print` in user kernels (Numba's `print` in `@cuda.jit`): the printed
//! CUDA is one `printf` per call, with a conversion per dtype, and compiles
//! with NVRTC. (What the simulator writes is checked from Python, where the
//! test reads the process's standard output.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::kernel::{Kernel, Printed};
use lazyfuse::DType;

fn printing() -> Kernel {
    Kernel::build("printing", |k| {
        let x = k.array_mut("x", DType::F32, 1);
        let h = k.array("h", DType::F16, 1);
        let i = k.grid(1).remove(0);
        let value = x.at(&i);
        k.print([
            Printed::Text("thread ".into()),
            Printed::Value(i.clone()),
            Printed::Text(" 100% ".into()),
            Printed::Value(value.clone()),
            Printed::Text(" ".into()),
            Printed::Value(value.gt(0.0f32)),
            Printed::Text(" ".into()),
            Printed::Value(h.at(&i)),
            Printed::Text(" ".into()),
            Printed::Value(i.cast(DType::U32)),
        ]);
        k.store(&x, &i, value);
    })
    .unwrap()
}

#[test]
fn a_print_is_one_printf_with_a_conversion_per_dtype() {
    let source = printing().cuda_source();
    assert!(
        source.contains("printf(\"thread %lld 100%% %f %s %f %llu\\n\", (long long)(",),
        "{source}"
    );
    assert!(source.contains("? \"True\" : \"False\""), "{source}");
    assert!(source.contains("(double)__half2float("), "{source}");
}

#[test]
fn the_printed_cuda_of_a_print_compiles_with_nvrtc() {
    if !common::nvrtc_or_skip("the_printed_cuda_of_a_print_compiles_with_nvrtc") {
        return;
    }
    let kernel = printing();
    for arch in ["sm_80", "sm_90"] {
        common::compiles_without_spills(kernel.name(), &kernel.cuda_source(), arch);
    }
}
