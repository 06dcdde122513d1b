//! The claims' invariant checker (12–15): fed what happened, keeping its own books (each key's
//! head and history, each agent's beliefs, each agent's updateRefs whose answers were unknown,
//! each operation's family); it never reads an agent's or the store's fields.

use std::collections::{BTreeMap, BTreeSet};

use leasehold_core::time::Millis;

use crate::types::{fmt_t, Breach, Invariant};

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
    /// Operation → its family's refs.
    families: BTreeMap<u64, BTreeSet<String>>,
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
            ClaimFeed::OpStarted { op, family, .. } => {
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

    fn on_landed(
        &mut self,
        now: Millis,
        agent: AgentId,
        op: u64,
        moves: Vec<(String, Option<String>, String, Vec<String>)>,
    ) -> Option<Breach> {
        // 15: a family operation's updateRefs moves all its refs or none.
        if let Some(family) = self.families.get(&op) {
            let moved: BTreeSet<String> = moves.iter().map(|m| m.0.clone()).collect();
            if &moved != family {
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
