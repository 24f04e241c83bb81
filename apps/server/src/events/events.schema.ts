import type { ModuleSchema } from '../database/module-schema';
import { EventRecord, FeedHead } from './event.entity';
import { changeFeedMigration } from './migrations/1767033000000-change-feed';

export const EVENTS_SCHEMA: ModuleSchema = {
  entities: [EventRecord, FeedHead],
  migrations: [changeFeedMigration],
};
