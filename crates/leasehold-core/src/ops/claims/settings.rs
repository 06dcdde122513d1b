//! A claim operation's inputs, read and checked once before any request: the namespace and
//! keys, the tokens and run id, the namespace's lease policy (from the reviewed config file the
//! driver read, or the defaults), metadata, and what the `next` lines need.

use std::collections::BTreeMap;

use crate::input::{refuse_credential, validate_repository, Entropy, RawInputs, Reader};
use crate::policy::RetryPolicy;
use crate::store::claim::parse_payload;
use crate::wire::time::parse_rfc3339;
use crate::wire::{
    ClaimPayload, ClockOffsets, ConfigError, Error, InputError, LeasePolicy, RunIdentity,
};

pub use crate::policy::limits::{MAX_CLAIM_NAME as MAX_NAME, MAX_FAMILY};

/// A namespace or key: `[A-Za-z0-9._-]{1,100}`, and a component git takes in a ref name (`git
/// check-ref-format`: it does not start with `.`, holds no `..`, and does not end in `.lock`),
/// so GitHub never refuses the ref after the work of a write; never a credential. (A key, the
/// ref name's last component, must not end with `.` either: [`validate_key`].)
pub fn validate_name(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    let ok = !value.is_empty()
        && value.len() <= MAX_NAME
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !value.starts_with('.')
        && !value.contains("..")
        && !value.ends_with(".lock");
    if !ok {
        return Err(InputError::new(
            input,
            "must match [A-Za-z0-9._-]{1,100}, not start with \".\", hold no \"..\" and not end in \".lock\" (a git ref name's component)",
            value,
        ));
    }
    Ok(())
}

/// A key: a name ([`validate_name`]) that is also the last component of its ref name, which git
/// refuses when it ends with `.`.
pub fn validate_key(input: &str, value: &str) -> Result<(), InputError> {
    validate_name(input, value)?;
    if value.ends_with('.') {
        return Err(InputError::new(
            input,
            "must not end with \".\" (the last component of a git ref name)",
            value,
        ));
    }
    Ok(())
}

fn validate_oid(input: &str, value: &str) -> Result<(), InputError> {
    if value.len() == 40
        && value.bytes().all(|b| b.is_ascii_hexdigit())
        && value.bytes().any(|b| b != b'0')
    {
        Ok(())
    } else {
        Err(InputError::new(
            input,
            "must be a commit oid (40 hexadecimal digits, not all zeros)",
            value,
        ))
    }
}

/// A run id: `[A-Za-z0-9._-]{1,100}`, never a credential.
fn validate_run_id(input: &str, value: &str) -> Result<(), InputError> {
    validate_name(input, value)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Claim,
    Takeover,
    Renew,
    Release,
    Verify,
    Read,
    Adopt,
    FamilyClaim,
    FamilyRelease,
    /// Renews every member of a family in one `updateRefs` (a family's guard).
    FamilyRenew,
}

impl Verb {
    pub fn name(self) -> &'static str {
        match self {
            Verb::Claim => "claim",
            Verb::Takeover => "takeover",
            Verb::Renew => "renew",
            Verb::Release => "release",
            Verb::Verify => "verify",
            Verb::Read => "read",
            Verb::Adopt => "adopt",
            Verb::FamilyClaim => "family claim",
            Verb::FamilyRelease => "family release",
            Verb::FamilyRenew => "family renew",
        }
    }

    /// Whether this verb names several keys (`keys`, and `tokens` but to claim).
    pub fn family(self) -> bool {
        matches!(
            self,
            Verb::FamilyClaim | Verb::FamilyRelease | Verb::FamilyRenew
        )
    }

    /// Whether this verb acquires (and so generates its own run id).
    pub fn acquires(self) -> bool {
        matches!(self, Verb::Claim | Verb::Takeover | Verb::FamilyClaim)
    }
}

#[derive(Clone, Debug)]
pub struct ClaimSettings {
    pub verb: Verb,
    pub repository: String,
    pub repository_id: Option<String>,
    pub namespace: String,
    pub keys: Vec<String>,
    /// One per key (renew, release, verify, family release).
    pub tokens: Vec<String>,
    pub run_id: String,
    pub run: Option<RunIdentity>,
    /// The holder id of the GitHub job running this, when one is (`already-held`).
    pub holder: Option<String>,
    pub lease: LeasePolicy,
    pub metadata: BTreeMap<String, String>,
    pub if_due: bool,
    pub no_takeover: bool,
    pub supersedes: Option<String>,
    pub candidate: Option<String>,
    /// The version the token names, as the previous command printed it (no read needed).
    pub prior: Option<ClaimPayload>,
    /// GitHub's clock as the previous command measured it (with `prior`: the first plan comes
    /// before any answer, and stamps GitHub's time by it).
    pub clock: Option<ClockOffsets>,
    pub dry_run: bool,
    pub retry: RetryPolicy,
    /// How the `next` lines start (`node /path/dist/cli.mjs`), and the config file they name.
    pub invocation: String,
    pub config_path: Option<String>,
}

/// The reviewed claims config: `{"lease": {…}, "namespaces": {"<ns>": {"lease": {…}}}}`, the
/// lease blocks in seconds as a lock config's. Every string in it is checked for credentials.
pub fn parse_claims_config(
    path: &str,
    text: &str,
    namespace: &str,
) -> Result<LeasePolicy, ConfigError> {
    let err = |rule: String| ConfigError {
        path: path.into(),
        rule,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err(format!("must be a JSON object ({e})")))?;
    let obj = value
        .as_object()
        .ok_or_else(|| err("must be a JSON object".into()))?;
    check_strings(&value, "").map_err(&err)?;
    for k in obj.keys() {
        if !["lease", "namespaces"].contains(&k.as_str()) {
            return Err(err(format!("unknown key {k:?} (known: lease, namespaces)")));
        }
    }
    let mut lease = LeasePolicy::guarded();
    if let Some(block) = obj.get("lease") {
        lease =
            crate::store::lease_block(block, &lease).map_err(|r| err(format!("\"lease\": {r}")))?;
    }
    if let Some(nss) = obj.get("namespaces") {
        let nss = nss
            .as_object()
            .ok_or_else(|| err("\"namespaces\" must be an object".into()))?;
        for (ns, entry) in nss {
            validate_name("namespace", ns).map_err(|e| err(format!("namespace {}", e.rule)))?;
            let entry = entry
                .as_object()
                .ok_or_else(|| err(format!("\"namespaces\".{ns} must be an object")))?;
            for k in entry.keys() {
                if k != "lease" {
                    return Err(err(format!("\"namespaces\".{ns}: unknown key {k:?}")));
                }
            }
            if ns == namespace {
                if let Some(block) = entry.get("lease") {
                    lease = crate::store::lease_block(block, &lease)
                        .map_err(|r| err(format!("\"namespaces\".{ns}.lease: {r}")))?;
                }
            }
        }
    }
    Ok(lease)
}

fn check_strings(v: &serde_json::Value, at: &str) -> Result<(), String> {
    let refuse = |s: &str, at: &str| {
        crate::input::credential_shape(s).map_or(Ok(()), |shape| {
            Err(format!(
                "{at}: must not carry a credential (it has the shape of {shape})"
            ))
        })
    };
    match v {
        serde_json::Value::String(s) => refuse(s, if at.is_empty() { "a value" } else { at }),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_strings(x, &format!("{at}[{i}]"))),
        serde_json::Value::Object(o) => o.iter().try_for_each(|(k, x)| {
            let here = format!("{at}.{k}");
            refuse(k, &here)?;
            check_strings(x, &here)
        }),
        _ => Ok(()),
    }
}

/// The inputs only some verbs take, and which. An action passes every input it was given, and
/// the CLI every flag: one given to a verb that does not take it is refused by name, never
/// dropped (a release given metadata, a claim given a token, would do other than was asked).
const TAKEN_BY: &[(&str, &[Verb], &str)] = &[
    (
        "token",
        &[Verb::Renew, Verb::Release, Verb::Verify],
        "renew, release and verify",
    ),
    (
        "tokens",
        &[Verb::FamilyRelease, Verb::FamilyRenew],
        "a family's release and renew",
    ),
    ("supersedes", &[Verb::Takeover], "takeover"),
    ("candidate", &[Verb::Adopt], "adopt"),
    // The verbs that acquire refuse it with their own words (they generate it).
    (
        "run-id",
        &[
            Verb::Claim,
            Verb::Takeover,
            Verb::FamilyClaim,
            Verb::Renew,
            Verb::Release,
            Verb::Verify,
            Verb::Adopt,
            Verb::FamilyRelease,
            Verb::FamilyRenew,
        ],
        "every operation but read",
    ),
    (
        "run-id-prefix",
        &[Verb::Claim, Verb::Takeover, Verb::FamilyClaim],
        "claim, takeover and family claim",
    ),
    ("prior", &[Verb::Renew, Verb::Release], "renew and release"),
    (
        "repository-id",
        &[Verb::Renew, Verb::Release],
        "renew and release",
    ),
    (
        "clock-offset",
        &[Verb::Renew, Verb::Release],
        "renew and release",
    ),
    (
        "set",
        &[
            Verb::Claim,
            Verb::Takeover,
            Verb::Renew,
            Verb::FamilyClaim,
            Verb::FamilyRenew,
        ],
        "claim, takeover and renew",
    ),
];

fn refuse_foreign(r: &Reader, verb: Verb) -> Result<(), InputError> {
    let refuse = |input: &str, takers: &str| {
        InputError::new(
            input,
            &format!("is taken by {takers} only, not by {}", verb.name()),
            "",
        )
    };
    for (input, verbs, takers) in TAKEN_BY {
        if r.get(input).is_some() && !verbs.contains(&verb) {
            return Err(refuse(input, takers));
        }
    }
    // An action passes its default `false`: only a takeover asked of another verb is refused.
    if verb != Verb::Claim && r.bool("no-takeover") == Ok(Some(true)) {
        return Err(refuse("no-takeover", "claim"));
    }
    Ok(())
}

impl ClaimSettings {
    pub fn parse(
        verb: Verb,
        raw: &RawInputs,
        entropy: &Entropy,
    ) -> Result<(Self, Vec<String>), Error> {
        let mut r = Reader::new(raw);
        refuse_foreign(&r, verb)?;
        let repository = r
            .get("repository")
            .or_else(|| r.get("GITHUB_REPOSITORY"))
            .ok_or_else(|| InputError::new("repository", "is required (or GITHUB_REPOSITORY)", ""))?
            .to_string();
        validate_repository("repository", &repository)?;
        let namespace = r.required("namespace")?.to_string();
        validate_name("namespace", &namespace)?;
        let family = verb.family();
        let keys: Vec<String> = if family {
            let list = r.required("keys")?;
            list.split(',').map(|k| k.trim().to_string()).collect()
        } else {
            vec![r.required("key")?.to_string()]
        };
        for k in &keys {
            validate_key(if family { "keys" } else { "key" }, k)?;
        }
        if family {
            let mut seen = std::collections::BTreeSet::new();
            if keys.len() > MAX_FAMILY {
                return Err(InputError::new(
                    "keys",
                    &format!("must name at most {MAX_FAMILY} keys"),
                    "",
                )
                .into());
            }
            for k in &keys {
                if !seen.insert(k) {
                    return Err(InputError::new("keys", "must not name a key twice", k).into());
                }
            }
        }
        let tokens: Vec<String> = match verb {
            Verb::Renew | Verb::Release | Verb::Verify => vec![r.required("token")?.to_string()],
            Verb::FamilyRelease | Verb::FamilyRenew => r
                .required("tokens")?
                .split(',')
                .map(|t| t.trim().to_string())
                .collect(),
            _ => Vec::new(),
        };
        for t in &tokens {
            validate_oid(if family { "tokens" } else { "token" }, t)?;
        }
        if family && verb != Verb::FamilyClaim && tokens.len() != keys.len() {
            return Err(InputError::new(
                "tokens",
                "must name one token per key, in the same order",
                "",
            )
            .into());
        }
        let run_id = if verb.acquires() {
            if r.get("run-id").is_some() {
                return Err(InputError::new(
                    "run-id",
                    &format!("is generated by {}: it cannot be given", verb.name()),
                    "",
                )
                .into());
            }
            let prefix = r.get("run-id-prefix").unwrap_or("run");
            refuse_credential("run-id-prefix", prefix)?;
            if prefix.len() > 60 {
                return Err(InputError::new(
                    "run-id-prefix",
                    "must be at most 60 characters",
                    prefix,
                )
                .into());
            }
            let id = format!("{prefix}-{}", entropy.nonce);
            validate_run_id("run-id-prefix", &id)?;
            id
        } else if verb == Verb::Read {
            String::new()
        } else {
            let id = r.required("run-id")?.to_string();
            validate_run_id("run-id", &id)?;
            id
        };
        let repository_id = r.get("repository-id").map(String::from);
        if let Some(id) = &repository_id {
            refuse_credential("repository-id", id)?;
            let ok = id.len() <= 100
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'='));
            if !ok {
                return Err(InputError::new(
                    "repository-id",
                    "must be a GitHub node id ([A-Za-z0-9_=-])",
                    id,
                )
                .into());
            }
        }
        let mut metadata = BTreeMap::new();
        if let Some(sets) = r.get("set") {
            for line in sets.lines().filter(|l| !l.trim().is_empty()) {
                let (k, v) = line
                    .split_once('=')
                    .ok_or_else(|| InputError::new("set", "must be key=value", line))?;
                validate_name("set", k)?;
                refuse_credential("set", v)?;
                if v.chars().count() > 300 || v.chars().any(char::is_control) {
                    return Err(InputError::new(
                        "set",
                        "values must be at most 300 printable characters",
                        "",
                    )
                    .into());
                }
                metadata.insert(k.to_string(), v.to_string());
            }
        }
        let lease = match r.get_exact("config") {
            None => LeasePolicy::guarded(),
            Some(text) => {
                let path = r.get("config-path").unwrap_or("the claims config");
                parse_claims_config(path, text, &namespace).map_err(Error::Config)?
            }
        };
        lease.validate().map_err(|rule| {
            Error::Config(ConfigError {
                path: "lease".into(),
                rule: rule.to_string(),
            })
        })?;
        let supersedes = match verb {
            Verb::Takeover => {
                let s = r.required("supersedes")?;
                validate_oid("supersedes", s)?;
                Some(s.to_string())
            }
            _ => None,
        };
        let candidate = match (verb, r.get("candidate")) {
            (Verb::Adopt, Some(c)) => {
                validate_oid("candidate", c)?;
                Some(c.to_string())
            }
            _ => None,
        };
        let prior = match (verb, r.get_exact("prior")) {
            (Verb::Renew | Verb::Release, Some(text)) => {
                let p = parse_payload(text, &namespace, &keys[0]).map_err(|e| {
                    InputError::new(
                        "prior",
                        &format!("must be the claim payload the last command printed ({e})"),
                        "",
                    )
                })?;
                if repository_id.is_none() {
                    return Err(
                        InputError::new("prior", "needs repository-id beside it", "").into(),
                    );
                }
                Some(p)
            }
            _ => None,
        };
        // The pair's other half: alone it would be dropped, and the step read first as though
        // it had never been given.
        if repository_id.is_some() && prior.is_none() {
            return Err(InputError::new("repository-id", "needs prior beside it", "").into());
        }
        // Used only by a plan made before any answer (on `prior`); a read's `date` replaces it.
        // Without `prior` there is no such plan: refused, not kept unused.
        let clock = match (verb, r.get("clock-offset")) {
            (Verb::Renew | Verb::Release, Some(text)) => {
                let clock = parse_clock_offset(text)?;
                if prior.is_none() {
                    return Err(InputError::new("clock-offset", "needs prior beside it", "").into());
                }
                Some(clock)
            }
            _ => None,
        };
        // A claim records its run (repository, run, attempt, job), not a holder id: the matrix
        // cells of one job are one holder to it, and a suffix would be recorded nowhere.
        if r.get("holder-suffix").is_some_and(|s| !s.is_empty()) {
            return Err(InputError::new(
                "holder-suffix",
                "is not taken by claims: a claim records its run and job, not a holder id",
                "",
            )
            .into());
        }
        let (run, holder) = match r.run_identity() {
            Ok(run) => {
                let holder = crate::input::holder_id(&run.repository, run.run_id, &run.job, "");
                (Some(run), Some(holder))
            }
            Err(_) => (None, None),
        };
        let invocation = r.get("invocation").unwrap_or("leasehold").to_string();
        let config_path = r.get("config-path").map(String::from);
        let s = ClaimSettings {
            verb,
            repository,
            repository_id,
            namespace,
            keys,
            tokens,
            run_id,
            run,
            holder,
            lease,
            metadata,
            if_due: r.bool("if-due")?.unwrap_or(false),
            no_takeover: r.bool("no-takeover")?.unwrap_or(false),
            supersedes,
            candidate,
            prior,
            clock,
            dry_run: r.bool("dry-run")?.unwrap_or(false),
            retry: r.retry_policy(),
            invocation,
            config_path,
        };
        if s.if_due && !matches!(verb, Verb::Renew | Verb::FamilyRenew) {
            return Err(
                InputError::new("if-due", "is taken by renew and family renew only", "").into(),
            );
        }
        Ok((s, r.warnings))
    }

    pub fn rfc(text: &str) -> Option<u64> {
        parse_rfc3339(text)
    }
}

/// `low,high`: GitHub's clock minus this machine's, in milliseconds, as a result document's
/// `clock` gives them (`low <= high`, each within a week).
fn parse_clock_offset(text: &str) -> Result<ClockOffsets, Error> {
    const WEEK_MS: i64 = 7 * 24 * 3_600_000;
    let bad = || {
        Error::from(InputError::new(
            "clock-offset",
            "must be LOW,HIGH: GitHub's clock minus this machine's in milliseconds, LOW <= HIGH, each within a week, as the last document's clock gives them",
            text,
        ))
    };
    let (low, high) = text.split_once(',').ok_or_else(bad)?;
    let num = |t: &str| t.trim().parse::<i64>().ok().filter(|v| v.abs() <= WEEK_MS);
    match (num(low), num(high)) {
        (Some(low_ms), Some(high_ms)) if low_ms <= high_ms => Ok(ClockOffsets { low_ms, high_ms }),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::{validate_key, validate_name};

    #[test]
    fn a_name_is_a_component_git_takes_in_a_ref() {
        for ok in ["k", "issue-42", "v1.2", "a_b", "x.y.z"] {
            assert!(validate_key("key", ok).is_ok(), "{ok}");
        }
        // git's check-ref-format refuses these as a component: GitHub would refuse the ref
        // only after the read, the tree and the commit of a write.
        for bad in [".", "..", ".hidden", "a..b", "x.lock", "", "a/b", "a b"] {
            let e = validate_name("namespace", bad).unwrap_err();
            assert_eq!(e.input, "namespace", "{bad}");
        }
        // A ref name may not end with a dot: a key (its last component) may not, a namespace
        // (a middle one) may.
        assert!(validate_name("namespace", "v1.").is_ok());
        assert_eq!(validate_key("key", "v1.").unwrap_err().input, "key");
    }
}
