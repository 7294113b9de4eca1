//! The file corpus behind `/hash`: `files` files of `size` bytes, generated from a seed (the
//! same seed gives the same bytes on every machine), cached under `.cache/corpus/`, with the
//! SHA-512 of every file in `vectors.tsv` for conformance checks.

use anyhow::{Context, Result};
use sha2::{Digest, Sha512};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::plan::CorpusSpec;

#[derive(Debug, Clone)]
pub struct Corpus {
    pub spec: CorpusSpec,
    pub dir: PathBuf,
}

/// The bytes of file `id`: a SplitMix64 stream keyed by (seed, id).
pub fn file_bytes(seed: u64, id: u32, size: usize) -> Vec<u8> {
    let mut rng = crate::util::numbers::SplitMix64::new(
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(id).wrapping_mul(0xD1B5_4A32_D192_ED03),
    );
    let mut out = Vec::with_capacity(size + 8);
    while out.len() < size {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(size);
    out
}

pub fn sha512_hex(bytes: &[u8]) -> String {
    Sha512::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Corpus {
    /// The corpus for `spec` under `cache`, generated first when missing or incomplete.
    pub fn ensure(cache: &Path, spec: &CorpusSpec) -> Result<Corpus> {
        let dir = cache
            .join("corpus")
            .join(format!("{}x{}-seed{}", spec.files, spec.size, spec.seed));
        let done = dir.join(".complete");
        if !done.exists() {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create the corpus directory {}", dir.display()))?;
            let mb = spec.files as f64 * spec.size as f64 / 1e6;
            let bar = crate::util::progress::counter(
                &format!(
                    "generating the /hash corpus ({} files, {mb:.0} MB)",
                    spec.files
                ),
                u64::from(spec.files),
            );
            let mut vectors = String::new();
            for id in 0..spec.files {
                let bytes = file_bytes(spec.seed, id, spec.size);
                vectors.push_str(&format!("{id}\t{}\n", sha512_hex(&bytes)));
                let p = dir.join(format!("{id}.bin"));
                let mut f = std::fs::File::create(&p)
                    .with_context(|| format!("cannot write {}", p.display()))?;
                f.write_all(&bytes)?;
                bar.inc(1);
            }
            bar.finish_and_clear();
            crate::util::files::write_atomic(&dir.join("vectors.tsv"), vectors.as_bytes())?;
            std::fs::write(&done, b"")?;
        }
        Ok(Corpus {
            spec: spec.clone(),
            dir,
        })
    }

    /// SHA-512 (hex) of file `id`, from vectors.tsv.
    pub fn vector(&self, id: u32) -> Result<String> {
        self.vectors()?
            .into_iter()
            .nth(id as usize)
            .with_context(|| format!("no vector for file {id}"))
    }

    /// SHA-512 (hex) of every file, by id.
    pub fn vectors(&self) -> Result<Vec<String>> {
        let text =
            std::fs::read_to_string(self.dir.join("vectors.tsv")).context("corpus vectors.tsv")?;
        Ok(text
            .lines()
            .filter_map(|l| l.split_once('\t').map(|(_, h)| h.to_string()))
            .collect())
    }

    /// What a contender is told about the corpus (environment variables).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("IOBOUND_CORPUS_DIR".into(), self.dir.display().to_string()),
            ("IOBOUND_CORPUS_FILES".into(), self.spec.files.to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_is_deterministic_and_its_vectors_match_the_files() {
        let cache = tempfile::tempdir().unwrap();
        let spec = CorpusSpec {
            files: 5,
            size: 1000,
            seed: 7,
        };
        let c = Corpus::ensure(cache.path(), &spec).unwrap();
        let bytes = std::fs::read(c.dir.join("3.bin")).unwrap();
        assert_eq!(bytes.len(), 1000);
        assert_eq!(bytes, file_bytes(7, 3, 1000));
        assert_ne!(
            file_bytes(7, 3, 1000),
            file_bytes(7, 4, 1000),
            "files differ"
        );
        assert_ne!(
            file_bytes(8, 3, 1000),
            file_bytes(7, 3, 1000),
            "seeds differ"
        );
        assert_eq!(c.vector(3).unwrap(), sha512_hex(&bytes));
        assert_eq!(c.vector(3).unwrap().len(), 128);
        assert!(c.vector(5).is_err());
        assert_eq!(c.vectors().unwrap().len(), 5);
        assert_eq!(c.vectors().unwrap()[3], c.vector(3).unwrap());
        // A second call reuses the files.
        std::fs::write(c.dir.join("3.bin"), b"changed").unwrap();
        Corpus::ensure(cache.path(), &spec).unwrap();
        assert_eq!(std::fs::read(c.dir.join("3.bin")).unwrap(), b"changed");
    }

    #[test]
    fn sha512_of_a_known_input() {
        // FIPS 180-2 example "abc".
        assert!(sha512_hex(b"abc")
            .starts_with("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"));
    }
}
