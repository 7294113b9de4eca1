//! What a contender's start cost, as a run records it: from its exec to its port accepting,
//! its first 200, the contract checked and steady state (timed by observe/cold_start.rs).

use serde::{Deserialize, Serialize};

/// The start before the first run measured after it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ColdStart {
    /// Seconds from exec to its port accepting a TCP connection.
    pub port_s: f64,
    /// Seconds from exec to its ready path answering 200.
    pub first_200_s: f64,
    /// Seconds from exec to the contract checked (absent where it was not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_s: Option<f64>,
    /// Seconds from exec to steady state: the end of the first warm-up, when it settled
    /// (absent when it did not, or the run had no warm-up that judges settling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_s: Option<f64>,
}
