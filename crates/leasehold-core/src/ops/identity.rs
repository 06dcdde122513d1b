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
        // The job's own token is known to be the GitHub Actions App's installation token, so
        // any refusal of `GET /user` to it (GitHub documents the 403 only as "Forbidden") says
        // the same; a rate limit is not a refusal.
        Err(f)
            if job_token
                && f.status == Some(403)
                && f.class != Some(crate::wire::AnswerClass::RateLimited) =>
        {
            Ok(JOB_TOKEN_LOGIN.into())
        }
        Err(f) if f.status == Some(403) && f.message.contains(INTEGRATION_REFUSAL) => {
            Err(Unresolved {
                reason: "identity-unresolved",
                detail: "the token is an installation token that is not this job's own \
                             (GET /user: Resource not accessible by integration), and no answer \
                             an installation token can read names its App's login"
                    .into(),
            })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{AnswerClass, FailureCode};

    fn refused(message: &str, class: AnswerClass) -> Result<Reply, Failure> {
        Err(Failure {
            code: FailureCode::Refused,
            message: message.into(),
            class: Some(class),
            status: Some(403),
        })
    }

    #[test]
    fn the_job_tokens_refusal_of_get_user_is_github_actions_in_any_words() {
        for message in ["Resource not accessible by integration", "Forbidden"] {
            let got = identity_of(refused(message, AnswerClass::Refusal), true);
            assert_eq!(got.ok().as_deref(), Some(JOB_TOKEN_LOGIN), "{message}");
        }
        // Another installation token stays unresolved; so does a rate limit, even of the job's.
        for (message, class, job) in [
            (
                "Resource not accessible by integration",
                AnswerClass::Refusal,
                false,
            ),
            ("Forbidden", AnswerClass::Refusal, false),
            (
                "You have exceeded a secondary rate limit",
                AnswerClass::RateLimited,
                true,
            ),
        ] {
            assert!(
                identity_of(refused(message, class), job).is_err(),
                "{message}"
            );
        }
    }
}
