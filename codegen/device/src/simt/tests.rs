//! The simulator's strictness, on hand-written kernels.
use super::*;
use crate::ir::{ArgSource, Dim, GridRule, Param, ParamKind};

fn kernel(params: Vec<(ParamKind, ArgSource)>, vars: Vec<DType>, body: Vec<Stmt>) -> DeviceKernel {
    DeviceKernel {
        name: "test_kernel".to_string(),
        params: params
            .into_iter()
            .enumerate()
            .map(|(i, (kind, source))| Param {
                name: format!("p{i}"),
                kind,
                source,
            })
            .collect(),
        shared: Vec::new(),
        vars,
        body,
        block: 64,
        grid: GridRule::Single,
        independent: Vec::new(),
    }
}

fn tid() -> Expr {
    Expr::cast(DType::I32, Expr::Special(Special::ThreadIdx(Dim::X)))
}

fn int(v: i32) -> Expr {
    Expr::Const(Literal::of(v))
}

#[test]
fn an_out_of_bounds_read_names_the_kernel_thread_and_index() {
    let k = kernel(
        vec![(ParamKind::Input(DType::F32), ArgSource::InputBuffer(0))],
        vec![DType::F32],
        vec![Stmt::Let(
            Var(0),
            Expr::Load {
                param: 0,
                index: Box::new(tid()),
            },
        )],
    );
    let data = HostBuffer::F32(vec![1.0; 4]);
    let err = run(&k, Geometry::linear(1, 64), &mut [Binding::Read(&data)]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Device { .. }), "{err:?}");
    assert!(
        text.contains("test_kernel") && text.contains("thread 4 of block 0"),
        "{text}"
    );
    assert!(text.contains("p0[4] outside its 4 elements"), "{text}");
}

#[test]
fn a_guarded_read_is_fine_and_stores_land() {
    let k = kernel(
        vec![
            (ParamKind::Input(DType::F32), ArgSource::InputBuffer(0)),
            (ParamKind::Output(DType::F32), ArgSource::OutputBuffer(0)),
        ],
        vec![DType::F32],
        vec![Stmt::If {
            cond: Expr::index(IndexOp::Lt, tid(), int(4)),
            then: vec![
                Stmt::Let(
                    Var(0),
                    Expr::Load {
                        param: 0,
                        index: Box::new(tid()),
                    },
                ),
                Stmt::Store {
                    param: 1,
                    index: tid(),
                    value: Expr::Unary(lazyfuse_core::UnaryOp::Neg, Box::new(Expr::Var(Var(0)))),
                },
            ],
            otherwise: Vec::new(),
        }],
    );
    let data = HostBuffer::F32(vec![1.0, 2.0, 3.0, 4.0]);
    let mut out = HostBuffer::F32(vec![0.0; 4]);
    run(
        &k,
        Geometry::linear(1, 64),
        &mut [Binding::Read(&data), Binding::Write(&mut out)],
    )
    .unwrap();
    assert_eq!(out, HostBuffer::F32(vec![-1.0, -2.0, -3.0, -4.0]));
}

#[test]
fn a_barrier_in_divergent_code_is_an_error() {
    let k = kernel(
        Vec::new(),
        Vec::new(),
        vec![Stmt::If {
            cond: Expr::index(IndexOp::Lt, tid(), int(5)),
            then: vec![Stmt::Barrier],
            otherwise: Vec::new(),
        }],
    );
    let err = run(&k, Geometry::linear(1, 64), &mut [])
        .unwrap_err()
        .to_string();
    assert!(err.contains("__syncthreads"), "{err}");
}

#[test]
fn shuffle_down_reads_the_lane_below_within_its_warp() {
    let k = kernel(
        vec![(ParamKind::Output(DType::I32), ArgSource::OutputBuffer(0))],
        vec![DType::I32, DType::I32],
        vec![
            Stmt::Let(Var(0), tid()),
            Stmt::Let(Var(1), int(0)),
            Stmt::ShuffleDown {
                dst: Var(1),
                src: Var(0),
                delta: 1,
            },
            Stmt::Store {
                param: 0,
                index: tid(),
                value: Expr::Var(Var(1)),
            },
        ],
    );
    let mut out = HostBuffer::I32(vec![0; 64]);
    run(&k, Geometry::linear(1, 64), &mut [Binding::Write(&mut out)]).unwrap();
    let want: Vec<i32> = (0..64)
        .map(|t| if t % 32 == 31 { t } else { t + 1 })
        .collect();
    assert_eq!(out, HostBuffer::I32(want));
}

#[test]
fn a_shuffle_by_part_of_a_warp_is_an_error() {
    let k = kernel(
        Vec::new(),
        vec![DType::I32, DType::I32],
        vec![
            Stmt::Let(Var(0), tid()),
            Stmt::Let(Var(1), int(0)),
            Stmt::If {
                cond: Expr::index(IndexOp::Lt, tid(), int(16)),
                then: vec![Stmt::ShuffleDown {
                    dst: Var(1),
                    src: Var(0),
                    delta: 8,
                }],
                otherwise: Vec::new(),
            },
        ],
    );
    let err = run(&k, Geometry::linear(1, 64), &mut [])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("__shfl_down_sync") && err.contains("thread 16"),
        "{err}"
    );
}
