import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { asPlatformRequest } from './http-context';
import type { Principal } from './principal';

/** The authenticated caller. Only valid on contract routes, where the guards guarantee one. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const principal = asPlatformRequest(context.switchToHttp().getRequest()).principal;
    if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
    return principal;
  },
);
