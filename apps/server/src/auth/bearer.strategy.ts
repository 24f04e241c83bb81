import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { PlatformRequest } from '../common/http-context';
import type { Principal } from './principal';
import { TokensService } from './tokens.service';

/** Passport bearer strategy: `Authorization: Bearer <token>` → the caller's `Principal`. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly tokens: TokensService) {
    super({ passReqToCallback: true });
  }

  async validate(req: PlatformRequest, token: string): Promise<Principal | false> {
    const result = await this.tokens.authenticate(token);
    if (result.ok) return result.principal;
    req.authFailure = result.reason;
    return false;
  }
}
