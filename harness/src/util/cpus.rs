//! CPUs: parsing and checking CPU lists, pinning threads, a thread's CPU time.

use anyhow::{bail, Result};
use std::time::Duration;

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

/// The highest CPU number a list may name (Linux's own limit, CONFIG_NR_CPUS, is at most
/// 8,192): a larger one is a typo, and `0-4000000000` would otherwise be four billion entries.
pub const MAX_CPU: usize = 8191;

/// The longest CPU list accepted, in characters: every CPU up to MAX_CPU written out one by
/// one takes under 40,000.
pub const MAX_LIST_CHARS: usize = 65_536;

/// A CPU list's CPUs, sorted, without checking that they exist here (another host's). The
/// CPUs named are marked in a set of MAX_CPU + 1, so a list naming the same range many times
/// costs no more memory than one naming it once.
pub fn parse_cpu_syntax(text: &str) -> Result<Vec<usize>> {
    if text.len() > MAX_LIST_CHARS {
        bail!(
            "a CPU list of {} characters is longer than any list of real CPUs ({MAX_LIST_CHARS} \
             at most); write ranges, e.g. 0-7",
            text.len()
        );
    }
    let mut named = vec![false; MAX_CPU + 1];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || anyhow::anyhow!("{text:?} is not a CPU list; write e.g. 0 or 0,1 or 2-3");
        let cpu = |n: &str| -> Result<usize> {
            let c: usize = n.trim().parse().map_err(|_| bad())?;
            if c > MAX_CPU {
                bail!("{text:?} names CPU {c}; CPU numbers go up to {MAX_CPU} at most");
            }
            Ok(c)
        };
        if let Some((a, b)) = part.split_once('-') {
            let (a, b) = (cpu(a)?, cpu(b)?);
            if b < a {
                return Err(bad());
            }
            named[a..=b].fill(true);
        } else {
            named[cpu(part)?] = true;
        }
    }
    let cpus: Vec<usize> = (0..=MAX_CPU).filter(|c| named[*c]).collect();
    if cpus.is_empty() {
        bail!("empty CPU list");
    }
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

/// A CPU list as `taskset -c` takes it: `0,1`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        if online_cpus() >= 2 {
            assert_eq!(parse_cpu_list("1,0,0").unwrap(), vec![0, 1]);
            assert_eq!(parse_cpu_list("0-1").unwrap(), vec![0, 1]);
        }
        assert!(parse_cpu_list("999")
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        assert!(parse_cpu_list("1-0").is_err());
        assert!(parse_cpu_list("x").is_err());
        // Every CPU named many times over within the length: the set, once.
        let again = "0-8191,".repeat(MAX_LIST_CHARS / 8);
        assert_eq!(
            parse_cpu_syntax(&again).unwrap(),
            (0..=MAX_CPU).collect::<Vec<_>>()
        );
        assert_eq!(parse_cpu_syntax("3,1-2,2").unwrap(), vec![1, 2, 3]);
        // Beyond it, refused before anything is parsed (15,000 copies took a gigabyte).
        let e = parse_cpu_syntax(&"0-8191,".repeat(15_000))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a CPU list of 105000 characters is longer than any list of real CPUs"),
            "{e}"
        );
        // These overflowed or allocated gigabytes before the existence check.
        for huge in ["0-18446744073709551615", "0-4000000000", "9999"] {
            let e = parse_cpu_syntax(huge).unwrap_err().to_string();
            assert!(
                e.contains("CPU numbers go up to 8191 at most"),
                "{huge}: {e}"
            );
        }
    }
}
