//! Documents that live in git refs rather than in a file: each ref points at a commit whose
//! tree holds one file, [`PAYLOAD_FILE`], and the commit's oid is the version (the token, the
//! fence). Read with one GraphQL query (the repository id and every ref with its payload);
//! written by creating a tree and a commit per changed ref (each commit's parent is the commit
//! the ref points at, so the update is a fast-forward and a ref's history is its chain of
//! versions) and then one `updateRefs` mutation whose `beforeOid`s are the versions read: a
//! compare-and-swap over every ref of the document at once, applied whole or not at all
//! (docs/github-semantics.md#graphql-updaterefs). Nothing here forces, deletes or writes a
//! zero `afterOid`.
//!
//! The GraphQL documents are written once, here.

use serde_json::{json, Value};

use crate::wire::Call;

/// The one file in a ref document's tree.
pub const PAYLOAD_FILE: &str = "claim.json";

/// `beforeOid` for a ref that must not exist yet.
pub const ZERO_OID: &str = "0000000000000000000000000000000000000000";

/// What one ref is read as: the one fragment every ref read uses.
const REF_FIELDS: &str = "fragment LeaseholdRef on Ref { prefix name target { oid ... on Commit { \
     file(path: \"claim.json\") { object { ... on Blob { text } } } } } }";

/// One page of the refs under a prefix, each with its payload (the list query).
pub const LIST_REFS: &str = "query LeaseholdListRefs($owner: String!, $name: String!, \
     $prefix: String!, $after: String) { repository(owner: $owner, name: $name) { id \
     refs(refPrefix: $prefix, first: 100, after: $after) { pageInfo { hasNextPage endCursor } \
     nodes { ...LeaseholdRef } } } } ";

/// The compare-and-swap over several refs.
pub const UPDATE_REFS: &str = "mutation LeaseholdUpdateRefs($repositoryId: ID!, \
     $refUpdates: [RefUpdate!]!) { updateRefs(input: {repositoryId: $repositoryId, \
     refUpdates: $refUpdates}) { clientMutationId } }";

/// Where a kind of document lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A file on the state branch, read and written through the contents API.
    File { path: String },
    /// Git refs (fully qualified names), read with GraphQL, written with `updateRefs`.
    Refs { names: Vec<String> },
}

/// One ref as read: absent (`oid: None`), or at a commit with the payload's text (`None` when
/// the commit has no payload file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefRead {
    pub name: String,
    pub oid: Option<String>,
    pub text: Option<String>,
}

/// One ref to move: from `before` (`None`: must not exist) to a new commit of `content`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefWrite {
    pub name: String,
    pub before: Option<String>,
    pub content: String,
    pub message: String,
}

/// The query reading `names` in `repository` (`owner/name`): the repository id and each ref,
/// aliased `r0`, `r1`, … in order.
pub fn read_refs_call(repository: &str, names: &[String]) -> Call {
    let (owner, name) = repository.split_once('/').unwrap_or((repository, ""));
    let mut params = String::from("$owner: String!, $name: String!");
    let mut fields = String::new();
    let mut variables = json!({ "owner": owner, "name": name });
    for (i, n) in names.iter().enumerate() {
        params.push_str(&format!(", $r{i}: String!"));
        fields.push_str(&format!(
            " r{i}: ref(qualifiedName: $r{i}) {{ ...LeaseholdRef }}"
        ));
        variables[format!("r{i}")] = Value::String(n.clone());
    }
    Call::Graphql {
        document: format!(
            "query LeaseholdReadRefs({params}) {{ repository(owner: $owner, name: $name) {{ id{fields} }} }} {REF_FIELDS}"
        ),
        variables,
    }
}

/// The list query for one page (`after`: the previous page's end cursor).
pub fn list_refs_call(repository: &str, prefix: &str, after: Option<&str>) -> Call {
    let (owner, name) = repository.split_once('/').unwrap_or((repository, ""));
    Call::Graphql {
        document: format!("{LIST_REFS}{REF_FIELDS}"),
        variables: json!({ "owner": owner, "name": name, "prefix": prefix, "after": after }),
    }
}

/// The `updateRefs` mutation moving each ref from its `before` to its new commit.
pub fn update_refs_call(repository_id: &str, updates: &[(String, Option<String>, String)]) -> Call {
    let ref_updates: Vec<Value> = updates
        .iter()
        .map(|(name, before, after)| {
            json!({
                "name": name,
                "beforeOid": before.as_deref().unwrap_or(ZERO_OID),
                "afterOid": after,
                "force": forced(),
            })
        })
        .collect();
    Call::Graphql {
        document: UPDATE_REFS.into(),
        variables: json!({ "repositoryId": repository_id, "refUpdates": ref_updates }),
    }
}

/// Never forced (a planted defect aside).
fn forced() -> bool {
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::RefCommitWithoutParent) {
        return true;
    }
    false
}

fn read_ref(node: &Value, name: &str) -> Result<RefRead, String> {
    if node.is_null() {
        return Ok(RefRead {
            name: name.into(),
            oid: None,
            text: None,
        });
    }
    let oid = node
        .pointer("/target/oid")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("ref {name} has no target oid"))?;
    let text = node
        .pointer("/target/file/object/text")
        .and_then(Value::as_str)
        .map(String::from);
    Ok(RefRead {
        name: name.into(),
        oid: Some(oid.into()),
        text,
    })
}

/// Reads the answer to [`read_refs_call`]: the repository id and the refs in order.
pub fn parse_read(data: &Value, names: &[String]) -> Result<(String, Vec<RefRead>), String> {
    let repo = data
        .get("repository")
        .filter(|r| !r.is_null())
        .ok_or("the answer has no repository")?;
    let id = repo
        .get("id")
        .and_then(Value::as_str)
        .ok_or("the answer has no repository id")?;
    let refs = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let node = repo.get(format!("r{i}")).unwrap_or(&Value::Null);
            read_ref(the_ref_asked(node, n)?, n)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((id.into(), refs))
}

/// `ref(qualifiedName:)` falls back to a short-name match when no ref has the full name (its
/// schema: "Fully qualified matches are checked in order … before falling back onto checks for
/// short name matches"): a branch `refs/heads/refs/…` answers for an absent `refs/…`. The ref
/// asked for is the node only when its prefix and name spell the full name; otherwise it is
/// absent.
fn the_ref_asked<'a>(node: &'a Value, full_name: &str) -> Result<&'a Value, String> {
    if node.is_null() {
        return Ok(node);
    }
    let part = |key: &str| {
        node.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("ref {full_name} has no {key}"))
    };
    let (prefix, name) = (part("prefix")?, part("name")?);
    let spelled = full_name.strip_prefix(prefix) == Some(name);
    Ok(if spelled { node } else { &Value::Null })
}

/// One page of [`list_refs_call`]: the repository id, the refs, and the next cursor when there
/// is a next page. A page that says there is more but names no cursor is an error (a capped
/// page must never read as the end).
pub fn parse_list(data: &Value) -> Result<(String, Vec<RefRead>, Option<String>), String> {
    let repo = data
        .get("repository")
        .filter(|r| !r.is_null())
        .ok_or("the answer has no repository")?;
    let id = repo.get("id").and_then(Value::as_str).unwrap_or_default();
    let refs = repo.get("refs").ok_or("the answer has no refs")?;
    let nodes = refs
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or("the answer has no refs.nodes")?;
    let mut out = Vec::new();
    for node in nodes {
        let name = node
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a ref has no name")?;
        out.push(read_ref(node, name)?);
    }
    let more = refs
        .pointer("/pageInfo/hasNextPage")
        .and_then(Value::as_bool)
        .ok_or("the answer has no pageInfo.hasNextPage")?;
    let next = match (
        more,
        refs.pointer("/pageInfo/endCursor").and_then(Value::as_str),
    ) {
        (false, _) => None,
        (true, Some(c)) => Some(c.to_string()),
        (true, None) => return Err("a page says there is more but gives no cursor".into()),
    };
    Ok((id.into(), out, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_query_aliases_every_ref_and_parses_back() {
        let names = vec![
            "refs/leasehold/claims/n/a".to_string(),
            "refs/leasehold/claims/n/b".into(),
        ];
        let Call::Graphql {
            document,
            variables,
        } = read_refs_call("octo/app", &names)
        else {
            panic!()
        };
        assert!(
            document.contains("r1: ref(qualifiedName: $r1)"),
            "{document}"
        );
        assert_eq!(variables["r0"], "refs/leasehold/claims/n/a");
        let data = json!({"repository": {"id": "R_1", "r0": null, "r1": {
            "prefix": "refs/leasehold/claims/n/", "name": "b",
            "target": {"oid": "abc", "file": {"object": {"text": "{}"}}}}}});
        let (id, refs) = parse_read(&data, &names).unwrap();
        assert_eq!(id, "R_1");
        assert_eq!(refs[0].oid, None);
        assert_eq!(
            (refs[1].oid.as_deref(), refs[1].text.as_deref()),
            (Some("abc"), Some("{}"))
        );
        // GitHub's short-name fallback: a branch named like the absent claim ref answers for
        // it. That is not the claim: the claim is absent.
        let fallback = json!({"repository": {"id": "R_1", "r0": null, "r1": {
            "prefix": "refs/heads/", "name": "refs/leasehold/claims/n/b",
            "target": {"oid": "abc", "file": null}}}});
        let (_, refs) = parse_read(&fallback, &names).unwrap();
        assert_eq!(
            (refs[1].oid.as_deref(), refs[1].text.as_deref()),
            (None, None)
        );
        let unnamed = json!({"repository": {"id": "R_1", "r0": null, "r1": {"name": "b",
            "target": {"oid": "abc"}}}});
        assert!(parse_read(&unnamed, &names)
            .unwrap_err()
            .contains("no prefix"));
    }

    #[test]
    fn update_never_forces_and_zeros_mean_absent() {
        let Call::Graphql { variables, .. } =
            update_refs_call("R", &[("refs/x".into(), None, "c1".into())])
        else {
            panic!()
        };
        let u = &variables["refUpdates"][0];
        assert_eq!(u["beforeOid"], ZERO_OID);
        assert_eq!(u["force"], false);
        assert_eq!(u["afterOid"], "c1");
    }

    #[test]
    fn a_capped_page_without_a_cursor_is_an_error() {
        let data = json!({"repository": {"id": "R", "refs": {"pageInfo": {"hasNextPage": true, "endCursor": null}, "nodes": []}}});
        assert!(parse_list(&data).is_err());
        let data = json!({"repository": {"id": "R", "refs": {"pageInfo": {"hasNextPage": false, "endCursor": null}, "nodes": []}}});
        assert_eq!(parse_list(&data).unwrap().2, None);
    }
}
