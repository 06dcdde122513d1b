//! Planning on the version known: read the config when the plan needs a fresh one, let the
//! planner decide, and turn its decision into the next command (a write spaced from others, a
//! sleep, a question, a finish).

use super::{Decision, Engine, Pending, PlanCtx, Planner, Provenance, RefBatch, Wake};
use crate::policy::limits::MIN_WRITE_GAP_MS;
use crate::policy::settle_delay;
use crate::store::{self, Document, Location, PAYLOAD_FILE};
use crate::wire::time::Millis;
use crate::wire::{Call, Command, LeasePolicy, LogLine, SleepReason, TreeFile};

/// The tree of a ref document's version: its one payload file.
pub(super) fn tree_call(content: &str) -> Call {
    Call::CreateTree {
        files: vec![TreeFile {
            path: PAYLOAD_FILE.into(),
            content: content.into(),
        }],
    }
}

impl<D: Document, P: Planner<Doc = D> + ?Sized> Engine<P, D> {
    /// When this operation may send its next write: a second after its last one, or `now`.
    pub(super) fn write_allowed_at(&self, now: Millis) -> Millis {
        self.last_write_at
            .map_or(now, |t| t + MIN_WRITE_GAP_MS)
            .max(now)
    }

    /// Sends a planned write, held back until a second after this operation's last write.
    pub(super) fn send_write(&mut self, call: Call, pending: Pending, now: Millis) -> Command {
        match self.write_allowed_at(now) {
            at if at > now => self.sleep(at, SleepReason::WriteSpacing, Wake::Send(call, pending)),
            _ => self.issue(call, pending, now),
        }
    }

    pub(super) fn decide_absent(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        self.decide_inner(now, log, false)
    }

    pub(super) fn decide(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        let exists = self
            .known
            .as_ref()
            .is_some_and(|k| k.sha.is_some() && k.doc.exists());
        self.decide_inner(now, log, exists)
    }

    fn decide_inner(&mut self, now: Millis, log: &mut Vec<LogLine>, exists: bool) -> Command {
        // Config records carry GitHub's time (they are shared through the state): judge their
        // freshness by it too.
        let server_now = self.clock.server_now(now);
        let fresh = self
            .capacity_record(server_now)
            .filter(|r| store::is_fresh(r, server_now))
            .cloned();
        let needs = self.known.as_ref().map_or_else(
            || self.planner.needs_config(),
            |k| self.planner.needs_config_for(&k.doc),
        );
        if needs && fresh.is_none() && !self.config.done_without {
            let call = Call::ReadFile {
                path: store::config_path(&self.target.lock),
                git_ref: None,
                if_none_match: self.config.etag.clone(),
            };
            return self.issue(call, Pending::ConfigRead, now);
        }
        let known = self.known.as_ref().expect("state known before planning");
        let lease = fresh
            .as_ref()
            .and_then(|r| r.lease.clone())
            .unwrap_or_else(LeasePolicy::unconfigured);
        let mut ctx = PlanCtx {
            now,
            server_now,
            lease,
            clock: self.clock,
            has_written: self.stats.writes > 0,
            removed: Vec::new(),
            state: &known.doc,
            exists,
            provenance: known.provenance,
            admission: fresh.as_ref().map(P::Doc::admission),
            config_error: self.config.error.as_ref(),
            rng: &mut self.rng,
            log,
            repository_id: self.target.repository_id.clone(),
            record: fresh.clone(),
        };
        let decision = self.planner.plan(&mut ctx);
        let removed = std::mem::take(&mut ctx.removed);
        match decision {
            Decision::Write { mut doc, action } => {
                // Another job joined the lock less than a second ago and this write joins it
                // too: a crowd is arriving. Let it settle, then read again and plan on what is
                // there by then (`policy::settle_delay` says when, and why only then). A write
                // that frees or keeps a slot (a release, a renewal, a timeout) never waits for
                // the crowd: it is what the crowd is waiting for.
                if known.provenance == Provenance::Read && action.is_arrival() {
                    if let Some(delay) = settle_delay(
                        known.doc.last_change(),
                        &self.target.holder_id,
                        server_now,
                        self.busy_deferrals,
                        &mut self.rng,
                    ) {
                        self.busy_deferrals += 1;
                        return self.sleep(now + delay, SleepReason::WriteSpacing, Wake::Reread);
                    }
                }
                self.busy_deferrals = 0;
                doc.stamp(server_now, &self.target.holder_id, action.clone(), removed);
                if let Some(ours) = fresh {
                    let stale = |r: &crate::wire::ConfigRecord| {
                        r.read_at < ours.read_at || r.read_at > server_now
                    };
                    if doc.config_record().is_none_or(stale) {
                        doc.set_config_record(ours);
                    }
                }
                let (call, pending) = match P::Doc::location(&self.target.lock) {
                    Location::File { path } => {
                        let content = doc.render();
                        // Never write what no reader could read back (a counter at its
                        // largest, a document past its size limit): fail closed instead,
                        // leaving the version that is there.
                        if let Err(e) = P::Doc::parse(&content, &self.target.lock) {
                            let message = format!(
                                "the new version of {path} was not written: it would not be readable ({e})"
                            );
                            return self.fail(e.code(), message, None, None, now);
                        }
                        let call = Call::WriteFile {
                            path,
                            branch: self.target.state_branch.clone(),
                            content,
                            sha: known.sha.clone(),
                            message: format!(
                                "leasehold: {action} {} by {}",
                                self.target.lock, self.target.holder_id
                            ),
                        };
                        (call, Pending::StateWrite)
                    }
                    Location::Refs { .. } => {
                        let writes = doc.ref_writes();
                        let Some(first) = writes.first() else {
                            // A plan that changes no ref writes nothing: plan again on it.
                            self.known.as_mut().expect("known").doc = doc;
                            return self.decide(now, log);
                        };
                        let call = tree_call(&first.content);
                        self.batch = Some(RefBatch {
                            writes,
                            tree: None,
                            commits: Vec::new(),
                        });
                        (call, Pending::RefTree)
                    }
                };
                self.pending_doc = Some(doc);
                self.unconfirmed = None;
                // The first read said the state branch is missing: create it first, then send
                // this write (instead of sending it to learn the same from a 404).
                if self.branch_absent_hint && matches!(call, Call::WriteFile { sha: None, .. }) {
                    return self.branch_missing(now, Some(call), log);
                }
                self.send_write(call, pending, now)
            }
            Decision::Sleep { until } => self.sleep(until.max(now), SleepReason::Poll, Wake::Poll),
            Decision::Probe(question) => self.issue(question, Pending::Probe, now),
            Decision::Finish(outcome) => self.finish(outcome),
        }
    }
}
