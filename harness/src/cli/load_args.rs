//! The flags that describe a load, shared by `run` and `load`: the closed model's users and
//! steps, the open model's rate, the measured phase's length, timeouts, and where to send it.

use super::service_args::duration_arg;
use clap::Args;

/// Load shape flags shared by `run` and `load`.
#[derive(Args, Clone, Default)]
pub struct LoadArgs {
    /// Drive this URL (loopback only unless --allow-remote)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Closed model: concurrent users (each with its own keep-alive connection)
    #[arg(allow_negative_numbers = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000), conflicts_with = "rate")]
    pub users: Option<u32>,
    /// Closed model: users added at each step (Gatling's incrementConcurrentUsers)
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "N",
        requires = "steps",
        conflicts_with = "rate"
    )]
    pub step_users: Option<u32>,
    /// Closed model: number of steps after the first level
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "N",
        requires = "step_duration",
        conflicts_with = "rate"
    )]
    pub steps: Option<u32>,
    /// Closed model: how long each level lasts; the run lasts (steps + 1) x this
    #[arg(long, value_name = "D", value_parser = duration_arg, conflicts_with = "duration")]
    pub step_duration: Option<String>,
    /// Closed model with steps: each user leaves this long after joining, so waves of users
    /// overlap instead of piling up; the run lasts steps x step_duration + this
    #[arg(long, value_name = "D", value_parser = duration_arg, requires = "steps")]
    pub stay: Option<String>,
    /// Closed model: each level's users join evenly over this span instead of all at once, so
    /// that a fixed wait does not keep them in step (at most --step-duration)
    #[arg(long, value_name = "D", value_parser = duration_arg, conflicts_with = "rate")]
    pub spread: Option<String>,
    /// Closed model: pause between a user's response and its next request
    #[arg(long, value_name = "D", value_parser = duration_arg, conflicts_with = "rate")]
    pub think_time: Option<String>,
    /// Open model: arrivals per second; latency counts from each intended send time
    #[arg(allow_negative_numbers = true, long, value_name = "R", value_parser = rate_arg)]
    pub rate: Option<f64>,
    /// Open model: ramp the arrival rate linearly from --rate to this over --duration
    #[arg(allow_negative_numbers = true, long, value_name = "R", value_parser = rate_arg, requires = "rate")]
    pub ramp_to: Option<f64>,
    /// Open model: most connections the driver opens (requests beyond wait, and the wait counts)
    #[arg(allow_negative_numbers = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000), requires = "rate")]
    pub max_connections: Option<u32>,
    /// Length of the measured phase (closed model without steps, or open model)
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    pub duration: Option<String>,
    /// Request timeout; a request without a full response by then counts as a timeout error
    /// (default 10s)
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    pub timeout: Option<String>,
    /// Send `Connection: close` and open a new connection for every request
    #[arg(long)]
    pub connection_close: bool,
    /// Allow a --url that is not on this machine. A load tool pointed at someone else's
    /// server is an attack: only use it against servers you are responsible for.
    #[arg(long)]
    pub allow_remote: bool,
}

/// `--rate` and `--ramp-to`: arrivals per second within the range a plan allows.
pub(super) fn rate_arg(s: &str) -> std::result::Result<f64, String> {
    let max = crate::plan::MAX_RATE;
    let rate = s.parse::<f64>().ok().filter(|r| *r > 0.0 && *r <= max);
    rate.ok_or_else(|| format!("{s:?} is not a rate in requests per second, 0 < R <= {max}"))
}
