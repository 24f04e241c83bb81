/**
 * The contract walk's rules for routes that answer by who calls rather than by one scope
 * (test/contract-walk.e2e-spec.ts): those about the calling member, and those that change a
 * sandbox.
 */
import { ALL_SCOPES, type Scope } from '@platform/contract';
import { expectProblem, send } from './contract-walk-requests';
import { describeResponse, type Refs, type WalkedRoute } from './contract-walk-routes';
import type { TestServer } from './server';

export interface SelfWalk {
  server: TestServer;
  orgId: string;
  refs: Refs;
  tokenWith(scopes: readonly Scope[]): Promise<string>;
}

type Prefixed = WalkedRoute & { prefix: string };

function expectNotRefused(res: { status: number }, who: string, described: string): void {
  if ([401, 403].includes(res.status) || res.status >= 500) {
    throw new Error(`${who} was refused: ${described}`);
  }
}

/** Any token acting for a member passes, whatever its one scope; one acting for none is 403. */
export async function expectUserRouteRules(walk: SelfWalk, walked: Prefixed): Promise<void> {
  const { server, refs, prefix } = { ...walk, prefix: walked.prefix };
  const forNoMember = await send(server, walked, {
    prefix,
    refs,
    token: await walk.tokenWith(ALL_SCOPES),
  });
  expectProblem(forNoMember, 403, 'forbidden');
  expect(forNoMember.body.detail).toMatch(/acts for no member/);
  for (const scope of ['students:read', 'tokens:read'] as const) {
    const { token } = await server.createToken(walk.orgId, [scope], { userId: refs.members! });
    const res = await send(server, walked, { prefix, refs, token });
    expectNotRefused(res, `a member's token with only '${scope}'`, describeResponse(res));
  }
}

/**
 * A live organization's token is 403 whatever its scopes; a sandbox's needs the write scope of
 * what it changes (the walk's body triggers student.created: students:write).
 */
export async function expectSandboxRouteRules(walk: SelfWalk, walked: Prefixed): Promise<void> {
  const { server, refs, prefix } = { ...walk, prefix: walked.prefix };
  const live = await send(server, walked, {
    prefix,
    refs,
    token: await walk.tokenWith(ALL_SCOPES),
  });
  expectProblem(live, 403, 'forbidden');
  const sandbox = await server.createOrganization({
    name: 'Walk sandbox',
    sandbox: { parentId: walk.orgId, students: 0, seed: 0 },
  });
  const narrow = await server.createToken(sandbox.id, ['students:read']);
  expectProblem(await send(server, walked, { prefix, refs, ...narrow }), 403, 'insufficient_scope');
  const { token } = await server.createToken(sandbox.id, ['students:write']);
  const res = await send(server, walked, { prefix, refs, token });
  expectNotRefused(res, 'a sandbox token', describeResponse(res));
}
