import type { ListQuery, PageLinks, PageMeta } from '@platform/contract';
import { type PlatformRequest, requestOrigin } from '../http-context';
import type { PageTotal } from './list-types';

/** Where a list request was made: the absolute URL the pagination links are built from. */
export interface PageUrl {
  /** Scheme, host and path as the caller used them (so `/api/v1` stays `/api/v1`). */
  base: string;
  /** The raw query string, kept so links repeat every filter and sort. */
  search: string;
}

export function pageUrlOf(req: PlatformRequest): PageUrl {
  const original = req.originalUrl ?? req.url;
  const q = original.indexOf('?');
  const path = q === -1 ? original : original.slice(0, q);
  const origin = requestOrigin(req);
  return { base: `${origin}${path}`, search: q === -1 ? '' : original.slice(q + 1) };
}

/**
 * `meta` and `links` of a page. A total that is a lower bound still ends past the requested page
 * (see TOTAL_COUNT_AHEAD), so `next` and `total_pages > page` lead on to every remaining row.
 */
export function pageEnvelope(
  url: PageUrl,
  query: ListQuery,
  { count: total, exact, nextCursor }: PageTotal,
): { meta: PageMeta; links: PageLinks } {
  const totalPages = Math.ceil(total / query.per_page);
  const lastPage = Math.max(totalPages, 1);
  // Page links drop a cursor (the two cannot be combined); next carries the cursor instead.
  const link = (page: number | undefined, cursor?: string): string => {
    const params = new URLSearchParams(url.search);
    params.delete(cursor === undefined ? 'cursor' : 'page');
    if (cursor !== undefined) params.set('cursor', cursor);
    else params.set('page', String(page));
    return `${url.base}?${params.toString()}`;
  };
  // A full page's next is its cursor. Under a cursor the page number is the pages walked, so the
  // total cannot tell whether records follow (some before the cursor may be gone): there the page
  // read one row more, and a next cursor means one follows. Numbered pages stop at the total's.
  const nextLink = (): string | null => {
    if (query.after) return nextCursor === undefined ? null : link(undefined, nextCursor);
    if (query.page >= totalPages) return null;
    return nextCursor === undefined ? link(query.page + 1) : link(undefined, nextCursor);
  };
  return {
    meta: {
      page: query.page,
      per_page: query.per_page,
      total,
      total_pages: totalPages,
      total_exact: exact,
    },
    links: {
      self: query.after ? `${url.base}?${url.search}` : link(query.page),
      first: link(1),
      prev: query.page > 1 ? link(Math.min(query.page - 1, lastPage)) : null,
      next: nextLink(),
      last: link(lastPage),
    },
  };
}

/** RFC 8288 `Link` header with the same links as the body; `first` and `last` always present. */
export function linkHeader(links: PageLinks): string {
  const parts = [`<${links.first}>; rel="first"`];
  if (links.prev) parts.push(`<${links.prev}>; rel="prev"`);
  if (links.next) parts.push(`<${links.next}>; rel="next"`);
  parts.push(`<${links.last}>; rel="last"`);
  return parts.join(', ');
}
