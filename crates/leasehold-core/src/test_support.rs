//! Builders the unit tests share: the run identities, queue entries and raw inputs that several
//! modules' tests make alike. Test code only.

use crate::input::RawInputs;
use crate::wire::{QueueEntry, RunIdentity};

/// Run 1 (attempt 1) of the job `j` of `o/r`, on the runner `runner_name` (empty: none
/// recorded); no URL, no job id.
pub(crate) fn run_identity(runner_name: &str) -> RunIdentity {
    RunIdentity {
        repository: "o/r".into(),
        run_id: 1,
        run_attempt: 1,
        job: "j".into(),
        runner_name: runner_name.into(),
        url: String::new(),
        job_id: None,
    }
}

/// The waiter `holder_id` of `run` with `nonce`: a 60 s lease, enqueued and last seen at 0, no
/// pool request.
pub(crate) fn queue_entry(holder_id: &str, nonce: &str, run: RunIdentity) -> QueueEntry {
    QueueEntry {
        holder_id: holder_id.into(),
        nonce: nonce.into(),
        run,
        lease_ms: 60_000,
        enqueued_at: 0,
        last_seen_at: 0,
        pool: None,
    }
}

/// Raw inputs of `base`, then of `extra`: an `extra` name replaces the same name in `base`.
pub(crate) fn raw_inputs(base: &[(&str, &str)], extra: &[(&str, &str)]) -> RawInputs {
    let mut m: RawInputs = base
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in extra {
        m.insert(k.to_string(), v.to_string());
    }
    m
}
