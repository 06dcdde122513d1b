// A GitHub App authentication front for leasehold's emulator, which has no GitHub App routes,
// for measuring the org build lock beside leasehold (beside.mjs). The org build lock only
// authenticates as a GitHub App (BUILD_LOCK_APP_ID + BUILD_LOCK_APP_PRIVATE_KEY):
// it signs an RS256 JWT, then calls
//   GET  /repos/{owner}/{repo}/installation           (JWT)  -> { id }
//   POST /app/installations/{id}/access_tokens         (JWT)  -> { token, expires_at }
// and uses the installation token for everything else. This front answers those two routes the
// way GitHub does (it verifies the JWT's RS256 signature against the App's registered public
// key, `iss`, `iat`/`exp` and the 10-minute ceiling; it refuses anything else), and forwards
// every other request unchanged to the emulator, except that a token it minted is replaced by
// the installation's one token, so that the emulator's per-token rate limits act per
// installation as GitHub's do (an installation's tokens share one budget). A token it did not
// mint is answered 401 "Bad credentials".
import http from 'node:http';
import crypto from 'node:crypto';

export async function startAppAuth({ upstream, appId, publicKey, owner, repo, installationId = 4242 }) {
  const minted = new Map(); // token -> expiry ms
  const installationToken = `ghs_installation_${installationId}`;
  const log = []; // app-auth requests this front answered itself
  const send = (res, status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const verifyJwt = (auth) => {
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(auth ?? '');
    if (!m) return 'A JSON web token could not be decoded';
    const parts = m[1].split('.');
    if (parts.length !== 3) return 'A JSON web token could not be decoded';
    let header, payload;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
      payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return 'A JSON web token could not be decoded';
    }
    if (header.alg !== 'RS256') return 'A JSON web token could not be decoded';
    const ok = crypto.verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], 'base64url'));
    if (!ok) return 'A JSON web token could not be decoded';
    const now = Math.floor(Date.now() / 1000);
    if (String(payload.iss) !== String(appId)) return 'Integration not found';
    if (!(payload.iat <= now + 60)) return "'Issued at' claim ('iat') must be an Integer representing a time in the past.";
    if (!(payload.exp > now)) return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.";
    if (payload.exp - payload.iat > 600) return "'Expiration time' claim ('exp') is too far in the future";
    return null;
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url, 'http://front');
      const p = url.pathname;
      const inst = p === `/repos/${owner}/${repo}/installation` || p === `/orgs/${owner}/installation`;
      const tokens = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(p);
      if ((inst && req.method === 'GET') || (tokens && req.method === 'POST') || p.startsWith('/app/') || /\/installation$/.test(p)) {
        const entry = { method: req.method, path: p, status: 0 };
        log.push(entry);
        const problem = verifyJwt(req.headers.authorization);
        if (problem) return send(res, (entry.status = 401), { message: problem, documentation_url: 'https://docs.github.com/rest' });
        if (inst && req.method === 'GET') {
          return send(res, (entry.status = 200), { id: installationId, app_id: Number(appId), target_type: 'Organization', account: { login: owner }, repository_selection: 'selected' });
        }
        if (tokens && req.method === 'POST') {
          if (Number(tokens[1]) !== installationId) return send(res, (entry.status = 404), { message: 'Not Found' });
          const token = `ghs_${crypto.randomBytes(18).toString('hex')}`;
          const expiresAt = Date.now() + 3600_000;
          minted.set(token, expiresAt);
          let reqBody = {};
          try { reqBody = body.length ? JSON.parse(body) : {}; } catch {}
          return send(res, (entry.status = 201), { token, expires_at: new Date(expiresAt).toISOString(), permissions: reqBody.permissions ?? {}, repository_selection: 'selected' });
        }
        return send(res, (entry.status = 404), { message: 'Not Found' });
      }
      // Everything else: to the emulator, with the installation's token.
      const headers = { ...req.headers };
      const m = /^\s*(?:token|bearer)\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (m) {
        const exp = minted.get(m[1]);
        if (!exp || exp <= Date.now()) return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
        headers.authorization = `Bearer ${installationToken}`;
      }
      const u = new URL(upstream);
      headers.host = u.host;
      const fwd = http.request({ host: u.hostname, port: u.port, method: req.method, path: req.url, headers }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      fwd.on('error', () => { if (!res.headersSent) send(res, 502, { message: 'Server Error' }); else res.destroy(); });
      fwd.end(body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, log, close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections?.(); }) };
}
