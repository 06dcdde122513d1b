//! GitHub's GraphQL endpoint for the documents leasehold sends (`leasehold-core`'s
//! `store/refs.rs`), over the repository's git refs: the read of named refs, the paginated
//! listing under a prefix, and the atomic `updateRefs` compare-and-swap
//! (docs/github-semantics.md#graphql-updaterefs, #graphql-errors, #graphql-pagination; the
//! emulator's `tests/emulator/graphql.mjs` answers the same shapes).
//!
//! A document is recognised by its operation name and must be, byte for byte, the text the core
//! builds for those variables: anything else is answered as GitHub answers a document it cannot
//! run (200 with `errors[]`, no data), so this model never answers a document it does not
//! really understand.

use leasehold_core::{GraphqlError, Reply};
use serde_json::{json, Value};

use crate::{http_date, GitHub, Millis};
use leasehold_core::PAYLOAD_FILE;

/// The repository's GraphQL global id (the same as its REST `node_id`).
pub const REPOSITORY_ID: &str = "R_kgDOLeasehold";

const ZERO_OID: &str = "0000000000000000000000000000000000000000";
/// `first:` of the listing document (checked against the document's text).
const PAGE: usize = 100;

/// One version of a ref: the commit it pointed at from `at` on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefVersion {
    pub oid: String,
    pub at: Millis,
}

/// One ref an `updateRefs` moved: from `before` (`None`: it did not exist) to `after`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefMove {
    pub name: String,
    pub before: Option<String>,
    pub after: String,
}

fn ok(data: Value, now: Millis) -> Reply {
    Reply::Graphql {
        data_absent: false,
        data: Some(data),
        errors: Vec::new(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: Some(http_date(now)),
    }
}

/// A field that could not be resolved: null in `data`, one `errors[]` entry of that type.
fn field_error(field: &str, kind: &str, message: String, now: Millis) -> Reply {
    Reply::Graphql {
        data_absent: false,
        data: Some(json!({ field: null })),
        errors: vec![GraphqlError {
            kind: Some(kind.into()),
            message,
        }],
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: Some(http_date(now)),
    }
}

/// A document GitHub cannot run: errors, no data.
fn document_error(message: &str, now: Millis) -> Reply {
    Reply::Graphql {
        data_absent: true,
        data: None,
        errors: vec![GraphqlError {
            kind: None,
            message: message.into(),
        }],
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: Some(http_date(now)),
    }
}

fn operation_name(document: &str) -> Option<&str> {
    let rest = document
        .strip_prefix("query ")
        .or_else(|| document.strip_prefix("mutation "))?;
    rest.split(['(', ' ', '{']).next()
}

impl GitHub {
    /// Every version of a ref outside `refs/heads/`, oldest first (empty: it never existed).
    pub fn ref_history(&self, name: &str) -> &[RefVersion] {
        self.refs.get(name).map_or(&[][..], |h| h.as_slice())
    }

    /// The commit a ref points at now.
    pub fn ref_target(&self, name: &str) -> Option<&str> {
        self.refs
            .get(name)
            .and_then(|h| h.last())
            .map(|v| v.oid.as_str())
    }

    /// Every ref outside `refs/heads/` with its current commit, by name.
    pub fn ref_targets(&self) -> std::collections::BTreeMap<String, String> {
        self.refs
            .iter()
            .filter_map(|(n, h)| h.last().map(|v| (n.clone(), v.oid.clone())))
            .collect()
    }

    /// Whether commit `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: &str, b: &str) -> bool {
        let mut todo = vec![b.to_string()];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(c) = todo.pop() {
            if c == a {
                return true;
            }
            if seen.insert(c.clone()) {
                if let Some(obj) = self.commits.get(&c) {
                    todo.extend(obj.parents.iter().cloned());
                }
            }
        }
        false
    }

    /// POST /graphql with one of the core's documents: the answer, and the refs it moved.
    pub(crate) fn graphql(
        &mut self,
        document: &str,
        variables: &Value,
        now: Millis,
    ) -> (Reply, Vec<RefMove>) {
        let s = |k: &str| variables.get(k).and_then(Value::as_str).unwrap_or_default();
        let repo = format!("{}/{}", s("owner"), s("name"));
        match operation_name(document) {
            Some("LeaseholdReadRefs") => {
                let names: Vec<String> = (0..)
                    .map_while(|i| {
                        variables
                            .get(format!("r{i}"))
                            .and_then(Value::as_str)
                            .map(String::from)
                    })
                    .collect();
                let expected = leasehold_core::read_refs_call(&repo, &names);
                if !same_document(&expected, document) {
                    return (document_error("Unknown document", now), Vec::new());
                }
                (self.read_refs(&repo, &names, now), Vec::new())
            }
            Some("LeaseholdListRefs") => {
                let after = variables.get("after").and_then(Value::as_str);
                let expected = leasehold_core::list_refs_call(&repo, s("prefix"), after);
                if !same_document(&expected, document) || !document.contains("first: 100") {
                    return (document_error("Unknown document", now), Vec::new());
                }
                (self.list_refs(&repo, s("prefix"), after, now), Vec::new())
            }
            Some("LeaseholdUpdateRefs") => {
                if document != leasehold_core::UPDATE_REFS {
                    return (document_error("Unknown document", now), Vec::new());
                }
                self.update_refs(variables, now)
            }
            _ => (
                document_error("This model answers leasehold's own documents only", now),
                Vec::new(),
            ),
        }
    }

    fn node(&self, name: &str, short: &str) -> Value {
        match self.ref_target(name) {
            None => Value::Null,
            Some(oid) => json!({
                "prefix": &name[..name.len() - short.len()],
                "name": short,
                "target": {
                    "oid": oid,
                    "file": self.file_at(oid, PAYLOAD_FILE).map(|t| json!({"object": {"text": t}})),
                },
            }),
        }
    }

    fn read_refs(&self, repo: &str, names: &[String], now: Millis) -> Reply {
        if repo != self.full_name {
            return not_found_repo(repo, now);
        }
        let mut r = json!({ "id": REPOSITORY_ID });
        for (i, n) in names.iter().enumerate() {
            // Ref.name of a qualified name outside heads and tags: after its last "/".
            let short = n.rsplit('/').next().unwrap_or(n);
            r[format!("r{i}")] = self.node(n, short);
        }
        ok(json!({ "repository": r }), now)
    }

    fn list_refs(&self, repo: &str, prefix: &str, after: Option<&str>, now: Millis) -> Reply {
        if repo != self.full_name {
            return not_found_repo(repo, now);
        }
        let all: Vec<&String> = self
            .refs
            .iter()
            .filter(|(n, h)| n.starts_with(prefix) && n.len() > prefix.len() && !h.is_empty())
            .map(|(n, _)| n)
            .collect();
        let start = match after {
            None => 0,
            Some(c) => match c
                .strip_prefix("cursor:")
                .and_then(|p| p.parse::<usize>().ok())
            {
                Some(p) => p + 1,
                None => {
                    return field_error(
                        "repository",
                        "INVALID_CURSOR_ARGUMENTS",
                        format!("`{c}` does not appear to be a valid cursor."),
                        now,
                    )
                }
            },
        };
        let page: Vec<Value> = all
            .iter()
            .skip(start)
            .take(PAGE)
            .map(|n| self.node(n, &n[prefix.len()..]))
            .collect();
        let end = start + page.len();
        let more = end < all.len();
        let cursor = (!page.is_empty()).then(|| format!("cursor:{}", end - 1));
        ok(
            json!({ "repository": { "id": REPOSITORY_ID, "refs": {
                "pageInfo": { "hasNextPage": more, "endCursor": cursor },
                "nodes": page,
            }}}),
            now,
        )
    }

    fn update_refs(&mut self, variables: &Value, now: Millis) -> (Reply, Vec<RefMove>) {
        let refused = |m: String| (field_error("updateRefs", "UNPROCESSABLE", m, now), vec![]);
        if variables.get("repositoryId").and_then(Value::as_str) != Some(REPOSITORY_ID) {
            let id = variables.get("repositoryId").cloned().unwrap_or_default();
            return (
                field_error(
                    "updateRefs",
                    "NOT_FOUND",
                    format!("Could not resolve to a node with the global id of '{id}'."),
                    now,
                ),
                vec![],
            );
        }
        let Some(updates) = variables.get("refUpdates").and_then(Value::as_array) else {
            return (
                document_error("Variable $refUpdates is required", now),
                vec![],
            );
        };
        if updates.is_empty() {
            return refused("No ref updates were provided.".into());
        }
        let mut moves = Vec::new();
        for u in updates {
            let name = u.get("name").and_then(Value::as_str).unwrap_or_default();
            let after = u
                .get("afterOid")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let before = u.get("beforeOid").and_then(Value::as_str);
            let force = u.get("force").and_then(Value::as_bool).unwrap_or(false);
            if !name.starts_with("refs/") || name.split('/').count() < 3 {
                return refused(format!(
                    "Ref name \"{name}\" is not fully qualified (refs/...)."
                ));
            }
            if name.starts_with("refs/heads/") {
                return refused(format!("Ref \"{name}\": branches are not modelled here."));
            }
            if moves.iter().any(|m: &RefMove| m.name == name) {
                return refused(format!("Ref \"{name}\" is updated more than once."));
            }
            let current = self.ref_target(name).map(String::from);
            if let Some(b) = before {
                let matches = match &current {
                    None => b == ZERO_OID,
                    Some(c) => c == b,
                };
                if !matches {
                    let what = match (&current, b == ZERO_OID) {
                        (Some(c), true) => format!("not to exist, but it points to \"{c}\""),
                        (None, _) => format!("to point to \"{b}\", but it does not exist"),
                        (Some(_), false) => format!("to point to \"{b}\" but it did not"),
                    };
                    return (
                        field_error(
                            "updateRefs",
                            "STALE_DATA",
                            format!("Expected ref \"{name}\" {what}. Pull and try again."),
                            now,
                        ),
                        vec![],
                    );
                }
            }
            if after == ZERO_OID {
                // A delete: leasehold never sends one; GitHub would delete the ref.
                if current.is_none() {
                    return refused(format!(
                        "Ref \"{name}\" does not exist, so it cannot be deleted."
                    ));
                }
                return refused(format!("Ref \"{name}\": deletes are not modelled here."));
            }
            if !self.commits.contains_key(after) {
                return refused(format!(
                    "Object {after} for ref \"{name}\" does not exist in this repository."
                ));
            }
            if let Some(c) = &current {
                if c != after && !force && !self.is_ancestor(c, after) {
                    return refused(format!("Ref \"{name}\" cannot be updated to {after}: the update is not a fast forward (set force: true)."));
                }
            }
            moves.push(RefMove {
                name: name.into(),
                before: current,
                after: after.into(),
            });
        }
        // Every update checked: all applied at once.
        for m in &moves {
            self.refs
                .entry(m.name.clone())
                .or_default()
                .push(RefVersion {
                    oid: m.after.clone(),
                    at: now,
                });
        }
        (
            ok(json!({ "updateRefs": { "clientMutationId": null } }), now),
            moves,
        )
    }
}

fn not_found_repo(repo: &str, now: Millis) -> Reply {
    field_error(
        "repository",
        "NOT_FOUND",
        format!("Could not resolve to a Repository with the name '{repo}'."),
        now,
    )
}

fn same_document(expected: &leasehold_core::Call, document: &str) -> bool {
    matches!(expected, leasehold_core::Call::Graphql { document: d, .. } if d == document)
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasehold_core::{
        list_refs_call, read_refs_call, update_refs_call, Call, Command, TreeFile,
    };

    fn ask(g: &mut GitHub, call: Call) -> crate::Answer {
        g.answer(
            &Command::Request {
                call,
                timeout_ms: 1,
            },
            5,
        )
    }

    fn commit(g: &mut GitHub, text: &str, parents: &[&str]) -> String {
        let Reply::Created { sha: tree } = ask(
            g,
            Call::CreateTree {
                files: vec![TreeFile {
                    path: PAYLOAD_FILE.into(),
                    content: text.into(),
                }],
            },
        )
        .reply
        else {
            panic!()
        };
        let Reply::Created { sha } = ask(
            g,
            Call::CreateCommit {
                tree,
                parents: parents.iter().map(|p| p.to_string()).collect(),
                message: "m".into(),
            },
        )
        .reply
        else {
            panic!()
        };
        sha
    }

    fn update(g: &mut GitHub, u: &[(&str, Option<&str>, &str)]) -> crate::Answer {
        let u: Vec<_> = u
            .iter()
            .map(|(n, b, a)| (n.to_string(), b.map(String::from), a.to_string()))
            .collect();
        ask(g, update_refs_call(REPOSITORY_ID, &u))
    }

    fn error_type(r: &Reply) -> Option<String> {
        match r {
            Reply::Graphql { errors, .. } => errors.first().and_then(|e| e.kind.clone()),
            other => panic!("{other:?}"),
        }
    }

    const A: &str = "refs/leasehold/claims/n/a";
    const B: &str = "refs/leasehold/claims/n/b";

    #[test]
    fn update_refs_is_an_exact_compare_and_swap_applied_whole_or_not_at_all() {
        let mut g = GitHub::new("main");
        let c1 = commit(&mut g, "1", &[]);
        let a = update(&mut g, &[(A, None, &c1)]);
        assert_eq!(error_type(&a.reply), None);
        assert_eq!(a.moved.len(), 1);
        // All zeros: must not exist.
        let again = update(&mut g, &[(A, None, &c1)]);
        assert_eq!(error_type(&again.reply).as_deref(), Some("STALE_DATA"));
        assert!(again.moved.is_empty());
        // One stale member: nothing of the call lands.
        let c2 = commit(&mut g, "2", &[&c1]);
        let both = update(&mut g, &[(B, None, &c1), (A, Some(ZERO_OID), &c2)]);
        assert_eq!(error_type(&both.reply).as_deref(), Some("STALE_DATA"));
        assert_eq!(g.ref_target(B), None, "the first update was not applied");
        // Not a fast forward: refused without force.
        let other = commit(&mut g, "3", &[]);
        let nff = update(&mut g, &[(A, Some(&c1), &other)]);
        assert_eq!(error_type(&nff.reply).as_deref(), Some("UNPROCESSABLE"));
        // A descendant with the right beforeOid lands, with both refs at once.
        let ok = update(&mut g, &[(A, Some(&c1), &c2), (B, None, &other)]);
        assert_eq!(error_type(&ok.reply), None);
        assert_eq!(ok.moved[0].before.as_deref(), Some(c1.as_str()));
        assert_eq!(g.ref_history(A).len(), 2);
        assert!(g.is_ancestor(&c1, &c2) && !g.is_ancestor(&c2, &c1));
        // An unknown repository id.
        let u = vec![(A.to_string(), Some(c2.clone()), c2.clone())];
        let wrong = ask(&mut g, update_refs_call("R_other", &u));
        assert_eq!(error_type(&wrong.reply).as_deref(), Some("NOT_FOUND"));
    }

    #[test]
    fn reads_and_listings_show_each_ref_with_its_payload_page_by_page() {
        let mut g = GitHub::new("main");
        let c = commit(&mut g, "{}", &[]);
        let names: Vec<String> = (0..150)
            .map(|i| format!("refs/leasehold/claims/n/k{i:03}"))
            .collect();
        for n in &names {
            update(&mut g, &[(n, None, &c)]);
        }
        let read = ask(
            &mut g,
            read_refs_call("octo/app", &[names[0].clone(), A.into()]),
        );
        let Reply::Graphql { data: Some(d), .. } = read.reply else {
            panic!()
        };
        assert_eq!(d["repository"]["id"], REPOSITORY_ID);
        assert_eq!(
            d["repository"]["r0"]["target"]["file"]["object"]["text"],
            "{}"
        );
        assert!(d["repository"]["r1"].is_null());
        let first = ask(
            &mut g,
            list_refs_call("octo/app", "refs/leasehold/claims/n/", None),
        );
        let Reply::Graphql { data: Some(d), .. } = first.reply else {
            panic!()
        };
        let refs = &d["repository"]["refs"];
        assert_eq!(refs["nodes"].as_array().unwrap().len(), 100);
        assert_eq!(refs["nodes"][0]["name"], "k000");
        assert_eq!(refs["pageInfo"]["hasNextPage"], true);
        let cursor = refs["pageInfo"]["endCursor"].as_str().unwrap().to_string();
        let second = ask(
            &mut g,
            list_refs_call("octo/app", "refs/leasehold/claims/n/", Some(&cursor)),
        );
        let Reply::Graphql { data: Some(d), .. } = second.reply else {
            panic!()
        };
        assert_eq!(
            d["repository"]["refs"]["nodes"].as_array().unwrap().len(),
            50
        );
        assert_eq!(d["repository"]["refs"]["pageInfo"]["hasNextPage"], false);
        let gone = ask(&mut g, read_refs_call("octo/other", &[A.into()]));
        assert_eq!(error_type(&gone.reply).as_deref(), Some("NOT_FOUND"));
        // A document that is not the core's own is not answered as if it were.
        let odd = ask(
            &mut g,
            Call::Graphql {
                document: "query LeaseholdReadRefs { viewer { login } }".into(),
                variables: json!({}),
            },
        );
        assert!(matches!(odd.reply, Reply::Graphql { data: None, .. }));
    }
}
