//! What each kind of result brings to a report, in every format, through one trait. The
//! formats (table.rs for the terminal, markdown.rs, html.rs) walk the list of sections in
//! report/mod.rs and never name a kind: adding a kind of run means one more `Section` in that
//! list, beside the stage that fills its detail (results/details.rs).

use super::chart::Chart;
use crate::results::dir::ResultsDir;
use crate::results::record::{Results, Run};
use anyhow::Result;
use std::path::PathBuf;

/// Where a section's results-wide part goes: with the answers before the scenario tables, or
/// after them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Head,
    Tail,
}

/// One kind's part of a report. Every method has an empty default: a kind brings only what it
/// has (results-wide tables, notes under a scenario's table, or both).
pub trait Section {
    fn place(&self) -> Place {
        Place::Head
    }
    /// Its results-wide part for the terminal.
    fn terminal(&self, _results: &Results) -> String {
        String::new()
    }
    /// The heading report.md gives its part (`table --markdown`, which goes into other pages,
    /// leaves it out).
    fn title(&self) -> Option<&'static str> {
        None
    }
    /// Its results-wide part of report.md and `table --markdown`.
    fn markdown(&self, _results: &Results) -> String {
        String::new()
    }
    /// Its results-wide part of report.html.
    fn html(&self, _results: &Results) -> String {
        String::new()
    }
    /// Charts drawn for it as PNG files (report.md links them below its part).
    fn charts(&self, _results: &Results) -> Vec<Chart> {
        Vec::new()
    }
    /// Other files it draws into the results directory (returns those written).
    fn files(&self, _set: ResultsDir) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }
    /// Notes under a scenario's table (every format), from the scenario's runs.
    fn notes(&self, _runs: &[&Run]) -> Vec<String> {
        Vec::new()
    }
    /// A line under a scenario's table in `table --markdown`, for the run shown for a
    /// contender.
    fn verdict(&self, _contender: &str, _run: &Run) -> Option<String> {
        None
    }
}
