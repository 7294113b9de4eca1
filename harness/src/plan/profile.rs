//! A load profile's arithmetic: how long its measured phase lasts, its level at a moment of the
//! run, and its description in words.

use super::Profile;
use std::time::Duration;

impl Profile {
    /// Length of the measured phase.
    pub fn duration(&self) -> Duration {
        match self {
            Profile::Closed {
                steps, level, stay, ..
            } if !stay.is_zero() => *level * *steps + *stay,
            Profile::Closed { steps, level, .. } => *level * (steps + 1),
            Profile::Open { duration, .. } => *duration,
        }
    }

    /// Users (closed) or arrival rate per second (open) at time `t` into the run.
    pub fn target_at(&self, t: Duration) -> f64 {
        match self {
            Profile::Closed {
                users,
                step_users,
                steps,
                level,
                stay,
                ..
            } => {
                if stay.is_zero() {
                    let k = ((t.as_secs_f64() / level.as_secs_f64()) as u32).min(*steps);
                    return f64::from(users + k * step_users);
                }
                // The waves still in: the first joined at 0, wave k at k levels.
                let present = |joined: Duration| joined <= t && t < joined + *stay;
                let first = if present(Duration::ZERO) { *users } else { 0 };
                let later = (1..=*steps).filter(|k| present(*level * *k)).count() as u32;
                f64::from(first + later * step_users)
            }
            Profile::Open {
                rate,
                ramp_to,
                duration,
                ..
            } => {
                let f = (t.as_secs_f64() / duration.as_secs_f64()).min(1.0);
                rate + (ramp_to - rate) * f
            }
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Profile::Closed {
                users,
                step_users,
                steps,
                level,
                think,
                stay,
                spread,
            } => {
                let mut s = if !stay.is_zero() {
                    format!(
                        "closed, {users} users, then {step_users} more every {}s ({steps} times), each staying {}s",
                        level.as_secs_f64(),
                        stay.as_secs_f64()
                    )
                } else if *steps == 0 {
                    format!("closed, {users} users for {}s", level.as_secs_f64())
                } else {
                    format!(
                        "closed, {users} -> {} users (+{step_users} every {}s)",
                        users + step_users * steps,
                        level.as_secs_f64()
                    )
                };
                if !spread.is_zero() {
                    s.push_str(&format!(", joining over {}s", spread.as_secs_f64()));
                }
                if !think.is_zero() {
                    s.push_str(&format!(", think {}ms", think.as_millis()));
                }
                s
            }
            Profile::Open {
                rate,
                ramp_to,
                duration,
                ..
            } => {
                if rate == ramp_to {
                    format!("open, {rate} req/s for {}s", duration.as_secs_f64())
                } else {
                    format!(
                        "open, {rate} -> {ramp_to} req/s over {}s",
                        duration.as_secs_f64()
                    )
                }
            }
        }
    }
}
