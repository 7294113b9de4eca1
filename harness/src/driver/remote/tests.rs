//! Shares, the merge of streamed seconds, and a lost host's accounting.

use super::*;
use crate::driver::errors::ErrorKind;
use crate::driver::record::{Live, Recorder};
use crate::driver::summary::decode_histogram;
use std::time::{Duration, Instant};

fn closed(users: u32, step_users: u32) -> Load {
    Load {
        profile: Profile::Closed {
            users,
            step_users,
            steps: 1,
            level: Duration::from_secs(5),
            think: Duration::ZERO,
            stay: Duration::ZERO,
            spread: Duration::ZERO,
        },
        timeout: Duration::from_secs(10),
        connection_close: false,
    }
}

#[test]
fn shares_add_up_to_the_whole_load() {
    let users = |l: &Load| match l.profile {
        Profile::Closed {
            users, step_users, ..
        } => (users, step_users),
        _ => unreachable!(),
    };
    let parts: Vec<_> = (0..3)
        .map(|i| users(&share(&closed(10, 5), i, 3)))
        .collect();
    assert_eq!(parts, [(4, 2), (3, 2), (3, 1)]);
    let open = Load {
        profile: Profile::Open {
            rate: 900.0,
            ramp_to: 1800.0,
            duration: Duration::from_secs(10),
            max_connections: 5,
        },
        ..closed(1, 0)
    };
    let (mut rate, mut ramp, mut conns) = (0.0, 0.0, 0);
    for i in 0..2 {
        if let Profile::Open {
            rate: r,
            ramp_to,
            max_connections,
            ..
        } = share(&open, i, 2).profile
        {
            rate += r;
            ramp += ramp_to;
            conns += max_connections;
        }
    }
    assert_eq!((rate, ramp, conns), (900.0, 1800.0, 5));
}

/// Records of two hosts, streamed as seconds (with a second handed out twice), add up to
/// exactly the histogram of all their records: percentiles of the whole load.
#[test]
fn streamed_seconds_merge_into_the_sum_of_both_hosts() {
    let start = Instant::now();
    let mut merged = Recorder::new(start);
    let mut whole = crate::driver::record::new_histogram();
    let mut expected_requests = 0;
    for host in 0..2u64 {
        let live = Live::mirrored(start);
        let mut own = Recorder::new(start);
        for k in 0..3000u64 {
            let at = start + Duration::from_millis(k);
            let lat = Duration::from_micros(100 + (k * 37 + host * 1_000) % 50_000);
            if k % 100 == 7 {
                own.error(at, ErrorKind::Timeout, lat, &live);
            } else {
                own.ok(at, lat, &live);
                whole.record(lat.as_micros() as u64).unwrap();
            }
            expected_requests += 1;
            if k == 1500 {
                for (i, iv) in live.take_seconds(1) {
                    let line = second_line(i, &iv).unwrap();
                    let back: Line =
                        serde_json::from_str(&serde_json::to_string(&line).unwrap()).unwrap();
                    let Line::Second {
                        i,
                        ok,
                        failed,
                        errors,
                    } = back
                    else {
                        panic!()
                    };
                    let iv = Interval {
                        hist: decode_histogram(&ok).unwrap(),
                        failed: decode_histogram(&failed).unwrap(),
                        errors,
                    };
                    merged.add_second(i, &iv);
                }
            }
        }
        // A request given up at the end lands in a second already handed out.
        own.error(start, ErrorKind::Unanswered, Duration::from_secs(1), &live);
        expected_requests += 1;
        for (i, iv) in live.take_seconds(usize::MAX) {
            merged.add_second(i, &iv);
        }
    }
    let (ok, errors) = merged.overall();
    assert_eq!(ok, whole, "merged answers are exactly both hosts' answers");
    assert_eq!(ok.value_at_quantile(0.99), whole.value_at_quantile(0.99));
    assert_eq!(errors.timeout, 60);
    assert_eq!(errors.unanswered, 2);
    let requests: u64 = merged.intervals.iter().map(Interval::requests).sum();
    assert_eq!(requests, expected_requests);
}

#[test]
fn a_saturated_load_host_is_named_with_its_busy_seconds() {
    let host = |name: &str, busy: &[f64]| HostShare {
        host: name.into(),
        cpu_busy_pct: busy.to_vec(),
        ..HostShare::default()
    };
    let w = saturation_warnings(&[
        host("lg1", &[50.0, 60.0, 55.0]),
        host("lg2", &[95.0, 40.0, 90.0]),
    ]);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("driver CPUs saturated on load host lg2: its busiest driver CPU was >= 90% busy in 2 of 3 seconds"),
        "{w:?}"
    );
}
