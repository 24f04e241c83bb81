import type { EntityManager } from 'typeorm';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import {
  assertAdmin,
  assertMayActAs,
  assertRoleCanRead,
  assertScopesCanRead,
  mayActAs,
  memberOf,
} from './acting-as';

/** A principal acting for `userId` with `role` (null and null: an operator's token). */
function caller(userId: string | null, role: Principal['role']): Principal {
  return {
    kind: 'personal_access_token',
    tokenId: 'tok_1',
    organizationId: 'org_1',
    rateLimitPerMinute: 600,
    scopes: new Set(),
    expiresAt: null,
    userId,
    role,
  };
}

function refusal(act: () => unknown): ProblemException {
  try {
    act();
  } catch (error) {
    if (error instanceof ProblemException) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('mayActAs', () => {
  it.each([
    ['its member, on their own', caller('usr_dev', 'developer'), 'usr_dev', true],
    ['another developer', caller('usr_other', 'developer'), 'usr_dev', false],
    ['a viewer', caller('usr_viewer', 'viewer'), 'usr_dev', false],
    ['an admin, on anyone’s', caller('usr_admin', 'admin'), 'usr_dev', true],
    ['an admin, on the organization’s', caller('usr_admin', 'admin'), null, true],
    ['a developer, on the organization’s', caller('usr_dev', 'developer'), null, false],
    ['an operator’s token (no member)', caller(null, null), 'usr_dev', true],
  ])('%s: %s', (_who, principal, owner, allowed) => {
    expect(mayActAs(principal, owner)).toBe(allowed);
  });

  it('names whose it is when it refuses', () => {
    const ofMember = refusal(() =>
      assertMayActAs(caller('usr_other', 'developer'), 'usr_dev', 'Webhook endpoint whe_1'),
    );
    expect(ofMember.code).toBe('forbidden');
    expect(ofMember.detail).toBe(
      'Webhook endpoint whe_1 belongs to another member: only that member or an admin may change it (an admin can transfer it to you)',
    );
    const ofOrganization = refusal(() =>
      assertMayActAs(caller('usr_dev', 'developer'), null, 'OAuth client oac_1'),
    );
    expect(ofOrganization.detail).toBe(
      'OAuth client oac_1 belongs to the organization: only an admin may change it (an admin can transfer it to you)',
    );
  });
});

describe('assertAdmin', () => {
  it('lets admins and operator tokens through and refuses the other roles', () => {
    expect(() =>
      assertAdmin(caller('usr_admin', 'admin'), 'transfer a webhook endpoint'),
    ).not.toThrow();
    expect(() => assertAdmin(caller(null, null), 'transfer a webhook endpoint')).not.toThrow();
    const refused = refusal(() =>
      assertAdmin(caller('usr_dev', 'developer'), 'transfer a webhook endpoint'),
    );
    expect([refused.code, refused.detail]).toEqual([
      'forbidden',
      'Only an admin may transfer a webhook endpoint',
    ]);
  });
});

describe('memberOf', () => {
  it('finds the member in the organization, and names member_id when there is none', async () => {
    const asked: unknown[] = [];
    const manager = {
      findOneBy: (_entity: unknown, where: unknown) => {
        asked.push(where);
        return Promise.resolve((where as { id: string }).id === 'usr_1' ? { id: 'usr_1' } : null);
      },
    } as unknown as EntityManager;
    await expect(memberOf(manager, 'org_1', 'usr_1')).resolves.toEqual({ id: 'usr_1' });
    expect(asked).toEqual([{ id: 'usr_1', organizationId: 'org_1' }]);
    const missing = await memberOf(manager, 'org_1', 'usr_2').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ProblemException);
    expect(missing).toMatchObject({
      code: 'validation_error',
      detail: 'member_id: No member usr_2 in your organization',
      options: { errors: [{ path: 'body.member_id', code: 'not_found' }] },
    });
  });
});

describe('assertScopesCanRead', () => {
  it('passes what the scopes read and names what they do not', () => {
    expect(() => assertScopesCanRead(['students:read'], ['student.created'], 'x')).not.toThrow();
    const refused = refusal(() =>
      assertScopesCanRead(['students:read'], ['student.created', 'payment.created'], 'Dana'),
    );
    expect([refused.code, refused.detail]).toEqual([
      'forbidden',
      "Dana cannot read payments:read, which the endpoint's events need",
    ]);
    // Every role reads every resource that has events today.
    expect(() => assertRoleCanRead('viewer', ['*'], 'Dana')).not.toThrow();
  });
});
