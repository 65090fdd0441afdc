//! The program suite's reports: a Markdown table of ratios (the times of
//! one run compared with each other, never with another run's) and JSON
//! with every timing.

use std::path::Path;

use serde::Serialize;

use super::ProgramRecord;
use crate::report::format_count;
use crate::Result;

/// Everything one run of the program suite measured.
#[derive(Debug, Serialize)]
pub struct ProgramReport {
    /// When it ran (UTC).
    pub date_utc: String,
    /// The command line.
    pub command: String,
    /// Worker threads of lazyfuse and the hand loops.
    pub threads: usize,
    /// One record per program, backend and size.
    pub records: Vec<ProgramRecord>,
}

/// The table: per program, backend and size, lazyfuse's median time over
/// the hand loop's, `fusion(false)`'s over lazyfuse's, and the launches of
/// one demand of each.
pub fn markdown(records: &[ProgramRecord]) -> String {
    let mut out = String::from(
        "| program | backend | elements | lazyfuse / hand | fusion(false) / lazyfuse | launches (fusion(false)) | agrees |\n\
         |---|---|---:|---:|---:|---:|---|\n",
    );
    for r in records {
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.2} | {} ({}) | {} |\n",
            r.program,
            r.backend,
            format_count(r.elements),
            r.fused.median_s / r.hand.median_s,
            r.unfused.median_s / r.fused.median_s,
            r.launches,
            r.unfused_launches,
            if r.ok {
                "yes".to_string()
            } else {
                format!("no ({:.1e})", r.difference)
            },
        ));
    }
    out
}

/// Writes `programs.json` and `programs.md` into `dir`.
pub fn write_files(report: &ProgramReport, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("programs.json");
    std::fs::write(&path, serde_json::to_string_pretty(report)? + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let path = dir.join("programs.md");
    let text = format!(
        "# lazyfuse program suite\n\n`{}` at {} UTC, {} threads. Ratios of medians measured in this run.\n\n{}",
        report.command,
        report.date_utc,
        report.threads,
        markdown(&report.records)
    );
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}
