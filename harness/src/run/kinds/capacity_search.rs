//! Where a capacity search probes next: what its probes showed per rate (`Tally`), and the next
//! rate from it (`next_rate`: geometric steps up to the first failure, then bisection to the
//! stated precision).

use crate::plan::Capacity;

/// What the probes of one search showed: per rate, how many passed and how many were run.
#[derive(Default)]
pub(super) struct Tally {
    rates: Vec<(f64, u32, u32)>,
}

impl Tally {
    pub(super) fn add(&mut self, rate: f64, passed: bool) {
        match self.rates.iter_mut().find(|(r, ..)| *r == rate) {
            Some(t) => {
                t.1 += u32::from(passed);
                t.2 += 1;
            }
            None => self.rates.push((rate, u32::from(passed), 1)),
        }
    }

    /// The highest rate whose every probe passed, and the lowest failing rate above it.
    pub(super) fn bounds(&self) -> (Option<f64>, Option<f64>) {
        let mut sorted = self.rates.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let first_fail = sorted.iter().position(|t| t.1 < t.2);
        let below = &sorted[..first_fail.unwrap_or(sorted.len())];
        (below.last().map(|t| t.0), first_fail.map(|i| sorted[i].0))
    }

    /// The lowest rate probed.
    pub(super) fn lowest(&self) -> Option<f64> {
        self.rates.iter().map(|t| t.0).reduce(f64::min)
    }

    pub(super) fn of(&self, rate: f64) -> (u32, u32) {
        self.rates
            .iter()
            .find(|t| t.0 == rate)
            .map_or((0, 0), |t| (t.1, t.2))
    }
}

/// The next rate to try, given what passed and failed so far: geometric steps up to the first
/// failure (never past `max_rate`), then the geometric middle until the two are within
/// `precision`. None when the search is done.
pub fn next_rate(
    c: &Capacity,
    start: f64,
    passed: Option<f64>,
    failed: Option<f64>,
) -> Option<f64> {
    match (passed, failed) {
        (None, None) => Some(start),
        (None, Some(_)) => None,
        (Some(lo), None) if lo >= c.max_rate => None,
        (Some(lo), None) => Some((lo * c.growth).min(c.max_rate).round()),
        (Some(lo), Some(hi)) if (hi - lo) / lo <= c.precision => None,
        (Some(lo), Some(hi)) => {
            let mid = (lo * hi).sqrt().round();
            (mid > lo && mid < hi).then_some(mid)
        }
    }
}
