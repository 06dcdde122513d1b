//! Which resource of a pool a waiter gets, written once: eligibility per resource, then the
//! precedence among the eligible resources of one preference entry. Pure: the pool's config,
//! its books, the holdings and GitHub's `now` in, a resource or the reasons to wait out.
//!
//! Eligibility of a resource, checked in this order (the first that fails is its pass-over
//! reason, [`PassOver`]):
//!
//! | check | passed over as |
//! | --- | --- |
//! | carries every tag of `requires` | `missing-tags` |
//! | in the consumer's allowlist (a repository the config does not list may use all) | `not-allowed` |
//! | below its own cap | `full` |
//! | no backoff in force | `backoff` |
//! | its reading (if any) is not stale: observed within 45 min, not over 5 min ahead, its window not yet reset | `stale` |
//! | its reading's status is `allowed` | `status` |
//! | its reading leaves more than the margin (2 %) of the window | `exhausted` |
//! | with `pacing`: used below `min(target × elapsed + burst, target)` | `over-pace` |
//! | no reading while the pool has readings of others: one holding at a time | `probing` |
//!
//! Precedence among the eligible resources of one preference entry, first difference wins:
//!
//! | rank | rule |
//! | --- | --- |
//! | 1 | affinity: the resource the waiter's key used last within `affinitySeconds`; then resources warm for no key; then resources warm for another key |
//! | 2 | the most room below pace: `target × elapsed fraction − used fraction` (no reading: 0) |
//! | 3 | the soonest reset (use it or lose it; no reading: last) |
//! | 4 | config order |
//!
//! Preference entries (`prefer`: a tag or a resource name each) are tried in order; every
//! resource comes after them (preference, not exclusion: `requires` excludes).

use std::cmp::Reverse;

use crate::policy::limits::{USAGE_FUTURE_MS, USAGE_HEADROOM_MARGIN_BP, USAGE_STALE_MS};
use crate::wire::time::Millis;
use crate::wire::{
    Holder, PoolBooks, PoolConfig, PoolRequest, Resource, UsageReading, UsageStatus,
};

crate::wire::words! {
    /// Why a resource was passed over for a waiter.
    pub enum PassOver {
        MissingTags = "missing-tags",
        NotAllowed = "not-allowed",
        Full = "full",
        Backoff = "backoff",
        Stale = "stale",
        Status = "status",
        Exhausted = "exhausted",
        OverPace = "over-pace",
        Probing = "probing",
    }
}

crate::wire::words! {
    /// Why a waiter of a pool waits.
    pub enum HoldReason {
        /// The pool's config is invalid: nobody new is admitted.
        Closed = "closed",
        /// `maxInFlight` holdings (or the lock's capacity) are taken.
        InFlight = "in-flight",
        /// The waiter's repository holds its `maxConcurrent`.
        ConsumerLimit = "consumer-limit",
        /// A holding's partition intersects the waiter's.
        Partition = "partition",
        /// An earlier waiter whose partition intersects this one's waits too (FIFO among them).
        QueueOrder = "queue-order",
        /// Every resource was passed over.
        NoResource = "no-resource",
    }
}

/// Why a waiter was not admitted: the reason, and each resource passed over with its reason
/// (in config order; empty unless the reason is `no-resource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub reason: HoldReason,
    pub passed: Vec<(String, PassOver)>,
}

impl Held {
    pub fn new(reason: HoldReason) -> Self {
        Held {
            reason,
            passed: Vec::new(),
        }
    }

    /// `no-resource (acct-a1: full, acct-a2: backoff)`.
    pub fn describe(&self) -> String {
        if self.passed.is_empty() {
            return self.reason.to_string();
        }
        let each: Vec<String> = self
            .passed
            .iter()
            .map(|(r, why)| format!("{r}: {why}"))
            .collect();
        format!("{} ({})", self.reason, each.join(", "))
    }
}

/// Who asks: the request, and the repository it comes from (its consumer limits).
#[derive(Clone, Copy, Debug)]
pub struct Ask<'a> {
    pub request: &'a PoolRequest,
    pub repository: &'a str,
}

/// A resource's place in the precedence (smaller first).
type Rank = (u8, Reverse<i64>, Millis, usize);

/// The used fraction allowed by pace and the room below it, in basis points.
fn pace(reading: &UsageReading, target_bp: u32, now: Millis) -> (i64, i64) {
    let span = reading.reset_at.saturating_sub(reading.window_start).max(1);
    let elapsed = now.saturating_sub(reading.window_start).min(span);
    let allowed = i64::from(target_bp) * elapsed as i64 / span as i64;
    (allowed, allowed - i64::from(reading.used_bp))
}

fn is_stale(reading: &UsageReading, now: Millis) -> bool {
    reading.observed_at.saturating_add(USAGE_STALE_MS) < now
        || reading.observed_at > now.saturating_add(USAGE_FUTURE_MS)
        || reading.reset_at <= now
}

/// Holdings on each resource, by config index.
pub fn seats(pool: &PoolConfig, holders: &[Holder]) -> Vec<u32> {
    let mut n = vec![0u32; pool.resources.len()];
    for h in holders {
        if let Some(seat) = &h.pool {
            if let Some(i) = pool.resources.iter().position(|r| r.name == seat.resource) {
                n[i] += 1;
            }
        }
    }
    n
}

/// Why resource `i` cannot be given to `ask` now, if it cannot.
fn pass_over(
    pool: &PoolConfig,
    books: &PoolBooks,
    taken: &[u32],
    i: usize,
    ask: Ask<'_>,
    now: Millis,
) -> Option<PassOver> {
    let r = &pool.resources[i];
    if !ask.request.requires.iter().all(|t| r.tags.contains(t)) {
        return Some(PassOver::MissingTags);
    }
    let consumer = consumer_of(pool, ask.repository);
    if consumer
        .and_then(|c| c.resources.as_ref())
        .is_some_and(|allowed| !allowed.contains(&r.name))
    {
        return Some(PassOver::NotAllowed);
    }
    if taken[i] >= r.capacity {
        return Some(PassOver::Full);
    }
    if books.backoff.get(&r.name).is_some_and(|b| b.until > now) {
        return Some(PassOver::Backoff);
    }
    match books.usage.get(&r.name) {
        Some(reading) => {
            if is_stale(reading, now) {
                return Some(PassOver::Stale);
            }
            if reading.status != UsageStatus::Allowed {
                return Some(PassOver::Status);
            }
            if 10_000u32.saturating_sub(reading.used_bp) <= USAGE_HEADROOM_MARGIN_BP {
                return Some(PassOver::Exhausted);
            }
            if let Some(p) = pool.pacing {
                let (allowed, _) = pace(reading, p.target_bp, now);
                let limit = (allowed + i64::from(p.burst_bp)).min(i64::from(p.target_bp));
                if i64::from(reading.used_bp) >= limit {
                    return Some(PassOver::OverPace);
                }
            }
        }
        None if !books.usage.is_empty() && taken[i] > 0 => return Some(PassOver::Probing),
        None => {}
    }
    None
}

fn rank(pool: &PoolConfig, books: &PoolBooks, i: usize, ask: Ask<'_>, now: Millis) -> Rank {
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::ChoiceConfigOrder) {
        return (0, Reverse(0), 0, i);
    }
    let r = &pool.resources[i];
    let window = pool.affinity_seconds.saturating_mul(1000);
    let warm = |key: &str| {
        books
            .affinity
            .get(key)
            .is_some_and(|m| m.resource == r.name && now.saturating_sub(m.at) <= window)
    };
    let affinity = if window == 0 {
        1
    } else if ask.request.affinity.as_deref().is_some_and(warm) {
        0
    } else if books.affinity.keys().any(|k| warm(k)) {
        2
    } else {
        1
    };
    let target = pool.pacing.map_or(10_000, |p| p.target_bp);
    let reading = books.usage.get(&r.name);
    let room = reading.map_or(0, |u| {
        #[cfg(feature = "planted-bugs")]
        if crate::planted::active(crate::planted::Bug::ChoiceRoomNoElapsed) {
            return i64::from(target) - i64::from(u.used_bp);
        }
        pace(u, target, now).1
    });
    let reset = reading.map_or(Millis::MAX, |u| u.reset_at);
    (affinity, Reverse(room), reset, i)
}

fn matches(r: &Resource, entry: &str) -> bool {
    r.name == entry || r.tags.iter().any(|t| t == entry)
}

/// The resource (its config index) `ask` gets now, or why it waits. `taken` is the holdings on
/// each resource ([`seats`]). Waiter-level limits (in flight, consumer, partition) are the
/// caller's: this is the choice among resources.
pub fn choose(
    pool: &PoolConfig,
    books: &PoolBooks,
    taken: &[u32],
    ask: Ask<'_>,
    now: Millis,
) -> Result<usize, Held> {
    let verdicts: Vec<Option<PassOver>> = (0..pool.resources.len())
        .map(|i| pass_over(pool, books, taken, i, ask, now))
        .collect();
    let entries = ask.request.prefer.iter().map(Some).chain([None]);
    for entry in entries {
        let best = (0..pool.resources.len())
            .filter(|&i| verdicts[i].is_none())
            .filter(|&i| entry.is_none_or(|e| matches(&pool.resources[i], e)))
            .min_by_key(|&i| rank(pool, books, i, ask, now));
        if let Some(i) = best {
            return Ok(i);
        }
    }
    Err(Held {
        reason: HoldReason::NoResource,
        passed: pool
            .resources
            .iter()
            .zip(verdicts)
            .filter_map(|(r, v)| v.map(|why| (r.name.clone(), why)))
            .collect(),
    })
}

/// The consumer entry of `repository`, in any case: GitHub's owner and repository names are
/// case-insensitive (`Octo/App` is `octo/app`).
pub fn consumer_of<'a>(
    pool: &'a crate::wire::PoolConfig,
    repository: &str,
) -> Option<&'a crate::wire::Consumer> {
    pool.consumers
        .iter()
        .find(|c| c.repository.eq_ignore_ascii_case(repository))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{AffinityMark, Backoff, Consumer, Pacing};

    const H: Millis = 3_600_000;

    fn pool(specs: &[(&str, u32, &[&str])]) -> PoolConfig {
        PoolConfig {
            resources: specs
                .iter()
                .map(|(n, c, t)| Resource {
                    name: n.to_string(),
                    capacity: *c,
                    tags: t.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
            affinity_seconds: 300,
            ..PoolConfig::default()
        }
    }

    fn reading(used_bp: u32, start: Millis, reset: Millis, observed: Millis) -> UsageReading {
        UsageReading {
            used_bp,
            window_start: start,
            reset_at: reset,
            observed_at: observed,
            status: UsageStatus::Allowed,
        }
    }

    fn req(prefer: &[&str], requires: &[&str], affinity: Option<&str>) -> PoolRequest {
        PoolRequest {
            prefer: prefer.iter().map(|s| s.to_string()).collect(),
            requires: requires.iter().map(|s| s.to_string()).collect(),
            partition: None,
            affinity: affinity.map(String::from),
        }
    }

    /// The precedence and eligibility, as a table: each row a pool, books, holdings, a request
    /// and the expected grant (a resource name) or hold.
    #[test]
    fn precedence_table() {
        let now = 10 * H;
        let p3 = pool(&[("a", 1, &["x"]), ("b", 2, &["x", "y"]), ("c", 2, &["z"])]);
        let none = PoolBooks::default();
        let warm = |key: &str, r: &str, at: Millis| {
            let mut b = PoolBooks::default();
            b.affinity.insert(
                key.into(),
                AffinityMark {
                    resource: r.into(),
                    at,
                },
            );
            b
        };
        let usage = |rs: &[(&str, UsageReading)]| {
            let mut b = PoolBooks::default();
            for (n, u) in rs {
                b.usage.insert(n.to_string(), u.clone());
            }
            b
        };
        struct Row {
            name: &'static str,
            pool: PoolConfig,
            books: PoolBooks,
            taken: Vec<u32>,
            request: PoolRequest,
            repo: &'static str,
            want: Result<&'static str, &'static str>,
        }
        let mut p_paced = p3.clone();
        p_paced.pacing = Some(Pacing {
            target_bp: 10_000,
            burst_bp: 0,
        });
        let mut p_consumer = p3.clone();
        p_consumer.consumers = vec![Consumer {
            repository: "o/api".into(),
            resources: Some(vec!["c".into()]),
            max_concurrent: None,
        }];
        let rows = vec![
            Row {
                name: "config order when nothing else differs",
                pool: p3.clone(),
                books: none.clone(),
                taken: vec![0, 0, 0],
                request: req(&[], &[], None),
                repo: "o/r",
                want: Ok("a"),
            },
            Row {
                name: "first preference entry with a free slot wins",
                pool: p3.clone(),
                books: none.clone(),
                taken: vec![0, 0, 0],
                request: req(&["z", "x"], &[], None),
                repo: "o/r",
                want: Ok("c"),
            },
            Row {
                name: "a full preferred resource gives the next in the chain",
                pool: p3.clone(),
                books: none.clone(),
                taken: vec![0, 0, 2],
                request: req(&["c", "b"], &[], None),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "preference, not exclusion: the rest come after the chain",
                pool: p3.clone(),
                books: none.clone(),
                taken: vec![0, 2, 2],
                request: req(&["y", "z"], &[], None),
                repo: "o/r",
                want: Ok("a"),
            },
            Row {
                name: "requires excludes",
                pool: p3.clone(),
                books: none.clone(),
                taken: vec![0, 2, 0],
                request: req(&[], &["y"], None),
                repo: "o/r",
                want: Err("no-resource (a: missing-tags, b: full, c: missing-tags)"),
            },
            Row {
                name: "affinity first within the window",
                pool: p3.clone(),
                books: warm("k", "b", now - 100_000),
                taken: vec![0, 0, 0],
                request: req(&[], &[], Some("k")),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "affinity past the window counts for nothing",
                pool: p3.clone(),
                books: warm("k", "b", now - 400_000),
                taken: vec![0, 0, 0],
                request: req(&[], &[], Some("k")),
                repo: "o/r",
                want: Ok("a"),
            },
            Row {
                name: "unrelated work avoids a warm resource",
                pool: p3.clone(),
                books: warm("other", "a", now - 1_000),
                taken: vec![0, 0, 0],
                request: req(&[], &[], Some("k")),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "affinity does not cross preference entries",
                pool: p3.clone(),
                books: warm("k", "c", now - 1_000),
                taken: vec![0, 0, 0],
                request: req(&["x"], &[], Some("k")),
                repo: "o/r",
                want: Ok("a"),
            },
            Row {
                name: "most room below pace",
                pool: p3.clone(),
                books: usage(&[
                    ("a", reading(6_000, now - 5 * H, now + 5 * H, now)),
                    ("b", reading(2_000, now - 5 * H, now + 5 * H, now)),
                ]),
                taken: vec![0, 0, 0],
                request: req(&["x"], &[], None),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "equal room: the soonest reset",
                pool: p3.clone(),
                books: usage(&[
                    ("a", reading(5_000, now - 5 * H, now + 5 * H, now)),
                    ("b", reading(2_500, now - 2 * H, now + 6 * H, now)),
                ]),
                taken: vec![0, 0, 0],
                request: req(&["x"], &[], None),
                repo: "o/r",
                want: Ok("a"),
            },
            Row {
                name: "a stale reading is never spare capacity",
                pool: p3.clone(),
                books: usage(&[
                    ("a", reading(0, now - H, now + H, now - 46 * 60_000)),
                    ("b", reading(9_000, now - H, now + H, now)),
                    ("c", reading(0, now - H, now + H, now)),
                ]),
                taken: vec![0, 0, 0],
                request: req(&["x"], &[], None),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "exhausted and not-allowed readings pass over",
                pool: p3.clone(),
                books: {
                    let mut b = usage(&[
                        ("a", reading(9_900, now - H, now + H, now)),
                        ("b", reading(0, now - H, now + H, now)),
                    ]);
                    b.usage.get_mut("b").unwrap().status = UsageStatus::Rejected;
                    b
                },
                taken: vec![0, 0, 0],
                request: req(&[], &["x"], None),
                repo: "o/r",
                want: Err("no-resource (a: exhausted, b: status, c: missing-tags)"),
            },
            Row {
                name: "over pace passes over",
                pool: p_paced.clone(),
                books: usage(&[
                    ("a", reading(6_000, now - 5 * H, now + 5 * H, now)),
                    ("b", reading(4_000, now - 5 * H, now + 5 * H, now)),
                ]),
                taken: vec![0, 0, 0],
                request: req(&["x"], &["x"], None),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "a reset window's reading is stale",
                pool: p3.clone(),
                books: usage(&[
                    ("a", reading(0, now - 2 * H, now - 1, now - 2)),
                    ("b", reading(0, now - H, now + H, now)),
                ]),
                taken: vec![0, 0, 0],
                request: req(&[], &["x"], None),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "no reading while others have one: one at a time",
                pool: p3.clone(),
                books: usage(&[("a", reading(9_900, now - H, now + H, now))]),
                taken: vec![0, 1, 0],
                request: req(&["x"], &[], None),
                repo: "o/r",
                want: Ok("c"),
            },
            Row {
                name: "backoff in force passes over",
                pool: p3.clone(),
                books: {
                    let mut b = PoolBooks::default();
                    b.backoff.insert(
                        "a".into(),
                        Backoff {
                            until: now + 1,
                            hits: 1,
                        },
                    );
                    b.backoff.insert(
                        "b".into(),
                        Backoff {
                            until: now,
                            hits: 3,
                        },
                    );
                    b
                },
                taken: vec![0, 0, 0],
                request: req(&[], &[], None),
                repo: "o/r",
                want: Ok("b"),
            },
            Row {
                name: "a consumer's allowlist",
                pool: p_consumer.clone(),
                books: none.clone(),
                taken: vec![0, 0, 0],
                request: req(&["x"], &[], None),
                repo: "o/api",
                want: Ok("c"),
            },
            Row {
                name: "an unlisted repository may use all",
                pool: p_consumer,
                books: none.clone(),
                taken: vec![0, 0, 0],
                request: req(&["x"], &[], None),
                repo: "o/else",
                want: Ok("a"),
            },
        ];
        for row in rows {
            let ask = Ask {
                request: &row.request,
                repository: row.repo,
            };
            let got = choose(&row.pool, &row.books, &row.taken, ask, now)
                .map(|i| row.pool.resources[i].name.as_str())
                .map_err(|h| h.describe());
            let want = row.want.map_err(String::from);
            assert_eq!(got, want, "{}", row.name);
        }
    }
}
