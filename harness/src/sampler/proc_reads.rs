//! What the sampler reads of one process from /proc: the clock tick and page size, its
//! threads' context switches, its proportional set size, its open fds and the sockets among
//! them, and its connections to a port.

use std::fs;

pub(super) fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

pub(super) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Context switches of every live thread of `pid`, by thread id, into `seen`: a thread that
/// exits keeps the counts it was last seen with, so its switches are not lost from the sum.
/// The same reading of each thread's status names the JIT's compiler threads.
pub(super) fn ctx_switches(
    pid: i32,
    seen: &mut std::collections::HashMap<u64, (u64, u64)>,
    compilers: &mut super::jit::CompilerThreads,
) {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u64>().ok()) else {
            continue;
        };
        let Ok(status) = fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        compilers.note(pid, tid, &status);
        let (mut vol, mut invol) = (0, 0);
        for line in status.lines() {
            if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
                vol = v.trim().parse::<u64>().unwrap_or(0);
            } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
                invol = v.trim().parse::<u64>().unwrap_or(0);
            }
        }
        seen.insert((pid as u64) << 32 | tid, (vol, invol));
    }
}

/// Proportional set size of `pid` (MB): its shared pages divided among the processes sharing
/// them, so that the pages a cluster's workers share count once.
pub(super) fn pss_mb(pid: i32) -> Option<f64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let kb: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// Open fds of `pid`; the inodes of its sockets go into `inodes`.
pub(super) fn fds(pid: i32, inodes: &mut std::collections::HashSet<u64>) -> u64 {
    // One open of /proc/<pid>/fd, then each entry's type read relative to it (fstatat): no
    // path built or resolved from the root per fd. Still ~4 µs per fd, hence the census budget.
    let Ok(path) = std::ffi::CString::new(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    // SAFETY: a valid C string; the fd is owned by the DIR below (or closed here).
    let dfd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dfd < 0 {
        return 0;
    }
    // SAFETY: dfd is an open directory fd; fdopendir takes it over.
    let dir = unsafe { libc::fdopendir(dfd) };
    if dir.is_null() {
        // SAFETY: dfd is ours and still open.
        unsafe { libc::close(dfd) };
        return 0;
    }
    let mut all = 0;
    loop {
        // SAFETY: dir is a valid DIR used by this thread only.
        let e = unsafe { libc::readdir(dir) };
        if e.is_null() {
            break;
        }
        // SAFETY: d_name of a returned entry is a NUL-terminated string.
        let name = unsafe { std::ffi::CStr::from_ptr((*e).d_name.as_ptr()) };
        if name.to_bytes().first() == Some(&b'.') {
            continue;
        }
        all += 1;
        // SAFETY: st is a valid out-pointer; the name is relative to the open directory.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatat(libc::dirfd(dir), name.as_ptr(), &mut st, 0) } == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFSOCK
        {
            inodes.insert(st.st_ino);
        }
    }
    // SAFETY: dir came from fdopendir and is closed once.
    unsafe { libc::closedir(dir) };
    all
}

/// TCP connections (from /proc/net/tcp and tcp6 text) owned by one of `inodes` whose remote
/// port is `port`.
pub(super) fn connections_to(
    tables: &[String],
    inodes: &std::collections::HashSet<u64>,
    port: u16,
) -> u64 {
    let want = format!(":{port:04X}");
    tables
        .iter()
        .flat_map(|t| t.lines().skip(1))
        .filter(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            f.len() > 9
                && f[2].ends_with(&want)
                && f[9].parse::<u64>().is_ok_and(|i| inodes.contains(&i))
        })
        .count() as u64
}

/// Open fds of `pid` from the size of /proc/<pid>/fd (Linux >= 6.2 reports the count there);
/// None where the kernel does not.
pub(super) fn fd_count(pid: i32) -> Option<u64> {
    let n = fs::metadata(format!("/proc/{pid}/fd")).ok()?.len();
    (n > 0).then_some(n)
}
