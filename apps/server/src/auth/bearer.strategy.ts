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
   * Resolves the request's token once, setting `principal` or `authFailure`; never rejects.
   * Called by the front door before the body is read, so only the Authorization header can
   * carry a token (api.md; RFC 6750 §2.1): passport-http-bearer would also take one from an
   * `access_token` body field or query parameter, and a token in a URL ends up in logs,
   * history and Referer headers, so its fallbacks are never used.
   */
  async resolve(req: PlatformRequest): Promise<void> {
    if (req.authResolved) return;
    req.authResolved = true;
    const header = req.headers.authorization;
    if (!header) {
      req.authFailure = 'missing';
      return;
    }
    const token = bearerTokenOf(header);
    if (!token) {
      req.authFailure = 'malformed';
      return;
    }
    const principal = await this.validate(req, token);
    if (principal) req.principal = principal;
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
