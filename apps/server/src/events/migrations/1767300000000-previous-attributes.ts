import { statementsMigration } from '../../database/migration';

/**
 * An update event's `previous_attributes`: the changed top-level fields of its resource before the
 * change, as JSON text. Null for the events already there (their previous values were not kept),
 * and for created, deleted and ping events.
 */
export const previousAttributesMigration = statementsMigration(
  'PreviousAttributes1767300000000',
  () => ['ALTER TABLE events ADD COLUMN previous_attributes text'],
  () => ['ALTER TABLE events DROP COLUMN previous_attributes'],
);
