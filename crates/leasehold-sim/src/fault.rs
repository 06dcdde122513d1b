//! The faults the simulation injects, and the per-seed profile that chooses their rates.
//!
//! Every fault is drawn from the seed's [`SimRng`] at the step where it can happen, and only while
//! the simulated time is before [`Profile::until`] (the moment "faults stop", from which the
//! liveness invariant is measured).

use leasehold_core::time::Millis;

use crate::rng::SimRng;

/// One kind of injected fault. The names are stable: they are printed by the runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// A contents write was applied, then the answer was lost as a 502.
    LostAck502,
    /// A write (or any request) was processed, then the connection reset (`transport {sent:true}`).
    LostAckReset,
    /// 409 because an unrelated commit moved the branch ("is at X but expected Y"); not applied.
    Unrelated409,
    /// 500/502/503/504 before anything was applied.
    ServerError,
    /// The request never left (`transport {sent:false}`).
    NotSent,
    /// The request was processed but its answer arrived after the client's own time limit.
    SlowAnswer,
    /// The request reached GitHub only after the client had given up on it (a late write).
    LateArrival,
    /// 401 "Bad credentials" (token replication lag after minting, or an isolated one).
    Unauthorized,
    /// 403 secondary rate limit with `retry-after` (delta-seconds or an HTTP date).
    RateLimit403RetryAfter,
    /// 429 with `retry-after`.
    RateLimit429RetryAfter,
    /// 403 "secondary rate limit" without `retry-after`.
    RateLimit403NoRetryAfter,
    /// 429 without `retry-after`.
    RateLimit429NoRetryAfter,
    /// 403 primary limit: `x-ratelimit-remaining: 0`, `x-ratelimit-reset` on GitHub's clock.
    RateLimitPrimary,
    /// A read answered with an older version (or a 404 for a file created recently), within a
    /// bounded window.
    StaleRead,
    /// The job died after a write succeeded, before it wrote its outputs.
    CrashAfterWrite,
    /// The job died with a request in flight (the request still reaches GitHub).
    CrashInFlight,
    /// The job died while holding, between acquire and release.
    CrashInHold,
    /// The job's process was paused for longer than its lease.
    Pause,
    /// A paused job was declared lost by GitHub (its attempt completed in GitHub's view) and
    /// rerun while still alive (a zombie).
    Zombie,
    /// A rerun of the same run id with `GITHUB_RUN_ATTEMPT + 1`.
    Rerun,
    /// A client whose clock is offset and drifting.
    ClockSkew,
    /// The run is cancelled (SIGINT to the running step; the step is killed 10 s later).
    Cancel,
    /// A crashed job that nobody reruns: its holding (or queue entry) is left to expiry, or to
    /// the reaper. Only on locks whose config sets a lease or that a reaper watches (with the
    /// unconfigured 6-hour lease and no reaper it would block the lock past any bound).
    NoRerun,
    /// GitHub declares a runner lost while its job runs on (it lost contact with the Actions
    /// service, not with the API) and the job is rerun: the old attempt, a zombie, keeps working
    /// and renewing until a renewal proves its holding taken over.
    LostRunner,
    /// An Actions API question answered 403 "Resource not accessible by integration" (a token
    /// without `actions: read`).
    ActionsForbidden,
    /// An Actions API question answered 404 (a run the token cannot see).
    ActionsNotFound,
}

impl Fault {
    pub const ALL: [Fault; 26] = [
        Fault::LostAck502,
        Fault::LostAckReset,
        Fault::Unrelated409,
        Fault::ServerError,
        Fault::NotSent,
        Fault::SlowAnswer,
        Fault::LateArrival,
        Fault::Unauthorized,
        Fault::RateLimit403RetryAfter,
        Fault::RateLimit429RetryAfter,
        Fault::RateLimit403NoRetryAfter,
        Fault::RateLimit429NoRetryAfter,
        Fault::RateLimitPrimary,
        Fault::StaleRead,
        Fault::CrashAfterWrite,
        Fault::CrashInFlight,
        Fault::CrashInHold,
        Fault::Pause,
        Fault::Zombie,
        Fault::Rerun,
        Fault::ClockSkew,
        Fault::Cancel,
        Fault::NoRerun,
        Fault::LostRunner,
        Fault::ActionsForbidden,
        Fault::ActionsNotFound,
    ];
    pub const COUNT: usize = Fault::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Fault::LostAck502 => "write applied, answer lost (502)",
            Fault::LostAckReset => "answer lost (reset, sent:true)",
            Fault::Unrelated409 => "409 from an unrelated commit",
            Fault::ServerError => "5xx before applying",
            Fault::NotSent => "not sent (sent:false)",
            Fault::SlowAnswer => "answer after the client's time limit",
            Fault::LateArrival => "request arrived after the client gave up",
            Fault::Unauthorized => "401 bad credentials",
            Fault::RateLimit403RetryAfter => "403 with retry-after",
            Fault::RateLimit429RetryAfter => "429 with retry-after",
            Fault::RateLimit403NoRetryAfter => "403 secondary, no retry-after",
            Fault::RateLimit429NoRetryAfter => "429, no retry-after",
            Fault::RateLimitPrimary => "403 primary limit (remaining 0, reset)",
            Fault::StaleRead => "stale read (older version)",
            Fault::CrashAfterWrite => "crash after a successful write",
            Fault::CrashInFlight => "crash with a request in flight",
            Fault::CrashInHold => "crash between acquire and release",
            Fault::Pause => "pause longer than the lease",
            Fault::Zombie => "paused job declared lost while alive (zombie)",
            Fault::Rerun => "rerun (GITHUB_RUN_ATTEMPT + 1)",
            Fault::ClockSkew => "client clock offset and drift",
            Fault::Cancel => "run cancelled (SIGINT, kill after 10 s)",
            Fault::NoRerun => "crashed job never rerun (expiry or reaper)",
            Fault::LostRunner => "runner declared lost, rerun mid-work",
            Fault::ActionsForbidden => "Actions API 403 (not accessible)",
            Fault::ActionsNotFound => "Actions API 404 (run not visible)",
        }
    }
}

/// The faults a server can inject into one request, drawn together with one roll.
pub const REQUEST_FAULTS: [Fault; 12] = [
    Fault::LostAck502,
    Fault::LostAckReset,
    Fault::Unrelated409,
    Fault::ServerError,
    Fault::SlowAnswer,
    Fault::Unauthorized,
    Fault::RateLimit403RetryAfter,
    Fault::RateLimit429RetryAfter,
    Fault::RateLimit403NoRetryAfter,
    Fault::RateLimit429NoRetryAfter,
    Fault::RateLimitPrimary,
    Fault::StaleRead,
];

/// Faults stop at most this long into a seed. A pause lasts at least a lease (6 minutes), so
/// with this window no process meets a fault after it resumes from a pause.
pub const FAULTS_UNTIL_MS: Millis = 240_000;
/// With `--long-faults`: past the longest pause (16 minutes), so a resumed process, a zombie
/// included, meets stale reads, lost answers and the rest too.
pub const LONG_FAULTS_UNTIL_MS: Millis = 1_500_000;

/// How faulty one seed's world is.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Simulated time (ms since the simulation began) at which all faults stop.
    pub until: Millis,
    /// Per-request rate of each of [`REQUEST_FAULTS`], parts per million (summing to < 10^6).
    pub request_ppm: [u32; REQUEST_FAULTS.len()],
    pub not_sent_ppm: u32,
    pub late_arrival_ppm: u32,
    /// Whether a newly minted token answers 401 for its first few seconds.
    pub token_lag: bool,
    /// The oldest version a stale read may serve: one replaced at most this long ago.
    pub stale_window_ms: Millis,
    /// Per delivered event: the client's process pauses (for longer than its lease).
    pub pause_ppm: u32,
    /// Per pause: GitHub declares the job lost and it is rerun while the process is paused.
    pub zombie_ppm: u32,
    /// Per delivered write success: the job dies before writing its outputs.
    pub crash_after_write_ppm: u32,
    /// Per request sent: the job dies with it in flight.
    pub crash_in_flight_ppm: u32,
    /// Per acquired holding: the job dies during its hold.
    pub crash_in_hold_ppm: u32,
    /// Per job that ended cleanly: somebody reruns it anyway.
    pub rerun_ok_ppm: u32,
    /// Per job: the run is cancelled within its first two minutes.
    pub cancel_ppm: u32,
    /// Per crashed job, on a lock whose config sets a lease or that a reaper watches: nobody
    /// reruns it.
    pub no_rerun_ppm: u32,
    /// Per guarded work: GitHub declares its runner lost and reruns the job while it works.
    pub lost_runner_ppm: u32,
    /// Per Actions API question: refused (403 "Resource not accessible by integration", or 404
    /// for a run the token cannot see), beside the faults every request meets.
    pub actions_refusal_ppm: u32,
    /// Clients get clock offsets of up to this many ms either way (0: exact clocks)…
    pub max_offset_ms: u64,
    /// …and drift of up to this many parts per million either way.
    pub max_drift_ppm: u64,
}

impl Profile {
    pub fn quiet() -> Self {
        Profile {
            until: 0,
            request_ppm: [0; REQUEST_FAULTS.len()],
            not_sent_ppm: 0,
            late_arrival_ppm: 0,
            token_lag: false,
            stale_window_ms: 0,
            pause_ppm: 0,
            zombie_ppm: 0,
            crash_after_write_ppm: 0,
            crash_in_flight_ppm: 0,
            crash_in_hold_ppm: 0,
            rerun_ok_ppm: 0,
            cancel_ppm: 0,
            no_rerun_ppm: 0,
            lost_runner_ppm: 0,
            actions_refusal_ppm: 0,
            max_offset_ms: 0,
            max_drift_ppm: 0,
        }
    }

    /// One seed's profile: about one seed in eight is fault-free (pure contention); the others
    /// switch each fault on with probability one half, at a rate of its own. Faults stop within
    /// [`FAULTS_UNTIL_MS`], or [`LONG_FAULTS_UNTIL_MS`] with `long` (the same draws otherwise).
    pub fn draw(rng: &mut SimRng, long: bool) -> Self {
        let mut p = Profile::quiet();
        if rng.below(8) == 0 {
            return p;
        }
        p.until = rng.between(
            10_000,
            if long {
                LONG_FAULTS_UNTIL_MS
            } else {
                FAULTS_UNTIL_MS
            },
        );
        let on = |rng: &mut SimRng, lo: u64, hi: u64| {
            if rng.below(2) == 0 {
                rng.between(lo, hi) as u32
            } else {
                0
            }
        };
        for (i, fault) in REQUEST_FAULTS.iter().enumerate() {
            p.request_ppm[i] = match fault {
                Fault::StaleRead => on(rng, 50_000, 300_000),
                Fault::LostAck502
                | Fault::LostAckReset
                | Fault::ServerError
                | Fault::Unrelated409 => on(rng, 5_000, 80_000),
                _ => on(rng, 2_000, 30_000),
            };
        }
        p.not_sent_ppm = on(rng, 2_000, 30_000);
        p.late_arrival_ppm = on(rng, 2_000, 30_000);
        p.token_lag = rng.below(2) == 0;
        p.stale_window_ms = rng.between(2_000, 30_000);
        p.pause_ppm = on(rng, 1_000, 10_000);
        p.zombie_ppm = on(rng, 200_000, 800_000);
        p.crash_after_write_ppm = on(rng, 5_000, 60_000);
        p.crash_in_flight_ppm = on(rng, 1_000, 10_000);
        p.crash_in_hold_ppm = on(rng, 20_000, 200_000);
        p.rerun_ok_ppm = on(rng, 20_000, 200_000);
        p.cancel_ppm = on(rng, 20_000, 200_000);
        if rng.below(2) == 0 {
            p.max_offset_ms = rng.between(1, 5) * 60_000;
            p.max_drift_ppm = rng.between(0, 2_000);
        }
        p.no_rerun_ppm = on(rng, 200_000, 800_000);
        p.lost_runner_ppm = on(rng, 20_000, 100_000);
        p.actions_refusal_ppm = on(rng, 20_000, 200_000);
        p
    }
}
