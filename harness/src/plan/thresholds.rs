//! Thresholds: limits a run must keep per contender and scenario (`[thresholds]` in a plan,
//! `[scenario.thresholds]` for one scenario, `--threshold` on the command line), written as a
//! service owner would: `p99 = "200ms"`, `errors = "0.1%"`, `throughput = ">= 5000"`.

use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::BTreeMap;

use super::metrics::{Limit, Metric};
pub use super::metrics::{Op, Unit};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub metric: String,
    pub op: Op,
    /// In the metric's unit (ms, %, or the plain number).
    pub limit: f64,
    pub unit: Unit,
}

impl Threshold {
    /// `metric` with the limit as written in a plan (`"200ms"`, `">= 5000"`); `at` names the field.
    pub fn parse(at: &str, metric: &str, text: &str) -> Result<Threshold> {
        let (
            m,
            Limit {
                unit,
                op: default_op,
                ..
            },
        ) = Metric::limited(at, metric)?;
        let key = m.key;
        let (op, rest) = Op::split(text);
        let limit = number_in(unit, rest).ok_or_else(|| {
            let example = match unit {
                Unit::Millis => "\"200ms\", \"1.5s\" or \"<= 250ms\"",
                Unit::Percent => "\"0.1%\" or \"<= 1%\"",
                Unit::Number => "\">= 5000\" or \"800\"",
            };
            anyhow::anyhow!("{at}: {text:?} is not a limit for {metric}; write e.g. {example}")
        })?;
        Ok(Threshold {
            metric: key.to_string(),
            op: op.unwrap_or(default_op),
            limit,
            unit,
        })
    }

    /// A command-line threshold: `p99<=200ms`, `errors<=0.1%`, `throughput>=5000`.
    pub fn parse_flag(text: &str) -> Result<Threshold> {
        let cut = text.find(['<', '>', '=']).unwrap_or(text.len());
        let (metric, rest) = text.split_at(cut);
        let rest = rest.strip_prefix('=').unwrap_or(rest);
        if rest.trim().is_empty() {
            bail!("--threshold {text:?}: write METRIC OP LIMIT, e.g. --threshold 'p99<=200ms' or --threshold 'throughput>=5000'");
        }
        Threshold::parse(&format!("--threshold {text:?}"), metric.trim(), rest)
    }

    /// "p99 <= 200 ms", "errors <= 0.1%", "throughput >= 5,000".
    pub fn describe(&self) -> String {
        format!(
            "{} {} {}",
            self.metric,
            self.op.symbol(),
            with_unit(self.unit, self.limit)
        )
    }
}

/// A value with its unit, for messages.
pub fn with_unit(unit: Unit, v: f64) -> String {
    let n = if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    };
    match unit {
        Unit::Millis => format!("{n} ms"),
        Unit::Percent => format!("{n}%"),
        Unit::Number => n,
    }
}

/// The number in `text` in `unit` (ms for latency, per cent for errors).
fn number_in(unit: Unit, text: &str) -> Option<f64> {
    let t = text.trim().replace(['_', ','], "");
    let (num, scale) = match unit {
        Unit::Millis => {
            if let Some(n) = t.strip_suffix("ms") {
                (n.to_string(), 1.0)
            } else if let Some(n) = t.strip_suffix("us") {
                (n.to_string(), 0.001)
            } else if let Some(n) = t.strip_suffix('s') {
                (n.to_string(), 1000.0)
            } else {
                (t.clone(), 1.0)
            }
        }
        Unit::Percent => (t.strip_suffix('%').unwrap_or(&t).to_string(), 1.0),
        Unit::Number => (t.clone(), 1.0),
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v * scale)
}

/// A `[thresholds]` table: metric -> limit (a string, or a bare number in the metric's unit).
pub fn parse_table(at: &str, table: &BTreeMap<String, toml::Value>) -> Result<Vec<Threshold>> {
    let mut out = Vec::new();
    for (metric, v) in table {
        let field = format!("{at}.{metric}");
        let text = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            _ => bail!("{field}: write the limit as a string, e.g. {metric} = \"200ms\""),
        };
        out.push(Threshold::parse(&field, metric, &text)?);
    }
    Ok(out)
}

/// `base` with every metric `over` sets replaced by `over`'s limit.
pub fn merged(base: &[Threshold], over: &[Threshold]) -> Vec<Threshold> {
    let mut out: Vec<Threshold> = base
        .iter()
        .filter(|b| !over.iter().any(|o| o.metric == b.metric))
        .cloned()
        .collect();
    out.extend(over.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_in_the_metrics_units_with_sensible_default_comparisons() {
        let t = Threshold::parse("thresholds.p99", "p99", "200ms").unwrap();
        assert_eq!((t.op, t.limit), (Op::Le, 200.0));
        assert_eq!(Threshold::parse("x", "p99", "1.5s").unwrap().limit, 1500.0);
        assert_eq!(Threshold::parse("x", "p50", "250us").unwrap().limit, 0.25);
        let e = Threshold::parse("x", "errors", "0.1%").unwrap();
        assert_eq!(
            (e.op, e.limit, e.describe()),
            (Op::Le, 0.1, "errors <= 0.1%".to_string())
        );
        let r = Threshold::parse("x", "throughput", ">= 5,000").unwrap();
        assert_eq!((r.op, r.limit), (Op::Ge, 5000.0));
        assert_eq!(
            Threshold::parse("x", "throughput", "5000").unwrap().op,
            Op::Ge,
            "throughput must stay above"
        );
        assert!(
            !Op::Le.holds(200.1, 200.0) && Op::Le.holds(200.0, 200.0) && Op::Gt.holds(3.0, 2.0)
        );
    }

    #[test]
    fn bad_thresholds_name_the_field_and_the_fix() {
        let e = Threshold::parse("thresholds.p99", "p99", "fast")
            .unwrap_err()
            .to_string();
        assert!(e.contains("thresholds.p99") && e.contains("200ms"), "{e}");
        let e = Threshold::parse("thresholds.p98", "p98", "1ms")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown metric") && e.contains("p99"), "{e}");
        let e = Threshold::parse_flag("p99").unwrap_err().to_string();
        assert!(e.contains("--threshold") && e.contains("p99<=200ms"), "{e}");
        assert!(
            Threshold::parse("x", "errors", "-1%").is_err(),
            "negative limits are refused"
        );
    }

    #[test]
    fn flags_and_tables_read_the_same_way_and_scenarios_override_the_plan() {
        assert_eq!(
            Threshold::parse_flag("p99<=200ms").unwrap(),
            Threshold::parse("x", "p99", "200ms").unwrap()
        );
        assert_eq!(
            Threshold::parse_flag("throughput>=5000").unwrap().op,
            Op::Ge
        );
        assert_eq!(Threshold::parse_flag("p99=300ms").unwrap().limit, 300.0);
        let mut table = BTreeMap::new();
        table.insert("p99".to_string(), toml::Value::String("200ms".into()));
        table.insert("errors".to_string(), toml::Value::Float(0.5));
        let plan = parse_table("thresholds", &table).unwrap();
        let scen = vec![Threshold::parse("x", "p99", "1s").unwrap()];
        let m = merged(&plan, &scen);
        assert_eq!(m.len(), 2);
        assert_eq!(m.iter().find(|t| t.metric == "p99").unwrap().limit, 1000.0);
        assert_eq!(m.iter().find(|t| t.metric == "errors").unwrap().limit, 0.5);
    }
}
