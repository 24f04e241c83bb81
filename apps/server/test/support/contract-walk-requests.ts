/**
 * How the contract walk (test/contract-walk.e2e-spec.ts) sends a route: its smallest valid body,
 * its concrete path, and the checks on the problem it answers.
 */
import { readScopesForEvents, type Role, ROLE_SCOPES, type Scope } from '@platform/contract';
import {
  bodySchemaOf,
  collectionOf,
  delegationOf,
  describeResponse,
  isCreateRoute,
  isUpload,
  type Refs,
  type WalkedBody,
  type WalkedRoute,
  type WalkResponse,
} from './contract-walk-routes';
import { createBody, fixtureFor, JSON_BODY, next } from './contract-walk-fixtures';
import { rawCall, type TestServer } from './server';

/** Bodies for routes that are neither creates nor take `{}`: valid in shape, whatever they then answer. */
export const ROUTE_BODIES: Record<string, (refs: Refs) => Record<string, unknown>> = {
  'user.changePassword': () => ({
    current_password: 'not the password, surely',
    new_password: 'a long enough new password',
  }),
  'user.changeEmail': () => ({
    email: 'walk-new-address@example.test',
    current_password: 'not the password, surely',
  }),
  // The walk's member (the members fixture); in another organization's walk, an id it lacks.
  'webhookEndpoints.transfer': (refs) => ({
    member_id: refs.members ?? 'usr_01J00000000000000000000000',
  }),
  'oauthClients.transfer': (refs) => ({
    member_id: refs.members ?? 'usr_01J00000000000000000000000',
  }),
  'exports.createBatch': () => ({ collections: ['students', 'courses'] }),
  // A new external id without the create fields: a 200 whose one item failed, nothing written.
  'students.batchUpsert': () => ({ items: [{ external_id: 'walk' }] }),
  'courses.batchUpsert': () => ({ items: [{ external_id: 'walk' }] }),
  'enrollments.batchUpsert': () => ({ items: [{ external_id: 'walk' }] }),
  'payments.batchUpsert': () => ({ items: [{ external_id: 'walk' }] }),
  'exams.batchUpsert': () => ({ items: [{ external_id: 'walk' }] }),
  'examResults.batchUpsert': () => ({ items: [{ external_id: 'walk' }] }),
  'sandbox.trigger': () => ({ event: 'student.created' }),
  // Within the scope a token needs to make it: the walk sends it with only that scope.
  'sandboxes.createToken': () => ({ name: 'walk', scopes: ['tokens:write'] }),
  'webhookEndpoints.replayFailed': () => ({
    since: new Date(Date.now() - 3_600_000).toISOString(),
  }),
};

/** What the body of ROUTE_BODIES asks for besides the route's own scope. */
const ROUTE_BODY_SCOPES: Partial<Record<string, Scope[]>> = {
  'exports.createBatch': ['students:read', 'courses:read'],
  // The walk's upload imports students.
  'imports.create': ['students:write'],
  // Renewing an invitation gives its role again (delegation): the fixture invites a viewer.
  'invitations.resend': [...ROLE_SCOPES.viewer],
  // The walk's tokens act for no member: a sandbox's token made by one needs tokens:write too.
  'sandboxes.createToken': ['tokens:write'],
};

/**
 * The smallest valid body: none for `c.noBody()`, `{}` where the schema takes it (PATCH, the
 * optional bodies), `undefined` where it takes nothing, else the collection's fixture body.
 */
export function minimalBody(walked: WalkedRoute, refs: Refs): Record<string, unknown> | undefined {
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

/**
 * The caller's own sessions (`/v1/user/sessions/:id`) are no organization's records: the walk's
 * tokens have no browser session, so the walk sends an id no one has (404 for every caller);
 * user-sessions.e2e-spec.ts signs real ones out and holds one member off another's.
 */
const NO_ONES_SESSION = 'ses_00000000000000000000000000';

/** The route's path under `prefix`, with `:id` replaced by the id of its collection's record. */
export function concretePath(walked: WalkedRoute, prefix: string, refs: Refs): string {
  const { route } = walked;
  let path = route.path;
  if (path.includes(':id')) {
    const collection = collectionOf(route);
    if (collection !== 'user') fixtureFor(collection, walked.name);
    const id = collection === 'user' ? NO_ONES_SESSION : refs[collection];
    if (!id) throw new Error(`No ${collection} record to put into ${walked.name}`);
    path = path.replace(':id', id);
  }
  const leftover = /:[A-Za-z_]+/.exec(path);
  if (leftover) throw new Error(`${walked.name}: no value for path parameter ${leftover[0]}`);
  return `${prefix}${path.slice('/v1'.length)}`;
}

export function send(
  server: TestServer,
  walked: WalkedRoute,
  options: { prefix?: string; refs: Refs; token?: string; body?: Record<string, unknown> },
): Promise<WalkResponse> {
  if (isUpload(walked.route)) return sendUpload(server, walked, options);
  const body = 'body' in options ? options.body : minimalBody(walked, options.refs);
  return rawCall<WalkedBody>(server, concretePath(walked, options.prefix ?? '/v1', options.refs), {
    method: walked.route.method,
    ...(options.token && { token: options.token }),
    ...(body !== undefined && { headers: JSON_BODY, body: JSON.stringify(body) }),
  });
}

/** An import of an empty students file: a 202, nothing written, the walk's smallest upload. */
async function sendUpload(
  server: TestServer,
  walked: WalkedRoute,
  options: { prefix?: string; refs: Refs; token?: string },
): Promise<WalkResponse> {
  const form = new FormData();
  form.append('file', new Blob([''], { type: 'application/x-ndjson' }), 'walk.ndjson');
  const path = `${concretePath(walked, options.prefix ?? '/v1', options.refs)}?collection=students`;
  const res = await fetch(`${server.url}${path}`, {
    method: walked.route.method,
    headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
    body: form,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as WalkedBody };
}

export function expectProblem(res: WalkResponse, status: number, code: string): void {
  if (res.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${describeResponse(res)}`);
  }
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

/**
 * The scopes a token needs to pass `walked` with only its route's `scope`: those delegation or
 * its body ask for besides. Also answers the webhook endpoint's events, for the message.
 */
export function scopesForOnly(
  walked: WalkedRoute,
  refs: Refs,
  scope: Scope,
): { scopes: Scope[]; events: string[] } {
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
  const bodyScopes =
    ROUTE_BODY_SCOPES[walked.key] ??
    (isCreateRoute(walked.route) ? (fixture.bodyScopes ?? []) : []);
  const scopes = [
    scope,
    ...bodyScopes,
    ...readScopesForEvents(events),
    ...(role ? ROLE_SCOPES[role] : []),
    ...target,
  ];
  return { scopes, events };
}
