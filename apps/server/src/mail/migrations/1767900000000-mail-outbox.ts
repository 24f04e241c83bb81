import { statementsMigration } from '../../database/migration';

/** The mail outbox: messages written with what they announce, sent and retried afterwards. */
export const mailOutboxMigration = statementsMigration(
  'MailOutbox1767900000000',
  (t) => [
    `CREATE TABLE mail_outbox (
      id varchar(32) PRIMARY KEY,
      organization_id varchar(32) REFERENCES organizations (id) ON DELETE CASCADE,
      kind varchar(32) NOT NULL,
      recipient varchar(320) NOT NULL,
      subject varchar(300) NOT NULL,
      text text NOT NULL,
      html text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at ${t.timestamp} NOT NULL,
      sent_at ${t.timestamp},
      failed_at ${t.timestamp},
      last_error varchar(500),
      created_at ${t.timestamp} NOT NULL
    )`,
    // The sender's pick: messages still to send, by when they are due.
    `CREATE INDEX idx_mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL`,
    `CREATE INDEX idx_mail_outbox_organization ON mail_outbox (organization_id)`,
  ],
  () => [`DROP TABLE mail_outbox`],
);
