//! What the core asks the driver to do next: one [`Command`] per [`Step`].
//!
//! In Rust a command is a request ([`Call`] plus its time limit), a sleep or a finish, so the
//! time limit is one field, set in one place. On the wire it is the flat object the drivers have
//! always read, tagged by `kind` with `timeoutMs` beside the call's own fields
//! (`{"kind":"readFile","path":…,"timeoutMs":15000}`): [`WireCommand`] is that shape, and the
//! conversion between the two is total both ways.

use serde::{Deserialize, Serialize};

use super::outcome::Outcome;
use super::time::Millis;

/// One file in a new tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct TreeFile {
    pub path: String,
    pub content: String,
}

/// A request to GitHub, without its time limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `GET /repos/{repository}/contents/{path}?ref={ref}`; no `ref` means the default branch.
    /// With `ifNoneMatch`, send `If-None-Match` and expect `notModified` on 304.
    ReadFile {
        path: String,
        git_ref: Option<String>,
        if_none_match: Option<String>,
    },
    /// `PUT /repos/{repository}/contents/{path}` with `branch`, the content (base64-encode it)
    /// and, when present, the `sha` precondition.
    WriteFile {
        path: String,
        branch: String,
        content: String,
        sha: Option<String>,
        message: String,
    },
    /// `POST /repos/{repository}/git/trees` with these files (mode 100644, no base tree).
    CreateTree { files: Vec<TreeFile> },
    /// `POST /repos/{repository}/git/commits` with this tree and these parents (none starts an
    /// orphan history).
    CreateCommit {
        message: String,
        tree: String,
        parents: Vec<String>,
    },
    /// `POST /repos/{repository}/git/refs` for `refs/heads/{branch}` at `sha`.
    CreateBranch { branch: String, sha: String },
    /// `POST /repos/{repository}/git/refs` for `ref` (a full name, `refs/…`) at `sha`: an atomic
    /// create-if-absent (docs/github-semantics.md#git-refs). Answer `created`; 422 "Reference
    /// already exists" when it exists. ([`Call::CreateBranch`] is the same request for
    /// `refs/heads/…`, kept as it was on the wire.)
    CreateRef { ref_name: String, sha: String },
    /// `GET /repos/{repository}/git/ref/{ref without "refs/"}`: one ref, exactly. Answer
    /// `gitRef`; 404 when it does not exist.
    GetRef { ref_name: String },
    /// `GET /repos/{repository}/git/matching-refs/{prefix without "refs/"}`, with `?page={page}`
    /// from the second page on (page 1 is sent without it). Answer `refs` with every ref of the
    /// answer and the `rel="next"` target of its `Link` header, as it came
    /// (docs/github-semantics.md#git-refs).
    ListMatchingRefs { prefix: String, page: u32 },
    /// `GET /repos/{repository}/commits?sha={branch}&path={path}&per_page=100&page={page}`: the
    /// commits of `branch` that changed `path`, newest first (`repair` reads a state's history).
    ListCommits {
        path: String,
        branch: String,
        page: u32,
    },
    /// `POST /graphql` with `{"query": document, "variables": variables}`, exactly as given (the
    /// documents are the core's constants, `crate::store::claim`). Answer `graphql` with what
    /// GitHub returned (a 200 with `errors[]` is still `graphql`: the core classifies it).
    Graphql {
        document: String,
        variables: serde_json::Value,
    },
    /// `GET /repos/{repository}/actions/runs/{runId}/attempts/{attempt}` (Actions API, on the
    /// repository the run belongs to, not the lock repository). Answer `run`.
    GetRunAttempt {
        repository: String,
        run_id: u64,
        attempt: u32,
    },
    /// `GET /repos/{repository}/actions/jobs/{jobId}`. Answer `job`.
    GetJob { repository: String, job_id: u64 },
    /// `GET /repos/{repository}/actions/runs/{runId}/attempts/{attempt}/jobs?per_page=100`, the
    /// first page only. Answer `jobs`.
    ListJobs {
        repository: String,
        run_id: u64,
        attempt: u32,
    },
    /// `GET /user`: the account the token acts as. Answer `user`. An installation token (the
    /// job's `GITHUB_TOKEN` is one) is answered 403 "Resource not accessible by integration"
    /// (docs/github-semantics.md#token-identity).
    GetViewer,
    /// `GET /repos/{repository}/issues/{number}/comments?per_page=100`, with `&page={page}` from
    /// the second page on. Answer `comments`, with the `rel="next"` target of its `Link` header.
    ListComments {
        repository: String,
        number: u64,
        page: u32,
    },
    /// `POST /repos/{repository}/issues/{number}/comments` with `body`. Answer `posted`.
    CreateComment {
        repository: String,
        number: u64,
        body: String,
    },
    /// `GET /repos/{repository}/pulls/{number}`. Answer `pullRequest`.
    GetPullRequest { repository: String, number: u64 },
    /// `GET /repos/{repository}/actions/workflows/{workflow}/runs?event={event}&per_page=1`: the
    /// latest run of a workflow (its file name or id) for one event. Answer `workflowRuns`.
    ListWorkflowRuns {
        repository: String,
        workflow: String,
        event: String,
    },
    /// `GET /repos/{repository}/issues?state=open&per_page=100`, with `&page={page}` from the
    /// second page on. Answer `issues` (pull requests included, marked), with the next page.
    ListIssues { repository: String, page: u32 },
    /// `POST /repos/{repository}/issues` with `title` and `body`. Answer `posted`.
    CreateIssue {
        repository: String,
        title: String,
        body: String,
    },
    /// `PATCH /repos/{repository}/issues/{number}` with the fields given (`body`, `state`:
    /// `open` or `closed`). Answer `posted`.
    UpdateIssue {
        repository: String,
        number: u64,
        body: Option<String>,
        state: Option<String>,
    },
}

impl Call {
    /// A stable name for logs and protocol errors (the `kind` on the wire).
    pub fn name(&self) -> &'static str {
        match self {
            Call::ReadFile { .. } => "readFile",
            Call::WriteFile { .. } => "writeFile",
            Call::CreateTree { .. } => "createTree",
            Call::CreateCommit { .. } => "createCommit",
            Call::CreateBranch { .. } => "createBranch",
            Call::CreateRef { .. } => "createRef",
            Call::GetRef { .. } => "getRef",
            Call::ListMatchingRefs { .. } => "listMatchingRefs",
            Call::ListCommits { .. } => "listCommits",
            Call::Graphql { .. } => "graphql",
            Call::GetRunAttempt { .. } => "getRunAttempt",
            Call::GetJob { .. } => "getJob",
            Call::ListJobs { .. } => "listJobs",
            Call::GetViewer => "getViewer",
            Call::ListComments { .. } => "listComments",
            Call::CreateComment { .. } => "createComment",
            Call::GetPullRequest { .. } => "getPullRequest",
            Call::ListWorkflowRuns { .. } => "listWorkflowRuns",
            Call::ListIssues { .. } => "listIssues",
            Call::CreateIssue { .. } => "createIssue",
            Call::UpdateIssue { .. } => "updateIssue",
        }
    }

    /// A question to the Actions API (not a request about the lock's own documents).
    pub fn is_lookup(&self) -> bool {
        matches!(
            self,
            Call::GetRunAttempt { .. } | Call::GetJob { .. } | Call::ListJobs { .. }
        )
    }
}

/// What the driver must do next. Every request carries its own time limit (`timeoutMs`): the
/// driver aborts it then and answers `transport { sent: true }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "WireCommand", from = "WireCommand")]
pub enum Command {
    /// Send this request; abort it after `timeout_ms`.
    Request { call: Call, timeout_ms: Millis },
    /// Feed `timer` at (or after) `untilMs`.
    Sleep {
        until_ms: Millis,
        reason: SleepReason,
    },
    /// The operation is over: write the outputs and exit.
    Finish { outcome: Box<Outcome> },
}

impl Command {
    pub fn is_request(&self) -> bool {
        matches!(self, Command::Request { .. })
    }

    /// The request, when this is one.
    pub fn call(&self) -> Option<&Call> {
        match self {
            Command::Request { call, .. } => Some(call),
            Command::Sleep { .. } | Command::Finish { .. } => None,
        }
    }

    /// The request's time limit, when this is one.
    pub fn timeout_ms(&self) -> Option<Millis> {
        match self {
            Command::Request { timeout_ms, .. } => Some(*timeout_ms),
            Command::Sleep { .. } | Command::Finish { .. } => None,
        }
    }

    /// A stable name for logs and protocol errors.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Request { call, .. } => call.name(),
            Command::Sleep { .. } => "sleep",
            Command::Finish { .. } => "finish",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "kebab-case")]
pub enum SleepReason {
    /// Waiting in the queue for a slot.
    Poll,
    /// Waiting before retrying a request that failed.
    Backoff,
    /// Waiting because GitHub said so (rate limit).
    RateLimit,
    /// A short pause after repeated compare-and-swap conflicts.
    Contention,
    /// A read came back older than one already seen (a stale cache): read again shortly.
    StaleRead,
    /// Keeping this operation's writes about a second apart, as GitHub asks.
    WriteSpacing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
pub struct LogLine {
    pub level: Level,
    pub text: String,
}

/// The core's answer to one event: the command to perform, and lines to log.
#[must_use = "a step names the one thing the driver must do next"]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
pub struct Step {
    pub command: Command,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogLine>,
}

/// A [`Command`] as it is written on the wire: flat, tagged by `kind`, the time limit beside the
/// call's fields. Only for serde.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum WireCommand {
    #[serde(rename_all = "camelCase")]
    ReadFile {
        path: String,
        #[serde(rename = "ref", skip_serializing_if = "Option::is_none", default)]
        git_ref: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        if_none_match: Option<String>,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    WriteFile {
        path: String,
        branch: String,
        content: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        sha: Option<String>,
        message: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    CreateTree {
        files: Vec<TreeFile>,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    CreateCommit {
        message: String,
        tree: String,
        #[serde(skip_serializing_if = "Vec::is_empty", default)]
        parents: Vec<String>,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    CreateBranch {
        branch: String,
        sha: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    CreateRef {
        #[serde(rename = "ref")]
        ref_name: String,
        sha: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    GetRef {
        #[serde(rename = "ref")]
        ref_name: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    ListMatchingRefs {
        prefix: String,
        page: u32,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    ListCommits {
        path: String,
        branch: String,
        page: u32,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    Graphql {
        document: String,
        variables: serde_json::Value,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    GetRunAttempt {
        repository: String,
        run_id: u64,
        attempt: u32,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    GetJob {
        repository: String,
        job_id: u64,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    ListJobs {
        repository: String,
        run_id: u64,
        attempt: u32,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    GetViewer {
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    ListComments {
        repository: String,
        number: u64,
        page: u32,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    CreateComment {
        repository: String,
        number: u64,
        body: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    GetPullRequest {
        repository: String,
        number: u64,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    ListWorkflowRuns {
        repository: String,
        workflow: String,
        event: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    ListIssues {
        repository: String,
        page: u32,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    CreateIssue {
        repository: String,
        title: String,
        body: String,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    UpdateIssue {
        repository: String,
        number: u64,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        body: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        state: Option<String>,
        timeout_ms: Millis,
    },
    #[serde(rename_all = "camelCase")]
    Sleep {
        until_ms: Millis,
        reason: SleepReason,
    },
    Finish {
        outcome: Box<Outcome>,
    },
}

impl From<Command> for WireCommand {
    fn from(c: Command) -> Self {
        use WireCommand as W;
        let (call, timeout_ms) = match c {
            Command::Sleep { until_ms, reason } => return W::Sleep { until_ms, reason },
            Command::Finish { outcome } => return W::Finish { outcome },
            Command::Request { call, timeout_ms } => (call, timeout_ms),
        };
        match call {
            Call::ReadFile {
                path,
                git_ref,
                if_none_match,
            } => W::ReadFile {
                path,
                git_ref,
                if_none_match,
                timeout_ms,
            },
            Call::WriteFile {
                path,
                branch,
                content,
                sha,
                message,
            } => W::WriteFile {
                path,
                branch,
                content,
                sha,
                message,
                timeout_ms,
            },
            Call::CreateTree { files } => W::CreateTree { files, timeout_ms },
            Call::CreateCommit {
                message,
                tree,
                parents,
            } => W::CreateCommit {
                message,
                tree,
                parents,
                timeout_ms,
            },
            Call::Graphql {
                document,
                variables,
            } => W::Graphql {
                document,
                variables,
                timeout_ms,
            },
            Call::CreateBranch { branch, sha } => W::CreateBranch {
                branch,
                sha,
                timeout_ms,
            },
            Call::CreateRef { ref_name, sha } => W::CreateRef {
                ref_name,
                sha,
                timeout_ms,
            },
            Call::GetRef { ref_name } => W::GetRef {
                ref_name,
                timeout_ms,
            },
            Call::ListMatchingRefs { prefix, page } => W::ListMatchingRefs {
                prefix,
                page,
                timeout_ms,
            },
            Call::ListCommits { path, branch, page } => W::ListCommits {
                path,
                branch,
                page,
                timeout_ms,
            },
            Call::GetRunAttempt {
                repository,
                run_id,
                attempt,
            } => W::GetRunAttempt {
                repository,
                run_id,
                attempt,
                timeout_ms,
            },
            Call::GetJob { repository, job_id } => W::GetJob {
                repository,
                job_id,
                timeout_ms,
            },
            Call::ListJobs {
                repository,
                run_id,
                attempt,
            } => W::ListJobs {
                repository,
                run_id,
                attempt,
                timeout_ms,
            },
            Call::GetViewer => W::GetViewer { timeout_ms },
            Call::ListComments {
                repository,
                number,
                page,
            } => W::ListComments {
                repository,
                number,
                page,
                timeout_ms,
            },
            Call::CreateComment {
                repository,
                number,
                body,
            } => W::CreateComment {
                repository,
                number,
                body,
                timeout_ms,
            },
            Call::GetPullRequest { repository, number } => W::GetPullRequest {
                repository,
                number,
                timeout_ms,
            },
            Call::ListWorkflowRuns {
                repository,
                workflow,
                event,
            } => W::ListWorkflowRuns {
                repository,
                workflow,
                event,
                timeout_ms,
            },
            Call::ListIssues { repository, page } => W::ListIssues {
                repository,
                page,
                timeout_ms,
            },
            Call::CreateIssue {
                repository,
                title,
                body,
            } => W::CreateIssue {
                repository,
                title,
                body,
                timeout_ms,
            },
            Call::UpdateIssue {
                repository,
                number,
                body,
                state,
            } => W::UpdateIssue {
                repository,
                number,
                body,
                state,
                timeout_ms,
            },
        }
    }
}

impl From<WireCommand> for Command {
    fn from(w: WireCommand) -> Self {
        use WireCommand as W;
        let request = |call, timeout_ms| Command::Request { call, timeout_ms };
        match w {
            W::Sleep { until_ms, reason } => Command::Sleep { until_ms, reason },
            W::Finish { outcome } => Command::Finish { outcome },
            W::ReadFile {
                path,
                git_ref,
                if_none_match,
                timeout_ms,
            } => request(
                Call::ReadFile {
                    path,
                    git_ref,
                    if_none_match,
                },
                timeout_ms,
            ),
            W::WriteFile {
                path,
                branch,
                content,
                sha,
                message,
                timeout_ms,
            } => request(
                Call::WriteFile {
                    path,
                    branch,
                    content,
                    sha,
                    message,
                },
                timeout_ms,
            ),
            W::CreateTree { files, timeout_ms } => request(Call::CreateTree { files }, timeout_ms),
            W::CreateCommit {
                message,
                tree,
                parents,
                timeout_ms,
            } => request(
                Call::CreateCommit {
                    message,
                    tree,
                    parents,
                },
                timeout_ms,
            ),
            W::Graphql {
                document,
                variables,
                timeout_ms,
            } => request(
                Call::Graphql {
                    document,
                    variables,
                },
                timeout_ms,
            ),
            W::CreateBranch {
                branch,
                sha,
                timeout_ms,
            } => request(Call::CreateBranch { branch, sha }, timeout_ms),
            W::CreateRef {
                ref_name,
                sha,
                timeout_ms,
            } => request(Call::CreateRef { ref_name, sha }, timeout_ms),
            W::GetRef {
                ref_name,
                timeout_ms,
            } => request(Call::GetRef { ref_name }, timeout_ms),
            W::ListMatchingRefs {
                prefix,
                page,
                timeout_ms,
            } => request(Call::ListMatchingRefs { prefix, page }, timeout_ms),
            W::ListCommits {
                path,
                branch,
                page,
                timeout_ms,
            } => request(Call::ListCommits { path, branch, page }, timeout_ms),
            W::GetRunAttempt {
                repository,
                run_id,
                attempt,
                timeout_ms,
            } => request(
                Call::GetRunAttempt {
                    repository,
                    run_id,
                    attempt,
                },
                timeout_ms,
            ),
            W::GetJob {
                repository,
                job_id,
                timeout_ms,
            } => request(Call::GetJob { repository, job_id }, timeout_ms),
            W::ListJobs {
                repository,
                run_id,
                attempt,
                timeout_ms,
            } => request(
                Call::ListJobs {
                    repository,
                    run_id,
                    attempt,
                },
                timeout_ms,
            ),
            W::GetViewer { timeout_ms } => request(Call::GetViewer, timeout_ms),
            W::ListComments {
                repository,
                number,
                page,
                timeout_ms,
            } => request(
                Call::ListComments {
                    repository,
                    number,
                    page,
                },
                timeout_ms,
            ),
            W::CreateComment {
                repository,
                number,
                body,
                timeout_ms,
            } => request(
                Call::CreateComment {
                    repository,
                    number,
                    body,
                },
                timeout_ms,
            ),
            W::GetPullRequest {
                repository,
                number,
                timeout_ms,
            } => request(Call::GetPullRequest { repository, number }, timeout_ms),
            W::ListWorkflowRuns {
                repository,
                workflow,
                event,
                timeout_ms,
            } => request(
                Call::ListWorkflowRuns {
                    repository,
                    workflow,
                    event,
                },
                timeout_ms,
            ),
            W::ListIssues {
                repository,
                page,
                timeout_ms,
            } => request(Call::ListIssues { repository, page }, timeout_ms),
            W::CreateIssue {
                repository,
                title,
                body,
                timeout_ms,
            } => request(
                Call::CreateIssue {
                    repository,
                    title,
                    body,
                },
                timeout_ms,
            ),
            W::UpdateIssue {
                repository,
                number,
                body,
                state,
                timeout_ms,
            } => request(
                Call::UpdateIssue {
                    repository,
                    number,
                    body,
                    state,
                },
                timeout_ms,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Outcome, ResultWord};

    fn request(call: Call) -> Command {
        Command::Request {
            call,
            timeout_ms: 15_000,
        }
    }

    /// The JSON of every command, byte for byte as the drivers have always read it.
    #[test]
    fn commands_keep_their_wire_form() {
        let cases = [
            (
                request(Call::ReadFile {
                    path: "locks/a.json".into(),
                    git_ref: Some("leasehold-state".into()),
                    if_none_match: Some("\"e\"".into()),
                }),
                r#"{"kind":"readFile","path":"locks/a.json","ref":"leasehold-state","ifNoneMatch":"\"e\"","timeoutMs":15000}"#,
            ),
            (
                request(Call::ReadFile {
                    path: "locks/a.config.json".into(),
                    git_ref: None,
                    if_none_match: None,
                }),
                r#"{"kind":"readFile","path":"locks/a.config.json","timeoutMs":15000}"#,
            ),
            (
                request(Call::WriteFile {
                    path: "locks/a.json".into(),
                    branch: "b".into(),
                    content: "{}\n".into(),
                    sha: Some("s".into()),
                    message: "m".into(),
                }),
                r#"{"kind":"writeFile","path":"locks/a.json","branch":"b","content":"{}\n","sha":"s","message":"m","timeoutMs":15000}"#,
            ),
            (
                request(Call::WriteFile {
                    path: "p".into(),
                    branch: "b".into(),
                    content: "c".into(),
                    sha: None,
                    message: "m".into(),
                }),
                r#"{"kind":"writeFile","path":"p","branch":"b","content":"c","message":"m","timeoutMs":15000}"#,
            ),
            (
                request(Call::CreateTree {
                    files: vec![TreeFile {
                        path: "README.md".into(),
                        content: "x".into(),
                    }],
                }),
                r#"{"kind":"createTree","files":[{"path":"README.md","content":"x"}],"timeoutMs":15000}"#,
            ),
            (
                request(Call::CreateCommit {
                    parents: Vec::new(),
                    message: "m".into(),
                    tree: "t".into(),
                }),
                r#"{"kind":"createCommit","message":"m","tree":"t","timeoutMs":15000}"#,
            ),
            (
                request(Call::CreateBranch {
                    branch: "b".into(),
                    sha: "s".into(),
                }),
                r#"{"kind":"createBranch","branch":"b","sha":"s","timeoutMs":15000}"#,
            ),
            (
                request(Call::CreateRef {
                    ref_name: "refs/leasehold/slots/ns/p01".into(),
                    sha: "s".into(),
                }),
                r#"{"kind":"createRef","ref":"refs/leasehold/slots/ns/p01","sha":"s","timeoutMs":15000}"#,
            ),
            (
                request(Call::GetRef {
                    ref_name: "refs/leasehold/slots/ns/p01".into(),
                }),
                r#"{"kind":"getRef","ref":"refs/leasehold/slots/ns/p01","timeoutMs":15000}"#,
            ),
            (
                request(Call::ListMatchingRefs {
                    prefix: "refs/leasehold/slots/ns/p".into(),
                    page: 2,
                }),
                r#"{"kind":"listMatchingRefs","prefix":"refs/leasehold/slots/ns/p","page":2,"timeoutMs":15000}"#,
            ),
            (
                request(Call::GetRunAttempt {
                    repository: "o/r".into(),
                    run_id: 7,
                    attempt: 2,
                }),
                r#"{"kind":"getRunAttempt","repository":"o/r","runId":7,"attempt":2,"timeoutMs":15000}"#,
            ),
            (
                request(Call::GetJob {
                    repository: "o/r".into(),
                    job_id: 9,
                }),
                r#"{"kind":"getJob","repository":"o/r","jobId":9,"timeoutMs":15000}"#,
            ),
            (
                request(Call::ListJobs {
                    repository: "o/r".into(),
                    run_id: 7,
                    attempt: 1,
                }),
                r#"{"kind":"listJobs","repository":"o/r","runId":7,"attempt":1,"timeoutMs":15000}"#,
            ),
            (
                request(Call::GetViewer),
                r#"{"kind":"getViewer","timeoutMs":15000}"#,
            ),
            (
                request(Call::ListComments {
                    repository: "o/r".into(),
                    number: 4,
                    page: 2,
                }),
                r#"{"kind":"listComments","repository":"o/r","number":4,"page":2,"timeoutMs":15000}"#,
            ),
            (
                request(Call::GetPullRequest {
                    repository: "o/r".into(),
                    number: 4,
                }),
                r#"{"kind":"getPullRequest","repository":"o/r","number":4,"timeoutMs":15000}"#,
            ),
            (
                request(Call::UpdateIssue {
                    repository: "o/r".into(),
                    number: 4,
                    body: None,
                    state: Some("closed".into()),
                }),
                r#"{"kind":"updateIssue","repository":"o/r","number":4,"state":"closed","timeoutMs":15000}"#,
            ),
            (
                Command::Sleep {
                    until_ms: 5,
                    reason: SleepReason::WriteSpacing,
                },
                r#"{"kind":"sleep","untilMs":5,"reason":"write-spacing"}"#,
            ),
        ];
        for (command, json) in cases {
            assert_eq!(serde_json::to_string(&command).unwrap(), json);
            assert_eq!(serde_json::from_str::<Command>(json).unwrap(), command);
        }
        let finish = Command::Finish {
            outcome: Box::new(Outcome::new(ResultWord::Noop, true, "a", "h")),
        };
        let json = serde_json::to_string(&finish).unwrap();
        assert!(
            json.starts_with(r#"{"kind":"finish","outcome":{"result":"noop""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), finish);
    }
}
