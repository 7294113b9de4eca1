//! The measured window cut out of one continuous load: the warm-up and the measured phase are
//! the same users on the same connections (or the same arrival schedule), and the window is
//! every second from a whole second `k` of the load on. What ended before it is the warm-up's;
//! what was in flight when it opened is answered inside it, as at any other second, so its
//! first second is answered like the others.

use super::Outcome;
use std::time::Duration;

impl Outcome {
    /// The part of this outcome from second `k` of the load on, as if the load had begun
    /// there: its seconds, its requests due (all due minus those that ended before the window:
    /// every request ends exactly once, so ok + errors = due still holds), the driver CPUs'
    /// busy seconds and its CPU time (the share of the wall time the window took: the driver
    /// threads' clocks are read once, at their end). The open model's lateness and connection
    /// waits stay whole-load figures: they describe the driver, not the window.
    pub fn from_second(mut self, k: usize) -> Outcome {
        let skip = Duration::from_secs(k as u64);
        let before = self.recorder.intervals.len().min(k);
        let ended_before: u64 = self.recorder.intervals[..before]
            .iter()
            .map(|iv| iv.requests())
            .sum();
        self.recorder.intervals.drain(..before);
        self.recorder.start += skip;
        let share = if self.wall.is_zero() {
            0.0
        } else {
            self.wall.saturating_sub(skip).as_secs_f64() / self.wall.as_secs_f64()
        };
        self.cpu = self.cpu.mul_f64(share);
        self.wall = self.wall.saturating_sub(skip);
        self.duration = self.duration.saturating_sub(skip);
        self.due = self.due.saturating_sub(ended_before);
        let busy = self.cpu_busy_pct.len().min(k);
        self.cpu_busy_pct.drain(..busy);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::errors::ErrorKind;
    use crate::driver::record::{Live, Recorder};
    use std::time::Instant;

    #[test]
    fn the_window_keeps_its_seconds_and_its_accounting() {
        let start = Instant::now();
        let live = Live::default();
        let mut rec = Recorder::new(start);
        let at = |s: f64| start + Duration::from_secs_f64(s);
        // Warm-up: 3 answers and an error in seconds 0-1; window from second 2: 4 answers, one
        // of them sent at 1.5 s and answered at 2.5 s (in flight when the window opened), and
        // one request given up at the end.
        for s in [0.2, 0.7, 1.1] {
            rec.ok(at(s), Duration::from_millis(10), &live);
        }
        rec.error(at(1.3), ErrorKind::Io, Duration::from_millis(3), &live);
        rec.ok(at(2.5), Duration::from_millis(1000), &live);
        for s in [2.6, 3.2, 3.9] {
            rec.ok(at(s), Duration::from_millis(10), &live);
        }
        rec.error(
            at(4.2),
            ErrorKind::Unanswered,
            Duration::from_millis(700),
            &live,
        );
        let o = Outcome {
            recorder: rec,
            duration: Duration::from_secs(4),
            wall: Duration::from_secs(5),
            cpu: Duration::from_millis(500),
            threads: 1,
            cancelled: false,
            due: 9,
            pool_waits: 0,
            cpu_busy_pct: vec![10.0, 20.0, 30.0, 40.0, 50.0],
            entries: Vec::new(),
            acks: Vec::new(),
        };
        let w = o.from_second(2);
        assert_eq!(w.recorder.start, at(2.0));
        assert_eq!(w.recorder.intervals.len(), 3);
        assert_eq!(
            w.recorder.intervals[0].hist.len(),
            2,
            "the carried-in answer counts"
        );
        let (hist, errors) = w.recorder.overall();
        assert_eq!(hist.len() + errors.total(), w.due, "ok + errors = due");
        assert_eq!(w.due, 5);
        assert_eq!(w.duration, Duration::from_secs(2));
        assert_eq!(w.wall, Duration::from_secs(3));
        assert_eq!(w.cpu, Duration::from_millis(300));
        assert_eq!(w.cpu_busy_pct, vec![30.0, 40.0, 50.0]);
    }
}
