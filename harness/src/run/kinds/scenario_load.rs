//! The load a scenario offers: what its warm-up offers (its starting level only), and the
//! requests it sends (one path, or a mix).

use crate::driver::Target;
use crate::plan::{Load, Profile, Scenario};
use std::net::SocketAddr;
use std::time::Duration;

/// Warm-up offers the scenario's starting load (first level, or the starting rate): more
/// would leave a queue behind in a saturated server that the measured run would inherit.
pub(in crate::run) fn warmup_load(load: &Load, length: Duration) -> Load {
    let profile = match load.profile {
        Profile::Closed {
            users,
            step_users,
            think,
            spread,
            ..
        } => {
            let first = if users > 0 { users } else { step_users.max(1) };
            Profile::Closed {
                users: first,
                step_users: 0,
                steps: 0,
                level: length,
                think,
                stay: Duration::ZERO,
                spread,
            }
        }
        Profile::Open {
            rate,
            max_connections,
            ..
        } => Profile::Open {
            rate,
            ramp_to: rate,
            duration: length,
            max_connections,
        },
    };
    Load {
        profile,
        ..load.clone()
    }
}

/// The scenario's requests; a mix's write tokens start with `tag`.
pub(in crate::run) fn scenario_target(
    addr: SocketAddr,
    s: &Scenario,
    close: bool,
    tag: &str,
) -> Target {
    if s.mix.is_empty() {
        Target::new(addr, &s.path, close)
    } else {
        Target::mix(addr, &s.mix, close, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_offers_the_first_level_only() {
        let load = Load {
            profile: Profile::Closed {
                users: 250,
                step_users: 2250,
                steps: 1,
                level: Duration::from_secs(12),
                think: Duration::ZERO,
                stay: Duration::ZERO,
                spread: Duration::ZERO,
            },
            timeout: Duration::from_secs(20),
            connection_close: false,
        };
        let w = warmup_load(&load, Duration::from_secs(2));
        assert_eq!(
            w.profile,
            Profile::Closed {
                users: 250,
                step_users: 0,
                steps: 0,
                level: Duration::from_secs(2),
                think: Duration::ZERO,
                stay: Duration::ZERO,
                spread: Duration::ZERO,
            }
        );
        let ramp = Load {
            profile: Profile::Open {
                rate: 10.0,
                ramp_to: 300.0,
                duration: Duration::from_secs(60),
                max_connections: 100,
            },
            ..load
        };
        assert_eq!(
            warmup_load(&ramp, Duration::from_secs(5)).profile,
            Profile::Open {
                rate: 10.0,
                ramp_to: 10.0,
                duration: Duration::from_secs(5),
                max_connections: 100
            }
        );
    }
}
