//! CSV exports: metrics.csv (every metric of the registry per scenario and contender, with its
//! interval), intervals.csv (every run's per-second rows) and resources.csv (every sample of
//! every contender), through one writer that quotes fields as RFC 4180 says.

use super::ScenarioView;
use crate::results::record::Results;
use crate::stats::METRICS;

/// A CSV document: the header, then one line per row, each field quoted where it must be.
pub fn document(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let field = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = header.join(",");
    out.push('\n');
    for row in rows {
        out.push_str(&row.iter().map(|f| field(f)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// One row per scenario and contender: its runs, then every metric of the registry by its key,
/// with the interval's bounds (`KEY_lo`, `KEY_hi`); a figure the cell does not have is empty.
pub fn metrics_csv(views: &[ScenarioView]) -> String {
    let mut header = vec![
        "scenario".to_string(),
        "contender".to_string(),
        "runs".to_string(),
        "settled_runs".to_string(),
    ];
    for m in METRICS {
        header.extend([
            m.key.to_string(),
            format!("{}_lo", m.key),
            format!("{}_hi", m.key),
        ]);
    }
    let number = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map_or(String::new(), |v| v.to_string())
    };
    let rows = views.iter().flat_map(|v| {
        v.cells.iter().filter_map(|(name, c)| {
            let c = c.as_ref()?;
            let mut row = vec![
                v.name.clone(),
                name.clone(),
                c.runs.to_string(),
                (c.runs - c.unsettled_runs).to_string(),
            ];
            for m in METRICS {
                let e = c.get(m);
                let value = crate::stats::measured(m, c).then_some(e.value);
                row.extend([number(value), number(e.lo), number(e.hi)]);
            }
            Some(row)
        })
    });
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    document(&header, rows)
}

pub fn intervals_csv(results: &Results) -> String {
    let header = [
        "scenario",
        "contender",
        "run",
        "status",
        "t_s",
        "target",
        "ok",
        "errors",
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "max_ms",
        "drain",
    ];
    let rows = results.runs.iter().flat_map(|r| {
        r.intervals.iter().map(move |row| {
            let l = &row.latency;
            vec![
                r.scenario.clone(),
                r.contender.clone(),
                r.run.to_string(),
                format!("{:?}", r.status),
                row.t.to_string(),
                row.target.to_string(),
                row.ok.to_string(),
                row.errors.to_string(),
                l.p50.to_string(),
                l.p90.to_string(),
                l.p99.to_string(),
                l.max.to_string(),
                row.drain.to_string(),
            ]
        })
    });
    document(&header, rows)
}

pub fn resources_csv(results: &Results) -> String {
    let header = [
        "scenario",
        "contender",
        "run",
        "t_s",
        "processes",
        "threads",
        "rss_mb",
        "cpu_user_s",
        "cpu_sys_s",
        "ctx_voluntary",
        "ctx_involuntary",
        "fds",
        "sockets",
        "downstream_conns",
    ];
    let rows = results.runs.iter().flat_map(|r| {
        r.resources.samples.iter().map(move |s| {
            vec![
                r.scenario.clone(),
                r.contender.clone(),
                r.run.to_string(),
                format!("{:.3}", s.t),
                s.processes.to_string(),
                s.threads.to_string(),
                format!("{:.1}", s.rss_mb),
                format!("{:.3}", s.cpu_user_s),
                format!("{:.3}", s.cpu_sys_s),
                s.ctx_voluntary.to_string(),
                s.ctx_involuntary.to_string(),
                s.fds.to_string(),
                s.sockets.to_string(),
                s.downstream_conns.to_string(),
            ]
        })
    });
    document(&header, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_or_quotes_are_quoted() {
        let out = document(
            &["a", "b"],
            [
                vec!["x,y".to_string(), "say \"hi\"".to_string()],
                vec!["1".into(), "2".into()],
            ],
        );
        assert_eq!(out, "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n1,2\n");
    }
}
