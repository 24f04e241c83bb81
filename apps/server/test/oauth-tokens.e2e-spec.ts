/**
 * The authorization server's metadata, client credentials, refresh tokens, revocation and
 * introspection, storage, clients' tokens and CORS, driven with openid-client; the code flow
 * through the login and consent pages is oauth.e2e-spec's.
 */
import { discover, oidc } from './support/oauth';
import { expectStatus } from './support/api';
import { rawCall } from './support/server';
import {
  api,
  codeFlow,
  config,
  confidential,
  oauthError,
  orgId,
  otherOrgId,
  publicClient,
  server,
  setUpNorthside,
} from './support/northside';

setUpNorthside();

describe('metadata (RFC 8414)', () => {
  it('publishes the endpoints, PKCE S256 only, the code flow only, and our scopes', async () => {
    // OAuth metadata is outside the contract: called raw.
    const res = await rawCall(server, '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      introspection_endpoint: `${server.url}/oauth/introspect`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
    });
    const metadata = res.body as Record<string, string[]>;
    expect(metadata.grant_types_supported?.sort()).toEqual(
      ['authorization_code', 'client_credentials', 'refresh_token'].sort(),
    );
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(['students:read', 'tokens:write']),
    );
    expect(metadata.token_endpoint_auth_methods_supported).not.toContain('client_secret_jwt');
    expect(res.body).not.toHaveProperty('userinfo_endpoint');
    // Not offered: sender-constrained tokens the API would not check, and PAR.
    expect(res.body).not.toHaveProperty('dpop_signing_alg_values_supported');
    expect(res.body).not.toHaveProperty('pushed_authorization_request_endpoint');
  });

  it("names its endpoints on the issuer's origin, whatever Host the request used", async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`, {
      headers: { host: 'evil.example' },
    });
    const body = (await res.json()) as Record<string, string>;
    expect(body.token_endpoint).toBe(`${server.url}/oauth/token`);
    expect(body.authorization_endpoint).toBe(`${server.url}/oauth/authorize`);
  });

  it('is not an OpenID Provider: no openid-configuration', async () => {
    expect((await rawCall(server, '/.well-known/openid-configuration')).status).toBe(404);
  });
});

describe('client credentials', () => {
  it('issues a 1-hour token for the organization that the API accepts, with only its scopes', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeUndefined();
    const info = expectStatus(await api(tokens.access_token).token.retrieve(), 200);
    expect(info.body).toMatchObject({
      type: 'oauth_access_token',
      organization_id: orgId,
      scopes: ['students:read'],
      client_id: confidential.id,
      user_id: null,
      personal_access_token_id: null,
    });
    expect(info.body.expires_at).not.toBeNull();
    const expiresIn = Date.parse(info.body.expires_at!) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
    const denied = await api(tokens.access_token).courses.list();
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  it('refuses scopes the client is not allowed', async () => {
    expect(await oauthError(oidc.clientCredentialsGrant(config, { scope: 'payments:write' }))).toBe(
      'invalid_scope',
    );
  });

  it('refuses a wrong client secret', async () => {
    const wrong = await discover(server, confidential.id, 'ocs_not-the-secret');
    expect(await oauthError(oidc.clientCredentialsGrant(wrong, { scope: 'students:read' }))).toBe(
      'invalid_client',
    );
  });

  it('is not offered to a public client', async () => {
    const pub = await discover(server, publicClient.id);
    expect(await oauthError(oidc.clientCredentialsGrant(pub, { scope: 'students:read' }))).toMatch(
      /unauthorized_client|invalid_request/,
    );
  });
});

describe('refresh tokens', () => {
  it('rotate on every use, and a reused one revokes the whole chain', async () => {
    const { tokens } = await codeFlow();
    const second = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(second.access_token).students.list()).status).toBe(200);

    // The first refresh token again: someone holds a copy. Everything from this grant dies.
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_grant',
    );
    expect(await oauthError(oidc.refreshTokenGrant(config, second.refresh_token!))).toBe(
      'invalid_grant',
    );
    expect((await api(second.access_token).students.list()).status).toBe(401);
    expect((await api(tokens.access_token).students.list()).status).toBe(401);
  });

  it('used twice at the same moment, only one use succeeds', async () => {
    const { tokens } = await codeFlow();
    const results = await Promise.allSettled([
      oidc.refreshTokenGrant(config, tokens.refresh_token!),
      oidc.refreshTokenGrant(config, tokens.refresh_token!),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeLessThanOrEqual(1);
  });

  it('keep the scopes of the grant', async () => {
    const { tokens } = await codeFlow(config, { scope: 'students:read' });
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const info = expectStatus(await api(next.access_token).token.retrieve(), 200);
    expect(info.body.scopes).toEqual(['students:read']);
  });
});

describe('revocation (RFC 7009) and introspection (RFC 7662)', () => {
  it('a revoked access token is refused on the next request', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
    await oidc.tokenRevocation(config, tokens.access_token);
    const res = await api(tokens.access_token).students.list();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('revoking a refresh token ends it', async () => {
    const { tokens } = await codeFlow();
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_grant',
    );
  });

  it("revoking a user's access token also ends its refresh token (the whole grant)", async () => {
    const { tokens } = await codeFlow();
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await api(tokens.access_token).students.list()).status).toBe(401);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_grant',
    );
  });

  it('introspection describes a live token and reports revoked ones inactive', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const live = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(live).toMatchObject({
      active: true,
      client_id: confidential.id,
      scope: 'students:read',
      token_type: 'Bearer',
    });
    expect(live.exp! - Math.floor(Date.now() / 1000)).toBeGreaterThan(3500);
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('tells a public client nothing, even about a live token', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const pub = await discover(server, publicClient.id);
    const answer = await oidc.tokenIntrospection(pub, tokens.access_token);
    expect(answer).toEqual({ active: false });
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
  });
});

describe('storage', () => {
  it('keeps no usable token, code or session id in the database', async () => {
    const { tokens, result } = await codeFlow();
    const cc = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const rows: { payload: string; id_hash: string }[] = await server.dataSource.query(
      'SELECT payload, id_hash FROM oauth_artifacts',
    );
    expect(rows.length).toBeGreaterThan(5);
    const dump = JSON.stringify(rows);
    for (const secret of [
      tokens.access_token,
      tokens.refresh_token!,
      cc.access_token,
      result.callback.searchParams.get('code')!,
    ]) {
      expect(dump).not.toContain(secret);
    }
    for (const row of rows) expect(JSON.parse(row.payload)).not.toHaveProperty('jti');
    // The tokens still work: they are found by their hash.
    expect((await api(cc.access_token).students.list()).status).toBe(200);
  });
});

describe('OAuth clients and the tokens issued to them', () => {
  it('deleting a client refuses its tokens at once', async () => {
    const client = await server.createOAuthClient(orgId, {
      type: 'confidential',
      grant_types: ['client_credentials'],
    });
    const cfg = await discover(server, client.id, client.client_secret);
    const tokens = await oidc.clientCredentialsGrant(cfg, { scope: 'students:read' });
    // The client holds every scope, so deleting it takes a token that does too (delegation).
    const admin = await server.createToken(orgId, ['all']);
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
    const deleted = await api(admin.token).oauthClients.delete({ params: { id: client.id } });
    expect(deleted.status).toBe(200);
    expect((await api(tokens.access_token).students.list()).status).toBe(401);
  });

  it('a token is for its own organization only', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const [student] = await server.insertStudents(otherOrgId, 1);
    expect(
      (await api(tokens.access_token).students.retrieve({ params: { id: student!.id } })).status,
    ).toBe(404);
  });
});

// docs/security.md promises no CORS anywhere; oidc-provider answered preflights with
// Access-Control-Allow-Origin echoing any origin.
describe('no CORS, as on the API', () => {
  const corsHeaders = (res: Response) =>
    [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));
  const origin = 'https://app.example';

  it.each(['/oauth/token', '/oauth/revoke', '/oauth/introspect'])(
    'a preflight to %s gets no Access-Control-* header',
    async (path) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type',
        },
      });
      expect(res.status).toBe(204);
      expect(corsHeaders(res)).toEqual([]);
    },
  );

  it.each([
    ['/oauth/token', 'grant_type=client_credentials&scope=students%3Aread'],
    ['/oauth/revoke', 'token=anything'],
    ['/oauth/introspect', 'token=anything'],
  ])(
    'a request to %s from a browser origin gets none either, and is refused',
    async (path, body) => {
      const basic = Buffer.from(`${confidential.id}:${confidential.client_secret}`).toString(
        'base64',
      );
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: {
          Origin: origin,
          Authorization: `Basic ${basic}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body,
      });
      expect(corsHeaders(res)).toEqual([]);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_request' });
    },
  );

  it('the metadata gets none', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`, {
      headers: { Origin: origin },
    });
    expect(res.status).toBe(200);
    expect(corsHeaders(res)).toEqual([]);
  });
});
