//! Typed errors. Each has a stable machine-readable `code` that the binding puts on the
//! JavaScript `Error`, so callers branch on data, never on message text.

use serde::Serialize;

use super::secrets::credential_shape;
use super::words::{FailureCode, Stored};

/// A bad input, found before any request is sent. Names the input and the rule it breaks, by
/// the input's own name (`lease-minutes`, `GITHUB_RUN_ID`): how a user sets it (an action's
/// input, a command-line flag, an environment variable) is the driver's to say.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("`{input}` {rule}{}", got(.value))]
pub struct InputError {
    pub input: String,
    pub rule: String,
    pub value: String,
}

impl InputError {
    pub fn new(input: &str, rule: &str, value: &str) -> Self {
        // Never echo a long value back into a log line, nor one shaped like a credential.
        let value: String = if credential_shape(value).is_some() {
            String::new()
        } else {
            value.chars().take(120).collect()
        };
        InputError {
            input: input.into(),
            rule: rule.into(),
            value,
        }
    }
}

/// ` (got "…")` after a rule, when there is a value worth echoing.
fn got(value: &str) -> String {
    if value.is_empty() {
        String::new()
    } else {
        format!(" (got {value:?})")
    }
}

/// A state document leasehold must not act on (a lock state, a claim: `of` says which, and the
/// message names it). Fail closed: never rewrite what you cannot read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum StateError {
    #[error("{of} is not valid JSON: {detail}")]
    NotJson {
        #[serde(skip)]
        of: Stored,
        detail: String,
    },
    #[error("{of} has no integer \"schema\"")]
    NoSchema {
        #[serde(skip)]
        of: Stored,
    },
    #[error("{of} was written with schema {found}, newer than this version of leasehold understands ({supported}); upgrade the pinned leasehold actions")]
    NewerSchema {
        #[serde(skip)]
        of: Stored,
        found: u64,
        supported: u64,
    },
    #[error("{of} has unknown schema {found}")]
    UnknownSchema {
        #[serde(skip)]
        of: Stored,
        found: u64,
    },
    #[error("{of} does not match schema {schema}: {detail}")]
    Invalid {
        #[serde(skip)]
        of: Stored,
        schema: u64,
        detail: String,
    },
    #[error("{of} {} {found:?}, expected {expected:?}", of.belongs_to())]
    WrongLock {
        #[serde(skip)]
        of: Stored,
        expected: String,
        found: String,
    },
}

impl Stored {
    /// How a document that is another's says so: a lock state names its lock, a claim its
    /// namespace and key.
    fn belongs_to(self) -> &'static str {
        match self {
            Stored::LockState => "file is for lock",
            Stored::Claim => "is for",
        }
    }
}

impl StateError {
    pub fn code(&self) -> FailureCode {
        match self {
            StateError::NotJson { .. } => FailureCode::StateNotJson,
            StateError::NoSchema { .. } => FailureCode::StateNoSchema,
            StateError::NewerSchema { .. } => FailureCode::StateNewerSchema,
            StateError::UnknownSchema { .. } => FailureCode::StateUnknownSchema,
            StateError::Invalid { .. } => FailureCode::StateInvalid,
            StateError::WrongLock { .. } => FailureCode::StateWrongLock,
        }
    }
}

/// The lock's reviewed config file is present but unusable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("config {path}: {rule}")]
pub struct ConfigError {
    pub path: String,
    pub rule: String,
}

/// The driver fed an event the operation cannot take in its current state. A bug in the
/// driver, never a condition of GitHub.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("protocol error: {event} is not expected while {state}")]
pub struct ProtocolError {
    pub event: String,
    pub state: String,
}

/// Everything that can come out of constructing or stepping an operation as an error (rather
/// than as a finished outcome).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// A reviewed config (a claims config file) is unusable.
    #[error(transparent)]
    Config(ConfigError),
}

impl Error {
    pub fn code(&self) -> &'static str {
        match self {
            Error::Input(_) => "invalid-input",
            Error::Protocol(_) => "protocol",
            Error::Config(_) => "invalid-config",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_error_never_echoes_a_credential_shaped_value() {
        let e = InputError::new("timeout-minutes", "must be a whole number", "ghp_abcdef123");
        assert!(e.value.is_empty());
        assert_eq!(e.to_string(), "`timeout-minutes` must be a whole number");
        let e = InputError::new("timeout-minutes", "must be a whole number", "ten");
        assert_eq!(
            e.to_string(),
            "`timeout-minutes` must be a whole number (got \"ten\")"
        );
    }
}
