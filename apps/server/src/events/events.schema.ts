import type { ModuleSchema } from '../database/module-schema';
import { EventRecord, FeedHead } from './event.entity';
import { changeFeedMigration } from './migrations/1767033000000-change-feed';
import { previousAttributesMigration } from './migrations/1767300000000-previous-attributes';

export const EVENTS_SCHEMA: ModuleSchema = {
  entities: [EventRecord, FeedHead],
  migrations: [changeFeedMigration, previousAttributesMigration],
};
