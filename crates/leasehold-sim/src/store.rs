//! The simulated GitHub: one lock repository with a default branch (holding the lock's config)
//! and the state branch, with the contents API's compare-and-swap semantics
//! (`shared/github-semantics.md`):
//!
//! * contents `PUT` with `sha` on an existing file: the sha must be the file's current blob sha,
//!   else **409**; no `sha` on an existing file: **422** (`"sha" wasn't supplied`); a **missing
//!   file is created whatever the sha** (201); a missing branch: **404**.
//! * contents `GET`: 200 with the blob sha and an `ETag`; 304 for a matching `If-None-Match`;
//!   404 for a missing file or branch. A stale read (a fault) may serve any version that was
//!   current within the stale window, or a 404 for a file created within it.
//! * `POST git/trees`, `git/commits`: content-addressed objects; `POST git/refs`: create-if-absent,
//!   **422 "Reference already exists"** otherwise.
//!
//! The store keeps the complete history of the state file: every version ever committed, when,
//! and by which write. The invariant checker reads that history; nothing is ever forgotten.

use leasehold_core::time::Millis;
use leasehold_core::{LockState, Reply};

use crate::rng::SimRng;

/// One committed version of the state file.
#[derive(Clone, Debug)]
pub struct Version {
    pub text: String,
    pub sha: String,
    /// The parsed document (leniently: without the core's own structural checks, so that the
    /// checker can name what is wrong), or the parse error.
    pub state: Result<LockState, String>,
    /// Simulated time of the commit.
    pub at: Millis,
    /// The logical write (index into the world's write records) that produced it; `None` for the
    /// version the seed started with.
    pub write: Option<usize>,
}

/// A 40-hex-digit content hash standing in for git's blob sha: identical contents get identical
/// shas (as in git), so only the state's revision keeps versions apart.
pub fn blob_sha(text: &str) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x8422_2325_cbf2_9ce4;
    for &byte in text.as_bytes() {
        a = (a ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        b = (b ^ u64::from(byte))
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(5);
    }
    format!("{a:016x}{b:016x}{:08x}", (a ^ b) as u32)
}

pub fn http(status: u16, message: &str) -> Reply {
    Reply::Http {
        status,
        message: message.into(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    }
}

pub struct Store {
    pub state_path: String,
    pub config_path: String,
    pub branch: String,
    /// The config file on the default branch: (text, sha).
    pub config: Option<(String, String)>,
    pub branch_exists: bool,
    /// Commits on the state branch, ours and unrelated ones.
    pub branch_commits: u64,
    pub versions: Vec<Version>,
    trees: Vec<String>,
    commits: Vec<String>,
}

impl Store {
    pub fn new(lock: &str, branch: &str, config: Option<String>) -> Self {
        Store {
            state_path: format!("locks/{lock}.json"),
            config_path: format!("locks/{lock}.config.json"),
            branch: branch.into(),
            config: config.map(|text| {
                let sha = blob_sha(&text);
                (text, sha)
            }),
            branch_exists: false,
            branch_commits: 0,
            versions: Vec::new(),
            trees: Vec::new(),
            commits: Vec::new(),
        }
    }

    pub fn current(&self) -> Option<&Version> {
        self.versions.last()
    }

    /// `GET contents/{path}?ref=`. `stale`: the window and the generator when a stale read was
    /// drawn. Also says whether it served something older than the current version, and which
    /// version of the state it served (if any).
    pub fn read(
        &self,
        path: &str,
        git_ref: Option<&str>,
        if_none_match: Option<&str>,
        now: Millis,
        stale: Option<(Millis, &mut SimRng)>,
    ) -> (Reply, bool, Option<usize>) {
        let on_default = git_ref.is_none();
        if path == self.config_path && on_default {
            return match &self.config {
                Some((text, sha)) => (file_reply(text, sha, if_none_match, now), false, None),
                None => (http(404, "Not Found"), false, None),
            };
        }
        if on_default || path != self.state_path || git_ref != Some(self.branch.as_str()) {
            return (http(404, "Not Found"), false, None);
        }
        if !self.branch_exists {
            return (
                http(404, &format!("No commit found for the ref {}", self.branch)),
                false,
                None,
            );
        }
        let mut served = self.versions.len();
        if let Some((window, rng)) = stale {
            // Every version current at some instant of [now - window, now] may be served: the
            // current one, each one replaced within the window, and "absent" when the file was
            // created within it.
            let mut oldest = self.versions.len();
            while oldest > 0 && self.versions[oldest - 1].at + window >= now {
                oldest -= 1;
            }
            let choices = (self.versions.len() - oldest) as u64 + 1;
            served = self.versions.len() - rng.below(choices) as usize;
        }
        let older = served < self.versions.len();
        match served.checked_sub(1) {
            Some(i) => (
                file_reply(
                    &self.versions[i].text,
                    &self.versions[i].sha,
                    if_none_match,
                    now,
                ),
                older,
                Some(i),
            ),
            None => (http(404, "Not Found"), older, None),
        }
    }

    /// `PUT contents/{path}` on `branch`. Returns the answer and whether a version was committed.
    pub fn write(
        &mut self,
        path: &str,
        branch: &str,
        content: &str,
        sha: Option<&str>,
        now: Millis,
        write: usize,
    ) -> (Reply, bool) {
        if branch != self.branch || !self.branch_exists {
            return (http(404, &format!("Branch {branch} not found")), false);
        }
        if path != self.state_path {
            return (http(422, "path not expected by the simulation"), false);
        }
        match (self.current(), sha) {
            (Some(_), None) => {
                return (
                    http(422, "Invalid request.\n\n\"sha\" wasn't supplied."),
                    false,
                )
            }
            (Some(cur), Some(s)) if cur.sha != s => {
                return (http(409, &format!("{path} does not match {s}")), false);
            }
            // Existing file with the right sha, or a missing file (created whatever the sha).
            _ => {}
        }
        let new_sha = blob_sha(content);
        let state = serde_json::from_str::<LockState>(content).map_err(|e| e.to_string());
        self.versions.push(Version {
            text: content.to_string(),
            sha: new_sha.clone(),
            state,
            at: now,
            write: Some(write),
        });
        self.branch_commits += 1;
        (
            Reply::Written {
                sha: new_sha,
                date: Some(http_date(now)),
            },
            true,
        )
    }

    /// An unrelated commit to another file on the state branch (the cause of a spurious 409).
    pub fn unrelated_commit(&mut self) {
        self.branch_commits += 1;
    }

    pub fn create_tree(&mut self, files: &[(String, String)]) -> Reply {
        let mut text = String::from("tree");
        for (path, content) in files {
            text.push_str(&format!("\0{path}\0{content}"));
        }
        let sha = blob_sha(&text);
        if !self.trees.contains(&sha) {
            self.trees.push(sha.clone());
        }
        Reply::Created { sha }
    }

    pub fn create_commit(&mut self, tree: &str, message: &str) -> Reply {
        if !self.trees.iter().any(|t| t == tree) {
            return http(422, "Tree SHA does not exist");
        }
        let sha = blob_sha(&format!("commit\0{tree}\0{message}"));
        if !self.commits.contains(&sha) {
            self.commits.push(sha.clone());
        }
        Reply::Created { sha }
    }

    pub fn create_branch(&mut self, branch: &str, sha: &str) -> Reply {
        if !self.commits.iter().any(|c| c == sha) {
            return http(422, "Object does not exist");
        }
        if branch != self.branch {
            return http(422, "branch not expected by the simulation");
        }
        if self.branch_exists {
            return http(422, "Reference already exists");
        }
        self.branch_exists = true;
        self.branch_commits = 1;
        Reply::Created {
            sha: sha.to_string(),
        }
    }
}

/// A 200 (or 304) as GitHub sends it: with the blob sha, an `ETag` and its `date` header.
fn file_reply(text: &str, sha: &str, if_none_match: Option<&str>, now: Millis) -> Reply {
    let etag = format!("\"{sha}\"");
    if if_none_match == Some(etag.as_str()) {
        return Reply::NotModified;
    }
    Reply::File {
        sha: sha.to_string(),
        content: text.to_string(),
        etag: Some(etag),
        date: Some(http_date(now)),
    }
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) for `date` and `retry-after` headers.
pub fn http_date(ms: Millis) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        DAYS[((days + 4) % 7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasehold_core::time::parse_http_date;

    #[test]
    fn http_dates_round_trip_through_the_core() {
        for ms in [
            0,
            784_111_777_000,
            951_782_400_000,
            1_800_000_000_000,
            4_102_444_799_000,
        ] {
            assert_eq!(
                parse_http_date(&http_date(ms)),
                Some(ms),
                "{}",
                http_date(ms)
            );
        }
        assert_eq!(http_date(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    #[test]
    fn contents_put_is_a_compare_and_swap() {
        let mut s = Store::new("x", "state", None);
        assert!(matches!(
            s.write(&s.state_path.clone(), "state", "a", None, 1, 0).0,
            Reply::Http { status: 404, .. }
        ));
        s.branch_exists = true;
        let path = s.state_path.clone();
        // A missing file is created whatever the sha.
        let (r, applied) = s.write(&path, "state", "v1", Some("whatever"), 1, 0);
        assert!(applied && matches!(r, Reply::Written { .. }));
        assert!(matches!(
            s.write(&path, "state", "v2", None, 2, 1).0,
            Reply::Http { status: 422, .. }
        ));
        assert!(matches!(
            s.write(&path, "state", "v2", Some("stale"), 2, 1).0,
            Reply::Http { status: 409, .. }
        ));
        let sha = s.current().unwrap().sha.clone();
        assert!(s.write(&path, "state", "v2", Some(&sha), 3, 1).1);
        assert_eq!(s.versions.len(), 2);
    }

    #[test]
    fn stale_reads_stay_inside_the_window() {
        let mut s = Store::new("x", "state", None);
        s.branch_exists = true;
        let path = s.state_path.clone();
        for (i, t) in [1_000u64, 50_000, 60_000].into_iter().enumerate() {
            let sha = s.current().map(|v| v.sha.clone());
            s.write(&path, "state", &format!("v{i}"), sha.as_deref(), t, i);
        }
        let mut rng = SimRng::new(1);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let (r, _, _) = s.read(&path, Some("state"), None, 65_000, Some((10_000, &mut rng)));
            if let Reply::File { content, .. } = r {
                seen.insert(content);
            }
        }
        // v1 was replaced at 60 s (inside the window), v0 at 50 s (outside it).
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            vec!["v1".to_string(), "v2".to_string()]
        );
    }
}
