//! The simulated lock repository: the honest GitHub of `leasehold-github-model` (one lock's
//! config on the default branch, its state file on the state branch, the Actions view), plus
//! what the simulation adds on top of it: stale reads (a fault, drawn by the world) served from
//! the model's history, and each state version's parse and the write that made it, for the
//! trace and the checker's feed. GitHub's rules themselves live in the model only.

use leasehold_core::time::Millis;
use leasehold_core::{Call, Command, LockState, Reply};
use leasehold_github_model::{file_reply, GitHub, Version};

use crate::rng::SimRng;

pub use leasehold_github_model::{http, http_date};

/// The default branch of the simulated lock repository.
pub const DEFAULT_BRANCH: &str = "main";

/// What the simulation knows of one committed version of the state file beyond its text.
#[derive(Clone, Debug)]
pub struct Meta {
    /// The parsed document (leniently: without the core's own structural checks, so that the
    /// checker can name what is wrong), or the parse error.
    pub state: Result<LockState, String>,
    /// The logical write (index into the world's write records) that produced it; `None` for the
    /// version the seed started with.
    pub write: Option<usize>,
}

pub struct Store {
    pub github: GitHub,
    /// The state the history starts from (the empty state, before the file exists).
    pub initial: LockState,
    pub state_path: String,
    pub config_path: String,
    pub branch: String,
    /// One entry per version of the state file in the model's history.
    meta: Vec<Meta>,
}

/// The lenient parse the checker is fed.
pub fn parse(text: &str) -> Result<LockState, String> {
    serde_json::from_str::<LockState>(text).map_err(|e| e.to_string())
}

impl Store {
    pub fn new(lock: &str, branch: &str, config: Option<String>) -> Self {
        let mut github = GitHub::new(DEFAULT_BRANCH);
        let config_path = format!("locks/{lock}.config.json");
        if let Some(text) = config {
            github.commit_file(DEFAULT_BRANCH, &config_path, &text, 0);
        }
        Store {
            github,
            initial: LockState::empty(lock),
            state_path: format!("locks/{lock}.json"),
            config_path,
            branch: branch.into(),
            meta: Vec::new(),
        }
    }

    pub fn branch_exists(&self) -> bool {
        self.github.has_branch(&self.branch)
    }

    /// The state branch exists from the start (empty).
    pub fn start_branch(&mut self) {
        self.github.add_branch(&self.branch);
    }

    /// A state file from earlier use, committed at `at` by nobody in the simulation (it is the
    /// initial state too).
    pub fn start_state(&mut self, initial: LockState, at: Millis) {
        let text = initial.to_document();
        let text = text.as_str();
        self.initial = initial;
        self.github
            .commit_file(&self.branch, &self.state_path, text, at);
        self.meta.push(Meta {
            state: parse(text),
            write: None,
        });
    }

    fn history(&self) -> &[Version] {
        self.github
            .history(&self.branch, &self.state_path)
            .unwrap_or_default()
    }

    /// How many versions of the state file were committed.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    pub fn version(&self, v: usize) -> &Version {
        &self.history()[v]
    }

    pub fn meta(&self, v: usize) -> &Meta {
        &self.meta[v]
    }

    /// The state committed right now (the initial state before the file exists); `None` when
    /// the current version does not parse.
    pub fn committed(&self) -> Option<&LockState> {
        match self.current() {
            None => Some(&self.initial),
            Some(v) => self.meta(v).state.as_ref().ok(),
        }
    }

    /// The current state version's index, if the file exists.
    pub fn current(&self) -> Option<usize> {
        self.meta.len().checked_sub(1)
    }

    /// `GET contents/{path}?ref=`. `stale`: the window and the generator when a stale read was
    /// drawn. Also says whether it served something older than the current version, and which
    /// version of the state it served (if any).
    pub fn read(
        &mut self,
        command: &Command,
        now: Millis,
        stale: Option<(Millis, &mut SimRng)>,
    ) -> (Reply, bool, Option<usize>) {
        let Some(Call::ReadFile {
            path,
            git_ref,
            if_none_match,
            ..
        }) = command.call()
        else {
            unreachable!("not a read");
        };
        let state_file = path == &self.state_path && git_ref.as_deref() == Some(&self.branch);
        if !state_file || !self.branch_exists() {
            return (self.github.answer(command, now).reply, false, None);
        }
        let versions = self.history();
        let mut served = versions.len();
        if let Some((window, rng)) = stale {
            // Every version current at some instant of [now - window, now] may be served: the
            // current one, each one replaced within the window, and "absent" when the file was
            // created within it.
            let mut oldest = versions.len();
            while oldest > 0 && versions[oldest - 1].at + window >= now {
                oldest -= 1;
            }
            let choices = (versions.len() - oldest) as u64 + 1;
            served = versions.len() - rng.below(choices) as usize;
        }
        let older = served < versions.len();
        match served.checked_sub(1) {
            Some(i) => (
                file_reply(&versions[i], if_none_match.as_deref(), now),
                older,
                Some(i),
            ),
            None => (http(404, "Not Found"), older, None),
        }
    }

    /// Any other request, answered by the model. Returns the answer and the version of the
    /// state file it committed, if any (attributed to `write`).
    pub fn answer(
        &mut self,
        command: &Command,
        now: Millis,
        write: Option<usize>,
    ) -> (Reply, Option<usize>) {
        let answer = self.github.answer(command, now);
        let committed = answer
            .committed
            .filter(|c| c.branch == self.branch && c.path == self.state_path)
            .map(|c| c.index)
            // The state branch created with the state file in its first commit.
            .or_else(|| (self.history().len() > self.meta.len()).then_some(self.meta.len()));
        if let Some(index) = committed {
            let text = &self.history()[index].text;
            self.meta.push(Meta {
                state: parse(text),
                write,
            });
        }
        (answer.reply, committed)
    }

    /// The state file in `commit`'s tree, when creating `branch` at it would create the state
    /// branch with the state in it (the core's first use: `engine/bootstrap.rs`).
    pub fn state_in(&self, branch: &str, commit: &str) -> Option<&str> {
        (branch == self.branch)
            .then(|| self.github.file_at(commit, &self.state_path))
            .flatten()
    }

    /// An unrelated commit to another file on the state branch (the cause of a spurious 409):
    /// the branch's commit count after it.
    pub fn unrelated_commit(&mut self) -> Option<u64> {
        self.github.unrelated_commit(&self.branch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_reads_stay_inside_the_window() {
        let mut s = Store::new("x", "state", None);
        s.start_branch();
        let path = s.state_path.clone();
        for (i, t) in [1_000u64, 50_000, 60_000].into_iter().enumerate() {
            let sha = s.current().map(|v| s.version(v).sha.clone());
            let put = Command::Request {
                call: Call::WriteFile {
                    path: path.clone(),
                    branch: "state".into(),
                    content: format!("v{i}"),
                    sha,
                    message: "m".into(),
                },
                timeout_ms: 1,
            };
            assert!(s.answer(&put, t, Some(i)).1.is_some());
        }
        let get = Command::Request {
            call: Call::ReadFile {
                path: path.clone(),
                git_ref: Some("state".into()),
                if_none_match: None,
            },
            timeout_ms: 1,
        };
        let mut rng = SimRng::new(1);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let (r, _, _) = s.read(&get, 65_000, Some((10_000, &mut rng)));
            if let Reply::File { content, .. } = r {
                seen.insert(content);
            }
        }
        // v1 was replaced at 60 s (inside the window), v0 at 50 s (outside it).
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            vec!["v1".to_string(), "v2".to_string()]
        );
        assert_eq!(s.meta(2).write, Some(2));
    }
}
