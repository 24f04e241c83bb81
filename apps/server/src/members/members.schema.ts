import type { ModuleSchema } from '../database/module-schema';
import { InvitationRecord } from './invitation.entity';
import { membersMigration } from './migrations/1766200000001-members';

export const MEMBERS_SCHEMA: ModuleSchema = {
  entities: [InvitationRecord],
  migrations: [membersMigration],
};
