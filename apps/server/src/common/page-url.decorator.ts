import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { asPlatformRequest } from './http-context';
import { pageUrlOf, type PageUrl } from './list/page-envelope';

/** The absolute URL a list request was made at, for its pagination links. */
export const CurrentPageUrl = createParamDecorator(
  (_data: unknown, context: ExecutionContext): PageUrl =>
    pageUrlOf(asPlatformRequest(context.switchToHttp().getRequest())),
);
