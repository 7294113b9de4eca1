//! The README's and docs pages' figures, tables and verdict words, rendered from the results
//! directories committed under docs/results/, and the machine time each of those measurements
//! took: what `iobound render` writes, what `./iobound test` checks, and `iobound plans`.
//! report/ writes the outputs of one results directory; a page quotes many, so this stage
//! sits after it and uses its writers (the terminal table, the Markdown tables, numbers).
//!
//! Holds: `render` (finds the markers in a page and writes what each stands for; the pages a reader
//! meets), `quote` (one figure in prose, from a query on a results directory; `verdict_query`, the
//! queries that quote or judge a verdict), `grid` (a table of such figures in one marker), `rows`
//! (the same, a row per contender), `blocks` (a table of sittings one after the other, side by
//! side, said to be blocks), `figure_table` (a table whose cells are any queries), `run_counts`
//! (the runs and writes a query counts), `stacks` (where a profile's samples went), `rules` (the
//! harness's rules of measurement a page quotes), `contender_table` (docs/contenders.md's table,
//! from the manifests), `rejudged` (every committed sitting as today's steady-state rule judges
//! it), `committed` (the results directories under docs/results, read for both), `lint` (figures
//! and verdict words a page types where a marker belongs), `plan_times` (each plan's last
//! measurement, its machine minutes and the pages quoting it) and `replay` (what today's stopping
//! rules would have spent on it).
//! Uses: util, plan (the rules' constants), driver (the driver's rules), services (the
//! contenders' manifests), sampler (the sampler's rules), results (the record of runs), observe
//! (the steady-state rule's constants and error rates), stats (the tests a `tested` query runs,
//! the stopping rules a replay follows), report (the table and Markdown writers).

mod blocks;
mod committed;
pub mod contender_table;
mod figure_table;
mod grid;
pub mod lint;
pub mod plan_times;
pub mod quote;
mod rejudged;
pub mod render;
mod replay;
mod rows;
mod rules;
mod run_counts;
mod stacks;
mod verdict_query;
