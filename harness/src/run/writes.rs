//! The write check of a mix that writes: every create, update and delete the contender
//! acknowledged is looked up in PostgreSQL after the run.

use crate::driver::Target;
use crate::services::database::Database;
use crate::services::write_check::{judge_writes, Ack, WriteCheck};
use anyhow::Result;

/// Looks up every acknowledged write of a run in the database.
pub(super) fn check_writes(
    rt: &tokio::runtime::Runtime,
    db: &Database,
    target: &Target,
    acks: &[(u32, u64)],
) -> Result<WriteCheck> {
    let acks: Vec<Ack> = acks
        .iter()
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
