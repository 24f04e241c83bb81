import type { WebhookDisabledReason, WebhookOwnerType } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from '../common/columns';
import { timestampColumn } from '../common/timestamp';

/** `events` is stored as JSON text: `["*"]` or a list of event types. */
const jsonList = {
  to: (value: string[]) => JSON.stringify(value),
  from: (value: string) => JSON.parse(value) as string[],
};

@Entity({ name: 'webhook_endpoints' })
export class WebhookEndpointRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'text', transformer: jsonList })
  events: string[];

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 32, nullable: true })
  disabledReason: WebhookDisabledReason | null;

  /**
   * The credential the endpoint is bound to (the last to create or change it); all null for
   * endpoints made without one (CLI, `pnpm dev`). See `EndpointOwner`.
   */
  @Column({ name: 'owner_type', type: 'varchar', length: 32, nullable: true })
  ownerType: WebhookOwnerType | null;

  @Column({ name: 'owner_id', type: 'varchar', length: 32, nullable: true })
  ownerId: string | null;

  @Column({ name: 'owner_user_id', type: 'varchar', length: 32, nullable: true })
  ownerUserId: string | null;

  /** The OAuth grant (as oauth_artifacts.grant_id holds it) of a user's token; else null. */
  @Column({ name: 'owner_grant_id', type: 'varchar', length: 64, nullable: true })
  ownerGrantId: string | null;

  /** The signing secret, encrypted (see `SecretBox`): it must be readable to sign, so not hashed. */
  @Column({ type: 'text' })
  secret: string;

  /** The secret before the last rotation, encrypted; signs beside `secret` until it expires. */
  @Column({ name: 'previous_secret', type: 'text', nullable: true })
  previousSecret: string | null;

  @Column({ name: 'previous_secret_expires_at', ...timestampColumn, nullable: true })
  previousSecretExpiresAt: Date | null;

  /** When the current run of failed attempts began; null after any success. */
  @Column({ name: 'failing_since', ...timestampColumn, nullable: true })
  failingSince: Date | null;

  /**
   * Where the endpoint's delivery chain starts: its organization's feed head when the endpoint
   * was created or its `events` last changed. A delivery's `previous_position` names only changes
   * after it (`delivery-chain.ts`).
   */
  @Column({ name: 'chain_start', type: 'bigint', default: 0, transformer: bigintAsNumber })
  chainStart: number;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
