import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

const jsonHeaders = {
  to: (value: Record<string, string> | null | undefined) => (value ? JSON.stringify(value) : null),
  from: (value: string | null) =>
    value === null ? null : (JSON.parse(value) as Record<string, string>),
};

@Entity({ name: 'webhook_attempts' })
export class WebhookAttemptRecord {
  @PrimaryColumn({ name: 'message_id', type: 'varchar', length: 32 })
  messageId: string;

  /** 1 for the first attempt of the message, and so on. */
  @PrimaryColumn({ type: 'integer' })
  number: number;

  @Column({ name: 'attempted_at', ...timestampColumn })
  attemptedAt: Date;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ name: 'latency_ms', type: 'integer' })
  latencyMs: number;

  /** The first 4 KiB of the response body. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /**
   * The request headers as sent, JSON text, signatures withheld (`withholdSignatures`); null for
   * a request never made and for attempts recorded before the column existed. Stored rather than
   * rebuilt: the user agent, the URL's host and the live secrets can all change afterwards.
   */
  @Column({ name: 'request_headers', type: 'text', nullable: true, transformer: jsonHeaders })
  requestHeaders: Record<string, string> | null;
}
