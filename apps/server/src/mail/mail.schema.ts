import type { ModuleSchema } from '../database/module-schema';
import { MailMessageRecord } from './mail-message.entity';
import { mailOutboxMigration } from './migrations/1767900000000-mail-outbox';

export const MAIL_SCHEMA: ModuleSchema = {
  entities: [MailMessageRecord],
  migrations: [mailOutboxMigration],
};
