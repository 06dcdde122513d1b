// Who a token acts as: the identities tests give tokens, and the routes that report them
// (GET /user, GET /users/{username}). Comments cite GitHub's behaviour as
// docs/github-semantics.md#<anchor>.
//
// docs/github-semantics.md#token-identity: a user's token (a personal access token) reads its
// own account with GET /user. An installation token (GITHUB_TOKEN is one, of the GitHub Actions
// App) is refused there with 403 "Resource not accessible by integration"; what it writes
// (issues, comments) is authored by the App's bot account, `<slug>[bot]` of type "Bot", with
// `performed_via_github_app` naming the App.

import { DOCS } from './constants.mjs';
import { isoSeconds, newId, nodeId } from './helpers.mjs';
import { fail, reply, safeDecode } from './http.mjs';
import { userBody } from './repository.mjs';

/** The identity of a token no test named: the job token, GITHUB_TOKEN. */
export const JOB_TOKEN_IDENTITY = Object.freeze({ login: 'github-actions[bot]', type: 'Bot', app: 'github-actions' });

/** The identities of the emulator's tokens, and the accounts they stand for. */
export class Identities {
  constructor(emu) {
    this.emu = emu;
    this.byToken = new Map(); // token -> { login, type, app }
    this.ids = new Map(); // login -> numeric id
    this.apps = new Map(); // slug -> App body fields
  }

  /** A token acts as `login`: type "User" (a user's token) or "Bot" (an App's installation
   *  token: `app` is its slug, and GET /user refuses it). */
  set(token, { login, type = 'User', app = null } = {}) {
    if (typeof token !== 'string' || !token) throw new TypeError('a token is a non-empty string');
    if (typeof login !== 'string' || !login) throw new TypeError('an identity needs a login');
    if (type !== 'User' && type !== 'Bot') throw new TypeError(`type is "User" or "Bot", not ${type}`);
    if ((type === 'Bot') !== Boolean(app)) throw new TypeError('a Bot identity is an App installation: give its app slug (and only then)');
    if (type === 'Bot' && login !== `${app}[bot]`) throw new TypeError(`an App's bot is "<slug>[bot]": ${app}[bot], not ${login}`);
    this.byToken.set(token, Object.freeze({ login, type, app }));
  }

  of(token) {
    return this.byToken.get(token) ?? JOB_TOKEN_IDENTITY;
  }

  idOf(login) {
    if (!this.ids.has(login)) this.ids.set(login, login === 'github-actions[bot]' ? 41898282 : newId());
    return this.ids.get(login);
  }

  /** simple-user of an identity. */
  user(identity) {
    return userBody(this.emu.url, identity.login, this.idOf(identity.login), identity.type);
  }

  /** The App (integration) an identity's writes are performed via, or null for a user. */
  app(identity) {
    if (!identity.app) return null;
    const slug = identity.app;
    const api = this.emu.url;
    const at = isoSeconds(0);
    const owner = userBody(api, slug === 'github-actions' ? 'github' : `${slug}-owner`, this.idOf(`${slug}-owner`), 'User');
    return {
      id: this.idOf(`app:${slug}`),
      slug,
      node_id: nodeId('A', slug),
      client_id: `Iv1.${nodeId('C', slug).slice(-16)}`,
      owner,
      name: slug === 'github-actions' ? 'GitHub Actions' : slug,
      description: '',
      external_url: `${api}/apps/${slug}`,
      html_url: `${api}/apps/${slug}`,
      created_at: at,
      updated_at: at,
      permissions: { issues: 'write', pull_requests: 'write', contents: 'write', metadata: 'read', actions: 'read' },
      events: [],
    };
  }

  /** public-user: GET /users/{username} and GET /user. */
  publicUser(identity) {
    const at = isoSeconds(0);
    return {
      ...this.user(identity),
      name: identity.type === 'Bot' ? null : identity.login,
      company: null,
      blog: '',
      location: null,
      email: null,
      hireable: null,
      bio: null,
      public_repos: 0,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: at,
      updated_at: at,
    };
  }

  /** The identity scripting API tests get (emulator.identities). */
  handle() {
    return (this._handle ??= Object.freeze({
      set: (token, identity) => this.set(token, identity),
      of: (token) => this.of(token),
    }));
  }
}

/** GET /user and GET /users/{username}: a reply, or undefined for any other path. */
export function usersRoute(ctx, emu) {
  const p = ctx.url.pathname;
  if (p === '/user' || p === '/user/') {
    if (ctx.method !== 'GET') return fail(404, 'Not Found', DOCS.root);
    const me = emu.identities.of(ctx.token);
    // docs/github-semantics.md#token-identity: an installation token has no account of its own.
    if (me.type === 'Bot') return fail(403, 'Resource not accessible by integration', DOCS.getAuthenticatedUser);
    return reply(200, emu.identities.publicUser(me));
  }
  const m = /^\/users\/([^/]+)\/?$/.exec(p);
  if (!m) return undefined;
  if (ctx.method !== 'GET') return fail(404, 'Not Found', DOCS.root);
  const login = safeDecode(m[1]);
  const known = [JOB_TOKEN_IDENTITY, ...emu.identities.byToken.values()].find((i) => i.login.toLowerCase() === login?.toLowerCase());
  if (!known) return fail(404, 'Not Found', DOCS.getUser);
  return reply(200, emu.identities.publicUser(known));
}
