/**
 * No secret reaches a log line: a full flow at the most verbose level (tokens used and refused,
 * webhook secrets created and rotated, deliveries signed and sent, a failing request), then
 * every secret it created is looked for in everything the server logged. No stack traces either.
 */
import { randomBytes } from 'node:crypto';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { authorizeInBrowser, discover, oidc } from './support/oauth';
import { startReceiver, waitFor } from './support/receiver';
import { rawCall, startServer, type TestServer } from './support/server';

/**
 * OAuth: a client secret, a password typed into the login page (right and wrong), a code,
 * access and refresh tokens, rotation, reuse, revocation and introspection. Returns the secrets.
 */
async function oauthFlow(server: TestServer, orgId: string): Promise<string[]> {
  const secrets: string[] = [];
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await server.createUser(orgId, 'logs@school.example', password);
  const app = await server.createOAuthClient(orgId, {
    type: 'confidential',
    redirect_uris: ['https://logs.example/cb'],
  });
  secrets.push(app.client_secret!, password);
  const config = await discover(server, app.id, app.client_secret);
  const cc = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
  secrets.push(cc.access_token);
  await typedClient(server, cc.access_token).students.list();
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: 'https://logs.example/cb',
    scope: 'students:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const wrong = await authorizeInBrowser(server, url, {
    email: 'logs@school.example',
    password: `${password}-wrong`,
  }).catch(() => undefined);
  expect(wrong).toBeUndefined();
  const { callback } = await authorizeInBrowser(server, url, {
    email: 'logs@school.example',
    password,
  });
  secrets.push(callback.searchParams.get('code')!, verifier);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
  });
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  secrets.push(tokens.access_token, tokens.refresh_token!, refreshed.access_token);
  secrets.push(refreshed.refresh_token!);
  await oidc.tokenIntrospection(config, refreshed.access_token);
  await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch(() => undefined);
  await oidc.tokenRevocation(config, cc.access_token);
  await typedClient(server, cc.access_token).students.list();
  return secrets;
}

/**
 * Members: an invitation's one-time link (opened and used), the password set on its page, and a
 * password change over the API. Returns the secrets.
 */
async function membersFlow(server: TestServer, api: TypedClient, orgId: string): Promise<string[]> {
  const secrets: string[] = [];
  const invited = expectStatus(
    await api.invitations.create({
      body: { email: 'joiner@school.example', role: 'developer' },
    }),
    201,
  );
  const acceptUrl = invited.body.accept_url!;
  const inviteToken = new URL(acceptUrl).searchParams.get('token')!;
  const joinerPassword = `pw-${randomBytes(12).toString('hex')}`;
  const newPassword = `pw-${randomBytes(12).toString('hex')}`;
  secrets.push(inviteToken, joinerPassword, newPassword);
  await fetch(acceptUrl);
  const form = {
    token: inviteToken,
    password: joinerPassword,
    password_confirmation: joinerPassword,
  };
  const accepted = await fetch(`${server.url}/invitations/accept`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  expect(accepted.status).toBe(303);
  await fetch(acceptUrl);
  const developers = await api.members.list({ query: { role: 'developer' } });
  const joiner = expectStatus(developers, 200).body.data[0]!;
  const owned = await server.createToken(orgId, ['students:read'], { userId: joiner.id });
  secrets.push(owned.token);
  const changed = await typedClient(server, owned.token).user.changePassword({
    body: { current_password: joinerPassword, new_password: newPassword },
  });
  expect(changed.status).toBe(204);
  return secrets;
}

/** None of the secrets, whole or their random part, and no stack trace in what was logged. */
function expectNoSecretLogged(lines: string[], secrets: string[]) {
  const logged = lines.join('\n');
  expect(lines.length).toBeGreaterThan(10);
  // The OAuth exchanges were logged (so their absence of secrets means something).
  for (const path of [
    '/oauth/token',
    '/oauth/authorize/:uid',
    '/oauth/interaction/:uid/login',
    '/.well-known/oauth-authorization-server',
    '/invitations/accept/',
  ]) {
    expect(logged).toContain(`"route":"${path}"`);
  }
  for (const secret of secrets) {
    // The whole secret, and its random part on its own (prefixes are not secret).
    expect(logged).not.toContain(secret);
    expect(logged).not.toContain(secret.replace(/^(pat|whsec|ocs|invt)_/, '').slice(0, 24));
  }
  expect(logged).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
  expect(logged).not.toMatch(/"stack"/);
}

describe('secrets in logs', () => {
  let server: TestServer;
  const lines: string[] = [];
  const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
  const SECRETS_KEY = randomBytes(32).toString('base64');

  beforeAll(async () => {
    server = await startServer(
      {
        LOG_LEVEL: 'trace',
        METRICS_TOKEN,
        WEBHOOK_SECRETS_KEY: SECRETS_KEY,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '50ms',
      },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
  });
  afterAll(() => server.close());

  it('logs none of the tokens, webhook secrets, keys or stack traces of a full flow', async () => {
    const secrets: string[] = [METRICS_TOKEN, SECRETS_KEY];
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['all']);
    const { token: readOnly } = await server.createToken(org.id, ['students:read']);
    secrets.push(token, readOnly);
    const api = typedClient(server, token);
    const hook = await startReceiver((_req, i) =>
      i === 0 ? { status: 500, body: 'no' } : { status: 204 },
    );
    try {
      const endpoint = expectStatus(
        await api.webhookEndpoints.create({ body: { url: hook.url, events: ['*'] } }),
        201,
      );
      const rotated = expectStatus(
        await api.webhookEndpoints.rotateSecret({ params: { id: endpoint.body.id } }),
        200,
      );
      secrets.push(endpoint.body.secret, rotated.body.secret);
      await api.students.create({
        body: { student_number: 'L-1', first_name: 'Log', last_name: 'Scan' },
      });
      await waitFor(() => hook.received.length >= 2, { what: 'the delivery and its retry' });
      // Refused tokens: wrong, revoked-looking, and a valid one without the scope.
      await typedClient(server, `${token}x`).students.list();
      await typedClient(server, readOnly).courses.list();
      await typedClient(server).students.list({
        extraHeaders: { authorization: `Basic ${token}` },
      });
      // /metrics is outside the contract.
      await rawCall(server, '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      await rawCall(server, '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}x` } });
      await api.students.create({
        body: { student_number: 'L-1', first_name: 'Dup', last_name: 'Key' },
      });
      secrets.push(...(await oauthFlow(server, org.id)));

      secrets.push(...(await membersFlow(server, api, org.id)));
    } finally {
      await hook.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));

    expectNoSecretLogged(lines, secrets);
  });
});
