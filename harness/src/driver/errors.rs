//! How a request failed (`ErrorKind`), and a run's failures counted by kind (`Errors`): every
//! request due ends as ok, drained, one of these, or cut by the run's stop.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How one request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The connection could not be opened.
    Connect,
    /// No complete response within the request timeout.
    Timeout,
    /// A response arrived with a status outside 2xx.
    Status(u16),
    /// The connection broke or the response was malformed.
    Io,
    /// Still queued or in flight when the run's drain window closed: given up, never answered.
    Unanswered,
    /// Still queued or in flight when the run was stopped (Ctrl-C, a capacity probe given
    /// up): cut before it had its time, so neither an error of the server nor a latency.
    Cut,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Errors {
    pub connect: u64,
    pub timeout: u64,
    pub status: u64,
    pub io: u64,
    /// Requests due that were still queued or in flight when the drain window closed.
    #[serde(default)]
    pub unanswered: u64,
    /// Requests due that the run's stop cut before they had their time: counted apart, not in
    /// `total()`, so that ok + drained + errors + cut = due.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut: u64,
    /// Non-2xx responses by status code.
    pub by_status: BTreeMap<u16, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Errors {
    pub fn total(&self) -> u64 {
        self.connect + self.timeout + self.status + self.io + self.unanswered
    }

    pub fn add(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Connect => self.connect += 1,
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Io => self.io += 1,
            ErrorKind::Unanswered => self.unanswered += 1,
            ErrorKind::Cut => self.cut += 1,
            ErrorKind::Status(code) => {
                self.status += 1;
                *self.by_status.entry(code).or_default() += 1;
            }
        }
    }

    pub fn merge(&mut self, o: &Errors) {
        self.connect += o.connect;
        self.timeout += o.timeout;
        self.status += o.status;
        self.io += o.io;
        self.unanswered += o.unanswered;
        self.cut += o.cut;
        for (k, v) in &o.by_status {
            *self.by_status.entry(*k).or_default() += v;
        }
    }
}
