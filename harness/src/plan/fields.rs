//! Reading one field of a plan: a duration, a positive count, a percentage, each error naming
//! the field and the fix.

use crate::util::units::parse_duration;
use anyhow::{bail, Context, Result};
use std::time::Duration;

pub(super) fn field_duration(what: &str, text: &str) -> Result<Duration> {
    parse_duration(text).with_context(|| format!("{what}: invalid duration"))
}

pub(super) fn positive_u32(
    what: &str,
    v: Option<i64>,
    default: Option<u32>,
    fix: &str,
) -> Result<u32> {
    match (v, default) {
        (None, Some(d)) => Ok(d),
        (None, None) => bail!("{what} is missing; {fix}"),
        (Some(n), _) if n < 0 => bail!("{what} must not be negative (got {n}); {fix}"),
        (Some(n), _) if n > 1_000_000 => bail!("{what} = {n} is beyond 1,000,000; {fix}"),
        (Some(n), _) => Ok(n as u32),
    }
}

/// A percentage field ("5%") as a fraction (0.05), or an error naming the field, the range and
/// an example.
pub(super) fn percent(
    field: &str,
    text: &str,
    range: std::ops::RangeInclusive<f64>,
    example: &str,
) -> Result<f64> {
    text.trim()
        .strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| range.contains(p))
        .map(|p| p / 100.0)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{field} = {text:?}: write a percentage between {}% and {}%, {example}",
                range.start(),
                range.end()
            )
        })
}

/// `window`: "fixed" (the default) or "auto".
pub(super) fn window_is_auto(window: Option<&str>) -> Result<bool> {
    match window {
        None | Some("fixed") => Ok(false),
        Some("auto") => Ok(true),
        Some(other) => bail!(
            "plan.window = {other:?}: use \"fixed\" (each window lasts its `duration`) or \
             \"auto\" (as long as the warm-up's noise needs)"
        ),
    }
}

/// `windows`: a count of measured windows per start (1 to MAX_WINDOWS), or "auto".
pub(super) fn windows_checked(windows: Option<&super::file::RunsFile>) -> Result<(u32, bool)> {
    use super::MAX_WINDOWS;
    match windows {
        None => Ok((1, false)),
        Some(w) if w.is_auto() => Ok((1, true)),
        Some(super::file::RunsFile::Count(n)) if (1..=MAX_WINDOWS as i64).contains(n) => {
            Ok((*n as u32, false))
        }
        Some(other) => bail!(
            "plan.windows = {}: give a number of measured windows per start from 1 to \
             {MAX_WINDOWS}, or \"auto\" (as many as the noise makes worth their cost)",
            match other {
                super::file::RunsFile::Count(n) => n.to_string(),
                super::file::RunsFile::Word(w) => format!("{w:?}"),
            }
        ),
    }
}
