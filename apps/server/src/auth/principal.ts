import type { Scope } from '@platform/contract';

/** Who is calling: resolved from the bearer token on every request, never cached across requests. */
export interface Principal {
  kind: 'personal_access_token';
  tokenId: string;
  organizationId: string;
  /** Requests per rolling minute for the organization. */
  rateLimitPerMinute: number;
  scopes: ReadonlySet<Scope>;
  expiresAt: Date | null;
}
