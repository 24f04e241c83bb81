import type { AppConfig } from '../config/env';

/**
 * The authorization server's issuer: `PUBLIC_URL`, or the address the server listens on. Set
 * `PUBLIC_URL` behind a proxy or with several instances, so every instance names the same issuer.
 */
export function oauthIssuer(config: AppConfig): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** The resource indicator (RFC 8707) every access token is issued for: this API. */
export function apiResource(config: AppConfig): string {
  return `${oauthIssuer(config)}/v1`;
}
