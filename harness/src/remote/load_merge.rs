//! Load from other hosts, what the controller makes of their streams: each host's state as it
//! streams (`HostState`), their seconds added into one recorder as they arrive (`Merge`), and
//! the merged outcome at the end, a lost host's unaccounted requests cut at the second it was
//! lost (`finish`).

use crate::driver::record::{Interval, Live, Recorder};
use crate::driver::remote::{HostShare, Line};
use crate::driver::summary::decode_histogram;
use crate::driver::{EntryCount, Outcome};
use anyhow::Result;
use std::time::{Duration, Instant};

/// What the controller knows of one host while the load runs.
#[derive(Default)]
pub(super) struct HostState {
    /// Its last live counters: ok, errors, latency sum (µs), due, latency buckets.
    pub live: (u64, u64, u64, u64, Vec<u64>),
    /// Requests accounted for by the seconds received.
    pub streamed: u64,
    pub ok: u64,
    pub errors: u64,
    pub end: Option<Line>,
    /// When (s after the start) and why it was lost.
    pub lost: Option<(f64, String)>,
}

pub(super) enum Event {
    Line(usize, Line),
    Closed(usize, String),
}

/// What the hosts have sent so far, merged: their seconds added into one recorder, the
/// driver's lateness and connection waits added, each host's counts and end kept.
pub(super) struct Merge {
    pub state: Vec<HostState>,
    pub merged: Recorder,
    pub lag: hdrhistogram::Histogram<u64>,
    pub conn_wait: hdrhistogram::Histogram<u64>,
    /// Hosts whose output has ended.
    pub closed: usize,
}

impl Merge {
    pub(super) fn new(hosts: usize, start: Instant) -> Merge {
        Merge {
            state: (0..hosts).map(|_| HostState::default()).collect(),
            merged: Recorder::new(start),
            lag: crate::driver::record::new_histogram(),
            conn_wait: crate::driver::record::new_histogram(),
            closed: 0,
        }
    }

    /// Takes one event of host `i`'s stream.
    pub(super) fn take(&mut self, event: Event, start: Instant, live: &Live) -> Result<()> {
        match event {
            Event::Line(
                i,
                Line::Second {
                    i: sec,
                    ok,
                    failed,
                    errors,
                },
            ) => {
                let iv = Interval {
                    hist: decode_histogram(&ok)?,
                    failed: decode_histogram(&failed)?,
                    errors,
                };
                let st = &mut self.state[i];
                st.streamed += iv.requests();
                st.ok += iv.hist.len();
                st.errors += iv.errors.total();
                self.merged.add_second(sec, &iv);
            }
            Event::Line(
                i,
                Line::Live {
                    ok,
                    errors,
                    latency_us,
                    due,
                    buckets,
                },
            ) => {
                self.state[i].live = (ok, errors, latency_us, due, buckets);
                publish(live, &self.state);
            }
            // Said before the start, and taken then.
            Event::Line(_, Line::Ready) => {}
            Event::Line(i, Line::Failed { error }) => {
                self.state[i].lost.get_or_insert((elapsed_s(start), error));
            }
            Event::Line(i, end @ Line::End { .. }) => {
                if let Line::End { lag, conn_wait, .. } = &end {
                    self.lag.add(decode_histogram(lag)?).ok();
                    self.conn_wait.add(decode_histogram(conn_wait)?).ok();
                }
                self.state[i].end = Some(end);
            }
            Event::Closed(i, why) => {
                self.closed += 1;
                let st = &mut self.state[i];
                if st.end.is_none() && st.lost.is_none() {
                    let why = if why.is_empty() {
                        "its connection closed before the load ended".to_string()
                    } else {
                        why
                    };
                    st.lost = Some((elapsed_s(start), why));
                }
            }
        }
        Ok(())
    }
}

fn elapsed_s(start: Instant) -> f64 {
    Instant::now()
        .saturating_duration_since(start)
        .as_secs_f64()
}

/// The controller's live counters: the hosts' sums.
fn publish(live: &Live, state: &[HostState]) {
    let (mut ok, mut errors, mut lat, mut due) = (0, 0, 0, 0);
    let mut buckets: Vec<u64> = Vec::new();
    for s in state {
        ok += s.live.0;
        errors += s.live.1;
        lat += s.live.2;
        due += s.live.3;
        if buckets.len() < s.live.4.len() {
            buckets.resize(s.live.4.len(), 0);
        }
        for (b, x) in buckets.iter_mut().zip(&s.live.4) {
            *b += x;
        }
    }
    live.set_totals(ok, errors, lat, due, &buckets);
}

/// The merged outcome: sums of counts, the busiest driver CPU anywhere per second, and a
/// lost host's unaccounted requests cut at the second it was lost.
pub(super) fn finish(
    names: &[String],
    state: Vec<HostState>,
    shares: Vec<String>,
    mut merged: Recorder,
    start: Instant,
    cancelled: bool,
) -> (Outcome, Vec<HostShare>) {
    let mut o = Outcome {
        recorder: Recorder::new(start),
        duration: Duration::ZERO,
        wall: start.elapsed(),
        cpu: Duration::ZERO,
        threads: 0,
        cancelled,
        due: 0,
        pool_waits: 0,
        cpu_busy_pct: Vec::new(),
        entries: Vec::new(),
        acks: Vec::new(),
    };
    let mut out = Vec::new();
    for ((name, st), load) in names.iter().zip(state).zip(shares) {
        let mut share = HostShare {
            host: name.clone(),
            load,
            ok: st.ok,
            errors: st.errors,
            ..HostShare::default()
        };
        match st.end {
            Some(end @ Line::End { .. }) => add_end(&mut o, &mut share, end),
            _ => {
                // Lost: what it streamed stays; requests it had due whose outcome never came
                // (in flight, or answered in its last seconds) are cut.
                let (at, why) = st.lost.clone().unwrap_or((0.0, "no end received".into()));
                let due = st.live.3.max(st.streamed);
                merged.cut(start + Duration::from_secs_f64(at), due - st.streamed);
                share.due = due;
                o.due += due;
                share.lost = Some(why);
                share.lost_at_s = Some((at * 10.0).round() / 10.0);
            }
        }
        out.push(share);
    }
    o.recorder = merged;
    (o, out)
}

/// Adds a host's end line to the run's outcome and to its share.
fn add_end(o: &mut Outcome, share: &mut HostShare, end: Line) {
    let Line::End {
        due,
        pool_waits,
        cpu_s,
        threads,
        duration_s,
        cancelled,
        cpu_busy_pct,
        lag,
        entries,
        acks,
        ..
    } = end
    else {
        return;
    };
    share.due = due;
    share.acks = acks;
    o.due += due;
    o.pool_waits += pool_waits;
    o.cpu += Duration::from_secs_f64(cpu_s);
    o.threads += threads;
    o.duration = o.duration.max(Duration::from_secs_f64(duration_s));
    o.cancelled |= cancelled;
    // Kept per host (see `saturation_warnings`): this machine's driver CPUs carried none of
    // the load.
    share.cpu_busy_pct = cpu_busy_pct;
    share.lag_p99_ms = decode_histogram(&lag)
        .ok()
        .filter(|h| !h.is_empty())
        .map(|h| h.value_at_quantile(0.99) as f64 / 1000.0);
    if o.entries.len() < entries.len() {
        o.entries.resize(entries.len(), EntryCount::default());
    }
    for (sum, (sent, ok)) in o.entries.iter_mut().zip(entries) {
        sum.sent += sent;
        sum.ok += ok;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_host_keeps_what_it_streamed_and_its_missing_requests_are_cut() {
        let start = Instant::now();
        let mut merged = Recorder::new(start);
        let live = Live::mirrored(start);
        let mut own = Recorder::new(start);
        for k in 0..10u64 {
            own.ok(
                start + Duration::from_millis(k),
                Duration::from_millis(1),
                &live,
            );
        }
        for (i, iv) in live.take_seconds(usize::MAX) {
            merged.add_second(i, &iv);
        }
        let st = HostState {
            live: (12, 0, 12_000, 15, vec![]),
            streamed: 10,
            ok: 10,
            lost: Some((1.5, "connection reset".into())),
            ..HostState::default()
        };
        let (o, shares) = finish(
            &["lg1".to_string()],
            vec![st],
            vec!["4 users".into()],
            merged,
            start,
            false,
        );
        let (ok, errors) = o.recorder.overall();
        assert_eq!((ok.len(), errors.cut, o.due), (10, 5, 15));
        assert!(
            !o.cancelled,
            "the other hosts go on: the run is not stopped"
        );
        assert_eq!(shares[0].lost.as_deref(), Some("connection reset"));
        assert_eq!(shares[0].lost_at_s, Some(1.5));
        assert_eq!(
            ok.len() + errors.total() + errors.cut,
            o.due,
            "ok + errors + cut = due"
        );
    }
}
