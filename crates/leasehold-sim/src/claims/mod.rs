//! Claim clients: agents and sweeps claiming keys of one namespace (git refs
//! `refs/leasehold/claims/sim/<key>`) through the real core's claim operations, against the
//! GitHub model's refs and GraphQL `updateRefs`, with faults; checked by [`checker`]
//! (invariants 12–16). It runs in a share of the seeds ([`has_claims`]), after the seed's lock
//! simulation and on a generator of its own, so the lock part of every seed is unchanged.

pub mod checker;
mod guard;

use std::collections::BTreeMap;

use leasehold_core::time::Millis;
use leasehold_core::{
    Call, Command, Entropy, Event, LeasePolicy, Operation, OperationKind, Outcome, Reply, Status,
};
use leasehold_github_model::{http, GitHub};
use serde_json::Value;

use crate::planted::PlantedBug;
use crate::report::ClaimCounters;
use crate::rng::SimRng;
use crate::types::{fmt_t, Invariant, Violation, REPOSITORY, T0};
use crate::world::params::{draw_policy_once, lease_block};
use crate::world::Clock;
use checker::{AgentId, ClaimChecker, ClaimFeed};

/// The claims' namespace.
pub const NAMESPACE: &str = "sim";
/// Faults stop this long after the start (as the locks' default budget).
pub const FAULTS_UNTIL_MS: Millis = 240_000;
/// No claims seed runs past this (simulated time): the agents' tasks end well before.
const BOUND_MS: Millis = 6 * 3_600_000;
const MAX_EVENTS: u64 = 60_000;

/// Whether `seed` runs claim clients: one seed in four (seeds 1, 5, 9, …).
pub fn has_claims(seed: u64) -> bool {
    seed % 4 == 1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Claims one key (`k0`), contending with the others; some never take over themselves
    /// (`no-takeover`, then the `takeover` verb on the token it was shown).
    Contender { no_takeover: bool },
    /// Walks the keys, claiming the next free one.
    Sweeper,
    /// Claims a family of keys in one call, and releases it as one.
    Family,
    /// Claims one key or a family, and runs its work under the core's guard machine, which
    /// renews (one key's `claim-renew`, a family's `claim-family-renew`) and stops the work.
    Guarded { family: bool },
}

#[derive(Clone, Debug)]
pub(super) struct Holding {
    keys: Vec<String>,
    tokens: Vec<String>,
    run_id: String,
    /// Local instant the work ends.
    work_until: Millis,
    /// Local instant the belief ends (the holder stops at it).
    deadline: Millis,
}

struct Agent {
    role: Role,
    clock: Clock,
    tasks_left: u32,
    next_key: usize,
    op: Option<Operation>,
    kind: OperationKind,
    op_id: u64,
    op_start_local: Millis,
    /// Events carry the generation they were made for; older ones are dropped.
    gen: u64,
    holding: Option<Holding>,
    paused_until: Option<Millis>,
    crashed: bool,
    /// The last request sent, and whether the planted resend was spent on this operation.
    last_call: Option<(Call, Millis)>,
    resent: bool,
    /// The guard of a guarded agent's work, while it holds, and its kill grace.
    guard: Option<guard::ClaimGuard>,
    kill_grace_ms: Millis,
}

#[derive(Clone, Debug)]
enum Ev {
    /// A timer of the agent's (a sleep, or its own schedule).
    Wake {
        agent: AgentId,
        gen: u64,
    },
    /// A request reaches GitHub.
    Arrive {
        agent: AgentId,
        gen: u64,
        op: u64,
        call: Call,
        fault: Option<F>,
        tell: bool,
    },
    /// An answer reaches the agent (`updates`: it answers an `updateRefs` of these refs).
    Answer {
        agent: AgentId,
        gen: u64,
        reply: Reply,
        tell: bool,
        updates: Option<Vec<(String, Option<String>)>>,
    },
    Pause {
        agent: AgentId,
    },
    Crash {
        agent: AgentId,
    },
    /// A guard's timer (`wait-until`), by its number.
    GuardWake {
        agent: AgentId,
        timer: u64,
    },
    /// A guarded work ends by itself, or exits after the guard's SIGTERM.
    WorkEnd {
        agent: AgentId,
        hold: u64,
    },
    ChildGone {
        agent: AgentId,
        hold: u64,
    },
    /// Someone releases a guarded claim by hand while its work runs.
    StrayRelease {
        agent: AgentId,
        hold: u64,
    },
}

/// The request faults of the claims (before faults stop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum F {
    /// Applied, the answer lost (the driver's time limit: `transport { sent: true }`).
    LostAnswer,
    /// Applied, then 502 (GitHub's 10 s kill after the work).
    Applied502,
    /// 502 without applying.
    NotApplied502,
    /// 503 before applying.
    Unavailable,
    /// Never left (`sent: false`).
    NotSent,
    /// GraphQL's primary limit (200 with `RATE_LIMITED`), REST's 429 with `retry-after`.
    RateLimited,
}

pub struct ClaimsOutcome {
    pub counters: ClaimCounters,
    pub violation: Option<Violation>,
    pub trace: Vec<String>,
}

struct World {
    seed: u64,
    rng: SimRng,
    gh: GitHub,
    queue: BTreeMap<(Millis, u64), Ev>,
    seq: u64,
    now: Millis,
    agents: Vec<Agent>,
    policy: LeasePolicy,
    config: String,
    keys: Vec<String>,
    faults_on: bool,
    planted: Option<PlantedBug>,
    checker: ClaimChecker,
    counters: ClaimCounters,
    violation: Option<Violation>,
    trace: Option<Vec<String>>,
    ops: u64,
}

/// Runs the claim clients of `seed` (`None` for a seed without claims).
pub fn run(seed: u64, planted: Option<PlantedBug>, trace: bool) -> Option<ClaimsOutcome> {
    if !has_claims(seed) {
        return None;
    }
    let mut rng = SimRng::new(seed ^ 0x636c_6169_6d73_0000);
    let policy = draw_policy_once(&mut rng);
    let config = format!("{{\"lease\": {}}}", lease_block(&policy));
    let nkeys = rng.between(2, 6) as usize;
    let keys: Vec<String> = (0..nkeys).map(|i| format!("k{i}")).collect();
    let nagents = rng.between(2, 5) as usize;
    let faults_on = rng.below(8) != 0;
    let mut agents = Vec::new();
    for i in 0..nagents {
        let role = match (i, rng.below(4)) {
            (0, _) | (_, 0) => Role::Contender {
                no_takeover: rng.below(3) == 0,
            },
            (_, 1) => Role::Sweeper,
            (_, 2) => Role::Family,
            _ => Role::Guarded {
                family: rng.below(3) == 0,
            },
        };
        let clock = Clock {
            offset_ms: rng.between(0, 600_000) as i64 - 300_000,
            drift_ppm: rng.between(0, 4_000) as i64 - 2_000,
        };
        agents.push(Agent {
            role,
            clock,
            tasks_left: rng.between(1, 3) as u32,
            next_key: rng.below(nkeys as u64) as usize,
            op: None,
            kind: OperationKind::Claim,
            op_id: 0,
            op_start_local: 0,
            gen: 0,
            holding: None,
            paused_until: None,
            crashed: false,
            last_call: None,
            resent: false,
            guard: None,
            kill_grace_ms: rng.between(1, 15) * 1_000,
        });
    }
    let mut w = World {
        seed,
        rng,
        gh: GitHub::new("main").with_full_name(REPOSITORY),
        queue: BTreeMap::new(),
        seq: 0,
        now: T0,
        agents,
        policy,
        config,
        keys,
        faults_on,
        planted,
        checker: ClaimChecker::default(),
        counters: ClaimCounters::default(),
        violation: None,
        trace: trace.then(Vec::new),
        ops: 0,
    };
    w.counters.seeds = 1;
    w.counters.agents = nagents as u64;
    let line = format!(
        "claims: {} agents ({:?}), keys {}, ttl {} s renew {} s grace {} s skew {} s minRemaining {} s maxTtl {} s, faults {}",
        nagents,
        w.agents.iter().map(|a| a.role).collect::<Vec<_>>(),
        nkeys,
        w.policy.ttl_ms / 1000,
        w.policy.renew_ms / 1000,
        w.policy.grace_ms / 1000,
        w.policy.skew_ms / 1000,
        w.policy.min_remaining_ms / 1000,
        w.policy.max_ttl_ms / 1000,
        if faults_on { "on" } else { "off" }
    );
    w.log(line);
    for a in 0..nagents {
        let at = T0 + w.rng.below(60_000);
        w.push(at, Ev::Wake { agent: a, gen: 0 });
    }
    while let Some(((at, _), ev)) = w.queue.pop_first() {
        if at > T0 + BOUND_MS || w.counters.events >= MAX_EVENTS {
            break;
        }
        w.now = at;
        w.counters.events += 1;
        w.dispatch(ev);
        if w.violation.is_some() {
            break;
        }
    }
    if w.violation.is_none() {
        // What still runs when the seed ends is held to its bound too.
        let breach = w.checker.finish(w.now);
        if let Some((invariant, message)) = breach {
            w.violation = Some(Violation {
                seed: w.seed,
                invariant,
                at: w.now - T0,
                message,
            });
        }
    }
    w.counters.transitions = w.checker.transitions;
    w.counters.beliefs = w.checker.beliefs_fed;
    w.counters.beliefs_past_deadline = w.checker.beliefs_past_deadline;
    Some(ClaimsOutcome {
        counters: w.counters,
        violation: w.violation,
        trace: w.trace.unwrap_or_default(),
    })
}

impl World {
    fn push(&mut self, at: Millis, ev: Ev) {
        self.seq += 1;
        self.queue.insert((at, self.seq), ev);
    }

    fn log(&mut self, line: String) {
        let t = fmt_t(self.now);
        if let Some(tr) = &mut self.trace {
            tr.push(format!("{t} {line}"));
        }
    }

    fn tell(&mut self, feed: ClaimFeed) {
        if self.violation.is_some() {
            return;
        }
        if let Some((invariant, message)) = self.checker.feed(self.now, feed) {
            self.violation = Some(Violation {
                seed: self.seed,
                invariant,
                at: self.now - T0,
                message,
            });
        }
    }

    fn local(&self, a: AgentId) -> Millis {
        self.agents[a].clock.local(self.now)
    }

    fn faulty(&self) -> bool {
        self.faults_on && self.now < T0 + FAULTS_UNTIL_MS
    }

    fn dispatch(&mut self, ev: Ev) {
        let agent = match &ev {
            Ev::Wake { agent, .. }
            | Ev::Arrive { agent, .. }
            | Ev::Answer { agent, .. }
            | Ev::Pause { agent }
            | Ev::Crash { agent }
            | Ev::GuardWake { agent, .. }
            | Ev::WorkEnd { agent, .. }
            | Ev::ChildGone { agent, .. }
            | Ev::StrayRelease { agent, .. } => *agent,
        };
        if let Ev::Arrive {
            agent,
            gen,
            op,
            call,
            fault,
            tell,
        } = ev
        {
            // GitHub acts whatever the agent does meanwhile.
            return self.arrive(agent, gen, op, call, fault, tell);
        }
        if self.agents[agent].crashed {
            return;
        }
        if let Some(until) = self.agents[agent].paused_until {
            if self.now < until {
                // A paused process does nothing: what reaches it waits for the resume.
                return self.push(until, ev);
            }
            self.agents[agent].paused_until = None;
            self.log(format!("a{agent} resumes"));
            // A guard's timer that came due during the pause fires first.
            self.guard_recheck(agent);
            if self.violation.is_some() || self.agents[agent].crashed {
                return;
            }
        }
        match ev {
            Ev::Wake { gen, .. } if gen == self.agents[agent].gen => {
                if self.agents[agent].op.is_some() {
                    // The operation's own sleep (a retry's backoff) is over.
                    let now = self.local(agent);
                    return self.step(agent, Event::Timer { now });
                }
                self.wake(agent)
            }
            Ev::GuardWake { timer, .. } => self.guard_wake(agent, timer),
            Ev::WorkEnd { hold, .. } => self.work_exits(agent, hold, false),
            Ev::ChildGone { hold, .. } => self.work_exits(agent, hold, true),
            Ev::StrayRelease { hold, .. } => self.stray_release(agent, hold),
            Ev::Answer {
                gen,
                reply,
                tell,
                updates,
                ..
            } => {
                let unknown = matches!(reply, Reply::Transport { sent: true, .. })
                    || matches!(reply, Reply::Http { status, .. } if status >= 500);
                if let Some(updates) = updates {
                    self.tell(ClaimFeed::UpdateAnswered {
                        agent,
                        updates,
                        unknown,
                    });
                    let ag = &self.agents[agent];
                    if unknown
                        && tell
                        && gen == ag.gen
                        && !ag.resent
                        && self.planted == Some(PlantedBug::ResendUnknownRefUpdate)
                    {
                        // The planted bug: the unknown updateRefs is sent again as is, and the
                        // core is told only the second answer.
                        let (call, timeout) = ag.last_call.clone().expect("a request was sent");
                        self.agents[agent].resent = true;
                        return self.send(agent, call, timeout);
                    }
                }
                if tell && gen == self.agents[agent].gen {
                    let now = self.local(agent);
                    self.step(agent, Event::Reply { now, reply });
                }
            }
            Ev::Pause { .. } => {
                let long = self.policy.ttl_ms + self.policy.grace_ms + self.policy.skew_ms;
                let until = self.now + long + self.rng.between(1_000, 120_000);
                self.agents[agent].paused_until = Some(until);
                self.tell(ClaimFeed::Paused { agent, until });
                self.counters.pauses += 1;
                self.log(format!("a{agent} paused until {}", fmt_t(until)));
            }
            Ev::Crash { .. } => {
                self.agents[agent].crashed = true;
                self.counters.crashes += 1;
                self.log(format!("a{agent} crashes"));
                self.guard_crash(agent);
                if let Some(h) = self.agents[agent].holding.take() {
                    let refs = h.keys.iter().map(|k| claim_ref(k)).collect();
                    self.tell(ClaimFeed::BeliefEnds { agent, refs });
                }
            }
            _ => {}
        }
    }

    /// The agent's own schedule: start its next task, renew, or end its holding.
    fn wake(&mut self, a: AgentId) {
        let local = self.local(a);
        let Some(h) = self.agents[a].holding.clone() else {
            if self.agents[a].tasks_left == 0 {
                return;
            }
            return self.start_claim(a);
        };
        if local >= h.work_until || local >= h.deadline {
            // The work is over (or its deadline came: the holder stops): release it.
            return self.start_release(a, &h);
        }
        if h.keys.len() > 1 {
            // renew takes one key: a family's holder works within its first lease.
            let target = h.work_until.min(h.deadline);
            let at = self.agents[a].clock.real_at(target, self.now);
            let gen = self.agents[a].gen;
            return self.push(at, Ev::Wake { agent: a, gen });
        }
        self.start_op(
            a,
            OperationKind::ClaimRenew,
            &h,
            vec![("if-due", "true".into())],
        );
    }

    fn start_claim(&mut self, a: AgentId) {
        let k = self.keys.len();
        let (kind, mut inputs) = match self.agents[a].role {
            Role::Contender { no_takeover } => {
                let mut i = vec![("key", "k0".to_string())];
                if no_takeover {
                    i.push(("no-takeover", "true".into()));
                }
                (OperationKind::Claim, i)
            }
            Role::Sweeper => {
                let key = self.keys[self.agents[a].next_key % k].clone();
                (OperationKind::Claim, vec![("key", key)])
            }
            Role::Guarded { family: false } => {
                let key = self.keys[self.agents[a].next_key % k].clone();
                (OperationKind::Claim, vec![("key", key)])
            }
            Role::Family | Role::Guarded { family: true } => {
                let n = self.rng.between(2, k.min(3) as u64) as usize;
                let start = self.agents[a].next_key;
                let mut keys: Vec<String> =
                    (0..n).map(|i| self.keys[(start + i) % k].clone()).collect();
                keys.sort();
                (
                    OperationKind::ClaimFamilyClaim,
                    vec![("keys", keys.join(","))],
                )
            }
        };
        inputs.push(("run-id-prefix", format!("agent{a}")));
        self.begin(a, kind, inputs);
    }

    fn start_release(&mut self, a: AgentId, h: &Holding) {
        let refs = h.keys.iter().map(|k| claim_ref(k)).collect();
        self.tell(ClaimFeed::BeliefEnds { agent: a, refs });
        let kind = if h.keys.len() > 1 {
            OperationKind::ClaimFamilyRelease
        } else {
            OperationKind::ClaimRelease
        };
        self.start_op(a, kind, h, Vec::new());
    }

    fn start_op(
        &mut self,
        a: AgentId,
        kind: OperationKind,
        h: &Holding,
        extra: Vec<(&'static str, String)>,
    ) {
        let mut inputs = vec![("run-id", h.run_id.clone())];
        if h.keys.len() > 1 {
            inputs.push(("keys", h.keys.join(",")));
            inputs.push(("tokens", h.tokens.join(",")));
        } else {
            inputs.push(("key", h.keys[0].clone()));
            inputs.push(("token", h.tokens[0].clone()));
        }
        inputs.extend(extra);
        self.begin(a, kind, inputs);
    }

    fn begin(&mut self, a: AgentId, kind: OperationKind, pairs: Vec<(&'static str, String)>) {
        let mut inputs: BTreeMap<String, String> = [
            ("repository", REPOSITORY.to_string()),
            ("namespace", NAMESPACE.to_string()),
            ("config", self.config.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        for (k, v) in pairs {
            inputs.insert(k.into(), v);
        }
        let entropy = Entropy {
            seed: self.rng.next_u64(),
            nonce: format!("{:016x}", self.rng.next_u64()),
        };
        let (op, _) =
            Operation::new(kind, &inputs, &entropy).expect("the claim clients' inputs are valid");
        self.ops += 1;
        let op_id = self.ops;
        let family = matches!(
            kind,
            OperationKind::ClaimFamilyClaim
                | OperationKind::ClaimFamilyRelease
                | OperationKind::ClaimFamilyRenew
        )
        .then(|| inputs["keys"].split(',').map(claim_ref).collect::<Vec<_>>());
        *self.counters.ops.entry(kind_name(kind).into()).or_default() += 1;
        let local = self.local(a);
        let ag = &mut self.agents[a];
        ag.op = Some(op);
        ag.kind = kind;
        ag.op_id = op_id;
        ag.op_start_local = local;
        ag.gen += 1;
        ag.resent = false;
        self.log(format!(
            "a{a} {} starts ({:?})",
            kind_name(kind),
            inputs.get("key").or(inputs.get("keys"))
        ));
        self.tell(ClaimFeed::OpStarted {
            agent: a,
            op: op_id,
            family,
        });
        self.step(a, Event::Start { now: local });
    }

    fn step(&mut self, a: AgentId, event: Event) {
        self.counters.steps += 1;
        let r = self.agents[a]
            .op
            .as_mut()
            .expect("an operation")
            .step(event);
        match r {
            Err(e) => {
                self.violation = Some(Violation {
                    seed: self.seed,
                    invariant: Invariant::Protocol,
                    at: self.now - T0,
                    message: format!("a{a}: the core refused an event: {e}"),
                });
            }
            Ok(step) => match step.command {
                Command::Finish { outcome } => self.finished(a, *outcome),
                Command::Sleep { until_ms, .. } => {
                    let at = self.agents[a].clock.real_at(until_ms, self.now);
                    let gen = self.agents[a].gen;
                    self.push(at, Ev::Wake { agent: a, gen });
                }
                Command::Request { call, timeout_ms } => self.send(a, call, timeout_ms),
            },
        }
    }

    fn draw_fault(&mut self) -> Option<F> {
        if !self.faulty() || self.rng.below(10) != 0 {
            return None;
        }
        Some(self.rng.pick(&[
            F::LostAnswer,
            F::Applied502,
            F::NotApplied502,
            F::Unavailable,
            F::NotSent,
            F::RateLimited,
        ]))
    }

    fn send(&mut self, a: AgentId, call: Call, timeout_ms: Millis) {
        self.counters.requests += 1;
        let gen = self.agents[a].gen;
        let op = self.agents[a].op_id;
        if let Some(updates) = ref_updates(&call) {
            self.counters.update_refs += 1;
            self.tell(ClaimFeed::UpdateSent { agent: a, updates });
        } else if matches!(call, Call::Graphql { .. }) {
            self.tell(ClaimFeed::ReadSent { agent: a });
        }
        self.agents[a].last_call = Some((call.clone(), timeout_ms));
        let fault = self.draw_fault();
        if let Some(f) = fault {
            *self.counters.faults.entry(format!("{f:?}")).or_default() += 1;
        }
        if fault == Some(F::NotSent) {
            let reply = Reply::Transport {
                sent: false,
                message: "connection refused".into(),
            };
            let at = self.now + 5;
            let updates = ref_updates(&call);
            return self.push(
                at,
                Ev::Answer {
                    agent: a,
                    gen,
                    reply,
                    tell: true,
                    updates,
                },
            );
        }
        let planted_split = self.planted == Some(PlantedBug::FamilySplit);
        let calls = match (&call, ref_updates(&call)) {
            (
                Call::Graphql {
                    document,
                    variables,
                },
                Some(u),
            ) if planted_split && u.len() > 1 => {
                // The planted bug: a family sent as one updateRefs per ref.
                (0..u.len())
                    .map(|i| {
                        let mut v = variables.clone();
                        v["refUpdates"] = Value::Array(vec![variables["refUpdates"][i].clone()]);
                        Call::Graphql {
                            document: document.clone(),
                            variables: v,
                        }
                    })
                    .collect()
            }
            _ => vec![call],
        };
        let n = calls.len();
        for (i, c) in calls.into_iter().enumerate() {
            let at = self.now + self.rng.between(10, 250) + i as u64;
            // Only the last split call's answer is told to the core.
            let tell = i + 1 == n;
            self.push(
                at,
                Ev::Arrive {
                    agent: a,
                    gen,
                    op,
                    call: c,
                    fault,
                    tell,
                },
            );
        }
    }

    fn arrive(&mut self, a: AgentId, gen: u64, op: u64, call: Call, fault: Option<F>, tell: bool) {
        let back = self.rng.between(10, 250);
        let updates = ref_updates(&call);
        let applies = !matches!(
            fault,
            Some(F::NotApplied502 | F::Unavailable | F::RateLimited)
        );
        let mut reply = if applies {
            let cmd = Command::Request {
                call: call.clone(),
                timeout_ms: 15_000,
            };
            let answer = self.gh.answer(&cmd, self.now);
            if !answer.moved.is_empty() {
                let moves = answer
                    .moved
                    .iter()
                    .map(|m| {
                        let parents = self
                            .gh
                            .commit(&m.after)
                            .map(|c| c.parents.clone())
                            .unwrap_or_default();
                        (m.name.clone(), m.before.clone(), m.after.clone(), parents)
                    })
                    .collect();
                self.log(format!(
                    "GitHub: a{a}'s updateRefs lands ({} refs)",
                    answer.moved.len()
                ));
                self.tell(ClaimFeed::Landed {
                    agent: a,
                    op,
                    moves,
                });
            }
            answer.reply
        } else {
            Reply::Http {
                status: 0,
                message: String::new(),
                retry_after: None,
                ratelimit_remaining: None,
                ratelimit_reset: None,
                date: None,
            }
        };
        let mut delay = back;
        match fault {
            Some(F::LostAnswer) => {
                reply = Reply::Transport {
                    sent: true,
                    message: "timeout".into(),
                };
                delay = 15_000;
            }
            Some(F::Applied502 | F::NotApplied502) => {
                reply = http(502, "Bad Gateway");
                delay = 10_000;
            }
            Some(F::Unavailable) => reply = http(503, "Service Unavailable"),
            Some(F::RateLimited) => {
                reply = if matches!(call, Call::Graphql { .. }) {
                    Reply::Graphql {
                        data_absent: false,
                        data: None,
                        errors: vec![leasehold_core::GraphqlError {
                            kind: Some("RATE_LIMITED".into()),
                            message: "API rate limit exceeded".into(),
                        }],
                        retry_after: None,
                        ratelimit_remaining: None,
                        ratelimit_reset: None,
                        date: Some(leasehold_github_model::http_date(self.now)),
                    }
                } else {
                    let mut r = http(429, "Too Many Requests");
                    if let Reply::Http { retry_after, .. } = &mut r {
                        *retry_after = Some("3".into());
                    }
                    r
                }
            }
            _ => {}
        }
        self.push(
            self.now + delay,
            Ev::Answer {
                agent: a,
                gen,
                reply,
                tell,
                updates,
            },
        );
    }

    fn finished(&mut self, a: AgentId, o: Outcome) {
        let kind = self.agents[a].kind;
        let report = o.claims.clone();
        let status = report.as_ref().map_or(Status::Usage, |r| r.status);
        *self
            .counters
            .results
            .entry(format!("{} {}", kind_name(kind), status.as_str()))
            .or_default() += 1;
        self.log(format!(
            "a{a} {} finishes {}",
            kind_name(kind),
            status.as_str()
        ));
        self.agents[a].op = None;
        self.agents[a].gen += 1;
        let local = self.local(a);
        if self.agents[a].guard.is_some()
            && matches!(
                kind,
                OperationKind::ClaimRenew | OperationKind::ClaimFamilyRenew
            )
        {
            return self.guard_renewal_finished(a, o);
        }
        let Some(r) = report else { return };
        if let (Role::Guarded { .. }, Status::Acquired | Status::TakenOver) =
            (self.agents[a].role, status)
        {
            let h = Holding {
                keys: r.items.iter().map(|i| i.key.clone()).collect(),
                tokens: r
                    .items
                    .iter()
                    .map(|i| i.token.clone().unwrap_or_default())
                    .collect(),
                run_id: r.run_id.clone(),
                work_until: local + guard::work_ms(self),
                deadline: Millis::MAX,
            };
            return self.guarded_holding(a, h, &o);
        }
        match (kind, status) {
            (
                OperationKind::Claim
                | OperationKind::ClaimTakeover
                | OperationKind::ClaimFamilyClaim,
                Status::Acquired | Status::TakenOver,
            )
            | (OperationKind::ClaimRenew, Status::Renewed) => {
                let keys: Vec<String> = r.items.iter().map(|i| i.key.clone()).collect();
                let tokens: Vec<String> = r
                    .items
                    .iter()
                    .map(|i| i.token.clone().unwrap_or_default())
                    .collect();
                // The holder's deadline: the lease it proved, less minRemaining, measured on its
                // own clock from the operation's start (before the write was planned), less
                // the second the payload's times are written to.
                let left = r
                    .items
                    .iter()
                    .filter_map(|i| i.payload.as_ref())
                    .filter_map(|p| p.lease.as_ref().map(|l| (p.at, l.expires_at)))
                    .map(|(at, exp)| {
                        self.policy
                            .local_deadline(exp)
                            .saturating_sub(at)
                            .saturating_sub(1_000)
                    })
                    .min()
                    .unwrap_or(0);
                let deadline = self.agents[a].op_start_local + left;
                let until = self.agents[a].clock.real_at(deadline, self.now);
                let until_real = until;
                let refs = keys
                    .iter()
                    .map(|k| claim_ref(k))
                    .zip(tokens.clone())
                    .collect();
                self.tell(ClaimFeed::Belief {
                    agent: a,
                    refs,
                    until: until_real,
                });
                let work_until = match &self.agents[a].holding {
                    Some(h) => h.work_until,
                    None => local + self.rng.between(5_000, self.policy.ttl_ms * 2),
                };
                let h = Holding {
                    keys,
                    tokens,
                    run_id: r.run_id.clone(),
                    work_until,
                    deadline,
                };
                if kind != OperationKind::ClaimRenew && self.faulty() {
                    // A process pause past its lease, or a crash, while it holds.
                    match self.rng.below(12) {
                        0 => {
                            let at = self.now + self.rng.below(self.policy.ttl_ms);
                            self.push(at, Ev::Pause { agent: a });
                        }
                        1 => {
                            let at = self.now + self.rng.below(self.policy.ttl_ms);
                            self.push(at, Ev::Crash { agent: a });
                        }
                        _ => {}
                    }
                }
                self.agents[a].holding = Some(h);
                self.schedule_renewal(a, &r);
            }
            (OperationKind::ClaimRenew, Status::NotDue) => self.schedule_renewal(a, &r),
            (OperationKind::ClaimRenew, Status::Lost | Status::NotHeld) => {
                if let Some(h) = self.agents[a].holding.take() {
                    let refs = h.keys.iter().map(|k| claim_ref(k)).collect();
                    self.tell(ClaimFeed::BeliefEnds { agent: a, refs });
                }
                self.next_task(a, 1_000);
            }
            (OperationKind::ClaimRenew, Status::Stale) => {
                // At the ceiling (or an old token): end the holding with a release.
                if let Some(h) = self.agents[a].holding.clone() {
                    self.start_release(a, &h);
                }
            }
            (OperationKind::ClaimRenew, _) => {
                // A failure: the belief stays until its deadline; try again soon.
                self.later(a, 5_000);
            }
            (OperationKind::ClaimRelease | OperationKind::ClaimFamilyRelease, _) => {
                self.agents[a].holding = None;
                self.next_task(a, 2_000);
            }
            (OperationKind::Claim, Status::Expired) => {
                // no-takeover: take it over explicitly, on the token it was shown.
                let token = r.items[0].token.clone().unwrap_or_default();
                let inputs = vec![
                    ("key", r.items[0].key.clone()),
                    ("supersedes", token),
                    ("run-id-prefix", format!("agent{a}")),
                ];
                self.begin(a, OperationKind::ClaimTakeover, inputs);
            }
            (_, s) => {
                // Contended, family-aborted, a failure: try again (a sweeper, the next key).
                self.agents[a].next_key += 1;
                let wait = if s == Status::Contended || s == Status::FamilyAborted {
                    self.rng.between(self.policy.ttl_ms / 4, self.policy.ttl_ms)
                } else {
                    self.rng.between(1_000, 10_000)
                };
                self.later(a, wait);
            }
        }
    }

    fn next_task(&mut self, a: AgentId, wait: Millis) {
        let ag = &mut self.agents[a];
        ag.tasks_left = ag.tasks_left.saturating_sub(1);
        if ag.tasks_left > 0 {
            let w = wait + self.rng.below(30_000);
            self.later(a, w);
        }
    }

    fn later(&mut self, a: AgentId, wait_local: Millis) {
        let target = self.local(a) + wait_local;
        let at = self.agents[a].clock.real_at(target, self.now);
        let gen = self.agents[a].gen;
        self.push(at, Ev::Wake { agent: a, gen });
    }

    /// The next renewal, at `renewAfter` (as a span from the payload's time, on the agent's
    /// clock), or the holding's end, whichever comes first.
    fn schedule_renewal(&mut self, a: AgentId, r: &leasehold_core::ClaimReport) {
        let span = r
            .items
            .iter()
            .filter_map(|i| i.payload.as_ref())
            .filter_map(|p| p.lease.as_ref().map(|l| l.renew_after.saturating_sub(p.at)))
            .min()
            .unwrap_or(self.policy.renew_ms);
        let Some(h) = &self.agents[a].holding else {
            return;
        };
        let local = self.local(a);
        let target = (local + span.max(1_000)).min(h.work_until).min(h.deadline);
        let at = self.agents[a].clock.real_at(target, self.now);
        let gen = self.agents[a].gen;
        self.push(at, Ev::Wake { agent: a, gen });
    }
}

fn claim_ref(key: &str) -> String {
    leasehold_core::claim_ref(NAMESPACE, key)
}

fn kind_name(kind: OperationKind) -> &'static str {
    match kind {
        OperationKind::Claim => "claim",
        OperationKind::ClaimTakeover => "takeover",
        OperationKind::ClaimRenew => "renew",
        OperationKind::ClaimRelease => "release",
        OperationKind::ClaimFamilyClaim => "family-claim",
        OperationKind::ClaimFamilyRelease => "family-release",
        OperationKind::ClaimFamilyRenew => "family-renew",
        _ => "other",
    }
}

/// The (ref, beforeOid) of an `updateRefs` call (`None` for any other request).
fn ref_updates(call: &Call) -> Option<Vec<(String, Option<String>)>> {
    let Call::Graphql {
        document,
        variables,
    } = call
    else {
        return None;
    };
    if !document.starts_with("mutation") {
        return None;
    }
    Some(
        variables["refUpdates"]
            .as_array()?
            .iter()
            .map(|u| {
                let before = u["beforeOid"].as_str().unwrap_or_default();
                (
                    u["name"].as_str().unwrap_or_default().to_string(),
                    (before != leasehold_core::ZERO_OID).then(|| before.to_string()),
                )
            })
            .collect(),
    )
}
