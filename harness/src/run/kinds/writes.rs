//! What a mix did, and the write check of a mix that writes: every create, update and delete
//! the contender acknowledged (to this machine's driver, or to a load host's) is looked up in
//! PostgreSQL after the run.

use crate::driver::{self, Target};
use crate::results::details::{Detail, EntryResult};
use crate::results::record::Run;
use crate::run::context::RunCtx;
use crate::services::database::Database;
use crate::services::write_check::{judge_writes, Ack, WriteCheck};
use anyhow::Result;

impl RunCtx<'_> {
    /// A mix's requests per entry, and for a mix that writes, the check that every
    /// acknowledged write is in the database (a lost one fails the run).
    pub(in crate::run) fn mix_and_writes(
        &self,
        r: &mut Run,
        outcome: &driver::Outcome,
        target: &Target,
    ) {
        if !target.entries.is_empty() {
            r.details.set(Detail::Mix(
                target
                    .entries
                    .iter()
                    .zip(&outcome.entries)
                    .map(|(e, c)| EntryResult {
                        method: e.method.clone(),
                        path: e.path.clone(),
                        weight: e.weight,
                        sent: c.sent,
                        ok: c.ok,
                    })
                    .collect(),
            ));
        }
        if let (Some(db), true) = (
            self.services.and_then(|sv| sv.database.as_ref()),
            target.entries.iter().any(|e| e.is_write()),
        ) {
            // With load hosts, each sent its writes under a tag of its own and sent back which
            // were answered.
            let shares = self.host_shares.borrow();
            let sources: Vec<(Target, &[(u32, u64)])> = if self.fleet.is_some() {
                shares
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let tag = crate::driver::remote::host_tag(&target.tag, i);
                        (
                            Target {
                                tag,
                                ..target.clone()
                            },
                            &h.acks[..],
                        )
                    })
                    .collect()
            } else {
                vec![(target.clone(), &outcome.acks[..])]
            };
            match check_writes(self.rt, db, target, &sources) {
                Ok(w) => {
                    if w.lost > 0 {
                        r.failure = Some(format!(
                            "{} acknowledged writes are not in the database, e.g. {}",
                            w.lost,
                            w.lost_examples.join("; ")
                        ));
                    }
                    r.details.set(Detail::Writes(w));
                }
                Err(e) => r
                    .driver
                    .warnings
                    .push(format!("the write check could not run: {e:#}")),
            }
        }
    }
}

/// Looks up every acknowledged write of a run in the database: `sources` are the targets the
/// writes were sent with (one here, or one per load host, each with its own tag, all under
/// `target`'s) and their acknowledgements.
pub(in crate::run) fn check_writes(
    rt: &tokio::runtime::Runtime,
    db: &Database,
    target: &Target,
    sources: &[(Target, &[(u32, u64)])],
) -> Result<WriteCheck> {
    let acks: Vec<Ack> = sources
        .iter()
        .flat_map(|(t, acks)| acks_of(t, acks))
        .collect();
    let ids: Vec<i64> = acks
        .iter()
        .filter_map(|a| a.id)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let tagged = db.texts_with_prefix(rt, &target.tag)?;
    let rows = db.texts_of(rt, &ids)?;
    Ok(judge_writes(&acks, &target.tag, &tagged, &rows))
}

/// The writes `acks` names, as sent with `target`.
fn acks_of(target: &Target, acks: &[(u32, u64)]) -> Vec<Ack> {
    acks.iter()
        .map(|&(i, token)| {
            let entry = &target.entries[target.slots[i as usize].entry as usize];
            let id = target
                .path_of(i as usize)
                .rsplit('/')
                .next()
                .and_then(|x| x.parse::<i64>().ok());
            Ack {
                method: entry.method.clone(),
                id: id.filter(|_| entry.method != "POST"),
                token: (token > 0).then(|| target.token(token)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::remote::host_tag;
    use crate::plan::MixEntry;

    /// Two load hosts send the same cycle of requests: their acknowledgements name the same
    /// rows for an update, and each host's own text for a create, under its own tag (so that
    /// one host's row never answers for another's lost write), every one under the run's tag.
    #[test]
    fn each_load_hosts_acknowledgements_name_its_own_writes() {
        let entries = [
            MixEntry {
                weight: 1,
                method: "POST".into(),
                path: "/messages".into(),
                body: Some(r#"{"text":"{write}"}"#.into()),
            },
            MixEntry {
                weight: 1,
                method: "PUT".into(),
                path: "/messages/{seq:1..10}".into(),
                body: Some(r#"{"text":"{write}"}"#.into()),
            },
        ];
        let addr = "127.0.0.1:9".parse().unwrap();
        let run = Target::mix(addr, &entries, false, "iobound r1s0m ");
        let post = run.slots.iter().position(|s| s.entry == 0).unwrap() as u32;
        let put = run.slots.iter().position(|s| s.entry == 1).unwrap() as u32;
        let host = |i| Target {
            tag: host_tag(&run.tag, i),
            ..run.clone()
        };
        let (a, b) = (host(0), host(1));
        let acks_a = acks_of(&a, &[(post, 7), (put, 8)]);
        let acks_b = acks_of(&b, &[(post, 7), (put, 8)]);
        assert_eq!(acks_a[0].method, "POST");
        assert_eq!(acks_a[0].id, None);
        let (ta, tb) = (
            acks_a[0].token.clone().unwrap(),
            acks_b[0].token.clone().unwrap(),
        );
        assert_ne!(
            ta, tb,
            "the same counter on two hosts is two different texts"
        );
        assert!(ta.starts_with("iobound r1s0m h0 ") && tb.starts_with("iobound r1s0m h1 "));
        assert_eq!(
            acks_a[1].id, acks_b[1].id,
            "the same cycle updates the same rows"
        );
        assert!(acks_a[1].id.is_some());
    }
}
