//! The claims' invariant checker (12–16): fed what happened, keeping its own books (each key's
//! head and history, each agent's beliefs, each agent's updateRefs whose answers were unknown,
//! each operation's family, each claim guard's work and the leases it proved, each agent's
//! pauses); it never reads an agent's or the store's fields.

use std::collections::{BTreeMap, BTreeSet};

use leasehold_core::time::Millis;

use crate::types::{fmt_t, Breach, Invariant};
use crate::world::Clock;

/// An agent's index.
pub type AgentId = usize;

/// What the claim clients and the simulated GitHub tell the checker.
#[derive(Clone, Debug)]
pub enum ClaimFeed {
    /// An operation started; a family operation names all its refs.
    OpStarted {
        agent: AgentId,
        op: u64,
        family: Option<Vec<String>>,
    },
    /// A GraphQL read left the agent.
    ReadSent { agent: AgentId },
    /// An `updateRefs` left the agent: each (ref, beforeOid; `None` = must not exist).
    UpdateSent {
        agent: AgentId,
        updates: Vec<(String, Option<String>)>,
    },
    /// The answer to an `updateRefs` reached the agent; `unknown`: it proves neither way.
    UpdateAnswered {
        agent: AgentId,
        updates: Vec<(String, Option<String>)>,
        unknown: bool,
    },
    /// GitHub applied an `updateRefs`: every ref it moved, with the new commit's parents.
    Landed {
        agent: AgentId,
        op: u64,
        moves: Vec<(String, Option<String>, String, Vec<String>)>,
    },
    /// The agent believes it owns `refs` (at these tokens) until real time `until`.
    Belief {
        agent: AgentId,
        refs: Vec<(String, String)>,
        until: Millis,
    },
    /// The agent stops believing it owns `refs` (release starts, loss proven, crash).
    BeliefEnds { agent: AgentId, refs: Vec<String> },
    /// A claim guard took in a proven lease: its work may run until real time `until` (the
    /// lease's local deadline on the agent's clock), and the claim expires at `expires_at`
    /// (GitHub's clock, the simulation's real time).
    GuardProven {
        agent: AgentId,
        until: Millis,
        expires_at: Millis,
    },
    /// A claim guard started the work over `refs`, on an agent with this clock and kill grace.
    WorkStarted {
        agent: AgentId,
        refs: Vec<String>,
        clock: Clock,
        kill_grace_ms: Millis,
    },
    /// The guarded work has exited (on its own, stopped, or with the agent's crash).
    WorkGone { agent: AgentId },
    /// The agent's process is paused from now until `until`.
    Paused { agent: AgentId, until: Millis },
    /// A claim guard took in a renewal that proved its claim lost: it stops the work now.
    GuardLost { agent: AgentId },
}

/// A claim guard's work, as the checker keeps it.
#[derive(Clone, Debug)]
struct GuardWork {
    refs: Vec<String>,
    clock: Clock,
    kill_grace_ms: Millis,
    running: bool,
    /// The last proven lease's local deadline (real time) and the claim's expiry.
    until: Option<Millis>,
    expires_at: Option<Millis>,
    /// When its guard took in a proven loss.
    lost_at: Option<Millis>,
}

#[derive(Clone, Debug)]
struct Belief {
    agent: AgentId,
    token: String,
    from: Millis,
    until: Millis,
}

#[derive(Default)]
pub struct ClaimChecker {
    /// Ref → its head, as the landed updates moved it.
    heads: BTreeMap<String, String>,
    /// Ref → every belief ever held on it (ended ones have `until` cut to their end).
    beliefs: BTreeMap<String, Vec<Belief>>,
    /// Agent → (ref, beforeOid) of updateRefs whose answer was unknown, since its last read.
    unknown: BTreeMap<AgentId, BTreeSet<(String, Option<String>)>>,
    /// Operation → its family's refs, and every set of refs its updateRefs named (a family
    /// release names only the members it still holds: one already released is not rewritten).
    families: BTreeMap<u64, BTreeSet<String>>,
    intended: BTreeMap<u64, Vec<BTreeSet<String>>>,
    /// Agent → the operation it runs.
    current: BTreeMap<AgentId, u64>,
    /// Agent → its claim guard's work (the last one) and the leases it proved.
    works: BTreeMap<AgentId, GuardWork>,
    /// Agent → the real intervals its process was paused.
    pauses: BTreeMap<AgentId, Vec<(Millis, Millis)>>,
    /// Proven leases fed before their work started (the claim's own, then the verification's).
    proven: BTreeMap<AgentId, (Millis, Millis)>,
    pub beliefs_fed: u64,
    pub beliefs_past_deadline: u64,
    pub transitions: u64,
}

fn short(oid: &Option<String>) -> String {
    oid.as_deref()
        .map_or("absent".into(), |o| o[..8].to_string())
}

impl ClaimChecker {
    pub fn feed(&mut self, now: Millis, feed: ClaimFeed) -> Option<Breach> {
        match feed {
            ClaimFeed::OpStarted { agent, op, family } => {
                self.current.insert(agent, op);
                if let Some(f) = family {
                    self.families.insert(op, f.into_iter().collect());
                }
                None
            }
            ClaimFeed::ReadSent { agent } => {
                self.unknown.remove(&agent);
                None
            }
            ClaimFeed::UpdateSent { agent, updates } => {
                if let Some(op) = self
                    .current
                    .get(&agent)
                    .filter(|op| self.families.contains_key(op))
                {
                    let named = updates.iter().map(|u| u.0.clone()).collect();
                    self.intended.entry(*op).or_default().push(named);
                }
                // 14: an updateRefs whose answer was unknown is never sent again as is before a
                // read has shown what happened.
                let pending = self.unknown.entry(agent).or_default();
                for u in &updates {
                    if pending.contains(u) {
                        return Some((
                            Invariant::ClaimResend,
                            format!(
                                "a{agent} sent updateRefs {} from {} again, with no read since its answer was unknown",
                                u.0,
                                short(&u.1)
                            ),
                        ));
                    }
                }
                None
            }
            ClaimFeed::UpdateAnswered {
                agent,
                updates,
                unknown,
            } => {
                if unknown {
                    self.unknown.entry(agent).or_default().extend(updates);
                }
                None
            }
            ClaimFeed::Landed { agent, op, moves } => self.on_landed(now, agent, op, moves),
            ClaimFeed::Belief { agent, refs, until } => {
                if until <= now {
                    // Its deadline had passed when the answer came (a pause, a long read-back):
                    // it believes nothing, and starts no work on it.
                    self.beliefs_past_deadline += 1;
                    return None;
                }
                self.beliefs_fed += 1;
                for (r, token) in refs {
                    let list = self.beliefs.entry(r.clone()).or_default();
                    // 12: no two agents' beliefs on one key overlap.
                    if let Some(b) = list
                        .iter()
                        .find(|b| b.agent != agent && b.from < until && now < b.until)
                    {
                        return Some((
                            Invariant::ClaimOwner,
                            format!(
                                "a{agent} believes it owns {r} ({}) from {} to {}, while a{} believes it owns it ({}) until {}",
                                &token[..8],
                                fmt_t(now),
                                fmt_t(until),
                                b.agent,
                                &b.token[..8],
                                fmt_t(b.until)
                            ),
                        ));
                    }
                    // Its own earlier belief on the key is replaced (a renewal).
                    for b in list.iter_mut().filter(|b| b.agent == agent) {
                        b.until = b.until.min(now);
                    }
                    if now < until {
                        list.push(Belief {
                            agent,
                            token,
                            from: now,
                            until,
                        });
                    }
                }
                None
            }
            ClaimFeed::GuardProven {
                agent,
                until,
                expires_at,
            } => {
                let breach = self.check_work(agent, now);
                self.proven.insert(agent, (until, expires_at));
                if let Some(w) = self.works.get_mut(&agent).filter(|w| w.running) {
                    w.until = Some(until);
                    w.expires_at = Some(expires_at);
                }
                breach
            }
            ClaimFeed::WorkStarted {
                agent,
                refs,
                clock,
                kill_grace_ms,
            } => {
                let proven = self.proven.get(&agent).copied();
                self.works.insert(
                    agent,
                    GuardWork {
                        refs,
                        clock,
                        kill_grace_ms,
                        running: true,
                        until: proven.map(|p| p.0),
                        expires_at: proven.map(|p| p.1),
                        lost_at: None,
                    },
                );
                self.check_work(agent, now)
            }
            ClaimFeed::WorkGone { agent } => {
                let breach = self.check_work(agent, now);
                if let Some(w) = self.works.get_mut(&agent) {
                    w.running = false;
                }
                self.proven.remove(&agent);
                breach
            }
            ClaimFeed::GuardLost { agent } => {
                if let Some(w) = self.works.get_mut(&agent).filter(|w| w.running) {
                    w.lost_at.get_or_insert(now);
                }
                None
            }
            ClaimFeed::Paused { agent, until } => {
                self.pauses.entry(agent).or_default().push((now, until));
                None
            }
            ClaimFeed::BeliefEnds { agent, refs } => {
                for r in refs {
                    for b in self
                        .beliefs
                        .entry(r)
                        .or_default()
                        .iter_mut()
                        .filter(|b| b.agent == agent)
                    {
                        b.until = b.until.min(now);
                    }
                }
                None
            }
        }
    }

    /// 16: a claim guard's work runs only under its claim: it has stopped by the local deadline
    /// of the last lease its guard proved (real time, by the agent's true clock), and never runs
    /// at or past that claim's expiry (GitHub's clock). Paused time does not count (the work is
    /// paused with its agent), and a work whose bound came while its agent was paused may run on
    /// for its kill grace once resumed (the guard acts on its timer first on resuming, then stops
    /// the work). The same bounds as a lock guard's (invariant 5), plus the claim's own expiry.
    fn check_work(&self, agent: AgentId, now: Millis) -> Option<Breach> {
        let w = self.works.get(&agent).filter(|w| w.running)?;
        let Some(until) = w.until else {
            return Some((
                Invariant::ClaimGuardWork,
                format!("a{agent}'s guarded work runs with no lease its guard proved"),
            ));
        };
        // The claim expires at `expires_at`: the work must be gone before it; and once its guard
        // took in a proven loss, within the kill grace (on the agent's clock).
        let c = &w.clock;
        let bound = until
            .min(w.expires_at.unwrap_or(until).saturating_sub(1))
            .min(
                w.lost_at
                    .map_or(Millis::MAX, |at| c.real_of(c.local(at) + w.kill_grace_ms)),
            );
        if now <= bound {
            return None;
        }
        let pauses = self
            .pauses
            .get(&agent)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let paused: Millis = pauses
            .iter()
            .map(|&(from, to)| to.min(now).saturating_sub(from.max(bound)))
            .sum();
        let active = now - bound - paused;
        let resumed = pauses
            .iter()
            .find(|&&(from, to)| from <= bound && bound < to)
            .map(|&(_, to)| to);
        let allowed = resumed.map_or(0, |to| {
            c.real_of(c.local(to) + w.kill_grace_ms).saturating_sub(to) + 1
        });
        if active <= allowed {
            return None;
        }
        Some((
            Invariant::ClaimGuardWork,
            format!(
                "a{agent}'s guarded work on {} ran until {}, {} ms past its bound {} (the proven lease's local deadline {}, the claim expiring {}, a loss proven {}), {active} ms of it not paused",
                w.refs.join(", "),
                fmt_t(now),
                now - bound,
                fmt_t(bound),
                fmt_t(until),
                w.expires_at.map_or("-".into(), fmt_t),
                w.lost_at.map_or("never".into(), fmt_t),
            ),
        ))
    }

    /// At the end of a seed: every guarded work still running is held to its bound.
    pub fn finish(&self, now: Millis) -> Option<Breach> {
        self.works.keys().find_map(|&a| self.check_work(a, now))
    }

    fn on_landed(
        &mut self,
        now: Millis,
        agent: AgentId,
        op: u64,
        moves: Vec<(String, Option<String>, String, Vec<String>)>,
    ) -> Option<Breach> {
        // 15: a family operation's updateRefs moves every ref it named (all its members, but
        // those a family release found released already) or none.
        if let Some(family) = self.families.get(&op) {
            let moved: BTreeSet<String> = moves.iter().map(|m| m.0.clone()).collect();
            let named = self
                .intended
                .get(&op)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if !named.contains(&moved) || !moved.is_subset(family) {
                return Some((
                    Invariant::ClaimFamily,
                    format!(
                        "a{agent}'s family of {} refs landed an updateRefs moving {} of them ({})",
                        family.len(),
                        moved.len(),
                        moved.iter().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        // 16: a move of a guarded work's key by another agent finds that work within its bound.
        for (&other, w) in &self.works {
            if other != agent && w.running && moves.iter().any(|m| w.refs.contains(&m.0)) {
                if let Some(breach) = self.check_work(other, now) {
                    return Some(breach);
                }
            }
        }
        for (r, before, after, parents) in &moves {
            self.transitions += 1;
            // 13: each transition replaces the head it names, and its commit's parent is that
            // head: the ref's history is one unbroken chain of tokens.
            let head = self.heads.get(r).cloned();
            if &head != before {
                return Some((
                    Invariant::ClaimChain,
                    format!(
                        "{r} moved from {} by a{agent}, but its head was {}",
                        short(before),
                        short(&head)
                    ),
                ));
            }
            if let Some(h) = &head {
                if !parents.contains(h) {
                    return Some((
                        Invariant::ClaimChain,
                        format!(
                            "{r} moved by a{agent} to {}, whose parents ({}) do not include the head it replaced, {}",
                            &after[..8],
                            parents.iter().map(|p| &p[..8]).collect::<Vec<_>>().join(", "),
                            &h[..8]
                        ),
                    ));
                }
            }
            self.heads.insert(r.clone(), after.clone());
            // 12: no belief outlives a move of its key it did not make.
            if let Some(b) = self.beliefs.get(r).and_then(|l| {
                l.iter()
                    .find(|b| b.agent != agent && b.from <= now && now < b.until)
            }) {
                return Some((
                    Invariant::ClaimOwner,
                    format!(
                        "a{agent} moved {r} to {} while a{} believed it owned it ({}) until {}, {} ms on",
                        &after[..8],
                        b.agent,
                        &b.token[..8],
                        fmt_t(b.until),
                        b.until - now
                    ),
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::T0;

    fn started(c: &mut ClaimChecker, now: Millis) -> Option<Breach> {
        let proven = ClaimFeed::GuardProven {
            agent: 0,
            until: now + 10_000,
            expires_at: now + 20_000,
        };
        assert_eq!(c.feed(now, proven), None);
        let clock = Clock {
            offset_ms: 0,
            drift_ppm: 0,
        };
        let work = ClaimFeed::WorkStarted {
            agent: 0,
            refs: vec!["refs/leasehold/claims/sim/k0".into()],
            clock,
            kill_grace_ms: 2_000,
        };
        c.feed(now, work)
    }

    #[test]
    fn a_guarded_work_past_its_proven_deadline_is_caught() {
        let mut c = ClaimChecker::default();
        assert_eq!(started(&mut c, T0), None);
        let gone = c.feed(T0 + 10_001, ClaimFeed::WorkGone { agent: 0 });
        assert_eq!(gone.map(|b| b.0), Some(Invariant::ClaimGuardWork));
        let mut c = ClaimChecker::default();
        assert_eq!(started(&mut c, T0), None);
        assert_eq!(c.feed(T0 + 10_000, ClaimFeed::WorkGone { agent: 0 }), None);
    }

    #[test]
    fn a_work_paused_over_its_deadline_has_its_kill_grace_on_resuming() {
        let mut c = ClaimChecker::default();
        assert_eq!(started(&mut c, T0), None);
        let pause = ClaimFeed::Paused {
            agent: 0,
            until: T0 + 60_000,
        };
        assert_eq!(c.feed(T0 + 5_000, pause), None);
        // Within the kill grace after the resume: allowed; a moment later: not.
        assert_eq!(c.finish(T0 + 60_000 + 2_000), None);
        assert_eq!(
            c.finish(T0 + 60_000 + 2_002).map(|b| b.0),
            Some(Invariant::ClaimGuardWork)
        );
    }

    #[test]
    fn after_a_proven_loss_the_work_is_gone_within_its_kill_grace() {
        let mut c = ClaimChecker::default();
        assert_eq!(started(&mut c, T0), None);
        assert_eq!(c.feed(T0 + 1_000, ClaimFeed::GuardLost { agent: 0 }), None);
        assert_eq!(c.finish(T0 + 3_000), None, "within the 2 s kill grace");
        assert_eq!(
            c.finish(T0 + 3_001).map(|b| b.0),
            Some(Invariant::ClaimGuardWork),
            "long before the lease's deadline, but past the grace after the loss"
        );
    }

    #[test]
    fn a_work_is_bounded_by_its_claims_expiry_too() {
        let mut c = ClaimChecker::default();
        assert_eq!(started(&mut c, T0), None);
        // A later lease whose local deadline lies past the claim's expiry (a lease view that
        // is wrong): the expiry bounds the work.
        let late = ClaimFeed::GuardProven {
            agent: 0,
            until: T0 + 30_000,
            expires_at: T0 + 25_000,
        };
        assert_eq!(c.feed(T0 + 1_000, late), None);
        assert_eq!(c.finish(T0 + 24_999), None);
        assert_eq!(
            c.finish(T0 + 25_000).map(|b| b.0),
            Some(Invariant::ClaimGuardWork)
        );
    }
}
