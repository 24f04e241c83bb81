import type * as OpenIdClient from 'openid-client';
import type { TestServer } from './server';

export {
  authorizeInBrowser,
  Browser,
  formAction,
  type AuthorizeResult,
} from '../../src/testing/browser';

/**
 * openid-client (v6, the certified relying-party library built on oauth4webapi) is an ES module;
 * Jest's registry cannot load those, so it is loaded with Node's own require, as the server
 * loads oidc-provider.
 */
export const oidc: typeof OpenIdClient = process
  .getBuiltinModule('node:module')
  .createRequire(__filename)('openid-client');

/** Discovers the server through RFC 8414 metadata, as a real integration would. */
export function discover(
  server: TestServer,
  clientId: string,
  clientSecret?: string | null,
): Promise<OpenIdClient.Configuration> {
  return oidc.discovery(
    new URL(server.url),
    clientId,
    undefined,
    clientSecret ? oidc.ClientSecretBasic(clientSecret) : oidc.None(),
    // The test server is plain http on loopback; production issuers are https.
    { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] },
  );
}
