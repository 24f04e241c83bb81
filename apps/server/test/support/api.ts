/**
 * A client typed by the contract, for the e2e tests: requests and responses are the contract's
 * own types (ts-rest's `initClient` over `@platform/contract`), so renaming a field there fails
 * the type-check of every test that reads or sends it. Tests that send what the contract forbids
 * (malformed bodies, unknown fields, raw bytes) keep the untyped `call`/`client` in server.ts.
 */
import { contract } from '@platform/contract';
import { initClient } from '@ts-rest/core';
import type { TestServer } from '../../src/testing';

/** `server` is a test server, or anything with its `url` (a spawned `node dist/main.js`). */
export function typedClient(server: Pick<TestServer, 'url'>, token?: string) {
  return initClient(contract, {
    baseUrl: server.url,
    baseHeaders: token ? { authorization: `Bearer ${token}` } : {},
    // The tests assert on every status themselves, including ones a route does not declare.
    throwOnUnknownStatus: false,
  });
}

export type TypedClient = ReturnType<typeof typedClient>;

/**
 * Fails the test unless `res` has `status`, then narrows it to that status's declared response:
 * `expectStatus(await api.students.create({ body }), 201).body.id` is a typed student id.
 */
export function expectStatus<R extends { status: number; body: unknown }, S extends R['status']>(
  res: R,
  status: S,
): Extract<R, { status: S }> {
  if (res.status !== status) {
    throw new Error(`expected HTTP ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return res as Extract<R, { status: S }>;
}

/** The query a typed client method takes, e.g. `QueryOf<TypedClient['courses']['list']>`. */
export type QueryOf<M> = M extends (args: infer A) => unknown
  ? NonNullable<A> extends { query?: infer Q }
    ? NonNullable<Q>
    : never
  : never;

/** The body a typed client method takes, e.g. `BodyOf<TypedClient['courses']['create']>`. */
export type BodyOf<M> = M extends (args: infer A) => unknown
  ? NonNullable<A> extends { body: infer B }
    ? B
    : never
  : never;

/** The position a feed cursor names: the number before its dot, as the docs promise (`0`: 0). */
export function positionOf(cursor: string | null | undefined): number {
  if (cursor === '0') return 0;
  const [position, tag] = String(cursor).split('.');
  if (tag === undefined || !/^[0-9]+$/.test(position!)) throw new Error(`not a cursor: ${cursor}`);
  return Number(position);
}
