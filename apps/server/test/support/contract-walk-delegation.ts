/**
 * The delegation part of the contract walk (test/contract-walk.e2e-spec.ts): the records a
 * narrower caller is then probed against, and the rule a transfer follows.
 */
import { ALL_SCOPES, ROLE_SCOPES } from '@platform/contract';
import { createBody, fixtureFor, JSON_BODY, next } from './contract-walk-fixtures';
import { expectProblem, minimalBody, send } from './contract-walk-requests';
import {
  collectionOf,
  describeResponse,
  isCreateRoute,
  scopeOf,
  type Refs,
  type WalkedBody,
  type WalkedRoute,
} from './contract-walk-routes';
import { rawCall, type TestServer } from './server';

/** The walk's delegation organization and its token with every scope, never expiring. */
export interface DelegationWalk {
  server: TestServer;
  orgId: string;
  all: string;
}

/** A record of the route's collection as wide as can be, made by the all-scopes token. */
export async function widestRecord(
  walk: DelegationWalk,
  walked: WalkedRoute,
): Promise<Record<string, unknown>> {
  const fixture = fixtureFor(collectionOf(walked.route), walked.name);
  if (!fixture.widest) {
    throw new Error(
      `${walked.name} delegates: give the ${fixture.collection} fixture a 'widest' override`,
    );
  }
  const res = await rawCall<WalkedBody>(walk.server, `/v1/${fixture.collection}`, {
    method: 'POST',
    token: walk.all,
    headers: JSON_BODY,
    body: JSON.stringify({ ...createBody(fixture, {}, next()), ...fixture.widest }),
  });
  if (res.status !== 201) throw new Error(`widest ${fixture.kind}: ${describeResponse(res)}`);
  return res.body;
}

/** Routes that hand out what their body asks for, probed asking for everything. */
const WIDEST_BODIES: Record<string, () => Record<string, unknown>> = {
  'sandboxes.createToken': () => ({ name: 'walk', scopes: ['all'] }),
};

/** The body the route is probed with: a widest create, a change, or the minimal one. */
export function probeBody(walked: WalkedRoute): Record<string, unknown> | undefined {
  const widest = WIDEST_BODIES[walked.key];
  if (widest) return widest();
  const fixture = fixtureFor(collectionOf(walked.route), walked.name);
  if (isCreateRoute(walked.route)) return { ...createBody(fixture, {}, next()), ...fixture.widest };
  if (walked.route.method === 'PATCH') {
    if (!fixture.change) {
      throw new Error(`${walked.name}: give the ${fixture.collection} fixture a 'change' body`);
    }
    return fixture.change(next());
  }
  return minimalBody(walked, {});
}

/** The record as the all-scopes token reads it. */
export const readRecord = (walk: DelegationWalk, collection: string, id: string) =>
  rawCall<WalkedBody>(walk.server, `/v1/${collection}/${id}`, { token: walk.all });

/** The collection's list total as the all-scopes token sees it. */
async function collectionTotal(walk: DelegationWalk, collection: string): Promise<number> {
  return Number(
    (await rawCall<WalkedBody>(walk.server, `/v1/${collection}`, { token: walk.all })).body.meta
      ?.total,
  );
}

/**
 * A transfer: a developer may not (403 forbidden); an admin may, and the record then belongs
 * to the member, bound to no credential, within the member's role (a viewer here).
 */
export async function expectTransferRule(walk: DelegationWalk, walked: WalkedRoute) {
  const collection = collectionOf(walked.route);
  const n = next();
  const viewer = await walk.server.createUser(
    walk.orgId,
    `walk-viewer-${n}@school.example`,
    'a long enough password',
    { role: 'viewer' },
  );
  const developer = await walk.server.createUser(
    walk.orgId,
    `walk-dev-${n}@school.example`,
    'a long enough password',
    { role: 'developer' },
  );
  const developerToken = await walk.server.createToken(walk.orgId, ALL_SCOPES, {
    userId: developer.id,
  });
  const target = await widestRecord(walk, walked);
  const refs: Refs = { [collection]: target.id as string };
  const body = { member_id: viewer.id };
  const refused = await send(walk.server, walked, { refs, token: developerToken.token, body });
  expectProblem(refused, 403, 'forbidden');
  const res = await send(walk.server, walked, { refs, token: walk.all, body });
  expect(res.status).toBe(200);
  const after = await readRecord(walk, collection, target.id as string);
  expect(after.body.member_id).toBe(viewer.id);
  if ('owner' in after.body) expect(after.body.owner).toBeNull();
  if ('scopes' in after.body) {
    for (const scope of after.body.scopes as string[]) expect(ROLE_SCOPES.viewer).toContain(scope);
  }
}

/** A caller with only the route's own scope is refused (403 forbidden) and changes nothing. */
export async function expectNarrowCallerRefused(
  walk: DelegationWalk,
  walked: WalkedRoute,
): Promise<void> {
  const { route } = walked;
  const collection = collectionOf(route);
  const narrow = (await walk.server.createToken(walk.orgId, [scopeOf(route)])).token;
  if (isCreateRoute(route)) {
    const before = await collectionTotal(walk, collection);
    const res = await send(walk.server, walked, {
      refs: {},
      token: narrow,
      body: probeBody(walked),
    });
    expectProblem(res, 403, 'forbidden');
    expect(await collectionTotal(walk, collection)).toBe(before);
    return;
  }
  const record = await widestRecord(walk, walked);
  const before = await readRecord(walk, collection, record.id as string);
  const res = await send(walk.server, walked, {
    refs: { [collection]: record.id as string },
    token: narrow,
    body: probeBody(walked),
  });
  expectProblem(res, 403, 'forbidden');
  expect(await readRecord(walk, collection, record.id as string)).toEqual(
    expect.objectContaining({ status: 200, body: before.body }),
  );
}
