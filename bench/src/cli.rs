//! Command-line options of the harness (hand-parsed: no argument crate).

use std::path::PathBuf;

use crate::cases::CaseId;
use crate::programs::ProgramId;
use crate::types::DTypeId;
use crate::Result;

/// The usage text printed by `--help` and after an option error.
pub const USAGE: &str = "\
usage: lazyfuse-bench [--quick] [--suite e1,e2,...] [--sizes 1e3,1e5,1e7]
                      [--dtypes f32,f64,f16] [--backends cpu,sim,cuda]
                      [--threads N] [--out DIR] [--plot]
       lazyfuse-bench --programs all|softmax,pairwise,... [--quick] [--sizes ...]
                      [--backends ...] [--threads N] [--out DIR]

  --quick      sizes 1e3 and 1e5 (plus 1e6 on cpu), few repeats (about a minute)
  --suite      cases among e1 e2 e3 e4 e5 e6 lat (default: all)
  --sizes      element counts, e.g. 1e5,1e6 (default 1e3,1e4,1e5,1e6,1e7,3e7);
               E6 uses an (m, m) matrix with m*m close to the size
  --dtypes     among f32 f64 f16 (default: all three)
  --backends   among cpu sim cuda (default: all; an unavailable one is skipped
               with the reason; sim only runs sizes up to 1e5)
  --threads    worker threads for lazyfuse and the hand loops (default: all cores)
  --out        output folder for bench.json and bench.md (default target/bench)
  --plot       also write <out>/bench.svg (GB/s against size)
  --programs   run the program suite instead (float32; default sizes
               1e4,1e5,1e6,1e7, --quick 1e4,1e5): black_scholes softmax
               standardise kmeans_assign logsumexp layer_norm heat_step
               masked_mean monte_carlo_pi pairwise, each against hand-written
               Rust; writes <out>/programs.json and programs.md";

/// The backends the harness knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendId {
    /// `Context::cpu()` and its builder.
    Cpu,
    /// `Context::sim()`: the SIMT interpreter.
    Sim,
    /// `Context::cuda(0)`, when usable.
    Cuda,
}

impl BackendId {
    /// The backend's name as `Context::builder().backend(..)` takes it.
    pub fn name(self) -> &'static str {
        match self {
            BackendId::Cpu => "cpu",
            BackendId::Sim => "sim",
            BackendId::Cuda => "cuda",
        }
    }

    fn parse(text: &str) -> Result<BackendId> {
        match text {
            "cpu" => Ok(BackendId::Cpu),
            "sim" => Ok(BackendId::Sim),
            "cuda" => Ok(BackendId::Cuda),
            other => Err(format!("unknown backend '{other}' (expected cpu, sim or cuda)").into()),
        }
    }
}

/// Everything the command line chose.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--quick`: small sizes and few repeats.
    pub quick: bool,
    /// The cases to run, in suite order.
    pub suite: Vec<CaseId>,
    /// Element counts (before the per-backend adjustments of [`Options::sizes_for`]).
    pub sizes: Vec<usize>,
    /// True when `--sizes` was given (then `--quick` adds no size of its own).
    pub sizes_given: bool,
    /// Element types.
    pub dtypes: Vec<DTypeId>,
    /// Backends requested.
    pub backends: Vec<BackendId>,
    /// Worker threads for lazyfuse and the hand loops.
    pub threads: usize,
    /// Output folder.
    pub out: PathBuf,
    /// Write the SVG plot.
    pub plot: bool,
    /// `--programs`: run these programs instead of the expression suite.
    pub programs: Option<Vec<ProgramId>>,
}

/// The largest size the `sim` interpreter is given.
pub const SIM_MAX_SIZE: usize = 100_000;

impl Options {
    /// Parses the arguments (without the program name). `Ok(None)` means
    /// `--help` was asked for.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut options = Options {
            quick: false,
            suite: CaseId::ALL.to_vec(),
            sizes: [1e3, 1e4, 1e5, 1e6, 1e7, 3e7].map(|s| s as usize).to_vec(),
            sizes_given: false,
            dtypes: DTypeId::ALL.to_vec(),
            backends: vec![BackendId::Cpu, BackendId::Sim, BackendId::Cuda],
            threads: cores,
            out: PathBuf::from("target/bench"),
            plot: false,
            programs: None,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f.to_string(), Some(v.to_string())),
                None => (arg.clone(), None),
            };
            let mut value = |name: &str| -> Result<String> {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| format!("{name} needs a value").into())
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--quick" => options.quick = true,
                "--plot" => options.plot = true,
                "--suite" => options.suite = list(&value("--suite")?, CaseId::parse)?,
                "--sizes" => {
                    options.sizes = list(&value("--sizes")?, parse_size)?;
                    options.sizes_given = true;
                }
                "--dtypes" => options.dtypes = list(&value("--dtypes")?, DTypeId::parse)?,
                "--backends" => options.backends = list(&value("--backends")?, BackendId::parse)?,
                "--threads" => {
                    let text = value("--threads")?;
                    options.threads = match text.parse::<usize>() {
                        Ok(n) if n > 0 => n,
                        _ => {
                            return Err(
                                format!("--threads: '{text}' is not a positive integer").into()
                            )
                        }
                    };
                }
                "--out" => options.out = PathBuf::from(value("--out")?),
                "--programs" => {
                    let text = value("--programs")?;
                    options.programs = Some(match text.as_str() {
                        "all" => ProgramId::ALL.to_vec(),
                        _ => list(&text, ProgramId::parse)?,
                    });
                }
                other => return Err(format!("unknown option '{other}'").into()),
            }
        }
        if !options.sizes_given && options.programs.is_some() {
            options.sizes = match options.quick {
                true => vec![10_000, 100_000],
                false => vec![10_000, 100_000, 1_000_000, 10_000_000],
            };
        } else if options.quick && !options.sizes_given {
            options.sizes = vec![1_000, 100_000];
        }
        options.sizes.sort_unstable();
        options.sizes.dedup();
        Ok(Some(options))
    }

    /// The sizes one backend runs: `sim` stops at [`SIM_MAX_SIZE`]; a quick
    /// run adds 1e6 on the CPU (unless `--sizes` was given).
    pub fn sizes_for(&self, backend: BackendId) -> Vec<usize> {
        let mut sizes = self.sizes.clone();
        if self.quick && !self.sizes_given && backend == BackendId::Cpu && self.programs.is_none() {
            sizes.push(1_000_000);
        }
        if backend == BackendId::Sim {
            sizes.retain(|&n| n <= SIM_MAX_SIZE);
        }
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }
}

/// A comma-separated list, each item parsed by `parse`, duplicates dropped.
fn list<T: PartialEq>(text: &str, parse: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    let mut items = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parsed = parse(&item.to_ascii_lowercase())?;
        if !items.contains(&parsed) {
            items.push(parsed);
        }
    }
    if items.is_empty() {
        return Err(format!("empty list '{text}'").into());
    }
    Ok(items)
}

/// A size such as `1e5`, `3e7` or `250000`.
fn parse_size(text: &str) -> Result<usize> {
    let bad = || format!("size '{text}' is not a positive whole number (e.g. 1e5)");
    let value: f64 = text.parse().map_err(|_| bad())?;
    if !(value >= 1.0 && value.fract() == 0.0 && value <= 1e10) {
        return Err(bad().into());
    }
    Ok(value as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        Options::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn quick_sizes_and_sim_limit() {
        let o = parse(&["--quick"]).unwrap().unwrap();
        assert_eq!(o.sizes_for(BackendId::Cpu), vec![1_000, 100_000, 1_000_000]);
        assert_eq!(o.sizes_for(BackendId::Sim), vec![1_000, 100_000]);
        let o = parse(&["--sizes", "1e5,1e7", "--quick"]).unwrap().unwrap();
        assert_eq!(o.sizes_for(BackendId::Cpu), vec![100_000, 10_000_000]);
        assert_eq!(o.sizes_for(BackendId::Sim), vec![100_000]);
    }

    #[test]
    fn lists_and_errors() {
        let o = parse(&["--suite=e4,LAT", "--dtypes", "f16", "--threads", "3"])
            .unwrap()
            .unwrap();
        assert_eq!(o.suite, vec![CaseId::E4, CaseId::Lat]);
        assert_eq!(o.dtypes, vec![DTypeId::F16]);
        assert_eq!(o.threads, 3);
        assert!(parse(&["--sizes", "1.5"]).is_err());
        assert!(parse(&["--backends", "tpu"]).is_err());
        assert!(parse(&["--threads"]).is_err());
        assert!(parse(&["--help"]).unwrap().is_none());
    }

    #[test]
    fn programs_and_their_sizes() {
        let o = parse(&["--programs", "all", "--quick"]).unwrap().unwrap();
        assert_eq!(o.programs.as_deref(), Some(&ProgramId::ALL[..]));
        assert_eq!(o.sizes_for(BackendId::Cpu), vec![10_000, 100_000]);
        let o = parse(&["--programs=softmax,pairwise"]).unwrap().unwrap();
        assert_eq!(
            o.programs,
            Some(vec![ProgramId::Softmax, ProgramId::Pairwise])
        );
        assert_eq!(o.sizes_for(BackendId::Sim), vec![10_000, 100_000]);
        assert!(parse(&["--programs", "fft"]).is_err());
    }
}
