//! What acquire adds for a resource pool, kept apart from the plain lock's plan: the request
//! inputs (`prefer`, `requires`, `partition`, `affinity`), the outputs of a holding (`resource`,
//! `resource-tags`), and the line that says why a waiter waits, naming why each resource was
//! passed over.

use crate::admission::{LockRule, Pool};
use crate::input::Reader;
use crate::policy::limits::{BACKOFF_BASE_MS, BACKOFF_CAP_MS, GLOBAL_PARTITION, MAX_POOL_LIST};
use crate::store::pool_config::check_word;
use crate::wire::time::{parse_rfc3339, Millis};
use crate::wire::{Backoff, Holder, InputError, LockState, Outcome, PoolConfig, PoolRequest};

/// A comma-separated list of words (names, tags, atoms); `*` where `global` allows it.
fn word_list(r: &Reader<'_>, name: &str, global: bool) -> Result<Vec<String>, InputError> {
    let Some(raw) = r.get(name) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<String> = Vec::new();
    for word in raw.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if !(global && word == GLOBAL_PARTITION) {
            check_word(name, word).map_err(|e| InputError::new(name, &e.detail, word))?;
        }
        if !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    if out.len() > MAX_POOL_LIST {
        return Err(InputError::new(
            name,
            &format!("has more than {MAX_POOL_LIST} entries"),
            "",
        ));
    }
    Ok(out)
}

/// The pool request of an acquire, or `None` when it sets none of the pool inputs (a plain
/// acquire, which a pool admits too, on any resource).
pub fn parse_request(r: &Reader<'_>) -> Result<Option<PoolRequest>, InputError> {
    let prefer = word_list(r, "prefer", false)?;
    let requires = word_list(r, "requires", false)?;
    let partition = word_list(r, "partition", true)?;
    let affinity = match r.get("affinity") {
        None => None,
        Some(key) => {
            check_word("affinity", key).map_err(|e| InputError::new("affinity", &e.detail, key))?;
            Some(key.to_string())
        }
    };
    let request = PoolRequest {
        prefer,
        requires,
        partition: (!partition.is_empty()).then_some(partition),
        affinity,
    };
    Ok((request != PoolRequest::default()).then_some(request))
}

/// The pool of the admission rule, when the lock is a pool.
pub fn pool_of(rule: Option<&LockRule>) -> Option<&Pool> {
    match rule {
        Some(LockRule::Pool(p)) => Some(p),
        _ => None,
    }
}

/// Adds a pool holding's `resource` and `resource-tags` to an acquire's outcome (`pool`: the
/// config last seen, for the tags).
pub fn seat_outputs(o: &mut Outcome, holder: &Holder, pool: Option<&PoolConfig>) {
    let Some(seat) = &holder.pool else { return };
    o.resource = Some(seat.resource.clone());
    o.resource_tags = Some(
        pool.and_then(|p| p.resources.iter().find(|r| r.name == seat.resource))
            .map(|r| r.tags.clone())
            .unwrap_or_default(),
    );
}

/// A holding with an affinity key leaves (its release): its resource was that key's in use until
/// now, so the key's mark moves to now and the resource stays warm for `affinitySeconds` from its
/// last use, not from its grant. `pool` is the config known (the fresh record's, else the one the
/// state records); without affinity there, nothing is marked.
pub fn mark_last_use(doc: &mut LockState, holder: &Holder, pool: Option<&PoolConfig>, now: Millis) {
    let Some(seat) = &holder.pool else { return };
    let (Some(key), true) = (&seat.affinity, pool.is_some_and(|p| p.affinity_seconds > 0)) else {
        return;
    };
    doc.pool
        .get_or_insert_with(Default::default)
        .affinity
        .insert(
            key.clone(),
            crate::wire::AffinityMark {
                resource: seat.resource.clone(),
                at: now,
            },
        );
}

/// Why `holder_id`, waiting in `st`, is not admitted: the scan replayed to its place.
pub fn why_waiting(pool: &Pool, st: &LockState, holder_id: &str, now: Millis) -> Option<String> {
    let mut scan = crate::admission::Scan::new(pool, st, now);
    for entry in &st.queue {
        let verdict = scan.judge(entry, now);
        if entry.holder_id == holder_id {
            return verdict.err().map(|held| held.describe());
        }
        if verdict.is_err() {
            scan.pass_over(entry);
        }
    }
    None
}

/// How the work on a pool's resource went, as release and renew report it (`outcome`,
/// `retry-at`): a rate limit backs the resource off; a success resets a backoff that has ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    Success,
    /// The provider's hint, when it gave one (`retry-at`, RFC 3339 UTC).
    RateLimited {
        retry_at: Option<Millis>,
    },
}

/// `outcome` (`success` or `rate-limited`) and `retry-at`; `None` when `outcome` is not set
/// (the books are left as they are).
pub fn parse_outcome(r: &Reader<'_>) -> Result<Option<RunOutcome>, InputError> {
    let retry_at = match r.get("retry-at") {
        None => None,
        Some(t) => Some(parse_rfc3339(t).ok_or_else(|| {
            InputError::new(
                "retry-at",
                "must be a UTC time, YYYY-MM-DDTHH:MM:SS[.fff]Z",
                t,
            )
        })?),
    };
    match r.get("outcome") {
        None if retry_at.is_some() => Err(InputError::new(
            "retry-at",
            "needs `outcome: rate-limited`",
            "",
        )),
        None => Ok(None),
        Some("success") if retry_at.is_none() => Ok(Some(RunOutcome::Success)),
        Some("success") => Err(InputError::new(
            "retry-at",
            "needs `outcome: rate-limited`",
            "",
        )),
        Some("rate-limited") => Ok(Some(RunOutcome::RateLimited { retry_at })),
        Some(other) => Err(InputError::new(
            "outcome",
            "must be success or rate-limited",
            other,
        )),
    }
}

/// The backoff after one more consecutive rate limit: until the hint (at most the cap from
/// now), else 15 minutes doubling per consecutive hit, up to 5 hours.
pub fn next_backoff(previous: Option<&Backoff>, retry_at: Option<Millis>, now: Millis) -> Backoff {
    let hits = previous.map_or(0, |b| b.hits).saturating_add(1);
    let doubled = BACKOFF_BASE_MS
        .saturating_mul(1u64 << (hits - 1).min(20))
        .min(BACKOFF_CAP_MS);
    let until = match retry_at {
        Some(at) => at.clamp(now, now.saturating_add(BACKOFF_CAP_MS)),
        None => now.saturating_add(doubled),
    };
    Backoff { until, hits }
}

/// Records `outcome` of the work on `holder_id`'s resource in the pool's books. Returns whether
/// the books changed (a plain lock's holding has no resource: nothing changes).
pub fn record_outcome(
    doc: &mut LockState,
    holder_id: &str,
    outcome: RunOutcome,
    now: Millis,
) -> bool {
    let Some(resource) = doc
        .holder(holder_id)
        .and_then(|h| h.pool.as_ref())
        .map(|s| s.resource.clone())
    else {
        return false;
    };
    let before = doc.pool.clone();
    let books = doc.pool.get_or_insert_with(Default::default);
    match outcome {
        // A success ends a backoff only once it is over: work that began before the provider's
        // limit hit (another holding of the same resource) proves nothing about the limit, and a
        // backoff it erased would admit into the block and reset the doubling.
        RunOutcome::Success => {
            if books.backoff.get(&resource).is_some_and(|b| b.until <= now) {
                books.backoff.remove(&resource);
            }
        }
        RunOutcome::RateLimited { retry_at } => {
            let next = next_backoff(books.backoff.get(&resource), retry_at, now);
            books.backoff.insert(resource, next);
        }
    }
    if books.is_empty() {
        doc.pool = None;
    }
    doc.pool != before
}

/// A pool's admission on a state parsed once, for benchmarks only (the wasm binding's
/// `PoolBench`; no action or operation uses it): the state's text and the config's text are read
/// here, and each [`PoolPass::admit`] runs the same admission pass an operation's write runs, on
/// a copy of the parsed state. [`PoolPass::copy`] makes the copy alone, so a bench can tell the
/// pass from the copying.
pub struct PoolPass {
    pool: Pool,
    doc: LockState,
    max_ttl_ms: Millis,
}

impl PoolPass {
    /// `lock`'s state text and its config file (`config_path`, `config_text`), which must
    /// declare a pool. The error says what did not read.
    pub fn new(
        lock: &str,
        state_text: &str,
        config_path: &str,
        config_text: &str,
    ) -> Result<Self, String> {
        let doc = LockState::parse(state_text, lock).map_err(|e| e.to_string())?;
        let config =
            crate::store::parse_config(config_path, config_text).map_err(|e| e.to_string())?;
        let pool = config
            .pool
            .ok_or_else(|| format!("{config_path} declares no resources: not a pool"))?;
        let max_ttl_ms = config
            .lease
            .unwrap_or_else(crate::wire::LeasePolicy::unconfigured)
            .max_ttl_ms;
        Ok(PoolPass {
            pool: Pool {
                config: pool,
                capacity: config.capacity,
            },
            doc,
            max_ttl_ms,
        })
    }

    /// One admission pass at `now` on a copy of the state: the holder ids it admits.
    pub fn admit(&self, now: Millis) -> Vec<String> {
        use crate::admission::Admission;
        let mut doc = self.doc.clone();
        self.pool.admit(&mut doc, now, self.max_ttl_ms)
    }

    /// The copy [`PoolPass::admit`] starts from, alone: its queue's length.
    pub fn copy(&self) -> usize {
        self.doc.clone().queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{queue_entry, raw_inputs, run_identity};

    fn read(pairs: &[(&str, &str)]) -> Result<Option<PoolRequest>, InputError> {
        parse_request(&Reader::new(&raw_inputs(pairs, &[])))
    }

    /// Two holdings share resource `a`. One hits the provider's limit; the other's work, begun
    /// before it, then succeeds: the backoff stands until its end, and only a success after it
    /// ends clears it (and the count of consecutive hits).
    #[test]
    fn a_success_ends_a_backoff_only_once_it_is_over() {
        let holding = |id: &str| crate::wire::Holder {
            holder_id: id.into(),
            nonce: format!("{id:0>16}"),
            fence: 1,
            run: run_identity(""),
            acquired_at: 0,
            expires_at: 10_000_000,
            lease_ms: 10_000_000,
            ceiling_at: 10_000_000,
            claimed_at: None,
            pool: Some(crate::wire::Seat {
                resource: "a".into(),
                partition: None,
                affinity: None,
            }),
        };
        let mut st = LockState::empty("p");
        st.holders = vec![holding("h1"), holding("h2")];
        let t = 1_000_000;
        assert!(record_outcome(
            &mut st,
            "h2",
            RunOutcome::RateLimited { retry_at: None },
            t
        ));
        let until = st.pool.as_ref().unwrap().backoff["a"].until;
        assert_eq!(until, t + BACKOFF_BASE_MS);
        assert!(!record_outcome(
            &mut st,
            "h1",
            RunOutcome::Success,
            t + 1_000
        ));
        assert_eq!(
            st.pool.as_ref().unwrap().backoff["a"].until,
            until,
            "still backing off"
        );
        assert!(record_outcome(&mut st, "h1", RunOutcome::Success, until));
        assert!(st.pool.is_none(), "over, and cleared by the success");
    }

    #[test]
    fn a_pool_pass_admits_on_a_copy_of_the_state_it_parsed_once() {
        use crate::wire::QueueEntry;
        let waiter = |id: &str, prefer: &str| QueueEntry {
            pool: Some(PoolRequest {
                prefer: vec![prefer.into()],
                requires: vec![prefer.into()],
                ..PoolRequest::default()
            }),
            ..queue_entry(id, &format!("{id:0>16}"), run_identity(""))
        };
        let mut st = LockState::empty("p");
        st.queue = vec![waiter("w1", "x"), waiter("w2", "x"), waiter("w3", "y")];
        let config = r#"{"resources": {"a": {"capacity": 1, "tags": ["x"]}, "b": {"capacity": 1, "tags": ["y"]}}}"#;
        let pass = PoolPass::new("p", &st.to_document(), "locks/p.config.json", config).unwrap();
        // w1 takes a; w2 waits for a (x only); w3 takes b: a blocked waiter holds nobody back.
        assert_eq!(pass.admit(1_000), ["w1", "w3"]);
        assert_eq!(pass.admit(1_000), ["w1", "w3"], "each pass on a fresh copy");
        assert_eq!(pass.copy(), 3);
        let plain = PoolPass::new(
            "p",
            &st.to_document(),
            "locks/p.config.json",
            r#"{"capacity": 2}"#,
        );
        assert!(plain.is_err_and(|e| e.contains("not a pool")));
    }

    #[test]
    fn backoff_doubles_to_the_cap_honours_a_hint_and_a_success_resets_it() {
        let m = 60_000;
        let mut b = None;
        let mut lengths = Vec::new();
        for _ in 0..7 {
            let next = next_backoff(b.as_ref(), None, 0);
            lengths.push(next.until / m);
            b = Some(next);
        }
        assert_eq!(lengths, [15, 30, 60, 120, 240, 300, 300]);
        assert_eq!(next_backoff(None, Some(5 * m), 0).until, 5 * m);
        assert_eq!(
            next_backoff(None, Some(24 * 60 * m), 0).until,
            300 * m,
            "a hint within the cap"
        );
        assert_eq!(
            next_backoff(None, Some(0), 10).until,
            10,
            "a hint in the past: none in force"
        );

        let mut s = LockState::empty("x");
        s.holders.push(Holder {
            holder_id: "h".into(),
            nonce: "n".into(),
            fence: 1,
            run: run_identity(""),
            acquired_at: 0,
            expires_at: 1,
            lease_ms: 1,
            ceiling_at: 1,
            claimed_at: None,
            pool: Some(crate::wire::Seat {
                resource: "a".into(),
                partition: None,
                affinity: None,
            }),
        });
        assert!(record_outcome(
            &mut s,
            "h",
            RunOutcome::RateLimited { retry_at: None },
            0
        ));
        assert!(record_outcome(
            &mut s,
            "h",
            RunOutcome::RateLimited { retry_at: None },
            0
        ));
        assert_eq!(
            s.pool.as_ref().unwrap().backoff["a"],
            Backoff {
                until: 30 * m,
                hits: 2
            }
        );
        assert!(!record_outcome(&mut s, "h", RunOutcome::Success, 0));
        assert_eq!(
            s.pool.as_ref().unwrap().backoff["a"].hits,
            2,
            "in force: kept"
        );
        assert!(record_outcome(&mut s, "h", RunOutcome::Success, 30 * m));
        assert_eq!(s.pool, None, "a success after its end resets the backoff");
        assert!(!record_outcome(&mut s, "h", RunOutcome::Success, 30 * m));
        assert!(!record_outcome(&mut s, "nobody", RunOutcome::Success, 0));
    }

    #[test]
    fn outcome_inputs() {
        let read = |pairs: &[(&str, &str)]| parse_outcome(&Reader::new(&raw_inputs(pairs, &[])));
        assert_eq!(read(&[]), Ok(None));
        assert_eq!(
            read(&[("outcome", "success")]),
            Ok(Some(RunOutcome::Success))
        );
        assert_eq!(
            read(&[
                ("outcome", "rate-limited"),
                ("retry-at", "1970-01-01T00:01:00Z")
            ]),
            Ok(Some(RunOutcome::RateLimited {
                retry_at: Some(60_000)
            }))
        );
        assert_eq!(read(&[("outcome", "oops")]).unwrap_err().input, "outcome");
        assert_eq!(
            read(&[("retry-at", "1970-01-01T00:01:00Z")])
                .unwrap_err()
                .input,
            "retry-at"
        );
        assert_eq!(
            read(&[("outcome", "rate-limited"), ("retry-at", "soon")])
                .unwrap_err()
                .input,
            "retry-at"
        );
    }

    #[test]
    fn request_inputs() {
        assert_eq!(read(&[]), Ok(None), "no pool input: a plain request");
        let r = read(&[
            ("prefer", "opus, sonnet,acct-a1"),
            ("partition", "api,db,api"),
            ("affinity", "pkg:api"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(r.prefer, ["opus", "sonnet", "acct-a1"]);
        assert_eq!(r.partition, Some(vec!["api".to_string(), "db".to_string()]));
        assert_eq!(r.affinity.as_deref(), Some("pkg:api"));
        assert_eq!(
            read(&[("partition", "*")]).unwrap().unwrap().partition,
            Some(vec!["*".to_string()])
        );
        assert_eq!(read(&[("prefer", "a b")]).unwrap_err().input, "prefer");
        assert_eq!(read(&[("requires", "*")]).unwrap_err().input, "requires");
        let e = read(&[("affinity", "ghp_abcdef")]).unwrap_err();
        assert_eq!((e.input.as_str(), e.value.as_str()), ("affinity", ""));
    }
}
