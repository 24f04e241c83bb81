import { dialectTypes, type Migration, runStatements } from '../../database/migration';

/**
 * The change feed's positions: a `position` on every event that is a change, one counter row per
 * organization (`feed_heads`), and positions for the events already there, numbered per
 * organization in the order they were written ((created_at, id)). Test `ping`s are not changes.
 */
export const changeFeedMigration: Migration = {
  name: 'ChangeFeed1767033000000',
  async up(db, dialect) {
    const t = dialectTypes(dialect);
    await runStatements(db, [
      `ALTER TABLE events ADD COLUMN position ${t.bigint}`,
      `CREATE TABLE feed_heads (
  organization_id varchar(32) PRIMARY KEY NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  position ${t.bigint} NOT NULL
)`,
      `UPDATE events SET position = numbered.position FROM (
  SELECT id, ROW_NUMBER() OVER (PARTITION BY organization_id ORDER BY created_at, id) AS position
  FROM events WHERE type <> 'ping'
) AS numbered WHERE events.id = numbered.id`,
      `INSERT INTO feed_heads (organization_id, position)
  SELECT organization_id, MAX(position) FROM events WHERE position IS NOT NULL GROUP BY organization_id`,
      `CREATE UNIQUE INDEX uq_events_org_position ON events (organization_id, position)`,
    ]);
  },
  down: (db) =>
    runStatements(db, [
      'DROP INDEX uq_events_org_position',
      'DROP TABLE feed_heads',
      'ALTER TABLE events DROP COLUMN position',
    ]),
};
