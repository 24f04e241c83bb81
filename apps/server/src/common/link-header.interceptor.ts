import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { PageLinks } from '@platform/contract';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import { linkHeader } from './list/page-envelope';

/**
 * Every list body's `links` also goes out as a `Link` header, so no controller can forget it.
 * Appended, as a deprecated operation's `rel="deprecation"` link shares the header.
 */
@Injectable()
export class LinkHeaderInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((body: unknown) => {
        const links = (body as { links?: PageLinks } | null)?.links;
        if (links && typeof links.first === 'string') {
          context.switchToHttp().getResponse<Response>().append('Link', linkHeader(links));
        }
        return body;
      }),
    );
  }
}
