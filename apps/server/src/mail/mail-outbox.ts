import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createTransport, type Transporter } from 'nodemailer';
import {
  type EntityManager,
  In,
  IsNull,
  LessThan,
  LessThanOrEqual,
  type Repository,
} from 'typeorm';
import { Clock } from '../common/clock';
import { HourlyPruner } from '../common/hourly-pruner';
import { newInternalId } from '../common/ids';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { MailMessageRecord } from './mail-message.entity';
import type { RenderedMail } from './mail-templates';

/** How often the sender looks for due messages it was not told about (retries, other instances). */
const POLL_INTERVAL_MS = 1000;
/** How long a claimed message is another sender's to leave alone: an attempt's upper bound. */
const LEASE_MS = 2 * 60_000;
const CLAIM_BATCH = 10;
/** Sent and given-up messages' envelopes are kept this long, then pruned. */
const RETENTION_MS = 30 * 24 * 60 * 60_000;

export interface OutgoingMail extends RenderedMail {
  organizationId: string | null;
  kind: string;
  recipient: string;
}

/**
 * Outgoing mail through an outbox table: `enqueue` writes a message in the transaction of what it
 * announces, so a 2xx means it will be sent; the sender claims due messages (`FOR UPDATE SKIP
 * LOCKED` on PostgreSQL, so instances share the work), hands each to the SMTP server (`SMTP_URL`,
 * nodemailer) and on failure tries again on `MAIL_RETRY_SCHEDULE`. A sender that dies mid-attempt
 * leaves its lease to run out and another takes the message: delivery is at least once. A sent
 * message's body is emptied at once (it may hold a one-time link).
 */
@Injectable()
export class MailOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Mail');
  private transport: Transporter | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectRepository(MailMessageRecord) private readonly messages: Repository<MailMessageRecord>,
    private readonly clock: Clock,
    private readonly sql: Sql,
    private readonly tx: TransactionRunner,
  ) {}

  /** Whether this server sends mail (`SMTP_URL` set). */
  get sends(): boolean {
    return this.config.mail.smtpUrl !== undefined;
  }

  /** Writes a message in the transaction of `manager`; it is sent once that commits. */
  async enqueue(manager: EntityManager, mail: OutgoingMail): Promise<void> {
    const now = this.clock.now();
    await manager.insert(MailMessageRecord, {
      id: newInternalId('mail', now.getTime()),
      ...mail,
      attempts: 0,
      nextAttemptAt: now,
      sentAt: null,
      failedAt: null,
      lastError: null,
      createdAt: now,
    });
    this.tx.afterCommit(manager, () => this.kick());
  }

  onApplicationBootstrap(): void {
    const url = this.config.mail.smtpUrl;
    if (!url) return;
    this.transport = createTransport({
      url,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    this.timer = setInterval(() => this.kick(), POLL_INTERVAL_MS);
    this.timer.unref();
    this.kick();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    const transport = this.transport;
    this.transport = undefined;
    await this.running;
    transport?.close();
  }

  /** Sends what is due now, unless a round is under way (which then runs once more). */
  kick(): void {
    if (!this.transport) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: unknown) => this.logger.warn(`Mail round failed: ${messageOf(error)}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.claim();
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((message) => this.attempt(message)));
      if (!this.transport) return;
    }
  }

  /** Due messages, each leased to this sender with its attempt counted. */
  private claim(): Promise<MailMessageRecord[]> {
    return this.tx.run(async (manager) => {
      const now = this.clock.now();
      const due = await manager.find(MailMessageRecord, {
        where: { sentAt: IsNull(), failedAt: IsNull(), nextAttemptAt: LessThanOrEqual(now) },
        order: { nextAttemptAt: 'ASC' },
        take: CLAIM_BATCH,
        ...(this.sql.dialect === 'postgres' && {
          lock: { mode: 'pessimistic_write' as const, onLocked: 'skip_locked' as const },
        }),
      });
      if (due.length === 0) return [];
      await manager.update(
        MailMessageRecord,
        { id: In(due.map((m) => m.id)) },
        { attempts: () => 'attempts + 1', nextAttemptAt: new Date(now.getTime() + LEASE_MS) },
      );
      return due.map((m) => ({ ...m, attempts: m.attempts + 1 }));
    });
  }

  private async attempt(message: MailMessageRecord): Promise<void> {
    const transport = this.transport;
    if (!transport) return;
    try {
      await transport.sendMail({
        from: this.config.mail.from,
        to: message.recipient,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
      await this.messages.update(
        { id: message.id },
        { sentAt: this.clock.now(), text: '', html: '', lastError: null },
      );
    } catch (error) {
      const now = this.clock.now();
      const delay = this.config.mail.retryScheduleMs[message.attempts - 1];
      const lastError = messageOf(error).slice(0, 500);
      // The message's id and kind, not its recipient: an address is personal data, and an SMTP
      // server's refusal often quotes it, so the log line has every address masked.
      this.logger.warn(
        `Mail ${message.id} (${message.kind}) attempt ${message.attempts} failed: ${withoutAddresses(lastError)}`,
      );
      await this.messages.update(
        { id: message.id },
        delay === undefined
          ? { failedAt: now, text: '', html: '', lastError }
          : { nextAttemptAt: new Date(now.getTime() + delay), lastError },
      );
    }
  }

  /** Deletes the envelopes of messages sent or given up more than RETENTION_MS ago. */
  async prune(): Promise<number> {
    const before = LessThan(new Date(this.clock.nowMs() - RETENTION_MS));
    let deleted = 0;
    for (const done of [{ sentAt: before }, { failedAt: before }])
      deleted += (await this.messages.delete(done)).affected ?? 0;
    return deleted;
  }
}

@Injectable()
export class MailPruner extends HourlyPruner {
  constructor(private readonly outbox: MailOutbox) {
    super('Mail', 'sent mail envelopes');
  }

  protected prune(): Promise<number> {
    return this.outbox.prune();
  }
}

/** `text` with each email address in it replaced by `<address>`. */
export function withoutAddresses(text: string): string {
  return text.replace(/[^\s<>()[\]@,;:"]+@[^\s<>()[\]@,;:"]+/g, '<address>');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
