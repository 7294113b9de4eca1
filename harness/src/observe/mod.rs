//! What is observed of a contender while it runs, and how it is judged: whether it has settled
//! (`warmup`, the settling watch, by `settle_rule`; `window_check`, the measured window, by the
//! steady-state rule, `steady_rule`, which `window_judge` applies to a window's steps and whose
//! error rates `steady_rates` measures on the labelled series of `steady_corpus`), its collections
//! (`gc`, read from each runtime's log), a Node contender's event-loop delay (`event_loop`), its
//! CPU profile (`profile`, taken here or on its host by `profile_place`, folded by `stacks`), and
//! how long a start takes (`cold_start`). Each writes the record type of the same name in results/.
//! Nothing here sequences a run: run/ calls these; stats/ and pages/ judge stored windows again
//! with the same rule.
//! Uses: util, plan, driver (a window's summary), services (a contender's process), sampler
//! (the samples a window is judged on), remote (a profile taken on another host), results (the
//! records written).

pub mod cold_start;
pub mod event_loop;
pub mod gc;
pub mod profile;
pub mod profile_place;
pub mod settle_rule;
pub mod stacks;
pub mod steady_corpus;
#[cfg(test)]
mod steady_corpus_tests;
pub mod steady_rates;
pub mod steady_rule;
pub mod warmup;
pub mod window_check;
pub mod window_judge;
