import { statementsMigration, timestampColumns } from '../../database/migration';
import { organizationListIndexes, organizationTable } from '../../database/tenant-table';

/**
 * Webhook endpoints, their messages (one per endpoint and event) and every delivery attempt, and
 * the outbox's fan-out marker. One statement list for both dialects: they differ only in the
 * timestamp type and how a boolean literal is written.
 */
export const webhooksMigration = statementsMigration(
  'Webhooks1764000000000',
  (t) => [
    organizationTable(t, 'webhook_endpoints', [
      'url varchar(2048) NOT NULL',
      'description text',
      'events text NOT NULL',
      'enabled boolean NOT NULL',
      "disabled_reason varchar(16) CHECK (disabled_reason IN ('requested', 'gone', 'failing'))",
      'secret text NOT NULL',
      'previous_secret text',
      ...timestampColumns(t, 'previous_secret_expires_at', 'failing_since'),
    ]),
    ...organizationListIndexes('webhook_endpoints'),
    organizationTable(t, 'webhook_messages', [
      'endpoint_id varchar(32) NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE',
      'event_id varchar(32) NOT NULL REFERENCES events (id) ON DELETE CASCADE',
      'event_type varchar(64) NOT NULL',
      "status varchar(16) NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed'))",
      'attempt_count integer NOT NULL',
      'retries_used integer NOT NULL',
      `next_attempt_at ${t.timestamp}`,
    ]),
    // The dispatcher's work queue: only pending messages, by due time.
    `CREATE INDEX idx_webhook_messages_due ON webhook_messages (next_attempt_at) WHERE status = 'pending'`,
    `CREATE INDEX idx_webhook_messages_endpoint_created ON webhook_messages (organization_id, endpoint_id, created_at, id)`,
    `CREATE INDEX idx_webhook_messages_endpoint_updated ON webhook_messages (organization_id, endpoint_id, updated_at, id)`,
    `CREATE INDEX idx_webhook_messages_endpoint_pending ON webhook_messages (endpoint_id) WHERE status = 'pending'`,
    `CREATE TABLE webhook_attempts (
      message_id varchar(32) NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
      number integer NOT NULL,
      attempted_at ${t.timestamp} NOT NULL,
      status_code integer,
      latency_ms integer NOT NULL,
      response_body text,
      error text,
      PRIMARY KEY (message_id, number)
    )`,
    // Events written before this migration are history, not news: they are not fanned out.
    `ALTER TABLE events ADD COLUMN fanout_pending boolean NOT NULL DEFAULT ${t.false}`,
    `CREATE INDEX idx_events_fanout_pending ON events (created_at, id) WHERE fanout_pending = ${t.true}`,
  ],
  () => [
    'DROP INDEX idx_events_fanout_pending',
    'ALTER TABLE events DROP COLUMN fanout_pending',
    'DROP TABLE webhook_attempts',
    'DROP TABLE webhook_messages',
    'DROP TABLE webhook_endpoints',
  ],
);
