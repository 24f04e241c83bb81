/**
 * Walks every route of the contract, so a route added later is covered without anyone
 * remembering to: organization isolation (another organization's ids are 404, its records
 * never appear in lists and cannot be referenced), scopes (403 without the route's scope,
 * fine with only it), 401 without a token, both path prefixes, and delegation (an operation
 * that makes or changes a credential or a webhook endpoint refuses a caller with narrower
 * scopes, and what it makes does not outlive a caller with a shorter lifetime).
 *
 * A new collection needs a fixture in FIXTURES below; the walk fails until it has one. An
 * operation that hands out scopes, events, an expiry or a secret fails the walk until its
 * contract metadata says which delegation rule it follows (`delegation`).
 */
import {
  ALL_SCOPES,
  API_PREFIXES,
  contract,
  EVENT_READ_SCOPES,
  EVENT_TYPES,
  EventSchema,
  type IdKind,
  idPattern,
  operationMetadata,
  readScopesForEvents,
  RESOURCE_NAMES,
  resourceContractKey,
  RESOURCES,
  type ResourceName,
  type Role,
  ROLE_SCOPES,
  type Scope,
} from '@platform/contract';
import { type AppRoute, type AppRouter, ContractNoBody, isAppRoute } from '@ts-rest/core';
import type { z } from 'zod';
import { RequestLogWriter } from '../src/request-logs/request-log-writer';
import { exampleBody, exampleChange } from './support/example-body';
import {
  problemOf,
  rawCall,
  type RawResponse,
  startServer,
  type TestServer,
} from './support/server';

/** Any route's answer as the walk reads it: a record, a page of records, or a problem. */
type WalkedBody = Record<string, unknown> & {
  data?: Record<string, unknown>[];
  meta?: { total: number };
};
type WalkResponse = RawResponse<WalkedBody>;

// ---------------------------------------------------------------------------------------------
// The routes
// ---------------------------------------------------------------------------------------------

interface WalkedRoute {
  /** Where it sits in the contract, e.g. `enrollments.activate`. */
  key: string;
  route: AppRoute;
  /** `GET /v1/students/:id` */
  name: string;
}

function walk(router: AppRouter, at: string[] = []): WalkedRoute[] {
  return Object.entries(router).flatMap(([key, entry]): WalkedRoute[] =>
    isAppRoute(entry)
      ? [{ key: [...at, key].join('.'), route: entry, name: `${entry.method} ${entry.path}` }]
      : walk(entry, [...at, key]),
  );
}

const ROUTES = walk(contract);
/**
 * Routes about the caller's own token (`GET /v1/token`): they declare `scope: null` (any valid
 * token) and belong to no collection. Only these may; every other route names its scope.
 */
const SELF_ROUTES = ROUTES.filter((r) => operationMetadata(r.route)?.scope === null);
const SELF_PATHS = ['/v1/token', '/v1/user', '/v1/user/password'];
/** Self routes about the calling member: they need a token acting for one (403 otherwise). */
const USER_ROUTES = SELF_ROUTES.filter((r) => operationMetadata(r.route)?.requiresUser);
const TOKEN_SELF_ROUTES = SELF_ROUTES.filter((r) => !USER_ROUTES.includes(r));
/** Bodies for routes that are neither creates nor take `{}`: valid in shape, whatever they then answer. */
const ROUTE_BODIES: Record<string, (refs: Refs) => Record<string, unknown>> = {
  'user.changePassword': () => ({
    current_password: 'not the password, surely',
    new_password: 'a long enough new password',
  }),
  // The walk's member (the members fixture); in another organization's walk, an id it lacks.
  'webhookEndpoints.transfer': (refs) => ({
    member_id: refs.members ?? 'usr_01J00000000000000000000000',
  }),
  'oauthClients.transfer': (refs) => ({
    member_id: refs.members ?? 'usr_01J00000000000000000000000',
  }),
  'webhookEndpoints.replayFailed': () => ({
    since: new Date(Date.now() - 3_600_000).toISOString(),
  }),
};

/** Reference fields named otherwise than their kind: `member_id` is a user (`usr_…`). */
const FIELD_KINDS: Record<string, IdKind> = { member_id: 'user' };
const COLLECTION_ROUTES = ROUTES.filter((r) => !SELF_ROUTES.includes(r));
const ID_ROUTES = ROUTES.filter((r) => r.route.path.includes('/:id'));
const LIST_ROUTES = ROUTES.filter((r) => operationMetadata(r.route)?.list === true);
/** Top-level collections; a nested list (`/v1/webhook_endpoints/:id/deliveries`) is an id route. */
const COLLECTION_LIST_ROUTES = LIST_ROUTES.filter((r) => !r.route.path.includes('/:id'));

/** The collection a route belongs to: `/v1/exam_results/:id/publish` → `exam_results`. */
function collectionOf(route: AppRoute): string {
  const match = /^\/v1\/([a-z_]+)(?:\/|$)/.exec(route.path);
  if (!match) throw new Error(`Route ${route.method} ${route.path} is not under /v1/<collection>`);
  return match[1]!;
}

function scopeOf(route: AppRoute): Scope {
  const scope = operationMetadata(route)?.scope ?? undefined;
  if (!scope) throw new Error(`Route ${route.method} ${route.path} has no metadata.scope`);
  return scope;
}

/** The body schema's object shape, through `.optional()`, `.default()`, refinements. */
function objectShape(schema: unknown): Record<string, unknown> | undefined {
  let current = schema as { shape?: Record<string, unknown>; _def?: Record<string, unknown> };
  for (let depth = 0; current && depth < 10; depth++) {
    if (current.shape && typeof current.shape === 'object') return current.shape;
    current = (current._def?.innerType ?? current._def?.schema) as typeof current;
  }
  return undefined;
}

interface ZodLike {
  safeParse(value: unknown): { success: boolean; error?: unknown };
}

function bodySchemaOf(route: AppRoute): ZodLike | 'none' {
  if (route.method === 'GET' || !('body' in route) || route.body === ContractNoBody) return 'none';
  return route.body as ZodLike;
}

/** Create routes: POST to the collection itself. */
function isCreateRoute(route: AppRoute): boolean {
  return route.method === 'POST' && route.path === `/v1/${collectionOf(route)}`;
}

/** Body fields that name another record: `student_id`, `exam_id`, … */
function referenceFieldsOf(route: AppRoute): string[] {
  const schema = bodySchemaOf(route);
  if (schema === 'none') return [];
  return Object.keys(objectShape(schema) ?? {}).filter((field) => field.endsWith('_id'));
}

const REFERENCE_ROUTES = ROUTES.filter(
  (r) => isCreateRoute(r.route) && referenceFieldsOf(r.route).length > 0,
);

/** Fields through which an operation hands out authority: what a credential or endpoint can do, and for how long. */
const AUTHORITY_FIELDS = ['scopes', 'events', 'expires_at'];
/**
 * Routes whose authority-looking fields hand out nothing: an export's `expires_at` is when its
 * file is deleted, and downloading the file still needs a token with the export's scopes. An
 * export's download link does hand out a secret, but no scope or record to walk: it reads one
 * file, is bound to the caller's credential and member (checked at each use) and expires no
 * later than the caller; export-download-links.e2e-spec.ts holds it to that.
 */
const NOT_AUTHORITY: readonly string[] = ['exports.create', 'exports.createDownloadLink'];

/** The fields of the route's body and of its success responses. */
function fieldsOf(route: AppRoute): string[] {
  const body = bodySchemaOf(route);
  const responses = Object.entries(route.responses)
    .filter(([status]) => Number(status) < 300)
    .map(([, schema]) => objectShape(schema) ?? {});
  return [body === 'none' ? {} : (objectShape(body) ?? {}), ...responses].flatMap(Object.keys);
}

/**
 * A write that hands out or takes over authority: a field above in its body or response, or a
 * secret shown once. Each must declare its delegation rule in the contract.
 */
function handsOutAuthority(route: AppRoute): boolean {
  if (route.method === 'GET') return false;
  if (ROUTES.some((r) => r.route === route && NOT_AUTHORITY.includes(r.key))) return false;
  if (operationMetadata(route)?.oneTimeSecret) return true;
  return fieldsOf(route).some((field) => AUTHORITY_FIELDS.includes(field));
}

const WRITE_ROUTES = ROUTES.filter((r) => r.route.method !== 'GET');

/** Whether a schema holds the contract's event schema anywhere inside it. */
function holdsEvents(schema: unknown, seen = new Set<unknown>()): boolean {
  if (schema === EventSchema) return true;
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return false;
  seen.add(schema);
  const { shape, _def: def } = schema as { shape?: unknown; _def?: Record<string, unknown> };
  const parts: unknown[] = [shape, ...Object.values(def ?? {})];
  if (typeof def?.shape === 'function') parts.push((def.shape as () => unknown)());
  return parts.some((part) =>
    Array.isArray(part)
      ? part.some((item) => holdsEvents(item, seen))
      : part && typeof part === 'object' && !('_def' in part)
        ? Object.values(part).some((value) => holdsEvents(value, seen))
        : holdsEvents(part, seen),
  );
}

/** Routes whose answer carries events (their `data`): each must apply the per-type read rule. */
const EVENT_ROUTES = ROUTES.filter(
  (r) =>
    r.route.method === 'GET' && holdsEvents((r.route.responses as Record<number, unknown>)[200]),
);
/** The scopes that guard some event type's data (`students:read` for `student.*`, …). */
const EVENT_DATA_SCOPES = [
  ...new Set<Scope>(Object.values(EVENT_READ_SCOPES).filter((scope) => scope !== null)),
].sort();

/** Every event anywhere in an answer (a page's `data`, a feed's changes, a record itself). */
function eventsIn(value: unknown): { id: string; type: string }[] {
  if (Array.isArray(value)) return value.flatMap(eventsIn);
  if (!value || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const self =
    record.object === 'event' && typeof record.type === 'string'
      ? [{ id: String(record.id), type: record.type }]
      : [];
  return [...self, ...Object.values(record).flatMap(eventsIn)];
}
const DELEGATING_ROUTES = ROUTES.filter((r) => operationMetadata(r.route)?.delegation);
const delegationOf = (route: AppRoute) => operationMetadata(route)?.delegation;

// ---------------------------------------------------------------------------------------------
// Fixtures: one record of every kind, created through the API in dependency order
// ---------------------------------------------------------------------------------------------

type Refs = Record<string, string>;

interface Fixture {
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
const BODY_BEYOND_SCHEMA: Partial<Record<ResourceName, Record<string, unknown>>> = {
  enrollments: { status: 'active' },
};

const FIXTURES: readonly Fixture[] = [
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
];

/** The fixtures that are records with ids (all but the singletons). */
const RECORD_FIXTURES = FIXTURES.filter((f) => !f.singleton);
/** Invites a viewer with the walk's token and accepts on the HTML page; answers the new member. */
async function joinThroughInvitation(env: {
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

const makesRecord = (fixture: Fixture) => Boolean(fixture.body ?? fixture.create);

/** The create body of a collection that has a create route. */
function createBody(fixture: Fixture, refs: Refs, n: number): Record<string, unknown> {
  if (!fixture.body) throw new Error(`The ${fixture.collection} fixture has no create body`);
  return fixture.body(refs, n);
}

function fixtureFor(collection: string, what: string): Fixture {
  const fixture = FIXTURES.find((f) => f.collection === collection);
  if (!fixture) {
    throw new Error(
      `No fixture for collection '${collection}' (${what}): add one to FIXTURES in test/contract-walk.e2e-spec.ts`,
    );
  }
  return fixture;
}

/** `student_id` → the students fixture. */
function fixtureForField(field: string, what: string): Fixture {
  const kind = FIELD_KINDS[field] ?? field.slice(0, -'_id'.length);
  const fixture = FIXTURES.find((f) => f.kind === kind);
  if (!fixture) {
    throw new Error(
      `No fixture of kind '${kind}' for the reference field '${field}' (${what}): add one to FIXTURES in test/contract-walk.e2e-spec.ts`,
    );
  }
  return fixture;
}

let counter = 0;
const next = () => ++counter;

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

const JSON_BODY = { 'Content-Type': 'application/json' };

/**
 * The smallest valid body: none for `c.noBody()`, `{}` where the schema takes it (PATCH, the
 * optional bodies), `undefined` where it takes nothing, else the collection's fixture body.
 */
function minimalBody(walked: WalkedRoute, refs: Refs): Record<string, unknown> | undefined {
  const schema = bodySchemaOf(walked.route);
  if (schema === 'none') return undefined;
  const fixed = ROUTE_BODIES[walked.key];
  if (fixed) return fixed(refs);
  if (schema.safeParse({}).success) return {};
  if (schema.safeParse(undefined).success) return undefined;
  if (!isCreateRoute(walked.route)) {
    throw new Error(`No minimal body for ${walked.name}: teach minimalBody() about it`);
  }
  const body = createBody(fixtureFor(collectionOf(walked.route), walked.name), refs, next());
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new Error(
      `The fixture body for ${walked.name} no longer fits the contract: ${JSON.stringify(parsed.error)}`,
    );
  }
  return body;
}

/** The route's path under `prefix`, with `:id` replaced by the id of its collection's record. */
function concretePath(walked: WalkedRoute, prefix: string, refs: Refs): string {
  const { route } = walked;
  let path = route.path;
  if (path.includes(':id')) {
    const collection = collectionOf(route);
    fixtureFor(collection, walked.name);
    const id = refs[collection];
    if (!id) throw new Error(`No ${collection} record to put into ${walked.name}`);
    path = path.replace(':id', id);
  }
  const leftover = /:[A-Za-z_]+/.exec(path);
  if (leftover) throw new Error(`${walked.name}: no value for path parameter ${leftover[0]}`);
  return `${prefix}${path.slice('/v1'.length)}`;
}

function send(
  server: TestServer,
  walked: WalkedRoute,
  options: { prefix?: string; refs: Refs; token?: string; body?: Record<string, unknown> },
): Promise<WalkResponse> {
  const body = 'body' in options ? options.body : minimalBody(walked, options.refs);
  return rawCall<WalkedBody>(server, concretePath(walked, options.prefix ?? '/v1', options.refs), {
    method: walked.route.method,
    ...(options.token && { token: options.token }),
    ...(body !== undefined && { headers: JSON_BODY, body: JSON.stringify(body) }),
  });
}

function describeResponse(res: WalkResponse): string {
  return `${res.status} ${JSON.stringify(res.body)}`;
}

function expectProblem(res: WalkResponse, status: number, code: string): void {
  if (res.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${describeResponse(res)}`);
  }
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

// ---------------------------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------------------------

describe('contract walk: every route', () => {
  let server: TestServer;

  beforeAll(async () => {
    // ~70 requests go out without a token: lift the per-IP limit so none of them is a 429.
    // The dispatcher stays off: the walk's webhook endpoint points at an address outside.
    server = await startServer({ RATE_LIMIT_ANONYMOUS: '10000', WEBHOOK_DISPATCHER: 'false' });
  });
  afterAll(() => server?.close());

  /** Creates one record of every kind in the token's organization; returns them by collection. */
  async function createFixtures(token: string): Promise<Record<string, Record<string, unknown>>> {
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

  const idsOf = (records: Record<string, Record<string, unknown>>): Refs =>
    Object.fromEntries(Object.entries(records).map(([c, r]) => [c, r.id as string]));

  async function listTotals(token: string, refs: Refs): Promise<Record<string, number>> {
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

  it('finds the routes and a fixture for every collection', () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(30);
    expect(ID_ROUTES.length).toBeGreaterThan(0);
    expect(LIST_ROUTES.length).toBeGreaterThan(0);
    expect(REFERENCE_ROUTES.length).toBeGreaterThan(0);
    expect(SELF_ROUTES.map((r) => r.route.path)).toEqual(SELF_PATHS);
    for (const walked of COLLECTION_ROUTES) {
      fixtureFor(collectionOf(walked.route), walked.name);
      for (const field of referenceFieldsOf(walked.route)) fixtureForField(field, walked.name);
    }
  });

  it.each(COLLECTION_ROUTES)('$name declares one of ALL_SCOPES ($key)', ({ route }) => {
    expect(ALL_SCOPES).toContain(operationMetadata(route)?.scope);
  });

  describe('organization isolation', () => {
    let tokenA: string;
    let tokenB: string;
    /** Organization A's records as A read them (GET) before B's walk. */
    const before: Record<string, unknown> = {};
    let refsA: Refs;
    let totalsA: Record<string, number>;

    beforeAll(async () => {
      const orgA = await server.createOrganization({ name: 'School A' });
      const orgB = await server.createOrganization({ name: 'School B' });
      ({ token: tokenA } = await server.createToken(orgA.id, ['all']));
      ({ token: tokenB } = await server.createToken(orgB.id, ['all']));
      refsA = idsOf(await createFixtures(tokenA));
      for (const fixture of RECORD_FIXTURES) {
        const res = await rawCall<WalkedBody>(
          server,
          `/v1/${fixture.collection}/${refsA[fixture.collection]}`,
          {
            token: tokenA,
          },
        );
        expect(res.status).toBe(200);
        before[fixture.collection] = res.body;
      }
      totalsA = await listTotals(tokenA, refsA);
      // One record per created collection, and one event per creation that emits one.
      const events = FIXTURES.filter((f) => makesRecord(f) && f.emitsEvent !== false).length;
      for (const fixture of RECORD_FIXTURES) {
        if (fixture.growsWithEveryRequest) continue;
        expect(totalsA[fixture.collection]).toBe(
          makesRecord(fixture)
            ? 1 + (fixture.preexisting ?? 0)
            : (fixture.total?.(FIXTURES) ?? events),
        );
      }
    });

    it.each(ID_ROUTES)(
      "$name with organization A's id, as organization B, is 404 not_found",
      async (walked) => {
        const res = await send(server, walked, { refs: refsA, token: tokenB });
        expectProblem(res, 404, 'not_found');
      },
    );

    it("leaves every one of organization A's records as it was", async () => {
      for (const fixture of RECORD_FIXTURES) {
        const res = await rawCall<WalkedBody>(
          server,
          `/v1/${fixture.collection}/${refsA[fixture.collection]}`,
          {
            token: tokenA,
          },
        );
        expect(res.status).toBe(200);
        expect(res.body).toEqual(before[fixture.collection]);
      }
      expect(await listTotals(tokenA, refsA)).toEqual(totalsA);
    });

    it.each(COLLECTION_LIST_ROUTES)(
      "$name as organization B shows none of organization A's records",
      async (walked) => {
        const collection = collectionOf(walked.route);
        const fixture = fixtureFor(collection, walked.name);
        const asA = await send(server, walked, { refs: refsA, token: tokenA });
        expect(asA.status).toBe(200);
        // A log's newest records are the walk's latest requests, its fixture long off page one.
        if (fixture.growsWithEveryRequest) expect(asA.body.data?.length).toBeGreaterThan(0);
        else expect(asA.body.data?.map((r) => r.id)).toContain(refsA[collection]);

        const asB = await send(server, walked, { refs: refsA, token: tokenB });
        expect(asB.status).toBe(200);
        const idsA = Object.values(refsA);
        for (const record of asB.body.data as { id: string }[]) {
          expect(idsA).not.toContain(record.id);
        }
        // B's own log holds B's own requests; nothing else differs from the rest.
        if (fixture.growsWithEveryRequest) return;
        // Organization B sees only what it had before the fixtures (its own token).
        expect(asB.body.data).toHaveLength(fixture.preexisting ?? 0);
        expect(asB.body.meta?.total).toBe(fixture.preexisting ?? 0);
      },
    );

    describe("create bodies that reference organization A's records", () => {
      let refsB: Refs;
      let totalsB: Record<string, number>;

      beforeAll(async () => {
        refsB = idsOf(await createFixtures(tokenB));
        totalsB = await listTotals(tokenB, refsB);
      });

      async function expectNothingCreated(): Promise<void> {
        expect(await listTotals(tokenA, refsA)).toEqual(totalsA);
        expect(await listTotals(tokenB, refsB)).toEqual(totalsB);
      }

      const cases = REFERENCE_ROUTES.flatMap((walked) =>
        referenceFieldsOf(walked.route).map((field) => ({ ...walked, field })),
      );

      it.each(cases)(
        "$name as organization B with A's $field (the rest B's own) is 400 naming body.$field",
        async (walked) => {
          const { route, field } = walked;
          const fixture = fixtureFor(collectionOf(route), walked.name);
          const referenced = fixtureForField(field, walked.name);
          const body = {
            ...createBody(fixture, refsB, next()),
            [field]: refsA[referenced.collection],
          };
          const res = await send(server, walked, { refs: refsB, token: tokenB, body });
          expectProblem(res, 400, 'validation_error');
          expect(problemOf(res).errors?.map((e) => e.path)).toEqual([`body.${field}`]);
          await expectNothingCreated();
        },
      );

      it.each(REFERENCE_ROUTES)(
        "$name as organization B with only A's ids is 400 naming a reference",
        async (walked) => {
          const fields = referenceFieldsOf(walked.route);
          const body = createBody(
            fixtureFor(collectionOf(walked.route), walked.name),
            refsA,
            next(),
          );
          for (const field of fields) {
            expect(body[field]).toBe(refsA[fixtureForField(field, walked.name).collection]);
          }
          const res = await send(server, walked, { refs: refsA, token: tokenB, body });
          expectProblem(res, 400, 'validation_error');
          const paths = problemOf(res).errors?.map((e) => e.path) ?? [];
          expect(paths.length).toBeGreaterThan(0);
          for (const path of paths) expect(fields.map((f) => `body.${f}`)).toContain(path);
          await expectNothingCreated();
        },
      );
    });
  });

  describe('authentication and scopes', () => {
    let orgId: string;
    let refs: Refs;
    const tokens = new Map<string, string>();

    /** A token of the organization holding `scopes` (cached). */
    async function tokenWith(scopes: readonly Scope[]): Promise<string> {
      const key = [...scopes].sort().join(' ');
      let token = tokens.get(key);
      if (!token) {
        ({ token } = await server.createToken(orgId, scopes));
        tokens.set(key, token);
      }
      return token;
    }

    beforeAll(async () => {
      // Every route twice (both prefixes), some costing 20 units: the walk is about scopes, so
      // the organization's budget must not be what answers (docs/decisions/0019).
      orgId = (
        await server.createOrganization({
          name: 'School S',
          plan: 'enterprise',
          rateLimitPerMinute: 100_000,
        })
      ).id;
      refs = idsOf(await createFixtures(await tokenWith(ALL_SCOPES)));
    });

    const prefixed = (routes: WalkedRoute[]) =>
      API_PREFIXES.flatMap((prefix) =>
        routes.map((walked) => ({
          ...walked,
          prefix,
          label: `${walked.route.method} ${prefix}${walked.route.path.slice('/v1'.length)}`,
        })),
      );
    it.each(prefixed(ROUTES))('$label without a token is 401 invalid_token', async (walked) => {
      const res = await send(server, walked, { prefix: walked.prefix, refs });
      expectProblem(res, 401, 'unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(
        /^Bearer realm="platform", error="invalid_token"/,
      );
    });

    it.each(prefixed(TOKEN_SELF_ROUTES))(
      '$label answers any valid token, whatever its one scope',
      async (walked) => {
        for (const scope of ['students:read', 'tokens:read'] as const) {
          const res = await send(server, walked, {
            prefix: walked.prefix,
            refs,
            token: await tokenWith([scope]),
          });
          expect(res.status).toBe(200);
          expect(res.body.scopes).toEqual([scope]);
        }
      },
    );

    it.each(prefixed(USER_ROUTES))(
      '$label answers a token acting for a member whatever its one scope, and refuses (403 forbidden) one acting for no member',
      async (walked) => {
        const forNoMember = await send(server, walked, {
          prefix: walked.prefix,
          refs,
          token: await tokenWith(ALL_SCOPES),
        });
        expectProblem(forNoMember, 403, 'forbidden');
        expect(forNoMember.body.detail).toMatch(/acts for no member/);
        const memberId = refs.members!;
        for (const scope of ['students:read', 'tokens:read'] as const) {
          const { token } = await server.createToken(orgId, [scope], { userId: memberId });
          const res = await send(server, walked, { prefix: walked.prefix, refs, token });
          if ([401, 403].includes(res.status) || res.status >= 500) {
            throw new Error(
              `a member's token with only '${scope}' was refused: ${describeResponse(res)}`,
            );
          }
        }
      },
    );

    it.each(prefixed(COLLECTION_ROUTES))(
      '$label is 403 insufficient_scope without its scope, and passes with only it',
      async (walked) => {
        const scope = scopeOf(walked.route);
        const allBut = await tokenWith(ALL_SCOPES.filter((s) => s !== scope));
        const refused = await send(server, walked, { prefix: walked.prefix, refs, token: allBut });
        expectProblem(refused, 403, 'insufficient_scope');
        expect(refused.body.detail).toContain(`'${scope}'`);
        expect(refused.headers.get('www-authenticate')).toBe(
          `Bearer realm="platform", error="insufficient_scope", scope="${scope}"`,
        );

        // An endpoint's events need their read scopes too (delegation): those of the fixture's.
        const fixture = fixtureFor(collectionOf(walked.route), walked.name);
        const events =
          delegationOf(walked.route) === 'webhook_endpoint'
            ? ((createBody(fixture, refs, 0).events as string[] | undefined) ?? [])
            : [];
        // Giving a role (an invitation) needs that role's scopes too (delegation).
        const role = delegationOf(walked.route)
          ? (minimalBody(walked, refs)?.role as Role | undefined)
          : undefined;
        // Removing a member needs what they hold (the fixture member joins as a viewer).
        const target =
          collectionOf(walked.route) === 'members' && walked.route.method === 'DELETE'
            ? ROLE_SCOPES.viewer
            : [];
        const bodyScopes = isCreateRoute(walked.route) ? (fixture.bodyScopes ?? []) : [];
        const only = await tokenWith([
          scope,
          ...bodyScopes,
          ...readScopesForEvents(events),
          ...(role ? ROLE_SCOPES[role] : []),
          ...target,
        ]);
        const allowed = await send(server, walked, { prefix: walked.prefix, refs, token: only });
        if ([401, 403].includes(allowed.status) || allowed.status >= 500) {
          throw new Error(
            `a token with only '${scope}'${events.length ? ' (and the read scopes of its events)' : ''} was refused: ${describeResponse(allowed)}`,
          );
        }
        expect(['unauthorized', 'forbidden', 'insufficient_scope']).not.toContain(
          allowed.body?.code,
        );
      },
    );
  });
  describe('per-type read scopes of events', () => {
    let orgId: string;
    let refs: Refs;
    let all: string;

    beforeAll(async () => {
      orgId = (
        await server.createOrganization({
          name: 'School E',
          plan: 'enterprise',
          rateLimitPerMinute: 100_000,
        })
      ).id;
      ({ token: all } = await server.createToken(orgId, ALL_SCOPES));
      refs = idsOf(await createFixtures(all));
    });

    it('finds the routes that return events', () => {
      expect(EVENT_ROUTES.map((r) => r.key)).toEqual(
        expect.arrayContaining(['events.list', 'events.retrieve', 'events.changes']),
      );
      expect(EVENT_DATA_SCOPES.length).toBeGreaterThanOrEqual(5);
    });

    const cases = API_PREFIXES.flatMap((prefix) =>
      EVENT_ROUTES.flatMap((walked) =>
        EVENT_DATA_SCOPES.map((withheld) => ({
          walked,
          prefix,
          withheld,
          label: `${walked.route.method} ${prefix}${walked.route.path.slice('/v1'.length)}`,
        })),
      ),
    );
    it.each(cases)(
      '$label gives a token without $withheld none of the events that scope reads (404 by id)',
      async ({ walked, prefix, withheld }) => {
        const guarded = EVENT_TYPES.filter((type) => EVENT_READ_SCOPES[type] === withheld);
        const found = await rawCall<WalkedBody>(
          server,
          `/v1/events?type=${guarded.join(',')}&per_page=1`,
          { token: all },
        );
        const event = found.body.data?.[0];
        if (!event) throw new Error(`the fixtures made no event of ${guarded.join(', ')}`);
        // A route that takes an event's id is asked for one of the guarded types.
        const eventRefs = { ...refs, events: event.id as string };
        const guardedIn = (res: WalkResponse) =>
          eventsIn(res.body).filter((e) => (guarded as string[]).includes(e.type));

        const full = await send(server, walked, { prefix, refs: eventRefs, token: all });
        expect(guardedIn(full).length).toBeGreaterThan(0);
        const { token } = await server.createToken(
          orgId,
          ALL_SCOPES.filter((scope) => scope !== withheld),
        );
        const narrowed = await send(server, walked, { prefix, refs: eventRefs, token });
        expect(guardedIn(narrowed)).toEqual([]);
        if (walked.route.path.includes('/:id') && collectionOf(walked.route) === 'events')
          expectProblem(narrowed, 404, 'not_found');
        else expect(narrowed.status).toBe(200);
      },
    );
  });

  describe('delegation', () => {
    let orgId: string;
    /** Every scope, never expiring: makes the records the narrower callers then act on. */
    let all: string;

    beforeAll(async () => {
      orgId = (await server.createOrganization({ name: 'School D' })).id;
      ({ token: all } = await server.createToken(orgId, ALL_SCOPES));
    });

    it.each(WRITE_ROUTES)(
      '$name declares its delegation rule if it hands out scopes, events, an expiry or a secret',
      ({ route, name }) => {
        if (handsOutAuthority(route) && !delegationOf(route)) {
          throw new Error(
            `${name} hands out authority (${fieldsOf(route)
              .filter((f) => AUTHORITY_FIELDS.includes(f))
              .join(
                ', ',
              )}${operationMetadata(route)?.oneTimeSecret ? ', a one-time secret' : ''}) but declares no 'delegation' in its contract metadata: flag it, and make the server hold it to the caller's scopes and lifetime`,
          );
        }
      },
    );

    it('finds the delegating routes', () => {
      expect(DELEGATING_ROUTES.map((r) => r.key).sort()).toEqual(
        expect.arrayContaining([
          'oauthClients.create',
          'oauthClients.rotateSecret',
          'personalAccessTokens.create',
          'personalAccessTokens.delete',
          'webhookEndpoints.create',
          'webhookEndpoints.update',
          'webhookEndpoints.transfer',
          'oauthClients.transfer',
        ]),
      );
    });

    /** A record of the route's collection as wide as can be, made by the all-scopes token. */
    async function widestRecord(walked: WalkedRoute): Promise<Record<string, unknown>> {
      const fixture = fixtureFor(collectionOf(walked.route), walked.name);
      if (!fixture.widest) {
        throw new Error(
          `${walked.name} delegates: give the ${fixture.collection} fixture a 'widest' override`,
        );
      }
      const res = await rawCall<WalkedBody>(server, `/v1/${fixture.collection}`, {
        method: 'POST',
        token: all,
        headers: JSON_BODY,
        body: JSON.stringify({ ...createBody(fixture, {}, next()), ...fixture.widest }),
      });
      if (res.status !== 201) throw new Error(`widest ${fixture.kind}: ${describeResponse(res)}`);
      return res.body;
    }

    /** The body the route is probed with: a widest create, a change, or the minimal one. */
    function probeBody(walked: WalkedRoute): Record<string, unknown> | undefined {
      const fixture = fixtureFor(collectionOf(walked.route), walked.name);
      if (isCreateRoute(walked.route))
        return { ...createBody(fixture, {}, next()), ...fixture.widest };
      if (walked.route.method === 'PATCH') {
        if (!fixture.change) {
          throw new Error(`${walked.name}: give the ${fixture.collection} fixture a 'change' body`);
        }
        return fixture.change(next());
      }
      return minimalBody(walked, {});
    }

    const readRecord = (collection: string, id: string) =>
      rawCall<WalkedBody>(server, `/v1/${collection}/${id}`, { token: all });

    async function collectionTotal(collection: string): Promise<number> {
      return Number(
        (await rawCall<WalkedBody>(server, `/v1/${collection}`, { token: all })).body.meta?.total,
      );
    }

    it.each(DELEGATING_ROUTES)(
      '$name refuses (403 forbidden) a caller with only its own scope, and changes nothing',
      async (walked) => {
        const { route } = walked;
        const collection = collectionOf(route);
        const narrow = (await server.createToken(orgId, [scopeOf(route)])).token;
        if (isCreateRoute(route)) {
          const before = await collectionTotal(collection);
          const res = await send(server, walked, {
            refs: {},
            token: narrow,
            body: probeBody(walked),
          });
          expectProblem(res, 403, 'forbidden');
          expect(await collectionTotal(collection)).toBe(before);
          return;
        }
        const record = await widestRecord(walked);
        const before = await readRecord(collection, record.id as string);
        const res = await send(server, walked, {
          refs: { [collection]: record.id as string },
          token: narrow,
          body: probeBody(walked),
        });
        expectProblem(res, 403, 'forbidden');
        expect(await readRecord(collection, record.id as string)).toEqual(
          expect.objectContaining({ status: 200, body: before.body }),
        );
      },
    );

    /**
     * A transfer: a developer may not (403 forbidden); an admin may, and the record then belongs
     * to the member, bound to no credential, within the member's role (a viewer here).
     */
    async function expectTransferRule(walked: WalkedRoute) {
      const collection = collectionOf(walked.route);
      const n = next();
      const viewer = await server.createUser(
        orgId,
        `walk-viewer-${n}@school.example`,
        'a long enough password',
        { role: 'viewer' },
      );
      const developer = await server.createUser(
        orgId,
        `walk-dev-${n}@school.example`,
        'a long enough password',
        { role: 'developer' },
      );
      const developerToken = await server.createToken(orgId, ALL_SCOPES, { userId: developer.id });
      const target = await widestRecord(walked);
      const refs: Refs = { [collection]: target.id as string };
      const body = { member_id: viewer.id };
      const refused = await send(server, walked, { refs, token: developerToken.token, body });
      expectProblem(refused, 403, 'forbidden');
      const res = await send(server, walked, { refs, token: all, body });
      expect(res.status).toBe(200);
      const after = await readRecord(collection, target.id as string);
      expect(after.body.member_id).toBe(viewer.id);
      if ('owner' in after.body) expect(after.body.owner).toBeNull();
      if ('scopes' in after.body) {
        for (const scope of after.body.scopes as string[])
          expect(ROLE_SCOPES.viewer).toContain(scope);
      }
    }

    it.each(DELEGATING_ROUTES)(
      '$name does not let what it makes or changes outlive a caller that expires sooner',
      async (walked) => {
        const { route } = walked;
        const collection = collectionOf(route);
        if (delegationOf(route) === 'transfer') return expectTransferRule(walked);
        const expires = new Date(Date.now() + 3_600_000);
        const shortLived = await server.createToken(orgId, ALL_SCOPES, { expiresAt: expires });
        const target = isCreateRoute(route) ? undefined : await widestRecord(walked);
        const refs: Refs = target ? { [collection]: target.id as string } : {};
        const res = await send(server, walked, {
          refs,
          token: shortLived.token,
          body: probeBody(walked),
        });
        if (res.status >= 300) {
          // Refusing is one way to keep the rule: only a refusal that names the expiry.
          expectProblem(res, 400, 'validation_error');
          expect(problemOf(res).errors?.map((e) => e.path)).toContain('body.expires_at');
          return;
        }
        const id = (target?.id ?? res.body.id) as string;
        const after = await readRecord(collection, id);
        if (delegationOf(route) === 'webhook_endpoint') {
          // Bound to the caller's credential: disabled when that ends.
          expect(after.body.owner).toEqual({
            type: 'personal_access_token',
            id: shortLived.id,
            user_id: null,
          });
          return;
        }
        // A credential still usable afterwards expires no later than the caller.
        if (after.status === 404 || after.body.revoked_at) return;
        expect(after.body.expires_at).not.toBeNull();
        expect(Date.parse(after.body.expires_at as string)).toBeLessThanOrEqual(expires.getTime());

        // And an explicit later expiry, where the body takes one, is refused.
        if (isCreateRoute(route) && fieldsOf(route).includes('expires_at')) {
          const later = await send(server, walked, {
            refs,
            token: shortLived.token,
            body: {
              ...probeBody(walked),
              expires_at: new Date(expires.getTime() + 86_400_000).toISOString(),
            },
          });
          expectProblem(later, 400, 'validation_error');
          expect(problemOf(later).errors?.map((e) => e.path)).toContain('body.expires_at');
        }
      },
    );
  });
});
