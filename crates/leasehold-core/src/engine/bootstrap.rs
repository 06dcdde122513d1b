//! The state branch's bootstrap: when a write finds no state branch (or the first read said it
//! is missing), create it as an orphan branch (a tree, a commit, a ref), so its commits never
//! carry workflow files. The write that was waiting for it rides in that first commit: the tree
//! holds a README and the state file as the write would have created it, so creating the ref
//! is the write, a compare-and-swap on "no branch, so no file" (GitHub refuses a ref that
//! exists, 422). Its version is the file's blob id, computed as git computes it
//! (`store::blob`), so the next write needs no read. A job that loses the race to create the
//! branch reads what the winner made and plans again; nobody writes to a branch it knows to be
//! missing.

use super::{Engine, Pending, Planner};
use crate::store::blob::blob_sha;
use crate::store::Document;
use crate::wire::time::Millis;
use crate::wire::{Call, Command, Level, LogLine, TreeFile};

/// The text of the README at the root of a new state branch.
pub fn branch_readme(branch: &str) -> String {
    format!(
        "# {branch}\n\nThis branch holds lock state written by leasehold (`locks/<lock>.json`).\n\
         Every change is a compare-and-swap commit made by a leasehold action; do not edit,\n\
         rebase, force-push or delete it while any lock is in use. Capacity is configured in\n\
         `locks/<lock>.config.json` on the default branch, not here.\n"
    )
}

impl<D: Document, P: Planner<Doc = D> + ?Sized> Engine<P, D> {
    /// The state branch does not exist yet (a write answered 404 on a state never read, or the
    /// first read said so): create it, then send `write` (the state write planned on the
    /// absent file), if any.
    pub(super) fn branch_missing(
        &mut self,
        now: Millis,
        write: Option<Call>,
        log: &mut Vec<LogLine>,
    ) -> Command {
        if let Some(outcome) = self.planner.branch_missing(now) {
            self.pending_doc = None;
            return self.finish(outcome);
        }
        // Only a create rides in the first commit (a write on a version of the file cannot be
        // planned on a branch that is missing); anything else is planned again on a read.
        self.after_branch = write.filter(|w| matches!(w, Call::WriteFile { sha: None, .. }));
        log.push(LogLine {
            level: Level::Info,
            text: format!(
                "state branch {} not found; creating it",
                self.target.state_branch
            ),
        });
        let mut files = vec![TreeFile {
            path: "README.md".into(),
            content: branch_readme(&self.target.state_branch),
        }];
        if let Some(Call::WriteFile { path, content, .. }) = &self.after_branch {
            files.push(TreeFile {
                path: path.clone(),
                content: content.clone(),
            });
        }
        self.issue(Call::CreateTree { files }, Pending::Tree, now)
    }

    /// One step of the creation succeeded with the object `sha`: take the next.
    pub(super) fn branch_step(
        &mut self,
        done: Pending,
        sha: String,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
        match done {
            Pending::Tree => {
                let branch = &self.target.state_branch;
                let message = match &self.after_branch {
                    Some(Call::WriteFile { message, .. }) => {
                        format!("{message} (creating state branch {branch})")
                    }
                    _ => format!("leasehold: create state branch {branch}"),
                };
                let call = Call::CreateCommit {
                    message,
                    tree: sha,
                    parents: Vec::new(),
                };
                self.issue(call, Pending::Commit, now)
            }
            Pending::Commit => {
                let call = Call::CreateBranch {
                    branch: self.target.state_branch.clone(),
                    sha,
                };
                // With the state in it, creating the ref is this job's write: spaced from its
                // last one as any write is, and counted as one.
                match self.after_branch {
                    Some(_) => self.send_write(call, Pending::Branch, now),
                    None => self.issue(call, Pending::Branch, now),
                }
            }
            _ => {
                log.push(LogLine {
                    level: Level::Info,
                    text: format!("created state branch {}", self.target.state_branch),
                });
                self.branch_absent_hint = false;
                match self.after_branch.take() {
                    // The branch is new and this job made it, with the state file as the write
                    // planned it: that write is done, at the version git names its content.
                    Some(Call::WriteFile { content, .. }) => {
                        self.written(blob_sha(&content), now, log)
                    }
                    _ => self.read_state(now, false),
                }
            }
        }
    }

    /// Another job created the branch first (422 on the ref): read what it made.
    pub(super) fn branch_created_elsewhere(
        &mut self,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
        log.push(LogLine {
            level: Level::Info,
            text: format!(
                "state branch {} was created by another job",
                self.target.state_branch
            ),
        });
        self.branch_absent_hint = false;
        // Had this job's own ref landed before an answer that never came (the ref was sent
        // again), the read shows its holding, which the plan knows by its nonce.
        self.after_branch = None;
        self.pending_doc = None;
        self.read_state(now, false)
    }
}
