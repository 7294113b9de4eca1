//! How results.json is written and read: atomically (temp file + rename) after every run, so an
//! interrupted or crashed plan leaves valid partial results; a failed write tried again, and
//! kept elsewhere when it still fails, both files named.

use super::record::{Results, SCHEMA_VERSION};
use crate::util::files::write_atomic;
use anyhow::{Context, Result};
use std::path::Path;

/// Waits before each further try of a write that failed (a full disk may be freed meanwhile).
const SAVE_RETRIES: [std::time::Duration; 2] = [
    std::time::Duration::from_secs(1),
    std::time::Duration::from_secs(3),
];

impl Results {
    /// Writes `dir`/results.json, trying again after a failed write; the error names the file.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self)?;
        let path = dir.join("results.json");
        let mut outcome = write_atomic(&path, &json);
        for wait in SAVE_RETRIES {
            if outcome.is_ok() {
                break;
            }
            std::thread::sleep(wait);
            outcome = write_atomic(&path, &json);
        }
        outcome.with_context(|| format!("{} tries failed", SAVE_RETRIES.len() + 1))
    }

    /// A save between runs: a failed write (after its retries) is a warning, not the end of the
    /// plan; the runs go on, and what was measured stays in memory for the next save.
    pub fn checkpoint(&self, dir: &Path) {
        if let Err(e) = self.save(dir) {
            eprintln!(
                "  warning: {e:#}; the runs go on, and what was measured stays in memory until a \
                 later write succeeds (free some space)"
            );
        }
    }

    /// The last save of a plan: where results.json cannot be written even after the retries,
    /// what was measured goes to a file of its own under the system's temporary directory, and
    /// the error names both files.
    pub fn save_last(&self, dir: &Path) -> Result<()> {
        let Err(e) = self.save(dir) else {
            return Ok(());
        };
        let kept = tempfile::Builder::new()
            .prefix("iobound-results-")
            .suffix(".json")
            .tempfile()
            .and_then(|mut f| {
                serde_json::to_writer_pretty(&mut f, self)?;
                f.keep().map_err(|k| k.error)
            });
        match kept {
            Ok((_, at)) => Err(e.context(format!(
                "what was measured is in {} instead: move it to {}/results.json once there is \
                 room (iobound table and report read it there)",
                at.display(),
                dir.display()
            ))),
            Err(k) => Err(e.context(format!(
                "nor could it be kept under the temporary directory ({k}): what was measured is lost"
            ))),
        }
    }

    pub fn load(path: &Path) -> Result<Results> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let not_results = || format!("{} is not an iobound results file", path.display());
        let mut value: serde_json::Value = serde_json::from_str(&text).with_context(not_results)?;
        // A results directory may come from elsewhere: what the tables and pages print of its
        // names and messages cannot steer the terminal or the page they are printed to.
        crate::util::printable::strings_in(&mut value);
        let r: Results = serde_json::from_value(value).with_context(not_results)?;
        anyhow::ensure!(
            r.schema_version == SCHEMA_VERSION,
            "{} has schema_version {}; this iobound reads {SCHEMA_VERSION}",
            path.display(),
            r.schema_version
        );
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use crate::results::test_support::{blank_results, blank_run};
    use crate::util::files::tests::TinyDisk;

    #[test]
    fn results_that_cannot_be_written_are_kept_elsewhere_and_both_files_named() {
        let disk = TinyDisk::new(64);
        let dir = disk.0.path();
        let mut res = blank_results(&["a"]);
        res.save(dir).unwrap();
        disk.fill(0);
        res.runs = (1..=20).map(|i| blank_run("a", "s", i)).collect();
        let e = format!("{:#}", res.save_last(dir).unwrap_err());
        let path = dir.join("results.json");
        assert!(
            e.contains(&format!("cannot write {}", path.display())),
            "{e}"
        );
        assert!(
            e.contains("3 tries failed") && e.contains("No space left"),
            "{e}"
        );
        let kept = e
            .split_whitespace()
            .find(|w| w.contains("iobound-results-"))
            .expect(&e);
        let back = super::Results::load(std::path::Path::new(kept)).unwrap();
        assert_eq!(back.runs.len(), 20);
        std::fs::remove_file(kept).unwrap();
        // Room again: the next save writes where it should.
        std::fs::remove_file(dir.join("filler")).unwrap();
        res.save_last(dir).unwrap();
        assert_eq!(super::Results::load(&path).unwrap().runs.len(), 20);
    }
}
