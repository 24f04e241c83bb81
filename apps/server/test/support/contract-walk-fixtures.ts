/**
 * The contract walk's fixtures (test/contract-walk.e2e-spec.ts): one record of every kind,
 * created through the API in dependency order. A new collection needs a fixture in FIXTURES;
 * the walk fails until it has one.
 */
import {
  contract,
  type IdKind,
  idPattern,
  RESOURCE_NAMES,
  resourceContractKey,
  RESOURCES,
  type ResourceName,
  type Scope,
} from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import type { z } from 'zod';
import { RequestLogWriter } from '../../src/request-logs/request-log-writer';
import {
  FIELD_KINDS,
  describeResponse,
  type Refs,
  type WalkedBody,
  type WalkResponse,
} from './contract-walk-routes';
import { exampleBody, exampleChange } from './example-body';
import { rawCall, type TestServer } from './server';

export interface Fixture {
  collection: string;
  kind: IdKind;
  /**
   * A valid create body, given the ids of the records already created (by collection); omit it
   * for a read-only collection, whose record is then the newest one the others produced.
   */
  body?(refs: Refs, n: number): Record<string, unknown>;
  /**
   * For a collection created through another route or page: makes its record, answering 2xx
   * with it. `post` sends a body-less POST with the walk's token, `token` is that token.
   */
  create?(
    refs: Refs,
    post: (path: string) => Promise<WalkResponse>,
    env: { server: TestServer; token: string; n: number },
  ): Promise<WalkResponse>;
  /** Where the collection is listed, when not at `/v1/<collection>`. */
  listPath?(refs: Refs): string;
  /** False for a collection whose creation writes no event. */
  emitsEvent?: boolean;
  /** Records every organization has before the fixtures (its own API token). */
  preexisting?: number;
  /**
   * For a collection with delegating routes: what makes a record as wide as can be (every
   * scope, every event), so a narrower caller must be refused when it acts on it.
   */
  widest?: Record<string, unknown>;
  /** For a collection with an update route: a body that changes a record. */
  change?(n: number): Record<string, unknown>;
  /**
   * A resource the caller's organization has exactly one of (`/v1/organization`): no id,
   * nothing to create or list; it belongs to the caller's organization by construction.
   */
  singleton?: boolean;
  /** Its creation is written to the audit log (made with a token, so never anonymous). */
  /** It writes audit entries when created: `true` for one, or how many. */
  audited?: boolean | number;
  /** For a read-only collection not fed by events: its total once the fixtures are made. */
  total?(fixtures: readonly Fixture[]): number;
  /** Scopes its create body needs besides the route's own (an export: its collection's read scope). */
  bodyScopes?: readonly Scope[];
  /**
   * The request log: every request the organization makes adds a record, so it has no fixed
   * total and its newest records are the walk's own requests. Isolation is still checked: none
   * of another organization's records ever shows.
   */
  growsWithEveryRequest?: boolean;
}

/**
 * What a resource's create body needs beyond its schema's required fields, for a rule across
 * records: exam results need an active enrollment of their student in the exam's course.
 */
export const BODY_BEYOND_SCHEMA: Partial<Record<ResourceName, Record<string, unknown>>> = {
  enrollments: { status: 'active' },
};

export const FIXTURES: readonly Fixture[] = [
  // The registry's resources, in its order (a resource's references come before it), with
  // bodies made from their contract schemas.
  ...RESOURCE_NAMES.map((name): Fixture => {
    const routes = contract[resourceContractKey(name)] as Record<string, AppRoute>;
    const bodyOf = (route: string) => (routes[route] as unknown as { body: z.AnyZodObject }).body;
    return {
      collection: name,
      kind: RESOURCES[name].singular,
      body: (refs, n) => ({
        ...exampleBody(bodyOf('create'), refs, n),
        ...BODY_BEYOND_SCHEMA[name],
      }),
      ...(routes.update && { change: (n: number) => exampleChange(bodyOf('update'), n) }),
    };
  }),
  {
    collection: 'webhook_endpoints',
    kind: 'webhook_endpoint',
    body: () => ({ url: 'https://hooks.school.test/hooks', events: ['*'] }),
    emitsEvent: false,
    audited: true,
    widest: { events: ['*'] },
    change: (n) => ({ description: `walk ${n}` }),
  },
  {
    // A delivery is made by the endpoint's `test` (a ping), and listed under its endpoint.
    collection: 'webhook_deliveries',
    kind: 'webhook_message',
    create: (refs, post) => post(`/v1/webhook_endpoints/${refs.webhook_endpoints}/test`),
    listPath: (refs) => `/v1/webhook_endpoints/${refs.webhook_endpoints}/deliveries`,
  },
  {
    collection: 'personal_access_tokens',
    kind: 'personal_access_token',
    // Within the scope a token needs to create it: the walk sends it with only that scope.
    body: (_refs, n) => ({ name: `walk ${n}`, scopes: ['tokens:write'] }),
    emitsEvent: false,
    audited: true,
    preexisting: 1,
    widest: { scopes: ['all'] },
  },
  {
    collection: 'oauth_clients',
    kind: 'oauth_client',
    body: (_refs, n) => ({
      name: `Walk App ${n}`,
      type: 'confidential',
      redirect_uris: ['https://walk.example/callback'],
      scopes: ['oauth_clients:write'],
    }),
    emitsEvent: false,
    audited: true,
    widest: { scopes: ['all'] },
    change: (n) => ({ name: `Walk App ${n} renamed` }),
  },
  {
    collection: 'invitations',
    kind: 'invitation',
    body: (_refs, n) => ({ email: `walk${n}@invited.example`, role: 'viewer' }),
    emitsEvent: false,
    widest: { role: 'admin' },
    audited: true,
  },
  {
    // A member joins through an invitation of their own, accepted on its page (so the pending
    // invitations stay the fixture's one).
    collection: 'members',
    kind: 'user',
    create: (_refs, _post, env) => joinThroughInvitation(env),
    emitsEvent: false,
    // Its invitation created, then accepted, and the member added.
    audited: 3,
  },
  // Read-only: the fixtures above wrote events; the newest one is the record.
  { collection: 'events', kind: 'event' },
  // Read-only: each audited creation above wrote one; the newest is the record. The operator's
  // creation of the organization's own token is recorded too.
  {
    collection: 'audit_events',
    kind: 'audit_event',
    preexisting: 1,
    total: (fixtures) => 1 + fixtures.reduce((sum, f) => sum + Number(f.audited ?? 0), 0),
  },
  // The change feed: the organization's one feed, read after a cursor (no id, nothing to create).
  { collection: 'changes', kind: 'event', singleton: true },
  {
    // An export of the students fixture; made with 202 and run in the background, so the walk
    // waits for it to finish before reading it (its status would change under the walk).
    collection: 'exports',
    kind: 'export',
    body: () => ({ collection: 'students' }),
    create: async (_refs, _post, env) => {
      const made = await rawCall<WalkedBody>(env.server, '/v1/exports', {
        method: 'POST',
        token: env.token,
        headers: JSON_BODY,
        body: JSON.stringify({ collection: 'students' }),
      });
      if (made.status !== 202) return made;
      for (;;) {
        const now = await rawCall<WalkedBody>(env.server, `/v1/exports/${String(made.body.id)}`, {
          token: env.token,
        });
        if (!['queued', 'running'].includes(now.body.status as string)) return now;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    emitsEvent: false,
    audited: true,
    bodyScopes: ['students:read'],
  },
  {
    // An import of an empty students file (so it writes no student and no event), made with
    // 202 and run in the background: the walk waits for it to finish, as for the export.
    collection: 'imports',
    kind: 'import',
    create: async (_refs, _post, env) => {
      const form = new FormData();
      form.append('file', new Blob([''], { type: 'application/x-ndjson' }), 'walk.ndjson');
      const res = await fetch(`${env.server.url}/v1/imports?collection=students`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${env.token}` },
        body: form,
      });
      const made = {
        status: res.status,
        headers: res.headers,
        body: (await res.json()) as WalkedBody,
      };
      if (made.status !== 202) return made;
      for (;;) {
        const now = await rawCall<WalkedBody>(env.server, `/v1/imports/${String(made.body.id)}`, {
          token: env.token,
        });
        if (!['queued', 'running'].includes(now.body.status as string)) return now;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    emitsEvent: false,
    audited: true,
    bodyScopes: ['students:write'],
  },
  // The collections' checksums: one answer per organization (no id, nothing to create).
  { collection: 'collections', kind: 'export', singleton: true },
  // Read-only and fed by every request: the newest entry once the writer has flushed.
  {
    collection: 'request_logs',
    kind: 'request_log',
    growsWithEveryRequest: true,
    emitsEvent: false,
    create: async (_refs, _post, env) => {
      await env.server.app.get(RequestLogWriter).flush();
      const res = await rawCall<WalkedBody>(env.server, '/v1/request_logs?per_page=1', {
        token: env.token,
      });
      return { ...res, body: res.body.data![0] as WalkedBody };
    },
  },
  {
    collection: 'organization',
    kind: 'organization',
    singleton: true,
    change: (n) => ({ name: `Walk ${n}` }),
  },
  // Figures about the caller's own organization: no id, nothing to create or list.
  { collection: 'usage', kind: 'organization', singleton: true },
  {
    // A sandbox with an empty school (it sends no event; its seed writes none either).
    collection: 'sandboxes',
    kind: 'organization',
    body: (_refs, n) => ({ name: `Walk sandbox ${n}`, students: 0 }),
    emitsEvent: false,
    audited: true,
    // Its token route hands out scopes (probed asking for all); a sandbox itself grants none.
    widest: {},
  },
  // The trigger: a sandbox's token changes its sandbox (nothing to create or list).
  { collection: 'sandbox', kind: 'event', singleton: true },
];

/** The fixtures that are records with ids (all but the singletons). */
export const RECORD_FIXTURES = FIXTURES.filter((f) => !f.singleton);
/** Invites a viewer with the walk's token and accepts on the HTML page; answers the new member. */
export async function joinThroughInvitation(env: {
  server: TestServer;
  token: string;
  n: number;
}): Promise<WalkResponse> {
  const invited = await rawCall<WalkedBody>(env.server, '/v1/invitations', {
    method: 'POST',
    token: env.token,
    headers: JSON_BODY,
    body: JSON.stringify({ email: `member${env.n}@walk.example`, role: 'viewer' }),
  });
  if (invited.status !== 201) return invited;
  const token = new URL(invited.body.accept_url as string).searchParams.get('token') ?? '';
  const password = 'quiet orchard lantern piano';
  const accepted = await fetch(`${env.server.url}/invitations/accept`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, password, password_confirmation: password }).toString(),
  });
  if (accepted.status !== 303) {
    return {
      status: accepted.status,
      headers: accepted.headers,
      body: { page: await accepted.text() },
    };
  }
  const list = await rawCall<WalkedBody>(env.server, '/v1/members?sort=-created_at&per_page=1', {
    token: env.token,
  });
  return { ...list, body: list.body.data?.[0] ?? {} };
}

export const makesRecord = (fixture: Fixture) => Boolean(fixture.body ?? fixture.create);

/**
 * A collection's list total once the fixtures are made: one record per created collection, and
 * one event per creation that emits one.
 */
export function expectedTotal(fixture: Fixture): number {
  const events = FIXTURES.filter((f) => makesRecord(f) && f.emitsEvent !== false).length;
  return makesRecord(fixture)
    ? 1 + (fixture.preexisting ?? 0)
    : (fixture.total?.(FIXTURES) ?? events);
}

/** The create body of a collection that has a create route. */
export function createBody(fixture: Fixture, refs: Refs, n: number): Record<string, unknown> {
  if (!fixture.body) throw new Error(`The ${fixture.collection} fixture has no create body`);
  return fixture.body(refs, n);
}

export function fixtureFor(collection: string, what: string): Fixture {
  const fixture = FIXTURES.find((f) => f.collection === collection);
  if (!fixture) {
    throw new Error(
      `No fixture for collection '${collection}' (${what}): add one to FIXTURES in test/support/contract-walk-fixtures.ts`,
    );
  }
  return fixture;
}

/** `student_id` → the students fixture. */
export function fixtureForField(field: string, what: string): Fixture {
  const kind = FIELD_KINDS[field] ?? field.slice(0, -'_id'.length);
  const fixture = FIXTURES.find((f) => f.kind === kind);
  if (!fixture) {
    throw new Error(
      `No fixture of kind '${kind}' for the reference field '${field}' (${what}): add one to FIXTURES in test/support/contract-walk-fixtures.ts`,
    );
  }
  return fixture;
}

let counter = 0;
export const next = () => ++counter;

/** The header of a JSON request body. */
export const JSON_BODY = { 'Content-Type': 'application/json' };

/** Creates one record of every kind in the token's organization; returns them by collection. */
export async function createFixtures(
  server: TestServer,
  token: string,
): Promise<Record<string, Record<string, unknown>>> {
  const refs: Refs = {};
  const records: Record<string, Record<string, unknown>> = {};
  for (const fixture of RECORD_FIXTURES) {
    let record: Record<string, unknown>;
    if (fixture.create) {
      const res = await fixture.create(
        refs,
        (path) => rawCall<WalkedBody>(server, path, { method: 'POST', token }),
        { server, token, n: next() },
      );
      if (res.status >= 300) {
        throw new Error(`Creating the ${fixture.kind} fixture failed: ${describeResponse(res)}`);
      }
      record = res.body;
    } else if (fixture.body) {
      const res = await rawCall<WalkedBody>(server, `/v1/${fixture.collection}`, {
        method: 'POST',
        token,
        headers: JSON_BODY,
        body: JSON.stringify(fixture.body(refs, next())),
      });
      if (res.status !== 201) {
        throw new Error(`Creating the ${fixture.kind} fixture failed: ${describeResponse(res)}`);
      }
      record = res.body;
    } else {
      const res = await rawCall<WalkedBody>(server, `/v1/${fixture.collection}?per_page=1`, {
        token,
      });
      const first = res.body.data?.[0];
      if (res.status !== 200 || !first) {
        throw new Error(`Finding a ${fixture.kind} fixture failed: ${describeResponse(res)}`);
      }
      record = first;
    }
    expect(record.id).toMatch(idPattern(fixture.kind));
    refs[fixture.collection] = record.id as string;
    records[fixture.collection] = record;
  }
  return records;
}

/** The ids of the records `createFixtures` made, by collection. */
export const idsOf = (records: Record<string, Record<string, unknown>>): Refs =>
  Object.fromEntries(Object.entries(records).map(([c, r]) => [c, r.id as string]));

/** Each collection's list total as the token sees it (the request log aside: it has none fixed). */
export async function listTotals(
  server: TestServer,
  token: string,
  refs: Refs,
): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const fixture of RECORD_FIXTURES) {
    if (fixture.growsWithEveryRequest) continue;
    const path = fixture.listPath?.(refs) ?? `/v1/${fixture.collection}`;
    const res = await rawCall<WalkedBody>(server, path, { token });
    expect(res.status).toBe(200);
    totals[fixture.collection] = Number(res.body.meta?.total);
  }
  return totals;
}
