//! The record of a run, as results.json holds it and every later stage reads it: `record` (the
//! result set, its runs and their status; written and read by `record_file`), `verdict_record`
//! (verdicts, findings, futility stops, thresholds checked), `dir` (a result set with its
//! directory, which reads the files beside results.json: histogram logs, folded stacks), `details`
//! (what each kind of run adds), `environment` (the machine and its software), `warmup` (how a run
//! reached steady state and the terms its windows were judged in), `gc`, `event_loop` (a Node
//! contender's delay), `profile` (a CPU profile and its folded stacks), `cold_start`, `faults`
//! (injected faults, recovery and overload verdicts from the interval rows), `steady` (which runs
//! were measured at steady state), `figures` (a run's figures by the metric registry's name) and
//! `noise` (where the noise is: between starts, between windows of a start). How each record is
//! measured is observe/'s; the run stage writes it; stats and report read it and never the run
//! stage.
//! Uses: util, plan (metric names), services (manifests; delivery and write checks),
//! conformance (the contract's verification), driver (summaries, interval rows), sampler
//! (resources).

pub mod cold_start;
pub mod details;
pub mod dir;
pub mod environment;
pub mod event_loop;
pub mod faults;
pub mod figures;
pub mod gc;
pub mod noise;
pub mod profile;
pub mod record;
mod record_file;
pub mod steady;
#[cfg(test)]
pub mod test_support;
pub mod verdict_record;
pub mod warmup;
