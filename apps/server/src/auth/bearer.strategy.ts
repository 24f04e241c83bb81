import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { PlatformRequest } from '../common/http-context';
import { OAuthTokensService } from './oauth-tokens.service';
import type { Principal } from './principal';
import { PAT_PREFIX } from './token-format';
import { TokensService } from './tokens.service';

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

  async validate(req: PlatformRequest, token: string): Promise<Principal | false> {
    const result = token.startsWith(PAT_PREFIX)
      ? await this.tokens.authenticate(token)
      : await this.oauthTokens.authenticate(token);
    if (result.ok) return result.principal;
    req.authFailure = result.reason;
    return false;
  }
}
