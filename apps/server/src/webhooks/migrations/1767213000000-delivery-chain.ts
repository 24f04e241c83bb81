import { dialectTypes, type Migration, runStatements } from '../../database/migration';

/**
 * Gap detection for every endpoint: each delivery of a change keeps the position of the change
 * delivered to its endpoint before it (`previous_position`), and each endpoint where its chain
 * starts (`chain_start`, a feed position). Endpoints already there chain from their
 * organization's head at the upgrade, so their first delivery after it starts a chain (null)
 * rather than point back at a change that may be older than the feed keeps; deliveries already
 * made have no previous position.
 */
export const deliveryChainMigration: Migration = {
  name: 'DeliveryChain1767213000000',
  async up(db, dialect) {
    const t = dialectTypes(dialect);
    await runStatements(db, [
      `ALTER TABLE webhook_endpoints ADD COLUMN chain_start ${t.bigint} NOT NULL DEFAULT 0`,
      `ALTER TABLE webhook_messages ADD COLUMN previous_position ${t.bigint}`,
      `UPDATE webhook_endpoints SET chain_start = COALESCE((SELECT h.position FROM feed_heads h
        WHERE h.organization_id = webhook_endpoints.organization_id), 0)`,
    ]);
  },
  down: (db) =>
    runStatements(db, [
      'ALTER TABLE webhook_messages DROP COLUMN previous_position',
      'ALTER TABLE webhook_endpoints DROP COLUMN chain_start',
    ]),
};
