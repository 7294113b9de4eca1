//! A JIT compiler's own threads, where the runtime shows them. A JVM names its compiler
//! threads `C1 CompilerThreadN` and `C2 CompilerThreadN` (`JVMCI CompilerThreadN` under Graal);
//! /proc shows the first 15 characters of a thread's name. Their CPU time says whether the
//! compiler is still at work: a contender whose throughput looks flat while its compiler is
//! busy is on a plateau of its climb, not at steady state. (Node's V8 compiles on its general
//! worker threads, which do other work too, so it has no such signal here.)

use std::collections::HashMap;
use std::fs;

/// Whether a thread's name (as /proc shows it) is a JVM compiler thread's.
pub fn is_compiler(name: &str) -> bool {
    ["C1 Compiler", "C2 Compiler", "JVMCI Compiler"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The compiler threads of the sampled processes: found at each census (the JVM starts and
/// stops them as the compile queue grows and shrinks), their CPU read at every sample.
#[derive(Debug, Default)]
pub struct CompilerThreads {
    /// Last CPU seconds of every compiler thread ever seen, by (pid, tid): one that exits
    /// keeps what it used.
    cpu: HashMap<(i32, u64), f64>,
    /// The ones the last census found alive.
    live: Vec<(i32, u64)>,
}

impl CompilerThreads {
    /// A census begins: the threads it finds replace the live ones.
    pub fn begin_census(&mut self) {
        self.live.clear();
    }

    /// A thread the census found, by the `Name:` line of its status.
    pub fn note(&mut self, pid: i32, tid: u64, status: &str) {
        let name = status
            .lines()
            .find_map(|l| l.strip_prefix("Name:"))
            .map(str::trim)
            .unwrap_or("");
        if is_compiler(name) {
            self.live.push((pid, tid));
            self.cpu.entry((pid, tid)).or_insert(0.0);
        }
    }

    /// The compiler threads' CPU seconds so far (user + system), the live ones read anew;
    /// None when no compiler thread was ever seen (not a JVM).
    pub fn cpu_s(&mut self, ticks: f64) -> Option<f64> {
        if self.cpu.is_empty() {
            return None;
        }
        for &(pid, tid) in &self.live {
            if let Some(cpu) = thread_cpu_s(pid, tid, ticks) {
                self.cpu.insert((pid, tid), cpu);
            }
        }
        Some(self.cpu.values().sum())
    }
}

/// A thread's CPU seconds from /proc/<pid>/task/<tid>/stat (utime + stime).
fn thread_cpu_s(pid: i32, tid: u64, ticks: f64) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    // Fields after the name's closing parenthesis: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some((num(11)? + num(12)?) as f64 / ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_threads_are_known_by_their_names() {
        assert!(is_compiler("C2 CompilerThre"));
        assert!(is_compiler("C1 CompilerThre"));
        assert!(is_compiler("JVMCI CompilerT"));
        assert!(!is_compiler("VM Thread"));
        assert!(!is_compiler("http-nio-8080-e"));
        let mut c = CompilerThreads::default();
        assert_eq!(c.cpu_s(100.0), None, "no compiler thread: not a JVM");
        c.note(1, 2, "Name:\tC2 CompilerThre\nState:\tS (sleeping)\n");
        c.note(1, 3, "Name:\tGC Thread#0\n");
        assert_eq!(c.live, vec![(1, 2)]);
        // A thread gone from /proc keeps what it was last seen with (here nothing yet).
        assert_eq!(c.cpu_s(100.0), Some(0.0));
    }

    /// The thread spins until its own CPU clock has run 150 ms, not for 150 ms of wall time:
    /// beside the integration tests on two CPUs a wall-time spin got 40 ms of CPU (CI).
    #[test]
    fn this_process_thread_cpu_is_read_from_proc() {
        let pid = std::process::id() as i32;
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u64;
        let own_cpu_s = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: ts is a valid timespec for clock_gettime to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
        };
        let (start, deadline) = (own_cpu_s(), std::time::Instant::now());
        let mut x = 0u64;
        while own_cpu_s() - start < 0.15 {
            assert!(
                deadline.elapsed().as_secs() < 30,
                "150 ms of CPU not had in 30 s"
            );
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        assert!(x != 1);
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let cpu = thread_cpu_s(pid, tid, ticks).unwrap();
        assert!(cpu >= 0.05, "{cpu}");
    }
}
