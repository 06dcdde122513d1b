//! Test-input builders shared by the integration test crates, each of which pulls this file in
//! with `mod common;`. Every crate compiles its own copy and uses only some of the builders, so
//! the rest would be dead code there.
#![allow(dead_code)]

use leasehold_core::{Entropy, RawInputs};

/// The job `deploy` of `octo/app`'s run 77 (attempt 1) on the runner `r1`, on the lock `deploy`.
pub const DEPLOY_JOB: &[(&str, &str)] = &[
    ("lock", "deploy"),
    ("GITHUB_REPOSITORY", "octo/app"),
    ("GITHUB_RUN_ID", "77"),
    ("GITHUB_RUN_ATTEMPT", "1"),
    ("GITHUB_JOB", "deploy"),
    ("RUNNER_NAME", "r1"),
];

/// Raw inputs of `base`, then of `extra`: an `extra` name replaces the same name in `base`.
pub fn raw_inputs(base: &[(&str, &str)], extra: &[(&str, &str)]) -> RawInputs {
    let mut m: RawInputs = base
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in extra {
        m.insert(k.to_string(), v.to_string());
    }
    m
}

pub fn entropy(seed: u64, nonce: &str) -> Entropy {
    Entropy {
        seed,
        nonce: nonce.into(),
    }
}

/// An HTTP answer of `status` with no retry or rate-limit headers and no date: the model's.
#[allow(unused_imports)]
pub use leasehold_github_model::http;
