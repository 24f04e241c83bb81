import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { Clock } from '../common/clock';
import type { PlatformRequest } from '../common/http-context';
import { hashToken } from '../security/crypto';
import { TokenCache } from './token-cache';
import { PAT_PREFIX } from './token-format';
import type { AuthenticationResult, Principal, TokenRefusal } from '../common/principal';
import { OAuthAccessTokenResolver, type ResolvedToken } from './token-resolver';
import { TokensService } from './tokens.service';

/** `Bearer <token>`, the one form a token may take (RFC 6750 §2.1; b64token characters). */
const BEARER_HEADER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token in the Authorization header, or null when the header is absent or not a bearer. */
export function bearerTokenOf(header: string | undefined): string | null {
  return BEARER_HEADER.exec(header ?? '')?.[1] ?? null;
}

/** What passport-http-bearer is shown of a request: its Authorization header, and nothing else. */
interface HeaderOnlyRequest {
  headers: { authorization: string };
  /** Why the token was refused, as the verify callback found (passport's `fail` only gets a challenge). */
  refusal?: TokenRefusal;
}

/** The part of passport's strategy protocol a single attempt is given (passport.authenticate does the same). */
interface StrategyAttempt {
  success(user: Principal): void;
  fail(): void;
  error(error: unknown): void;
  authenticate(req: Request): void;
}

/**
 * Passport bearer strategy: `Authorization: Bearer <token>` → the caller's `Principal`. One
 * strategy for both kinds of token: personal access tokens (`pat_…`) and OAuth access tokens.
 *
 * Each app has its own instance (a Nest provider), run directly with passport's strategy
 * protocol rather than registered with `passport.use()`: passport's registry is process-wide,
 * so a second app in the same process (the tests start several) would take over the first's
 * strategy and authenticate against the wrong database.
 *
 * Successful lookups are kept in the `TokenCache`, which the database invalidates on every change
 * that could alter them (token-cache.ts): a revoked token is refused on the next request.
 */
@Injectable()
export class BearerStrategy {
  private readonly strategy: Strategy<(req: Request, token: string, done: Done) => void>;

  constructor(
    private readonly tokens: TokensService,
    private readonly oauthTokens: OAuthAccessTokenResolver,
    private readonly cache: TokenCache,
    private readonly clock: Clock,
  ) {
    this.strategy = new Strategy({ passReqToCallback: true }, (req: Request, token, done: Done) => {
      this.verify(token).then((result) => {
        if (result.ok) return done(null, result.principal);
        (req as unknown as HeaderOnlyRequest).refusal = result.reason;
        return done(null, false);
      }, done);
    });
  }

  /**
   * The request's authentication, resolved once (the front door usually asks first, before the
   * body is read; the pipeline guard then gets the same answer). On success the principal is
   * also set on the request, where handlers and interceptors read it.
   *
   * Only the Authorization header can carry a token (api.md; RFC 6750 §2.1): passport-http-bearer
   * would also take one from an `access_token` body field or query parameter, and a token in a
   * URL ends up in logs, history and Referer headers, so the strategy sees the header alone.
   */
  async authenticate(req: PlatformRequest): Promise<AuthenticationResult> {
    if (req.authentication) return req.authentication;
    const result = await this.authenticateHeader(req.headers.authorization);
    req.authentication = result;
    if (result.ok) req.principal = result.principal;
    return result;
  }

  /**
   * The request's token resolved again, not from the request's memo (the token cache still
   * answers, and the database invalidates it on revocation, removal or a role change): for a
   * request that runs long, to see that its access has ended since it started.
   */
  async reauthenticate(req: PlatformRequest): Promise<AuthenticationResult> {
    const result = await this.authenticateHeader(req.headers.authorization);
    req.authentication = result;
    if (result.ok) req.principal = result.principal;
    return result;
  }

  private authenticateHeader(header: string | undefined): Promise<AuthenticationResult> {
    if (!header) return Promise.resolve({ ok: false, reason: 'missing' });
    const token = bearerTokenOf(header);
    if (!token) return Promise.resolve({ ok: false, reason: 'malformed' });
    const view: HeaderOnlyRequest = { headers: { authorization: `Bearer ${token}` } };
    return new Promise((resolve, reject) => {
      const attempt = Object.create(this.strategy) as StrategyAttempt;
      attempt.success = (principal) => resolve({ ok: true, principal });
      attempt.fail = () => resolve({ ok: false, reason: view.refusal ?? 'malformed' });
      attempt.error = reject;
      attempt.authenticate(view as unknown as Request);
    });
  }

  private async verify(token: string): Promise<AuthenticationResult<Principal, TokenRefusal>> {
    if (!this.cache.enabled) return this.resolve(token);
    const key = hashToken(token);
    // Read before the lookup: a change committed while it runs makes this version stale, so
    // what the lookup saw is never kept as current.
    const version = await this.cache.version();
    if (version === null) return this.resolve(token);
    const nowMs = this.clock.nowMs();
    const cached = this.cache.get(key, version, nowMs);
    if (cached) {
      const { principal } = cached;
      if (principal.kind === 'personal_access_token') {
        cached.lastUsedAtMs = await this.tokens.touch(
          principal.tokenId,
          cached.lastUsedAtMs,
          new Date(nowMs),
        );
      }
      return { ok: true, principal };
    }
    const result = await this.resolve(token);
    if (result.ok) {
      const { principal, endsAtMs, lastUsedAtMs = null } = result;
      this.cache.set(key, version, { principal, endsAtMs, lastUsedAtMs });
    }
    return result;
  }

  private resolve(token: string): Promise<ResolvedToken<Principal>> {
    return token.startsWith(PAT_PREFIX)
      ? this.tokens.authenticate(token)
      : this.oauthTokens.authenticate(token);
  }
}

type Done = (error: unknown, user?: Principal | false) => void;
