//! A results directory as the later stages read it: the record (results.json) and the files
//! written beside it (each run's per-second histogram log, each profile's folded stacks). The
//! files are read here, so stats/ does no file I/O and report/ takes this one value instead of
//! the record and its directory as a pair.

use super::record::{Results, Run};
use anyhow::{anyhow, Context, Result};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::Histogram;
use std::path::Path;

/// The largest file read back from a results directory (a run of an hour at C10K writes a
/// histogram log of a few MB; a profile's folded stacks are smaller).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// A result set and the directory its files are in. Cheap to copy: it borrows both.
#[derive(Clone, Copy)]
pub struct ResultsDir<'a> {
    pub results: &'a Results,
    pub dir: &'a Path,
}

impl<'a> ResultsDir<'a> {
    pub fn new(results: &'a Results, dir: &'a Path) -> ResultsDir<'a> {
        ResultsDir { results, dir }
    }

    /// A run's histogram log read back; None when it has none or it cannot be read (see
    /// `read_inside`).
    pub fn histogram_log_bytes(&self, run: &Run) -> Option<Vec<u8>> {
        read_inside(self.dir, run.histogram_log.as_ref()?).ok()
    }

    /// A run's latency histograms, one per logged second, in order; None when it has no log,
    /// the log cannot be read, or an entry does not decode (a partial list would shift the
    /// seconds against the run's interval rows).
    pub fn seconds(&self, run: &Run) -> Option<Vec<Histogram<u64>>> {
        use base64::Engine;
        let bytes = self.histogram_log_bytes(run)?;
        let mut hists = Vec::new();
        for entry in IntervalLogIterator::new(&bytes) {
            if let Ok(LogEntry::Interval(h)) = entry {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(h.encoded_histogram())
                    .ok()?;
                hists.push(crate::driver::summary::decode_histogram_bytes(&raw).ok()?);
            }
        }
        Some(hists)
    }

    /// The folded stacks of a profile (its `folded` path, relative to the directory): one
    /// (stack, samples) pair per line.
    pub fn folded(&self, rel: &str) -> Result<Vec<(String, u64)>> {
        let bytes = read_inside(self.dir, rel)?;
        Ok(super::profile::parse_folded(&String::from_utf8_lossy(
            &bytes,
        )))
    }
}

/// The file at `rel` inside `dir`. Refused when its path leaves the directory (absolute, or
/// through `..`: a results file from elsewhere must not make iobound read /dev/zero or another
/// user's files, nor write a flame graph beside them), when it is not a regular file, or when it
/// is larger than MAX_FILE_BYTES.
pub fn read_inside(dir: &Path, rel: &str) -> Result<Vec<u8>> {
    let path = Path::new(rel);
    let inside = path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !inside {
        return Err(anyhow!("{rel} is not inside the results directory"));
    }
    // No link on the way, the file's own name included: a link could lead out of the
    // directory whatever its name says.
    let mut at = dir.to_path_buf();
    for part in path.components() {
        at.push(part);
        let linked = std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
        if linked {
            return Err(anyhow!(
                "{} is a symbolic link: a results directory's files are read only as they are",
                at.display()
            ));
        }
    }
    let full = dir.join(path);
    // Opened without following a link and without waiting (a FIFO opened for reading waits
    // for a writer), then checked to be a regular file before anything is read.
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&full)
        .with_context(|| format!("cannot read {}", full.display()))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(anyhow!("{} is not a regular file", full.display()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(anyhow!(
            "{} is larger than {MAX_FILE_BYTES} bytes",
            full.display()
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE_BYTES), &mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::ResultsDir;
    use crate::results::test_support::{blank_results, blank_run};

    /// The paths a results file from elsewhere might name to read outside its directory.
    const OUTSIDE: [&str; 4] = [
        "/dev/zero",
        "/etc/hostname",
        "../a.hlog",
        "histograms/../../x",
    ];

    #[test]
    fn a_histogram_log_is_read_only_from_inside_the_results_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("histograms")).unwrap();
        std::fs::write(dir.path().join("histograms/a.hlog"), b"#log").unwrap();
        let results = blank_results(&["a"]);
        let set = ResultsDir::new(&results, dir.path());
        let mut r = blank_run("a", "s", 1);
        r.histogram_log = Some("histograms/a.hlog".into());
        assert_eq!(set.histogram_log_bytes(&r).as_deref(), Some(&b"#log"[..]));
        // /dev/zero made `iobound table` read without end; `..` leaves the directory.
        for outside in OUTSIDE {
            r.histogram_log = Some(outside.into());
            assert_eq!(set.histogram_log_bytes(&r), None, "{outside}");
        }
        r.histogram_log = Some("histograms".into());
        assert_eq!(
            set.histogram_log_bytes(&r),
            None,
            "a directory is not a log"
        );
    }

    #[test]
    fn folded_stacks_are_read_only_from_inside_the_results_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("p.folded"),
            "main;work 7\nmain 3\nnot a line\n",
        )
        .unwrap();
        let results = blank_results(&["a"]);
        let set = ResultsDir::new(&results, dir.path());
        assert_eq!(
            set.folded("p.folded").unwrap(),
            vec![("main;work".to_string(), 7), ("main".to_string(), 3)]
        );
        for outside in OUTSIDE {
            let e = set.folded(outside).unwrap_err().to_string();
            assert!(
                e.contains("not inside the results directory"),
                "{outside}: {e}"
            );
        }
    }

    #[test]
    fn a_fifo_or_a_link_is_refused_without_waiting_or_leaving_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("a.hlog"), b"#outside").unwrap();
        let fifo = std::ffi::CString::new(dir.path().join("f.hlog").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the path given.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink(outside.path().join("a.hlog"), dir.path().join("l.hlog"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("histograms")).unwrap();
        let results = blank_results(&["a"]);
        let set = ResultsDir::new(&results, dir.path());
        let mut r = blank_run("a", "s", 1);
        // Each read must end at once (a FIFO opened for reading waits for a writer).
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dir.path().to_path_buf();
        std::thread::spawn(move || {
            let e = super::read_inside(&d, "f.hlog").map(|_| ()).unwrap_err();
            tx.send(format!("{e:#}")).unwrap();
        });
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading a FIFO returned");
        assert!(e.contains("not a regular file"), "{e}");
        for rel in ["l.hlog", "histograms/a.hlog"] {
            r.histogram_log = Some(rel.into());
            assert_eq!(set.histogram_log_bytes(&r), None, "{rel}");
            let e = format!("{:#}", super::read_inside(dir.path(), rel).unwrap_err());
            assert!(e.contains("symbolic link"), "{rel}: {e}");
        }
    }
}
