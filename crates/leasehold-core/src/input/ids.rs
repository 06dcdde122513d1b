//! Names and identities, validated before anything is sent.

use super::credentials::refuse_credential;
use crate::policy::limits::{
    MAX_BRANCH, MAX_JOB_ID, MAX_LOCK_NAME, MAX_REPOSITORY_PART, MAX_SUFFIX,
};
use crate::wire::InputError;

/// A lock name: `[A-Za-z0-9._-]{1,80}`, and not `.` or `..` (it becomes a file name).
pub fn validate_lock_name(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    let ok_chars = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if value.is_empty() || value.len() > MAX_LOCK_NAME || !ok_chars || value == "." || value == ".."
    {
        return Err(InputError::new(
            input,
            &format!("must match [A-Za-z0-9._-]{{1,{MAX_LOCK_NAME}}} and not be \".\" or \"..\""),
            value,
        ));
    }
    Ok(())
}

/// `owner/name`, each part as GitHub allows it.
pub fn validate_repository(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    let part = |p: &str| {
        !p.is_empty()
            && p.len() <= MAX_REPOSITORY_PART
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    };
    match value.split_once('/') {
        Some((owner, name)) if part(owner) && part(name) && name != "." && name != ".." => Ok(()),
        _ => Err(InputError::new(input, "must be owner/name", value)),
    }
}

/// A git branch name that is safe to put in a URL path and a ref: a conservative subset of
/// `git check-ref-format`.
pub fn validate_branch(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    let ok_chars = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'));
    let bad_shape = value.starts_with(['/', '.', '-'])
        || value.ends_with(['/', '.'])
        || value.contains("..")
        || value.contains("//")
        || value.ends_with(".lock")
        || value.contains("/.");
    if value.is_empty() || value.len() > MAX_BRANCH || !ok_chars || bad_shape {
        return Err(InputError::new(input, "must be a plain branch name ([A-Za-z0-9._/-], no \"..\", no leading or trailing \"/\" or \".\")", value));
    }
    Ok(())
}

/// The holder-id suffix that separates matrix cells: no line breaks, no leading or trailing
/// whitespace (so a fallback job can rebuild the holder id exactly), at most 200 characters.
pub fn validate_suffix(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    if value.contains(['\n', '\r']) {
        return Err(InputError::new(
            input,
            "must not contain a line break",
            value,
        ));
    }
    if value.trim() != value {
        return Err(InputError::new(
            input,
            "must not have leading or trailing whitespace",
            value,
        ));
    }
    if value.chars().count() > MAX_SUFFIX || value.chars().any(char::is_control) {
        return Err(InputError::new(
            input,
            &format!("must be at most {MAX_SUFFIX} printable characters"),
            value,
        ));
    }
    Ok(())
}

/// GitHub's job id (the YAML key, `GITHUB_JOB`): `[A-Za-z_][A-Za-z0-9_-]*`. It never contains a
/// colon, which keeps the holder id unambiguous.
pub fn validate_job(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    let mut bytes = value.bytes();
    let first_ok = matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_');
    if !first_ok
        || value.len() > MAX_JOB_ID
        || !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(InputError::new(
            input,
            "must be a workflow job id ([A-Za-z_][A-Za-z0-9_-]*)",
            value,
        ));
    }
    Ok(())
}

/// `<repository>:<run id>:<job>` with `:<suffix>` when a suffix is given. The run attempt is
/// not part of it, so a rerun finds what its predecessor left. A job id has no colon, so the
/// id splits back unambiguously.
pub fn holder_id(repository: &str, run_id: u64, job: &str, suffix: &str) -> String {
    if suffix.is_empty() {
        format!("{repository}:{run_id}:{job}")
    } else {
        format!("{repository}:{run_id}:{job}:{suffix}")
    }
}

/// A holder id given explicitly (to release a holding from another job): it must have the
/// shape [`holder_id`] produces.
pub fn validate_holder_id(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    let rule = "must be <owner>/<repo>:<run id>:<job>[:<suffix>]";
    let mut parts = value.splitn(4, ':');
    let (repo, run, job) = (parts.next(), parts.next(), parts.next());
    let suffix = parts.next().unwrap_or("");
    match (repo, run, job) {
        (Some(repo), Some(run), Some(job))
            if validate_repository(input, repo).is_ok()
                && !run.is_empty()
                && run.bytes().all(|b| b.is_ascii_digit())
                && validate_job(input, job).is_ok()
                && validate_suffix(input, suffix).is_ok() =>
        {
            Ok(())
        }
        _ => Err(InputError::new(input, rule, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_names() {
        for ok in ["a", "deploy-prod", "unity_6.0", &"x".repeat(80)] {
            assert!(validate_lock_name("lock", ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "ü", &"x".repeat(81), "a\n"] {
            let err = validate_lock_name("lock", bad).unwrap_err();
            assert_eq!(err.input, "lock");
        }
    }

    #[test]
    fn suffixes() {
        assert!(validate_suffix("holder-suffix", "linux x64: 3").is_ok());
        assert!(validate_suffix("holder-suffix", "").is_ok());
        assert!(validate_suffix("holder-suffix", "a\nb")
            .unwrap_err()
            .rule
            .contains("line break"));
        assert!(validate_suffix("holder-suffix", " a")
            .unwrap_err()
            .rule
            .contains("whitespace"));
        assert!(validate_suffix("holder-suffix", "a\t").is_err());
    }

    #[test]
    fn holder_ids_round_trip_through_validation() {
        let id = holder_id("octo/app", 42, "build", "linux: 3");
        assert_eq!(id, "octo/app:42:build:linux: 3");
        assert!(validate_holder_id("holder-id", &id).is_ok());
        assert!(validate_holder_id("holder-id", &holder_id("octo/app", 42, "build", "")).is_ok());
        for bad in [
            "octo/app:x:build",
            "octo:42:build",
            "octo/app:42",
            "octo/app:42:bu ild",
            "octo/app:42:build: x",
        ] {
            assert!(validate_holder_id("holder-id", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lock_identifiers_refuse_credentials() {
        let e = validate_lock_name("lock", "ghp_abcdef").unwrap_err();
        assert!(e.rule.contains("credential") && e.value.is_empty(), "{e}");
        assert!(validate_suffix("holder-suffix", "x ghs_abc").is_err());
        assert!(validate_holder_id("holder-id", "octo/app:42:build:ghp_abc").is_err());
    }

    #[test]
    fn branches() {
        assert!(validate_branch("state-branch", "leasehold-state").is_ok());
        assert!(validate_branch("state-branch", "locks/state").is_ok());
        for bad in ["", "a..b", "/a", "a/", "a.lock", "a b", ".a", "a//b", "-a"] {
            assert!(validate_branch("state-branch", bad).is_err(), "{bad}");
        }
    }
}
