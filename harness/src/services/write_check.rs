//! The check after a run that writes: every write a contender acknowledged must be in the
//! database (run/kinds/writes.rs reads the rows; this judges them).

use std::collections::{BTreeMap, BTreeSet};

/// What the check after a run found: every write the server acknowledged must be in the
/// database.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WriteCheck {
    pub creates_acknowledged: u64,
    pub creates_found: u64,
    /// Created rows of this run that no response acknowledged (the request timed out or its
    /// answer was lost): committed, but the client could not know.
    pub creates_unacknowledged: u64,
    pub updates_acknowledged: u64,
    /// Rows with at least one acknowledged update.
    pub updated_rows: u64,
    pub deletes_acknowledged: u64,
    /// Acknowledged writes not in the database: must be 0.
    pub lost: u64,
    /// The first few lost writes, for the report.
    pub lost_examples: Vec<String>,
}

/// One acknowledged write: the request's method, the row id in its path (PUT/DELETE) and the
/// unique token in its body (POST/PUT).
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    pub method: String,
    pub id: Option<i64>,
    pub token: Option<String>,
}

/// Judges acknowledged writes against the rows found: `tagged` are the texts starting with the
/// run's tag prefix, `rows` the current text of every id an acknowledged PUT or DELETE named.
pub fn judge_writes(
    acks: &[Ack],
    tag_prefix: &str,
    tagged: &[String],
    rows: &BTreeMap<i64, String>,
) -> WriteCheck {
    let mut w = WriteCheck::default();
    let present: BTreeSet<&str> = tagged.iter().map(String::as_str).collect();
    let mut acked_creates = BTreeSet::new();
    let lose = |w: &mut WriteCheck, what: String| {
        w.lost += 1;
        if w.lost_examples.len() < 5 {
            w.lost_examples.push(what);
        }
    };
    let mut updated = BTreeSet::new();
    let mut deleted = BTreeSet::new();
    for a in acks {
        match (a.method.as_str(), a.id, &a.token) {
            ("POST", _, Some(t)) => {
                w.creates_acknowledged += 1;
                acked_creates.insert(t.as_str());
                if present.contains(t.as_str()) {
                    w.creates_found += 1;
                } else {
                    lose(&mut w, format!("created {t:?} is missing"));
                }
            }
            ("PUT", Some(id), Some(_)) => {
                w.updates_acknowledged += 1;
                updated.insert(id);
            }
            ("DELETE", Some(id), _) => {
                w.deletes_acknowledged += 1;
                deleted.insert(id);
            }
            _ => {}
        }
    }
    w.updated_rows = updated.len() as u64;
    for id in &updated {
        if deleted.contains(id) {
            continue;
        }
        // Concurrent updates of one row commit in either order; any of this run's updates
        // may be the last, but the row must hold one of them.
        match rows.get(id) {
            Some(text) if text.starts_with(tag_prefix) => {}
            Some(text) => lose(
                &mut w,
                format!("row {id} still reads {text:?} after an acknowledged update"),
            ),
            None => lose(
                &mut w,
                format!("row {id} is gone after an acknowledged update"),
            ),
        }
    }
    for id in &deleted {
        if rows.contains_key(id) {
            lose(
                &mut w,
                format!("row {id} is still there after an acknowledged delete"),
            );
        }
    }
    // Rows holding a token no create acknowledged: creates that committed without an answer
    // (or unacknowledged updates, which cannot be told apart by text alone; counted here too).
    let acked_updates: BTreeSet<&str> = acks
        .iter()
        .filter(|a| a.method == "PUT")
        .filter_map(|a| a.token.as_deref())
        .collect();
    w.creates_unacknowledged = present
        .iter()
        .filter(|t| !acked_creates.contains(**t) && !acked_updates.contains(**t))
        .count() as u64;
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(method: &str, id: Option<i64>, token: Option<&str>) -> Ack {
        Ack {
            method: method.into(),
            id,
            token: token.map(String::from),
        }
    }

    #[test]
    fn a_missing_acknowledged_write_is_counted_as_lost() {
        let p = "iobound r1s0m ";
        let acks = vec![
            ack("POST", None, Some("iobound r1s0m 000000000001")),
            ack("POST", None, Some("iobound r1s0m 000000000002")),
            ack("PUT", Some(7), Some("iobound r1s0m 000000000003")),
            ack("PUT", Some(8), Some("iobound r1s0m 000000000004")),
            ack("DELETE", Some(9), None),
            ack("DELETE", Some(10), None),
        ];
        // Token 2 was acknowledged but is missing; 5 was committed without an answer.
        let tagged = vec![
            "iobound r1s0m 000000000001".to_string(),
            "iobound r1s0m 000000000003".into(),
            "iobound r1s0m 000000000005".into(),
        ];
        let rows: BTreeMap<i64, String> = [
            (7, "iobound r1s0m 000000000003".to_string()),
            (8, "seed message 8".into()),
            (10, "seed message 10".into()),
        ]
        .into();
        let w = judge_writes(&acks, p, &tagged, &rows);
        assert_eq!(
            (
                w.creates_acknowledged,
                w.creates_found,
                w.creates_unacknowledged
            ),
            (2, 1, 1)
        );
        assert_eq!(
            (
                w.updates_acknowledged,
                w.updated_rows,
                w.deletes_acknowledged
            ),
            (2, 2, 2)
        );
        assert_eq!(w.lost, 3, "{:?}", w.lost_examples);
        assert!(w.lost_examples.iter().any(|e| e.contains("000000000002")));
        assert!(w
            .lost_examples
            .iter()
            .any(|e| e.contains("row 8 still reads")));
        assert!(w
            .lost_examples
            .iter()
            .any(|e| e.contains("row 10 is still there")));
        let all_there = judge_writes(&acks[..1], p, &tagged[..1], &BTreeMap::new());
        assert_eq!(all_there.lost, 0);
    }
}
