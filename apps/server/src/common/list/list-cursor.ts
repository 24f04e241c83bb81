import { hash } from 'node:crypto';
import {
  type CursorValue,
  encodeListCursorPayload,
  LIST_CURSOR_TAG_LENGTH,
  type ListCursor,
  type ListCursorPayload,
} from '@platform/contract';
import { ProblemException } from '../problem.exception';

/**
 * The list cursors of `links.next` (the contract's list-cursor.ts reads them): the payload and a
 * tag binding it to one organization's collection. As with the feed's cursors (decision 0027),
 * the tag is a hash, not a secret: a cursor grants nothing without the organization's token (the
 * page's statement is scoped to the caller's organization whatever the cursor says); it lets a
 * list refuse a cursor of another organization or another list instead of answering a page of
 * the wrong place.
 */
export function encodeListCursor(
  organizationId: string,
  collection: string,
  payload: ListCursorPayload,
): string {
  const encoded = encodeListCursorPayload(payload);
  return `${encoded}.${listCursorTag(organizationId, collection, encoded)}`;
}

/** Throws the 400 naming `query.cursor` unless the cursor was made for this organization's list. */
export function checkListCursor(
  organizationId: string,
  collection: string,
  cursor: ListCursor,
): void {
  if (cursor.tag !== listCursorTag(organizationId, collection, cursor.encoded))
    throw badListCursor('cursor is not a cursor of this list: pass the cursor from links.next');
}

/** The 400 for a cursor the list cannot read, naming `query.cursor`. */
export function badListCursor(message: string): ProblemException {
  return new ProblemException('validation_error', message, {
    errors: [{ path: 'query.cursor', message, code: 'invalid_cursor' }],
  });
}

/** A sort key's value as a cursor carries it: a timestamp as ISO 8601 text. */
export function cursorValue(value: unknown): CursorValue {
  if (value instanceof Date) return value.toISOString();
  if (value === null || value === undefined) return null;
  return value as string | number;
}

function listCursorTag(organizationId: string, collection: string, encoded: string): string {
  return hash(
    'sha256',
    `list-cursor\0${organizationId}\0${collection}\0${encoded}`,
    'base64url',
  ).slice(0, LIST_CURSOR_TAG_LENGTH);
}

const NUMERIC_TYPES = new Set<unknown>([
  Number,
  'integer',
  'int',
  'bigint',
  'real',
  'numeric',
  'double precision',
]);
const TIMESTAMP_TYPES = new Set<unknown>([Date, 'datetime', 'timestamptz', 'timestamp']);

/**
 * A cursor's key value as its column takes it (a timestamp as a Date), or the 400 naming
 * `query.cursor` when it cannot be one of the column's values.
 */
export function cursorKey(
  value: string | number | null,
  column: { type: unknown; isNullable: boolean } | undefined,
): string | number | Date | null {
  const refuse = () =>
    badListCursor('cursor is not a cursor of this list: pass the cursor from links.next');
  if (!column) throw refuse();
  if (value === null) {
    if (!column.isNullable) throw refuse();
    return null;
  }
  if (TIMESTAMP_TYPES.has(column.type)) {
    const date = typeof value === 'string' ? new Date(value) : undefined;
    if (!date || Number.isNaN(date.getTime()) || date.toISOString() !== value) throw refuse();
    return date;
  }
  if (typeof value !== (NUMERIC_TYPES.has(column.type) ? 'number' : 'string')) throw refuse();
  return value;
}
