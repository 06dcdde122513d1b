//! # leasehold-github-model
//!
//! GitHub as leasehold relies on it, written once in Rust: an honest GitHub that answers the
//! core's request [`Command`]s with the [`Reply`] GitHub would send. The simulator
//! (`crates/leasehold-sim`) layers its faults on top of it; the core's own tests
//! (`crates/leasehold-core/tests/`) drive their operations against it. The rules are those of
//! `docs/` and the local emulator (`tests/emulator`):
//!
//! * **Contents API, per branch and path.** `GET contents/{path}?ref=`: 200 with the blob sha,
//!   an `ETag` and a `date` header; **304** for an `If-None-Match` that matches the ETag; **404**
//!   for a missing file, and for a missing branch ("No commit found for the ref …").
//!   `PUT contents/{path}` on `branch`: with `sha` on an existing file, the sha must be the
//!   file's current blob sha, else **409**; without `sha` on an existing file, **422**
//!   (`"sha" wasn't supplied`); a **missing file is created whatever the sha** (201: the sha is
//!   ignored); a missing branch is **404**. Every committed version of every file is kept, with
//!   its time, so a caller can serve an older one (a stale read is a fault, not GitHub's rule).
//! * **Git data.** `POST git/trees` and `git/commits` make content-addressed objects (a commit
//!   needs a known tree); `POST git/refs` creates a branch at a known commit, with the files of
//!   its tree, or answers **422 "Reference already exists"**.
//! * **Actions API.** The view of run attempts and jobs that the caller registers
//!   ([`GitHub::set_run_attempt`], [`GitHub::set_job`]): `queued` until started, `in_progress`
//!   until completed, then `completed` with its conclusion (a completion time may lie ahead: the
//!   status follows the clock). `getRunAttempt`, `getJob` and `listJobs` answer from it; an
//!   unknown run, attempt, job or repository is a 404.
//!
//! * **Git refs and GraphQL** (`graphql.rs`). Refs outside `refs/heads/` (leasehold's claims,
//!   `refs/leasehold/claims/<namespace>/<key>`) each point at a commit; commits have parents and
//!   a tree. The GraphQL endpoint answers the core's own documents (`store/refs.rs`), recognised
//!   by their operation name and checked to be exactly the text the core builds: the read
//!   (`LeaseholdReadRefs`: the repository id and each aliased ref with its commit and payload
//!   file), the paginated listing (`LeaseholdListRefs`, 100 a page, alphabetical, a cursor per
//!   position) and the compare-and-swap (`LeaseholdUpdateRefs`): every update checked, then all
//!   applied or none; an exact `beforeOid` (all zeros: the ref must not exist), else 200 with
//!   `errors[]` of type `STALE_DATA` and `data.updateRefs` null; a non-fast-forward without
//!   `force` refused (`UNPROCESSABLE`), as are an unknown object, a ref named twice and a delete
//!   of a missing ref. An unknown repository or node id is `NOT_FOUND`; any other document is
//!   answered as GitHub answers a document it cannot run (200, `errors[]`, no data).
//!   Every version of every ref is kept, with its time.
//!
//! Shas are content hashes (40 hex digits, like git's): identical contents get identical shas.

mod graphql;

use std::collections::BTreeMap;

pub use graphql::{RefMove, RefVersion, REPOSITORY_ID};

// Everything this crate uses of the core's API, in one place.
use leasehold_core::time::format_rfc3339;
use leasehold_core::{Call, Command, JobSummary, Reply};

/// Milliseconds since the Unix epoch, on GitHub's clock.
pub type Millis = u64;

/// One committed version of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub text: String,
    pub sha: String,
    /// When it was committed.
    pub at: Millis,
}

#[derive(Clone, Debug, Default)]
struct Branch {
    /// Every version of every file, oldest first.
    files: BTreeMap<String, Vec<Version>>,
    /// Commits on the branch (its creation, each contents write, unrelated commits).
    commits: u64,
}

/// A run attempt's or a job's life in GitHub's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    pub started_at: Option<Millis>,
    /// When it completes (or completed): from then on it is `completed`, with `conclusion`.
    pub completed_at: Option<Millis>,
    pub conclusion: String,
}

impl Timing {
    pub fn queued() -> Self {
        Timing {
            started_at: None,
            completed_at: None,
            conclusion: String::new(),
        }
    }

    pub fn running(since: Millis) -> Self {
        Timing {
            started_at: Some(since),
            ..Timing::queued()
        }
    }

    pub fn completed(at: Millis, conclusion: &str) -> Self {
        Timing {
            started_at: Some(at),
            completed_at: Some(at),
            conclusion: conclusion.into(),
        }
    }

    /// `queued`, `in_progress` or `completed` at time `t`.
    pub fn status(&self, t: Millis) -> &'static str {
        match (self.started_at, self.completed_at) {
            (_, Some(done)) if t >= done => "completed",
            (Some(start), _) if t >= start => "in_progress",
            _ => "queued",
        }
    }
}

/// A job of a run attempt, as the Actions API knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub repository: String,
    pub run_id: u64,
    pub run_attempt: u32,
    pub name: String,
    /// The runner it was given (reported once it is no longer queued).
    pub runner_name: String,
    pub timing: Timing,
}

/// One answer, and the version it committed when it was a contents write that landed (or the
/// refs it moved when it was an `updateRefs` that landed, all of them at once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub reply: Reply,
    pub committed: Option<Committed>,
    pub moved: Vec<RefMove>,
}

/// A git commit: its tree and its parents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitObject {
    pub tree: String,
    pub parents: Vec<String>,
}

/// Which version a write committed: `history(branch, path)[index]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Committed {
    pub branch: String,
    pub path: String,
    pub index: usize,
}

/// One repository holding leasehold's files, and the Actions view of the runs that use it.
#[derive(Clone, Debug)]
pub struct GitHub {
    default_branch: String,
    branches: BTreeMap<String, Branch>,
    /// Tree sha → its files (path, content).
    trees: BTreeMap<String, Vec<(String, String)>>,
    /// Commit sha → its tree and parents.
    commits: BTreeMap<String, CommitObject>,
    /// Refs outside `refs/heads/` (fully qualified) → every version, oldest first.
    refs: BTreeMap<String, Vec<RefVersion>>,
    /// `owner/name`, as GraphQL's `repository(owner:, name:)` resolves it.
    full_name: String,
    /// (repository, run id, attempt) → its life.
    runs: BTreeMap<(String, u64, u32), Timing>,
    /// Job id → the job.
    jobs: BTreeMap<u64, Job>,
    /// (repository, number) → a pull request's head sha and state (`open`, `closed`).
    pulls: BTreeMap<(String, u64), (String, String)>,
}

/// An answer that is not a success, as GitHub sends it (without headers).
pub fn http(status: u16, message: &str) -> Reply {
    Reply::Http {
        status,
        message: message.into(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    }
}

/// Git's blob id of a file holding `text` (what the contents API answers as its `sha`): the
/// core's own, so that a version the core computes (a state written inside the state branch's
/// first commit) is the one this GitHub answers. Trees and commits are named the same way from
/// a text standing for them: identical objects get identical ids, as in git.
pub fn blob_sha(text: &str) -> String {
    leasehold_core::blob_sha(text)
}

/// The ETag GitHub sends with a file: its sha, quoted.
pub fn etag(sha: &str) -> String {
    format!("\"{sha}\"")
}

/// A 200 for `version` as GitHub sends it (blob sha, `ETag`, `date` header), or 304 when
/// `if_none_match` is its ETag.
pub fn file_reply(version: &Version, if_none_match: Option<&str>, now: Millis) -> Reply {
    let etag = etag(&version.sha);
    if if_none_match == Some(etag.as_str()) {
        return Reply::NotModified {
            date: Some(http_date(now)),
        };
    }
    Reply::File {
        sha: version.sha.clone(),
        content: version.text.clone(),
        etag: Some(etag),
        date: Some(http_date(now)),
    }
}

impl GitHub {
    /// A repository with only its default branch, empty.
    pub fn new(default_branch: &str) -> Self {
        let mut branches = BTreeMap::new();
        branches.insert(
            default_branch.to_string(),
            Branch {
                commits: 1,
                ..Branch::default()
            },
        );
        GitHub {
            default_branch: default_branch.into(),
            branches,
            trees: BTreeMap::new(),
            commits: BTreeMap::new(),
            refs: BTreeMap::new(),
            full_name: "octo/app".into(),
            runs: BTreeMap::new(),
            jobs: BTreeMap::new(),
            pulls: BTreeMap::new(),
        }
    }

    /// Pull request `number` of `repository` has this head and state (`open`, `closed`): a
    /// push moves the head, as on GitHub (docs/github-semantics.md#pull-request-head).
    pub fn set_pull(&mut self, repository: &str, number: u64, head_sha: &str, state: &str) {
        self.pulls.insert(
            (repository.to_string(), number),
            (head_sha.to_string(), state.to_string()),
        );
    }

    /// Names the repository (`owner/name`; `octo/app` unless set).
    pub fn with_full_name(mut self, full_name: &str) -> Self {
        self.full_name = full_name.into();
        self
    }

    pub fn default_branch(&self) -> &str {
        &self.default_branch
    }

    /// Creates an empty branch (setting the scene; the core creates its own through git data).
    pub fn add_branch(&mut self, branch: &str) {
        self.branches.entry(branch.into()).or_insert(Branch {
            commits: 1,
            ..Branch::default()
        });
    }

    /// Deletes a branch and its files (`DELETE git/refs/heads/{branch}`).
    pub fn delete_branch(&mut self, branch: &str) {
        self.branches.remove(branch);
    }

    pub fn has_branch(&self, branch: &str) -> bool {
        self.branches.contains_key(branch)
    }

    /// Commits `text` as the next version of `path` on `branch` (created if missing), whatever
    /// is there: another writer's commit, or setting the scene. Returns the version's index.
    pub fn commit_file(&mut self, branch: &str, path: &str, text: &str, now: Millis) -> usize {
        self.add_branch(branch);
        let b = self.branches.get_mut(branch).expect("just added");
        let history = b.files.entry(path.into()).or_default();
        history.push(Version {
            text: text.into(),
            sha: blob_sha(text),
            at: now,
        });
        b.commits += 1;
        history.len() - 1
    }

    /// Deletes `path` from `branch` (`DELETE /repos/{o}/{r}/contents/{path}`): it reads 404
    /// after, and its history is gone with it.
    pub fn delete_file(&mut self, branch: &str, path: &str) {
        if let Some(b) = self.branches.get_mut(branch) {
            if b.files.remove(path).is_some() {
                b.commits += 1;
            }
        }
    }

    /// Every version of `path` on `branch`, oldest first (empty when the file never existed);
    /// `None` when the branch does not exist.
    pub fn history(&self, branch: &str, path: &str) -> Option<&[Version]> {
        let b = self.branches.get(branch)?;
        Some(b.files.get(path).map_or(&[][..], |h| h.as_slice()))
    }

    /// The current version of `path` on `branch`, if the file exists.
    pub fn current(&self, branch: &str, path: &str) -> Option<&Version> {
        self.history(branch, path)?.last()
    }

    /// Commits on `branch` so far (`None`: no such branch).
    pub fn branch_commits(&self, branch: &str) -> Option<u64> {
        self.branches.get(branch).map(|b| b.commits)
    }

    /// A commit to another file moves `branch` (another workflow's commit). Returns the
    /// branch's commit count after it, `None` for a missing branch.
    pub fn unrelated_commit(&mut self, branch: &str) -> Option<u64> {
        let b = self.branches.get_mut(branch)?;
        b.commits += 1;
        Some(b.commits)
    }

    /// Registers (or updates) a run attempt's life in the Actions view.
    pub fn set_run_attempt(&mut self, repository: &str, run_id: u64, attempt: u32, t: Timing) {
        self.runs.insert((repository.into(), run_id, attempt), t);
    }

    /// Registers (or updates) a job in the Actions view.
    pub fn set_job(&mut self, id: u64, job: Job) {
        self.jobs.insert(id, job);
    }

    pub fn job(&self, id: u64) -> Option<&Job> {
        self.jobs.get(&id)
    }

    pub fn job_mut(&mut self, id: u64) -> Option<&mut Job> {
        self.jobs.get_mut(&id)
    }

    pub fn run_attempt(&self, repository: &str, run_id: u64, attempt: u32) -> Option<&Timing> {
        self.runs.get(&(repository.into(), run_id, attempt))
    }

    pub fn run_attempt_mut(
        &mut self,
        repository: &str,
        run_id: u64,
        attempt: u32,
    ) -> Option<&mut Timing> {
        self.runs.get_mut(&(repository.into(), run_id, attempt))
    }

    /// GitHub answering one request command at time `now`. Not for `sleep` or `finish` (no
    /// request): those answer a 400.
    pub fn answer(&mut self, command: &Command, now: Millis) -> Answer {
        let mut committed = None;
        let Command::Request { call, .. } = command else {
            return Answer {
                reply: http(400, "not a request"),
                committed,
                moved: Vec::new(),
            };
        };
        let mut moved = Vec::new();
        let reply = match call {
            // The commits of `branch` that changed `path`, newest first, 100 a page; each named
            // `<branch>@<index of its version>` (what a read with that ref answers).
            Call::ListCommits { path, branch, page } => match self.history(branch, path) {
                None => http(404, &format!("No commit found for SHA: {branch}")),
                Some(h) => {
                    let ids: Vec<String> = (0..h.len())
                        .rev()
                        .map(|i| format!("{branch}@{i}"))
                        .collect();
                    let from = (*page as usize).saturating_sub(1).saturating_mul(100);
                    let to = from.saturating_add(100).min(ids.len());
                    Reply::Commits {
                        shas: ids
                            .get(from..to)
                            .map(<[String]>::to_vec)
                            .unwrap_or_default(),
                        next: (to < ids.len()).then(|| {
                            format!(
                                "https://api.github.com/commits?path={path}&page={}",
                                page + 1
                            )
                        }),
                        date: Some(http_date(now)),
                    }
                }
            },
            Call::ReadFile {
                path,
                git_ref,
                if_none_match,
                ..
            } => self.read(path, git_ref.as_deref(), if_none_match.as_deref(), now),
            Call::WriteFile {
                path,
                branch,
                content,
                sha,
                ..
            } => {
                let (reply, index) = self.write(path, branch, content, sha.as_deref(), now);
                committed = index.map(|index| Committed {
                    branch: branch.clone(),
                    path: path.clone(),
                    index,
                });
                reply
            }
            Call::CreateTree { files, .. } => {
                let files: Vec<(String, String)> = files
                    .iter()
                    .map(|f| (f.path.clone(), f.content.clone()))
                    .collect();
                self.create_tree(files)
            }
            Call::CreateCommit {
                message,
                tree,
                parents,
            } => self.create_commit(tree, parents, message),
            Call::CreateBranch { branch, sha, .. } => self.create_branch(branch, sha, now),
            // Not modelled: slot allocation (ops/slots.rs) is tested by its own transcripts
            // and against the emulator; the simulation has no slot clients.
            Call::CreateRef { .. } | Call::GetRef { .. } | Call::ListMatchingRefs { .. } => {
                http(404, "slot refs are not modelled")
            }
            Call::GetPullRequest { repository, number } => {
                match self.pulls.get(&(repository.clone(), *number)) {
                    Some((head, state)) => Reply::PullRequest {
                        number: *number,
                        head_sha: head.clone(),
                        state: state.clone(),
                        merged: false,
                        date: Some(http_date(now)),
                    },
                    None => http(404, "Not Found"),
                }
            }
            // Not modelled: receipts and alerts (ops/receipt.rs, ops/audit.rs) are tested by
            // their own transcripts and against the emulator; the simulation has neither.
            Call::GetViewer
            | Call::ListComments { .. }
            | Call::CreateComment { .. }
            | Call::ListWorkflowRuns { .. }
            | Call::ListIssues { .. }
            | Call::CreateIssue { .. }
            | Call::UpdateIssue { .. } => http(404, "issues and comments are not modelled"),
            Call::Graphql {
                document,
                variables,
            } => {
                let (reply, m) = self.graphql(document, variables, now);
                moved = m;
                reply
            }
            Call::GetRunAttempt {
                repository,
                run_id,
                attempt,
                ..
            } => match self.runs.get(&(repository.clone(), *run_id, *attempt)) {
                None => http(404, "Not Found"),
                Some(t) => {
                    let status = t.status(now);
                    Reply::Run {
                        run_id: *run_id,
                        run_attempt: Some(*attempt),
                        status: Some(status.into()),
                        conclusion: (status == "completed").then(|| t.conclusion.clone()),
                        date: Some(http_date(now)),
                    }
                }
            },
            Call::GetJob {
                repository, job_id, ..
            } => match self
                .jobs
                .get(job_id)
                .filter(|j| &j.repository == repository)
            {
                None => http(404, "Not Found"),
                Some(j) => {
                    let status = j.timing.status(now);
                    Reply::Job {
                        id: *job_id,
                        run_id: j.run_id,
                        run_attempt: Some(j.run_attempt),
                        name: j.name.clone(),
                        status: status.into(),
                        conclusion: (status == "completed").then(|| j.timing.conclusion.clone()),
                        runner_name: (status != "queued").then(|| j.runner_name.clone()),
                        completed_at: j
                            .timing
                            .completed_at
                            .filter(|_| status == "completed")
                            .map(format_rfc3339),
                        date: Some(http_date(now)),
                    }
                }
            },
            Call::ListJobs {
                repository,
                run_id,
                attempt,
                ..
            } => {
                if !self
                    .runs
                    .contains_key(&(repository.clone(), *run_id, *attempt))
                {
                    http(404, "Not Found")
                } else {
                    let jobs: Vec<JobSummary> = self
                        .jobs
                        .iter()
                        .filter(|(_, j)| {
                            &j.repository == repository
                                && j.run_id == *run_id
                                && j.run_attempt == *attempt
                        })
                        .map(|(id, j)| {
                            let status = j.timing.status(now);
                            JobSummary {
                                id: *id,
                                name: j.name.clone(),
                                status: status.into(),
                                conclusion: (status == "completed")
                                    .then(|| j.timing.conclusion.clone()),
                                runner_name: (status != "queued").then(|| j.runner_name.clone()),
                            }
                        })
                        .collect();
                    Reply::Jobs {
                        total_count: jobs.len() as u64,
                        jobs: jobs.into_iter().take(100).collect(),
                        date: Some(http_date(now)),
                    }
                }
            }
        };
        Answer {
            reply,
            committed,
            moved,
        }
    }

    /// `GET contents/{path}?ref=` (no ref: the default branch).
    fn read(
        &self,
        path: &str,
        git_ref: Option<&str>,
        if_none_match: Option<&str>,
        now: Millis,
    ) -> Reply {
        let branch = git_ref.unwrap_or(&self.default_branch);
        // A version named as `listCommits` names it: `<branch>@<index>`.
        if let Some((b, i)) = branch.rsplit_once('@') {
            if let (Some(h), Ok(i)) = (self.history(b, path), i.parse::<usize>()) {
                return match h.get(i) {
                    Some(v) => file_reply(v, if_none_match, now),
                    None => http(404, "Not Found"),
                };
            }
        }
        match self.history(branch, path) {
            None => http(404, &format!("No commit found for the ref {branch}")),
            Some(h) => match h.last() {
                None => http(404, "Not Found"),
                Some(v) => file_reply(v, if_none_match, now),
            },
        }
    }

    /// `PUT contents/{path}` on `branch`: the answer, and the index of the version committed
    /// when it was.
    fn write(
        &mut self,
        path: &str,
        branch: &str,
        content: &str,
        sha: Option<&str>,
        now: Millis,
    ) -> (Reply, Option<usize>) {
        let Some(history) = self.history(branch, path) else {
            return (http(404, &format!("Branch {branch} not found")), None);
        };
        match (history.last(), sha) {
            (Some(_), None) => {
                return (
                    http(422, "Invalid request.\n\n\"sha\" wasn't supplied."),
                    None,
                );
            }
            (Some(cur), Some(s)) if cur.sha != s => {
                return (http(409, &format!("{path} does not match {s}")), None);
            }
            // The right sha on an existing file, or a missing file: created whatever the sha.
            _ => {}
        }
        let index = self.commit_file(branch, path, content, now);
        (
            Reply::Written {
                sha: blob_sha(content),
                date: Some(http_date(now)),
            },
            Some(index),
        )
    }

    fn create_tree(&mut self, files: Vec<(String, String)>) -> Reply {
        let mut text = String::from("tree");
        for (path, content) in &files {
            text.push_str(&format!("\0{path}\0{content}"));
        }
        let sha = blob_sha(&text);
        self.trees.entry(sha.clone()).or_insert(files);
        Reply::Created { sha }
    }

    fn create_commit(&mut self, tree: &str, parents: &[String], message: &str) -> Reply {
        if !self.trees.contains_key(tree) {
            return http(422, "Tree SHA does not exist");
        }
        if parents.iter().any(|p| !self.commits.contains_key(p)) {
            return http(422, "Parent SHA does not exist or is not a commit object");
        }
        let sha = blob_sha(&format!(
            "commit\0{tree}\0{}\0{message}",
            parents.join("\0")
        ));
        self.commits
            .entry(sha.clone())
            .or_insert_with(|| CommitObject {
                tree: tree.to_string(),
                parents: parents.to_vec(),
            });
        Reply::Created { sha }
    }

    /// A commit object, if it exists.
    pub fn commit(&self, sha: &str) -> Option<&CommitObject> {
        self.commits.get(sha)
    }

    /// The content of `path` in `commit`'s tree.
    pub fn file_at(&self, commit: &str, path: &str) -> Option<&str> {
        let c = self.commits.get(commit)?;
        self.trees
            .get(&c.tree)?
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, content)| content.as_str())
    }

    /// Trees made so far.
    pub fn tree_count(&self) -> usize {
        self.trees.len()
    }

    fn create_branch(&mut self, branch: &str, sha: &str, now: Millis) -> Reply {
        let Some(CommitObject { tree, .. }) = self.commits.get(sha) else {
            return http(422, "Object does not exist");
        };
        if self.branches.contains_key(branch) {
            return http(422, "Reference already exists");
        }
        let files = self.trees[tree]
            .iter()
            .map(|(path, content)| {
                let v = Version {
                    text: content.clone(),
                    sha: blob_sha(content),
                    at: now,
                };
                (path.clone(), vec![v])
            })
            .collect();
        self.branches
            .insert(branch.into(), Branch { files, commits: 1 });
        Reply::Created {
            sha: sha.to_string(),
        }
    }
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as GitHub's `date` and `retry-after`
/// headers carry it.
pub fn http_date(ms: Millis) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        DAYS[((days + 4) % 7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasehold_core::time::parse_http_date;
    use leasehold_core::TreeFile;

    const STATE: &str = "locks/x.json";

    fn req(call: Call) -> Command {
        Command::Request {
            call,
            timeout_ms: 1,
        }
    }

    fn put(path: &str, branch: &str, content: &str, sha: Option<&str>) -> Command {
        req(Call::WriteFile {
            path: path.into(),
            branch: branch.into(),
            content: content.into(),
            sha: sha.map(String::from),
            message: "m".into(),
        })
    }

    fn get(path: &str, git_ref: Option<&str>, if_none_match: Option<&str>) -> Command {
        req(Call::ReadFile {
            path: path.into(),
            git_ref: git_ref.map(String::from),
            if_none_match: if_none_match.map(String::from),
        })
    }

    fn status(r: &Reply) -> u16 {
        match r {
            Reply::Http { status, .. } => *status,
            Reply::Written { .. } | Reply::Created { .. } => 201,
            Reply::NotModified { .. } => 304,
            _ => 200,
        }
    }

    #[test]
    fn http_dates_round_trip_through_the_core() {
        for ms in [
            0,
            784_111_777_000,
            951_782_400_000,
            1_800_000_000_000,
            4_102_444_799_000,
        ] {
            assert_eq!(
                parse_http_date(&http_date(ms)),
                Some(ms),
                "{}",
                http_date(ms)
            );
        }
        assert_eq!(http_date(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    #[test]
    fn contents_put_is_a_compare_and_swap() {
        let mut g = GitHub::new("main");
        let a = g.answer(&put(STATE, "state", "a", None), 1);
        assert_eq!((status(&a.reply), a.committed), (404, None), "no branch");
        g.add_branch("state");
        // A missing file is created whatever the sha.
        let a = g.answer(&put(STATE, "state", "v1", Some("whatever")), 1);
        assert!(matches!(a.reply, Reply::Written { .. }));
        assert_eq!(a.committed.map(|c| c.index), Some(0));
        assert_eq!(
            status(&g.answer(&put(STATE, "state", "v2", None), 2).reply),
            422
        );
        let stale = g.answer(&put(STATE, "state", "v2", Some("stale")), 2);
        assert_eq!((status(&stale.reply), stale.committed), (409, None));
        let sha = g.current("state", STATE).unwrap().sha.clone();
        let a = g.answer(&put(STATE, "state", "v2", Some(&sha)), 3);
        assert_eq!(a.committed.map(|c| c.index), Some(1));
        assert_eq!(g.history("state", STATE).unwrap().len(), 2);
        // Another branch is another file.
        assert_eq!(
            status(&g.answer(&get(STATE, Some("main"), None), 3).reply),
            404
        );
    }

    #[test]
    fn reads_answer_304_for_a_matching_etag_and_404_for_a_missing_branch() {
        let mut g = GitHub::new("main");
        g.commit_file("main", "locks/x.config.json", "{}", 0);
        let Reply::File {
            etag: Some(tag), ..
        } = g.answer(&get("locks/x.config.json", None, None), 5).reply
        else {
            panic!("a file with an etag");
        };
        assert_eq!(
            g.answer(&get("locks/x.config.json", None, Some(&tag)), 6)
                .reply,
            Reply::NotModified {
                date: Some(http_date(6))
            }
        );
        assert_eq!(
            status(
                &g.answer(&get("locks/x.config.json", None, Some("\"other\"")), 6)
                    .reply
            ),
            200
        );
        match g.answer(&get(STATE, Some("gone"), None), 6).reply {
            Reply::Http {
                status: 404,
                message,
                ..
            } => assert!(message.contains("No commit found"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_branch_is_created_once_from_a_known_commit_with_its_tree() {
        let mut g = GitHub::new("main");
        let tree = g
            .answer(
                &req(Call::CreateTree {
                    files: vec![TreeFile {
                        path: "README.md".into(),
                        content: "hi".into(),
                    }],
                }),
                0,
            )
            .reply;
        let Reply::Created { sha: tree } = tree else {
            panic!("{tree:?}")
        };
        let commit = |tree: &str| {
            req(Call::CreateCommit {
                parents: Vec::new(),
                message: "m".into(),
                tree: tree.into(),
            })
        };
        assert_eq!(status(&g.answer(&commit("nope"), 0).reply), 422);
        let Reply::Created { sha: commit_sha } = g.answer(&commit(&tree), 0).reply else {
            panic!()
        };
        let branch = |sha: &str| {
            req(Call::CreateBranch {
                branch: "state".into(),
                sha: sha.into(),
            })
        };
        assert_eq!(status(&g.answer(&branch("nope"), 0).reply), 422);
        assert_eq!(status(&g.answer(&branch(&commit_sha), 0).reply), 201);
        match g.answer(&branch(&commit_sha), 0).reply {
            Reply::Http {
                status: 422,
                message,
                ..
            } => assert_eq!(message, "Reference already exists"),
            other => panic!("{other:?}"),
        }
        assert_eq!(g.current("state", "README.md").unwrap().text, "hi");
        assert_eq!(g.history("state", STATE), Some(&[][..]));
    }

    #[test]
    fn the_actions_view_follows_the_clock() {
        let mut g = GitHub::new("main");
        let life = Timing {
            started_at: Some(10),
            completed_at: Some(20),
            conclusion: "failure".into(),
        };
        g.set_run_attempt("o/a", 7, 2, life.clone());
        g.set_job(
            99,
            Job {
                repository: "o/a".into(),
                run_id: 7,
                run_attempt: 2,
                name: "build".into(),
                runner_name: "r1".into(),
                timing: life,
            },
        );
        let run = |t| {
            g.clone()
                .answer(
                    &req(Call::GetRunAttempt {
                        repository: "o/a".into(),
                        run_id: 7,
                        attempt: 2,
                    }),
                    t,
                )
                .reply
        };
        for (t, want) in [(5, "queued"), (10, "in_progress"), (20, "completed")] {
            match run(t) {
                Reply::Run {
                    status, conclusion, ..
                } => {
                    assert_eq!(status.as_deref(), Some(want));
                    assert_eq!(conclusion.is_some(), want == "completed");
                }
                other => panic!("{other:?}"),
            }
        }
        let job = |g: &mut GitHub, repository: &str, t| {
            g.answer(
                &req(Call::GetJob {
                    repository: repository.into(),
                    job_id: 99,
                }),
                t,
            )
            .reply
        };
        match job(&mut g, "o/a", 30) {
            Reply::Job {
                runner_name,
                completed_at,
                run_attempt,
                ..
            } => {
                assert_eq!(runner_name.as_deref(), Some("r1"));
                assert_eq!(completed_at, Some(format_rfc3339(20)));
                assert_eq!(run_attempt, Some(2));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(status(&job(&mut g, "o/other", 30)), 404);
        match g
            .answer(
                &req(Call::ListJobs {
                    repository: "o/a".into(),
                    run_id: 7,
                    attempt: 2,
                }),
                5,
            )
            .reply
        {
            Reply::Jobs {
                total_count, jobs, ..
            } => {
                assert_eq!(total_count, 1);
                assert_eq!(
                    (jobs[0].status.as_str(), &jobs[0].runner_name),
                    ("queued", &None)
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
