//! The state branch's bootstrap: when a write finds no state branch, create it as an orphan
//! branch holding only a README (a tree, a commit, a ref), so its commits never carry workflow
//! files; a job that loses the race to create it reads what the winner made.

use super::{Engine, Pending, Planner, Wake};
use crate::policy::limits::BRANCH_CREATE_SPREAD_MS;
use crate::wire::time::Millis;
use crate::wire::{Call, Command, Level, LogLine, SleepReason, TreeFile};

/// The text of the README at the root of a new state branch.
pub fn branch_readme(branch: &str) -> String {
    format!(
        "# {branch}\n\nThis branch holds lock state written by leasehold (`locks/<lock>.json`).\n\
         Every change is a compare-and-swap commit made by a leasehold action; do not edit,\n\
         rebase, force-push or delete it while any lock is in use. Capacity is configured in\n\
         `locks/<lock>.config.json` on the default branch, not here.\n"
    )
}

impl<P: Planner> Engine<P> {
    /// A write answered 404 on a state branch never read: the branch does not exist yet.
    pub(super) fn branch_missing(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        // The state branch does not exist yet: create it as an orphan branch holding
        // only a README, so its commits never carry workflow files.
        if let Some(outcome) = self.planner.branch_missing(now) {
            return self.finish(outcome);
        }
        // Jobs that start together on a new lock repository all find the branch
        // missing: the first time, wait a moment and look again, so that usually one of
        // them creates it (three requests) instead of every one of them.
        if !self.branch_missing_seen {
            self.branch_missing_seen = true;
            let until = now + self.rng.up_to(BRANCH_CREATE_SPREAD_MS);
            log.push(LogLine {
                level: Level::Info,
                text: format!(
                    "state branch {} not found; looking again before creating it",
                    self.target.state_branch
                ),
            });
            return self.sleep(until, SleepReason::Contention, Wake::Reread);
        }
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
                self.read_state(now, false)
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
        self.read_state(now, false)
    }
}
