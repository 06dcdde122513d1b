//! One holder and no queue: the rule of a document that is itself one mutex (a claim). Nobody
//! is ever admitted by it; a holder takes the document by compare-and-swap.

use super::Admission;
use crate::wire::time::Millis;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sole;

impl<D> Admission<D> for Sole {
    fn admit(&self, _doc: &mut D, _now: Millis, _max_ttl_ms: Millis) -> Vec<String> {
        Vec::new()
    }

    fn capacity(&self) -> u32 {
        1
    }
}
