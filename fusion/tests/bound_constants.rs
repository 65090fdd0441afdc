//! Constants bound per demand: demands differing only in a random array's
//! key or a float operand share one cached program, and each runs with its
//! own values; constants the passes read keep programs apart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use lazyfuse_core::{Array, DType, ExprGraph, Literal, Options, ReferenceEngine, Session};
use lazyfuse_fusion::{FusionOptions, Program, ProgramCache};

fn session() -> Session {
    Session::new(Arc::new(ReferenceEngine::new()), Options::default())
}

fn graph(arrays: &[&Array]) -> ExprGraph {
    let roots: Vec<_> = arrays.iter().map(|a| a.node()).collect();
    ExprGraph::from_roots(&roots)
}

fn get(cache: &ProgramCache, arrays: &[&Array]) -> Arc<Program> {
    cache
        .get(&graph(arrays), &FusionOptions::default())
        .unwrap()
}

/// Every launch argument of `program`, in launch order.
fn args(program: &Program) -> Vec<Literal> {
    program
        .launches
        .iter()
        .flat_map(|l| l.args.iter().copied())
        .collect()
}

fn same_kernels(a: &Program, b: &Program) -> bool {
    a.launches.len() == b.launches.len()
        && a.launches
            .iter()
            .zip(&b.launches)
            .all(|(x, y)| Arc::ptr_eq(&x.kernel, &y.kernel))
}

#[test]
fn random_draws_with_new_keys_share_one_program() {
    let cx = session();
    let cache = ProgramCache::default();
    let draw = |seed| (cx.random_uniform(&[64], DType::F32, seed) * 2.0f32).sum();
    let first = get(&cache, &[&draw(1)]);
    let second = get(&cache, &[&draw(2)]);
    assert_eq!(cache.len(), 1, "one program for both keys");
    assert!(same_kernels(&first, &second));
    assert!(args(&first).contains(&Literal::of(1u64)));
    assert!(args(&second).contains(&Literal::of(2u64)));
    assert!(!args(&second).contains(&Literal::of(1u64)));
    // The same key again is the cached program itself, not a copy.
    let again = get(&cache, &[&draw(1)]);
    assert!(Arc::ptr_eq(&first, &again));
}

#[test]
fn float_operands_are_arguments_of_one_program() {
    let cx = session();
    let cache = ProgramCache::default();
    let x = cx.from_vec(vec![1.0f64; 1000], &[10, 100]).unwrap();
    let step = |t: f64| {
        let y = &x * t + 0.25;
        let m = y.max_axes(&[1], true);
        (&y - &m).exp().sum_axes(&[1], false) * t
    };
    let a = get(&cache, &[&step(0.5)]);
    let b = get(&cache, &[&step(3.0)]);
    assert_eq!(cache.len(), 1);
    assert!(same_kernels(&a, &b));
    assert!(args(&b).contains(&Literal::of(3.0f64)));
    assert!(!args(&b).contains(&Literal::of(0.5f64)));
}

#[test]
fn constants_the_passes_read_keep_programs_apart() {
    let cx = session();
    let cache = ProgramCache::default();
    let x = cx.from_vec(vec![2.0f64; 8], &[8]).unwrap();
    // An exponent is read (`x ** 2` is `square(x)`), and so is an integer.
    get(&cache, &[&x.pow(2.0)]);
    get(&cache, &[&x.pow(3.0)]);
    assert_eq!(cache.len(), 2);
    let i = cx.from_vec(vec![2i64; 8], &[8]).unwrap();
    get(&cache, &[&(&i + 0i64)]);
    get(&cache, &[&(&i + 1i64)]);
    assert_eq!(cache.len(), 4);
    // Equal constants are one value: demands where they differ are another program.
    get(&cache, &[&(&x * 1.5 + 1.5)]);
    get(&cache, &[&(&x * 1.5 + 2.5)]);
    assert_eq!(cache.len(), 6);
    get(&cache, &[&(&x * 4.0 + 7.0)]);
    assert_eq!(cache.len(), 6, "two unequal constants again");
}

/// A second look-up of the same snapshot (an evaluation after a declined
/// demand into the caller's memory) is the program of the first, with its
/// bound values; another snapshot of the same expression with another
/// value bound gets its own.
#[test]
fn the_same_snapshot_looked_up_again_is_its_program() {
    let cx = session();
    let cache = ProgramCache::default();
    let x = cx.from_slice(&[1.0f32, 2.0]);
    let scaled = (&x * 3.0f32).sum();
    let snapshot = graph(&[&scaled]);
    let options = FusionOptions::default();
    let first = cache.get(&snapshot, &options).unwrap();
    let again = cache.get(&snapshot, &options).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    assert!(args(&again).contains(&Literal::of(3.0f32)));
    let other = (&x * 5.0f32).sum();
    let rebound = cache.get(&graph(&[&other]), &options).unwrap();
    assert!(args(&rebound).contains(&Literal::of(5.0f32)));
    assert!(!args(&rebound).contains(&Literal::of(3.0f32)));
    // Other options are another look-up of the snapshot.
    let unfused = FusionOptions {
        enabled: false,
        ..FusionOptions::default()
    };
    let separate = cache.get(&snapshot, &unfused).unwrap();
    assert!(!Arc::ptr_eq(&first, &separate));
}
