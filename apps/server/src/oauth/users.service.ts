import { randomBytes } from 'node:crypto';
import { hash, type Options, verify } from '@node-rs/argon2';
import { Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { PASSWORD_CHECKS_PER_MINUTE, type Role } from '@platform/contract';
import { type EntityManager, type FindOptionsWhere, MoreThan, type Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { ProblemException } from '../common/problem.exception';
import { isUniqueViolation } from '../common/resource-errors';
import { OrganizationsService } from '../organizations/organizations.service';
import { AccountRecord, UserRecord } from './entities';
import { type ArtifactPayload, deleteArtifacts, memberArtifacts } from './member-artifacts';
import { TransactionRunner } from '../common/transactions';
import { Sql } from '../database/sql';
import { hashToken } from '../security/crypto';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { assertPasswordAcceptable, MAX_PASSWORD_LENGTH } from './password-policy';
import { isPortalClient, PORTAL_CLIENT_ID } from './portal-client';

/** OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. `2` is `Algorithm.Argon2id` (a const enum). */
const ARGON2_OPTIONS: Options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * Login throttling, on the shared rate-limit store (Redis when scaled out): sign-in attempts per
 * email and per client IP within the store's rolling minute. A throttled attempt is refused
 * before the password is checked; the invitation page's password counts as a sign-in. With
 * argon2id and 12-character minimum passwords that keeps online guessing out of reach (10 a minute is about 5 million a year per account); the per-IP
 * limit is higher because a school's users often share one address.
 */
export const LOGIN_LIMITS = { perEmail: 10, perIp: 100 } as const;

/** Current-password checks a minute per account, as sign-in attempts per email (LOGIN_LIMITS). */
export const PASSWORD_CHECK_LIMIT = PASSWORD_CHECKS_PER_MINUTE;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Takes the account's row for the transaction on PostgreSQL, so one person's membership changes
 * (a removal, an invitation accepted) run one at a time (SQLite runs writers one at a time
 * already); whether the account still exists.
 */
export async function lockAccount(
  sql: Sql,
  manager: EntityManager,
  accountId: string,
): Promise<boolean> {
  const id = sql.column(AccountRecord, 'id');
  const rows = await sql.query(
    manager,
    `SELECT ${id} AS id FROM ${sql.table(AccountRecord)} WHERE ${id} = :accountId${sql.lockRows()}`,
    { accountId },
  );
  return rows.length > 0;
}

/**
 * Deletes those of the accounts that no membership is left of: no personal data outlives every
 * access (decision 34). After a removal, and after a sandbox's members went with it.
 */
export async function dropAccountsWithoutMembers(
  sql: Sql,
  manager: EntityManager,
  accountIds: readonly string[],
): Promise<void> {
  if (!accountIds.length) return;
  const accounts = sql.table(AccountRecord);
  const id = sql.column(AccountRecord, 'id');
  await sql.query(
    manager,
    `DELETE FROM ${accounts} WHERE ${id} IN (:...accountIds) AND NOT EXISTS (
       SELECT 1 FROM ${sql.table(UserRecord)} m
       WHERE m.${sql.column(UserRecord, 'accountId')} = ${accounts}.${id})`,
    { accountIds: [...new Set(accountIds)] },
  );
}

/** Verified against when the email is unknown, so a miss takes as long as a wrong password. */
let decoyHash: Promise<string> | undefined;

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserRecord) private readonly users: Repository<UserRecord>,
    @InjectRepository(AccountRecord) private readonly accounts: Repository<AccountRecord>,
    private readonly organizations: OrganizationsService,
    private readonly clock: Clock,
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
    // Absent in the admin CLI, which never checks a current password.
    @Optional() @InjectThrottlerStorage() private readonly throttle?: ThrottlerStorage,
  ) {}

  /**
   * A member of `organizationId` (a user). A new address gets an account with `password`, or a
   * generated one (returned so the CLI can print it once); `account` makes the member one of an
   * existing account instead (decision 34: an invitation accepted by the account's owner), with
   * no password of its own. 409 when the address has an account and `account` is not given, or
   * when the account is already a member here.
   */
  async create(
    input: {
      organizationId: string;
      email: string;
      password?: string;
      /** Default `admin`: an operator making a user is setting up whoever runs the organization. */
      role?: Role;
      name?: string | null;
      account?: AccountRecord;
    },
    manager?: EntityManager,
  ): Promise<{ user: UserRecord; generatedPassword?: string }> {
    const organization = await this.organizations.findById(input.organizationId);
    if (!organization)
      throw new ProblemException('not_found', `No organization ${input.organizationId}`);
    const email = input.account?.email ?? normalizeEmail(input.email);
    if (!EMAIL_PATTERN.test(email) || email.length > 320)
      throw new ProblemException('validation_error', `${input.email} is not an email address`);
    const into = manager ?? this.users.manager;
    const now = this.clock.now();
    let account = input.account;
    let generatedPassword: string | undefined;
    if (!account) {
      generatedPassword =
        input.password === undefined ? randomBytes(18).toString('base64url') : undefined;
      const password = input.password ?? generatedPassword!;
      assertPasswordAcceptable(
        password,
        input.password === undefined ? undefined : 'body.password',
        [email],
      );
      // An account no membership is left of is nobody's (its removal should have taken it).
      const stale = await into.findOneBy(AccountRecord, { email });
      if (stale) await dropAccountsWithoutMembers(this.sql, into, [stale.id]);
      account = this.accounts.create({
        id: newId('account', now.getTime()),
        email,
        passwordHash: await hashPassword(password),
        createdAt: now,
        updatedAt: now,
      });
      await insertOrConflict(
        into,
        AccountRecord,
        account,
        `A user with the email ${email} already exists`,
      );
    }
    const user = this.users.create({
      id: newId('user', now.getTime()),
      organizationId: organization.id,
      accountId: account.id,
      email,
      role: input.role ?? 'admin',
      name: input.name?.trim() || null,
      passwordHash: account.passwordHash,
      createdAt: now,
      updatedAt: now,
    });
    await insertOrConflict(into, UserRecord, user, `${email} is already a member`);
    return { user, ...(generatedPassword && { generatedPassword }) };
  }

  /**
   * Counts a sign-in attempt for `email` from `ip` (LOGIN_LIMITS): the seconds to wait when over
   * a limit, else 0. Every page that takes an account's password asks first.
   */
  async loginThrottled(email: string, ip: string): Promise<number> {
    if (!this.throttle) return 0;
    const emailKey = hashToken(email.toLowerCase());
    const checks = await Promise.all([
      this.throttle.increment(`login:email:${emailKey}`, 60_000, LOGIN_LIMITS.perEmail, 0, 'login'),
      this.throttle.increment(`login:ip:${ip}`, 60_000, LOGIN_LIMITS.perIp, 0, 'login'),
    ]);
    const blocked = checks.filter((c) => c.isBlocked);
    return blocked.length ? Math.max(1, ...blocked.map((c) => c.timeToBlockExpire)) : 0;
  }

  findById(id: string): Promise<UserRecord | null> {
    return this.users.findOneBy({ id });
  }

  /**
   * The member, once `current` is their password: checks are limited like sign-in
   * (`PASSWORD_CHECK_LIMIT` a minute per account: a token must not make guessing faster than the
   * sign-in page; 429 after) and a wrong one runs `failed` (the audit entry, outside the refused
   * request) and is a 400 naming `body.current_password`. Changing the password or the email
   * needs it, so a stolen token cannot take the account over.
   */
  async checkCurrentPassword(
    userId: string,
    current: string,
    failed?: () => Promise<void>,
  ): Promise<UserRecord> {
    const user = await this.users.findOneBy({ id: userId });
    const account = user ? await this.accounts.findOneBy({ id: user.accountId }) : null;
    if (!user || !account) throw new ProblemException('not_found', `No user ${userId}`);
    // Per account: its memberships' tokens share one budget.
    const attempt = await this.throttle?.increment(
      `password:account:${account.id}`,
      60_000,
      PASSWORD_CHECK_LIMIT,
      0,
      'password',
    );
    if (attempt?.isBlocked) {
      const wait = Math.max(1, attempt.timeToBlockExpire);
      throw new ProblemException(
        'rate_limited',
        `Too many password checks; try again in ${wait} seconds`,
        { headers: { 'Retry-After': String(wait) } },
      );
    }
    const matches =
      current.length <= MAX_PASSWORD_LENGTH &&
      (await verify(account.passwordHash, current).catch(() => false));
    if (!matches) {
      await failed?.();
      throw new ProblemException('validation_error', 'The current password is not right', {
        errors: [
          {
            path: 'body.current_password',
            message: 'is not your current password',
            code: 'invalid',
          },
        ],
      });
    }
    return user;
  }

  /**
   * Changes the password (needs the current one: `checkCurrentPassword`). A change ends every other sign-in session of the member and
   * revokes their portal tokens, except the session and grant `keepGrantId` (the caller's), so
   * whoever knew the old password is signed out everywhere else, and voids pending links
   * (`NO_PENDING_LINKS`); `changed` runs in its transaction (the audit entry).
   */
  async changePassword(
    userId: string,
    current: string,
    next: string,
    hooks: {
      keepGrantId?: string | null;
      changed?: (manager: EntityManager) => Promise<void>;
      failed?: () => Promise<void>;
    } = {},
  ): Promise<void> {
    const user = await this.checkCurrentPassword(userId, current, hooks.failed);
    assertPasswordAcceptable(next, 'body.new_password', [user.email, user.name ?? '']);
    const now = this.clock.now();
    const passwordHash = await hashPassword(next);
    await this.transactions.run(async (manager) => {
      // Pending links stop working too: a reset link is for the old password, and an email
      // change may be the doing of whoever knew it.
      await manager.update(
        AccountRecord,
        { id: user.accountId },
        { passwordHash, ...NO_PENDING_LINKS, updatedAt: now },
      );
      await manager.update(UserRecord, { accountId: user.accountId }, { passwordHash });
      // The password is the person's: every membership's other sessions end.
      const members = await this.usersOf(user.accountId, manager);
      await endOtherSessions(this.sql, manager, members, hooks.keepGrantId ?? null);
      await hooks.changed?.(manager);
    });
  }

  /** The account matching `where` (a pending link's hash), if any. */
  findAccount(where: FindOptionsWhere<AccountRecord>): Promise<AccountRecord | null> {
    return this.accounts.findOneBy(where);
  }

  /** The account with this address (any case), if any. */
  findAccountByEmail(email: string): Promise<AccountRecord | null> {
    return this.accounts.findOneBy({ email: normalizeEmail(email) });
  }

  /** The account's members, one per organization, oldest first. */
  usersOf(accountId: string, manager?: EntityManager): Promise<UserRecord[]> {
    return (manager ?? this.users.manager).find(UserRecord, {
      where: { accountId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** The account a pending, unexpired password reset link is for, else null. */
  findByResetToken(token: string): Promise<AccountRecord | null> {
    if (!token || token.length > 200) return Promise.resolve(null);
    return this.accounts.findOneBy({
      passwordResetHash: hashToken(token),
      passwordResetExpiresAt: MoreThan(this.clock.now()),
    });
  }

  /**
   * Sets a new password through a reset link: only while the link is pending and unexpired, and
   * once (the update claims it, so a link raced twice sets one password). Ends every sign-in
   * session and portal token of each of the account's members (whoever held the old password is
   * signed out everywhere) and voids a pending email change; `changed` runs in its transaction
   * (the audit entries). Null for a link that no longer works.
   */
  async resetPassword(
    token: string,
    next: string,
    changed: (manager: EntityManager, account: AccountRecord, users: UserRecord[]) => Promise<void>,
  ): Promise<AccountRecord | null> {
    const account = await this.findByResetToken(token);
    if (!account) return null;
    const members = await this.usersOf(account.id);
    assertPasswordAcceptable(next, 'body.password', [
      account.email,
      ...members.map((user) => user.name ?? ''),
    ]);
    const passwordHash = await hashPassword(next);
    const now = this.clock.now();
    return this.transactions.run(async (manager) => {
      const claimed = await manager.update(
        AccountRecord,
        {
          id: account.id,
          passwordResetHash: account.passwordResetHash!,
          passwordResetExpiresAt: MoreThan(now),
        },
        { passwordHash, ...NO_PENDING_LINKS, updatedAt: now },
      );
      if (!claimed.affected) return null;
      await manager.update(UserRecord, { accountId: account.id }, { passwordHash });
      await endOtherSessions(this.sql, manager, members, null);
      await changed(manager, account, members);
      return account;
    });
  }

  /**
   * The account and its members, or null for an unknown email or a wrong password
   * (indistinguishable by timing).
   */
  async verifyPassword(
    email: string,
    password: string,
  ): Promise<{ account: AccountRecord; users: UserRecord[] } | null> {
    const account =
      password.length <= MAX_PASSWORD_LENGTH
        ? await this.accounts.findOneBy({ email: normalizeEmail(email) })
        : null;
    decoyHash ??= hash(randomBytes(16).toString('hex'), ARGON2_OPTIONS);
    const matches = await verify(account?.passwordHash ?? (await decoyHash), password).catch(
      () => false,
    );
    if (!account || !matches) return null;
    const users = await this.usersOf(account.id);
    return users.length ? { account, users } : null;
  }
}

/**
 * What a new password voids: a pending reset link, and a pending email change (which whoever
 * knew the old password may have asked for, to take the account over once it is confirmed).
 */
const NO_PENDING_LINKS = {
  passwordResetHash: null,
  passwordResetExpiresAt: null,
  pendingEmail: null,
  emailChangeHash: null,
  emailChangeExpiresAt: null,
} as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

/**
 * The member's sign-in sessions and portal tokens, except those of the grant `keepGrantId`:
 * deleted, so every other browser must sign in again (a password change). Their approvals of
 * other apps stay: those are consents, not sign-ins.
 */
async function endOtherSessions(
  sql: Sql,
  manager: EntityManager,
  users: readonly UserRecord[],
  keepGrantId: string | null,
): Promise<void> {
  const kept = (kind: string, idHash: string, payload: ArtifactPayload): boolean => {
    if (!keepGrantId) return false;
    if (kind === 'Session')
      return payload.authorizations?.[PORTAL_CLIENT_ID]?.grantId === keepGrantId;
    // A grant's own id is not stored (the row is keyed by its hash, as tokens are).
    return kind === 'Grant' ? idHash === hashToken(keepGrantId) : payload.grantId === keepGrantId;
  };
  const signIn = (kind: string, payload: ArtifactPayload): boolean =>
    kind === 'Session' ||
    ((kind === 'AccessToken' || kind === 'Grant') && isPortalClient(payload.clientId));
  for (const user of users) {
    const ending = (await memberArtifacts(sql, manager, user.id)).filter(
      ({ kind, idHash, payload }) => signIn(kind, payload) && !kept(kind, idHash, payload),
    );
    await deleteArtifacts(manager, ending);
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Inserts `row`, a unique violation becoming a 409 that says `conflict`. */
async function insertOrConflict<T extends object>(
  manager: EntityManager,
  entity: new () => T,
  row: T,
  conflict: string,
): Promise<void> {
  try {
    await manager.insert(entity, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemException('conflict', conflict);
    throw error;
  }
}
