'use strict';
/**
 * A real server on loopback for an SDK's live suite, and the fixtures that suite needs: tokens of
 * two organizations (one rate limited low), a read-only token, a member and a token acting for
 * them, a confidential OAuth client, and fresh refresh tokens from a real authorization code flow
 * (PKCE, login and consent pages).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REDIRECT_URI = 'https://sdk-live.school.test/callback';
const PASSWORD = 'correct horse battery staple';
/** Organization B's requests per rolling minute: low, so a 429 test needs only a few calls. */
const DEFAULT_LIMITED_RATE_LIMIT = 5;
const DEFAULT_REFRESH_TOKENS = 4;
/** The member whose token `/v1/user` answers for; they sign in with PASSWORD. */
const MEMBER_EMAIL = 'sdk-live-member@school.test';
/**
 * High enough that nothing a live suite does (pagination over many pages, every operation, the
 * 401 tests, token requests) is throttled; organization B's own limit stays low.
 */
const GENEROUS_LIMIT = '1000000';

/**
 * openid-client (v6) is an ES module. Node's own require loads it (Node >= 20.19), also under
 * Jest, whose module registry cannot; this is how the server's tests load it too.
 */
function openIdClient() {
  return process.getBuiltinModule('node:module').createRequire(__filename)('openid-client');
}

/** Which of the CI report's database labels this run is, as tooling/jest/summary-reporter.js. */
function databaseLabel(env = process.env) {
  return (env.TEST_DATABASE_URL ? 'postgres' : 'sqlite') + (env.TEST_REDIS_URL ? '+redis' : '');
}

/**
 * Starts the server: SQLite, or a fresh database on TEST_DATABASE_URL's PostgreSQL; with
 * TEST_REDIS_URL, the scale-out deployment's Redis rate limit and BullMQ delivery.
 */
async function startServer({ env = process.env, logDestination } = {}) {
  const { startTestServer } = require('@platform/server/testing');
  return startTestServer({
    postgresAdminUrl: env.TEST_DATABASE_URL || undefined,
    redisUrl: env.TEST_REDIS_URL || undefined,
    ...(logDestination && { logDestination }),
    env: {
      ...(logDestination && { LOG_LEVEL: 'info' }),
      // SDK tests register webhook endpoints on their own loopback receivers.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // A live delivery arrives within a fraction of a second, and a missed one is retried soon.
      WEBHOOK_POLL_INTERVAL: '100ms',
      WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s',
      RATE_LIMIT_DEFAULT: GENEROUS_LIMIT,
      RATE_LIMIT_ANONYMOUS: GENEROUS_LIMIT,
      RATE_LIMIT_OAUTH: GENEROUS_LIMIT,
      RATE_LIMIT_OAUTH_CLIENT: GENEROUS_LIMIT,
    },
  });
}

/** Discovers the server through its RFC 8414 metadata, as an integration would. */
async function discover(server, client) {
  const oidc = openIdClient();
  return oidc.discovery(
    new URL(server.url),
    client.id,
    undefined,
    oidc.ClientSecretBasic(client.client_secret),
    // The test server is plain http on loopback; production issuers are https.
    { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] },
  );
}

/** One authorization code flow with PKCE, approved by a new member: its token response. */
async function authorizationCodeTokens(server, orgId, config, scope, n) {
  const oidc = openIdClient();
  const { authorizeInBrowser } = require('@platform/server/testing');
  const email = `sdk-live-${n}@school.test`;
  await server.createUser(orgId, email, PASSWORD);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const { callback } = await authorizeInBrowser(server, url, { email, password: PASSWORD });
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  if (!tokens.refresh_token)
    throw new Error('the authorization code grant issued no refresh token');
  return tokens;
}

/** Creates every fixture on `server` and returns them (the shape of the PLATFORM_FIXTURES file). */
async function createFixtures(
  server,
  {
    limitedRateLimit = DEFAULT_LIMITED_RATE_LIMIT,
    refreshTokens = DEFAULT_REFRESH_TOKENS,
    env = process.env,
  } = {},
) {
  const orgA = await server.createOrganization({ name: 'SDK Live School A' });
  const orgB = await server.createOrganization({
    name: 'SDK Live School B (rate limited)',
    rateLimitPerMinute: limitedRateLimit,
  });
  const token = await server.createToken(orgA.id, ['all'], { name: 'sdk-live: every scope' });
  const readonly = await server.createToken(orgA.id, ['students:read'], {
    name: 'sdk-live: students:read only',
  });
  const limited = await server.createToken(orgB.id, ['all'], {
    name: 'sdk-live: rate limited organization',
  });
  // A token acting for a member, as one the member made over the API (a PAT with an owner): what
  // /v1/user and /v1/user/password need. Made directly rather than by a code flow, which would
  // also work, because a PAT does not expire or rotate while a suite runs.
  const member = await server.createUser(orgA.id, MEMBER_EMAIL, PASSWORD, { role: 'admin' });
  const memberToken = await server.createToken(orgA.id, ['all'], {
    name: 'sdk-live: acting for a member',
    userId: member.id,
  });
  const client = await server.createOAuthClient(orgA.id, {
    type: 'confidential',
    name: 'SDK Live',
    redirect_uris: [REDIRECT_URI],
    scopes: ['all'],
    grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
  });
  const config = await discover(server, client);
  const metadata = config.serverMetadata();
  const scopes = metadata.scopes_supported;
  const issued = [];
  for (let n = 1; n <= refreshTokens; n += 1) {
    issued.push(await authorizationCodeTokens(server, orgA.id, config, scopes.join(' '), n));
  }
  return {
    base_url: server.url,
    database: databaseLabel(env),
    organization_id: orgA.id,
    token: token.token,
    readonly_token: readonly.token,
    readonly_scopes: ['students:read'],
    member: { email: MEMBER_EMAIL, password: PASSWORD, role: 'admin', token: memberToken.token },
    limited_organization_id: orgB.id,
    limited_token: limited.token,
    limited_rate_limit: limitedRateLimit,
    oauth: {
      issuer: metadata.issuer,
      token_url: metadata.token_endpoint,
      client_id: client.id,
      client_secret: client.client_secret,
      scopes,
      redirect_uri: REDIRECT_URI,
      refresh_tokens: issued.map((t) => t.refresh_token),
      refresh_token_scope: issued[0]?.scope ?? null,
    },
  };
}

/** The environment variables the command reads (the contract between the harness and suites). */
function fixtureEnv(fixtures, fixturesFile) {
  return {
    PLATFORM_BASE_URL: fixtures.base_url,
    PLATFORM_TOKEN: fixtures.token,
    PLATFORM_READONLY_TOKEN: fixtures.readonly_token,
    PLATFORM_MEMBER_TOKEN: fixtures.member.token,
    PLATFORM_MEMBER_EMAIL: fixtures.member.email,
    PLATFORM_MEMBER_PASSWORD: fixtures.member.password,
    PLATFORM_LIMITED_TOKEN: fixtures.limited_token,
    PLATFORM_LIMITED_RATE_LIMIT: String(fixtures.limited_rate_limit),
    PLATFORM_OAUTH_CLIENT_ID: fixtures.oauth.client_id,
    PLATFORM_OAUTH_CLIENT_SECRET: fixtures.oauth.client_secret,
    PLATFORM_OAUTH_REFRESH_TOKENS: fixtures.oauth.refresh_tokens.join(','),
    PLATFORM_OAUTH_TOKEN_URL: fixtures.oauth.token_url,
    PLATFORM_FIXTURES: fixturesFile,
  };
}

/** Writes the fixtures to a private temporary file (they hold secrets): returns its path. */
function writeFixturesFile(fixtures) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-sdk-live-'));
  const file = path.join(dir, 'fixtures.json');
  fs.writeFileSync(file, `${JSON.stringify(fixtures, null, 2)}\n`, { mode: 0o600 });
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

module.exports = {
  DEFAULT_LIMITED_RATE_LIMIT,
  DEFAULT_REFRESH_TOKENS,
  MEMBER_EMAIL,
  REDIRECT_URI,
  databaseLabel,
  startServer,
  createFixtures,
  fixtureEnv,
  writeFixturesFile,
};
