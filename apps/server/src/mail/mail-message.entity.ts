import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/**
 * One message of the mail outbox: written in the transaction of what it announces (an
 * invitation), sent by `MailOutbox` afterwards, retried until the SMTP server takes it. Once sent
 * its body (which may hold a one-time link) is emptied; the envelope stays for a while.
 */
@Entity({ name: 'mail_outbox' })
export class MailMessageRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32, nullable: true })
  organizationId: string | null;

  /** What the message is for (`invitation`), for logs and metrics. */
  @Column({ type: 'varchar', length: 32 })
  kind: string;

  @Column({ type: 'varchar', length: 320 })
  recipient: string;

  @Column({ type: 'varchar', length: 300 })
  subject: string;

  @Column({ type: 'text' })
  text: string;

  @Column({ type: 'text' })
  html: string;

  @Column({ type: 'integer' })
  attempts: number;

  /** When the next attempt is due; while one is under way, when its lease ends. */
  @Column({ name: 'next_attempt_at', ...timestampColumn })
  nextAttemptAt: Date;

  @Column({ name: 'sent_at', ...timestampColumn, nullable: true })
  sentAt: Date | null;

  /** Given up after the last retry. */
  @Column({ name: 'failed_at', ...timestampColumn, nullable: true })
  failedAt: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;
}
