import { dialectTypes, type Migration, runStatements } from '../../database/migration';

/**
 * Gap detection for every endpoint: each delivery of a change keeps the position of the change
 * delivered to its endpoint before it (`previous_position`), and each endpoint where its chain
 * starts (`chain_start`, a feed position). Endpoints already there chain from the start of
 * their organization's feed; deliveries already made have no previous position.
 */
export const deliveryChainMigration: Migration = {
  name: 'DeliveryChain1767213000000',
  async up(db, dialect) {
    const t = dialectTypes(dialect);
    await runStatements(db, [
      `ALTER TABLE webhook_endpoints ADD COLUMN chain_start ${t.bigint} NOT NULL DEFAULT 0`,
      `ALTER TABLE webhook_messages ADD COLUMN previous_position ${t.bigint}`,
    ]);
  },
  down: (db) =>
    runStatements(db, [
      'ALTER TABLE webhook_messages DROP COLUMN previous_position',
      'ALTER TABLE webhook_endpoints DROP COLUMN chain_start',
    ]),
};
