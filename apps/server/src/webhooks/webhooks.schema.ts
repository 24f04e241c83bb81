import type { ModuleSchema } from '../database/module-schema';
import { webhooksMigration } from './migrations/1764000000000-webhooks';
import { delegationMigration } from './migrations/1766100000000-delegation';
import { memberRemovedMigration } from './migrations/1766700000000-member-removed';
import { deliveryChainMigration } from './migrations/1767213000000-delivery-chain';
import { attemptHeadersMigration } from './migrations/1767412000000-attempt-headers';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { WebhookMessageRecord } from './webhook-message.entity';

export const WEBHOOKS_SCHEMA: ModuleSchema = {
  entities: [WebhookEndpointRecord, WebhookMessageRecord, WebhookAttemptRecord],
  migrations: [
    webhooksMigration,
    delegationMigration,
    memberRemovedMigration,
    deliveryChainMigration,
    attemptHeadersMigration,
  ],
};
