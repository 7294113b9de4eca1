//! Shared utilities, usable by every stage: parsers of durations and CPU lists, clocks and
//! timestamps, pinning, the one median, atomic file writes, the seeded generator; and the
//! process-wide pieces every stage touches: Ctrl-C (`interrupt`), the small HTTP/1.1 client and
//! request builder (`http1`) and terminal progress bars (`progress`).
//! Uses no stage.

pub mod http1;
pub mod interrupt;
pub mod progress;

use anyhow::Context;
use anyhow::{bail, Result};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses `250ms`, `10s`, `2m`, `1.5s`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("{text:?} is not a duration; write e.g. 500ms, 10s or 2m"))?;
    if !value.is_finite() || value < 0.0 {
        bail!("{text:?} must be a non-negative duration");
    }
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => bail!("{text:?} has unknown unit {unit:?}; use ms, s, m or h"),
    };
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a CPU list as `taskset -c` does (`0`, `0,2`, `1-3`) and checks that this machine
/// has those CPUs.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>> {
    let cpus = parse_cpu_syntax(text)?;
    let online = online_cpus();
    if let Some(c) = cpus.iter().find(|c| **c >= online) {
        bail!(
            "CPU {c} does not exist: this machine has CPUs 0-{}",
            online - 1
        );
    }
    Ok(cpus)
}

/// A CPU list's CPUs, sorted, without checking that they exist here (another host's).
pub fn parse_cpu_syntax(text: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || anyhow::anyhow!("{text:?} is not a CPU list; write e.g. 0 or 0,1 or 2-3");
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if b < a {
                return Err(bad());
            }
            cpus.extend(a..=b);
        } else {
            cpus.push(part.parse().map_err(|_| bad())?);
        }
    }
    if cpus.is_empty() {
        bail!("empty CPU list");
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n < 1 {
        1
    } else {
        n as usize
    }
}

/// A latency for a terminal line: "850 µs", "12.3 ms", "1.52 s".
pub fn format_latency(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{:.2} s", us as f64 / 1e6)
    }
}

static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--verbose`: print detail that is otherwise summarised (every contract case).
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

/// `n` with thousands separated by commas: 6000 -> "6,000".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn format_cpus(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Pins the calling thread (and threads it creates later) to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity(0) targets the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus {
            libc::CPU_SET(*c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// CPU time consumed by the calling thread.
pub fn thread_cpu_time() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(id, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// UTC time as RFC 3339 (`2026-11-22T19:26:11Z`), without a date-time dependency.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A directory-safe timestamp: `20261122-192611`.
pub fn stamp(t: SystemTime) -> String {
    rfc3339(t)
        .replace(['-', ':'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string()
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's method).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
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

/// The median: the middle value, or the mean of the two middle ones; NaN when empty. The one
/// median of the project (statistics over runs, recovery baselines, benchmark ratios).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    {
        let mut f = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

/// Now, as an RFC 3339 UTC timestamp.
/// Seconds since the Unix epoch, by this machine's clock.
pub fn unix_seconds() -> f64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// SplitMix64: a small, fast, seeded generator. Everything random in iobound (bootstrap
/// resamples, downstream latencies, corpus bytes) comes from one, so results reproduce.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_read_in_their_unit() {
        assert_eq!(format_latency(Duration::from_micros(850)), "850 µs");
        assert_eq!(format_latency(Duration::from_micros(12_345)), "12.3 ms");
        assert_eq!(format_latency(Duration::from_millis(1520)), "1.52 s");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(6000), "6,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("10 parsecs")
            .unwrap_err()
            .to_string()
            .contains("unknown unit"));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        if online_cpus() >= 2 {
            assert_eq!(parse_cpu_list("1,0,0").unwrap(), vec![0, 1]);
            assert_eq!(parse_cpu_list("0-1").unwrap(), vec![0, 1]);
        }
        assert!(parse_cpu_list("9999")
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        assert!(parse_cpu_list("1-0").is_err());
        assert!(parse_cpu_list("x").is_err());
    }

    #[test]
    fn timestamps() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_375_571); // 2026-11-22T19:26:11Z
        assert_eq!(rfc3339(t), "2026-11-22T19:26:11Z");
        assert_eq!(stamp(t), "20261122-192611");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
    }
}
