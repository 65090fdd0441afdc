//! The simulated device's timeline ([`lazyfuse_core::timeline`]): each
//! copy and kernel is an interval on its engine, starting when both the
//! engine and its stream are free, lasting what the simulated bandwidths
//! and throughput say ([`SimTiming`]).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use lazyfuse_core::{DeviceEngine, TimelineEvent};

/// How fast the simulated device is (what its timeline's intervals last).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimTiming {
    /// Host → device bytes per second (default 25 GB/s, PCIe 4 x16).
    pub host_to_device: f64,
    /// Device → host bytes per second (default 25 GB/s).
    pub device_to_host: f64,
    /// Elements (or threads) a kernel processes per second (default 10^11).
    pub elements_per_second: f64,
    /// A kernel's fixed cost in seconds (default 3 µs).
    pub launch_overhead: f64,
}

impl Default for SimTiming {
    fn default() -> Self {
        SimTiming {
            host_to_device: 25e9,
            device_to_host: 25e9,
            elements_per_second: 1e11,
            launch_overhead: 3e-6,
        }
    }
}

/// The intervals recorded so far, and when each engine and stream is free.
#[derive(Debug, Default)]
pub struct Timeline {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    engine_free: HashMap<DeviceEngine, f64>,
    stream_free: HashMap<u64, f64>,
    events: Vec<TimelineEvent>,
}

/// The most intervals kept (the oldest are dropped beyond).
const KEPT: usize = 1 << 16;

impl Timeline {
    /// Records `seconds` of work on `engine` for `stream`.
    pub fn record(
        &self,
        engine: DeviceEngine,
        stream: u64,
        seconds: f64,
        what: impl FnOnce() -> String,
    ) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let engine_free = state.engine_free.get(&engine).copied().unwrap_or(0.0);
        let stream_free = state.stream_free.get(&stream).copied().unwrap_or(0.0);
        let start = engine_free.max(stream_free);
        let end = start + seconds.max(0.0);
        state.engine_free.insert(engine, end);
        state.stream_free.insert(stream, end);
        if state.events.len() == KEPT {
            state.events.remove(0);
        }
        state.events.push(TimelineEvent {
            engine,
            stream,
            start,
            end,
            what: what(),
        });
    }

    /// Makes later work on `waiter` start after everything recorded so far
    /// on the streams `waited` (a CUDA event recorded there and waited on).
    pub fn wait(&self, waiter: u64, waited: &[u64]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let ready = waited
            .iter()
            .filter_map(|s| state.stream_free.get(s).copied())
            .fold(0.0, f64::max);
        let free = state.stream_free.entry(waiter).or_insert(0.0);
        *free = free.max(ready);
    }

    /// The intervals so far, in the order they were queued.
    pub fn events(&self) -> Vec<TimelineEvent> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .events
            .clone()
    }
}
