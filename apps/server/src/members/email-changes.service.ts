import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { EMAIL_CHANGE_MAILS_PER_ADDRESS, EMAIL_CHANGE_TTL_HOURS } from '@platform/contract';
import { type EntityManager, MoreThan } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { ProblemException } from '../common/problem.exception';
import { invalidField, isUniqueViolation } from '../common/resource-errors';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { MailOutbox } from '../mail/mail-outbox';
import { emailChangedMail, emailChangeMail, emailInUseMail } from '../mail/mail-templates';
import { AccountRecord, UserRecord } from '../oauth/entities';
import { PORTAL_CLIENT_ID } from '../oauth/portal-client';
import { normalizeEmail, UsersService } from '../oauth/users.service';
import { Organization } from '../organizations/organization.entity';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import { hashToken } from '../security/crypto';

export const EMAIL_CHANGE_PATH = '/email-change';

const organizationName = async (manager: EntityManager, id: string) =>
  (await manager.findOneByOrFail(Organization, { id })).name;

/**
 * Changing a member's email: the new address gets a single-use link (its token's SHA-256 is kept
 * on the member with the address, for `EMAIL_CHANGE_TTL_HOURS`), and the email changes only when
 * it is opened, so nobody can take an address they do not hold. An address that already has an
 * account is told so by mail, never in the answer. Without mail (development) the member gets
 * the link themselves.
 */
@Injectable()
export class EmailChangesService {
  private readonly origin: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly users: UsersService,
    private readonly outbox: MailOutbox,
    private readonly tx: TransactionRunner,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    @InjectThrottlerStorage() private readonly throttle: ThrottlerStorage,
  ) {
    this.origin = serverOrigin(config);
  }

  /**
   * Once the current password checks out, mails the new address its confirmation link (or, when
   * it already has an account, a notice instead); a new request replaces the pending change. A
   * server without mail answers the link (`confirmUrl`) and mails nothing: development, where
   * nothing proves the address, as with invitations.
   */
  async request(
    userId: string,
    input: { email: string; current_password: string },
    failed: () => Promise<void>,
  ): Promise<{ email: string; expiresAt: Date; confirmUrl: string | null }> {
    const user = await this.users.checkCurrentPassword(userId, input.current_password, failed);
    const email = normalizeEmail(input.email);
    if (email === user.email) throw invalidField('email', 'is already your email');
    const mailed = this.outbox.sends;
    if (mailed) await this.limitMailTo(email);
    const taken = mailed && (await this.users.findAccountByEmail(email)) !== null;
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.clock.now().getTime() + EMAIL_CHANGE_TTL_HOURS * 3_600_000);
    const confirmUrl = `${this.origin}${EMAIL_CHANGE_PATH}?token=${token}`;
    await this.tx.run(async (manager) => {
      await manager.update(
        AccountRecord,
        { id: user.accountId },
        taken
          ? { pendingEmail: null, emailChangeHash: null, emailChangeExpiresAt: null }
          : {
              pendingEmail: email,
              emailChangeHash: hashToken(token),
              emailChangeExpiresAt: expiresAt,
            },
      );
      if (!mailed) return;
      const name = await organizationName(manager, user.organizationId);
      await this.outbox.enqueue(manager, {
        organizationId: user.organizationId,
        kind: taken ? 'email_in_use' : 'email_change',
        recipient: email,
        ...(taken
          ? emailInUseMail({ organizationName: name })
          : emailChangeMail({
              organizationName: name,
              current: user.email,
              confirmUrl,
              expiresAt,
            })),
      });
    });
    return { email, expiresAt, confirmUrl: mailed ? null : confirmUrl };
  }

  /**
   * At most `EMAIL_CHANGE_MAILS_PER_ADDRESS` mails a minute to one address (429 after), counted
   * alike whether or not it has an account: nobody's inbox is flooded through this form.
   */
  private async limitMailTo(email: string): Promise<void> {
    const { isBlocked, timeToBlockExpire } = await this.throttle.increment(
      `email-change:address:${hashToken(email)}`,
      60_000,
      EMAIL_CHANGE_MAILS_PER_ADDRESS,
      0,
      'email-change',
    );
    if (!isBlocked) return;
    const wait = Math.max(1, timeToBlockExpire);
    throw new ProblemException(
      'rate_limited',
      `Too many confirmation links to this address; try again in ${wait} seconds`,
      { headers: { 'Retry-After': String(wait) } },
    );
  }

  /** The account a working link is for, else null. */
  findByToken(token: string): Promise<AccountRecord | null> {
    if (!token || token.length > 200) return Promise.resolve(null);
    return this.users.findAccount({
      emailChangeHash: hashToken(token),
      emailChangeExpiresAt: MoreThan(this.clock.now()),
    });
  }

  /**
   * Makes the pending address the account's email and each of its members' copy, once (the
   * update claims the link), voids a password reset link mailed to the old one, tells the old
   * address and audits the change in each organization. Null when the link no longer works; a
   * 409 when the address got an account meanwhile.
   */
  async confirm(token: string, ip: string | undefined): Promise<AccountRecord | null> {
    const account = await this.findByToken(token);
    if (!account?.pendingEmail) return null;
    const next = account.pendingEmail;
    return this.tx.run(async (manager) => {
      const now = this.clock.now();
      const claimed = await manager
        .update(
          AccountRecord,
          {
            id: account.id,
            emailChangeHash: account.emailChangeHash!,
            emailChangeExpiresAt: MoreThan(now),
          },
          {
            email: next,
            pendingEmail: null,
            emailChangeHash: null,
            emailChangeExpiresAt: null,
            passwordResetHash: null,
            passwordResetExpiresAt: null,
            updatedAt: now,
          },
        )
        .catch((error: unknown) => {
          if (!isUniqueViolation(error)) throw error;
          throw new ProblemException('conflict', `${next} already belongs to a Platform account`);
        });
      if (!claimed.affected) return null;
      // Read under the claim (the account's row, which an invitation accepted locks too): a
      // membership added meanwhile gets the new address as well.
      const members = await this.users.usersOf(account.id, manager);
      for (const user of members) {
        await manager.update(UserRecord, { id: user.id }, { email: next, updatedAt: now });
        await this.audit.record(
          {
            kind: 'sign_in',
            organizationId: user.organizationId,
            credentialId: PORTAL_CLIENT_ID,
            userId: user.id,
            ip: ip ? normalizeIp(ip) : null,
          },
          {
            action: 'user.email_changed',
            targetType: 'user',
            targetId: user.id,
            changes: { email: [account.email, next] },
          },
          manager,
        );
      }
      const [first] = members;
      if (!this.outbox.sends || !first) return { ...account, email: next };
      await this.outbox.enqueue(manager, {
        organizationId: first.organizationId,
        kind: 'email_changed',
        recipient: account.email,
        ...emailChangedMail({
          organizationName: await organizationName(manager, first.organizationId),
          next,
        }),
      });
      return { ...account, email: next };
    });
  }
}
