//! `lazyfuse-bench`: the expression suite of issue #8 (E1–E6 and the
//! latency case) on every available backend, against a hand-written fused
//! rayon loop, `fusion(false)` and the machine's copy bandwidth, all
//! measured in the same run. Prints a table and writes `bench.json`,
//! `bench.md` (and with `--plot`, `bench.svg`) into the output folder.
//!
//! Run: `cargo run --release -p lazyfuse-bench -- --quick` (`--help` for the options).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use lazyfuse_bench::cli::{Options, USAGE};
use lazyfuse_bench::measure::{copy_bandwidth, Budget};
use lazyfuse_bench::programs::{self, ProgramId};
use lazyfuse_bench::report::{self, Machine, Report};
use lazyfuse_bench::runner::{backends, Backend, Runner};
use lazyfuse_bench::{plot, Result};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match Options::parse(args.clone()) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options, &args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the whole harness; `Ok(false)` when some result did not match the
/// hand loop's (the reports are written all the same).
fn run(options: &Options, args: &[String]) -> Result<bool> {
    let date_utc = utc_now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()?;
    let (backends, skipped) = backends(options)?;
    for s in &skipped {
        println!("backend {} skipped: {}", s.backend, s.reason);
    }
    if backends.is_empty() {
        return Err("none of the requested backends can run here".into());
    }
    if let Some(programs) = &options.programs {
        return run_programs(options, programs, (&backends, &pool), (date_utc, args));
    }

    let copy_elements = if options.quick { 1 << 24 } else { 1 << 26 };
    let (copy_gbps, copy_timing) =
        copy_bandwidth(&pool, copy_elements, Budget::new(options.quick))?;
    println!(
        "copy bandwidth (f32, {} MB, {} threads): {copy_gbps:.2} GB/s",
        (copy_elements * 4) >> 20,
        options.threads
    );

    let mut runner = Runner::new(options, &pool, copy_gbps);
    println!(
        "running {} measurements on {} (each: hand loop, fused, fusion(false))",
        runner.planned(&backends),
        backends
            .iter()
            .map(|b| b.id.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    runner.run(&backends, std::io::stdout().is_terminal())?;

    let report = Report {
        lazyfuse_version: env!("CARGO_PKG_VERSION"),
        date_utc,
        command: command_line(args),
        quick: options.quick,
        machine: Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads: options.threads,
            cpu: cpu_model(),
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        },
        copy_bandwidth_gbps: copy_gbps,
        copy_elements,
        copy_timing,
        skipped_backends: skipped,
        records: runner.records,
    };
    println!("\n{}", report::text_table(&report.records));
    report::write_files(&report, &options.out)?;
    println!(
        "wrote {} and {}",
        options.out.join("bench.json").display(),
        options.out.join("bench.md").display()
    );
    if options.plot {
        let path = options.out.join("bench.svg");
        plot::write_svg(&report, &path)?;
        println!("wrote {}", path.display());
    }
    let bad: Vec<String> = report
        .records
        .iter()
        .filter(|r| !r.ok)
        .map(|r| format!("{} {} {} n={}", r.case, r.dtype, r.backend, r.elements))
        .collect();
    if !bad.is_empty() {
        eprintln!(
            "error: results differ from the hand loop's beyond the tolerance: {}",
            bad.join("; ")
        );
    }
    Ok(bad.is_empty())
}

/// Runs the program suite; `Ok(false)` when some result did not match the
/// hand loop's.
fn run_programs(
    options: &Options,
    programs: &[ProgramId],
    (backends, pool): (&[Backend], &rayon::ThreadPool),
    (date_utc, args): (String, &[String]),
) -> Result<bool> {
    let budget = Budget::new(options.quick);
    let mut records = Vec::new();
    for backend in backends {
        for &program in programs {
            for &n in &backend.sizes {
                let contexts = (backend.id.name(), &backend.fused, &backend.unfused);
                let record = programs::measure(program, n, contexts, pool, budget)?;
                println!(
                    "{:15} {:5} {:>9}: lazyfuse / hand {:6.2}, fusion(false) / lazyfuse {:6.2}, {} launch(es){}",
                    record.program,
                    record.backend,
                    n,
                    record.fused.median_s / record.hand.median_s,
                    record.unfused.median_s / record.fused.median_s,
                    record.launches,
                    if record.ok { "" } else { ", DIFFERS from the hand loop" }
                );
                records.push(record);
            }
        }
    }
    let report = programs::ProgramReport {
        date_utc,
        command: command_line(args),
        threads: options.threads,
        records,
    };
    println!("\n{}", programs::markdown(&report.records));
    programs::write_files(&report, &options.out)?;
    println!(
        "wrote {} and {}",
        options.out.join("programs.json").display(),
        options.out.join("programs.md").display()
    );
    Ok(report.records.iter().all(|r| r.ok))
}

/// The command line as the reports record it.
fn command_line(args: &[String]) -> String {
    std::iter::once("lazyfuse-bench")
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The CPU model named in /proc/cpuinfo, or "unknown CPU".
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The current time as `YYYY-MM-DD HH:MM:SS` (UTC), without a date crate.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Year, month, day of a count of days since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
    }
}
