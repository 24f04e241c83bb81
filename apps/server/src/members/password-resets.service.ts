import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { MailOutbox } from '../mail/mail-outbox';
import { passwordResetMail } from '../mail/mail-templates';
import { AccountRecord } from '../oauth/entities';
import { PORTAL_CLIENT_ID } from '../oauth/portal-client';
import { normalizeEmail, UsersService } from '../oauth/users.service';
import { Organization } from '../organizations/organization.entity';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import { hashToken } from '../security/crypto';

/** How long a reset link works. */
export const PASSWORD_RESET_TTL_MS = 30 * 60_000;

/**
 * Reset requests within the rate-limit store's rolling minute, per address and per client IP,
 * counted whether or not the address has an account (so the limit reveals nothing). Each request
 * mails a new link that replaces the last: three is plenty for a person who mistyped, and keeps
 * anyone from flooding an inbox.
 */
export const PASSWORD_RESET_LIMITS = { perAddress: 3, perIp: 30 } as const;

export const PASSWORD_RESET_PATH = '/password-reset';

/**
 * Password resets by email: a request mails the address's member a single-use link (only its
 * token's SHA-256 is kept, on the member, for `PASSWORD_RESET_TTL_MS`); following it sets a new
 * password, ends every session and portal token of the member, and is audited.
 */
@Injectable()
export class PasswordResetsService {
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

  /** Resets need mail: without `SMTP_URL` the pages say to ask an admin instead. */
  get available(): boolean {
    return this.outbox.sends;
  }

  /** Seconds to wait when over a limit for the address or the IP, else 0. */
  async throttled(email: string, ip: string | undefined): Promise<number> {
    const checks = await Promise.all([
      this.throttle.increment(
        `password-reset:email:${hashToken(normalizeEmail(email))}`,
        60_000,
        PASSWORD_RESET_LIMITS.perAddress,
        0,
        'password-reset',
      ),
      this.throttle.increment(
        `password-reset:ip:${normalizeIp(ip)}`,
        60_000,
        PASSWORD_RESET_LIMITS.perIp,
        0,
        'password-reset',
      ),
    ]);
    const blocked = checks.filter((c) => c.isBlocked);
    return blocked.length ? Math.max(1, ...blocked.map((c) => c.timeToBlockExpire)) : 0;
  }

  /**
   * Queues a reset link for the member with this address, replacing any earlier one; does
   * nothing for an address without an account (the caller answers both the same).
   */
  async request(email: string): Promise<void> {
    const account = await this.users.findAccountByEmail(email);
    if (!account) return;
    // The mail names the account's first organization, and is sent (and kept) as one of its.
    const [first] = await this.users.usersOf(account.id);
    if (!first) return;
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.clock.now().getTime() + PASSWORD_RESET_TTL_MS);
    await this.tx.run(async (manager) => {
      await manager.update(
        AccountRecord,
        { id: account.id },
        { passwordResetHash: hashToken(token), passwordResetExpiresAt: expiresAt },
      );
      const organization = await manager.findOneByOrFail(Organization, {
        id: first.organizationId,
      });
      const resetUrl = `${this.origin}${PASSWORD_RESET_PATH}/new?token=${token}`;
      await this.outbox.enqueue(manager, {
        organizationId: first.organizationId,
        kind: 'password_reset',
        recipient: account.email,
        ...passwordResetMail({ organizationName: organization.name, resetUrl, expiresAt }),
      });
    });
  }

  /** The account a working link is for (the page greets it by address), else null. */
  findByToken(token: string): Promise<AccountRecord | null> {
    return this.users.findByResetToken(token);
  }

  /** Sets the new password and ends every session; null when the link no longer works. */
  complete(token: string, password: string, ip: string | undefined): Promise<AccountRecord | null> {
    return this.users.resetPassword(token, password, async (manager, _account, users) => {
      // The member on the sign-in pages: the emailed link is how they proved who they are. The
      // password is the person's, so each of their organizations' audit logs says so.
      for (const user of users) {
        await this.audit.record(
          {
            kind: 'sign_in',
            organizationId: user.organizationId,
            credentialId: PORTAL_CLIENT_ID,
            userId: user.id,
            ip: ip ? normalizeIp(ip) : null,
          },
          { action: 'user.password_reset', targetType: 'user', targetId: user.id },
          manager,
        );
      }
    });
  }
}
