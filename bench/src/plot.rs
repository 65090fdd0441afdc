//! `bench.svg`: GB/s against size (both axes logarithmic), one panel per
//! dtype (rows) and backend (columns), one line per expression, with the
//! copy bandwidth measured in the same run for scale.

use std::path::Path;

use plotters::prelude::*;

use crate::report::{Record, Report};
use crate::Result;

/// A colour per case, the same in every panel.
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

const CASES: [&str; 6] = ["E1", "E2", "E3", "E4", "E5", "E6"];

/// The distinct values of `key` over `records`, in order of appearance.
fn distinct<'a>(records: &[&'a Record], key: impl Fn(&'a Record) -> &'a str) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for &r in records {
        let k = key(r);
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    seen
}

/// Writes the plot of `report` to `path`.
pub fn write_svg(report: &Report, path: &Path) -> Result<()> {
    let records: Vec<&Record> = report
        .records
        .iter()
        .filter(|r| r.case != "LAT" && r.gbps.is_finite() && r.gbps > 0.0)
        .collect();
    let dtypes = distinct(&records, |r| r.dtype);
    let backends = distinct(&records, |r| r.backend);
    if records.is_empty() {
        return Err("nothing to plot (the latency case alone has no GB/s)".into());
    }
    let (lo, hi) = records.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
        (lo.min(r.elements as f64), hi.max(r.elements as f64))
    });
    let x_range = (lo / 2.0).max(1.0)..hi * 2.0;
    let copy = report.copy_bandwidth_gbps;
    let (y_lo, y_hi) = records
        .iter()
        .fold((copy, copy), |(lo, hi), r| (lo.min(r.gbps), hi.max(r.gbps)));
    let y_range = y_lo / 10.0..y_hi * 3.0;

    let size = (560 * backends.len() as u32, 400 * dtypes.len() as u32);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((dtypes.len(), backends.len()));
    let mut panels = panels.iter();
    for dtype in &dtypes {
        for backend in &backends {
            let Some(panel) = panels.next() else {
                return Err("plot layout: fewer panels than dtype/backend pairs".into());
            };
            let mut chart = ChartBuilder::on(panel)
                .caption(
                    format!("{dtype} on {backend} ({} threads)", report.machine.threads),
                    ("sans-serif", 18),
                )
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(55)
                .build_cartesian_2d(x_range.clone().log_scale(), y_range.clone().log_scale())?;
            chart
                .configure_mesh()
                .x_desc("elements")
                .y_desc("GB/s")
                .x_label_formatter(&|x| format!("{x:.0e}"))
                .y_label_formatter(&|y| format!("{y}"))
                .draw()?;
            chart
                .draw_series(DashedLineSeries::new(
                    [(x_range.start, copy), (x_range.end, copy)],
                    6,
                    4,
                    BLACK.stroke_width(1),
                ))?
                .label(format!("copy {copy:.1} GB/s"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
            for (case, colour) in CASES.iter().zip(COLOURS) {
                let mut points: Vec<(f64, f64)> = records
                    .iter()
                    .filter(|r| r.dtype == *dtype && r.backend == *backend && r.case == *case)
                    .map(|r| (r.elements as f64, r.gbps))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                points.sort_by(|p, q| p.0.total_cmp(&q.0));
                chart
                    .draw_series(LineSeries::new(points, colour.stroke_width(2)).point_size(3))?
                    .label(*case)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                    });
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}
