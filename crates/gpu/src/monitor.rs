//! GPU utilisation and memory from NVML, sampled while the smoke test runs (the
//! wizard's Verify page plots them). No driver: one "unavailable" report, never a panic.

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

/// How often a sample is taken.
pub const PERIOD: Duration = Duration::from_millis(250);

/// What one reading of a GPU gives: utilisation (percent), memory used and total.
type Reading = Result<(f64, u64, u64), String>;

/// Samples GPU 0 every [`PERIOD`] until `stop` is set, handing each sample (or, once,
/// why there are none) to `report`.
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
    let mut read = || {
        let util = device.utilization_rates().map_err(|e| e.to_string())?.gpu as f64;
        let m = device.memory_info().map_err(|e| e.to_string())?;
        Ok((util, m.used, m.total))
    };
    sample(&mut read, PERIOD, stop, report);
}

/// The sampling loop over any source of readings: a failed reading is reported and
/// ends it.
fn sample(
    read: &mut dyn FnMut() -> Reading,
    period: Duration,
    stop: &AtomicBool,
    report: &mut dyn FnMut(Result<Sample, String>),
) {
    let start = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        match read() {
            Ok((util, mem_used, mem_total)) => report(Ok(Sample {
                t: start.elapsed().as_secs_f64(),
                util,
                mem_used,
                mem_total,
            })),
            Err(e) => return report(Err(e)),
        }
        std::thread::sleep(period);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_until_stopped_in_order() {
        let stop = AtomicBool::new(false);
        let mut n = 0u64;
        let mut read = || {
            n += 1;
            Ok((n as f64 * 10.0, n * 100, 1000))
        };
        let mut got = Vec::new();
        sample(&mut read, Duration::ZERO, &stop, &mut |s| {
            got.push(s.clone());
            if got.len() == 3 {
                stop.store(true, Ordering::SeqCst);
            }
        });
        let got: Vec<Sample> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(
            got.iter().map(|s| (s.util, s.mem_used)).collect::<Vec<_>>(),
            [(10.0, 100), (20.0, 200), (30.0, 300)]
        );
        assert!(got.windows(2).all(|w| w[0].t <= w[1].t));
    }

    #[test]
    fn a_failed_reading_is_reported_once_and_ends_sampling() {
        let stop = AtomicBool::new(false);
        let mut calls = 0;
        let mut read = || {
            calls += 1;
            if calls == 1 {
                Ok((50.0, 1, 2))
            } else {
                Err("GPU is lost".to_string())
            }
        };
        let mut got = Vec::new();
        sample(&mut read, Duration::ZERO, &stop, &mut |s| got.push(s));
        assert_eq!(got.len(), 2);
        assert!(got[0].is_ok());
        assert_eq!(got[1], Err("GPU is lost".to_string()));
    }

    #[test]
    fn with_or_without_a_driver_it_returns_once_stopped() {
        // This machine may have no NVIDIA driver: then one reason, never a panic.
        let stop = AtomicBool::new(true);
        let mut got = Vec::new();
        run(&stop, &mut |s| got.push(s));
        assert!(got.len() <= 1 && got.iter().all(Result::is_err), "{got:?}");
    }
}
