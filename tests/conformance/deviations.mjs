// THE one list of every way the emulator's answers may differ from GitHub's OpenAPI
// description of api.github.com (npm @octokit/openapi). The conformance validator
// (./validate.mjs) lets through exactly these and nothing else.
//
// Three kinds:
// - "documented elsewhere": GitHub documents the behaviour, but in its REST guides rather
//   than in the operation's description (answers any endpoint can give: bad JSON, bad
//   credentials, rate limits, unknown routes, server errors and time-outs).
// - "description defect": the description cannot be met by any answer GitHub sends.
// - "observed": GitHub's live behaviour differs from its description; the emulator follows
//   the behaviour (see docs/github-semantics.md, the GitHub behaviour leasehold's design
//   depends on; a `source` cites its sections as docs/github-semantics.md#<anchor>).
//
// FIXTURE_DIFFERENCES, at the end, lists where the emulator's answers differ from GitHub's
// recorded ones (npm @octokit/fixtures), with the reason.
//
// Each entry: id, kind, relaxes (the validator rules it lets through), applies(exchange,
// problem) (exactly when), schema (what the answer must then match instead, if anything),
// what, source.

const msg = (ex) => String(ex.responseBody?.message ?? '');
const BASIC_ERROR = { $ref: 'gh#/components/schemas/basic-error' };
const GIT_REF = { $ref: 'gh#/components/schemas/git-ref' };
const REPO = /^\/repos\/[^/]+\/[^/]+/;
/** The value at a JSON pointer ("/jobs/0/conclusion") in a body, or undefined. */
const at = (body, pointer) =>
  pointer.split('/').slice(1).reduce((v, k) => (v == null ? undefined : v[k.replace(/~1/g, '/').replace(/~0/g, '~')]), body);

export const DEVIATIONS = [
  // ---- documented elsewhere ---------------------------------------------------------------
  {
    id: 'any-400-problems-parsing-json',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) => ex.status === 400 && msg(ex) === 'Problems parsing JSON',
    schema: BASIC_ERROR,
    what: 'A body that is not a JSON object is answered 400 "Problems parsing JSON", on any endpoint.',
    source: 'GitHub REST docs, "Troubleshooting the REST API" (client errors: invalid JSON gives 400 Bad Request)',
  },
  {
    id: 'any-401-credentials',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) => ex.status === 401 && ['Requires authentication', 'Bad credentials'].includes(msg(ex)),
    schema: BASIC_ERROR,
    what: 'A request without a token, or with a bad one, is answered 401 on any endpoint.',
    source: 'GitHub REST docs, "Authenticating to the REST API" (401 Requires authentication / Bad credentials); docs/github-semantics.md#token-401-grace (401 just after a token is minted)',
  },
  {
    id: 'any-403-429-rate-limited',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) =>
      ex.status === 429 ||
      (ex.status === 403 && (/rate limit/i.test(msg(ex)) || ex.responseHeaders?.['retry-after'] !== undefined || ex.responseHeaders?.['x-ratelimit-remaining'] === '0')),
    schema: BASIC_ERROR,
    what: 'Primary and secondary rate limits answer 403 or 429 on any endpoint, with retry-after and/or x-ratelimit-remaining 0 + x-ratelimit-reset (checked by rule rate-limit-signal).',
    source: 'GitHub REST docs, "Rate limits for the REST API" and "Troubleshooting the REST API"; docs/github-semantics.md#rate-limit-signals',
  },
  {
    id: 'any-403-forbidden',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) => ex.status === 403 && /not accessible by|permission|must have admin rights|forbidden/i.test(msg(ex)),
    schema: BASIC_ERROR,
    what: 'A token without the permission an endpoint needs is answered 403 (e.g. "Resource not accessible by integration" for a GITHUB_TOKEN without contents: write), on any endpoint.',
    source: 'GitHub REST docs, "Troubleshooting the REST API" (403 Resource not accessible by integration / insufficient permissions)',
  },
  {
    id: 'any-404-not-found',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) => ex.status === 404,
    schema: BASIC_ERROR,
    what: 'A repository (or branch, object) that does not exist or is not visible is answered 404 on any endpoint, also where the operation lists no 404.',
    source: 'GitHub REST docs, "Troubleshooting the REST API" (404 Not Found for a resource that does not exist or that the token cannot see)',
  },
  {
    id: 'unknown-route-404',
    kind: 'documented elsewhere',
    relaxes: ['operation'],
    applies: (ex) => ex.status === 404 || ex.status === 401,
    schema: BASIC_ERROR,
    what: 'A method and path that name no operation are answered 404 Not Found (401 first when unauthenticated). Only refusals: an undocumented route never succeeds.',
    source: 'GitHub REST docs, "Troubleshooting the REST API" (404 Not Found)',
  },
  {
    id: 'any-5xx-server-error',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) => ex.status >= 500 && ex.status <= 504,
    schema: BASIC_ERROR,
    what: 'Any endpoint may answer 500/502/503/504 "Server Error"; a request running over the time limit (10 s on GitHub) is killed with one, and a write\'s outcome is then unknown.',
    source: 'GitHub REST docs, "Troubleshooting the REST API" (timeouts: "Server Error"); docs/github-semantics.md#request-time-limit',
  },
  {
    id: 'any-get-304-not-modified',
    kind: 'documented elsewhere',
    relaxes: ['status'],
    applies: (ex) => ex.method === 'GET' && ex.status === 304 && ex.requestHeaders?.['if-none-match'] !== undefined,
    what: 'A GET with If-None-Match naming the current ETag is answered 304 Not Modified (no body, no cost against the primary rate limit), also where the operation lists only 200 (workflow runs and jobs, for one).',
    source: 'GitHub REST docs, "Best practices for using the REST API" (use conditional requests: most endpoints return an etag; a 304 does not count against the primary rate limit); docs/github-semantics.md#conditional-reads',
  },
  {
    id: 'contents-raw-media-type',
    kind: 'documented elsewhere',
    relaxes: ['content-type'],
    applies: (ex) =>
      ex.method === 'GET' &&
      /\/contents(\/|$)/.test(ex.path) &&
      /application\/vnd\.github(\.v3)?\.raw/.test(String(ex.requestHeaders?.accept ?? '')) &&
      /^application\/vnd\.github(\.v3)?\.raw/.test(String(ex.responseHeaders?.['content-type'] ?? '')),
    what: 'GET contents with Accept: application/vnd.github.raw(+json) answers the raw bytes of the file; the description lists the custom media types in the operation\'s text, not in its responses.',
    source: 'api.github.com description, repos/get-content: "This endpoint supports the following custom media types… application/vnd.github.raw+json: Returns the raw file contents"',
  },

  // ---- defects of the description itself -----------------------------------------------
  {
    id: 'description-ambiguous-oneof',
    kind: 'description defect',
    relaxes: ['response-body'],
    applies: (ex, p) => p.keyword === 'oneOf' && Array.isArray(p.params?.passingSchemas) && p.params.passingSchemas.length > 1,
    what: 'Some answers are described as oneOf [basic-error, repository-rule-violation-error] (e.g. 409 on contents writes); neither requires a field the other lacks, so every error body GitHub sends matches both and fails "exactly one". Matching more than one branch is accepted; matching none is not.',
    source: 'api.github.com description, repos/create-or-update-file-contents responses.409 (and others using the same pair)',
  },

  {
    id: 'job-conclusion-null-not-in-enum',
    kind: 'description defect',
    relaxes: ['response-body'],
    applies: (ex, p) =>
      p.keyword === 'enum' &&
      /^(\/jobs\/\d+)?\/conclusion$/.test(p.field) &&
      at(ex.responseBody, p.field) === null &&
      new RegExp(`${REPO.source}/actions/(jobs/[^/]+|runs/[^/]+/(attempts/[^/]+/)?jobs)/?$`).test(ex.path),
    what: 'A job that has not finished has conclusion null. The job schema says `nullable: true` but its `enum` leaves null out, and under OpenAPI 3.0.3 `nullable` does not add null to an enum, so no unfinished job GitHub sends matches it. The same description lists null in the enum of the workflow_job webhook payloads (in_progress, queued, waiting).',
    source: 'api.github.com description, components.schemas.job.properties.conclusion (vs webhook-workflow-job-in-progress .workflow_job.conclusion); OAI/OpenAPI-Specification#1900 (nullable and enum, OAS 3.0.3)',
  },

  // ---- observed ---------------------------------------------------------------------------
  {
    id: 'contents-put-missing-file-ignores-sha',
    kind: 'observed',
    relaxes: ['sha-names-existing-file'],
    applies: (ex) => ex.method === 'PUT' && ex.status === 201,
    what: 'PUT contents for a file that does not exist creates it (201) whatever `sha` says: the sha is ignored, so a deleted state file loses the compare-and-swap.',
    source: 'docs/github-semantics.md#writes-with-a-sha (doc + observed)',
  },
  {
    id: 'contents-write-branch-race-409',
    kind: 'observed',
    relaxes: ['conflict-is-about-the-file'],
    applies: (ex) => ex.status === 409 && /^is at [0-9a-f]{40} but expected [0-9a-f]{40}$/.test(msg(ex)),
    what: 'A contents write whose sha was right still gets 409 "is at X but expected Y" when another write moved the branch (even one to a different file): each write is a commit plus a ref update.',
    source: 'docs/github-semantics.md#many-files-on-one-branch (doc + observed)',
  },
  {
    id: 'contents-stale-read',
    kind: 'observed',
    relaxes: ['read-is-current'],
    applies: (ex) => ex.method === 'GET' && /staleRead/.test(ex.fault ?? ''),
    what: 'GET contents after a write can return the previous version (or 404 for a file just created) for 10 s or more; answers carry cache-control max-age=60.',
    source: 'docs/github-semantics.md#stale-reads (observed)',
  },
  {
    id: 'legacy-get-git-refs-ref',
    kind: 'observed',
    relaxes: ['operation'],
    operation: 'legacy GET /repos/{owner}/{repo}/git/refs/{ref}',
    applies: (ex) => ex.method === 'GET' && new RegExp(`${REPO.source}/git/refs/.+`).test(ex.path),
    schema: { anyOf: [GIT_REF, { type: 'array', items: GIT_REF }, BASIC_ERROR] },
    what: 'The pre-2020 GET /git/refs/{ref} still answers: the ref, or, with no exact match, an ARRAY of the refs starting with it (why GitHub added GET /git/ref/{ref}). leasehold never uses it.',
    source: 'GitHub changelog 2020-03 (git refs API: new /git/ref and /git/matching-refs, old form kept for compatibility); observed by octokit and go-github users',
  },
  {
    id: 'matching-refs-link-page',
    kind: 'observed',
    relaxes: ['query-param'],
    applies: (ex, p) => ex.method === 'GET' && new RegExp(`${REPO.source}/git/matching-refs/`).test(ex.path) && p.field === 'page',
    what: 'The description gives GET /git/matching-refs/{ref} a Link header but documents no query parameter; the next page a Link header names is "?page=N" (GitHub\'s REST pagination), which the slot listing follows. GitHub has been seen to answer with every ref at once (ignoring per_page); the emulator pages only when told to (matchingRefsPageSize).',
    source: 'docs/github-semantics.md#git-refs; github/docs issue 3863 and go-github issue 1567 (per_page ignored on matching-refs)',
  },
  {
    id: 'legacy-get-git-refs',
    kind: 'observed',
    relaxes: ['operation'],
    operation: 'legacy GET /repos/{owner}/{repo}/git/refs',
    applies: (ex) => ex.method === 'GET' && new RegExp(`${REPO.source}/git/refs/?$`).test(ex.path),
    schema: { anyOf: [{ type: 'array', items: GIT_REF }, BASIC_ERROR] },
    what: 'GET /git/refs (every ref) still answers as GET /git/matching-refs/ does. leasehold never uses it.',
    source: 'GitHub changelog 2020-03 (old git refs listing kept for compatibility)',
  },
];

/** Deviations by id, for tests and reports. */
export const DEVIATION_IDS = new Set(DEVIATIONS.map((d) => d.id));

// Differences between the emulator's answers and GitHub's answers as recorded by octokit
// (npm @octokit/fixtures; compared by tests/conformance-fixtures.test.mjs). at: a RegExp on
// the place ("/json/pointer" in the body, or "header name"); kinds: missing | extra | type | value.
export const FIXTURE_DIFFERENCES = [
  {
    id: 'error-body-status',
    scenarios: ['errors', 'branch-protection'],
    at: /^\/status$/,
    kinds: ['extra'],
    why: 'Error bodies now carry "status" (a string) next to message and documentation_url; the recordings (2017-2022) predate it. The current description has it (basic-error.status).',
  },
  {
    id: 'commit-verification-verified-at',
    scenarios: ['create-file'],
    at: /^\/commit\/verification\/verified_at$/,
    kinds: ['extra'],
    why: 'verification.verified_at was added after the recording (2022); the current description has it (file-commit.commit.verification.verified_at).',
  },
  {
    id: 'repository-newer-fields',
    scenarios: ['get-repository'],
    at: /^\/(has_discussions|owner\/user_view_type)$/,
    kinds: ['extra'],
    why: 'has_discussions and owner.user_view_type were added after the recording (2017-2022); the current description has both (has_discussions is required).',
  },
  {
    id: 'repository-organization',
    scenarios: ['get-repository'],
    at: /^\/organization$/,
    kinds: ['missing'],
    why: 'The recorded repository belongs to an organization; the emulator\'s belong to users, and GitHub sends "organization" only for organization-owned repositories (not required by the description).',
  },
];
