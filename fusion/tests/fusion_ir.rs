//! The fusion pipeline on its own: passes, structural hashing, verification.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use lazyfuse_core::{Array, BinaryOp, DType, ExprGraph, Options, ReferenceEngine, Session};
use lazyfuse_fusion::{compile, FusionOptions, Inst, Program};

fn session() -> Session {
    Session::new(Arc::new(ReferenceEngine::new()), Options::default())
}

fn program_with(arrays: &[&Array], options: &FusionOptions) -> Program {
    let roots: Vec<_> = arrays.iter().map(|a| a.node()).collect();
    compile(&ExprGraph::from_roots(&roots), options).unwrap()
}

fn program_of(arrays: &[&Array]) -> Program {
    program_with(arrays, &FusionOptions::default())
}

fn count(p: &Program, op: BinaryOp) -> usize {
    p.launches[0]
        .kernel
        .body
        .insts
        .iter()
        .filter(|i| matches!(i, Inst::Binary(o, ..) if *o == op))
        .count()
}

#[test]
fn structural_hash_ignores_sizes_and_constants() {
    let cx = session();
    let small = cx.from_slice(&[1.0f32, 2.0]);
    let big = cx.from_vec(vec![1.0f32; 1000], &[1000]).unwrap();
    let p1 = program_of(&[&(&small * 2.0 + 1.0)]);
    let p2 = program_of(&[&(&big * 7.5 + 3.0)]);
    let (k1, k2) = (&p1.launches[0].kernel, &p2.launches[0].kernel);
    assert_eq!(k1.structural_hash(), k2.structural_hash());
    assert_eq!(k1.name(), k2.name());
    assert_ne!(
        p1.launches[0].args, p2.launches[0].args,
        "constants are arguments"
    );
    // A different dtype or operation is a different kernel.
    let p3 = program_of(&[&(&small.astype(DType::F64) * 2.0 + 1.0)]);
    let p4 = program_of(&[&(&small * 2.0 - 1.0)]);
    assert_ne!(
        k1.structural_hash(),
        p3.launches[0].kernel.structural_hash()
    );
    assert_ne!(
        k1.structural_hash(),
        p4.launches[0].kernel.structural_hash()
    );
}

#[test]
fn passes_simplify_before_fusion() {
    let cx = session();
    let a = cx.from_slice(&[1i32, 2]);
    let b = cx.from_slice(&[3i32, 4]);
    // CSE: (a - b) twice; integer no-ops: * 1, + 0; constant folding: 2 * 3.
    let six = cx.full(&[], 2, DType::I32) * 3;
    let x = ((&a - &b) * (&a - &b) * 1 + 0) * six;
    let p = program_of(&[&x]);
    assert_eq!(p.launches.len(), 1);
    assert_eq!(count(&p, BinaryOp::Sub), 1, "{}", p.launches[0].kernel);
    assert_eq!(count(&p, BinaryOp::Mul), 2, "{}", p.launches[0].kernel);
    assert_eq!(count(&p, BinaryOp::Add), 0, "{}", p.launches[0].kernel);
    assert_eq!(p.launches[0].args.len(), 1, "only the folded 6 remains");
    // Floats keep x + 0 (it turns -0.0 into +0.0).
    let f = cx.from_slice(&[-0.0f32]);
    let p = program_of(&[&(&f + 0.0)]);
    assert_eq!(count(&p, BinaryOp::Add), 1, "{}", p.launches[0].kernel);
}

#[test]
fn every_kernel_verifies_and_fusion_off_gives_one_kernel_per_op() {
    let cx = session();
    let a = cx
        .from_vec((0..12).map(|v| v as f64).collect(), &[3, 4])
        .unwrap();
    let e = (&a.transpose() * 2.0 + 1.0).exp().mean_axis(0);
    let fused = program_of(&[&e]);
    assert_eq!(fused.launches.len(), 1);
    let unfused = program_with(
        &[&e],
        &FusionOptions {
            enabled: false,
            ..FusionOptions::default()
        },
    );
    assert_eq!(unfused.launches.len(), 5, "mul, add, exp, sum, divide");
    for l in fused.launches.iter().chain(&unfused.launches) {
        l.kernel.verify().unwrap();
    }
}

#[test]
fn body_limits_split_kernels_and_say_so() {
    let cx = session();
    let mut x = cx.from_slice(&[0.5f64]);
    for _ in 0..50 {
        x = x.sin();
    }
    let options = FusionOptions {
        max_body: 100,
        ..FusionOptions::default()
    };
    let p = program_with(&[&x], &options);
    assert!(p.launches.len() >= 4, "{} launches", p.launches.len());
    assert!(
        p.notes.iter().any(|n| n.contains("split before")),
        "{:?}",
        p.notes
    );
}

/// A value costing more than the recompute limit: four transcendental
/// functions of `a`.
fn costly(a: &Array) -> Array {
    a.exp().sin().log1p().tanh()
}

#[test]
fn a_costly_shared_value_is_computed_once_in_one_multi_output_kernel() {
    let cx = session();
    let a = cx.from_vec(vec![0.5f64; 64], &[8, 8]).unwrap();
    let x = costly(&a);
    let (y, z) = (&x * 2.0, &x + 1.0);
    let p = program_of(&[&y, &z]);
    assert_eq!(p.launches.len(), 1, "{:?}", p.notes);
    assert_eq!(p.launches[0].outputs.len(), 2);
    let exps = p.launches[0]
        .kernel
        .body
        .insts
        .iter()
        .filter(|i| matches!(i, Inst::Unary(lazyfuse_core::UnaryOp::Exp, _)))
        .count();
    assert_eq!(exps, 1, "computed once");
    assert!(
        p.notes.iter().any(|n| n.contains("computed once inside")),
        "{:?}",
        p.notes
    );
    // With the rule off, the cost rule stores it: a kernel for it, one per reader.
    let stored = program_with(
        &[&y, &z],
        &FusionOptions {
            share_within_domains: false,
            ..FusionOptions::default()
        },
    );
    assert_eq!(stored.launches.len(), 3, "{:?}", stored.notes);
}

#[test]
fn a_shared_value_read_through_a_view_or_by_a_reduction_is_stored() {
    let cx = session();
    let a = cx.from_vec(vec![0.5f64; 64], &[8, 8]).unwrap();
    let x = costly(&a);
    // Read transposed by one reader: the readers index it differently.
    let p = program_of(&[&(&x * 2.0), &(x.transpose() + 1.0)]);
    assert!(p.launches.len() >= 2, "{:?}", p.notes);
    assert!(p.notes.iter().any(|n| n.contains("materialised once")));
    // Read by a reduction too: another domain.
    let p = program_of(&[&(&x * 2.0), &x.sum()]);
    assert!(p.notes.iter().any(|n| n.contains("materialised once")));
}

#[test]
fn merging_that_would_make_a_cycle_stores_the_shared_value_instead() {
    // y and z share x, but z reads a reduction of y: one kernel of both
    // would read its own output. The program stores x instead. (64
    // elements: too many for the sum to be unrolled into z.)
    let cx = session();
    let a = cx.from_vec(vec![0.25f64; 64], &[64]).unwrap();
    let x = costly(&a);
    let y = &x * 2.0;
    let z = &x + y.sum();
    let p = program_of(&[&y, &z]);
    assert_eq!(p.launches.len(), 4, "x, y, the sum, z: {:?}", p.notes);
    assert!(p.notes.iter().any(|n| n.contains("materialised once")));
    for l in &p.launches {
        l.kernel.verify().unwrap();
    }
}

#[test]
fn a_long_chain_of_costly_shared_values_partitions_and_verifies() {
    // Each value is read twice and costs more than the recompute limit:
    // every one is a candidate for the sharing rule (judged in one pass
    // over the graph's edges); sharing them all would make one body past
    // the limit, so they are stored and the chain split.
    let cx = session();
    let mut x = cx.from_slice(&[0.5f64, 0.25]);
    for _ in 0..20_000 {
        let y = costly(&x);
        x = &y * 0.5 + &y;
    }
    let p = program_of(&[&x]);
    assert!(p.launches.len() > 1, "split by the body limit");
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("they are stored instead")),
        "{:?}",
        &p.notes[p.notes.len().saturating_sub(3)..]
    );
    for l in &p.launches {
        l.kernel.verify().unwrap();
    }
}

fn rows_on() -> FusionOptions {
    FusionOptions {
        row_programs: true,
        ..FusionOptions::default()
    }
}

/// Softmax and layer norm over rows: their reductions and the element-wise
/// work reading them back become one row program, whose row values are
/// never stored; without the option (a runtime that does not run row
/// programs) they stay three kernels. Over the leading axis, a column
/// program.
#[test]
fn reductions_read_back_over_their_rows_become_one_row_program() {
    let cx = session();
    // More than 16 rows: the column reduction below is not unrolled.
    let x = cx.from_vec(vec![0.5f32; 20 * 40], &[20, 40]).unwrap();
    let e = (&x - &x.max_axes(&[1], true)).exp();
    let softmax = &e / &e.sum_axes(&[1], true);
    let mean = x.mean_axes(&[-1], true);
    let centred = &x - &mean;
    let var = (&centred * &centred).mean_axes(&[-1], true);
    let norm = &centred / (&var + 1e-5).sqrt() * 2.0 + 1.0;
    for (out, stages) in [(&softmax, 2), (&norm, 2)] {
        let program = program_with(&[out], &rows_on());
        assert_eq!(program.launches.len(), 1, "{}", program.launches[0].kernel);
        let kernel = &program.launches[0].kernel;
        assert_eq!(kernel.stages.len(), stages, "{kernel}");
        assert!(kernel.name().starts_with("lf_row_"));
        // Only the input and the output are buffers.
        assert_eq!(program.buffers.len(), 2);
        kernel.verify().unwrap();
        let split = lazyfuse_fusion::rows::split(kernel).unwrap();
        assert_eq!(split.len(), stages + 1);
        split.iter().for_each(|k| k.verify().unwrap());
        assert_eq!(program_of(&[out]).launches.len(), 3);
    }
    // A row value also demanded, or read other than over the rows, is
    // stored: no row program.
    let m = x.max_axes(&[1], true);
    let shifted = &x - &m;
    assert_eq!(program_with(&[&shifted, &m], &rows_on()).launches.len(), 2);
    let across = &x.transpose() - &x.max_axes(&[1], false);
    assert_eq!(program_with(&[&across], &rows_on()).launches.len(), 2);
    // Over the leading axis: a column program.
    let column = &x - &x.max_axes(&[0], true);
    let program = program_with(&[&column], &rows_on());
    assert_eq!(program.launches.len(), 1);
    assert!(program.launches[0].kernel.reduces_leading_axes());
    assert!(!program_with(&[&softmax], &rows_on()).launches[0]
        .kernel
        .reduces_leading_axes());
}

/// logsumexp: the maximum, the sum of `exp(x - max)` and `max + log(sum)`
/// over the rows (with or without `keepdims`) are one row program whose
/// output is per row; an end reading anything but the row values stays a
/// kernel of its own.
#[test]
fn an_end_over_the_rows_is_computed_once_per_row() {
    let cx = session();
    let x = cx.from_vec(vec![0.5f32; 20 * 40], &[20, 40]).unwrap();
    for keepdims in [false, true] {
        let m = x.max_axes(&[1], keepdims);
        let shifted = match keepdims {
            true => &x - &m,
            false => &x - &m.reshape(&[20, 1]),
        };
        let lse = &m + shifted.exp().sum_axes(&[1], keepdims).log();
        let program = program_with(&[&lse], &rows_on());
        assert_eq!(program.launches.len(), 1, "{}", program.launches[0].kernel);
        let kernel = &program.launches[0].kernel;
        assert!(kernel.per_row && !kernel.writes_domain(), "{kernel}");
        assert_eq!(kernel.stages.len(), 2, "{kernel}");
        kernel.verify().unwrap();
        // The input and the result.
        assert_eq!(program.buffers.len(), 2);
    }
    // `m + y` reads another input over the rows: not per row.
    let m = x.max_axes(&[1], false);
    let y = cx.from_vec(vec![1.0f32; 20], &[20]).unwrap();
    let sum = (&x - &m.reshape(&[20, 1])).exp().sum_axes(&[1], false);
    let other = &(&m + &sum) + &y;
    let program = program_with(&[&other], &rows_on());
    assert!(program.launches.iter().all(|l| !l.kernel.per_row));
}

/// The CPU's split of softmax computes `exp(x - max)` once per element,
/// into a tile buffer that the sum and the division read; layer norm has
/// no such value and splits as for a device.
#[test]
fn the_tile_split_stores_a_costly_value_that_several_parts_read() {
    use lazyfuse_core::UnaryOp;
    use lazyfuse_fusion::rows::{tile_split, Source, Writes};
    let cx = session();
    let x = cx.from_vec(vec![0.5f32; 6 * 40], &[6, 40]).unwrap();
    let e = (&x - &x.max_axes(&[1], true)).exp();
    let softmax = &e / &e.sum_axes(&[1], true);
    let program = program_with(&[&softmax], &rows_on());
    let split = tile_split(&program.launches[0].kernel).unwrap();
    let writes: Vec<&Writes> = split.parts.iter().map(|p| &p.writes).collect();
    assert_eq!(
        writes,
        [
            &Writes::Row(0),
            &Writes::Stored(vec![0]),
            &Writes::Row(1),
            &Writes::Outputs
        ]
    );
    let exps: usize = split
        .parts
        .iter()
        .map(|p| {
            let body = &p.kernel.body.insts;
            body.iter()
                .filter(|i| matches!(i, Inst::Unary(UnaryOp::Exp, _)))
                .count()
        })
        .sum();
    assert_eq!(exps, 1);
    assert!(split.parts[3].sources.contains(&Source::Stored(0)));
    assert!(split.parts[3].sources.contains(&Source::Row(1)));
    for part in &split.parts {
        part.kernel.verify().unwrap();
        assert_eq!(part.kernel.inputs.len(), part.sources.len());
    }
    let mean = x.mean_axes(&[-1], true);
    let centred = &x - &mean;
    let var = (&centred * &centred).mean_axes(&[-1], true);
    let norm = &centred / (&var + 1e-5).sqrt();
    let program = program_with(&[&norm], &rows_on());
    assert_eq!(
        tile_split(&program.launches[0].kernel).unwrap().parts.len(),
        3
    );
}
