//! Runs the suite: for each dtype and size, the hand loop once, then each
//! backend fused and with `fusion(false)`, checking every result against
//! the hand loop's.

use indicatif::{ProgressBar, ProgressStyle};
use lazyfuse::Context;
use rayon::ThreadPool;

use crate::cases::{CaseId, HostInputs, LazyInputs, LATENCY_SIZES};
use crate::cli::{BackendId, Options};
use crate::measure::{measure, measure_interleaved, Budget, Measured};
use crate::reference::max_error;
use crate::report::{Record, Skipped};
use crate::types::{BenchElem, DTypeId};
use crate::Result;
use lazyfuse::half::f16;

/// One backend, as a fused context and its `fusion(false)` twin.
pub struct Backend {
    /// Which backend.
    pub id: BackendId,
    /// The default context (fusion on).
    pub fused: Context,
    /// The same backend with `fusion(false)`.
    pub unfused: Context,
    /// The sizes it runs.
    pub sizes: Vec<usize>,
}

/// The requested backends that can run here, and those that cannot with the reason.
pub fn backends(options: &Options) -> Result<(Vec<Backend>, Vec<Skipped>)> {
    let mut usable = Vec::new();
    let mut skipped = Vec::new();
    for &id in &options.backends {
        if id == BackendId::Cuda {
            if let Err(e) = Context::cuda(0) {
                skipped.push(Skipped {
                    backend: id.name(),
                    reason: e.to_string(),
                });
                continue;
            }
        }
        let build = |fusion: bool| {
            Context::builder()
                .backend(id.name())
                .fusion(fusion)
                .threads(options.threads)
                .build()
        };
        let sizes = options.sizes_for(id);
        if sizes.is_empty() && !options.suite.contains(&CaseId::Lat) {
            skipped.push(Skipped {
                backend: id.name(),
                reason: "no requested size is small enough for it".into(),
            });
            continue;
        }
        usable.push(Backend {
            id,
            fused: build(true)?,
            unfused: build(false)?,
            sizes,
        });
    }
    Ok((usable, skipped))
}

/// The error a result may have against the hand loop's (relative to
/// `max(1, |value|)`): the hand loops compute `f16` in `f32` and round once,
/// lazyfuse rounds every operation to `f16` as NumPy does.
pub fn tolerance(dtype: DTypeId) -> f64 {
    match dtype {
        DTypeId::F64 => 1e-9,
        DTypeId::F32 => 1e-4,
        DTypeId::F16 => 2e-2,
    }
}

/// Runs the suite and collects the records.
pub struct Runner<'a> {
    options: &'a Options,
    pool: &'a ThreadPool,
    budget: Budget,
    copy_gbps: f64,
    progress: ProgressBar,
    /// The records so far.
    pub records: Vec<Record>,
}

impl<'a> Runner<'a> {
    /// A runner; `copy_gbps` is the bandwidth the records are compared with.
    pub fn new(options: &'a Options, pool: &'a ThreadPool, copy_gbps: f64) -> Runner<'a> {
        Runner {
            options,
            pool,
            budget: Budget::new(options.quick),
            copy_gbps,
            progress: ProgressBar::hidden(),
            records: Vec::new(),
        }
    }

    /// The number of records `run` will produce.
    pub fn planned(&self, backends: &[Backend]) -> usize {
        let suite = &self.options.suite;
        let sized = suite.iter().filter(|&&c| c != CaseId::Lat).count();
        let latency = if suite.contains(&CaseId::Lat) {
            LATENCY_SIZES.len()
        } else {
            0
        };
        let per_dtype: usize = backends
            .iter()
            .map(|b| b.sizes.len() * sized + latency)
            .sum();
        per_dtype * self.options.dtypes.len()
    }

    /// Runs everything, showing a progress line when `show_progress`.
    pub fn run(&mut self, backends: &[Backend], show_progress: bool) -> Result<()> {
        if show_progress {
            let style =
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")?
                    .progress_chars("=> ");
            self.progress = ProgressBar::new(self.planned(backends) as u64).with_style(style);
        }
        for &dtype in &self.options.dtypes {
            match dtype {
                DTypeId::F32 => self.run_dtype::<f32>(backends)?,
                DTypeId::F64 => self.run_dtype::<f64>(backends)?,
                DTypeId::F16 => self.run_dtype::<f16>(backends)?,
            }
        }
        self.progress.finish_and_clear();
        Ok(())
    }

    fn run_dtype<T: BenchElem>(&mut self, backends: &[Backend]) -> Result<()> {
        let suite = &self.options.suite;
        let cases: Vec<CaseId> = suite
            .iter()
            .copied()
            .filter(|&c| c != CaseId::Lat)
            .collect();
        let mut sizes: Vec<usize> = backends.iter().flat_map(|b| b.sizes.clone()).collect();
        sizes.sort_unstable();
        sizes.dedup();
        if !cases.is_empty() {
            for n in sizes {
                let host = HostInputs::<T>::new(n, cases.contains(&CaseId::E6));
                let active: Vec<&Backend> =
                    backends.iter().filter(|b| b.sizes.contains(&n)).collect();
                self.run_size(&host, &cases, &active, self.budget)?;
            }
        }
        if suite.contains(&CaseId::Lat) {
            let all: Vec<&Backend> = backends.iter().collect();
            for n in LATENCY_SIZES {
                let host = HostInputs::<T>::new(n, false);
                self.run_size(&host, &[CaseId::Lat], &all, self.budget.latency())?;
            }
        }
        Ok(())
    }

    fn run_size<T: BenchElem>(
        &mut self,
        host: &HostInputs<T>,
        cases: &[CaseId],
        backends: &[&Backend],
        budget: Budget,
    ) -> Result<()> {
        let inputs = backends
            .iter()
            .map(|b| {
                Ok((
                    LazyInputs::new(&b.fused, host)?,
                    LazyInputs::new(&b.unfused, host)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        for &case in cases {
            let len = host.output_len(case);
            let mut want = vec![T::default(); len];
            // The reference for comparing results, computed before timing.
            host.hand(case, self.pool, &mut want);
            for (backend, (fused_in, unfused_in)) in backends.iter().zip(&inputs) {
                let what = format!(
                    "{} {} {} n={}",
                    case.label(),
                    T::ID.name(),
                    backend.id.name(),
                    host.elements(case)
                );
                self.progress.set_message(what.clone());
                let context = |e: Box<dyn std::error::Error + Send + Sync>| format!("{what}: {e}");
                // The hand loop and lazyfuse take turns, so that both see
                // the same moments of the machine's drifting bandwidth.
                let mut got = vec![T::default(); len];
                let mut scratch = vec![T::default(); len];
                let mut hand_run = || {
                    host.hand(case, self.pool, &mut scratch);
                    Ok(())
                };
                let mut fused_run = || fused_in.run(case, &mut got);
                let [hand, fused]: [Measured; 2] = measure_interleaved(
                    budget,
                    &mut [
                        (None, &mut hand_run),
                        (Some(&backend.fused), &mut fused_run),
                    ],
                )
                .map_err(context)?
                .try_into()
                .map_err(|_| format!("{what}: two measurements expected"))?;
                let hand = hand.timing;
                let mut got_unfused = vec![T::default(); len];
                let unfused = measure(budget, Some(&backend.unfused), || {
                    unfused_in.run(case, &mut got_unfused)
                })
                .map_err(context)?;
                let record = self.record(
                    host,
                    case,
                    backend.id,
                    hand,
                    fused,
                    unfused,
                    [max_error(&got, &want), max_error(&got_unfused, &want)],
                );
                if !record.ok {
                    self.progress.println(format!(
                        "warning: {what}: results differ from the hand loop's \
                         (error {:e} fused, {:e} unfused; tolerance {:e})",
                        record.max_error, record.unfused_max_error, record.tolerance
                    ));
                }
                self.records.push(record);
                self.progress.inc(1);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn record<T: BenchElem>(
        &self,
        host: &HostInputs<T>,
        case: CaseId,
        backend: BackendId,
        hand: crate::measure::Timing,
        fused: crate::measure::Measured,
        unfused: crate::measure::Measured,
        [error, unfused_error]: [f64; 2],
    ) -> Record {
        let bytes = host.bytes(case);
        let gbps = bytes as f64 / fused.timing.median_s / 1e9;
        let shape = match case.shape() {
            crate::cases::Shape::Axis => format!("({}, {})", host.m, host.m),
            _ => format!("({},)", host.n),
        };
        let tolerance = tolerance(T::ID);
        Record {
            case: case.label(),
            expression: case.formula(),
            backend: backend.name(),
            dtype: T::ID.name(),
            elements: host.elements(case),
            shape,
            bytes,
            lazyfuse: fused.timing,
            gbps,
            hand,
            hand_gbps: bytes as f64 / hand.median_s / 1e9,
            time_vs_hand: fused.timing.median_s / hand.median_s,
            unfused: unfused.timing,
            time_vs_unfused: fused.timing.median_s / unfused.timing.median_s,
            fraction_of_copy_bandwidth: gbps / self.copy_gbps,
            stats_first: fused.first.into(),
            stats_steady: fused.steady.into(),
            unfused_stats_steady: unfused.steady.into(),
            max_error: error,
            unfused_max_error: unfused_error,
            tolerance,
            ok: error <= tolerance && unfused_error <= tolerance,
            note: case.note(),
        }
    }
}
