use lazyfuse::Context;
use rustfft::num_complex::Complex64;

use super::*;

/// The direct transform in f64, the reference.
fn dft(x: &[Complex64], inverse: bool) -> Vec<Complex64> {
    let n = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|k| {
            x.iter()
                .enumerate()
                .map(|(j, &v)| {
                    let angle = sign * std::f64::consts::TAU * ((j * k) % n) as f64 / n as f64;
                    v * Complex64::from_polar(1.0, angle)
                })
                .sum()
        })
        .collect()
}

fn signal(n: usize) -> Vec<Complex64> {
    (0..n)
        .map(|i| {
            Complex64::new(
                (i as f64 * 0.7).sin() + 0.25,
                (i as f64 * 1.3).cos() - i as f64 / n as f64,
            )
        })
        .collect()
}

fn array_of(cx: &Context, rows: &[Vec<Complex64>]) -> ComplexArray {
    let n = rows[0].len();
    let re: Vec<f64> = rows.iter().flatten().map(|z| z.re).collect();
    let im: Vec<f64> = rows.iter().flatten().map(|z| z.im).collect();
    let shape = [rows.len(), n];
    ComplexArray::new(
        &cx.from_vec(re, &shape).unwrap(),
        &cx.from_vec(im, &shape).unwrap(),
    )
    .unwrap()
}

fn values(z: &ComplexArray) -> Vec<Complex64> {
    let (re, im) = z.to_parts::<f64>().unwrap();
    re.into_iter()
        .zip(im)
        .map(|(r, i)| Complex64::new(r, i))
        .collect()
}

fn assert_close(got: &[Complex64], want: &[Complex64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let tolerance = 1e-11
        * (want.len() as f64).log2().max(1.0)
        * want.iter().map(|z| z.norm()).fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).norm() <= tolerance, "{what}[{i}]: {g} vs {w}");
    }
}

#[test]
fn rows_of_every_length_match_the_direct_transform_on_cpu_and_sim() {
    for cx in [Context::cpu(), Context::sim()] {
        for n in [1usize, 2, 3, 5, 8, 12, 17, 64] {
            let rows = vec![signal(n), signal(n).into_iter().map(|z| z * 2.0).collect()];
            let z = array_of(&cx, &rows);
            for (inverse, norm) in [
                (false, Norm::Backward),
                (true, Norm::Backward),
                (false, Norm::Ortho),
                (true, Norm::Forward),
            ] {
                let got = match inverse {
                    true => ifft(&z, None, -1, norm).unwrap(),
                    false => fft(&z, None, 1, norm).unwrap(),
                };
                let factor = norm.factor(n, inverse);
                let want: Vec<Complex64> = rows
                    .iter()
                    .flat_map(|r| dft(r, inverse))
                    .map(|v| v * factor)
                    .collect();
                assert_close(
                    &values(&got),
                    &want,
                    &format!("n={n} inverse={inverse} {norm:?}"),
                );
            }
        }
    }
}

#[test]
fn the_first_axis_cut_and_padded() {
    let cx = Context::cpu();
    let rows: Vec<Vec<Complex64>> = (0..6)
        .map(|r| {
            signal(3)
                .into_iter()
                .map(|z| z * (r as f64 + 1.0))
                .collect()
        })
        .collect();
    let z = array_of(&cx, &rows);
    for n in [4usize, 6, 9] {
        let got = values(&fft(&z, Some(n), 0, Norm::Backward).unwrap());
        for col in 0..3 {
            let mut column: Vec<Complex64> = rows.iter().map(|r| r[col]).collect();
            column.resize(n, Complex64::new(0.0, 0.0));
            column.truncate(n);
            let want = dft(&column, false);
            let got_col: Vec<Complex64> = (0..n).map(|k| got[k * 3 + col]).collect();
            assert_close(&got_col, &want, &format!("n={n} column {col}"));
        }
    }
}

#[test]
fn real_transforms_round_trip() {
    let cx = Context::cpu();
    for n in [1usize, 2, 5, 8, 11] {
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).cos() * 3.0 - 1.0).collect();
        let a = cx.from_slice(&x);
        let spectrum = rfft(&a, None, 0, Norm::Backward).unwrap();
        assert_eq!(spectrum.shape(), [n / 2 + 1]);
        let full = dft(
            &x.iter()
                .map(|&v| Complex64::new(v, 0.0))
                .collect::<Vec<_>>(),
            false,
        );
        assert_close(
            &values(&spectrum),
            &full[..n / 2 + 1],
            &format!("rfft n={n}"),
        );
        let back = irfft(&spectrum, Some(n), 0, Norm::Backward)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        for (g, w) in back.iter().zip(&x) {
            assert!(
                (g - w).abs() < 1e-12,
                "irfft(rfft) n={n}: {back:?} vs {x:?}"
            );
        }
        let h = ihfft(&a, None, 0, Norm::Backward).unwrap();
        let back = hfft(&h, Some(n), 0, Norm::Backward)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        for (g, w) in back.iter().zip(&x) {
            assert!((g - w).abs() < 1e-12, "hfft(ihfft) n={n}");
        }
    }
}

#[test]
fn two_dimensional_transforms_round_trip_and_match_row_then_column() {
    let cx = Context::cpu();
    let rows: Vec<Vec<Complex64>> = (0..5)
        .map(|r| signal(6).into_iter().map(|z| z + r as f64).collect())
        .collect();
    let z = array_of(&cx, &rows);
    let f = fft2(&z, None, None, Norm::Backward).unwrap();
    let by_axes = fft(
        &fft(&z, None, 1, Norm::Backward).unwrap(),
        None,
        0,
        Norm::Backward,
    )
    .unwrap();
    assert_close(&values(&f), &values(&by_axes), "fft2");
    let back = ifft2(&f, None, None, Norm::Backward).unwrap();
    assert_close(&values(&back), &rows.concat(), "ifft2(fft2)");
    let x = cx
        .from_vec((0..30).map(|i| i as f64).collect(), &[5, 6])
        .unwrap();
    let r = rfft2(&x, None, None, Norm::Ortho).unwrap();
    assert_eq!(r.shape(), [5, 4]);
    let back = irfft2(&r, Some(&[5, 6]), None, Norm::Ortho)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert!(
        back.iter()
            .enumerate()
            .all(|(i, &v)| (v - i as f64).abs() < 1e-10),
        "{back:?}"
    );
}

#[test]
fn bad_arguments_are_errors() {
    let cx = Context::cpu();
    let z = ComplexArray::from_real(&cx.from_slice(&[1.0f32, 2.0]), None).unwrap();
    let message = |r: Result<ComplexArray>| r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message(fft(&z, Some(0), 0, Norm::Backward)).contains("0 points"));
    assert!(message(fft(&z, None, 3, Norm::Backward)).contains("axis 3"));
    assert!(Norm::from_name("both").is_err());
    assert!(message(fftn(&z, Some(&[2, 2]), Some(&[0]), Norm::Backward)).contains("one per axis"));
    let empty = ComplexArray::from_real(&cx.zeros(&[0, 4], DType::F32), None).unwrap();
    assert_eq!(
        fft(&empty, None, -1, Norm::Backward).unwrap().shape(),
        [0, 4]
    );
}

#[test]
fn complex64_transforms_in_single_precision() {
    let cx = Context::cpu();
    let x: Vec<f32> = (0..1000).map(|i| ((i * 7 % 13) as f32) - 6.0).collect();
    let z = ComplexArray::from_real(&cx.from_slice(&x), None).unwrap();
    let f = fft(&z, None, 0, Norm::Backward).unwrap();
    assert_eq!(f.dtype(), ComplexDType::C64);
    let (re, im) = ifft(&f, None, 0, Norm::Backward)
        .unwrap()
        .to_parts::<f32>()
        .unwrap();
    for (i, (&r, &m)) in re.iter().zip(&im).enumerate() {
        assert!((r - x[i]).abs() < 1e-4 && m.abs() < 1e-4, "{i}: {r} {m}");
    }
}

#[test]
fn columns_on_the_workers_match_rows() {
    // Large enough for the column tasks to run on the worker threads, with
    // a last group of columns narrower than the others (300 = 18 * 16 + 12).
    let cx = Context::cpu();
    let (n, width) = (256usize, 300usize);
    let re: Vec<f32> = (0..n * width)
        .map(|i| ((i * 37 % 101) as f32) * 0.01 - 0.5)
        .collect();
    let im: Vec<f32> = (0..n * width)
        .map(|i| ((i * 13 % 17) as f32) * 0.1)
        .collect();
    let z = ComplexArray::new(
        &cx.from_vec(re, &[n, width]).unwrap(),
        &cx.from_vec(im, &[n, width]).unwrap(),
    )
    .unwrap();
    let by_columns = fft(&z, None, 0, Norm::Backward)
        .unwrap()
        .to_parts::<f32>()
        .unwrap();
    // The same transform as rows of the transposed (copied) array.
    let transposed = z.map_parts(|p| {
        p.permute(&[1, 0])
            .reshape(&[width * n])
            .reshape(&[width, n])
    });
    let by_rows = fft(&transposed, None, 1, Norm::Backward).unwrap();
    let by_rows = by_rows
        .map_parts(|p| p.permute(&[1, 0]))
        .to_parts::<f32>()
        .unwrap();
    for (a, b) in [(&by_columns.0, &by_rows.0), (&by_columns.1, &by_rows.1)] {
        assert!(a
            .iter()
            .zip(b.iter())
            .all(|(x, y)| (x - y).abs() <= 1e-3 * (1.0 + y.abs())));
    }
}

#[test]
fn real_transforms_match_the_complex_ones_on_every_axis_on_cpu_and_sim() {
    for cx in [Context::cpu(), Context::sim()] {
        let data: Vec<f64> = (0..60).map(|i| ((i * 7 % 11) as f64) - 4.5).collect();
        let x = cx.from_vec(data, &[3, 4, 5]).unwrap();
        for axis in [0isize, 1, 2] {
            for n in [None, Some(3), Some(6), Some(7)] {
                let real = rfft(&x, n, axis, Norm::Backward).unwrap();
                let full = fft(
                    &ComplexArray::from_real(&x, None).unwrap(),
                    n,
                    axis,
                    Norm::Backward,
                )
                .unwrap();
                let a = axis as usize;
                let kept = full.shape()[a] / 2 + 1;
                let half = full.map_parts(|p| p.slice_axis(a, Some(0), Some(kept as isize), 1));
                assert_eq!(real.shape(), half.shape());
                assert_close(
                    &values(&real),
                    &values(&half),
                    &format!("rfft axis {axis} n {n:?}"),
                );
                // And back: irfft of the half spectrum is the (cut or padded) signal.
                let points = n.unwrap_or(x.shape()[a]);
                let back = irfft(&real, Some(points), axis, Norm::Backward).unwrap();
                let signal = ifft(&full, None, axis, Norm::Backward).unwrap().real();
                let (got, want) = (
                    back.to_vec::<f64>().unwrap(),
                    signal.to_vec::<f64>().unwrap(),
                );
                assert!(
                    got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-10),
                    "irfft axis {axis} n {n:?}"
                );
            }
        }
    }
}
