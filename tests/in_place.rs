//! User kernels writing a temporary in place. Values are immutable, so a
//! kernel writes new versions of its written arguments; on the CPU a
//! written argument that is a temporary dying with the launch (read by
//! nothing after it, not demanded) is written in place instead of copied.
//! `Stats::argument_copy_bytes` counts the copies. These tests check that
//! the copies go, and that nothing still readable is ever overwritten.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::kernel::{Kernel, Val};
use lazyfuse::{assign_region, matmul, Array, Context, DType, Region, Result};

/// `x` with each quarter `q` set to `-q`, by four region assignments in a
/// row (what `concatenate` and repeated slice assignment build).
fn quarters_assigned(cx: &Context, x: &Array, n: usize) -> Result<Array> {
    let mut y = x.clone();
    for q in 0..4 {
        let region = Region {
            start: (q * n / 4) as i64,
            step: 1,
            len: n / 4,
        };
        y = assign_region(&y, &[region], &cx.from_slice(&[-(q as f64)]))?;
    }
    Ok(y)
}

#[test]
fn a_chain_of_region_assignments_copies_its_array_once_on_the_cpu() -> Result<()> {
    let n = 1 << 16;
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let want: Vec<f64> = (0..n).map(|i| -((i * 4 / n) as f64)).collect();
    for cx in common::backends() {
        let x = cx.from_slice(&data);
        let y = quarters_assigned(&cx, &x, n)?;
        let before = cx.stats().argument_copy_bytes;
        assert_eq!(y.to_vec::<f64>()?, want, "{}", cx.backend_name());
        let copied = cx.stats().argument_copy_bytes - before;
        // The input is the user's: its value stays.
        assert_eq!(x.to_vec::<f64>()?, data, "{}", cx.backend_name());
        if cx.backend_name() == "cpu" {
            // The first kernel copies `x`; each later one writes the
            // previous one's result, which dies with it, in place.
            assert_eq!(copied, 8 * n as u64, "{}", y.explain());
        }
    }
    Ok(())
}

#[test]
fn a_temporary_read_after_the_kernel_is_copied_not_overwritten() -> Result<()> {
    let n = 64;
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let first = Region {
        start: 0,
        step: 2,
        len: n / 2,
    };
    let second = Region {
        start: 1,
        step: 2,
        len: n / 2,
    };
    for cx in common::backends() {
        let x = cx.from_slice(&data);
        let a = assign_region(&x, &[first], &cx.from_slice(&[100.0f64]))?;
        let b = assign_region(&a, &[second], &cx.from_slice(&[200.0f64]))?;
        // `a` is read by `b`'s kernel and by `c`, demanded together.
        let c = &a + 1.0;
        cx.eval(&[&b, &c])?;
        let a_want: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { 100.0 } else { i as f64 })
            .collect();
        let b_want: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { 100.0 } else { 200.0 })
            .collect();
        let c_want: Vec<f64> = a_want.iter().map(|v| v + 1.0).collect();
        let name = cx.backend_name();
        assert_eq!(b.to_vec::<f64>()?, b_want, "{name}");
        assert_eq!(c.to_vec::<f64>()?, c_want, "{name}");
        assert_eq!(a.to_vec::<f64>()?, a_want, "{name}");
        // A demanded intermediate is kept, never written in place.
        cx.eval(&[&a, &b])?;
        assert_eq!(a.to_vec::<f64>()?, a_want, "{name}");
    }
    Ok(())
}

/// `out[i] = input[n - 1 - i]`: wrong if `out` and `input` share memory.
fn reverse() -> Kernel {
    Kernel::build("reverse", |k| {
        let out = k.array_mut("out", DType::F64, 1);
        let input = k.array("input", DType::F64, 1);
        let n = k.scalar("n", DType::I64);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(&n), |k| {
            let from = k.let_(&n - &i - Val::from(1i64));
            k.store(&out, &i, input.at(&from));
        });
    })
    .unwrap()
}

#[test]
fn a_temporary_passed_twice_is_not_written_under_its_own_reads() -> Result<()> {
    let n = 1000;
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let want: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
    for cx in common::backends() {
        // A temporary dying with the launch, passed as both arguments.
        let t = &cx.from_slice(&data) + 1.0;
        let reversed = reverse().launch(
            &cx,
            (n as u32).div_ceil(128),
            128u32,
            &[(&t).into(), (&t).into(), (n as i64).into()],
        )?;
        assert_eq!(reversed[0].to_vec::<f64>()?, want, "{}", cx.backend_name());
    }
    Ok(())
}

/// The shared suite's backends that check every index a user kernel
/// uses: all but `cuda`, whose kernels, like CUDA C's and Numba's without
/// `debug=True`, do not (an access outside an array is undefined there).
fn checking_backends() -> Vec<Context> {
    common::backends()
        .into_iter()
        .filter(|cx| cx.backend_name() != "cuda")
        .collect()
}

#[test]
fn an_access_outside_a_temporary_written_in_place_is_an_error() -> Result<()> {
    let n = 100;
    // One element too many: thread n writes out[n].
    let overrun = Kernel::build("overrun", |k| {
        let out = k.array_mut("out", DType::F64, 1);
        let n = k.scalar("n", DType::I64);
        let i = k.grid(1).remove(0);
        k.if_(i.le(&n), |k| k.store(&out, &i, 1.0f64));
    })?;
    for cx in checking_backends() {
        let t = &cx.from_slice(&vec![0.0f64; n]) + 1.0;
        let written = overrun.launch(&cx, 1u32, 128u32, &[(&t).into(), (n as i64).into()])?;
        let err = written[0].to_vec::<f64>().unwrap_err().to_string();
        // On the CPU, from `t` as the kernel left it, written in place.
        assert!(
            err.contains("out[100] outside its 100 elements"),
            "{}: {err}",
            cx.backend_name()
        );
    }
    Ok(())
}

#[test]
fn a_matrix_product_writes_its_fresh_result_in_place() -> Result<()> {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32; 64 * 32]).reshape(&[64, 32]);
    let b = cx.from_slice(&[2.0f32; 32 * 16]).reshape(&[32, 16]);
    let before = cx.stats().argument_copy_bytes;
    let c = matmul(&a, &b)?;
    assert_eq!(c.to_vec::<f32>()?, vec![64.0f32; 64 * 16]);
    assert_eq!(
        cx.stats().argument_copy_bytes - before,
        0,
        "{}",
        c.explain()
    );
    Ok(())
}

#[test]
fn an_access_the_simulator_cannot_meet_again_is_still_an_error() -> Result<()> {
    // One thread: `v = out[0]; out[0] = 0; out[v] = 1`. From `out[0] ==
    // 100` it writes out[100], outside; run again from the array as it
    // left it, it writes out[0].
    let jump = Kernel::build("jump", |k| {
        let out = k.array_mut("out", DType::I64, 1);
        let v = k.let_(out.at(0i64));
        k.store(&out, 0i64, 0i64);
        k.store(&out, &v, 1i64);
    })?;
    let n = 100;
    for cx in checking_backends() {
        let mut start = vec![0i64; n];
        start[0] = 99;
        let t = &cx.from_slice(&start) + 1i64;
        let written = jump.launch(&cx, 1u32, 1u32, &[(&t).into()])?;
        let err = written[0].to_vec::<i64>().unwrap_err().to_string();
        assert!(err.contains("outside"), "{}: {err}", cx.backend_name());
        if cx.backend_name() == "cpu" {
            assert!(err.contains("on the 'sim' backend"), "{err}");
        }
    }
    Ok(())
}

#[test]
fn an_intermediate_kernel_result_with_a_handle_is_kept_and_one_without_is_not() -> Result<()> {
    let n = 1000;
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let cx = Context::cpu();
    let x = cx.from_slice(&data);
    let half = Region {
        start: 0,
        step: 1,
        len: n / 2,
    };
    let a = assign_region(&x, &[half], &cx.from_slice(&[1.0f64]))?;
    let b = assign_region(&a, &[half], &cx.from_slice(&[2.0f64]))?;
    b.eval()?;
    // `a` has a handle: its value was kept, so reading it launches nothing.
    let launches = cx.stats().kernel_launches;
    assert_eq!(a.to_vec::<f64>()?[..2], [1.0, 1.0]);
    assert_eq!(cx.stats().kernel_launches, launches);
    // Without one, the chain's intermediate died in the demand: `b`'s
    // kernel wrote it in place.
    let c = assign_region(
        &assign_region(&x, &[half], &cx.from_slice(&[3.0f64]))?,
        &[half],
        &cx.from_slice(&[4.0f64]),
    )?;
    let before = cx.stats().argument_copy_bytes;
    assert_eq!(c.to_vec::<f64>()?[..2], [4.0, 4.0]);
    assert_eq!(cx.stats().argument_copy_bytes - before, 8 * n as u64);
    Ok(())
}
