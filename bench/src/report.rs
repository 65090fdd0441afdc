//! The results: one [`Record`] per case, the whole [`Report`] as JSON, and
//! the same as a terminal table and a Markdown table.

use std::fmt::Write as _;
use std::path::Path;

use lazyfuse::Stats;
use serde::Serialize;

use crate::measure::Timing;
use crate::Result;

/// The counters of `cx.stats()` for one run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct StatsRecord {
    /// Kernels (or CPU programs) compiled.
    pub kernels_compiled: u64,
    /// Compilations avoided by the kernel cache.
    pub kernel_cache_hits: u64,
    /// Kernels run.
    pub kernel_launches: u64,
    /// Host → device copies.
    pub h2d_copies: u64,
    /// Bytes copied host → device.
    pub h2d_bytes: u64,
    /// Device → host copies.
    pub d2h_copies: u64,
    /// Bytes copied device → host.
    pub d2h_bytes: u64,
}

impl From<Stats> for StatsRecord {
    fn from(s: Stats) -> StatsRecord {
        StatsRecord {
            kernels_compiled: s.kernels_compiled,
            kernel_cache_hits: s.kernel_cache_hits,
            kernel_launches: s.kernel_launches,
            h2d_copies: s.h2d_copies,
            h2d_bytes: s.h2d_bytes,
            d2h_copies: s.d2h_copies,
            d2h_bytes: s.d2h_bytes,
        }
    }
}

/// One case on one backend, size and dtype, with its baselines.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `E1` … `E6`, `LAT`.
    pub case: &'static str,
    /// The expression.
    pub expression: &'static str,
    /// `cpu`, `sim` or `cuda`.
    pub backend: &'static str,
    /// `f32`, `f64` or `f16`.
    pub dtype: &'static str,
    /// Elements of the main input.
    pub elements: usize,
    /// The main input's shape, e.g. `(1000000,)` or `(3162, 3162)`.
    pub shape: String,
    /// Bytes that must be read and written once.
    pub bytes: u64,
    /// lazyfuse, fused (the default).
    pub lazyfuse: Timing,
    /// `bytes / lazyfuse.median_s`, in GB/s.
    pub gbps: f64,
    /// The hand-written fused loop (rayon, same thread count).
    pub hand: Timing,
    /// `bytes / hand.median_s`, in GB/s.
    pub hand_gbps: f64,
    /// `lazyfuse.median_s / hand.median_s`: 1 is as fast as the hand loop, 2 twice as slow.
    pub time_vs_hand: f64,
    /// The same backend with `fusion(false)`.
    pub unfused: Timing,
    /// `lazyfuse.median_s / unfused.median_s`: below 1, fusion is faster.
    pub time_vs_unfused: f64,
    /// `gbps` over the copy bandwidth measured in the same run.
    pub fraction_of_copy_bandwidth: f64,
    /// `cx.stats()` of the warm-up evaluation (compilation, first uploads).
    pub stats_first: StatsRecord,
    /// `cx.stats()` of one measured evaluation.
    pub stats_steady: StatsRecord,
    /// `cx.stats()` of one measured evaluation with `fusion(false)`.
    pub unfused_stats_steady: StatsRecord,
    /// Largest error of the fused result against the hand loop's.
    pub max_error: f64,
    /// Largest error of the unfused result against the hand loop's.
    pub unfused_max_error: f64,
    /// The error allowed for this dtype and case.
    pub tolerance: f64,
    /// Both errors within the tolerance.
    pub ok: bool,
    /// A remark on the case, if any.
    pub note: Option<&'static str>,
}

/// The machine the run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Logical cores available to the process.
    pub cores: usize,
    /// Worker threads given to lazyfuse and to the hand loops.
    pub threads: usize,
    /// The CPU model (from /proc/cpuinfo, when readable).
    pub cpu: String,
    /// `std::env::consts::OS`.
    pub os: &'static str,
    /// `std::env::consts::ARCH`.
    pub arch: &'static str,
}

/// A backend that was asked for but not run.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// The backend.
    pub backend: &'static str,
    /// Why.
    pub reason: String,
}

/// Everything one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The lazyfuse version measured.
    pub lazyfuse_version: &'static str,
    /// When the run started (UTC).
    pub date_utc: String,
    /// The command line.
    pub command: String,
    /// `--quick` was given.
    pub quick: bool,
    /// The machine.
    pub machine: Machine,
    /// The STREAM-style copy bandwidth (rayon, `threads` threads), GB/s.
    pub copy_bandwidth_gbps: f64,
    /// f32 elements of the copy.
    pub copy_elements: usize,
    /// The copy's times.
    pub copy_timing: Timing,
    /// Backends not run, with the reason.
    pub skipped_backends: Vec<Skipped>,
    /// One record per case.
    pub records: Vec<Record>,
}

/// A duration for people: `12.3 µs`, `4.56 ms`, `1.23 s`.
pub fn format_time(seconds: f64) -> String {
    if !seconds.is_finite() {
        "-".into()
    } else if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

/// A byte count for people: `0`, `4.0 kB`, `38.1 MB`.
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1000 {
        format!("{bytes} B")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.2} GB", b / 1e9)
    }
}

/// An element count: `1e5`, `3e7`, or the digits when not that round.
pub fn format_count(n: usize) -> String {
    let mut mantissa = n;
    let mut exponent = 0;
    while mantissa >= 10 && mantissa.is_multiple_of(10) {
        mantissa /= 10;
        exponent += 1;
    }
    if exponent >= 3 && mantissa < 10 {
        format!("{mantissa}e{exponent}")
    } else {
        n.to_string()
    }
}

fn ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}

const HEADERS: [&str; 12] = [
    "case",
    "dtype",
    "backend",
    "size",
    "time",
    "GB/s",
    "t/t_hand",
    "t/t_unfused",
    "of copy bw",
    "kernels c/l",
    "h2d+d2h",
    "check",
];

fn row(r: &Record) -> Vec<String> {
    let size = if r.case == "E6" {
        r.shape.clone()
    } else {
        format_count(r.elements)
    };
    let (gbps, bw) = if r.case == "LAT" {
        ("-".into(), "-".into())
    } else {
        (
            format!("{:.2}", r.gbps),
            format!("{:.0}%", 100.0 * r.fraction_of_copy_bandwidth),
        )
    };
    let steady = &r.stats_steady;
    vec![
        r.case.into(),
        r.dtype.into(),
        r.backend.into(),
        size,
        format_time(r.lazyfuse.median_s),
        gbps,
        ratio(r.time_vs_hand),
        ratio(r.time_vs_unfused),
        bw,
        format!(
            "{}/{}",
            r.stats_first.kernels_compiled, steady.kernel_launches
        ),
        format_bytes(steady.h2d_bytes + steady.d2h_bytes),
        if r.ok { "ok" } else { "MISMATCH" }.into(),
    ]
}

/// The records as an aligned text table.
pub fn text_table(records: &[Record]) -> String {
    let rows: Vec<Vec<String>> = records.iter().map(row).collect();
    let mut widths: Vec<usize> = HEADERS.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            // Text columns left-aligned, numbers right-aligned.
            if i < 3 || i == 11 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
            text.push_str("  ");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&HEADERS.map(String::from));
    for r in &rows {
        line(r);
    }
    out
}

/// The Markdown alignment cells: text columns left, numbers right.
fn separator() -> Vec<&'static str> {
    (0..HEADERS.len())
        .map(|i| if i < 3 || i == 11 { " --- " } else { " ---: " })
        .collect()
}

/// The records as a Markdown table, with a legend.
pub fn markdown(report: &Report) -> String {
    let mut md = String::new();
    let m = &report.machine;
    let _ = writeln!(
        md,
        "lazyfuse {} on {} ({} cores, {} threads, {}/{}), {} UTC; \
         copy bandwidth (STREAM-style f32 copy, rayon): **{:.2} GB/s**.\n",
        report.lazyfuse_version,
        m.cpu,
        m.cores,
        m.threads,
        m.os,
        m.arch,
        report.date_utc,
        report.copy_bandwidth_gbps
    );
    let _ = writeln!(md, "| {} |", HEADERS.join(" | "));
    let _ = writeln!(md, "|{}|", separator().join("|"));
    for r in &report.records {
        let cells = row(r);
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    md.push_str(
        "\n`time`: median per evaluation (building the expression and demanding it \
         into a preallocated buffer, or `item()`); `GB/s`: bytes that must be read and \
         written once, over that time; `t/t_hand`: time over a hand-written fused rayon \
         loop on the same threads (1.00 = as fast); `t/t_unfused`: time over the same \
         backend with `fusion(false)` (below 1 = fusion helps); `of copy bw`: GB/s over \
         the copy bandwidth; `kernels c/l`: kernels compiled in the first evaluation / \
         launched per evaluation; `h2d+d2h`: bytes copied per evaluation; `check`: \
         results within tolerance of the hand loop's. LAT: E1 at 100 and 1000 elements.\n",
    );
    for r in &report.records {
        if let Some(note) = r.note {
            let line = format!("- {}: {note}\n", r.case);
            if !md.contains(&line) {
                md.push_str(&line);
            }
        }
    }
    for s in &report.skipped_backends {
        let _ = writeln!(md, "- backend `{}` skipped: {}", s.backend, s.reason);
    }
    md
}

/// Writes `bench.json` and `bench.md` into `dir`, creating it.
pub fn write_files(report: &Report, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(report)?;
    let path = dir.join("bench.json");
    std::fs::write(&path, json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let path = dir.join("bench.md");
    std::fs::write(&path, markdown(report))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_count(30_000_000), "3e7");
        assert_eq!(format_count(100), "100");
        assert_eq!(format_count(1000), "1e3");
        assert_eq!(format_count(123_456), "123456");
        assert_eq!(format_time(2.5e-5), "25.0 µs");
        assert_eq!(format_time(0.25), "250.00 ms");
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(4_000_000), "4.0 MB");
        let sep = format!("|{}|", separator().join("|"));
        assert!(sep.starts_with("| --- | --- | --- | ---: |"), "{sep}");
        assert_eq!(sep.matches('|').count(), HEADERS.len() + 1);
    }
}
