//! What actions/validate is asked to check, read from its inputs once, with the core's rules:
//! `files`, one path or glob a line (default `locks/*.config.json`), each normalized as a
//! POSIX path (`./locks/x` and `locks//x` are `locks/x`, as `git diff` names a changed file)
//! and inside the workspace; `changed-only`, the one boolean rule of every input.

use serde::Serialize;

use crate::input::{RawInputs, Reader};
use crate::wire::InputError;

/// The files an unconfigured validate step checks.
pub const DEFAULT_FILES: &str = "locks/*.config.json";

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateSettings {
    /// The patterns, normalized, in the order given.
    pub patterns: Vec<String>,
    /// On a pull request, only the files it changes.
    pub changed_only: bool,
}

impl ValidateSettings {
    pub fn parse(raw: &RawInputs) -> Result<ValidateSettings, InputError> {
        let r = Reader::new(raw);
        let changed_only = r.bool("changed-only")?.unwrap_or(true);
        let files = r.get("files").unwrap_or(DEFAULT_FILES);
        let patterns = files
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                normalize(l).ok_or_else(|| {
                    InputError::new("files", "must name paths inside the workspace", l)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ValidateSettings {
            patterns,
            changed_only,
        })
    }
}

/// `path` as POSIX normalizes it (no `.` or empty segment, a `..` taking the segment before
/// it), or `None` when it is absolute, climbs out of the workspace or names the workspace
/// itself. A trailing `/` is kept.
fn normalize(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut kept: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                kept.pop()?;
            }
            s => kept.push(s),
        }
    }
    if kept.is_empty() {
        return None;
    }
    let mut out = kept.join("/");
    if path.ends_with('/') {
        out.push('/');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<ValidateSettings, InputError> {
        let raw: RawInputs = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ValidateSettings::parse(&raw)
    }

    #[test]
    fn files_are_normalized_and_kept_inside_the_workspace() {
        let s = parse(&[("files", "./locks/a.config.json\n\n locks//b/../c.json \nx/")]).unwrap();
        assert_eq!(s.patterns, ["locks/a.config.json", "locks/c.json", "x/"]);
        assert!(s.changed_only);
        assert_eq!(parse(&[]).unwrap().patterns, [DEFAULT_FILES]);
        for bad in ["/etc/passwd", "../x", "locks/../../x", ".", "a/.."] {
            let e = parse(&[("files", bad)]).unwrap_err();
            assert_eq!(
                (e.input.as_str(), e.value.as_str()),
                ("files", bad),
                "{bad}"
            );
        }
    }

    #[test]
    fn changed_only_is_the_one_boolean_rule() {
        assert!(!parse(&[("changed-only", "False")]).unwrap().changed_only);
        assert!(parse(&[("changed-only", " TRUE ")]).unwrap().changed_only);
        let e = parse(&[("changed-only", "yes")]).unwrap_err();
        assert_eq!(e.input, "changed-only");
    }
}
