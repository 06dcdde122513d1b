// The emulator's shared constants: the all-zero and well-formed object names, the GitHub
// documentation page each error body links to, the identity commits get when a request names
// none, and the messages of injected error statuses.

export const ZERO_SHA = '0'.repeat(40);
export const SHA_RE = /^[0-9a-f]{40}$/;

export const DOCS = {
  root: 'https://docs.github.com/rest',
  repo: 'https://docs.github.com/rest/repos/repos#get-a-repository',
  getContent: 'https://docs.github.com/rest/repos/contents#get-repository-content',
  putContent: 'https://docs.github.com/rest/repos/contents#create-or-update-file-contents',
  deleteContent: 'https://docs.github.com/rest/repos/contents#delete-a-file',
  getRef: 'https://docs.github.com/rest/git/refs#get-a-reference',
  matchingRefs: 'https://docs.github.com/rest/git/refs#list-matching-references',
  createRef: 'https://docs.github.com/rest/git/refs#create-a-reference',
  updateRef: 'https://docs.github.com/rest/git/refs#update-a-reference',
  deleteRef: 'https://docs.github.com/rest/git/refs#delete-a-reference',
  createTree: 'https://docs.github.com/rest/git/trees#create-a-tree',
  createCommit: 'https://docs.github.com/rest/git/commits#create-a-commit',
  getCommit: 'https://docs.github.com/rest/git/commits#get-a-commit-object',
  getRun: 'https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run',
  getRunAttempt: 'https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run-attempt',
  listJobsForAttempt: 'https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run-attempt',
  getJob: 'https://docs.github.com/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run',
  listWorkflowRuns: 'https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow',
  getAuthenticatedUser: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
  getUser: 'https://docs.github.com/rest/users/users#get-a-user',
  listIssues: 'https://docs.github.com/rest/issues/issues#list-repository-issues',
  createIssue: 'https://docs.github.com/rest/issues/issues#create-an-issue',
  getIssue: 'https://docs.github.com/rest/issues/issues#get-an-issue',
  updateIssue: 'https://docs.github.com/rest/issues/issues#update-an-issue',
  listComments: 'https://docs.github.com/rest/issues/comments#list-issue-comments',
  createComment: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
  updateComment: 'https://docs.github.com/rest/issues/comments#update-an-issue-comment',
  getPull: 'https://docs.github.com/rest/pulls/pulls#get-a-pull-request',
  rateLimit: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
  timeouts: 'https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api#timeouts',
  secondary:
    'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
};

// Identity used for commits when the PUT body names no committer. On GitHub the default is
// the authenticated user; inside Actions with GITHUB_TOKEN that is this bot.
export const DEFAULT_IDENTITY = {
  name: 'github-actions[bot]',
  email: '41898282+github-actions[bot]@users.noreply.github.com',
};

// Default messages for injected error statuses (faults.add({ action: { status } })).
export const DEFAULT_FAULT_MESSAGES = {
  400: 'Problems parsing JSON',
  401: 'Bad credentials',
  403:
    'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
    'If you reach out to GitHub Support for help, please include the request ID {id}.',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Validation Failed',
  429:
    'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
    'If you reach out to GitHub Support for help, please include the request ID {id}.',
  500: 'Server Error',
  502: 'Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
