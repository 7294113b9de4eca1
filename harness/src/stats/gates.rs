//! Gates: a run's thresholds checked per contender and scenario, and `compare --fail-if` rules
//! that fail only on a change that is both beyond its limit and significant (the Mann-Whitney
//! test over runs; with fewer than 4 runs a side a change is "not tested" and does not fail).

use super::metrics::{Difference, Metric};
use super::repeats::{cell, Cell};
use crate::plan::thresholds::{with_unit, Op, Threshold};
use crate::plan::Scenario;
use crate::results::dir::ResultsDir;
use crate::results::record::ThresholdCheck;
use anyhow::{bail, Result};

/// Every scenario's thresholds against every contender measured in it. Contenders with no
/// measured run in a scenario (a failed start, say) are left out: their failure is reported
/// on its own.
pub fn check_thresholds(scenarios: &[Scenario], set: ResultsDir) -> Vec<ThresholdCheck> {
    let mut out = Vec::new();
    for s in scenarios.iter().filter(|s| !s.thresholds.is_empty()) {
        for c in &set.results.contenders {
            let Some(cell) = cell(set, &s.name, &c.name) else {
                continue;
            };
            out.extend(s.thresholds.iter().map(|t| check(t, &cell)));
        }
    }
    out
}

fn check(t: &Threshold, c: &Cell) -> ThresholdCheck {
    let value = c.get(Metric::named(&t.metric)).value;
    let passed = value.is_finite() && t.op.holds(value, t.limit);
    let beyond_pct = (!passed && t.limit > 0.0 && value.is_finite())
        .then(|| (value - t.limit).abs() / t.limit * 100.0);
    ThresholdCheck {
        contender: c.contender.clone(),
        scenario: c.scenario.clone(),
        metric: t.metric.clone(),
        rule: t.describe(),
        value,
        limit: t.limit,
        passed,
        beyond_pct,
    }
}

/// "spring-mvc / wait: p99 is 1,234.5 ms, limit p99 <= 200 ms (517% beyond)".
pub fn describe_check(c: &ThresholdCheck) -> String {
    let unit = Metric::by_key(&c.metric)
        .and_then(|m| m.limit)
        .map_or(crate::plan::thresholds::Unit::Number, |l| l.unit);
    let shown = with_unit(unit, (c.value * 10.0).round() / 10.0);
    let verdict = match (c.passed, c.beyond_pct) {
        (true, _) => "holds".to_string(),
        (false, Some(p)) => format!("BROKEN, {p:.0}% beyond"),
        (false, None) => "BROKEN".to_string(),
    };
    format!(
        "{} / {}: {} is {shown}, limit {}: {verdict}",
        c.contender, c.scenario, c.metric, c.rule
    )
}

/// `--fail-if 'p99 > +10%'`: fail when the metric changes by more than the given per cent, in
/// the given direction, and the change is significant.
#[derive(Debug, Clone, PartialEq)]
pub struct FailIf {
    pub metric: String,
    /// Gt: fail on a rise beyond `pct`; Lt: on a fall beyond it (`pct` is then negative).
    pub op: Op,
    pub pct: f64,
    pub text: String,
}

impl FailIf {
    pub fn parse(text: &str) -> Result<FailIf> {
        let how = "write METRIC > +N% or METRIC < -N%, e.g. --fail-if 'p99 > +10%' --fail-if 'throughput < -5%'";
        let cut = text
            .find(['<', '>'])
            .ok_or_else(|| anyhow::anyhow!("--fail-if {text:?}: {how}"))?;
        let (name, rest) = text.split_at(cut);
        let name = name.trim();
        Metric::limited(&format!("--fail-if {text:?}"), name)?;
        let (op, num) = Op::split(rest);
        let op = match op {
            Some(Op::Gt | Op::Ge) => Op::Gt,
            Some(Op::Lt | Op::Le) => Op::Lt,
            None => bail!("--fail-if {text:?}: {how}"),
        };
        let pct: f64 = num
            .trim()
            .strip_suffix('%')
            .and_then(|n| n.trim().parse().ok())
            .filter(|p: &f64| p.is_finite())
            .ok_or_else(|| {
                anyhow::anyhow!("--fail-if {text:?}: the limit is a change in per cent; {how}")
            })?;
        if (op == Op::Gt && pct < 0.0) || (op == Op::Lt && pct > 0.0) {
            bail!("--fail-if {text:?}: a rise is limited with '> +N%', a fall with '< -N%'");
        }
        Ok(FailIf {
            metric: name.to_string(),
            op,
            pct,
            text: text.trim().to_string(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Within the limit, or beyond it but tested and not significant.
    Pass,
    /// Beyond the limit and significant.
    Fail,
    /// Beyond the limit, but not tested (fewer than 4 runs a side): does not fail.
    NotTested,
}

#[derive(Debug, Clone)]
pub struct GateResult {
    pub scenario: String,
    pub contender: String,
    pub rule: String,
    pub outcome: Outcome,
    /// What was seen, in words: "p99 +23.4% (45.1 -> 55.7), significant".
    pub detail: String,
}

/// One rule on one pair of cells (baseline `a`, candidate `b`).
pub fn gate(rule: &FailIf, a: &Cell, b: &Cell) -> GateResult {
    let m = Metric::named(&rule.metric);
    let d = Difference::of(m, a, b);
    let (va, vb) = (a.get(m).value, b.get(m).value);
    let beyond = d.change_pct.is_some_and(|p| rule.op.holds(p, rule.pct));
    let outcome = match (beyond, d.significant) {
        (false, _) | (true, Some(false)) => Outcome::Pass,
        (true, Some(true)) => Outcome::Fail,
        (true, None) => Outcome::NotTested,
    };
    let test = match d.significant {
        Some(true) => "significant (Mann-Whitney, 5%)",
        Some(false) => "not significant (Mann-Whitney, 5%)",
        None => "not tested (a test needs >= 4 runs each)",
    };
    let change = d
        .change_pct
        .map_or("no change computable".to_string(), |p| format!("{p:+.1}%"));
    let dec = m.decimals;
    GateResult {
        scenario: a.scenario.clone(),
        contender: if a.contender == b.contender {
            a.contender.clone()
        } else {
            format!("{} -> {}", a.contender, b.contender)
        },
        rule: rule.text.clone(),
        outcome,
        detail: format!(
            "{} {change} ({va:.dec$} -> {vb:.dec$}), {test}",
            rule.metric
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Estimate;

    fn c(rps: &[f64], p99: &[f64]) -> Cell {
        let est = |v: &[f64]| Estimate {
            value: crate::util::numbers::median(v.to_vec()),
            lo: None,
            hi: None,
            per_run: v.to_vec(),
        };
        let mut c = Cell {
            contender: "spring-mvc".into(),
            scenario: "s".into(),
            ..Cell::default()
        };
        c.set("throughput", est(rps));
        c.set("p99", est(p99));
        c
    }

    #[test]
    fn thresholds_say_by_how_much_they_broke() {
        let cell = c(&[1000.0], &[300.0]);
        let broke = check(&Threshold::parse("x", "p99", "200ms").unwrap(), &cell);
        assert!(!broke.passed);
        assert_eq!(broke.beyond_pct, Some(50.0));
        let text = describe_check(&broke);
        assert!(
            text.contains("p99 is 300 ms")
                && text.contains("p99 <= 200 ms")
                && text.contains("50% beyond"),
            "{text}"
        );
        assert!(
            check(
                &Threshold::parse("x", "throughput", ">= 900").unwrap(),
                &cell
            )
            .passed
        );
        assert!(
            !check(
                &Threshold::parse("x", "throughput", ">= 1200").unwrap(),
                &cell
            )
            .passed
        );
    }

    #[test]
    fn fail_if_parses_direction_and_refuses_contradictions() {
        let r = FailIf::parse("p99 > +10%").unwrap();
        assert_eq!((r.op, r.pct), (Op::Gt, 10.0));
        assert_eq!(FailIf::parse("throughput < -5%").unwrap().pct, -5.0);
        assert!(FailIf::parse("p99 > -10%")
            .unwrap_err()
            .to_string()
            .contains("rise"));
        assert!(FailIf::parse("p98 > +1%")
            .unwrap_err()
            .to_string()
            .contains("unknown metric"));
        assert!(FailIf::parse("p99 +10%")
            .unwrap_err()
            .to_string()
            .contains("--fail-if 'p99 > +10%'"));
    }

    #[test]
    fn only_a_significant_change_beyond_the_limit_fails() {
        let rule = FailIf::parse("p99 > +10%").unwrap();
        let before = c(&[1000.0; 4], &[100.0, 101.0, 99.0, 100.5]);
        let worse = c(&[1000.0; 4], &[150.0, 152.0, 149.0, 151.0]);
        let noise = c(&[1000.0; 4], &[100.2, 99.5, 101.0, 100.0]);
        assert_eq!(gate(&rule, &before, &worse).outcome, Outcome::Fail);
        assert_eq!(gate(&rule, &before, &noise).outcome, Outcome::Pass);
        // Better is never a failure of a "rise" rule.
        assert_eq!(gate(&rule, &worse, &before).outcome, Outcome::Pass);
        // Three runs a side: beyond the limit, but untested, so it does not fail.
        let few = |v: &[f64]| c(&[1000.0; 3], v);
        let g = gate(
            &rule,
            &few(&[100.0, 101.0, 99.0]),
            &few(&[150.0, 152.0, 149.0]),
        );
        assert_eq!(g.outcome, Outcome::NotTested);
        assert!(g.detail.contains("not tested"), "{}", g.detail);
        let tp = FailIf::parse("throughput < -5%").unwrap();
        assert_eq!(
            gate(
                &tp,
                &c(&[1000.0, 1010.0, 990.0, 1005.0], &[1.0; 4]),
                &c(&[800.0, 810.0, 790.0, 805.0], &[1.0; 4])
            )
            .outcome,
            Outcome::Fail
        );
    }
}
