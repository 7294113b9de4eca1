//! Files: writes that a crash cannot leave half done.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

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

/// A new directory under the system's temporary directory, with a random name after
/// `prefix`, made exclusively and readable by its owner only; removed when dropped (unless
/// kept with `keep`). Never a predictable path: under /tmp another user could have put a link
/// or a directory of theirs there first.
pub fn private_temp_dir(prefix: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .with_context(|| {
            format!(
                "cannot create a private directory under {}",
                std::env::temp_dir().display()
            )
        })
}

/// Removes what earlier runs killed outright left under `dir`: entries named `{prefix}{pid}`
/// (or `{prefix}{pid}.{ext}`) whose process no longer exists. Returns how many were removed.
pub fn sweep_stale(dir: &Path, prefix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        let digits = rest.split('.').next().unwrap_or("");
        let Ok(pid) = digits.parse::<i32>() else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let p = e.path();
            let ok = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            removed += usize::from(ok.is_ok());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_killed_run_left_is_swept_and_a_live_ones_kept() {
        let cache = tempfile::tempdir().unwrap();
        let own = std::process::id();
        // PIDs above the kernel's pid_max (at most 2^22) belong to no process.
        for name in ["pgdata-99999999", "pgdata-99999999.pw", "kafka-99999999"] {
            std::fs::create_dir_all(cache.path().join(name)).unwrap();
        }
        std::fs::create_dir_all(cache.path().join(format!("pgdata-{own}"))).unwrap();
        std::fs::create_dir_all(cache.path().join("pgdata-notapid")).unwrap();
        assert_eq!(sweep_stale(cache.path(), "pgdata-"), 2);
        assert_eq!(sweep_stale(cache.path(), "kafka-"), 1);
        assert!(cache.path().join(format!("pgdata-{own}")).exists());
        assert!(cache.path().join("pgdata-notapid").exists());
    }
}
