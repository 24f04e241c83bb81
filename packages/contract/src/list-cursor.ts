/**
 * A list's keyset cursor (`cursor` beside `page`): where the previous page ended in the list's
 * order, so the next page starts there instead of counting rows from the start. The contract
 * reads the cursor's payload and checks it against the request's sort; the server checks the
 * tag, which binds the cursor to one organization's collection, and builds the cursors it
 * returns in `links.next`. Clients treat a cursor as opaque.
 */

import type { ListQuery } from './list';
import { z } from './zod-openapi';

/** A sort key's value in a cursor: text (timestamps as ISO 8601), a number, or null. */
export type CursorValue = string | number | null;

/** What a list cursor says: the page it opens, the sort it was made for, the last row's keys. */
export interface ListCursorPayload {
  /** The page number the cursor opens (`meta.page` of the page it returns). */
  page: number;
  /** The request's sort, written as `sort` takes it (`-created_at`, `last_name,-created_at`). */
  sort: string;
  /** The previous page's last row: its value of each sort key, in order. */
  values: CursorValue[];
  /** The previous page's last row's id, the tiebreaker after the sort keys. */
  id: string;
}

/** A decoded cursor as the server receives it in `ListQuery.after`. */
export interface ListCursor extends ListCursorPayload {
  /** The payload as sent (base64url), which the tag covers. */
  encoded: string;
  /** The organization and collection tag, checked by the server. */
  tag: string;
}

/** Characters of the tag after the payload: 60 bits, base64url. */
export const LIST_CURSOR_TAG_LENGTH = 10;
/** The longest cursor accepted: a few sort keys of text columns, base64url encoded. */
export const LIST_CURSOR_MAX_LENGTH = 2000;
const MAX_VALUE_LENGTH = 1000;
const CURSOR_SHAPE = new RegExp(`^([A-Za-z0-9_-]+)\\.([A-Za-z0-9_-]{${LIST_CURSOR_TAG_LENGTH}})$`);

/** The sort as `sort` takes it, the form a cursor records. */
export function sortText(sort: readonly { field: string; direction: 'asc' | 'desc' }[]): string {
  return sort.map((key) => `${key.direction === 'desc' ? '-' : ''}${key.field}`).join(',');
}

/** The payload half of a cursor (the server appends `.<tag>`). */
export function encodeListCursorPayload(payload: ListCursorPayload): string {
  const json = JSON.stringify([payload.page, payload.sort, payload.values, payload.id]);
  return base64url(new TextEncoder().encode(json));
}

/**
 * A cursor's payload and tag, or the reason it is not a cursor. The tag is only split off
 * here: whether it belongs to the caller's organization is the server's check.
 */
export function decodeListCursor(cursor: string): ListCursor | string {
  const malformed = 'cursor is not a list cursor: pass the cursor from links.next as it is';
  if (cursor.length > LIST_CURSOR_MAX_LENGTH) return malformed;
  const match = CURSOR_SHAPE.exec(cursor);
  if (!match) return malformed;
  let decoded: unknown;
  try {
    decoded = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(fromBase64url(match[1]!)),
    );
  } catch {
    return malformed;
  }
  if (!Array.isArray(decoded) || decoded.length !== 4) return malformed;
  const [page, sort, values, id] = decoded as unknown[];
  const valid =
    Number.isSafeInteger(page) &&
    (page as number) >= 2 &&
    typeof sort === 'string' &&
    Array.isArray(values) &&
    values.every(isCursorValue) &&
    typeof id === 'string' &&
    id.length > 0 &&
    id.length <= 64;
  if (!valid) return malformed;
  return {
    page: page as number,
    sort,
    values,
    id,
    encoded: match[1]!,
    tag: match[2]!,
  };
}

function isCursorValue(value: unknown): value is CursorValue {
  return (
    value === null ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    (typeof value === 'string' && value.length <= MAX_VALUE_LENGTH)
  );
}

// btoa/atob exist in browsers and in Node alike (the contract runs in both).
function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/** A request's `cursor` decoded, or null after adding the issue that names what is wrong. */
export function cursorOf(
  raw: Record<string, unknown>,
  sort: ListQuery['sort'],
  ctx: z.RefinementCtx,
): ListCursor | null {
  const refuse = (message: string) => {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['cursor'], message });
    return null;
  };
  if (raw.page !== undefined)
    return refuse('page and cursor cannot be used together: a cursor names its own page');
  const cursor = decodeListCursor(raw.cursor as string);
  if (typeof cursor === 'string') return refuse(cursor);
  if (cursor.values.length !== sort.length || cursor.sort !== sortText(sort))
    return refuse(
      `cursor was made for sort=${cursor.sort}: repeat that sort, or start again without a cursor`,
    );
  return cursor;
}
