//! Claims: one ref per item, `refs/leasehold/claims/<namespace>/<key>` in the lock repository,
//! pointing at a commit whose tree holds `claim.json` (a [`ClaimPayload`]). The commit's oid is
//! the claim's token and its fence; the ref's history is the chain of its versions (`refs.rs`).
//!
//! A [`ClaimSet`] is the document the engine plans on: one or several claims of one namespace
//! (a family), read in one query and written in one `updateRefs`, all or nothing. Its key is
//! `<namespace>/<key>[,<key>…]` (neither part can hold `/` or `,`).

use super::refs::{Location, RefRead, RefWrite};
use super::Document;
use crate::admission::Sole;
use crate::wire::time::Millis;
use crate::wire::{
    Change, ChangeAction, ClaimPayload, ConfigRecord, Outcome, Removal, StateError, Stored,
    CLAIM_KIND, CLAIM_SCHEMA,
};

/// What this document's errors call it.
const OF: Stored = Stored::Claim;

/// The ref of one claim.
pub fn claim_ref(namespace: &str, key: &str) -> String {
    format!("refs/leasehold/claims/{namespace}/{key}")
}

/// The prefix every claim ref of a namespace starts with.
pub fn namespace_prefix(namespace: &str) -> String {
    format!("refs/leasehold/claims/{namespace}/")
}

/// The document key of a set of claims.
pub fn set_key(namespace: &str, keys: &[String]) -> String {
    format!("{namespace}/{}", keys.join(","))
}

fn split_key(key: &str) -> (&str, Vec<&str>) {
    let (ns, keys) = key.split_once('/').unwrap_or((key, ""));
    (ns, keys.split(',').filter(|k| !k.is_empty()).collect())
}

/// One claim of a set, as last read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimMember {
    pub key: String,
    pub ref_name: String,
    /// The commit the ref points at (`None`: the ref does not exist).
    pub oid: Option<String>,
    pub payload: Option<ClaimPayload>,
    /// Set by a plan: this member is written.
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimSet {
    pub namespace: String,
    pub members: Vec<ClaimMember>,
}

impl ClaimSet {
    pub fn member(&self, key: &str) -> Option<&ClaimMember> {
        self.members.iter().find(|m| m.key == key)
    }

    /// Replaces `key`'s payload with `payload`, to be written (its `seq` and `at` are stamped).
    pub fn set(&mut self, key: &str, payload: ClaimPayload) {
        if let Some(m) = self.members.iter_mut().find(|m| m.key == key) {
            m.payload = Some(payload);
            m.changed = true;
        }
    }

    /// The members' new commits, once created: the set as it is if the update is applied.
    pub fn committed(&mut self, commits: &[(String, String)]) {
        for (name, oid) in commits {
            if let Some(m) = self.members.iter_mut().find(|m| &m.ref_name == name) {
                m.oid = Some(oid.clone());
                m.changed = false;
            }
        }
    }
}

/// Parses and checks one payload. Fails closed on anything this version cannot vouch for.
pub fn parse_payload(text: &str, namespace: &str, key: &str) -> Result<ClaimPayload, StateError> {
    let (schema, value) = super::schema_gate(text, CLAIM_SCHEMA, OF)?;
    let p: ClaimPayload = crate::wire::de::from_value(value).map_err(|e| StateError::Invalid {
        of: OF,
        schema,
        detail: e.to_string(),
    })?;
    if p.kind != CLAIM_KIND {
        return Err(StateError::Invalid {
            of: OF,
            schema,
            detail: format!("kind is {:?}, not {CLAIM_KIND:?}", p.kind),
        });
    }
    if p.namespace != namespace || p.key != key {
        return Err(StateError::WrongLock {
            of: OF,
            expected: format!("{namespace}/{key}"),
            found: format!("{}/{}", p.namespace, p.key),
        });
    }
    // A hand-edited `seq` of 2^64 - 1 would wrap the next version's to 0 (or, summed over a
    // family, overflow on the read): the lock state's counters stop at the same bound.
    if p.seq > super::lock::MAX_COUNTER {
        return Err(StateError::Invalid {
            of: OF,
            schema,
            detail: format!(
                "\"seq\" {} is above {}, the largest counter leasehold keeps",
                p.seq,
                super::lock::MAX_COUNTER
            ),
        });
    }
    let held = p.state == crate::wire::ClaimState::Held;
    if held != p.lease.is_some() {
        return Err(StateError::Invalid {
            of: OF,
            schema,
            detail: "a held claim carries a lease and a released one none".into(),
        });
    }
    Ok(p)
}

/// The text written: compact JSON with a final newline.
pub fn render_payload(p: &ClaimPayload) -> String {
    let mut text = crate::wire::pretty_text(p).expect("payload serializes");
    text.push('\n');
    text
}

impl Document for ClaimSet {
    type Admission = Sole;

    fn location(key: &str) -> Location {
        let (ns, keys) = split_key(key);
        Location::Refs {
            names: keys.iter().map(|k| claim_ref(ns, k)).collect(),
        }
    }

    fn empty(key: &str) -> Self {
        let (ns, keys) = split_key(key);
        ClaimSet {
            namespace: ns.into(),
            members: keys
                .iter()
                .map(|k| ClaimMember {
                    key: (*k).into(),
                    ref_name: claim_ref(ns, k),
                    oid: None,
                    payload: None,
                    changed: false,
                })
                .collect(),
        }
    }

    fn parse(_text: &str, _key: &str) -> Result<Self, StateError> {
        Err(StateError::Invalid {
            of: OF,
            schema: CLAIM_SCHEMA,
            detail: "a claim lives in a ref, not in a file".into(),
        })
    }

    fn from_refs(refs: &[RefRead], key: &str) -> Result<Self, StateError> {
        let mut set = Self::empty(key);
        for m in &mut set.members {
            let Some(r) = refs.iter().find(|r| r.name == m.ref_name) else {
                continue;
            };
            m.oid = r.oid.clone();
            if r.oid.is_some() {
                let text = r.text.as_deref().ok_or(StateError::Invalid {
                    of: OF,
                    schema: CLAIM_SCHEMA,
                    detail: format!("{} points at a commit without claim.json", m.ref_name),
                })?;
                m.payload = Some(parse_payload(text, &set.namespace, &m.key)?);
            }
        }
        Ok(set)
    }

    fn render(&self) -> String {
        String::new()
    }

    fn ref_writes(&self) -> Vec<RefWrite> {
        self.members
            .iter()
            .filter(|m| m.changed)
            .filter_map(|m| {
                let p = m.payload.as_ref()?;
                Some(RefWrite {
                    name: m.ref_name.clone(),
                    before: m.oid.clone(),
                    content: render_payload(p),
                    message: format!(
                        "leasehold: {} {}/{} by {}",
                        p.action, self.namespace, m.key, p.run_id
                    ),
                })
            })
            .collect()
    }

    fn committed(&mut self, commits: &[(String, String)]) {
        ClaimSet::committed(self, commits);
    }

    fn exists(&self) -> bool {
        self.members.iter().any(|m| m.oid.is_some())
    }

    /// The sum of the members' `seq`: it only grows along every ref's chain.
    fn revision(&self) -> u64 {
        self.members
            .iter()
            .filter_map(|m| m.payload.as_ref())
            .map(|p| p.seq)
            .sum()
    }

    fn stamp(&mut self, at: Millis, _by: &str, _action: ChangeAction, _removed: Vec<Removal>) {
        for m in self.members.iter_mut().filter(|m| m.changed) {
            if let Some(p) = m.payload.as_mut() {
                p.seq = p.seq.saturating_add(1);
                p.at = at;
            }
        }
    }

    fn last_change(&self) -> Option<&Change> {
        None
    }

    fn config_record(&self) -> Option<&ConfigRecord> {
        None
    }

    fn set_config_record(&mut self, _record: ConfigRecord) {}

    fn report(&self, _outcome: &mut Outcome) {}

    fn admission(_record: &ConfigRecord) -> Sole {
        Sole
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::LockState;

    #[test]
    fn a_seq_past_the_largest_counter_is_refused_never_wrapped() {
        let text = |seq: u64| {
            format!(
                r#"{{"schema":1,"kind":"leasehold-claim","namespace":"deploy","key":"k","state":"released","seq":{seq},"runId":"run-old","releases":"1111111111111111111111111111111111111111","action":"release","at":"2027-01-15T07:50:00.000Z"}}"#
            )
        };
        assert!(parse_payload(&text(super::super::lock::MAX_COUNTER), "deploy", "k").is_ok());
        for seq in [super::super::lock::MAX_COUNTER + 1, u64::MAX] {
            let e = parse_payload(&text(seq), "deploy", "k").unwrap_err();
            assert_eq!(e.code(), crate::wire::FailureCode::StateInvalid);
            assert!(e.to_string().contains("\"seq\""), "{e}");
        }
    }

    #[test]
    fn a_claim_that_cannot_be_read_is_named_a_claim_not_a_lock_state() {
        let cases = [
            ("{", "claim is not valid JSON"),
            ("{}", "claim has no integer \"schema\""),
            (r#"{"schema": 9}"#, "claim was written with schema 9"),
            (r#"{"schema": 0}"#, "claim has unknown schema 0"),
            (r#"{"schema": 1}"#, "claim does not match schema 1"),
        ];
        for (text, start) in cases {
            let e = parse_payload(text, "ns", "k").unwrap_err().to_string();
            assert!(e.starts_with(start), "{text}: {e}");
        }
        // The lock state's messages are as they were.
        let e = LockState::parse("{", "x").unwrap_err().to_string();
        assert!(e.starts_with("lock state is not valid JSON"), "{e}");
        let e = LockState::parse(r#"{"schema": 1, "lock": "y"}"#, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lock state"), "{e}");
    }
}
