import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { PlatformRequest } from '../common/http-context';
import { OAuthTokensService } from './oauth-tokens.service';
import type { Principal } from './principal';
import { PAT_PREFIX } from './token-format';
import { TokensService } from './tokens.service';

/** `Bearer <token>`, the one form a token may take (RFC 6750 §2.1; b64token characters). */
const BEARER_HEADER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token in the Authorization header, or null when the header is absent or not a bearer. */
export function bearerTokenOf(header: string | undefined): string | null {
  return BEARER_HEADER.exec(header ?? '')?.[1] ?? null;
}

interface PassportActions {
  success(user: Principal): void;
  fail(status: number): void;
  error(error: Error): void;
}

/**
 * Passport bearer strategy: `Authorization: Bearer <token>` → the caller's `Principal`. One
 * strategy for both kinds of token: personal access tokens (`pat_…`) and OAuth access tokens.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly tokens: TokensService,
    private readonly oauthTokens: OAuthTokensService,
  ) {
    super({ passReqToCallback: true });
  }

  /**
   * Only the Authorization header carries a token. passport-http-bearer also takes one from an
   * `access_token` body field or query parameter (RFC 6750 §2.2, §2.3) whenever the header has
   * no bearer token, and has no option to stop it; a token in a URL ends up in logs, history
   * and Referer headers. So the header is read here and nothing else is looked at.
   */
  override authenticate(req: PlatformRequest): void {
    // Passport calls this on a per-request copy of the strategy that it gives these actions.
    const passport = this as unknown as PassportActions;
    const token = bearerTokenOf(req.headers.authorization);
    if (!token) {
      req.authFailure ??= req.headers.authorization ? 'malformed' : 'missing';
      passport.fail(401);
      return;
    }
    this.validate(req, token).then(
      (principal) => (principal ? passport.success(principal) : passport.fail(401)),
      (error: unknown) => passport.error(error instanceof Error ? error : new Error(String(error))),
    );
  }

  async validate(req: PlatformRequest, token: string): Promise<Principal | false> {
    const result = token.startsWith(PAT_PREFIX)
      ? await this.tokens.authenticate(token)
      : await this.oauthTokens.authenticate(token);
    if (result.ok) return result.principal;
    req.authFailure = result.reason;
    return false;
  }
}
