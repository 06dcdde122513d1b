//! What a successful answer means: a version of the document read or written, the config read,
//! a question answered, a step of the state branch's creation done.

use super::{Engine, Known, Pending, Phase, Planner, Provenance, Wake};
use crate::policy::classify;
use crate::policy::limits::{DEFAULT_CAPACITY, MAX_STALE_READS, STALE_REREAD_MS};
use crate::store::{self, Document};
use crate::wire::time::Millis;
use crate::wire::{
    Call, Command, ConfigRecord, FailureCode, Level, LogLine, ProtocolError, Reply, SleepReason,
};

impl<P: Planner> Engine<P> {
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
            | Reply::Jobs { date, .. } => date.as_deref(),
            _ => None,
        };
        self.clock.observe(date, self.request_sent_at, now);
        let auth_grace = match self.auth_streak_since {
            Some(since) => now.saturating_sub(since) < self.target.retry.auth_grace_ms,
            None => true,
        };
        if let Some(class) = classify(pending.kind(), &reply, now, auth_grace) {
            if matches!(&reply, Reply::Http { status: 401, .. }) {
                self.auth_streak_since.get_or_insert(now);
            }
            return Ok(self.on_failure(sent, pending, class, &reply, now, log));
        }
        self.failures = 0;
        self.auth_streak_since = None;
        let command = match (pending, reply) {
            (
                Pending::Probe,
                reply @ (Reply::Run { .. } | Reply::Job { .. } | Reply::Jobs { .. }),
            ) => {
                self.planner.on_probe(&sent, Ok(reply), log);
                self.after_probe(now, log)
            }
            (
                Pending::StateRead,
                Reply::File {
                    sha, content, etag, ..
                },
            ) => {
                match P::Doc::parse(&content, &self.target.lock) {
                    Err(e) => self.fail(e.code(), e.to_string(), None, None, now),
                    Ok(doc) => {
                        #[cfg(feature = "planted-bugs")]
                        if crate::planted::active(crate::planted::Bug::AcceptStaleRead) {
                            self.max_revision = None;
                        }
                        if self.max_revision.is_some_and(|max| doc.revision() < max) {
                            return Ok(self.stale(now, log));
                        }
                        self.stale_reads_in_row = 0;
                        self.max_revision = Some(doc.revision());
                        // Exactly the version our unacknowledged write would have made (its
                        // revision and lastChange make it unique): that write landed.
                        let provenance = if self.unconfirmed.as_ref() == Some(&doc) {
                            self.unconfirmed = None;
                            self.unknown_streak = 0;
                            Provenance::Written
                        } else {
                            Provenance::Read
                        };
                        self.known = Some(Known {
                            doc,
                            sha: Some(sha),
                            etag,
                            provenance,
                        });
                        self.decide(now, log)
                    }
                }
            }
            (Pending::StateRead, Reply::NotModified) if self.known.is_some() => {
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
                let (capacity, lease) = match store::parse_config(&path, &content) {
                    Ok(c) => {
                        self.config.error = None;
                        (c.capacity, c.lease)
                    }
                    Err(e) => {
                        log.push(LogLine {
                            level: Level::Warning,
                            text: format!("{e}; using capacity {DEFAULT_CAPACITY}"),
                        });
                        self.config.error = Some(e);
                        (DEFAULT_CAPACITY, None)
                    }
                };
                self.config.record = Some(ConfigRecord {
                    capacity,
                    lease,
                    sha: Some(sha),
                    read_at: self.clock.server_now(now),
                });
                self.config.etag = etag;
                self.decide(now, log)
            }
            (Pending::ConfigRead, Reply::NotModified) if self.config.record.is_some() => {
                self.stats.not_modified += 1;
                if let Some(r) = self.config.record.as_mut() {
                    r.read_at = self.clock.server_now(now);
                }
                self.decide(now, log)
            }
            (Pending::StateWrite, Reply::Written { sha, .. }) => {
                let doc = self.pending_doc.take().expect("a write is pending");
                self.conflicts_in_row = 0;
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
            (Pending::Tree | Pending::Commit | Pending::Branch, Reply::Created { sha }) => {
                self.branch_step(pending, sha, now, log)
            }
            (pending, reply) => {
                self.phase = Phase::Awaiting(sent, pending);
                let kind = serde_json::to_value(&reply)
                    .ok()
                    .and_then(|v| v.get("kind").cloned());
                return Err(ProtocolError {
                    event: format!("reply {}", kind.map(|k| k.to_string()).unwrap_or_default()),
                    state: format!("awaiting the answer to {:?}", pending),
                });
            }
        };
        Ok(command)
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
