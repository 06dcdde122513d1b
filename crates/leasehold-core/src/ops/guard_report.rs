//! What a guard says, and what each of its renewals starts from.
//!
//! The guard machine ([`super::guard`]) decides when to verify, renew, signal and finish. This
//! keeps what the renewals said and writes the guard's documents from it, so that no driver
//! writes a document of its own:
//!
//! - `guard-start`, once the command runs;
//! - `guard-exit`, when it ended by itself or was stopped;
//! - `guard-refused`, when the verification did not renew the holding and the command never ran.
//!
//! A claim's renewal rotates its token (each renewal writes a new commit): the next renewal starts
//! from the token, payload and repository id the last one printed, so it needs no read first.

use serde_json::{json, Value};

use super::claims::next::{result_document, RESULT_SCHEMA};
use super::guard::{ChildExit, Finish, FinishReason};
use super::{Operation, OperationKind, Plan};
use crate::input::{Entropy, RawInputs};
use crate::wire::time::format_rfc3339;
use crate::wire::{
    AnswerClass, Error, Failure, FailureCode, InputError, LeaseView, Outcome, ResultWord, Status,
};

/// What the guard guards, by the operation its renewals run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subject {
    /// A lock's holding (`guard`, actions/guard, actions/run): renewals are `renew`.
    Lock,
    /// One claim (`claims guard --key`): renewals are `claim-renew`.
    Claim,
    /// A family of claims (`claims guard --keys`): renewals are `claim-family-renew`.
    Family,
}

impl Subject {
    /// The `command` of the guard's documents.
    fn command(self) -> &'static str {
        match self {
            Subject::Lock => "guard",
            Subject::Claim | Subject::Family => "claims guard",
        }
    }

    /// The command whose result document a claim's renewal prints.
    fn renew_command(self) -> &'static str {
        match self {
            Subject::Lock => "renew",
            Subject::Claim => "claims renew",
            Subject::Family => "claims family renew",
        }
    }
}

/// A guard's renewals and documents (one per guard run).
#[derive(Clone, Debug)]
pub struct GuardReport {
    subject: Subject,
    kind: OperationKind,
    /// The renewals' inputs as they are now (a claim's token rotates).
    inputs: RawInputs,
    plan: Plan,
    /// The verification's outcome.
    first: Option<Outcome>,
    /// A claim's: the result document of the last renewal that renewed (its claim and `next`).
    current: Option<Value>,
}

impl GuardReport {
    /// A guard whose renewals run `kind` (`renew`, `claim-renew` or `claim-family-renew`) on
    /// `inputs`. Every input is checked here, before anything is sent (an error names it).
    pub fn new(kind: OperationKind, inputs: RawInputs, entropy: &Entropy) -> Result<Self, Error> {
        let subject = match kind {
            OperationKind::Renew => Subject::Lock,
            OperationKind::ClaimRenew => Subject::Claim,
            OperationKind::ClaimFamilyRenew => Subject::Family,
            _ => {
                return Err(InputError::new(
                    "kind",
                    "must be renew, claim-renew or claim-family-renew: the operations a guard renews with",
                    crate::wire::value_of(&kind)
                        .ok()
                        .as_ref()
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                )
                .into())
            }
        };
        // A claim's guard and a family's are told apart by their inputs: neither takes the
        // other's (a family reads its members, so it takes no `prior` or `repository-id`).
        let (foreign, rule): (&[&str], &str) = match subject {
            Subject::Lock => (&[], ""),
            Subject::Claim => (&["keys", "tokens"], "is for a family's guard: one claim's takes `key` and `token`"),
            Subject::Family => (
                &["key", "token", "prior", "repository-id"],
                "is for one claim's guard: a family's takes `keys` and `tokens`, and reads its members",
            ),
        };
        if let Some(name) = foreign.iter().find(|n| inputs.contains_key(**n)) {
            return Err(InputError::new(name, rule, "").into());
        }
        let (_, plan) = Operation::new(kind, &inputs, entropy)?;
        Ok(GuardReport {
            subject,
            kind,
            inputs,
            plan,
            first: None,
            current: None,
        })
    }

    /// The operation each renewal runs.
    pub fn kind(&self) -> OperationKind {
        self.kind
    }

    /// Where the renewals go and what the inputs resolved to.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The inputs the next renewal runs on.
    pub fn inputs(&self) -> &RawInputs {
        &self.inputs
    }

    /// A renewal ended with `outcome` (`verified`: it was the verification). A claim's renewal
    /// that renewed every member moves the inputs on to the tokens it wrote.
    pub fn heard(&mut self, verified: bool, outcome: &Outcome) {
        if verified {
            self.first = Some(outcome.clone());
        }
        let Some(report) = &outcome.claims else {
            return;
        };
        let tokens: Option<Vec<&str>> = report.items.iter().map(|i| i.token.as_deref()).collect();
        let tokens = match tokens {
            Some(t) if report.status == Status::Renewed && !t.is_empty() => t,
            _ => return,
        };
        if self.subject == Subject::Family {
            self.inputs.insert("tokens".into(), tokens.join(","));
        } else {
            let item = &report.items[0];
            self.inputs.insert("token".into(), tokens[0].into());
            // The version the next renewal writes on: both halves, or neither (it then reads
            // first; an older pair left in place would name a version already gone). Beside
            // them, GitHub's clock as this renewal measured it: the next, planned on `prior`
            // before any answer, stamps GitHub's time by it, not the runner's. Without `prior`
            // nothing would use it, and it is refused alone.
            for input in ["prior", "repository-id", "clock-offset"] {
                self.inputs.remove(input);
            }
            if let (Some(payload), Some(id)) = (&item.payload, &report.repository_id) {
                let prior = serde_json::to_string(payload).expect("a payload serializes");
                self.inputs.insert("prior".into(), prior);
                self.inputs.insert("repository-id".into(), id.clone());
                if let Some(c) = report.clock {
                    self.inputs.insert("clock-offset".into(), c.input());
                }
            }
        }
        self.current = Some(result_document(self.subject.renew_command(), outcome));
    }

    /// The outcome of a renewal whose driver threw before it finished (`why`): failed, and of
    /// unknown outcome, since its last request may have reached GitHub. The guard machine then
    /// treats it as it treats any renewal that proves nothing.
    pub fn unfinished(&self, why: &str) -> Outcome {
        let mut outcome = Outcome::new(
            ResultWord::Failed,
            false,
            &self.plan.lock,
            &self.plan.holder_id,
        );
        let mut error = Failure::new(
            FailureCode::ApiUnavailable,
            format!(
                "the renewal did not finish ({why}); whether its last request reached GitHub is unknown"
            ),
        );
        error.class = Some(AnswerClass::UnknownOutcome);
        outcome.error = Some(error);
        outcome
    }

    /// `guard-start`: the command (`argv`, process `pid`) runs under `lease`.
    pub fn start_document(&self, pid: Option<u32>, argv: &[String], lease: &LeaseView) -> Value {
        let mut doc = self.document("guard-start");
        doc["pid"] = json!(pid);
        doc["argv"] = json!(argv);
        doc["expiresAt"] = json!(format_rfc3339(lease.expires_at));
        doc["localDeadline"] = json!(format_rfc3339(lease.local_deadline));
        match self.subject {
            Subject::Lock => {
                let first = self.first.as_ref();
                doc["lock"] = json!(first.map_or(&self.plan.lock, |o| &o.lock));
                doc["holderId"] = json!(first.map_or(&self.plan.holder_id, |o| &o.holder_id));
                doc["fence"] = json!(first.and_then(|o| o.fence));
            }
            Subject::Claim | Subject::Family => {
                doc["status"] = json!("held");
                self.claim_fields(&mut doc);
            }
        }
        doc
    }

    /// The last document: `guard-refused` when the command never ran because the verification
    /// did not renew, else `guard-exit`.
    pub fn finish_document(&self, finish: &Finish) -> Value {
        let refused = finish.reason == FinishReason::NotHeld;
        let mut doc = self.document(if refused {
            "guard-refused"
        } else {
            "guard-exit"
        });
        doc["reason"] = json!(finish.reason.as_str());
        doc["exitCode"] = json!(finish.exit_code);
        if refused {
            self.refused_fields(&mut doc);
            return doc;
        }
        let child = finish.child.as_ref();
        doc["childExitCode"] = json!(match child {
            Some(ChildExit::Exited { code }) => Some(*code),
            _ => None,
        });
        doc["childSignal"] = json!(match child {
            Some(ChildExit::Signalled { signal, .. }) => Some(signal.as_str()),
            _ => None,
        });
        doc["error"] = json!(match child {
            Some(ChildExit::SpawnFailed { message }) => Some(message.as_str()),
            _ => None,
        });
        doc["renewals"] = json!(finish.renewals);
        if self.subject != Subject::Lock {
            let stopped = matches!(finish.reason, FinishReason::Lost | FinishReason::Deadline);
            doc["status"] = json!(if stopped {
                "lost"
            } else {
                finish.reason.as_str()
            });
            self.claim_fields(&mut doc);
            // What to run next only when the command ended by itself: a claim whose command
            // was stopped is not this run's to renew or release.
            let ended = matches!(
                finish.reason,
                FinishReason::ChildExited | FinishReason::SpawnFailed
            );
            doc["next"] = match &self.current {
                Some(current) if ended => current["next"].clone(),
                _ => json!({}),
            };
        }
        doc
    }

    /// What every guard document starts with.
    fn document(&self, event: &str) -> Value {
        json!({
            "schema": RESULT_SCHEMA,
            "command": self.subject.command(),
            "event": event,
        })
    }

    /// A claim's current token (a family's, in the order of its keys) and claim.
    fn claim_fields(&self, doc: &mut Value) {
        if self.subject == Subject::Family {
            let tokens = self.inputs.get("tokens").map(String::as_str).unwrap_or("");
            doc["tokens"] = json!(tokens.split(',').collect::<Vec<_>>());
        } else {
            doc["token"] = json!(self.inputs.get("token"));
        }
        doc["claim"] = self
            .current
            .as_ref()
            .map_or(Value::Null, |c| c["claim"].clone());
    }

    /// Why the command never ran: the verification's own result.
    fn refused_fields(&self, doc: &mut Value) {
        let Some(first) = &self.first else {
            doc["error"] = Value::Null;
            return;
        };
        match self.subject {
            Subject::Lock => {
                doc["lock"] = json!(first.lock);
                doc["holderId"] = json!(first.holder_id);
                doc["result"] = json!(first.result.as_str());
                doc["error"] = crate::wire::value_of(&first.error).expect("an error serializes");
            }
            Subject::Claim | Subject::Family => {
                let verification = result_document(self.subject.renew_command(), first);
                doc["status"] = json!("not-held");
                doc["action"] = json!("the command never ran; see verification");
                doc["next"] = verification["next"].clone();
                doc["error"] = verification["error"].clone();
                doc["verification"] = verification;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Guard, GuardCommand, GuardEvent};
    use crate::test_support::raw_inputs;

    fn lock_inputs() -> RawInputs {
        raw_inputs(
            &[
                ("lock", "deploy"),
                ("nonce", "0123456789abcdef"),
                ("GITHUB_REPOSITORY", "octo/app"),
                ("GITHUB_RUN_ID", "100"),
                ("GITHUB_RUN_ATTEMPT", "1"),
                ("GITHUB_JOB", "build"),
                ("RUNNER_NAME", "runner-1"),
            ],
            &[],
        )
    }

    fn report() -> GuardReport {
        let entropy = Entropy {
            seed: 1,
            nonce: "fedcba9876543210".into(),
        };
        GuardReport::new(OperationKind::Renew, lock_inputs(), &entropy).expect("renew inputs")
    }

    fn lease() -> LeaseView {
        LeaseView {
            expires_at: 1_800_000_900_000,
            ceiling_at: 1_800_003_600_000,
            local_deadline: 1_800_000_780_000,
            renew_at: 1_800_000_300_000,
            renew_ms: 300_000,
            ttl_ms: 900_000,
        }
    }

    fn renewed(r: &GuardReport) -> Outcome {
        let mut o = Outcome::new(ResultWord::Renewed, true, &r.plan.lock, &r.plan.holder_id);
        o.fence = Some(7);
        o.lease = Some(lease());
        o
    }

    #[test]
    fn a_lock_guard_names_the_holding_and_how_the_command_ended() {
        let mut r = report();
        r.heard(true, &renewed(&r));
        let start = r.start_document(Some(31), &["sleep".into(), "1".into()], &lease());
        assert_eq!(
            start,
            json!({
                "schema": RESULT_SCHEMA, "command": "guard", "event": "guard-start",
                "lock": "deploy", "holderId": r.plan.holder_id, "fence": 7,
                "pid": 31, "argv": ["sleep", "1"],
                "expiresAt": "2027-01-15T08:15:00.000Z", "localDeadline": "2027-01-15T08:13:00.000Z",
            })
        );
        let exit = r.finish_document(&Finish {
            exit_code: 137,
            reason: FinishReason::ChildExited,
            child: Some(ChildExit::Signalled {
                signal: "SIGKILL".into(),
                number: 9,
            }),
            renewals: 3,
        });
        assert_eq!(
            exit,
            json!({
                "schema": RESULT_SCHEMA, "command": "guard", "event": "guard-exit",
                "reason": "child-exited", "exitCode": 137, "childExitCode": null,
                "childSignal": "SIGKILL", "error": null, "renewals": 3,
            })
        );
        let spawn_failed = r.finish_document(&Finish {
            exit_code: 127,
            reason: FinishReason::SpawnFailed,
            child: Some(ChildExit::SpawnFailed {
                message: "spawn nope ENOENT".into(),
            }),
            renewals: 0,
        });
        assert_eq!(spawn_failed["error"], "spawn nope ENOENT");
    }

    #[test]
    fn a_renewal_whose_driver_threw_is_of_unknown_outcome_and_runs_nothing() {
        let mut r = report();
        let unfinished = r.unfinished("socket closed by the peer");
        let error = unfinished.error.clone().unwrap();
        assert_eq!(error.class, Some(AnswerClass::UnknownOutcome));
        assert!(error.message.contains("socket closed by the peer"));
        assert_eq!(unfinished.holder_id, r.plan.holder_id);
        // The machine hears it as a verification that proved nothing: the command never runs.
        let mut machine = Guard::new(&lock_inputs()).unwrap();
        let step = machine.step(GuardEvent::Started { now: 1_000 }).unwrap();
        assert_eq!(step.commands, vec![GuardCommand::Verify]);
        let step = machine
            .step(GuardEvent::Verified {
                now: 2_000,
                outcome: Box::new(unfinished.clone()),
            })
            .unwrap();
        let [GuardCommand::Finish(finish)] = step.commands.as_slice() else {
            panic!("{:?}", step.commands)
        };
        assert_eq!(finish.reason, FinishReason::NotHeld);
        r.heard(true, &unfinished);
        let refused = r.finish_document(finish);
        assert_eq!(refused["event"], "guard-refused");
        assert_eq!(refused["result"], "failed");
        assert_eq!(refused["error"]["class"], "unknown-outcome");
        assert_eq!(refused["lock"], "deploy");
    }
}
