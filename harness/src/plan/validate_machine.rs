//! The parts of `PlanFile::validate` about the machine a plan runs on: where the contender,
//! the driver and the services run (`[cpus]`, `driver_threads`), the JVM's heap, the /hash
//! corpus on disk and the database pool, each error naming the field and the fix.

use super::file::PlanFile;
use super::{CorpusSpec, DEFAULT_DB_POOL, DEFAULT_HEAP};
use crate::util::cpus::parse_cpu_list;
use anyhow::{bail, Context, Result};

/// Where the contender, the driver and the services run, and the driver's threads.
pub(super) struct CpusChecked {
    pub contender_cpus: Vec<usize>,
    pub driver_cpus: Vec<usize>,
    pub services_cpus: Vec<usize>,
    pub driver_threads: usize,
}

impl PlanFile {
    /// `[cpus]` and `driver_threads`: the contender's, the driver's and the services' CPUs
    /// (defaults: 0 for the contender, 1 for the driver where there are two), and the driver
    /// threads (one per driver CPU unless set).
    pub(super) fn cpus_checked(&self) -> Result<CpusChecked> {
        let contender_cpus = parse_cpu_list(self.cpus.contender.as_deref().unwrap_or("0"))
            .context("plan.cpus.contender")?;
        let default_driver = if crate::util::cpus::online_cpus() > 1 {
            "1"
        } else {
            "0"
        };
        let driver_cpus = parse_cpu_list(self.cpus.driver.as_deref().unwrap_or(default_driver))
            .context("plan.cpus.driver")?;
        let services_cpus = services_cpus(
            self.cpus.services.as_deref(),
            &contender_cpus,
            &driver_cpus,
            crate::util::cpus::online_cpus(),
        )?;
        let driver_threads = self.driver_threads.unwrap_or(driver_cpus.len());
        if driver_threads == 0 || driver_threads > 64 {
            bail!("plan.driver_threads = {driver_threads} is out of range; use 1..=64 (one per driver CPU is usual)");
        }
        Ok(CpusChecked {
            contender_cpus,
            driver_cpus,
            services_cpus,
            driver_threads,
        })
    }

    /// `[jvm] heap`: a size such as "512m" or "2g".
    pub(super) fn heap_checked(&self) -> Result<String> {
        let heap = self
            .jvm
            .heap
            .clone()
            .unwrap_or_else(|| DEFAULT_HEAP.to_string());
        let (digits, unit_mb) = match heap.char_indices().last() {
            Some((at, 'm' | 'M')) => (&heap[..at], 1),
            Some((at, 'g' | 'G')) => (&heap[..at], 1024),
            _ => (heap.as_str(), 0),
        };
        let mb = digits
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0 && unit_mb > 0)
            .and_then(|n| n.checked_mul(unit_mb));
        match mb {
            None => {
                bail!("plan.jvm.heap = {heap:?} is not a heap size; write e.g. \"512m\" or \"2g\"")
            }
            // The JVM itself refuses a heap beyond its address space, but only once the run
            // has built and started everything before it.
            Some(mb) if mb > MAX_HEAP_MB => bail!(
                "plan.jvm.heap = {heap:?} is above {} GB, more than a JVM here can reserve; \
                 write e.g. \"512m\" or \"2g\"",
                MAX_HEAP_MB / 1024
            ),
            Some(_) => Ok(heap),
        }
    }

    /// `[corpus]` (the plan's when a scenario requests /hash, else the small conformance
    /// corpus) and `[database] pool`.
    pub(super) fn corpus_and_pool(&self) -> Result<(CorpusSpec, usize)> {
        let c = &self.corpus;
        let files = c.files.unwrap_or(i64::from(CorpusSpec::DEFAULT_FILES));
        if !(3..=1_000_000).contains(&files) {
            bail!(
                "corpus.files = {files} is out of range; use 3..=1000000 (default {}): the \
                 contract checks /hash on files 0, 1 and 2 before anything is measured",
                CorpusSpec::DEFAULT_FILES
            );
        }
        let size_kb = c
            .size_kb
            .unwrap_or((CorpusSpec::DEFAULT_SIZE / 1024) as i64);
        if !(1..=65_536).contains(&size_kb) {
            bail!("corpus.size_kb = {size_kb} is out of range; use 1..=65536 (default 200)");
        }
        // Each field within its range still multiplies to 64 TB: the corpus is written to disk
        // before anything is measured.
        let total_kb = files * size_kb;
        if total_kb > MAX_CORPUS_KB {
            bail!(
                "corpus.files x corpus.size_kb = {files} x {size_kb} KB = {} GiB, above the \
                 {} GiB the corpus may take on disk; use fewer files or smaller ones",
                total_kb / (1024 * 1024),
                MAX_CORPUS_KB / (1024 * 1024)
            );
        }
        let hashing = self
            .scenarios
            .iter()
            .filter_map(|s| s.path.as_deref())
            .any(|p| p == "/hash" || p.starts_with("/hash?"));
        let db_pool = self.database.pool.unwrap_or(DEFAULT_DB_POOL as i64);
        if !(1..=100).contains(&db_pool) {
            bail!("database.pool = {db_pool} is out of range; use 1..=100 connections per contender (default {DEFAULT_DB_POOL})");
        }
        let corpus = CorpusSpec {
            files: if hashing {
                files as u32
            } else {
                CorpusSpec::CONFORMANCE_FILES
            },
            size: size_kb as usize * 1024,
            seed: c.seed.unwrap_or(CorpusSpec::DEFAULT_SEED),
        };
        Ok((corpus, db_pool as usize))
    }
}

/// The largest JVM heap a plan may ask for, in MB (4 TB).
const MAX_HEAP_MB: u64 = 4 * 1024 * 1024;

/// The most the /hash corpus may take on disk, in KB (16 GiB; the default is 800 MB).
const MAX_CORPUS_KB: i64 = 16 * 1024 * 1024;

/// The services' CPUs: as given (never the contender's), else on a machine of >= 4 CPUs the ones
/// neither the contender nor the driver uses, else the driver's (which they then share).
pub(super) fn services_cpus(
    given: Option<&str>,
    contender: &[usize],
    driver: &[usize],
    online: usize,
) -> Result<Vec<usize>> {
    if let Some(list) = given {
        let cpus = parse_cpu_list(list).context("plan.cpus.services")?;
        if let Some(c) = cpus.iter().find(|c| contender.contains(c)) {
            bail!("plan.cpus.services includes CPU {c}, the contender's: the services would compete with it; give other CPUs (e.g. --services-cpus {})", crate::util::cpus::format_cpus(driver));
        }
        return Ok(cpus);
    }
    let free: Vec<usize> = (0..online)
        .filter(|c| !contender.contains(c) && !driver.contains(c))
        .collect();
    Ok(if online >= 4 && !free.is_empty() {
        free
    } else {
        driver.to_vec()
    })
}
