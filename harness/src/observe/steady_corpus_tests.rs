//! The steady-state rule judged as a test is: its error rates on the labelled corpus, per
//! kind of series, and the real windows that it must label right.

use super::steady_corpus::{Case, Truth, PER_KIND};
use super::steady_rates::{judge, outcomes, rates};
use super::window_judge::Step;

#[test]
fn the_rule_flags_moves_and_keeps_flat_windows_at_its_stated_rates() {
    let all = outcomes(PER_KIND);
    println!(
        "{:<72} {:>6} {:>6} {:>6} {:>6}",
        "kind", "kept", "moving", "short", "wrong"
    );
    for o in &all {
        println!(
            "{:<72} {:>6} {:>6} {:>6} {:>5.1}%",
            o.kind,
            o.steady,
            o.moving,
            o.too_short,
            o.wrong() * 100.0
        );
    }
    let r = rates(&all);
    println!(
        "false alarms {:.1}% (worst kind {:.1}%), misses {:.1}% (worst kind {:.1}%)",
        r.false_alarm * 100.0,
        r.worst_false_alarm * 100.0,
        r.miss * 100.0,
        r.worst_miss * 100.0
    );
    // The targets hold over the corpus. Flat kinds hold them one by one; a kind of move may
    // miss a little more (climbs at 12% noise: the window reaches its 5-minute cap there), and
    // no kind misses more than one in ten. docs/method.md shows both figures.
    assert!(r.false_alarm <= 0.05 && r.miss <= 0.05, "{r:?}");
    assert!(r.worst_false_alarm <= 0.05 && r.worst_miss <= 0.10, "{r:?}");
    // A window too short for its noise is never passed as steady.
    let short = all.iter().find(|o| o.kind.contains("8 s window")).unwrap();
    assert!(short.steady * 20 <= short.series, "{short:?}");
    assert!(short.too_short * 10 >= short.series * 9, "{short:?}");
    // CPU per answer climbing while what was served stays flat: the run is kept, its CPU per
    // request taken out of the verdicts in most series (a 10 s window holds ten CPU steps, so
    // not in all: the figure is reported, not asserted at the targets).
    let cpu = all
        .iter()
        .find(|o| o.kind.contains("CPU per answer climbing"))
        .unwrap();
    assert!(cpu.steady * 2 < cpu.series, "{cpu:?}");
    // Below the rule's reach a move is sometimes kept: the corpus shows how often.
    assert!(all
        .iter()
        .any(|o| !o.asserted && o.truth == Truth::Moves && o.steady > 0));
}

/// A window of answers a second, with latency and CPU unknown.
fn answered(answers: &[f64]) -> Case {
    Case {
        lead: Vec::new(),
        window: answers
            .iter()
            .map(|a| Step {
                answers: *a,
                mean_ms: f64::NAN,
                cpu_s: f64::NAN,
            })
            .collect(),
    }
}

#[test]
fn the_fresh_demos_windows_are_labelled_right() {
    // 2026-12-06, a fresh clone's demo: three /plaintext windows that moved by a third or more,
    // kept by the ordered-trend rule; two flat 100 ms windows it threw away on CPU alone.
    let moving: [&[f64]; 3] = [
        &[
            24587.0, 24718.0, 23674.0, 23295.0, 22556.0, 33696.0, 37511.0, 48322.0,
        ],
        &[
            24184.0, 28994.0, 32732.0, 39984.0, 43686.0, 41412.0, 41417.0, 39156.0,
        ],
        &[
            45792.0, 43676.0, 34129.0, 22547.0, 24422.0, 29089.0, 28539.0, 34115.0,
        ],
    ];
    for w in moving {
        let c = judge(&answered(w));
        assert!(!c.steady, "{w:?}: {c:?}");
    }
    let flat: [&[f64]; 2] = [
        &[
            2000.0, 2000.0, 1992.0, 1999.0, 1943.0, 1970.0, 2000.0, 2000.0, 1965.0, 1977.0,
        ],
        &[
            9910.0, 9799.0, 9846.0, 9716.0, 9758.0, 9863.0, 9796.0, 9742.0, 9521.0, 9872.0,
        ],
    ];
    for w in flat {
        let c = judge(&answered(w));
        assert!(c.steady, "{w:?}: {c:?}");
    }
}

#[test]
fn the_committed_demos_100_ms_windows_of_the_pool_are_kept() {
    // docs/results/demo-2026-11-25, Spring MVC on the 100 ms wait, runs 1-9: each window (10 s)
    // with its warm-up's last ten seconds, flat within a few per cent.
    let runs: [([f64; 10], [f64; 10]); 3] = [
        (
            [
                2000.0, 1960.0, 1983.0, 2057.0, 1867.0, 1998.0, 2000.0, 2000.0, 2000.0, 2000.0,
            ],
            [
                1987.0, 1981.0, 1983.0, 1943.0, 1978.0, 1969.0, 1994.0, 1996.0, 1951.0, 1973.0,
            ],
        ),
        (
            [
                1989.0, 1991.0, 1993.0, 1979.0, 1998.0, 1986.0, 2000.0, 2000.0, 2000.0, 2000.0,
            ],
            [
                1987.0, 1975.0, 1972.0, 1998.0, 1976.0, 1917.0, 1845.0, 1943.0, 1953.0, 1985.0,
            ],
        ),
        (
            [
                1959.0, 1982.0, 2036.0, 1945.0, 1976.0, 1974.0, 1990.0, 1975.0, 1967.0, 2000.0,
            ],
            [
                1966.0, 1998.0, 1976.0, 1985.0, 1989.0, 1960.0, 1964.0, 1969.0, 2000.0, 2000.0,
            ],
        ),
    ];
    for (lead, window) in runs {
        let mut case = answered(&window);
        case.lead = lead.to_vec();
        let c = judge(&case);
        assert!(c.steady, "{window:?}: {c:?}");
    }
}
