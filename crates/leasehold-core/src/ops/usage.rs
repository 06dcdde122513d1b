//! report-usage: record a usage reading of one of a pool's resources (used fraction of its
//! window, the window's start and reset, when it was observed, the provider's status), with the
//! reading's own time. An older reading never replaces a newer one. A reading can make a
//! resource eligible again, so the write admits in the same write, as a release does.
//!
//! Results: `recorded` (written), `noop` (a reading observed at the same time or later is
//! recorded already; nothing written).

use crate::engine::{Decision, PlanCtx, Planner, Provenance};
use crate::input::{RawInputs, Reader};
use crate::policy::limits::USAGE_FUTURE_MS;
use crate::policy::RetryPolicy;
use crate::store::pool_config::check_word;
use crate::wire::time::{format_rfc3339, parse_rfc3339, Millis};
use crate::wire::{
    ChangeAction, Failure, FailureCode, InputError, LockState, Outcome, ResultWord, UsageReading,
    UsageStatus,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
    pub resource: String,
    pub reading: UsageReading,
    pub retry: RetryPolicy,
}

/// A fraction from 0 to 1 (`0.42`), in basis points.
fn fraction_bp(name: &str, text: &str) -> Result<u32, InputError> {
    let rule = "must be a fraction from 0 to 1 (e.g. 0.42)";
    let ok = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let value: f64 = text
        .parse()
        .ok()
        .filter(|v| ok && (0.0..=1.0).contains(v))
        .ok_or_else(|| InputError::new(name, rule, text))?;
    Ok((value * 10_000.0).round() as u32)
}

fn time(r: &Reader<'_>, name: &str) -> Result<Millis, InputError> {
    let text = r.required(name)?;
    parse_rfc3339(text).ok_or_else(|| {
        InputError::new(name, "must be a UTC time, YYYY-MM-DDTHH:MM:SS[.fff]Z", text)
    })
}

impl UsageSettings {
    pub fn parse(raw: &RawInputs) -> Result<(Self, Vec<String>), InputError> {
        let mut r = Reader::new(raw);
        let (lock, repository, state_branch) = r.lock_target()?;
        let resource = r.required("resource")?.to_string();
        check_word("resource", &resource)
            .map_err(|e| InputError::new("resource", &e.detail, &resource))?;
        let used_bp = fraction_bp("used", r.required("used")?)?;
        let window_start = time(&r, "window-start")?;
        let reset_at = time(&r, "reset-at")?;
        if reset_at <= window_start {
            return Err(InputError::new(
                "reset-at",
                "must be after window-start",
                "",
            ));
        }
        let observed_at = time(&r, "observed-at")?;
        let status = match r.get("status") {
            None => UsageStatus::Allowed,
            Some(s) => UsageStatus::from_word(s).ok_or_else(|| {
                InputError::new("status", "must be allowed, throttled or rejected", s)
            })?,
        };
        let retry = r.retry_policy();
        let s = UsageSettings {
            lock,
            repository,
            state_branch,
            resource,
            reading: UsageReading {
                used_bp,
                window_start,
                reset_at,
                observed_at,
                status,
            },
            retry,
        };
        Ok((s, r.warnings))
    }
}

pub struct UsagePlanner {
    pub s: UsageSettings,
}

impl UsagePlanner {
    fn outcome(&self, result: ResultWord) -> Outcome {
        let mut o = Outcome::new(
            result,
            matches!(result, ResultWord::Recorded | ResultWord::Noop),
            &self.s.lock,
            "",
        );
        o.resource = Some(self.s.resource.clone());
        o
    }

    fn refuse(&self, message: String) -> Decision {
        Decision::Finish(
            self.outcome(ResultWord::Failed)
                .with_error(Failure::new(FailureCode::ConfigInvalid, message)),
        )
    }
}

impl Planner for UsagePlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        true
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        self.outcome(ResultWord::Failed).with_error(failure)
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        let st = ctx.state;
        let mine = &self.s.reading;
        let recorded = st.pool.as_ref().and_then(|b| b.usage.get(&self.s.resource));
        if recorded == Some(mine) && ctx.provenance == Provenance::Written {
            ctx.info(format!(
                "recorded the usage of {} on {}",
                self.s.resource, self.s.lock
            ));
            return Decision::Finish(self.outcome(ResultWord::Recorded));
        }
        if let Some(e) = ctx.config_error {
            return self.refuse(e.to_string());
        }
        let Some(pool) = super::pool::pool_of(ctx.admission.as_ref()) else {
            return self.refuse(format!(
                "{} is not a pool: its config declares no resources",
                self.s.lock
            ));
        };
        if !pool
            .config
            .resources
            .iter()
            .any(|r| r.name == self.s.resource)
        {
            return self.refuse(format!(
                "the pool {} declares no resource {:?}",
                self.s.lock, self.s.resource
            ));
        }
        // A reading more than 5 minutes ahead of GitHub's clock counts as stale in the choice
        // until GitHub's clock comes within 5 minutes of it; recorded, it would also keep every
        // true reading out (an older reading never replaces a newer one). Refused, and one
        // recorded before is replaced.
        let ahead = |at: Millis| at > ctx.server_now.saturating_add(USAGE_FUTURE_MS);
        if ahead(mine.observed_at) {
            return Decision::Finish(self.outcome(ResultWord::Failed).with_error(Failure::new(
                FailureCode::InvalidInput,
                format!(
                    "observed-at {} is more than {} minutes ahead of GitHub's clock ({}): a reading cannot be from the future; nothing was written",
                    format_rfc3339(mine.observed_at),
                    USAGE_FUTURE_MS / 60_000,
                    format_rfc3339(ctx.server_now)
                ),
            )));
        }
        if let Some(r) =
            recorded.filter(|r| r.observed_at >= mine.observed_at && !ahead(r.observed_at))
        {
            ctx.info(format!(
                "a reading of {} observed at the same time or later is recorded already ({}); keeping it",
                self.s.resource,
                format_rfc3339(r.observed_at)
            ));
            return Decision::Finish(self.outcome(ResultWord::Noop));
        }
        let mut doc = st.clone();
        doc.pool
            .get_or_insert_with(Default::default)
            .usage
            .insert(self.s.resource.clone(), mine.clone());
        let admitted = ctx.admit(&mut doc);
        if !admitted.is_empty() {
            ctx.info(format!("admitting {}", admitted.join(", ")));
        }
        Decision::Write {
            doc,
            action: ChangeAction::ReportUsage,
        }
    }
}
