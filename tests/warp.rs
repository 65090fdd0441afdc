//! Warp operations of user kernels (`WarpOp`: Numba's `shfl_sync` family,
//! `ballot_sync`, `all_sync`, `any_sync`, `activemask`) on every backend
//! against their definitions written out here; the printed CUDA compiles
//! with NVRTC.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::kernel::{Kernel, WarpOp};
use lazyfuse::DType;

const THREADS: usize = 64;

/// Thread `t` writes, for its value `x[t]`: the four shuffles (lane 5, up
/// 3, down 3, xor 6), the ballot of `x > 10`, whether all or any lane of
/// the lower 16 holds `x > 10`, and the active mask where only even lanes
/// run.
fn warps() -> Kernel {
    Kernel::build("warps", |k| {
        let x = k.array("x", DType::F32, 1);
        let out = k.array_mut("out", DType::F32, 2);
        let bits = k.array_mut("bits", DType::U32, 2);
        let t = k.grid(1).remove(0);
        let v = x.at(&t);
        let full = 0xFFFF_FFFFi64;
        let shuffles = [
            (WarpOp::ShuffleIndex, 5i64),
            (WarpOp::ShuffleUp, 3),
            (WarpOp::ShuffleDown, 3),
            (WarpOp::ShuffleXor, 6),
        ];
        for (j, (op, lane)) in shuffles.into_iter().enumerate() {
            let got = k.warp(op, full, v.clone(), lane);
            k.store(&out, (t.clone(), j as i64), got);
        }
        let big = v.gt(10.0f32);
        let ballot = k.warp(WarpOp::Ballot, full, big.clone(), 0i64);
        k.store(&bits, (t.clone(), 0i64), ballot);
        let all = k.warp(WarpOp::All, 0xFFFFi64, big.clone(), 0i64);
        k.store(&bits, (t.clone(), 1i64), all);
        let any = k.warp(WarpOp::Any, 0xFFFFi64, big, 0i64);
        k.store(&bits, (t.clone(), 2i64), any);
        k.if_(t.rem(2i64).eq(0i64), |k| {
            let active = k.warp(WarpOp::ActiveMask, full, 0i64, 0i64);
            k.store(&bits, (t.clone(), 3i64), active);
        });
    })
    .unwrap()
}

#[test]
fn warp_operations_on_every_backend_match_their_definitions() {
    let x: Vec<f32> = (0..THREADS).map(|t| ((t * 7) % 23) as f32).collect();
    let kernel = warps();
    for cx in common::backends() {
        let xs = cx.from_vec(x.clone(), &[THREADS]).unwrap();
        let out = cx.zeros(&[THREADS, 4], DType::F32);
        let bits = cx.zeros(&[THREADS, 4], DType::U32);
        let results = kernel
            .launch(
                &cx,
                1u32,
                THREADS as u32,
                &[(&xs).into(), (&out).into(), (&bits).into()],
            )
            .unwrap();
        let out = results[0].to_vec::<f32>().unwrap();
        let bits = results[1].to_vec::<u32>().unwrap();
        for t in 0..THREADS {
            let (first, l) = (t - t % 32, t % 32);
            let from = |lane: usize| x[first + lane];
            let up = if l >= 3 { from(l - 3) } else { x[t] };
            let down = if l + 3 < 32 { from(l + 3) } else { x[t] };
            let want = [from(5), up, down, from(l ^ 6)];
            assert_eq!(
                &out[t * 4..t * 4 + 4],
                &want,
                "{} thread {t}",
                cx.backend_name()
            );
            let ballot = (0..32)
                .filter(|&u| from(u) > 10.0)
                .fold(0u32, |b, u| b | 1 << u);
            let lower = ballot & 0xFFFF;
            let (all, any) = (u32::from(lower == 0xFFFF), u32::from(lower != 0));
            let active = if t % 2 == 0 { 0x5555_5555 } else { 0 };
            assert_eq!(
                &bits[t * 4..t * 4 + 4],
                &[ballot, all, any, active],
                "{} thread {t}",
                cx.backend_name()
            );
        }
    }
}

#[test]
fn the_printed_cuda_of_the_warp_operations_compiles_with_nvrtc() {
    let source = warps().cuda_source();
    for function in [
        "__shfl_sync(",
        "__shfl_up_sync(",
        "__shfl_down_sync(",
        "__shfl_xor_sync(",
        "__ballot_sync(",
        "__all_sync(",
        "__any_sync(",
        "__activemask()",
    ] {
        assert!(source.contains(function), "{function}: {source}");
    }
    if !common::nvrtc_or_skip("the_printed_cuda_of_the_warp_operations_compiles_with_nvrtc") {
        return;
    }
    for arch in ["sm_80", "sm_90"] {
        common::compiles_without_spills("warps", &source, arch);
    }
}
