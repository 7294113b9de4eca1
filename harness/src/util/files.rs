//! Files: writes that a crash cannot leave half done, private temporary directories, and the
//! names iobound accepts for what becomes a file or directory.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Whether `name` (a plan's, a scenario's, a contender's) may name a file or directory and be
/// one word on a host's command line as it is: letters, digits, '-' and '_' only, so it can
/// neither climb out of the directory it is joined to nor hold shell syntax.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `path` with `.` and `..` resolved by name, without touching the disk (the path need not
/// exist, and a symlink stays a symlink).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename. A write
/// that fails (a full disk) names the file and leaves neither a partial file nor the temporary
/// one; `path` keeps what it held. The temporary file has a fresh random name, made
/// exclusively (no link or file already there is opened), and the rename replaces `path`
/// itself: a link at `path` is replaced, never written through.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with_mode(path, bytes, 0o644)
}

/// `write_atomic` for a secret (a password for initdb, say): readable and writable by its
/// owner alone from the moment it exists.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with_mode(path, bytes, 0o600)
}

fn write_with_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let written = (|| {
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        // tempfile makes it 0600; an output is readable as a file written the usual way is.
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok::<(), std::io::Error>(())
    })();
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// Makes `dir` (its parent must exist) or accepts it as it is when it is a directory, never a
/// symbolic link: a results directory from a clone or a tarball could hold a link named
/// like an output folder, and the writes into it would land wherever it points.
pub fn own_dir(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => bail!(
            "{} is a symbolic link: iobound writes its outputs only into directories of its \
             own; remove it and run again",
            dir.display()
        ),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => bail!(
            "{} is not a directory: remove it and run again",
            dir.display()
        ),
        Err(_) => {
            std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))
        }
    }
}

/// A new directory under the system's temporary directory, with a random name after
/// `prefix`, made exclusively and readable by its owner only; removed when dropped (unless
/// kept with `keep`). Never a predictable path: under /tmp another user could have put a link
/// or a directory of theirs there first.
pub fn private_temp_dir(prefix: &str) -> Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    // tempfile makes directories with the default mode (0755 under the usual umask).
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(std::fs::Permissions::from_mode(0o700))
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
pub(crate) mod tests {
    use super::*;

    /// A tmpfs of `kb` KB mounted on a new directory, unmounted when dropped (needs root, as
    /// `./iobound test` runs).
    pub(crate) struct TinyDisk(pub tempfile::TempDir);

    impl TinyDisk {
        pub(crate) fn new(kb: u32) -> TinyDisk {
            let dir = tempfile::tempdir().unwrap();
            let ok = std::process::Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={kb}k"), "tmpfs"])
                .arg(dir.path())
                .status()
                .unwrap()
                .success();
            assert!(
                ok,
                "mounting a tmpfs needs root (./iobound test runs as root)"
            );
            TinyDisk(dir)
        }

        /// Fills it, leaving about `left` bytes.
        pub(crate) fn fill(&self, left: u64) {
            // SAFETY: statvfs only writes into the struct given.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            let c = std::ffi::CString::new(self.0.path().to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
            let free = st.f_bavail as u64 * st.f_frsize as u64;
            let filler = vec![0u8; free.saturating_sub(left) as usize];
            let _ = std::fs::write(self.0.path().join("filler"), filler);
        }
    }

    impl Drop for TinyDisk {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg(self.0.path())
                .status();
        }
    }

    #[test]
    fn a_write_to_a_full_disk_names_the_file_and_leaves_the_old_one_whole() {
        let disk = TinyDisk::new(64);
        let path = disk.0.path().join("results.json");
        write_atomic(&path, b"{\"old\": true}").unwrap();
        disk.fill(0);
        let e = format!("{:#}", write_atomic(&path, &[b'x'; 32 * 1024]).unwrap_err());
        assert!(
            e.contains(&format!("cannot write {}", path.display())) && e.contains("No space left"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"old\": true}");
        // Nothing but the file and the filler: the temporary file went with the failed write.
        let left: Vec<_> = std::fs::read_dir(disk.0.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != "results.json" && n != "filler")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_private_directory_is_its_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = private_temp_dir("iobound-mode-").unwrap();
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "mode {mode:o}");
    }

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

    #[test]
    fn a_link_where_the_temporary_file_goes_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), b"precious").unwrap();
        // A results directory from elsewhere, with links where the writes go.
        std::os::unix::fs::symlink(outside.path(), dir.path().join("summary.txt.tmp")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("report.md")).unwrap();
        write_atomic(&dir.path().join("summary.txt"), b"summary").unwrap();
        write_atomic(&dir.path().join("report.md"), b"report").unwrap();
        assert_eq!(std::fs::read(outside.path()).unwrap(), b"precious");
        assert_eq!(
            std::fs::read(dir.path().join("summary.txt")).unwrap(),
            b"summary"
        );
        // The link itself was replaced by the file, not followed.
        let md = std::fs::symlink_metadata(dir.path().join("report.md")).unwrap();
        assert!(md.file_type().is_file());
    }

    #[test]
    fn a_directory_to_write_into_is_made_or_refused_when_it_is_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let charts = dir.path().join("charts");
        own_dir(&charts).unwrap();
        assert!(charts.is_dir());
        own_dir(&charts).unwrap();
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(outside.path(), &linked).unwrap();
        let e = format!("{:#}", own_dir(&linked).unwrap_err());
        assert!(
            e.contains("is a symbolic link") && e.contains("remove it"),
            "{e}"
        );
    }

    #[test]
    fn a_secret_is_its_owners_alone_and_an_output_readable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |name: &str| {
            std::fs::metadata(dir.path().join(name))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        write_private(&dir.path().join("pgdata-1.pw"), b"secret").unwrap();
        write_atomic(&dir.path().join("report.md"), b"report").unwrap();
        assert_eq!((mode("pgdata-1.pw"), mode("report.md")), (0o600, 0o644));
    }
}
