//! A resource pool's admission: the queue is scanned in order and every waiter that fits now is
//! admitted, each on the resource [`choose`] gives it. A waiter that is blocked (its resources
//! full, its partition held, its repository at its limit) does not hold back a later one that
//! fits; among waiters whose partitions intersect, order is FIFO. One free slot, one admission.
//!
//! Partitions: a holding reserves its partition's atoms, less the pool's non-reserving atoms
//! (matched exactly); the global set `*` intersects every reserving set and is never exempted.
//! A waiter that gives no partition reserves nothing. With `runnerSerialization`, every
//! holding also reserves `runner:<runner name>`.

use std::collections::{BTreeMap, BTreeSet};

use super::choice::{choose, consumer_of, seats, Ask, Held, HoldReason};
use super::Admission;
use crate::policy::limits::GLOBAL_PARTITION;
use crate::wire::time::Millis;
use crate::wire::{
    AffinityMark, Holder, LockState, PoolBooks, PoolConfig, PoolRequest, QueueEntry, Seat,
};

/// A pool's admission rule, from its recorded config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    pub config: PoolConfig,
    /// Holdings at once across the pool (see `store::pool_config::pool_capacity`).
    pub capacity: u32,
}

/// The atoms a waiter's holding would carry: its partition, and its runner's atom under runner
/// serialization. `None`: it reserves nothing.
pub fn partition_of(pool: &PoolConfig, entry: &QueueEntry) -> Option<Vec<String>> {
    let mut atoms = entry.pool.as_ref().and_then(|r| r.partition.clone());
    if pool.runner_serialization && !entry.run.runner_name.is_empty() {
        atoms
            .get_or_insert_with(Vec::new)
            .push(format!("runner:{}", entry.run.runner_name));
    }
    atoms
}

/// Where a rerun's takeover of `holder_id`'s holding in `st` leaves its seat, the job now on
/// runner `runner`: under runner serialization the seat carries its runner's atom, and the
/// rerun may run on another runner than its earlier attempt did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reseat {
    /// The seat reserves what it did.
    Unchanged,
    /// The seat, with the earlier runner's atom replaced by the new runner's.
    Moved(Seat),
    /// The new runner's atom is reserved by this other holding: the takeover would put two
    /// holdings on one runner.
    Busy(String),
}

/// `live` says which other holdings still hold (an expired one is removed in the same write, and
/// books no runner).
pub fn reseat(
    pool: &PoolConfig,
    st: &LockState,
    holder_id: &str,
    runner: &str,
    live: impl Fn(&Holder) -> bool,
) -> Reseat {
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::RerunKeepsRunnerAtom) {
        return Reseat::Unchanged;
    }
    let Some(h) = st.holder(holder_id) else {
        return Reseat::Unchanged;
    };
    let Some(seat) = &h.pool else {
        return Reseat::Unchanged;
    };
    // Without serialization a seat carries no runner atom of ours (a `runner:` atom there is the
    // request's own).
    if !pool.runner_serialization {
        return Reseat::Unchanged;
    }
    let mut atoms = seat.partition.clone().unwrap_or_default();
    // `partition_of` put the runner's atom last; an earlier takeover may have left another
    // runner's name in it than the run's.
    // A run with no runner name got no atom of ours: a `runner:` atom last is then the request's.
    if !h.run.runner_name.is_empty() && atoms.last().is_some_and(|a| a.starts_with("runner:")) {
        atoms.pop();
    }
    if !runner.is_empty() {
        let atom = format!("runner:{runner}");
        let reserved_by = st.holders.iter().find(|o| {
            o.holder_id != holder_id
                && live(o)
                && (o.run.runner_name == runner
                    || o.pool
                        .as_ref()
                        .and_then(|s| s.partition.as_ref())
                        .is_some_and(|p| p.contains(&atom)))
        });
        if let Some(o) = reserved_by {
            return Reseat::Busy(o.holder_id.clone());
        }
        atoms.push(atom);
    }
    // As `partition_of` makes it: no atoms, no partition (a request never gives an empty one).
    let partition = (!atoms.is_empty()).then_some(atoms);
    if partition == seat.partition {
        return Reseat::Unchanged;
    }
    Reseat::Moved(Seat {
        partition,
        ..seat.clone()
    })
}

/// GitHub's owner and repository names are case-insensitive (`Octo/App` is `octo/app`): a
/// repository is counted and matched to its consumer by this key.
fn repository_key(repository: &str) -> String {
    repository.to_ascii_lowercase()
}

/// The atoms of `atoms` that reserve: less the non-reserving ones (exactly matched).
fn reserving<'a>(pool: &PoolConfig, atoms: &'a Option<Vec<String>>) -> Vec<&'a str> {
    atoms
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|a| *a == GLOBAL_PARTITION || !pool.non_reserving_atoms.iter().any(|n| n == a))
        .collect()
}

/// Two partitions conflict when their reserving sets intersect. The global set conflicts with
/// every holding, one that reserves nothing included: a global holding is alone in its pool.
pub fn conflict(pool: &PoolConfig, a: &Option<Vec<String>>, b: &Option<Vec<String>>) -> bool {
    let (a, b) = (reserving(pool, a), reserving(pool, b));
    let global = |s: &[&str]| s.contains(&GLOBAL_PARTITION);
    global(&a) || global(&b) || a.iter().any(|x| b.contains(x))
}

/// The union of some partitions' reserving atoms: does a partition intersect any of them?
/// (Exactly [`conflict`] against each, in one look-up.)
#[derive(Clone, Debug, Default)]
struct Union {
    atoms: BTreeSet<String>,
    global: bool,
    any: bool,
}

impl Union {
    fn add(&mut self, pool: &PoolConfig, p: &Option<Vec<String>>) {
        // `any`: some partition was added, one that reserves nothing included (a global
        // partition conflicts with it too).
        self.any = true;
        for a in reserving(pool, p) {
            self.global |= a == GLOBAL_PARTITION;
            self.atoms.insert(a.to_string());
        }
    }

    fn meets(&self, pool: &PoolConfig, p: &Option<Vec<String>>) -> bool {
        let mine = reserving(pool, p);
        self.any
            && (self.global
                || mine.contains(&GLOBAL_PARTITION)
                || mine.iter().any(|a| self.atoms.contains(*a)))
    }
}

/// One pass of admission over a document: what is held (seats per resource, holdings per
/// repository, the held partitions), the partitions of the waiters passed over so far, and the
/// books. Built once per pass, updated as each waiter is seated or passed over.
pub struct Scan<'a> {
    pool: &'a Pool,
    books: PoolBooks,
    taken: Vec<u32>,
    by_repository: BTreeMap<String, usize>,
    in_flight: usize,
    held: Union,
    blocked: Union,
}

impl<'a> Scan<'a> {
    /// `now` (GitHub's clock): a resource a holding with an affinity key sits on is that key's
    /// warm resource now (in use), whatever its mark says; of several, the latest admitted.
    pub fn new(pool: &'a Pool, doc: &LockState, now: Millis) -> Self {
        let mut held = Union::default();
        let mut by_repository = BTreeMap::new();
        for h in &doc.holders {
            held.add(
                &pool.config,
                &h.pool.as_ref().and_then(|s| s.partition.clone()),
            );
            // One slot a runner is judged by the runner each holding's run names too, not only
            // by its seat's atom (a seat an earlier version moved to another runner kept its old
            // runner's atom).
            #[cfg(feature = "planted-bugs")]
            let by_run = !crate::planted::active(crate::planted::Bug::RerunKeepsRunnerAtom);
            #[cfg(not(feature = "planted-bugs"))]
            let by_run = true;
            if by_run && pool.config.runner_serialization && !h.run.runner_name.is_empty() {
                held.add(
                    &pool.config,
                    &Some(vec![format!("runner:{}", h.run.runner_name)]),
                );
            }
            *by_repository
                .entry(repository_key(&h.run.repository))
                .or_insert(0) += 1;
        }
        let mut books = doc.pool.clone().unwrap_or_default();
        if pool.config.affinity_seconds > 0 {
            let mut in_use: Vec<&Holder> = doc
                .holders
                .iter()
                .filter(|h| h.pool.as_ref().is_some_and(|s| s.affinity.is_some()))
                .collect();
            in_use.sort_by_key(|h| h.acquired_at);
            for h in in_use {
                let seat = h.pool.as_ref().expect("filtered");
                books.affinity.insert(
                    seat.affinity.clone().expect("filtered"),
                    AffinityMark {
                        resource: seat.resource.clone(),
                        at: now,
                    },
                );
            }
        }
        Scan {
            pool,
            books,
            taken: seats(&pool.config, &doc.holders),
            by_repository,
            in_flight: doc.holders.len(),
            held,
            blocked: Union::default(),
        }
    }

    /// Why `entry` cannot be admitted now, or the resource (its config index) it gets.
    pub fn judge(&self, entry: &QueueEntry, now: Millis) -> Result<usize, Held> {
        let pool = &self.pool.config;
        if pool.invalid.is_some() {
            return Err(Held::new(HoldReason::Closed));
        }
        if self.in_flight >= self.pool.capacity as usize {
            return Err(Held::new(HoldReason::InFlight));
        }
        let repository = entry.run.repository.as_str();
        let consumer = consumer_of(pool, repository);
        if let Some(max) = consumer.and_then(|c| c.max_concurrent) {
            let held = self
                .by_repository
                .get(&repository_key(repository))
                .copied()
                .unwrap_or(0);
            #[cfg(feature = "planted-bugs")]
            let held = if crate::planted::active(crate::planted::Bug::ConsumerLimitOffByOne) {
                held.saturating_sub(1)
            } else {
                held
            };
            if held >= max as usize {
                return Err(Held::new(HoldReason::ConsumerLimit));
            }
        }
        let mine = partition_of(pool, entry);
        #[cfg(feature = "planted-bugs")]
        let skip = crate::planted::active(crate::planted::Bug::IgnoreHeldPartitions);
        #[cfg(not(feature = "planted-bugs"))]
        let skip = false;
        if !skip && self.held.meets(pool, &mine) {
            return Err(Held::new(HoldReason::Partition));
        }
        if self.blocked.meets(pool, &mine) {
            return Err(Held::new(HoldReason::QueueOrder));
        }
        let default = PoolRequest::default();
        let request = entry.pool.as_ref().unwrap_or(&default);
        #[cfg(feature = "planted-bugs")]
        if crate::planted::active(crate::planted::Bug::ResourceCapIgnored) {
            let short: Vec<u32> = self.taken.iter().map(|t| t.saturating_sub(1)).collect();
            return choose(
                pool,
                &self.books,
                &short,
                Ask {
                    request,
                    repository,
                },
                now,
            );
        }
        choose(
            pool,
            &self.books,
            &self.taken,
            Ask {
                request,
                repository,
            },
            now,
        )
    }

    /// `entry` waits: later waiters whose partitions intersect its own wait behind it.
    pub fn pass_over(&mut self, entry: &QueueEntry) {
        self.blocked
            .add(&self.pool.config, &partition_of(&self.pool.config, entry));
    }

    /// `entry` is seated on resource `r` at `now`.
    fn seat(&mut self, entry: &QueueEntry, r: usize, now: Millis) {
        let pool = &self.pool.config;
        self.taken[r] += 1;
        self.in_flight += 1;
        *self
            .by_repository
            .entry(repository_key(&entry.run.repository))
            .or_insert(0) += 1;
        self.held.add(pool, &partition_of(pool, entry));
        if let (Some(key), true) = (
            entry.pool.as_ref().and_then(|p| p.affinity.as_ref()),
            pool.affinity_seconds > 0,
        ) {
            self.books.affinity.insert(
                key.clone(),
                AffinityMark {
                    resource: pool.resources[r].name.clone(),
                    at: now,
                },
            );
        }
    }
}

impl Admission<LockState> for Pool {
    fn admit(&self, doc: &mut LockState, now: Millis, max_ttl_ms: Millis) -> Vec<String> {
        let mut admitted = Vec::new();
        if self.config.invalid.is_some() {
            return admitted;
        }
        let window = self.config.affinity_seconds.saturating_mul(1000);
        if let Some(books) = doc.pool.as_mut() {
            books
                .affinity
                .retain(|_, m| now.saturating_sub(m.at) <= window && m.at <= now);
        }
        let mut scan = Scan::new(self, doc, now);
        let mut i = 0;
        while i < doc.queue.len() && doc.holders.len() < self.capacity as usize {
            let verdict = scan.judge(&doc.queue[i], now);
            let Ok(r) = verdict else {
                #[cfg(feature = "planted-bugs")]
                if crate::planted::active(crate::planted::Bug::PoolStopsAtBlocked) {
                    break;
                }
                scan.pass_over(&doc.queue[i]);
                i += 1;
                continue;
            };
            let entry = doc.queue.remove(i);
            scan.seat(&entry, r, now);
            let resource = self.config.resources[r].name.clone();
            let partition = partition_of(&self.config, &entry);
            let affinity = entry.pool.as_ref().and_then(|p| p.affinity.clone());
            if let (Some(key), true) = (&affinity, window > 0) {
                doc.pool
                    .get_or_insert_with(Default::default)
                    .affinity
                    .insert(
                        key.clone(),
                        AffinityMark {
                            resource: resource.clone(),
                            at: now,
                        },
                    );
            }
            doc.fence += 1;
            admitted.push(entry.holder_id.clone());
            let lease_ms = entry.lease_ms.min(max_ttl_ms);
            doc.holders.push(Holder {
                holder_id: entry.holder_id,
                nonce: entry.nonce,
                fence: doc.fence,
                run: entry.run,
                acquired_at: now,
                expires_at: now.saturating_add(lease_ms),
                lease_ms,
                ceiling_at: now.saturating_add(max_ttl_ms),
                claimed_at: Some(entry.last_seen_at),
                pool: Some(Seat {
                    resource,
                    partition,
                    affinity,
                }),
            });
        }
        if doc.pool.as_ref().is_some_and(|b| b.is_empty()) {
            doc.pool = None;
        }
        admitted
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Consumer, Resource, RunIdentity};

    fn pool(caps: &[u32]) -> Pool {
        Pool {
            config: PoolConfig {
                resources: caps
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Resource {
                        name: format!("r{i}"),
                        capacity: *c,
                        tags: vec![format!("t{i}")],
                    })
                    .collect(),
                ..PoolConfig::default()
            },
            capacity: caps.iter().sum(),
        }
    }

    fn entry(id: &str, repo: &str, prefer: &[&str], partition: Option<&[&str]>) -> QueueEntry {
        QueueEntry {
            holder_id: id.into(),
            nonce: format!("n-{id}"),
            run: RunIdentity {
                repository: repo.into(),
                run_id: 1,
                run_attempt: 1,
                job: "j".into(),
                runner_name: format!("runner-{id}"),
                url: String::new(),
                job_id: None,
            },
            lease_ms: 60_000,
            enqueued_at: 0,
            last_seen_at: 0,
            pool: Some(PoolRequest {
                prefer: prefer.iter().map(|s| s.to_string()).collect(),
                partition: partition.map(|p| p.iter().map(|s| s.to_string()).collect()),
                ..PoolRequest::default()
            }),
        }
    }

    fn seated(s: &LockState) -> Vec<(String, String)> {
        s.holders
            .iter()
            .map(|h| {
                (
                    h.holder_id.clone(),
                    h.pool.as_ref().unwrap().resource.clone(),
                )
            })
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn admits_every_waiter_that_fits_and_keeps_the_blocked_queued() {
        let p = pool(&[1, 2]);
        let mut s = LockState::empty("x");
        s.queue = vec![
            entry("a", "o/r", &["r0"], None),
            entry("b", "o/r", &["r0"], None),
            entry("c", "o/r", &["r1"], None),
        ];
        assert_eq!(p.admit(&mut s, 5, 600_000), vec!["a", "b", "c"]);
        assert_eq!(seated(&s), pairs(&[("a", "r0"), ("b", "r1"), ("c", "r1")]));
        assert_eq!(s.fence, 3);
        // r0 frees; a waiter that prefers r1 (full) and a later one that fits r0.
        s.holders.remove(0);
        s.queue = vec![entry("d", "o/r", &[], None)];
        assert_eq!(p.admit(&mut s, 6, 600_000), vec!["d"]);
        assert_eq!(
            s.holders.last().unwrap().pool.as_ref().unwrap().resource,
            "r0"
        );
    }

    #[test]
    fn partitions_conflict_and_a_blocked_waiter_does_not_hold_back_a_later_one() {
        let p = pool(&[4]);
        let mut s = LockState::empty("x");
        s.queue = vec![
            entry("a", "o/r", &[], Some(&["api", "db"])),
            entry("b", "o/r", &[], Some(&["db"])),
            entry("c", "o/r", &[], Some(&["web"])),
            entry("d", "o/r", &[], Some(&["db-x"])),
            entry("e", "o/r", &[], None),
        ];
        assert_eq!(
            p.admit(&mut s, 1, 600_000),
            vec!["a", "c", "d", "e"],
            "db-x is not db (exact atoms)"
        );
        assert_eq!(s.queue[0].holder_id, "b");
        // A global waiter conflicts with every holding, one that reserves nothing included.
        s.holders.retain(|h| h.holder_id == "e");
        s.queue.push(entry("f", "o/r", &[], Some(&["*"])));
        s.queue.push(entry("g", "o/r", &[], Some(&["db"])));
        assert_eq!(p.admit(&mut s, 2, 600_000), vec!["b"]);
        assert_eq!(
            s.queue
                .iter()
                .map(|q| q.holder_id.as_str())
                .collect::<Vec<_>>(),
            vec!["f", "g"],
            "f waits for b and e; g conflicts with f, which is ahead (FIFO among conflicting)"
        );
        s.holders.retain(|h| h.holder_id == "e");
        assert_eq!(
            p.admit(&mut s, 3, 600_000),
            Vec::<String>::new(),
            "e reserves nothing, and still keeps the global f out"
        );
        s.holders.clear();
        assert_eq!(p.admit(&mut s, 4, 600_000), vec!["f"]);
        assert_eq!(
            s.queue[0].holder_id, "g",
            "g waits while the global f holds"
        );
    }

    #[test]
    fn non_reserving_atoms_and_runner_serialization() {
        let mut p = pool(&[4]);
        p.config.non_reserving_atoms = vec!["docs".into()];
        p.config.runner_serialization = true;
        let mut s = LockState::empty("x");
        let mut twin = entry("b", "o/r", &[], Some(&["docs"]));
        twin.run.runner_name = "runner-a".into();
        s.queue = vec![
            entry("a", "o/r", &[], Some(&["docs"])),
            twin,
            entry("c", "o/r", &[], Some(&["docs"])),
        ];
        assert_eq!(
            p.admit(&mut s, 1, 600_000),
            vec!["a", "c"],
            "b shares a's runner"
        );
        assert_eq!(
            s.holders[0].pool.as_ref().unwrap().partition,
            Some(vec!["docs".to_string(), "runner:runner-a".to_string()])
        );
    }

    /// A rerun's takeover replaces the runner atom `partition_of` added, and only that: a holding
    /// whose run named no runner got none, so a `runner:` atom last in its seat is the request's
    /// own and stays.
    #[test]
    fn a_takeover_moves_only_the_runner_atom_it_added() {
        let mut p = pool(&[4]);
        p.config.runner_serialization = true;
        let mut s = LockState::empty("x");
        let mut named = entry("a", "o/r", &[], Some(&["runner:gpu-1"]));
        named.run.runner_name = "r1".into();
        let mut unnamed = entry("b", "o/r", &[], Some(&["runner:gpu-2"]));
        unnamed.run.runner_name = String::new();
        s.queue = vec![named, unnamed];
        assert_eq!(p.admit(&mut s, 1, 600_000), vec!["a", "b"]);
        let seat = |r: Reseat| match r {
            Reseat::Moved(seat) => seat.partition,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            seat(reseat(&p.config, &s, "a", "r2", |_| true)),
            Some(vec!["runner:gpu-1".to_string(), "runner:r2".to_string()])
        );
        assert_eq!(
            seat(reseat(&p.config, &s, "b", "r2", |_| true)),
            Some(vec!["runner:gpu-2".to_string(), "runner:r2".to_string()]),
            "b's run named no runner: its runner:gpu-2 is the request's own"
        );
    }

    /// A resource stays warm for its key while a holding with that key uses it, however long
    /// ago it was granted: a job of key `k` holding r1 for 20 minutes still steers the next `k`
    /// there (the grant's mark alone ran out after `affinitySeconds`).
    #[test]
    fn a_resource_in_use_is_warm_for_its_key_past_the_window() {
        let mut p = pool(&[1, 2]);
        p.config.affinity_seconds = 300;
        let keyed = |id: &str| {
            let mut e = entry(id, "o/r", &[], None);
            e.pool.as_mut().unwrap().affinity = Some("k".into());
            e
        };
        let mut s = LockState::empty("x");
        s.queue = vec![entry("x", "o/r", &["t0"], None), keyed("a")];
        assert_eq!(p.admit(&mut s, 0, 3_600_000), vec!["x", "a"]);
        assert_eq!(seated(&s)[1], ("a".to_string(), "r1".to_string()));
        s.holders.retain(|h| h.holder_id == "a");
        let later = 20 * 60_000;
        s.queue = vec![keyed("b")];
        assert_eq!(p.admit(&mut s, later, 3_600_000), vec!["b"]);
        assert_eq!(
            seated(&s)[1],
            ("b".to_string(), "r1".to_string()),
            "r1 is k's, in use"
        );
    }

    #[test]
    fn consumer_limit_in_flight_and_a_broken_config() {
        let mut p = pool(&[2, 2]);
        p.config.consumers = vec![Consumer {
            repository: "o/api".into(),
            resources: None,
            max_concurrent: Some(1),
        }];
        p.capacity = 3;
        let mut s = LockState::empty("x");
        s.queue = vec![
            entry("a", "o/api", &[], None),
            entry("b", "o/api", &[], None),
            entry("c", "o/web", &[], None),
            entry("d", "o/web", &[], None),
            entry("e", "o/web", &[], None),
        ];
        assert_eq!(
            p.admit(&mut s, 1, 600_000),
            vec!["a", "c", "d"],
            "in flight 3"
        );
        s.holders.clear();
        let mut closed = p.clone();
        closed.config.invalid = Some("pool rule resources".into());
        assert!(closed.admit(&mut s, 2, 600_000).is_empty());
    }
}
