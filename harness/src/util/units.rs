//! Units a user writes and reads: durations (`250ms`, `10s`), latencies and counts.

use anyhow::{bail, Result};
use std::time::Duration;

/// Parses `250ms`, `10s`, `2m`, `1.5s`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("{text:?} is not a duration; write e.g. 500ms, 10s or 2m"))?;
    if !value.is_finite() || value < 0.0 {
        bail!("{text:?} must be a non-negative duration");
    }
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => bail!("{text:?} has unknown unit {unit:?}; use ms, s, m or h"),
    };
    if secs > LONGEST_DURATION_S {
        bail!(
            "{text:?} is longer than iobound measures anything (at most {} h); write a shorter \
             duration, e.g. 30s or 15m",
            LONGEST_DURATION_S / 3600.0
        );
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The longest duration iobound accepts anywhere (a week): longer is a typo, and far longer
/// does not fit a Duration at all.
pub const LONGEST_DURATION_S: f64 = 7.0 * 24.0 * 3600.0;

/// A latency for a terminal line: "850 µs", "12.3 ms", "1.52 s".
pub fn format_latency(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{:.2} s", us as f64 / 1e6)
    }
}

/// `n` with thousands separated by commas: 6000 -> "6,000".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_read_in_their_unit() {
        assert_eq!(format_latency(Duration::from_micros(850)), "850 µs");
        assert_eq!(format_latency(Duration::from_micros(12_345)), "12.3 ms");
        assert_eq!(format_latency(Duration::from_millis(1520)), "1.52 s");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(6000), "6,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("10 parsecs")
            .unwrap_err()
            .to_string()
            .contains("unknown unit"));
        assert!(parse_duration("fast").is_err());
        // Found by feeding the plan reader long numbers: these panicked in Duration.
        for huge in ["100000000000000000000s", "99999999999999999999999h", "169h"] {
            let e = parse_duration(huge).unwrap_err().to_string();
            assert!(
                e.contains("is longer than iobound measures anything"),
                "{e}"
            );
        }
        assert_eq!(
            parse_duration("168h").unwrap(),
            Duration::from_secs(604_800)
        );
    }
}
