//! Deliberate defects for the simulator's recall test (`crates/leasehold-sim`), compiled only
//! with the test-only `planted-bugs` feature: without it this module does not exist and the core
//! is unchanged. Still sans-IO: the defect in force is set by the simulator, per thread, before
//! it steps any operation; the core reads no environment, clock or random source to choose it.

use std::cell::Cell;

/// One planted defect. Each names the rule of the core it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// engine/failure.rs: a compare-and-swap conflict (409) ends the operation instead of re-reading.
    ConflictIsFailure,
    /// admission/fifo.rs: admission reuses the current fence instead of incrementing it.
    SkipFenceIncrement,
    /// admission/fifo.rs: admission takes the back of the queue instead of its front.
    AdmitFromBack,
    /// ops/release.rs: release removes the holder id's entry even when a newer run attempt owns it.
    ReleaseIgnoresAttempt,
    /// engine/reply.rs: a read older than a version already seen is acted on (no revision check).
    AcceptStaleRead,
    /// ops/reap.rs: an Actions API question that got no answer proving anything (refused, not
    /// found, unavailable) counts as proof that the run attempt (job) is over.
    ReapUnknownAsOver,
    /// ops/claims/mod.rs: a held claim is takeable whatever its expiry.
    ClaimTakeoverEarly,
    /// engine/reply.rs and store/refs.rs: a ref document's new commit has no parent, and its
    /// update is forced.
    RefCommitWithoutParent,
    /// ops/claims/mod.rs: a claim's lease view puts its holder's local deadline at the instant
    /// the claim becomes takeable (expiry, grace and skew) instead of before its expiry.
    ClaimDeadlineAtTakeable,
    /// admission/pool.rs: a resource's holdings are counted one short (its cap over-runs).
    ResourceCapIgnored,
    /// admission/pool.rs: a waiter's partition is not checked against the holdings'.
    IgnoreHeldPartitions,
    /// admission/pool.rs: a consumer's holdings are counted one short (`maxConcurrent` over-runs).
    ConsumerLimitOffByOne,
    /// admission/pool.rs: a rerun taking over a holding keeps its seat's earlier runner atom, and
    /// one slot a runner is judged by the seats' atoms only.
    RerunKeepsRunnerAtom,
    /// admission/pool.rs: the scan stops at the first blocked waiter (a later one that fits
    /// waits while its slot is free).
    PoolStopsAtBlocked,
    /// admission/choice.rs: the eligible resources are taken in config order only.
    ChoiceConfigOrder,
    /// admission/choice.rs: the room below pace is `target − used`, without the elapsed fraction.
    ChoiceRoomNoElapsed,
    /// policy/handoff.rs: a waiter polls again 50 ms after every poll (a hot loop).
    PollHotLoop,
    /// admission/lifecycle.rs: reservations are not counted against the capacity.
    ReservationsUncounted,
    /// admission/lifecycle.rs: waiters are admitted while the incident stands.
    AdmitDuringIncident,
    /// admission/lifecycle.rs: a quarantine is reclaimed by the first waiter, on any runner.
    ReclaimAnyRunner,
    /// admission/lifecycle.rs: the sweep frees every cooldown, ended or not.
    CooldownIgnoresEnd,
    /// ops/recover.rs: recover frees the quarantine outright instead of turning it into a
    /// cooldown.
    RecoverFreesQuarantine,
    /// ops/recover.rs: recover-incident goes ahead without `confirmed: true`.
    RecoverIncidentUnconfirmed,
    /// engine/failure.rs: a state branch's ref carrying the state, refused because the branch
    /// exists, is taken for the state's write.
    RefusedBranchIsWritten,
    /// engine/mod.rs: an answer that comes with the job's cancel (`cancelledReply`) is heard as
    /// a plain answer.
    CancelledReplyIgnored,
    /// ops/release.rs: a release that removes its holding hands the slot to nobody (no
    /// admission in its write).
    ReleaseKeepsSlot,
}

thread_local! {
    static ACTIVE: Cell<Option<Bug>> = const { Cell::new(None) };
}

/// Plants `bug` (or none) for every operation stepped on this thread from now on.
pub fn set(bug: Option<Bug>) {
    ACTIVE.with(|a| a.set(bug));
}

/// Whether `bug` is planted on this thread.
pub fn active(bug: Bug) -> bool {
    ACTIVE.with(|a| a.get() == Some(bug))
}
