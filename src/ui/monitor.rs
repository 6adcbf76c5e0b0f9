//! GPU utilisation and memory from NVML, sampled while the smoke test runs, for the
//! Verify page's live plot. No driver: one "unavailable" report, never a panic.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One sample of GPU 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since sampling began.
    pub t: f64,
    /// Percent of the last period a kernel ran.
    pub util: f64,
    pub mem_used: u64,
    pub mem_total: u64,
}

pub const PERIOD: Duration = Duration::from_millis(250);

/// Samples until `stop` is set, handing each sample (or, once, why there are none) to
/// `report`.
pub fn run(stop: &AtomicBool, report: &mut dyn FnMut(Result<Sample, String>)) {
    use nvml_wrapper::Nvml;
    let nvml = match std::panic::catch_unwind(Nvml::init) {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => return report(Err(e.to_string())),
        Err(_) => return report(Err("NVML panicked while loading".into())),
    };
    let device = match nvml.device_by_index(0) {
        Ok(d) => d,
        Err(e) => return report(Err(e.to_string())),
    };
    let start = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        let util = device.utilization_rates().map(|u| u.gpu as f64);
        let mem = device.memory_info();
        match (util, mem) {
            (Ok(util), Ok(m)) => report(Ok(Sample {
                t: start.elapsed().as_secs_f64(),
                util,
                mem_used: m.used,
                mem_total: m.total,
            })),
            (Err(e), _) | (_, Err(e)) => return report(Err(e.to_string())),
        }
        std::thread::sleep(PERIOD);
    }
}
