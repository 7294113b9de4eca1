//! The driver's CPUs, watched: their busy share per second from /proc/stat, so that a run can
//! say when the driver (or a process sharing its CPUs) was the limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Busy share of the driver's CPUs per second, read from /proc/stat by a thread of its own
/// while the load runs (every process on those CPUs counts: services share them).
pub struct CpuBusy {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<f64>>>,
}

impl CpuBusy {
    pub fn watch(cpus: Vec<usize>) -> CpuBusy {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = (!cpus.is_empty()).then(|| {
            std::thread::spawn(move || {
                let mut out = Vec::new();
                let mut before = cpu_times(&cpus);
                let mut next = Instant::now() + Duration::from_secs(1);
                while !flag.load(Ordering::Relaxed) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    let now = cpu_times(&cpus);
                    let busiest = before
                        .iter()
                        .zip(&now)
                        .map(|(&(b0, t0), &(b1, t1))| {
                            if t1 > t0 {
                                (b1 - b0) as f64 * 100.0 / (t1 - t0) as f64
                            } else {
                                0.0
                            }
                        })
                        .fold(0.0, f64::max);
                    out.push((busiest * 10.0).round() / 10.0);
                    before = now;
                    next += Duration::from_secs(1);
                }
                out
            })
        });
        CpuBusy { stop, handle }
    }

    pub fn stop(mut self) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

/// (busy, total) jiffies of each of `cpus` from /proc/stat; busy is everything but idle and
/// iowait.
pub(crate) fn cpu_times(cpus: &[usize]) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    cpus.iter()
        .map(|c| {
            let prefix = format!("cpu{c} ");
            let v: Vec<u64> = text
                .lines()
                .find(|l| l.starts_with(&prefix))
                .map(|l| {
                    l.split_whitespace()
                        .skip(1)
                        .take(8)
                        .filter_map(|x| x.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            let total: u64 = v.iter().sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            (total.saturating_sub(idle), total)
        })
        .collect()
}
