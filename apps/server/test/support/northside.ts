/**
 * Northside School, the organization the OAuth suites (oauth.e2e-spec, oauth-tokens.e2e-spec) act
 * in: a server of the file's own, two organizations with a member each, a confidential and a
 * public client, and the flows both use. `setUpNorthside()` starts it for the file that calls it.
 */
import type * as OpenIdClient from 'openid-client';
import { typedClient } from './api';
import { authorizeInBrowser, type AuthorizeResult, discover, oidc } from './oauth';
import { startServer, type TestServer } from './server';

export const PASSWORD = 'correct horse battery staple';
export const REDIRECT_URI = 'https://app.example/callback';
export const NATIVE_REDIRECT_URI = 'http://127.0.0.1:8765/callback';

export let server: TestServer;
export let orgId: string;
export let otherOrgId: string;
export const alice = { email: 'alice@school.example', password: PASSWORD };
export const mallory = { email: 'mallory@other.example', password: PASSWORD };
export let confidential: { id: string; client_secret: string | null };
export let publicClient: { id: string };
export let config: OpenIdClient.Configuration;
export let aliceId: string;

/** Starts the server and the school before the file's tests, and closes it after them. */
export function setUpNorthside() {
  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization({ name: 'Northside School' })).id;
    otherOrgId = (await server.createOrganization({ name: 'Other School' })).id;
    aliceId = (await server.createUser(orgId, alice.email, alice.password)).id;
    await server.createUser(otherOrgId, mallory.email, mallory.password);
    confidential = await server.createOAuthClient(orgId, {
      type: 'confidential',
      name: 'Gradebook Sync',
      redirect_uris: [REDIRECT_URI],
      scopes: ['students:read', 'students:write', 'courses:read'],
    });
    publicClient = await server.createOAuthClient(orgId, {
      type: 'public',
      name: 'Teacher Desktop',
      redirect_uris: [NATIVE_REDIRECT_URI],
      scopes: ['students:read'],
    });
    config = await discover(server, confidential.id, confidential.client_secret);
  });

  afterAll(() => server?.close());
}

/** An authorization URL with PKCE (S256) and state, as openid-client builds it. */
export async function authorizationRequest(
  cfg: OpenIdClient.Configuration,
  params: Record<string, string> = {},
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: REDIRECT_URI,
    scope: 'students:read courses:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...params,
  });
  return { url, verifier, state };
}

let members = 0;

/**
 * A new member of the school, so that each flow signs in as someone fresh (the login limit
 * counts every attempt per account).
 */
export async function newMember(): Promise<{ email: string; password: string; id: string }> {
  const email = `teacher${++members}@school.example`;
  const { id } = await server.createUser(orgId, email, PASSWORD);
  return { email, password: PASSWORD, id };
}

/** The code flow with PKCE through the login and consent pages, as a new member unless `user`. */
export async function codeFlow(
  cfg: OpenIdClient.Configuration = config,
  params: Record<string, string> = {},
  user?: { email: string; password: string },
): Promise<{ tokens: OpenIdClient.TokenEndpointResponse; result: AuthorizeResult }> {
  const request = await authorizationRequest(cfg, params);
  const result = await authorizeInBrowser(server, request.url, user ?? (await newMember()));
  const tokens = await oidc.authorizationCodeGrant(cfg, result.callback, {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
  });
  return { tokens, result };
}

/** The OAuth error code a failed openid-client call reports. */
export async function oauthError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    // openid-client reports a 401 challenge (WWW-Authenticate) apart from a body error.
    const challenge = (error as { cause?: { parameters?: { error?: string } }[] }).cause;
    return (
      (error as { error?: string }).error ??
      (Array.isArray(challenge) ? challenge[0]?.parameters?.error : undefined) ??
      String(error)
    );
  }
  throw new Error('expected the OAuth call to fail');
}

/** The API as the bearer of `token` calls it. */
export const api = (token: string) => typedClient(server, token);
