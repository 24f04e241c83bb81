import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import {
  type DeprecatedPart,
  DEPRECATIONS_PAGE_PATH,
  deprecationAnchor,
  listDeprecations,
  requestDeprecations,
} from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import type { Response } from 'express';
import type { Observable } from 'rxjs';
import { contractRouteOf } from './route-metadata';
import { asPlatformRequest, requestOrigin } from './http-context';

const DAY_MS = 86_400_000;
const midnight = (day: string) => Date.parse(`${day}T00:00:00Z`);

/**
 * The deprecation headers of a request that uses deprecated parts: `Deprecation` (RFC 9745, the
 * earliest date as `@<Unix seconds>`), `Sunset` (RFC 8594, the earliest sunset as an HTTP-date,
 * the end of that day) and one `Link; rel="deprecation"` per distinct migration note.
 */
export function deprecationHeaders(
  route: { method: string; path: string },
  parts: DeprecatedPart[],
  origin: string,
): { deprecation: string; sunset?: string; links: string[] } {
  const since = Math.min(...parts.map((p) => midnight(p.deprecation.since)));
  const sunsets = parts.flatMap((p) => (p.deprecation.sunset ? [p.deprecation.sunset] : []));
  // "Stops working after <day>": the last moment it is promised is the end of that day (UTC).
  const sunset = sunsets.length
    ? new Date(Math.min(...sunsets.map(midnight)) + DAY_MS - 1000).toUTCString()
    : undefined;
  const targets = parts.map(
    (p) =>
      p.deprecation.link ??
      `${origin}${DEPRECATIONS_PAGE_PATH}#${deprecationAnchor(route, p.part)}`,
  );
  const links = [...new Set(targets)].map(
    (target) => `<${target}>; rel="deprecation"; type="text/html"`,
  );
  return { deprecation: `@${since / 1000}`, ...(sunset && { sunset }), links };
}

/**
 * Announces deprecations on every response of a deprecated operation, or of a request that sends
 * a deprecated query parameter or body field (the contract marks them). Set before the handler
 * runs, so an error answer (a 400 on that request) carries them too; `Link` is appended to, as
 * the list convention's pagination links share the header.
 */
@Injectable()
export class DeprecationInterceptor implements NestInterceptor {
  /** Whether a route has any deprecated part, worked out once per route rather than per request. */
  private readonly deprecates = new WeakMap<AppRoute, boolean>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const route = contractRouteOf(context);
    if (route && this.hasDeprecatedParts(route)) {
      const req = asPlatformRequest(context.switchToHttp().getRequest());
      const parts = requestDeprecations(route, { query: req.query, body: req.body as unknown });
      if (parts.length > 0) {
        const headers = deprecationHeaders(route, parts, requestOrigin(req));
        const res = context.switchToHttp().getResponse<Response>();
        res.setHeader('Deprecation', headers.deprecation);
        if (headers.sunset) res.setHeader('Sunset', headers.sunset);
        for (const link of headers.links) res.append('Link', link);
      }
    }
    return next.handle();
  }

  /** The parts the deprecations page lists: a route with none has nothing to announce. */
  private hasDeprecatedParts(route: AppRoute): boolean {
    let known = this.deprecates.get(route);
    if (known === undefined) {
      known = listDeprecations({ route }).length > 0;
      this.deprecates.set(route, known);
    }
    return known;
  }
}
