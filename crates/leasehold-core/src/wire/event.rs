//! What the driver feeds the core: [`Event`]s, and the [`Reply`] GitHub gave to a request.

use serde::Serialize;

use super::time::Millis;

/// An event the driver feeds to an operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Event {
    /// The operation begins. Exactly once, first.
    Start { now: Millis },
    /// The answer to the request the last command asked for.
    Reply { now: Millis, reply: Reply },
    /// The time the last `sleep` command named has come.
    Timer { now: Millis },
    /// The job is being cancelled (the runner sent SIGINT or SIGTERM). Fed instead of `timer`
    /// while sleeping; the operation then leaves what it joined and finishes quickly.
    Cancel { now: Millis },
    /// The answer to the request the last command asked for, when the job began to be cancelled
    /// while it was in flight: `reply` and `cancel` at once. The operation hears the answer as
    /// cancelled (an acquire the answer admits gives the slot back), so a cancel is never lost
    /// to an answer that ends the operation without a sleep.
    CancelledReply { now: Millis, reply: Reply },
}

/// One answer from GitHub, normalized by the driver. Success shapes depend on the request;
/// anything else is `http` (an HTTP answer that was not a success) or `transport` (no answer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Reply {
    /// `readFile` found the file (200). `content` is the decoded text.
    File {
        sha: String,
        content: String,
        #[serde(default)]
        etag: Option<String>,
        /// The `date` header: GitHub's clock, for judging leases.
        #[serde(default)]
        date: Option<String>,
    },
    /// `readFile` with `ifNoneMatch`: unchanged (304). GitHub dates a 304 as any answer (RFC
    /// 9110 asks it of every 3xx), so a waiter that only polls keeps its estimate of GitHub's
    /// clock current.
    NotModified {
        #[serde(default)]
        date: Option<String>,
    },
    /// `readFile` found no file it can read at the path (200): GitHub's contents API listed a
    /// directory there, or answered a symlink, a submodule or a file in an encoding other than
    /// base64. `found` says which, in GitHub's words (`dir`, `symlink`, `submodule`, `file in
    /// encoding …`). The core decides what that means for the document it read.
    NotAFile {
        found: String,
        #[serde(default)]
        date: Option<String>,
    },
    /// `writeFile` succeeded (200 or 201): the new blob sha of the file.
    Written {
        sha: String,
        #[serde(default)]
        date: Option<String>,
    },
    /// `createTree`, `createCommit` or `createBranch` succeeded: the new object's sha.
    Created { sha: String },
    /// An HTTP answer that is not a success (including 404 and 409), with the facts that matter.
    #[serde(rename_all = "camelCase")]
    Http {
        status: u16,
        #[serde(default)]
        message: String,
        /// Raw `retry-after` header (delta-seconds or an HTTP date).
        #[serde(default)]
        retry_after: Option<String>,
        /// `x-ratelimit-remaining`.
        #[serde(default)]
        ratelimit_remaining: Option<u64>,
        /// `x-ratelimit-reset`, epoch seconds.
        #[serde(default)]
        ratelimit_reset: Option<u64>,
        /// The `date` header.
        #[serde(default)]
        date: Option<String>,
    },
    /// `getRunAttempt` succeeded: the run attempt's `status` and `conclusion`.
    #[serde(rename_all = "camelCase")]
    Run {
        run_id: u64,
        /// Not every answer carries it (GitHub's description does not require it): the route
        /// names the attempt.
        #[serde(default)]
        run_attempt: Option<u32>,
        /// GitHub's description lets it be null.
        #[serde(default)]
        status: Option<String>,
        #[serde(default)]
        conclusion: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `getJob` succeeded.
    #[serde(rename_all = "camelCase")]
    Job {
        id: u64,
        run_id: u64,
        /// Not every answer carries it (GitHub's description does not require it).
        #[serde(default)]
        run_attempt: Option<u32>,
        #[serde(default)]
        name: String,
        status: String,
        #[serde(default)]
        conclusion: Option<String>,
        #[serde(default)]
        runner_name: Option<String>,
        /// RFC 3339, once completed.
        #[serde(default)]
        completed_at: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listJobs` succeeded: the first page (up to 100 jobs) of the attempt's jobs.
    #[serde(rename_all = "camelCase")]
    Jobs {
        total_count: u64,
        jobs: Vec<JobSummary>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `getRef` found the ref (200).
    GitRef {
        #[serde(rename = "ref")]
        ref_name: String,
        sha: String,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listMatchingRefs` was answered 200: every ref of that answer, and the `rel="next"`
    /// target of its `Link` header exactly as it came (absent: GitHub named no next page).
    Refs {
        refs: Vec<RefEntry>,
        #[serde(default)]
        next: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listCommits` was answered 200: the commits' shas in the order GitHub gave them, and the
    /// `rel="next"` target of its `Link` header exactly as it came (absent: no next page).
    Commits {
        shas: Vec<String>,
        #[serde(default)]
        next: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `graphql` was answered 200: GitHub's `data` and `errors` as they came. A 200 with
    /// `errors[]` is a failure the core classifies by its errors, never by the status. GitHub
    /// answers a GraphQL rate limit with 200 (a primary one: `x-ratelimit-remaining: 0`, to be
    /// waited out until `x-ratelimit-reset`) or 403; the headers come as for [`Reply::Http`].
    #[serde(rename_all = "camelCase")]
    Graphql {
        /// The answer had no `data` member at all (not even `null`): by the GraphQL
        /// specification an error raised before execution (a document that does not validate),
        /// so nothing ran. Absent: taken as present (the conservative reading).
        #[serde(default)]
        data_absent: bool,
        #[serde(default)]
        data: Option<serde_json::Value>,
        #[serde(default)]
        errors: Vec<GraphqlError>,
        /// Raw `retry-after` header (delta-seconds or an HTTP date).
        #[serde(default)]
        retry_after: Option<String>,
        /// `x-ratelimit-remaining`.
        #[serde(default)]
        ratelimit_remaining: Option<u64>,
        /// `x-ratelimit-reset`, epoch seconds.
        #[serde(default)]
        ratelimit_reset: Option<u64>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `getViewer` succeeded: the account's login and type (`User`, or `Bot` for an App).
    User {
        login: String,
        #[serde(rename = "type", default)]
        account_type: String,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listComments` was answered 200: the page's comments, oldest first, and the `rel="next"`
    /// target of its `Link` header as it came.
    Comments {
        comments: Vec<CommentEntry>,
        #[serde(default)]
        next: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `createComment`, `createIssue` or `updateIssue` succeeded: the id of the comment or
    /// issue (an issue also has its number) and its page.
    Posted {
        id: u64,
        #[serde(default)]
        number: Option<u64>,
        #[serde(default)]
        url: String,
        #[serde(default)]
        date: Option<String>,
    },
    /// `getPullRequest` succeeded.
    #[serde(rename_all = "camelCase")]
    PullRequest {
        number: u64,
        head_sha: String,
        /// `open` or `closed`.
        state: String,
        #[serde(default)]
        merged: bool,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listWorkflowRuns` succeeded: the runs of the first page (newest first) and how many
    /// match in all.
    #[serde(rename_all = "camelCase")]
    WorkflowRuns {
        total_count: u64,
        runs: Vec<WorkflowRunEntry>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listIssues` was answered 200: the page's issues, and the next page's target.
    Issues {
        issues: Vec<IssueEntry>,
        #[serde(default)]
        next: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// No HTTP answer. `sent: false` when the request certainly never left (DNS failure,
    /// connection refused); `true` when it may have reached GitHub (reset, timeout, abort).
    Transport { sent: bool, message: String },
}

impl Reply {
    /// What GitHub said in a failed answer: its HTTP status, if it gave one, and its words (an
    /// HTTP answer's message, a transport's error, a GraphQL answer's errors as `type: message`
    /// each; none at all is a mutation answered without its payload).
    pub fn said(&self) -> (Option<u16>, String) {
        match self {
            Reply::Http {
                status, message, ..
            } => (Some(*status), message.clone()),
            Reply::Transport { message, .. } => (None, message.clone()),
            Reply::NotAFile { found, .. } => (
                None,
                format!("GitHub's contents API holds a {found} at the path, not a file"),
            ),
            Reply::Graphql { errors, .. } if errors.is_empty() => (
                None,
                "GitHub answered without the mutation's result and without an error".into(),
            ),
            Reply::Graphql { errors, .. } => (
                None,
                errors
                    .iter()
                    .map(|e| match &e.kind {
                        Some(kind) => format!("{kind}: {}", e.message),
                        None => e.message.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            _ => (None, String::new()),
        }
    }

    /// `readFile`'s answer of `content` at version `sha`, without headers (for models and tests).
    pub fn file(sha: &str, content: &str) -> Reply {
        Reply::File {
            sha: sha.into(),
            content: content.into(),
            etag: None,
            date: None,
        }
    }
}

/// One entry of a GraphQL answer's `errors[]`: its `type` (GitHub's `NOT_FOUND`, `FORBIDDEN`,
/// `RATE_LIMITED`, `STALE_DATA`, …, when it gives one) and its message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
pub struct GraphqlError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: String,
}

/// One ref of a `refs` answer: its full name and the object it points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
pub struct RefEntry {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub sha: String,
}

/// One job of a run attempt, as `listJobs` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct JobSummary {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub runner_name: Option<String>,
}

/// One comment of a `comments` answer: who wrote it (`user.login`, `user.type`, and the App it
/// was performed via, when one), when it was created and last updated, and its body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct CommentEntry {
    pub id: u64,
    /// Empty when GitHub names no author (its description lets `user` be null).
    pub login: String,
    #[serde(default)]
    pub user_type: String,
    /// `performed_via_github_app.slug`, when the comment was written through an App.
    #[serde(default)]
    pub app: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub body: String,
}

/// One issue of an `issues` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct IssueEntry {
    pub number: u64,
    /// Empty when GitHub names no author (its description lets `user` be null).
    pub login: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub body: String,
    pub state: String,
    /// A pull request (the issues list holds them too).
    #[serde(default)]
    pub pull_request: bool,
}

/// One workflow run of a `workflowRuns` answer (RFC 3339 times as GitHub sent them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowRunEntry {
    pub id: u64,
    /// GitHub's description lets it be null.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub created_at: String,
    #[serde(default)]
    pub run_started_at: Option<String>,
    pub updated_at: String,
    #[serde(default)]
    pub html_url: String,
}

/// Whether `login` is `me`'s (GitHub compares logins without case); an empty login (no author)
/// is nobody's, an unknown `me` (empty) nobody.
fn same_login(login: &str, me: &str) -> bool {
    !login.is_empty() && login.eq_ignore_ascii_case(me)
}

impl CommentEntry {
    /// Whether `me` (a login) wrote this comment.
    pub fn written_by(&self, me: &str) -> bool {
        same_login(&self.login, me)
    }
}

impl IssueEntry {
    /// Whether `me` (a login) opened this issue.
    pub fn opened_by(&self, me: &str) -> bool {
        same_login(&self.login, me)
    }
}

impl Event {
    /// The local time the event carries.
    pub fn now(&self) -> Millis {
        match self {
            Event::Start { now }
            | Event::Reply { now, .. }
            | Event::Timer { now }
            | Event::Cancel { now }
            | Event::CancelledReply { now, .. } => *now,
        }
    }

    /// A stable name for protocol errors.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Start { .. } => "start",
            Event::Reply { .. } => "reply",
            Event::Timer { .. } => "timer",
            Event::Cancel { .. } => "cancel",
            Event::CancelledReply { .. } => "cancelledReply",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_author_github_does_not_name_is_nobody() {
        let c = |login: &str| CommentEntry {
            id: 1,
            login: login.into(),
            user_type: String::new(),
            app: None,
            created_at: String::new(),
            updated_at: String::new(),
            body: String::new(),
        };
        assert!(c("Octo").written_by("octo"));
        assert!(!c("octo").written_by("other"));
        // No author (a null `user`) is nobody's comment, even to an identity not known.
        assert!(!c("").written_by(""));
    }
}
