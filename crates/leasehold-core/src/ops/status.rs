//! status: a read-only look at the lock — its holders, its queue and its capacity. Never writes.

use crate::engine::{Decision, PlanCtx, Planner};
use crate::input::{RawInputs, Reader};
use crate::wire::time::Millis;
use crate::wire::{Failure, InputError, LockState, Outcome, ResultWord};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
}

impl StatusSettings {
    pub fn parse(raw: &RawInputs) -> Result<Self, InputError> {
        let (lock, repository, state_branch) = Reader::new(raw).lock_target()?;
        Ok(StatusSettings {
            lock,
            repository,
            state_branch,
        })
    }
}

pub struct StatusPlanner {
    pub s: StatusSettings,
}

impl StatusPlanner {
    fn outcome(&self, result: ResultWord) -> Outcome {
        Outcome::new(result, result == ResultWord::Status, &self.s.lock, "")
    }
}

impl Planner for StatusPlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        true
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        self.outcome(ResultWord::Failed).with_error(failure)
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        let mut o = self.outcome(ResultWord::Status);
        o.capacity = ctx.capacity();
        Decision::Finish(o)
    }
}
