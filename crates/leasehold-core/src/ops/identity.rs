//! Who the token acts as, from the answer to `GET /user` (docs/github-semantics.md#token-identity).
//!
//! A user's token reads its own account there. An installation token is refused with 403
//! "Resource not accessible by integration", and nothing an installation token can read names
//! the App it belongs to. The job's own `GITHUB_TOKEN` is the installation token of the GitHub
//! Actions App, whose writes GitHub authors as `github-actions[bot]`: when the caller says the
//! token is the job's own (the action compares it with `github.token`), that refusal resolves
//! to `github-actions[bot]`. Any other installation token stays unresolved.

use crate::wire::{Failure, Reply};

/// The login GitHub authors the job token's writes under.
pub const JOB_TOKEN_LOGIN: &str = "github-actions[bot]";

/// GitHub's refusal of `GET /user` to an installation token.
const INTEGRATION_REFUSAL: &str = "Resource not accessible by integration";

/// Why an identity could not be resolved: a stable word and the detail.
pub struct Unresolved {
    pub reason: &'static str,
    pub detail: String,
}

/// The login the token acts as, from the answer to `getViewer`.
pub fn identity_of(answer: Result<Reply, Failure>, job_token: bool) -> Result<String, Unresolved> {
    match answer {
        Ok(Reply::User { login, .. }) if !login.is_empty() => Ok(login),
        Ok(_) => Err(Unresolved {
            reason: "identity-unresolved",
            detail: "GET /user answered without a login".into(),
        }),
        Err(f) if f.status == Some(403) && f.message.contains(INTEGRATION_REFUSAL) => {
            if job_token {
                Ok(JOB_TOKEN_LOGIN.into())
            } else {
                Err(Unresolved {
                    reason: "identity-unresolved",
                    detail: "the token is an installation token that is not this job's own \
                             (GET /user: Resource not accessible by integration), and no answer \
                             an installation token can read names its App's login"
                        .into(),
                })
            }
        }
        Err(f) if f.class == Some(crate::wire::AnswerClass::RateLimited) => Err(Unresolved {
            reason: "rate-limited",
            detail: format!("the identity could not be read: {}", f.message),
        }),
        Err(f) => Err(Unresolved {
            reason: "identity-unresolved",
            detail: format!("the identity could not be read: {}", f.message),
        }),
    }
}
