//! The planted bugs the recall test must catch. Core-side ones live in
//! `leasehold-core/src/planted.rs` behind its `planted-bugs` feature and are switched on per
//! thread; driver-side ones live in this crate's simulated client (`src/client/`).

/// A deliberate defect, switched on for one simulation run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlantedBug {
    /// core (`engine/failure.rs`, `on_failure`): a compare-and-swap conflict ends the operation
    /// instead of re-reading.
    ConflictIsFailure,
    /// driver (this crate, `client/driver.rs`, `deliver`): a write whose outcome is unknown (5xx,
    /// reset, timeout) is sent again as is, and the core is told only the second answer.
    ResendUnknownWrite,
    /// core (`admission/fifo.rs`, `Fifo::admit`): admission reuses the current fence instead of
    /// incrementing it.
    SkipFenceIncrement,
    /// core (`admission/fifo.rs`, `Fifo::admit`): admission takes the back of the queue.
    AdmitFromBack,
    /// core (`ops/release.rs`, `ReleasePlanner::plan`): release removes the holder id's entry
    /// even when a newer run attempt owns it.
    ReleaseIgnoresAttempt,
    /// core (`engine/reply.rs`, `on_reply`): a read older than a version already seen is acted
    /// on.
    AcceptStaleRead,
    /// core (`ops/reap.rs`, `ReapPlanner::on_probe`): an Actions API question the reaper could
    /// not get answered (refused, not found, unavailable) is taken as proof that the run attempt
    /// (job) is over.
    ReapUnknownAsOver,
    /// core (`ops/claims/mod.rs`, `takeable`): a claim takes over a held claim whatever its
    /// expiry (a takeover too early).
    ClaimTakeoverEarly,
    /// core (`engine/reply.rs`, the ref commit; `store/refs.rs`, `update_refs_call`): a ref
    /// document's new commit gets no parent, and the update is forced past the fast-forward
    /// check.
    RefCommitWithoutParent,
    /// driver (`claims/mod.rs`, the answer to an `updateRefs`): an `updateRefs` whose answer was
    /// unknown is sent again as is, and the core is told only the second answer.
    ResendUnknownRefUpdate,
    /// driver (`claims/mod.rs`, `send`): a family's `updateRefs` is sent as one call per ref,
    /// the core told the last call's answer.
    FamilySplit,
    /// driver (`claims/guard.rs`, `signal_work`): the claim guard's stop (SIGTERM, SIGKILL) never
    /// reaches the work's process group.
    ClaimGuardIgnoresStop,
    /// core (`ops/claims/mod.rs`, `claim_lease_view`): a claim holder's local deadline is the
    /// instant its claim becomes takeable, not before its expiry.
    ClaimDeadlineAtTakeable,
    /// core (`admission/pool.rs`, `Pool::judge`): a resource's holdings are counted one short.
    PoolCapIgnored,
    /// core (`admission/pool.rs`, `Pool::judge`): held partitions are not checked.
    PoolPartitionIgnored,
    /// core (`admission/pool.rs`, `Pool::judge`): a consumer's holdings are counted one short.
    PoolConsumerOffByOne,
    /// core (`admission/pool.rs`, `Pool::admit`): the scan stops at the first blocked waiter.
    PoolStopsAtBlocked,
    /// core (`admission/pool.rs`, `reseat` and `Scan::new`): a rerun that takes over its earlier
    /// attempt's holding from another runner keeps the earlier runner's atom, and one slot a
    /// runner is judged by the seats' atoms only.
    PoolRerunKeepsRunner,
    /// core (`admission/choice.rs`, `rank`): the eligible resources are taken in config order.
    PoolChoiceConfigOrder,
    /// core (`admission/choice.rs`, `rank`): the room below pace is computed without the
    /// elapsed fraction of the window (`target − used`).
    PoolChoiceRoomNoElapsed,
    /// core (`policy/handoff.rs`, `next_poll`): a waiter polls again 50 ms after every poll.
    PollHotLoop,
    /// core (`admission/lifecycle.rs`, `admit`): reservations are not counted against the
    /// capacity.
    ReservationsUncounted,
    /// core (`admission/lifecycle.rs`, `admit`): waiters are admitted while the incident stands.
    AdmitDuringIncident,
    /// core (`admission/lifecycle.rs`, `reclaim`): a quarantine is reclaimed by the first waiter
    /// on any runner.
    ReclaimAnyRunner,
    /// core (`admission/lifecycle.rs`, `sweep`): every cooldown is freed, ended or not.
    CooldownIgnoresEnd,
    /// core (`ops/recover.rs`, `quarantine`): an operator's recovery frees the quarantine
    /// outright instead of turning it into a cooldown.
    RecoverFreesQuarantine,
    /// core (`ops/recover.rs`, `start`): recover-incident ends the incident without
    /// `confirmed: true`.
    RecoverIncidentUnconfirmed,
    /// core (`engine/failure.rs`, the state branch's ref refused): a job whose ref carrying the
    /// state was refused (another job created the branch first) takes its state as written.
    RefusedBranchIsWritten,
    /// core (`engine/mod.rs`, `cancelledReply`): an answer that comes with the job's cancel is
    /// heard as a plain answer.
    CancelledReplyIgnored,
    /// core (`ops/release.rs`, `ReleasePlanner::plan`): a release that removes its holding
    /// admits nobody in its write.
    ReleaseKeepsSlot,
}

impl PlantedBug {
    pub const ALL: [PlantedBug; 30] = [
        PlantedBug::ConflictIsFailure,
        PlantedBug::ResendUnknownWrite,
        PlantedBug::SkipFenceIncrement,
        PlantedBug::AdmitFromBack,
        PlantedBug::ReleaseIgnoresAttempt,
        PlantedBug::AcceptStaleRead,
        PlantedBug::ReapUnknownAsOver,
        PlantedBug::ClaimTakeoverEarly,
        PlantedBug::RefCommitWithoutParent,
        PlantedBug::ResendUnknownRefUpdate,
        PlantedBug::FamilySplit,
        PlantedBug::ClaimGuardIgnoresStop,
        PlantedBug::ClaimDeadlineAtTakeable,
        PlantedBug::PoolCapIgnored,
        PlantedBug::PoolPartitionIgnored,
        PlantedBug::PoolConsumerOffByOne,
        PlantedBug::PoolStopsAtBlocked,
        PlantedBug::PoolRerunKeepsRunner,
        PlantedBug::PoolChoiceConfigOrder,
        PlantedBug::PoolChoiceRoomNoElapsed,
        PlantedBug::PollHotLoop,
        PlantedBug::ReservationsUncounted,
        PlantedBug::AdmitDuringIncident,
        PlantedBug::ReclaimAnyRunner,
        PlantedBug::CooldownIgnoresEnd,
        PlantedBug::RecoverFreesQuarantine,
        PlantedBug::RecoverIncidentUnconfirmed,
        PlantedBug::RefusedBranchIsWritten,
        PlantedBug::CancelledReplyIgnored,
        PlantedBug::ReleaseKeepsSlot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PlantedBug::ConflictIsFailure => "conflict-is-failure",
            PlantedBug::ResendUnknownWrite => "resend-unknown-write",
            PlantedBug::SkipFenceIncrement => "skip-fence-increment",
            PlantedBug::AdmitFromBack => "admit-from-back",
            PlantedBug::ReleaseIgnoresAttempt => "release-ignores-attempt",
            PlantedBug::AcceptStaleRead => "accept-stale-read",
            PlantedBug::ReapUnknownAsOver => "reap-unknown-as-over",
            PlantedBug::ClaimTakeoverEarly => "claim-takeover-early",
            PlantedBug::RefCommitWithoutParent => "ref-commit-without-parent",
            PlantedBug::ResendUnknownRefUpdate => "resend-unknown-ref-update",
            PlantedBug::FamilySplit => "family-split",
            PlantedBug::ClaimGuardIgnoresStop => "claim-guard-ignores-stop",
            PlantedBug::ClaimDeadlineAtTakeable => "claim-deadline-at-takeable",
            PlantedBug::PoolCapIgnored => "pool-cap-ignored",
            PlantedBug::PoolPartitionIgnored => "pool-partition-ignored",
            PlantedBug::PoolConsumerOffByOne => "pool-consumer-off-by-one",
            PlantedBug::PoolStopsAtBlocked => "pool-stops-at-blocked",
            PlantedBug::PoolRerunKeepsRunner => "pool-rerun-keeps-runner",
            PlantedBug::PoolChoiceConfigOrder => "pool-choice-config-order",
            PlantedBug::PoolChoiceRoomNoElapsed => "pool-choice-room-no-elapsed",
            PlantedBug::PollHotLoop => "poll-hot-loop",
            PlantedBug::ReservationsUncounted => "reservations-uncounted",
            PlantedBug::AdmitDuringIncident => "admit-during-incident",
            PlantedBug::ReclaimAnyRunner => "reclaim-any-runner",
            PlantedBug::CooldownIgnoresEnd => "cooldown-ignores-end",
            PlantedBug::RecoverFreesQuarantine => "recover-frees-quarantine",
            PlantedBug::RecoverIncidentUnconfirmed => "recover-incident-unconfirmed",
            PlantedBug::RefusedBranchIsWritten => "refused-branch-is-written",
            PlantedBug::CancelledReplyIgnored => "cancelled-reply-ignored",
            PlantedBug::ReleaseKeepsSlot => "release-keeps-slot",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        PlantedBug::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Where the defect is planted.
    pub fn site(self) -> &'static str {
        match self {
            PlantedBug::ConflictIsFailure => "core: engine/failure.rs, conflict arm",
            PlantedBug::ResendUnknownWrite => "driver: sim client/driver.rs, deliver",
            PlantedBug::SkipFenceIncrement => "core: admission/fifo.rs, admit",
            PlantedBug::AdmitFromBack => "core: admission/fifo.rs, admit",
            PlantedBug::ReleaseIgnoresAttempt => "core: ops/release.rs, plan",
            PlantedBug::AcceptStaleRead => "core: engine/reply.rs, revision check",
            PlantedBug::ReapUnknownAsOver => "core: ops/reap.rs, on_probe",
            PlantedBug::ClaimTakeoverEarly => "core: ops/claims/mod.rs, takeable",
            PlantedBug::RefCommitWithoutParent => {
                "core: engine/reply.rs, ref commit; store/refs.rs, update_refs_call"
            }
            PlantedBug::ResendUnknownRefUpdate => "driver: sim claims/mod.rs, answer",
            PlantedBug::FamilySplit => "driver: sim claims/mod.rs, send",
            PlantedBug::ClaimGuardIgnoresStop => "driver: sim claims/guard.rs, signal_work",
            PlantedBug::ClaimDeadlineAtTakeable => "core: ops/claims/mod.rs, claim_lease_view",
            PlantedBug::PoolCapIgnored
            | PlantedBug::PoolPartitionIgnored
            | PlantedBug::PoolConsumerOffByOne => "core: admission/pool.rs, judge",
            PlantedBug::PoolStopsAtBlocked => "core: admission/pool.rs, admit",
            PlantedBug::PoolRerunKeepsRunner => "core: admission/pool.rs, reseat and scan",
            PlantedBug::PoolChoiceConfigOrder | PlantedBug::PoolChoiceRoomNoElapsed => {
                "core: admission/choice.rs, rank"
            }
            PlantedBug::PollHotLoop => "core: policy/handoff.rs, next_poll",
            PlantedBug::ReservationsUncounted | PlantedBug::AdmitDuringIncident => {
                "core: admission/lifecycle.rs, admit"
            }
            PlantedBug::ReclaimAnyRunner => "core: admission/lifecycle.rs, reclaim",
            PlantedBug::CooldownIgnoresEnd => "core: admission/lifecycle.rs, sweep",
            PlantedBug::RecoverFreesQuarantine => "core: ops/recover.rs, quarantine",
            PlantedBug::RecoverIncidentUnconfirmed => "core: ops/recover.rs, start",
            PlantedBug::RefusedBranchIsWritten => "core: engine/failure.rs, branch refused",
            PlantedBug::CancelledReplyIgnored => "core: engine/mod.rs, cancelledReply",
            PlantedBug::ReleaseKeepsSlot => "core: ops/release.rs, plan",
        }
    }

    pub fn in_core(self) -> bool {
        !matches!(
            self,
            PlantedBug::ResendUnknownWrite
                | PlantedBug::ResendUnknownRefUpdate
                | PlantedBug::FamilySplit
                | PlantedBug::ClaimGuardIgnoresStop
        )
    }

    /// Whether this build can plant it: core-side bugs need the `planted-bugs` feature.
    pub fn available(self) -> bool {
        !self.in_core() || cfg!(feature = "planted-bugs")
    }
}

/// Sets the core's switch for operations stepped on this thread (no-op without the feature).
pub fn activate(bug: Option<PlantedBug>) {
    #[cfg(feature = "planted-bugs")]
    {
        use leasehold_core::planted::{set, Bug};
        set(bug.and_then(|b| match b {
            PlantedBug::ConflictIsFailure => Some(Bug::ConflictIsFailure),
            PlantedBug::SkipFenceIncrement => Some(Bug::SkipFenceIncrement),
            PlantedBug::AdmitFromBack => Some(Bug::AdmitFromBack),
            PlantedBug::ReleaseIgnoresAttempt => Some(Bug::ReleaseIgnoresAttempt),
            PlantedBug::AcceptStaleRead => Some(Bug::AcceptStaleRead),
            PlantedBug::ReapUnknownAsOver => Some(Bug::ReapUnknownAsOver),
            PlantedBug::ClaimTakeoverEarly => Some(Bug::ClaimTakeoverEarly),
            PlantedBug::RefCommitWithoutParent => Some(Bug::RefCommitWithoutParent),
            PlantedBug::ClaimDeadlineAtTakeable => Some(Bug::ClaimDeadlineAtTakeable),
            PlantedBug::PoolCapIgnored => Some(Bug::ResourceCapIgnored),
            PlantedBug::PoolPartitionIgnored => Some(Bug::IgnoreHeldPartitions),
            PlantedBug::PoolConsumerOffByOne => Some(Bug::ConsumerLimitOffByOne),
            PlantedBug::PoolStopsAtBlocked => Some(Bug::PoolStopsAtBlocked),
            PlantedBug::PoolRerunKeepsRunner => Some(Bug::RerunKeepsRunnerAtom),
            PlantedBug::PoolChoiceConfigOrder => Some(Bug::ChoiceConfigOrder),
            PlantedBug::PoolChoiceRoomNoElapsed => Some(Bug::ChoiceRoomNoElapsed),
            PlantedBug::PollHotLoop => Some(Bug::PollHotLoop),
            PlantedBug::ReservationsUncounted => Some(Bug::ReservationsUncounted),
            PlantedBug::AdmitDuringIncident => Some(Bug::AdmitDuringIncident),
            PlantedBug::ReclaimAnyRunner => Some(Bug::ReclaimAnyRunner),
            PlantedBug::CooldownIgnoresEnd => Some(Bug::CooldownIgnoresEnd),
            PlantedBug::RecoverFreesQuarantine => Some(Bug::RecoverFreesQuarantine),
            PlantedBug::RecoverIncidentUnconfirmed => Some(Bug::RecoverIncidentUnconfirmed),
            PlantedBug::RefusedBranchIsWritten => Some(Bug::RefusedBranchIsWritten),
            PlantedBug::CancelledReplyIgnored => Some(Bug::CancelledReplyIgnored),
            PlantedBug::ReleaseKeepsSlot => Some(Bug::ReleaseKeepsSlot),
            PlantedBug::ResendUnknownWrite
            | PlantedBug::ResendUnknownRefUpdate
            | PlantedBug::FamilySplit
            | PlantedBug::ClaimGuardIgnoresStop => None,
        }));
    }
    #[cfg(not(feature = "planted-bugs"))]
    let _ = bug;
}
