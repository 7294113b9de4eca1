//! Shared utilities, usable by every stage, one concern per file: `units` (durations,
//! latencies, counts), `cpus` (CPU lists, pinning, thread CPU time), `clock` (timestamps),
//! `numbers` (the one median, the seeded generator), `trend` (the Mann-Kendall test of a
//! series of seconds), `files` (atomic writes); and the
//! process-wide pieces every stage touches: Ctrl-C (`interrupt`), the small HTTP/1.1 client and
//! request builder (`http1`), terminal progress bars (`progress`), words for a remote shell
//! (`shell`) and `--verbose` (here).
//! Uses no stage.

pub mod clock;
pub mod cpus;
pub mod files;
pub mod http1;
pub mod interrupt;
pub mod numbers;
pub mod progress;
pub mod shell;
pub mod trend;
pub mod units;

static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--verbose`: print detail that is otherwise summarised (every contract case).
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}
