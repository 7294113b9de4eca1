//! How the downstream service behind /enrich behaves: a latency distribution (fixed, uniform,
//! lognormal), an error rate, and stalls. Plans check it; the service draws from it; its
//! `/_control` query changes it mid-run.

use super::file::DownstreamFile;
use super::secs;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::time::Duration;

pub use crate::util::numbers::SplitMix64 as Rng;

#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    Fixed(Duration),
    Uniform(Duration, Duration),
    /// Median and sigma of the underlying normal distribution.
    LogNormal(Duration, f64),
}

impl Dist {
    /// "fixed:100ms", "uniform:50ms..150ms", "lognormal:100ms,0.5".
    pub fn parse(s: &str) -> Result<Dist> {
        let d = |v: &str| crate::util::units::parse_duration(v.trim());
        let hint = "write fixed:100ms, uniform:50ms..150ms or lognormal:100ms,0.5 (median, sigma)";
        let (kind, arg) = s
            .split_once(':')
            .with_context(|| format!("latency {s:?}: {hint}"))?;
        Ok(match kind {
            "fixed" => Dist::Fixed(d(arg).with_context(|| format!("latency {s:?}: {hint}"))?),
            "uniform" => {
                let (a, b) = arg
                    .split_once("..")
                    .with_context(|| format!("latency {s:?}: {hint}"))?;
                let (a, b) = (d(a)?, d(b)?);
                if b < a {
                    bail!("latency {s:?}: the upper bound is below the lower one");
                }
                Dist::Uniform(a, b)
            }
            "lognormal" => {
                let (m, sigma) = arg
                    .split_once(',')
                    .with_context(|| format!("latency {s:?}: {hint}"))?;
                let sigma: f64 = sigma
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && *v >= 0.0 && *v <= 5.0)
                    .with_context(|| format!("latency {s:?}: sigma must be a number in 0..5"))?;
                Dist::LogNormal(d(m)?, sigma)
            }
            _ => bail!("latency {s:?}: unknown distribution {kind:?}; {hint}"),
        })
    }

    pub fn sample(&self, rng: &mut Rng) -> Duration {
        match *self {
            Dist::Fixed(d) => d,
            Dist::Uniform(a, b) => a + (b - a).mul_f64(rng.unit()),
            Dist::LogNormal(m, sigma) => {
                // Box-Muller; capped at 100 x the median so one draw cannot hang a run.
                let (u1, u2) = (rng.unit().max(1e-12), rng.unit());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                m.mul_f64((sigma * z).exp().min(100.0))
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Behaviour {
    pub latency: Dist,
    pub error_rate: f64,
    pub stall_prob: f64,
    pub stall_for: Duration,
}

impl Default for Behaviour {
    fn default() -> Behaviour {
        Behaviour {
            latency: Dist::Fixed(Duration::from_millis(100)),
            error_rate: 0.0,
            stall_prob: 0.0,
            stall_for: Duration::from_secs(10),
        }
    }
}

fn probability(name: &str, v: &str) -> Result<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .with_context(|| format!("{name} {v:?}: a probability in 0..1, e.g. 0.05"))
}

impl Behaviour {
    pub fn new(
        latency: &str,
        error_rate: &str,
        stall_prob: &str,
        stall_for: &str,
    ) -> Result<Behaviour> {
        Ok(Behaviour {
            latency: Dist::parse(latency)?,
            error_rate: probability("error_rate", error_rate)?,
            stall_prob: probability("stall_prob", stall_prob)?,
            stall_for: crate::util::units::parse_duration(stall_for)
                .with_context(|| format!("stall_for {stall_for:?}"))?,
        })
    }

    /// Applies `latency=..&error_rate=..` from a control request.
    pub fn update(&mut self, query: &str) -> Result<()> {
        let mut next = self.clone();
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .with_context(|| format!("{kv:?}: write key=value"))?;
            match k {
                "latency" => next.latency = Dist::parse(v)?,
                "error_rate" => next.error_rate = probability(k, v)?,
                "stall_prob" => next.stall_prob = probability(k, v)?,
                "stall_for" => next.stall_for = crate::util::units::parse_duration(v)?,
                _ => {
                    bail!("unknown setting {k:?}: use latency, error_rate, stall_prob or stall_for")
                }
            }
        }
        *self = next;
        Ok(())
    }
}

/// The downstream's settings a plan gives (its `[downstream]`), changed by a scenario or an
/// event where they say so.
#[derive(Debug, Clone, Serialize)]
pub struct DownstreamPlan {
    pub latency: String,
    pub error_rate: f64,
    pub stall_prob: f64,
    pub stall_for: String,
    #[serde(with = "secs")]
    pub timeout: Duration,
}

impl DownstreamPlan {
    pub fn behaviour(&self) -> Result<Behaviour> {
        Behaviour::new(
            &self.latency,
            &self.error_rate.to_string(),
            &self.stall_prob.to_string(),
            &self.stall_for,
        )
    }

    /// These settings with the fields `over` sets replaced (a scenario's or an event's changes).
    pub fn with(&self, over: &DownstreamFile) -> DownstreamPlan {
        DownstreamPlan {
            latency: over.latency.clone().unwrap_or_else(|| self.latency.clone()),
            error_rate: over.error_rate.unwrap_or(self.error_rate),
            stall_prob: over.stall_prob.unwrap_or(self.stall_prob),
            stall_for: over
                .stall_for
                .clone()
                .unwrap_or_else(|| self.stall_for.clone()),
            timeout: self.timeout,
        }
    }

    /// The settings as a query for the downstream's /_control.
    pub fn control_query(&self) -> String {
        format!(
            "latency={}&error_rate={}&stall_prob={}&stall_for={}",
            self.latency, self.error_rate, self.stall_prob, self.stall_for
        )
    }
}
