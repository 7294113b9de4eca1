//! A run's figures from the driver's recorder: the latency summary (percentiles read from
//! HdrHistograms, never averaged), per-second rows, load levels and the phase summary; the
//! run's interval log (.hlog) and the histogram encoding kept in results.json.

use super::errors::Errors;
use super::record::Recorder;
use crate::util::files::write_atomic;
use anyhow::{Context, Result};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Latency summary in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
    pub max: f64,
}

impl Latency {
    /// Quantile `q` (0 the minimum, 1 the maximum) where the summary keeps it; NaN for one it
    /// does not keep.
    pub fn kept_quantile(&self, q: f64) -> f64 {
        [
            (0.0, self.min),
            (0.5, self.p50),
            (0.75, self.p75),
            (0.9, self.p90),
            (0.95, self.p95),
            (0.99, self.p99),
            (0.999, self.p999),
            (0.9999, self.p9999),
            (1.0, self.max),
        ]
        .iter()
        .find(|(at, _)| *at == q)
        .map_or(f64::NAN, |(_, v)| *v)
    }
}

fn ms(us: f64) -> f64 {
    (us / 1000.0 * 1000.0).round() / 1000.0
}

impl Latency {
    pub fn from_histogram(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        let q = |p: f64| ms(h.value_at_quantile(p) as f64);
        Latency {
            count: h.len(),
            min: ms(h.min() as f64),
            mean: ms(h.mean()),
            stdev: ms(h.stdev()),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            max: ms(h.max() as f64),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Length of the measured phase (s).
    pub duration_s: f64,
    /// Successful (2xx) responses completed inside the measured phase.
    pub ok: u64,
    /// Requests due in the measured phase (open: scheduled arrivals; closed: requests started).
    /// Every one is accounted: ok + drained + errors.total() + errors.cut = due (`cut`: requests
    /// a stop cut before their time, counted apart).
    #[serde(default)]
    pub due: u64,
    /// Errors of requests due in the measured phase (including those failing while draining,
    /// and those still unanswered when the drain window closed).
    pub errors: Errors,
    /// Successful responses per second inside the measured phase.
    pub rps: f64,
    /// Responses to requests sent in the measured phase that completed after it (counted in
    /// latency, not in throughput).
    pub drained: u64,
    /// Latency of every successful response, from one merged histogram.
    pub latency: Latency,
    /// Latency of every request due, failed and unanswered ones included at the time they
    /// failed or were given up (censored values).
    #[serde(default)]
    pub latency_all: Latency,
    /// Little's law: mean concurrency = throughput x mean latency (closed model sanity line).
    pub littles_law_concurrency: f64,
    /// One row per load level: each step of a closed model (an open ramp gives one per second).
    pub levels: Vec<Level>,
}

/// Throughput and latency while the load stayed at one level (e.g. one step of users).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Level {
    /// Users (closed) or arrival rate (open).
    pub target: f64,
    /// Whole seconds measured at this level, from `from_s` to `to_s` into the run.
    pub seconds: u32,
    pub from_s: u32,
    pub to_s: u32,
    pub rps: f64,
    /// From the merged histograms of the level's seconds.
    pub latency: Latency,
    /// The contender's peaks while at this level (0 when it was not sampled).
    pub peak_threads: u64,
    pub peak_rss_mb: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalRow {
    /// Second since the measured phase began.
    pub t: u32,
    /// Users (closed) or scheduled arrivals per second (open) during this second.
    pub target: f64,
    pub ok: u64,
    pub errors: u64,
    pub latency: Latency,
    /// True for seconds after the measured phase (in-flight requests draining).
    pub drain: bool,
}

/// Interval rows and the phase summary from a driver's recorder. `measured` is the length of
/// the measured phase; later intervals are the drain.
pub fn summarize(
    rec: &Recorder,
    measured: Duration,
    profile: &crate::plan::Profile,
) -> (Summary, Vec<IntervalRow>) {
    let full = measured.as_secs() as usize;
    let mut rows = Vec::new();
    let mut ok_in = 0;
    let mut drained = 0;
    let mut errors_in = Errors::default();
    for (i, iv) in rec.intervals.iter().enumerate() {
        let drain = i >= full && !(i == full && measured.subsec_nanos() > 0);
        if drain {
            drained += iv.hist.len();
        } else {
            ok_in += iv.hist.len();
        }
        // Errors while draining belong to requests sent in the measured phase: they count.
        errors_in.merge(&iv.errors);
        rows.push(IntervalRow {
            t: i as u32,
            target: profile.target_at(Duration::from_secs(i as u64)),
            ok: iv.hist.len(),
            errors: iv.errors.total(),
            latency: Latency::from_histogram(&iv.hist),
            drain,
        });
    }
    let levels = levels(rec, &rows, measured);
    let (all, _) = rec.overall();
    let latency = Latency::from_histogram(&all);
    let secs = measured.as_secs_f64();
    let rps = if secs > 0.0 { ok_in as f64 / secs } else { 0.0 };
    let due = ok_in + drained + errors_in.total() + errors_in.cut;
    let summary = Summary {
        duration_s: secs,
        ok: ok_in,
        errors: errors_in,
        rps,
        drained,
        due,
        latency_all: Latency::from_histogram(&rec.overall_all()),
        littles_law_concurrency: rps * latency.mean / 1000.0,
        latency,
        levels,
    };
    (summary, rows)
}

/// Groups the measured seconds by load level. Only whole seconds count, so a level's
/// throughput is not diluted by a partial second.
fn levels(rec: &Recorder, rows: &[IntervalRow], measured: Duration) -> Vec<Level> {
    let whole = measured.as_secs() as usize;
    let mut out: Vec<(Level, hdrhistogram::Histogram<u64>)> = Vec::new();
    for (i, row) in rows.iter().enumerate().take(whole) {
        let idx = match out.iter().position(|(l, _)| l.target == row.target) {
            Some(p) => p,
            None => {
                out.push((
                    Level {
                        target: row.target,
                        from_s: i as u32,
                        ..Level::default()
                    },
                    crate::driver::record::new_histogram(),
                ));
                out.len() - 1
            }
        };
        let (level, hist) = &mut out[idx];
        level.seconds += 1;
        level.to_s = i as u32 + 1;
        level.rps += row.ok as f64;
        hist.add(&rec.intervals[i].hist)
            .expect("same histogram bounds");
    }
    out.into_iter()
        .map(|(mut l, h)| {
            l.rps /= f64::from(l.seconds.max(1));
            l.latency = Latency::from_histogram(&h);
            l
        })
        .collect()
}

/// Writes the run's per-second histograms as an HdrHistogram interval log (values in µs).
pub fn write_hlog(rec: &Recorder, path: &Path, started: SystemTime, tag: &str) -> Result<()> {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut w = IntervalLogWriterBuilder::new()
            .add_comment(
                "iobound latency histograms, one per second of the run; values in microseconds",
            )
            .with_start_time(started)
            .with_base_time(started)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut buf, &mut ser)?;
        for (i, iv) in rec.intervals.iter().enumerate() {
            w.write_histogram(
                &iv.hist,
                Duration::from_secs(i as u64),
                Duration::from_secs(1),
                Tag::new(tag),
            )
            .map_err(|e| anyhow::anyhow!("cannot encode histogram: {e:?}"))?;
        }
    }
    write_atomic(path, &buf)
}

pub fn encode_histogram(h: &Histogram<u64>) -> Result<String> {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut buf = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| anyhow::anyhow!("cannot encode histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(buf))
}

pub fn decode_histogram(s: &str) -> Result<Histogram<u64>> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .context("histogram is not base64")?;
    decode_histogram_bytes(&bytes)
}

/// A histogram's bytes (HdrHistogram V2, compressed or not) decoded, once its header has been
/// held against what a run of this harness (or its Kafka load tool) records: the header decides
/// how much memory decoding takes, and a results file from elsewhere may declare gigabytes.
pub fn decode_histogram_bytes(bytes: &[u8]) -> Result<Histogram<u64>> {
    let plain = super::histogram_header::checked_v2(bytes)?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut plain.as_slice())
        .map_err(|e| anyhow::anyhow!("cannot decode histogram: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::errors::ErrorKind;
    use crate::driver::record::{new_histogram, Live, HIST_MAX_US};
    use crate::plan::Profile;
    use std::time::Instant;

    #[test]
    fn percentiles_in_milliseconds() {
        let mut h = new_histogram();
        for us in 1..=10_000u64 {
            h.record(us * 100).unwrap(); // 0.1 ms .. 1000 ms, uniform
        }
        let l = Latency::from_histogram(&h);
        assert_eq!(l.count, 10_000);
        assert!((l.p50 - 500.0).abs() < 1.0, "{}", l.p50);
        assert!((l.p99 - 990.0).abs() < 1.0, "{}", l.p99);
        assert!((l.max - 1000.0).abs() < 1.0);
        assert!((l.mean - 500.05).abs() < 1.0);
        assert!(l.min <= 0.1001);
    }

    #[test]
    fn empty_histogram_is_all_zero() {
        assert_eq!(
            Latency::from_histogram(&new_histogram()),
            Latency::default()
        );
    }

    #[test]
    fn summary_counts_drain_outside_throughput() {
        let start = Instant::now();
        let live = Live::default();
        let mut rec = Recorder::new(start);
        for s in 0..3u64 {
            for _ in 0..100 {
                rec.ok(
                    start + Duration::from_millis(s * 1000 + 10),
                    Duration::from_millis(5),
                    &live,
                );
            }
        }
        rec.error(
            start + Duration::from_millis(1500),
            ErrorKind::Timeout,
            Duration::from_secs(1),
            &live,
        );
        let profile = Profile::Closed {
            users: 10,
            step_users: 0,
            steps: 0,
            level: Duration::from_secs(2),
            think: Duration::ZERO,
            stay: Duration::ZERO,
            spread: Duration::ZERO,
        };
        let (s, rows) = summarize(&rec, Duration::from_secs(2), &profile);
        assert_eq!(s.ok, 200);
        assert_eq!(s.drained, 100);
        assert_eq!(s.errors.timeout, 1);
        let mut late = Recorder::new(start);
        late.error(
            start + Duration::from_millis(2500),
            ErrorKind::Io,
            Duration::from_millis(1),
            &live,
        );
        assert_eq!(
            summarize(&late, Duration::from_secs(2), &profile)
                .0
                .errors
                .io,
            1,
            "drain errors count"
        );
        assert!((s.rps - 100.0).abs() < 1e-9);
        assert_eq!(s.latency.count, 300);
        assert_eq!(rows.len(), 3);
        assert!(rows[2].drain && !rows[1].drain);
        assert_eq!(rows[0].target, 10.0);
        // Little's law: 100 req/s x 5 ms = 0.5 requests in flight on average.
        assert!(
            (s.littles_law_concurrency - 0.5).abs() < 0.01,
            "{}",
            s.littles_law_concurrency
        );
        assert_eq!(s.levels.len(), 1);
        assert_eq!(
            (s.levels[0].target, s.levels[0].seconds, s.levels[0].rps),
            (10.0, 2, 100.0)
        );
        assert_eq!((s.levels[0].from_s, s.levels[0].to_s), (0, 2));
    }

    #[test]
    fn hlog_is_readable_by_the_standard_parser() {
        let start = Instant::now();
        let live = Live::default();
        let mut rec = Recorder::new(start);
        rec.ok(
            start + Duration::from_millis(10),
            Duration::from_millis(7),
            &live,
        );
        rec.ok(
            start + Duration::from_millis(1010),
            Duration::from_millis(9),
            &live,
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.hlog");
        write_hlog(&rec, &p, SystemTime::now(), "a.b").unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let entries: Vec<_> =
            hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&bytes)
                .filter_map(|e| match e {
                    Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(h)) => {
                        Some(h.tag().map(|t| t.as_str().to_string()))
                    }
                    _ => None,
                })
                .collect();
        assert_eq!(
            entries,
            vec![Some("a.b".to_string()), Some("a.b".to_string())]
        );
        assert!(!dir.path().join("x.hlog.tmp").exists());
    }

    /// A histogram's V2 bytes with the header fields a reader trusts: `high` and `digits` decide
    /// the counts' size, `payload` the buffer read before them.
    fn v2_bytes(payload: u32, digits: u32, high: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(0x1c84_9313u32.to_be_bytes());
        b.extend(payload.to_be_bytes());
        b.extend(0u32.to_be_bytes());
        b.extend(digits.to_be_bytes());
        b.extend(1u64.to_be_bytes());
        b.extend(high.to_be_bytes());
        b.extend(1.0f64.to_be_bytes());
        b
    }

    #[test]
    fn a_histogram_that_declares_more_than_a_run_records_is_refused_before_allocating() {
        use base64::Engine;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let cases = [
            (v2_bytes(u32::MAX, 3, HIST_MAX_US), "payload"),
            (v2_bytes(16, 3, u64::MAX / 4), "highest trackable"),
            (v2_bytes(16, 9, HIST_MAX_US), "significant digits"),
        ];
        for (bytes, field) in cases {
            let e = format!("{:#}", decode_histogram(&b64(&bytes)).unwrap_err());
            assert!(e.contains(field), "{field}: {e}");
        }
        // The compressed form's declared length beyond its bytes.
        let mut deflated = 0x1c84_9314u32.to_be_bytes().to_vec();
        deflated.extend(u32::MAX.to_be_bytes());
        deflated.extend([0x78, 0x9c, 0x03, 0x00]);
        let e = format!("{:#}", decode_histogram(&b64(&deflated)).unwrap_err());
        assert!(e.contains("compressed"), "{e}");
        // What a run writes still decodes.
        let mut h = new_histogram();
        h.record(1234).unwrap();
        let back = decode_histogram(&encode_histogram(&h).unwrap()).unwrap();
        assert_eq!(back.len(), 1);
    }
}
