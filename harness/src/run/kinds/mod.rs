//! Each kind of measurement a scenario can ask for, as methods of a contender's round
//! (run/round.rs): one measured run (`http`, led into by a warm-up on the same load, `lead_in`), a
//! Kafka pipeline (`pipeline`, settled by `pipeline_warmup`), a capacity search (`capacity`,
//! probing where `capacity_search` says), overload phases (`overload`), a run's CPU profile
//! (`profiling`), and the write check after a CRUD run (`writes`); what a scenario offers
//! (`scenario_load`: its warm-up's load and its requests) and what a finished run prints
//! (`printed`). What they observe meanwhile is observe/'s.
//! Its files use only the folders run/mod.rs lists.

pub mod capacity;
mod capacity_search;
pub mod http;
pub mod lead_in;
pub mod overload;
pub mod pipeline;
pub mod pipeline_warmup;
mod printed;
pub(in crate::run) mod profiling;
mod scenario_load;
pub mod writes;
