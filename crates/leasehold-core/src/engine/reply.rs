//! What a successful answer means: a version of the document read or written, the config read,
//! a question answered, a step of the state branch's creation done.

use super::{Engine, Known, Pending, Phase, Planner, Provenance, Wake};
use crate::policy::classify;
use crate::policy::limits::{DEFAULT_CAPACITY, MAX_STALE_READS, STALE_REREAD_MS};
use crate::store::{self, Document, Location};
use crate::wire::time::Millis;
use crate::wire::{
    Call, Command, ConfigRecord, FailureCode, Level, LogLine, ProtocolError, Reply, SleepReason,
};

impl<D: Document, P: Planner<Doc = D> + ?Sized> Engine<P, D> {
    pub(super) fn on_reply(
        &mut self,
        sent: Call,
        pending: Pending,
        now: Millis,
        reply: Reply,
        log: &mut Vec<LogLine>,
    ) -> Result<Command, ProtocolError> {
        let date = match &reply {
            Reply::File { date, .. }
            | Reply::Written { date, .. }
            | Reply::Http { date, .. }
            | Reply::Run { date, .. }
            | Reply::Job { date, .. }
            | Reply::Jobs { date, .. }
            | Reply::PullRequest { date, .. }
            | Reply::Graphql { date, .. }
            | Reply::NotAFile { date, .. }
            | Reply::NotModified { date } => date.as_deref(),
            _ => None,
        };
        self.clock.observe(date, self.request_sent_at, now);
        let auth_grace = match self.auth_streak_since {
            Some(since) => now.saturating_sub(since) < self.target.retry.auth_grace_ms,
            None => true,
        };
        // Something other than a file at the state's path is a state nobody can read or write;
        // at the config's path, a config that cannot be read: a release goes on by the state's
        // own record, as for a config read refused; anything else fails, recording nothing.
        if let (Reply::NotAFile { found, .. }, Pending::StateRead | Pending::ConfigRead) =
            (&reply, pending)
        {
            // A 200: the token works.
            self.auth_streak_since = None;
            return Ok(match pending {
                Pending::StateRead => self.state_not_a_file(found, now),
                _ => {
                    let e = crate::wire::ConfigError {
                        path: store::config_path(&self.target.lock),
                        rule: format!(
                            "GitHub lists a {found} there on the default branch, not a file leasehold can read"
                        ),
                    };
                    if self.planner.config_optional() {
                        self.without_config(&e.to_string(), now, log)
                    } else {
                        self.fail(FailureCode::ConfigInvalid, e.to_string(), None, None, now)
                    }
                }
            });
        }
        if let Some(class) = classify(pending.kind(), &reply, now, auth_grace) {
            if matches!(&reply, Reply::Http { status: 401, .. }) {
                self.auth_streak_since.get_or_insert(now);
            }
            return Ok(self.on_failure(sent, pending, class, &reply, now, log));
        }
        // A mutation is done only when it answers its field: GitHub may answer a nullable
        // payload null, or a 200 that is no GraphQL answer at all, without an error. Whether it
        // ran is then unknown: read back, never taken as landed.
        if let (Pending::StateWrite, Call::Graphql { .. }, Reply::Graphql { data, .. }) =
            (pending, &sent, &reply)
        {
            if !crate::policy::answered_every_field(data.as_ref()) {
                let class = crate::policy::Class::UnknownOutcome;
                return Ok(self.on_failure(sent, pending, class, &reply, now, log));
            }
        }
        self.failures = 0;
        self.auth_streak_since = None;
        let command = match (pending, reply) {
            (
                Pending::Probe,
                reply @ (Reply::Run { .. }
                | Reply::Job { .. }
                | Reply::Jobs { .. }
                | Reply::PullRequest { .. }),
            ) => {
                self.planner.on_probe(&sent, Ok(reply), log);
                self.after_probe(now, log)
            }
            (
                Pending::StateRead,
                Reply::File {
                    sha, content, etag, ..
                },
            ) => match P::Doc::parse(&content, &self.target.lock) {
                Err(e) => {
                    // Name the file and what is wrong with it, and the way back.
                    let message = format!(
                        "{}: {e}; nothing was changed (an operator can rewrite it with `leasehold repair --lock {}`, docs/operations.md)",
                        self.state_place(),
                        self.target.lock
                    );
                    self.fail(e.code(), message, None, None, now)
                }
                Ok(doc) => self.on_version(doc, Some(sha), etag, now, log),
            },
            (Pending::StateRead, Reply::Graphql { data, .. }) => {
                let Location::Refs { names } = P::Doc::location(&self.target.lock) else {
                    return Err(unexpected(pending, "graphql"));
                };
                let data = data.unwrap_or_default();
                match store::refs::parse_read(&data, &names) {
                    Err(e) => self.fail(
                        FailureCode::StateInvalid,
                        format!("GitHub's answer to the ref read is not what was asked: {e}"),
                        None,
                        None,
                        now,
                    ),
                    Ok((repository_id, refs)) => {
                        self.target.repository_id = Some(repository_id);
                        match P::Doc::from_refs(&refs, &self.target.lock) {
                            Err(e) => self.fail(e.code(), e.to_string(), None, None, now),
                            Ok(doc) => {
                                let sha = doc.exists().then(|| "refs".to_string());
                                self.on_version(doc, sha, None, now, log)
                            }
                        }
                    }
                }
            }
            (Pending::RefTree, Reply::Created { sha }) => {
                let batch = self.batch.as_mut().expect("a ref write is under way");
                let w = &batch.writes[batch.commits.len()];
                batch.tree = Some(sha.clone());
                #[allow(unused_mut)]
                let mut parents: Vec<String> = w.before.iter().cloned().collect();
                #[cfg(feature = "planted-bugs")]
                if crate::planted::active(crate::planted::Bug::RefCommitWithoutParent) {
                    parents.clear();
                }
                let call = Call::CreateCommit {
                    message: w.message.clone(),
                    tree: sha,
                    parents,
                };
                self.issue(call, Pending::RefCommit, now)
            }
            (Pending::RefCommit, Reply::Created { sha }) => {
                let batch = self.batch.as_mut().expect("a ref write is under way");
                let name = batch.writes[batch.commits.len()].name.clone();
                batch.commits.push((name, sha));
                batch.tree = None;
                if let Some(next) = batch.writes.get(batch.commits.len()) {
                    let call = super::decide::tree_call(&next.content);
                    return Ok(self.issue(call, Pending::RefTree, now));
                }
                let updates: Vec<(String, Option<String>, String)> = batch
                    .writes
                    .iter()
                    .zip(&batch.commits)
                    .map(|(w, (_, c))| (w.name.clone(), w.before.clone(), c.clone()))
                    .collect();
                // The document as it is once the update is applied: what a read-back shows if
                // it was.
                let commits = batch.commits.clone();
                if let Some(doc) = self.pending_doc.as_mut() {
                    doc.committed(&commits);
                }
                self.planner.created_commits(&commits);
                let Some(repository_id) = self.target.repository_id.clone() else {
                    return Ok(self.fail(
                        FailureCode::StateInvalid,
                        "the repository id is not known".into(),
                        None,
                        None,
                        now,
                    ));
                };
                let call = store::refs::update_refs_call(&repository_id, &updates);
                self.issue(call, Pending::StateWrite, now)
            }
            // Only the ref update (a GraphQL mutation) is answered by GraphQL; a file write
            // answered so is an illegal transition, below.
            (Pending::StateWrite, Reply::Graphql { .. })
                if matches!(sent, Call::Graphql { .. }) =>
            {
                let doc = self.pending_doc.take().expect("a write is pending");
                self.batch = None;
                self.conflicts_in_row = 0;
                self.unknown_streak = 0;
                self.max_revision = Some(doc.revision());
                let sha = doc.exists().then(|| "refs".to_string());
                self.known = Some(Known {
                    doc,
                    sha,
                    etag: None,
                    provenance: Provenance::Written,
                });
                self.decide(now, log)
            }
            (Pending::StateRead, Reply::NotModified { .. }) if self.known.is_some() => {
                self.stats.not_modified += 1;
                self.decide(now, log)
            }
            (
                Pending::ConfigRead,
                Reply::File {
                    sha, content, etag, ..
                },
            ) => {
                let path = store::config_path(&self.target.lock);
                let (capacity, lease, pool, lifecycle) = match store::parse_config(&path, &content)
                {
                    Ok(c) => {
                        self.config.error = None;
                        (c.capacity, c.lease, c.pool, c.lifecycle)
                    }
                    Err(e) => {
                        let pool = store::broken_pool(&content, &e).or_else(|| {
                            self.closes_without_config().then(|| store::closed_pool(&e))
                        });
                        log.push(LogLine {
                            level: Level::Warning,
                            text: if pool.is_some() {
                                format!("{e}; the pool admits nobody new until it is fixed")
                            } else {
                                format!("{e}; using capacity {DEFAULT_CAPACITY}")
                            },
                        });
                        // A broken config keeps the lifecycle it meant, if it still reads, so a
                        // typo elsewhere never switches the lifecycle off.
                        let lifecycle = store::lifecycle::meant(&content);
                        self.config.error = Some(e);
                        (DEFAULT_CAPACITY, None, pool, lifecycle)
                    }
                };
                self.config.record = Some(ConfigRecord {
                    capacity,
                    lease,
                    sha: Some(sha),
                    read_at: self.clock.server_now(now),
                    pool,
                    lifecycle,
                });
                self.config.etag = etag;
                self.decide(now, log)
            }
            (Pending::ConfigRead, Reply::NotModified { .. }) if self.config.record.is_some() => {
                self.stats.not_modified += 1;
                if let Some(r) = self.config.record.as_mut() {
                    r.read_at = self.clock.server_now(now);
                }
                self.decide(now, log)
            }
            (Pending::StateWrite, Reply::Written { sha, .. })
                if matches!(sent, Call::WriteFile { .. }) =>
            {
                self.written(sha, now, log)
            }
            (Pending::Tree | Pending::Commit | Pending::Branch, Reply::Created { sha }) => {
                self.branch_step(pending, sha, now, log)
            }
            (pending, reply) => {
                self.phase = Phase::Awaiting(sent, pending);
                return Err(unexpected(pending, &reply.kind()));
            }
        };
        Ok(command)
    }

    /// The state's path holds no file (a directory, a symlink, a submodule): fail, naming it,
    /// having written nothing. `leasehold repair` cannot help (it writes a file at the path);
    /// what is there must be moved out of the way on the state branch.
    fn state_not_a_file(&mut self, found: &str, now: Millis) -> Command {
        let message = format!(
            "{}: GitHub lists a {found} there, not a file leasehold can read; nothing was changed (move it out of the way on that branch: leasehold keeps the state of lock {} in a file of that name)",
            self.state_place(),
            self.target.lock
        );
        self.fail(FailureCode::StateInvalid, message, None, None, now)
    }

    /// Where the lock's state is, as an error names it: its file and branch, or the lock.
    fn state_place(&self) -> String {
        match P::Doc::location(&self.target.lock) {
            Location::File { path } => format!("{path} on branch {}", self.target.state_branch),
            Location::Refs { .. } => self.target.lock.clone(),
        }
    }

    /// The pending write of the state file landed, as the version `sha`: plan on it.
    pub(super) fn written(&mut self, sha: String, now: Millis, log: &mut Vec<LogLine>) -> Command {
        let doc = self.pending_doc.take().expect("a write is pending");
        self.conflicts_in_row = 0;
        self.conflicted_on = None;
        self.unknown_streak = 0;
        self.max_revision = Some(doc.revision());
        self.known = Some(Known {
            doc,
            sha: Some(sha),
            etag: None,
            provenance: Provenance::Written,
        });
        self.decide(now, log)
    }

    /// A version read: refuse a stale one, recognise our own unacknowledged write, plan on it.
    fn on_version(
        &mut self,
        doc: P::Doc,
        sha: Option<String>,
        etag: Option<String>,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
        #[cfg(feature = "planted-bugs")]
        if crate::planted::active(crate::planted::Bug::AcceptStaleRead) {
            self.max_revision = None;
        }
        if self.max_revision.is_some_and(|max| doc.revision() < max) {
            return self.stale(now, log);
        }
        self.stale_reads_in_row = 0;
        self.max_revision = Some(doc.revision());
        // Exactly the version our unacknowledged write would have made (its revision and
        // lastChange, or a ref's new commit, make it unique): that write landed.
        let provenance = if self.unconfirmed.as_ref() == Some(&doc) {
            self.unconfirmed = None;
            self.unknown_streak = 0;
            Provenance::Written
        } else {
            Provenance::Read
        };
        self.known = Some(Known {
            doc,
            sha,
            etag,
            provenance,
        });
        self.decide(now, log)
    }

    pub(super) fn stale(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        self.stats.stale_reads += 1;
        self.stale_reads_in_row += 1;
        if self.stale_reads_in_row > MAX_STALE_READS {
            return self.fail(
                FailureCode::StaleReads,
                format!("GitHub kept answering with a version older than one already seen ({MAX_STALE_READS} times)"),
                None,
                None,
                now,
            );
        }
        log.push(LogLine {
            level: Level::Debug,
            text: "read an older version than one already seen (stale cache); reading again".into(),
        });
        self.sleep(now + STALE_REREAD_MS, SleepReason::StaleRead, Wake::Reread)
    }
}

fn unexpected(pending: Pending, kind: &str) -> ProtocolError {
    ProtocolError {
        event: format!("reply \"{kind}\""),
        state: format!("awaiting the answer to {pending:?}"),
    }
}
