//! Inputs arrive as the strings a workflow gives: action inputs by their kebab-case names and
//! the run context by its environment variable names. They are parsed and checked here, once,
//! before anything is sent; an error names the input and the rule.

use std::collections::BTreeMap;

use super::ids;
use crate::policy::limits::{
    API_MAX_ATTEMPTS_RANGE, API_RETRY_BASE_MS_RANGE, API_RETRY_MAX_MS_RANGE, DEFAULT_STATE_BRANCH,
};
use crate::policy::RetryPolicy;
use crate::wire::{InputError, RunIdentity};

/// Raw inputs: `lock`, `timeout-minutes`, …, plus context such as `GITHUB_RUN_ID`.
pub type RawInputs = BTreeMap<String, String>;

/// Entropy drawn by the binding (or fixed by a test) and handed in: the core draws none.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, leasehold_derive::Read)]
pub struct Entropy {
    /// Seeds the jitter of polls and backoffs.
    pub seed: u64,
    /// Unique per claim; tells this acquire's holding from any other with the same holder id.
    pub nonce: String,
}

/// A bool input's rule, in the words every bool input is checked with.
const BOOL_RULE: &str = "must be true or false";

pub(crate) struct Reader<'a> {
    raw: &'a RawInputs,
    pub warnings: Vec<String>,
}

impl<'a> Reader<'a> {
    pub fn new(raw: &'a RawInputs) -> Self {
        Reader {
            raw,
            warnings: Vec::new(),
        }
    }

    /// The trimmed value, or `None` when absent or empty.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.raw
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// The exact value (not trimmed), for inputs where whitespace is itself an error.
    pub fn get_exact(&self, name: &str) -> Option<&'a str> {
        self.raw
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    pub fn required(&self, name: &str) -> Result<&'a str, InputError> {
        self.get(name)
            .ok_or_else(|| InputError::new(name, "is required", ""))
    }

    /// An integer in `min..=max`, or `default` when not given.
    pub fn int(&self, name: &str, default: u64, min: u64, max: u64) -> Result<u64, InputError> {
        let Some(text) = self.get(name) else {
            return Ok(default);
        };
        let rule = format!("must be a whole number from {min} to {max}");
        match text.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) && text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(InputError::new(name, &rule, text)),
        }
    }

    /// Like [`Reader::int`], but a bad value is reported and ignored rather than fatal (for
    /// knobs of release, which must never fail over a tuning typo).
    pub fn int_or_warn(
        &mut self,
        name: &str,
        default: u64,
        ok: impl Fn(u64) -> bool,
        rule: &str,
    ) -> u64 {
        let Some(text) = self.get(name) else {
            return default;
        };
        match text.parse::<u64>() {
            Ok(n) if ok(n) && text.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                // As an input error says it: the value echoed only without a credential's shape.
                let e = InputError::new(name, rule, text);
                self.warnings.push(format!("{e}; using {default}"));
                default
            }
        }
    }

    /// The retry knobs (`api-max-attempts`, `api-retry-base-ms`, `api-retry-max-ms`). They only
    /// change how long a retry waits, so a value outside its range is reported and ignored,
    /// never fatal. `api-retry-max-ms` bounds `api-retry-base-ms` too.
    pub fn retry_policy(&mut self) -> RetryPolicy {
        let d = RetryPolicy::default();
        let range = |r: &std::ops::RangeInclusive<u64>| {
            format!("must be a whole number from {} to {}", r.start(), r.end())
        };
        let warned = self.warnings.len();
        let max_attempts = self.int_or_warn(
            "api-max-attempts",
            u64::from(d.max_attempts),
            |n| API_MAX_ATTEMPTS_RANGE.contains(&n),
            &range(&API_MAX_ATTEMPTS_RANGE),
        ) as u32;
        // Set explicitly and valid: it bounds a deadline-bounded operation's attempts too.
        let valid_attempts =
            self.get("api-max-attempts").is_some() && self.warnings.len() == warned;
        let cap_ms = self.int_or_warn(
            "api-retry-max-ms",
            d.cap_ms,
            |n| API_RETRY_MAX_MS_RANGE.contains(&n),
            &range(&API_RETRY_MAX_MS_RANGE),
        );
        let base_ms = self.int_or_warn(
            "api-retry-base-ms",
            d.base_ms,
            |n| API_RETRY_BASE_MS_RANGE.contains(&n),
            &range(&API_RETRY_BASE_MS_RANGE),
        );
        RetryPolicy {
            max_attempts,
            base_ms: base_ms.min(cap_ms),
            cap_ms,
            max_attempts_with_deadline: valid_attempts.then_some(max_attempts),
            ..d
        }
    }

    /// A boolean input in the YAML 1.2 spellings @actions/core accepts (true/True/TRUE,
    /// false/False/FALSE): the one rule for booleans. `None` when not given.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, InputError> {
        match self.get(name) {
            None => Ok(None),
            Some("true" | "True" | "TRUE") => Ok(Some(true)),
            Some("false" | "False" | "FALSE") => Ok(Some(false)),
            Some(other) => Err(InputError::new(name, BOOL_RULE, other)),
        }
    }

    /// Like [`Reader::bool`], but a bad value is reported and `default` is used.
    pub fn bool_or_warn(&mut self, name: &str, default: bool) -> bool {
        match self.bool(name) {
            Ok(value) => value.unwrap_or(default),
            Err(e) => {
                self.warnings.push(format!("{e}; using {default}"));
                default
            }
        }
    }

    /// The run this job belongs to, from the runner's environment.
    pub fn run_identity(&self) -> Result<RunIdentity, InputError> {
        let repository = self.required("GITHUB_REPOSITORY")?;
        ids::validate_repository("GITHUB_REPOSITORY", repository)?;
        let run_id = self.int("GITHUB_RUN_ID", 0, 1, u64::MAX)?;
        if self.get("GITHUB_RUN_ID").is_none() {
            return Err(InputError::new("GITHUB_RUN_ID", "is required", ""));
        }
        let run_attempt = self.int("GITHUB_RUN_ATTEMPT", 1, 1, u64::from(u32::MAX))? as u32;
        let job = self.required("GITHUB_JOB")?;
        ids::validate_job("GITHUB_JOB", job)?;
        let runner_name = self.get("RUNNER_NAME").unwrap_or("").to_string();
        super::credentials::refuse_credential("RUNNER_NAME", &runner_name)?;
        let server = self
            .get("GITHUB_SERVER_URL")
            .unwrap_or("https://github.com")
            .trim_end_matches('/');
        super::credentials::refuse_credential("GITHUB_SERVER_URL", server)?;
        let url = format!("{server}/{repository}/actions/runs/{run_id}/attempts/{run_attempt}");
        Ok(RunIdentity {
            repository: repository.into(),
            run_id,
            run_attempt,
            job: job.into(),
            runner_name,
            url,
            job_id: None,
        })
    }

    /// The lock repository (`repository`, default the calling repository), lock and branch.
    pub fn lock_target(&self) -> Result<(String, String, String), InputError> {
        let lock = self.required("lock")?;
        ids::validate_lock_name("lock", lock)?;
        let (repository, branch) =
            self.lock_location(|| InputError::new("GITHUB_REPOSITORY", "is required", ""))?;
        Ok((lock.into(), repository, branch))
    }

    /// Where the locks live: `repository` (default the calling repository, `missing` when there
    /// is none) and `state-branch`, both checked.
    pub fn lock_location(
        &self,
        missing: impl FnOnce() -> InputError,
    ) -> Result<(String, String), InputError> {
        let repository = self
            .get("repository")
            .or_else(|| self.get("GITHUB_REPOSITORY"))
            .ok_or_else(missing)?;
        ids::validate_repository("repository", repository)?;
        let branch = self.get("state-branch").unwrap_or(DEFAULT_STATE_BRANCH);
        ids::validate_branch("state-branch", branch)?;
        Ok((repository.into(), branch.into()))
    }

    /// The holder id to act on: `holder-id` when given (it must belong to this workflow run: an
    /// explicit target is for a fallback job of the same run, never another run's holding),
    /// else this job's own, rebuilt from the run context and `holder-suffix`.
    pub fn holder_id(&self, run: &RunIdentity) -> Result<String, InputError> {
        match self.get_exact("holder-id") {
            Some(explicit) => {
                ids::validate_holder_id("holder-id", explicit)?;
                let own_run = format!("{}:{}:", run.repository, run.run_id);
                if !explicit.starts_with(&own_run) {
                    return Err(InputError::new(
                        "holder-id",
                        &format!("must belong to this workflow run (start with {own_run:?})"),
                        explicit,
                    ));
                }
                Ok(explicit.to_string())
            }
            None => Ok(ids::holder_id(
                &run.repository,
                run.run_id,
                &run.job,
                self.suffix()?,
            )),
        }
    }

    /// The claim's nonce (`nonce`, from acquire's output), required.
    pub fn nonce(&self) -> Result<String, InputError> {
        let nonce = self.required("nonce")?.to_string();
        validate_entropy(&Entropy {
            seed: 0,
            nonce: nonce.clone(),
        })?;
        Ok(nonce)
    }

    pub fn suffix(&self) -> Result<&'a str, InputError> {
        let suffix = self.get_exact("holder-suffix").unwrap_or("");
        ids::validate_suffix("holder-suffix", suffix)?;
        Ok(suffix)
    }
}

pub fn validate_entropy(entropy: &Entropy) -> Result<(), InputError> {
    let n = &entropy.nonce;
    if n.len() < 16
        || n.len() > 64
        || !n
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(InputError::new(
            "nonce",
            "must be 16 to 64 lowercase hex digits",
            n,
        ));
    }
    Ok(())
}
