import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { PlatformRequest } from '../common/http-context';
import { OAuthTokensService } from './oauth-tokens.service';
import type { Principal } from './principal';
import { PAT_PREFIX } from './token-format';
import { TokensService } from './tokens.service';

/** `Bearer <token>`: one scheme, one space, one token (as passport-http-bearer splits it). */
const BEARER_HEADER = /^Bearer ([^ ]+)$/i;

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
   * Called by the front door before the body is read, so only the header can carry a token
   * (api.md), which is also why passport's body and query fallbacks are not used.
   */
  async resolve(req: PlatformRequest): Promise<void> {
    if (req.authResolved) return;
    req.authResolved = true;
    const header = req.headers.authorization;
    if (!header) {
      req.authFailure = 'missing';
      return;
    }
    const token = BEARER_HEADER.exec(header)?.[1];
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
