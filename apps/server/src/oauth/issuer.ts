import { type AppConfig, serverOrigin } from '../config/env';

/**
 * The authorization server's issuer: `PUBLIC_URL`, or the address the server listens on. Set
 * `PUBLIC_URL` behind a proxy or with several instances, so every instance names the same issuer.
 */
export function oauthIssuer(config: AppConfig): string {
  return serverOrigin(config);
}

/** The resource indicator (RFC 8707) every access token is issued for: this API. */
export function apiResource(config: AppConfig): string {
  return `${oauthIssuer(config)}/v1`;
}
