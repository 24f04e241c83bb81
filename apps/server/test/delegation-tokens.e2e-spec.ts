/**
 * Delegation (api.md), continued from delegation.e2e-spec: revoking or making a token over the
 * API stays within the calling token, only the Authorization header carries a token, and
 * events:write is not a scope.
 */
import { PersonalAccessToken } from '../src/auth/personal-access-token.entity';
import { OAuthClientRecord } from '../src/oauth/entities';
import { expectStatus, typedClient } from './support/api';
import { waitFor } from './support/receiver';
import { problemOf, rawCall, rawClient } from './support/server';
import {
  admin,
  adminToken,
  clientCredentials,
  clock,
  confidentialClient,
  expectForbidden,
  lines,
  orgId,
  server,
  setUpDelegation,
  withToken,
} from './support/delegation-org';

setUpDelegation();

describe('4. revoking a token needs its scopes', () => {
  it('refuses tokens:write alone revoking a wider token, which keeps working', async () => {
    const wide = await server.createToken(orgId, ['students:read', 'tokens:write']);
    const narrow = await withToken(['tokens:write']);
    expectForbidden(
      await narrow.personalAccessTokens.delete({ params: { id: wide.id } }),
      /revoke a token .*lacks: students:read/,
    );
    expect((await typedClient(server, wide.token).students.list()).status).toBe(200);
    const kept = await admin.personalAccessTokens.retrieve({ params: { id: wide.id } });
    expect(expectStatus(kept, 200).body.revoked_at).toBeNull();

    const peer = await server.createToken(orgId, ['tokens:write']);
    const revoked = await narrow.personalAccessTokens.delete({ params: { id: peer.id } });
    expect(revoked.status).toBe(200);
    expect((await typedClient(server, peer.token).token.retrieve()).status).toBe(401);
  });
});

describe('4b. a token made over the API stays within the calling token', () => {
  it('refuses scopes the calling token lacks, naming each', async () => {
    const narrow = await withToken(['tokens:write', 'courses:read']);
    const res = await narrow.personalAccessTokens.create({
      body: { name: 'wider', scopes: ['courses:read', 'students:read', 'students:write'] },
    });
    expect(expectStatus(res, 403).body.detail).toBe(
      'A credential cannot get scopes the calling token lacks: students:read, students:write',
    );
  });

  it('refuses revoking a token with scopes the caller lacks, naming each', async () => {
    const wide = await server.createToken(orgId, [
      'students:read',
      'students:write',
      'tokens:write',
    ]);
    const narrow = await withToken(['tokens:write']);
    const res = await narrow.personalAccessTokens.delete({ params: { id: wide.id } });
    expect(expectStatus(res, 403).body.detail).toBe(
      'A token cannot revoke a token that has scopes the calling token lacks: students:read, students:write',
    );
  });

  it('may expire exactly when the calling token does, not a second later (400 too_late)', async () => {
    const expires = new Date(Math.ceil(clock.nowMs() / 1000) * 1000 + 3_600_000);
    const caller = await withToken(['tokens:write', 'students:read'], { expiresAt: expires });
    const same = await caller.personalAccessTokens.create({
      body: { name: 'same end', scopes: ['students:read'], expires_at: expires.toISOString() },
    });
    expect(expectStatus(same, 201).body.expires_at).toBe(expires.toISOString());

    const second = new Date(expires.getTime() + 1000).toISOString();
    const later = await caller.personalAccessTokens.create({
      body: { name: 'later', scopes: ['students:read'], expires_at: second },
    });
    const problem = expectStatus(later, 400).body;
    expect(problem.code).toBe('validation_error');
    expect(problem.detail).toBe(
      `expires_at must be at or before ${expires.toISOString()}, when the calling token expires: a token cannot outlive the one that creates it`,
    );
    expect(problem.errors).toEqual([
      { path: 'body.expires_at', message: 'later than the calling token', code: 'too_late' },
    ]);
    // A token that never expires is later than any expiry too.
    const forever = await caller.personalAccessTokens.create({
      body: { name: 'forever', scopes: ['students:read'] },
    });
    expect(expectStatus(forever, 400).body.errors?.[0]?.code).toBe('too_late');
  });
});

describe('5. only the Authorization header carries a token', () => {
  it('refuses a token in the query string or a JSON body, and never logs it', async () => {
    const { token } = await server.createToken(orgId, ['students:read', 'students:write']);
    const basic = { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` };
    const student = await admin.students.create({
      body: { student_number: 'Q-1', first_name: 'Query', last_name: 'String' },
    });
    const studentId = expectStatus(student, 201).body.id;
    // A token where the contract has no place for one (a query parameter, a body field): raw.
    const attempts = [
      // A route without query parameters of its own: before, this answered 200.
      await rawCall(server, `/v1/students/${studentId}?access_token=${token}`, {
        headers: basic,
      }),
      await rawCall(server, `/v1/students?access_token=${token}`),
      await rawCall(server, `/v1/students?access_token=${token}`, { headers: basic }),
      await rawCall(server, '/v1/students', {
        method: 'POST',
        headers: { ...basic, 'Content-Type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      }),
      await rawCall(server, `/v1/students?access_token=${token}`, {
        headers: { Authorization: 'Bearer' },
      }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(problemOf(res).code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="platform"/);
    }
    // The header alone works; a query parameter beside it is just an unknown parameter.
    expect((await typedClient(server, token).students.list()).status).toBe(200);
    const beside = await rawCall(server, `/v1/students?access_token=${token}`, { token });
    expect(beside.status).toBe(400);
    expect(problemOf(beside).errors?.map((e) => e.path)).toEqual(['query.access_token']);
    expect(JSON.stringify(beside.body)).not.toContain(token);

    // Every request above is logged once its own line is (the last one's, by its request id).
    const lastRequest = beside.headers.get('x-request-id')!;
    await waitFor(() => lines.some((line) => line.includes(lastRequest)), {
      what: "the last request's log line",
    });
    const logged = lines.join('\n');
    expect(logged).toContain('"route":"/v1/students"');
    expect(logged).not.toContain(token.slice(4));
  });
});

describe('6. events:write is not a scope', () => {
  it('is refused when asked for, not granted by all, and ignored on credentials that still carry it', async () => {
    // events:write is beyond the contract's scope type: sent raw.
    const asked = await rawClient(server, adminToken).post('/v1/personal_access_tokens', {
      name: 'x',
      scopes: ['events:read', 'events:write'],
    });
    expect(asked.status).toBe(400);
    expect(problemOf(asked).errors?.map((e) => e.path)).toEqual(['body.scopes.1']);

    const all = expectStatus(
      await admin.personalAccessTokens.create({ body: { name: 'all', scopes: ['all'] } }),
      201,
    );
    expect(all.body.scopes).toContain('events:read');
    expect(all.body.scopes).not.toContain('events:write');

    // A token and a client stored before the scope went keep working without it.
    const old = await server.createToken(orgId, ['events:read']);
    await server.dataSource.manager.update(
      PersonalAccessToken,
      { id: old.id },
      { scopes: 'events:read events:write' },
    );
    const info = await typedClient(server, old.token).token.retrieve();
    expect(expectStatus(info, 200).body.scopes).toEqual(['events:read']);

    const app = await confidentialClient(['events:read']);
    await server.dataSource.manager.update(
      OAuthClientRecord,
      { id: app.id },
      { scopes: 'events:read events:write' },
    );
    const stored = await admin.oauthClients.retrieve({ params: { id: app.id } });
    expect(expectStatus(stored, 200).body.scopes).toEqual(['events:read']);
    const appToken = await clientCredentials(app.id, app.client_secret, 'events:read');
    expect((await typedClient(server, appToken).events.list()).status).toBe(200);

    // Taking them over needs only the scopes that still exist.
    const revoker = await withToken(['tokens:write', 'events:read']);
    const revoked = await revoker.personalAccessTokens.delete({ params: { id: old.id } });
    expect(expectStatus(revoked, 200).body.revoked_at).not.toBeNull();
    const clientAdmin = await withToken(['oauth_clients:write', 'events:read']);
    expect((await clientAdmin.oauthClients.rotateSecret({ params: { id: app.id } })).status).toBe(
      200,
    );
  });
});
