//! What the Kafka load tool reports for one run (its JSON), the delivery check made from it,
//! and the sum of several load hosts' reports: counts added, histograms added (the whole run's
//! and each second's), so that percentiles are those of all records, never averaged.

use crate::driver::summary::{decode_histogram, encode_histogram};
use anyhow::{Context, Result};

/// What the load tool reports for one run.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct LoadReport {
    pub sent: u64,
    pub received: u64,
    pub duplicates: u64,
    pub failed: u64,
    pub malformed: u64,
    pub lost: u64,
    pub lost_examples: Vec<u64>,
    /// How late (ms) the tool was ready for the common start it was given (0 without one):
    /// records due meanwhile went out at once, their latency counted from when they were due.
    #[serde(default)]
    pub start_late_ms: u64,
    /// The schedule's first instant, wall clock (ms since the epoch; 0 from an older tool):
    /// second `t` of `intervals` begins `t` seconds after it.
    #[serde(default)]
    pub start_epoch_ms: u64,
    /// The whole run's latencies (µs), HdrHistogram, compressed, base64.
    pub histogram: String,
    pub intervals: Vec<LoadInterval>,
    /// The warm-up that ran just before, without a pause, as a report of its own (its seconds
    /// count from its own start); None when there was none.
    #[serde(default)]
    pub warmup: Option<Box<LoadReport>>,
    /// With load from several hosts: what each sent and what of it arrived (not in the tool's
    /// report; filled by the controller).
    #[serde(skip)]
    pub hosts: Vec<crate::driver::remote::HostShare>,
}

impl LoadReport {
    /// One host's share as the results keep it: its records sent are its due, those that
    /// arrived enriched its ok, those that arrived marked failed or never arrived its errors.
    pub fn share(&self, host: &str, rate: f64) -> crate::driver::remote::HostShare {
        let ok = self.received.saturating_sub(self.failed);
        crate::driver::remote::HostShare {
            host: host.to_string(),
            due: self.sent,
            ok,
            errors: self.sent.saturating_sub(ok),
            load: format!("{rate:.0} records/s"),
            ..Default::default()
        }
    }
}

/// One second of a load report; `t` counts from the schedule's start.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct LoadInterval {
    pub t: u32,
    pub ok: u64,
    pub errors: u64,
    pub lag: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    /// That second's latencies (µs), as `LoadReport::histogram`; empty from an older tool.
    #[serde(default)]
    pub histogram: String,
}

/// The delivery check of a pipeline run, kept in results.json.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeliveryCheck {
    pub sent: u64,
    /// Distinct records that arrived in `output`.
    pub received: u64,
    /// Records that arrived more than once (allowed: the pipelines are at-least-once).
    pub duplicates: u64,
    /// Records whose enrichment failed (the downstream failed or timed out): delivered, marked.
    pub failed_enrichments: u64,
    /// Records with content that is not the input plus its enrichment.
    pub malformed: u64,
    /// Records sent that never arrived within the drain window: must be 0.
    pub lost: u64,
    pub lost_examples: Vec<u64>,
    /// Most records sent but not yet seen in `output`, sampled once a second.
    pub peak_lag: u64,
}

impl LoadReport {
    pub fn check(&self) -> DeliveryCheck {
        DeliveryCheck {
            sent: self.sent,
            received: self.received,
            duplicates: self.duplicates,
            failed_enrichments: self.failed,
            malformed: self.malformed,
            lost: self.lost,
            lost_examples: self.lost_examples.clone(),
            peak_lag: self.intervals.iter().map(|i| i.lag).max().unwrap_or(0),
        }
    }
}

/// The reports of several load hosts (each its own tag and share, one common start) as one:
/// counts and lags added, the run's and each second's histograms added and their percentiles
/// read from the sum; the latest host's lateness; lost examples (each host's own sequence
/// numbers) from every host, five at most.
pub fn merge(reports: &[LoadReport]) -> Result<LoadReport> {
    let mut sum = LoadReport {
        histogram: add(reports.iter().map(|r| r.histogram.as_str()))?.0,
        ..LoadReport::default()
    };
    for r in reports {
        sum.sent += r.sent;
        sum.received += r.received;
        sum.duplicates += r.duplicates;
        sum.failed += r.failed;
        sum.malformed += r.malformed;
        sum.lost += r.lost;
        sum.start_late_ms = sum.start_late_ms.max(r.start_late_ms);
        let room = 5usize.saturating_sub(sum.lost_examples.len());
        sum.lost_examples
            .extend(r.lost_examples.iter().take(room).copied());
    }
    let warmups: Vec<LoadReport> = reports
        .iter()
        .filter_map(|r| r.warmup.as_deref().cloned())
        .collect();
    if !warmups.is_empty() && warmups.len() == reports.len() {
        sum.warmup = Some(Box::new(
            merge(&warmups).context("the load hosts' warm-ups")?,
        ));
    }
    let seconds = reports.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    for t in 0..seconds {
        let rows: Vec<&LoadInterval> = reports.iter().filter_map(|r| r.intervals.get(t)).collect();
        let (histogram, h) = add(rows.iter().map(|i| i.histogram.as_str()))
            .with_context(|| format!("second {t} of the load hosts' reports"))?;
        let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        sum.intervals.push(LoadInterval {
            t: t as u32,
            ok: rows.iter().map(|i| i.ok).sum(),
            errors: rows.iter().map(|i| i.errors).sum(),
            lag: rows.iter().map(|i| i.lag).sum(),
            p50: ms(0.5),
            p90: ms(0.9),
            p99: ms(0.99),
            max: h.max() as f64 / 1000.0,
            histogram,
        });
    }
    Ok(sum)
}

/// The sum of encoded histograms, encoded and as a histogram.
fn add<'a>(
    encoded: impl Iterator<Item = &'a str>,
) -> Result<(String, hdrhistogram::Histogram<u64>)> {
    let mut sum = hdrhistogram::Histogram::<u64>::new(3)?;
    for e in encoded {
        if e.is_empty() {
            anyhow::bail!("a load host's report has no histogram (its load tool is older than this iobound: run './iobound build')");
        }
        sum.add(decode_histogram(e)?)?;
    }
    Ok((encode_histogram(&sum)?, sum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_report_says_what_was_lost() {
        let r: LoadReport = serde_json::from_str(
            r#"{"sent":10,"received":8,"duplicates":1,"failed":1,"malformed":0,"lost":2,"lost_examples":[3, 7],"histogram":"","intervals":[{"t":0,"ok":5,"errors":0,"lag":4,"p50":1,"p90":2,"p99":3,"max":4},{"t":1,"ok":3,"errors":1,"lag":2,"p50":1,"p90":2,"p99":3,"max":4}]}"#,
        )
        .unwrap();
        let c = r.check();
        assert_eq!(
            (
                c.lost,
                c.lost_examples.clone(),
                c.peak_lag,
                c.duplicates,
                c.failed_enrichments
            ),
            (2, vec![3, 7], 4, 1, 1)
        );
    }

    fn encoded(values_us: &[u64]) -> String {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in values_us {
            h.record(*v).unwrap();
        }
        encode_histogram(&h).unwrap()
    }

    fn second(t: u32, values_us: &[u64], lag: u64) -> LoadInterval {
        LoadInterval {
            t,
            ok: values_us.len() as u64,
            lag,
            histogram: encoded(values_us),
            ..LoadInterval::default()
        }
    }

    #[test]
    fn two_hosts_reports_add_up_and_their_percentiles_come_from_the_sum() {
        // Host a: 90 fast records (1 ms); host b: 10 slow ones (100 ms). Averaging the hosts'
        // p99s would give ~50 ms; the sum's p99 is 100 ms and its p50 1 ms.
        let fast = vec![1_000; 90];
        let slow = vec![100_000; 10];
        let a = LoadReport {
            sent: 91,
            received: 90,
            lost: 1,
            lost_examples: vec![4],
            histogram: encoded(&fast),
            intervals: vec![second(0, &fast[..50], 7), second(1, &fast[50..], 2)],
            start_late_ms: 3,
            ..LoadReport::default()
        };
        let b = LoadReport {
            sent: 10,
            received: 10,
            duplicates: 2,
            histogram: encoded(&slow),
            intervals: vec![second(0, &slow, 1)],
            ..LoadReport::default()
        };
        let m = merge(&[a, b]).unwrap();
        assert_eq!((m.sent, m.received, m.lost, m.duplicates), (101, 100, 1, 2));
        assert_eq!((m.lost_examples.clone(), m.start_late_ms), (vec![4], 3));
        let all = decode_histogram(&m.histogram).unwrap();
        assert_eq!(all.len(), 100);
        assert!((all.value_at_quantile(0.99) as f64 - 100_000.0).abs() < 100.0);
        assert_eq!(m.intervals.len(), 2);
        let s0 = &m.intervals[0];
        assert_eq!((s0.ok, s0.lag), (60, 8));
        assert!(
            (s0.p50 - 1.0).abs() < 0.01 && (s0.p99 - 100.0).abs() < 0.1,
            "{s0:?}"
        );
        let s1 = &m.intervals[1];
        assert_eq!((s1.ok, s1.lag), (40, 2));
        assert!((s1.max - 1.0).abs() < 0.01, "{s1:?}");
        assert_eq!(m.check().peak_lag, 8);
    }

    #[test]
    fn the_hosts_warm_ups_are_added_as_their_measured_loads_are() {
        let host = |values: &[u64]| LoadReport {
            sent: values.len() as u64,
            received: values.len() as u64,
            histogram: encoded(values),
            intervals: vec![second(0, values, 0)],
            warmup: Some(Box::new(LoadReport {
                sent: 2 * values.len() as u64,
                received: 2 * values.len() as u64,
                histogram: encoded(&[values, values].concat()),
                intervals: vec![second(0, values, 0), second(1, values, 0)],
                ..LoadReport::default()
            })),
            ..LoadReport::default()
        };
        let m = merge(&[host(&[1_000; 30]), host(&[9_000; 10])]).unwrap();
        assert_eq!(m.sent, 40);
        let w = m.warmup.expect("both hosts had a warm-up");
        assert_eq!((w.sent, w.received, w.intervals.len()), (80, 80, 2));
        assert_eq!((w.intervals[1].ok, w.warmup.is_none()), (40, true));
        // A host without one (an older tool) leaves the sum without a warm-up to judge.
        let mut old = host(&[1_000; 5]);
        old.warmup = None;
        assert!(merge(&[host(&[1_000; 5]), old]).unwrap().warmup.is_none());
    }

    #[test]
    fn a_hosts_share_accounts_for_every_record_it_sent() {
        let r = LoadReport {
            sent: 100,
            received: 97,
            failed: 2,
            lost: 3,
            ..LoadReport::default()
        };
        let s = r.share("lg1", 50.0);
        assert_eq!((s.due, s.ok, s.errors), (100, 95, 5));
        assert_eq!((s.host.as_str(), s.load.as_str()), ("lg1", "50 records/s"));
    }

    #[test]
    fn a_report_without_histograms_cannot_be_added() {
        let old = LoadReport {
            histogram: String::new(),
            ..LoadReport::default()
        };
        let e = merge(&[old]).unwrap_err();
        assert!(format!("{e:#}").contains("./iobound build"), "{e:#}");
    }
}
