import type { ModuleSchema } from '../database/module-schema';
import { EventRecord } from './event.entity';

export const EVENTS_SCHEMA: ModuleSchema = { entities: [EventRecord], migrations: [] };
