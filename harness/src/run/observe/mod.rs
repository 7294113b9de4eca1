//! What is observed of a contender while it runs, beside the load: whether it has settled
//! (`warmup`, the settling watch, and `window_check`, the measured window judged by the same
//! rules), its collections (`gc`, read from each runtime's log), a Node contender's event-loop
//! delay (`event_loop`), its CPU profile (`profile`, taken here or on its host by
//! `profile_place`, folded by `stacks`), and how long a start takes (`cold_start`). Nothing
//! here sequences a run: the kinds of measurement (run/kinds) call these.
//! Its files use only the folders run/mod.rs lists.

pub mod cold_start;
pub mod event_loop;
pub mod gc;
pub mod profile;
pub mod profile_place;
pub mod stacks;
pub mod warmup;
pub mod window_check;
