//! `[scenario.load]`: the closed model (users, steps, think time) or the open model (arrival
//! rate, ramp, connection limit), checked field by field with the fix in every error.

use super::fields::{field_duration, positive_u32};
use super::file::LoadFile;
use super::{Load, Profile, DEFAULT_TIMEOUT};
use anyhow::{bail, Context, Result};
use std::time::Duration;

impl LoadFile {
    pub fn validate(&self, at: &str) -> Result<Load> {
        let timeout = field_duration(
            &format!("{at}.timeout"),
            self.timeout.as_deref().unwrap_or(DEFAULT_TIMEOUT),
        )?;
        if timeout.is_zero() {
            bail!("{at}.timeout must be above zero; e.g. timeout = \"10s\"");
        }
        let profile = match self.model.as_str() {
            "closed" => self.closed(at)?,
            "open" => self.open(at)?,
            "" => bail!("{at}.model is missing; set model = \"closed\" (users) or \"open\" (arrival rate)"),
            other => bail!("{at}.model = {other:?} is unknown; use \"closed\" (users) or \"open\" (arrival rate)"),
        };
        Ok(Load {
            profile,
            timeout,
            connection_close: self.connection_close.unwrap_or(false),
        })
    }

    fn closed(&self, at: &str) -> Result<Profile> {
        for (set, name) in [
            (self.rate.is_some(), "rate"),
            (self.ramp_to.is_some(), "ramp_to"),
            (self.max_connections.is_some(), "max_connections"),
        ] {
            if set {
                bail!(
                    "{at}.{name} applies to the open model only; remove it or set model = \"open\""
                );
            }
        }
        let users = positive_u32(
            &format!("{at}.users"),
            self.users,
            None,
            "set the number of concurrent users, e.g. users = 64",
        )?;
        let step_users = positive_u32(
            &format!("{at}.step_users"),
            self.step_users,
            Some(0),
            "users added at each step",
        )?;
        let steps = positive_u32(
            &format!("{at}.steps"),
            self.steps,
            Some(0),
            "number of steps after the first level",
        )?;
        if users == 0 && step_users == 0 {
            bail!("{at}.users is 0 and no step_users are added: nothing would be sent; set users >= 1");
        }
        let level = match (steps, &self.step_duration, &self.duration) {
            (0, None, Some(d)) | (0, Some(d), None) => field_duration(&format!("{at}.duration"), d)?,
            (0, Some(_), Some(_)) => bail!("{at}: give either duration or step_duration, not both"),
            (_, Some(d), None) => field_duration(&format!("{at}.step_duration"), d)?,
            (_, _, Some(_)) => bail!("{at}.duration conflicts with steps: the run lasts (steps + 1) x step_duration; remove duration"),
            (_, None, None) => bail!("{at}.step_duration is missing; e.g. step_duration = \"10s\""),
        };
        totals_bounded(at, users, step_users, steps, level)?;
        if level.is_zero() {
            let field = if steps == 0 {
                "duration"
            } else {
                "step_duration"
            };
            bail!("{at}.{field} is 0: a load must last more than 0 s, e.g. {field} = \"30s\"");
        }
        let think = field_duration(
            &format!("{at}.think_time"),
            self.think_time.as_deref().unwrap_or("0s"),
        )?;
        let stay = match &self.stay {
            None => Duration::ZERO,
            Some(_) if steps == 0 || step_users == 0 => bail!("{at}.stay applies to users joining in steps (steps and step_users); for one level of users set duration and remove stay"),
            Some(d) => field_duration(&format!("{at}.stay"), d)?,
        };
        if self.stay.is_some() && stay.is_zero() {
            bail!("{at}.stay must be above zero; e.g. stay = \"20s\" (leave stay out and users stay to the end)");
        }
        let spread = field_duration(
            &format!("{at}.spread"),
            self.spread.as_deref().unwrap_or("0s"),
        )?;
        if spread > level {
            bail!("{at}.spread is longer than a level ({} s): users would still be joining when the next level starts; make spread at most the level's length", level.as_secs_f64());
        }
        Ok(Profile::Closed {
            users,
            step_users,
            steps,
            level,
            think,
            stay,
            spread,
        })
    }

    fn open(&self, at: &str) -> Result<Profile> {
        for (set, name) in [
            (self.users.is_some(), "users"),
            (self.step_users.is_some(), "step_users"),
            (self.steps.is_some(), "steps"),
            (self.think_time.is_some(), "think_time"),
            (self.stay.is_some(), "stay"),
            (self.spread.is_some(), "spread"),
        ] {
            if set {
                bail!("{at}.{name} applies to the closed model only; remove it or set model = \"closed\"");
            }
        }
        let rate = self.rate.with_context(|| format!("{at}.rate is missing; set the arrival rate in requests per second, e.g. rate = 1000"))?;
        if !(rate.is_finite() && rate > 0.0) {
            bail!("{at}.rate must be a positive number of requests per second (got {rate})");
        }
        within_max_rate(&format!("{at}.rate"), rate)?;
        let ramp_to = self.ramp_to.unwrap_or(rate);
        if !(ramp_to.is_finite() && ramp_to > 0.0) {
            bail!("{at}.ramp_to must be a positive rate (got {ramp_to}); it is the rate reached at the end of the run");
        }
        within_max_rate(&format!("{at}.ramp_to"), ramp_to)?;
        let duration = field_duration(
            &format!("{at}.duration"),
            self.duration
                .as_deref()
                .with_context(|| format!("{at}.duration is missing; e.g. duration = \"30s\""))?,
        )?;
        if duration.is_zero() {
            bail!("{at}.duration must be above zero");
        }
        let max_connections = positive_u32(
            &format!("{at}.max_connections"),
            self.max_connections,
            Some(10_000),
            "connections the driver may open",
        )?;
        if max_connections == 0 {
            bail!("{at}.max_connections must be at least 1");
        }
        Ok(Profile::Open {
            rate,
            ramp_to,
            duration,
            max_connections,
        })
    }
}

/// The highest arrival rate an open load may ask for (requests per second): two orders of
/// magnitude above what one driver sends on loopback, so it refuses only a typo or a hostile
/// plan (`rate = 1e300` scheduled requests a zeptosecond apart).
pub const MAX_RATE: f64 = 10_000_000.0;

/// An error unless `rate` (the value of `field`, requests per second) is at most MAX_RATE;
/// the one check every rate a plan gives goes through (an open load's, a capacity search's).
pub(super) fn within_max_rate(field: &str, rate: f64) -> Result<()> {
    if rate > MAX_RATE {
        // 1e300 as the plan wrote it, not as its 301 digits.
        let shown = if rate < 1e15 {
            rate.to_string()
        } else {
            format!("{rate:e}")
        };
        bail!("{field} = {shown} is above {MAX_RATE} requests per second, more than one driver can send; use a rate up to that, or split the load across hosts");
    }
    Ok(())
}

/// The most users a closed load may reach over its steps (the bound of each count field).
const MAX_TOTAL_USERS: u64 = 1_000_000;

/// Totals over a closed load's steps, each field within its own bound: the users it reaches
/// and how long it lasts, in checked arithmetic (a product of three fields within bounds
/// wrapped a u32 before).
fn totals_bounded(
    at: &str,
    users: u32,
    step_users: u32,
    steps: u32,
    level: Duration,
) -> Result<()> {
    let total = u64::from(step_users)
        .checked_mul(u64::from(steps))
        .and_then(|t| t.checked_add(u64::from(users)));
    if total.is_none_or(|t| t > MAX_TOTAL_USERS) {
        bail!(
            "{at}: users + step_users x steps = {users} + {step_users} x {steps} is beyond \
             1,000,000 users; lower users, step_users or steps"
        );
    }
    let longest = crate::util::units::LONGEST_DURATION_S;
    if (f64::from(steps) + 1.0) * level.as_secs_f64() > longest {
        bail!(
            "{at}: (steps + 1) x step_duration = {} x {} s is longer than a week ({longest} s); \
             lower steps or step_duration",
            u64::from(steps) + 1,
            level.as_secs_f64()
        );
    }
    Ok(())
}
