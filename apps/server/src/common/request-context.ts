import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { asPlatformRequest, type PlatformRequest } from './http-context';

/** The authenticated caller. Only valid on contract routes, where the guards guarantee one. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): NonNullable<PlatformRequest['principal']> => {
    const principal = asPlatformRequest(context.switchToHttp().getRequest()).principal;
    if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
    return principal;
  },
);
