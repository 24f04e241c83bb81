/**
 * Walks every route of the contract, so a route added later is covered without anyone
 * remembering to: organization isolation (another organization's ids are 404, its records
 * never appear in lists and cannot be referenced), scopes (403 without the route's scope,
 * fine with only it), 401 without a token, both path prefixes, and delegation (an operation
 * that makes or changes a credential or a webhook endpoint refuses a caller with narrower
 * scopes, and what it makes does not outlive a caller with a shorter lifetime).
 *
 * A new collection needs a fixture in FIXTURES (test/support/contract-walk-fixtures.ts); the
 * walk fails until it has one. An operation that hands out scopes, events, an expiry or a
 * secret fails the walk until its contract metadata says which delegation rule it follows
 * (`delegation`).
 */
import {
  ALL_SCOPES,
  EVENT_READ_SCOPES,
  EVENT_TYPES,
  operationMetadata,
  type Scope,
} from '@platform/contract';
import {
  type DelegationWalk,
  expectNarrowCallerRefused,
  expectTransferRule,
  probeBody,
  readRecord,
  widestRecord,
} from './support/contract-walk-delegation';
import {
  createBody,
  createFixtures,
  expectedTotal,
  fixtureFor,
  fixtureForField,
  idsOf,
  listTotals,
  next,
  RECORD_FIXTURES,
} from './support/contract-walk-fixtures';
import { expectProblem, scopesForOnly, send } from './support/contract-walk-requests';
import { expectSandboxRouteRules, expectUserRouteRules } from './support/contract-walk-self';
import {
  authorityOf,
  COLLECTION_LIST_ROUTES,
  COLLECTION_ROUTES,
  collectionOf,
  DELEGATING_ROUTES,
  delegationOf,
  describeResponse,
  EVENT_CASES,
  EVENT_DATA_SCOPES,
  EVENT_ROUTES,
  eventsIn,
  fieldsOf,
  handsOutAuthority,
  ID_ROUTES,
  isCreateRoute,
  LIST_ROUTES,
  prefixed,
  REFERENCE_ROUTES,
  type Refs,
  referenceFieldsOf,
  ROUTES,
  SANDBOX_ROUTES,
  scopeOf,
  SELF_PATHS,
  SELF_ROUTES,
  TOKEN_SELF_ROUTES,
  USER_ROUTES,
  type WalkedBody,
  type WalkResponse,
  WRITE_ROUTES,
} from './support/contract-walk-routes';
import { problemOf, rawCall, startServer, type TestServer } from './support/server';

describe('contract walk: every route', () => {
  let server: TestServer;

  beforeAll(async () => {
    // ~70 requests go out without a token: lift the per-IP limit so none of them is a 429.
    // The dispatcher stays off: the walk's webhook endpoint points at an address outside.
    server = await startServer({ RATE_LIMIT_ANONYMOUS: '10000', WEBHOOK_DISPATCHER: 'false' });
  });
  afterAll(() => server?.close());

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

  // B is another organization, then a sandbox of A with its pat_test_ token: neither reaches A.
  describe.each([
    { b: 'another organization', sandbox: false },
    { b: 'a sandbox of it', sandbox: true },
  ])('organization isolation: A as seen by $b', ({ sandbox }) => {
    let tokenA: string;
    let tokenB: string;
    /** Organization A's records as A read them (GET) before B's walk. */
    const before: Record<string, unknown> = {};
    let refsA: Refs;
    let totalsA: Record<string, number>;

    beforeAll(async () => {
      const orgA = await server.createOrganization({ name: 'School A' });
      const orgB = await server.createOrganization({
        name: 'School B',
        ...(sandbox && { sandbox: { parentId: orgA.id, students: 0, seed: 0 } }),
      });
      ({ token: tokenA } = await server.createToken(orgA.id, ['all']));
      ({ token: tokenB } = await server.createToken(orgB.id, ['all']));
      expect(tokenB.startsWith('pat_test_')).toBe(sandbox);
      refsA = idsOf(await createFixtures(server, tokenA));
      for (const fixture of RECORD_FIXTURES) {
        const res = await rawCall<WalkedBody>(
          server,
          `/v1/${fixture.collection}/${refsA[fixture.collection]}`,
          { token: tokenA },
        );
        expect(res.status).toBe(200);
        before[fixture.collection] = res.body;
      }
      totalsA = await listTotals(server, tokenA, refsA);
      for (const fixture of RECORD_FIXTURES) {
        if (fixture.growsWithEveryRequest) continue;
        // A's sandboxes: its fixture's, and B when B is one.
        const b = sandbox && fixture.collection === 'sandboxes' ? 1 : 0;
        expect(totalsA[fixture.collection]).toBe(expectedTotal(fixture) + b);
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
          { token: tokenA },
        );
        expect(res.status).toBe(200);
        expect(res.body).toEqual(before[fixture.collection]);
      }
      expect(await listTotals(server, tokenA, refsA)).toEqual(totalsA);
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

    // A sandbox makes no sandboxes, so its fixtures cannot be made whole; its references are
    // checked by the same organization-scoped lookups as another organization's.
    describe("create bodies that reference organization A's records", () => {
      if (sandbox) return;
      let refsB: Refs;
      let totalsB: Record<string, number>;

      beforeAll(async () => {
        refsB = idsOf(await createFixtures(server, tokenB));
        totalsB = await listTotals(server, tokenB, refsB);
      });

      async function expectNothingCreated(): Promise<void> {
        expect(await listTotals(server, tokenA, refsA)).toEqual(totalsA);
        expect(await listTotals(server, tokenB, refsB)).toEqual(totalsB);
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
      refs = idsOf(await createFixtures(server, await tokenWith(ALL_SCOPES)));
    });

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
      async (walked) => expectUserRouteRules({ server, orgId, refs, tokenWith }, walked),
    );

    it.each(prefixed(SANDBOX_ROUTES))(
      "$label refuses a live organization's token (403 forbidden), and answers a sandbox's with the scope its change needs",
      async (walked) => expectSandboxRouteRules({ server, orgId, refs, tokenWith }, walked),
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

        const { scopes, events } = scopesForOnly(walked, refs, scope);
        const only = await tokenWith(scopes);
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
      refs = idsOf(await createFixtures(server, all));
    });

    it('finds the routes that return events', () => {
      expect(EVENT_ROUTES.map((r) => r.key)).toEqual(
        expect.arrayContaining(['events.list', 'events.retrieve', 'events.changes']),
      );
      expect(EVENT_DATA_SCOPES.length).toBeGreaterThanOrEqual(5);
    });

    it.each(EVENT_CASES)(
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
    let walk: DelegationWalk;

    beforeAll(async () => {
      orgId = (await server.createOrganization({ name: 'School D' })).id;
      ({ token: all } = await server.createToken(orgId, ALL_SCOPES));
      walk = { server, orgId, all };
    });

    it.each(WRITE_ROUTES)(
      '$name declares its delegation rule if it hands out scopes, events, an expiry or a secret',
      ({ route, name }) => {
        if (handsOutAuthority(route) && !delegationOf(route)) {
          throw new Error(
            `${name} hands out authority (${authorityOf(route)}) but declares no 'delegation' in its contract metadata: flag it, and make the server hold it to the caller's scopes and lifetime`,
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

    it.each(DELEGATING_ROUTES)(
      '$name refuses (403 forbidden) a caller with only its own scope, and changes nothing',
      (walked) => expectNarrowCallerRefused(walk, walked),
    );

    it.each(DELEGATING_ROUTES)(
      '$name does not let what it makes or changes outlive a caller that expires sooner',
      async (walked) => {
        const { route } = walked;
        const collection = collectionOf(route);
        if (delegationOf(route) === 'transfer') return expectTransferRule(walk, walked);
        const expires = new Date(Date.now() + 3_600_000);
        const shortLived = await server.createToken(orgId, ALL_SCOPES, { expiresAt: expires });
        const target = isCreateRoute(route) ? undefined : await widestRecord(walk, walked);
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
        const after = await readRecord(walk, collection, id);
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
