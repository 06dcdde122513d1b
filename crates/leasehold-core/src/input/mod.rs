//! Inputs arrive as the strings a workflow gives: action inputs by their kebab-case names and
//! the run context by its environment variable names. They are read here, once, by one reader
//! (one rule for booleans, one for integers, one for the lock's location, one for each kind of
//! id) before anything is sent; an error names the input and the rule.

mod credentials;
mod ids;
mod reader;

pub use crate::wire::credential_shape;
pub use credentials::refuse_credential;
pub use ids::{holder_id, validate_lock_name, validate_repository};
pub(crate) use reader::Reader;
pub use reader::{validate_entropy, Entropy, RawInputs};
