//! The state branch's bootstrap: when a write finds no state branch (or the first read said it
//! is missing), create it as an orphan branch holding only a README (a tree, a commit, a ref),
//! so its commits never carry workflow files, then send the write that was waiting for it. A
//! job that loses the race to create it (the ref exists: 422) reads what the winner made and
//! plans again; nobody writes to a branch it knows to be missing twice.

use super::{Engine, Pending, Planner};
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
        self.after_branch = write;
        log.push(LogLine {
            level: Level::Info,
            text: format!(
                "state branch {} not found; creating it",
                self.target.state_branch
            ),
        });
        let call = Call::CreateTree {
            files: vec![TreeFile {
                path: "README.md".into(),
                content: branch_readme(&self.target.state_branch),
            }],
        };
        self.issue(call, Pending::Tree, now)
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
                let call = Call::CreateCommit {
                    message: format!(
                        "leasehold: create state branch {}",
                        self.target.state_branch
                    ),
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
                self.issue(call, Pending::Branch, now)
            }
            _ => {
                log.push(LogLine {
                    level: Level::Info,
                    text: format!("created state branch {}", self.target.state_branch),
                });
                self.branch_absent_hint = false;
                match self.after_branch.take() {
                    // The branch is new and this job made it: the file is absent, so the write
                    // planned on its absence goes now (a create, refused if it appeared).
                    Some(write) => self.send_write(write, Pending::StateWrite, now),
                    None => self.read_state(now, false),
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
        self.after_branch = None;
        self.pending_doc = None;
        self.read_state(now, false)
    }
}
