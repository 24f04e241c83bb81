import type { AuditActorType } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/** One recorded change; written in the change's own transaction, never updated. */
@Entity({ name: 'audit_events' })
export class AuditEventRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ name: 'actor_type', type: 'varchar', length: 32 })
  actorType: AuditActorType;

  /** The personal access token or OAuth client id; null for an operator. */
  @Column({ name: 'credential_id', type: 'varchar', length: 64, nullable: true })
  credentialId: string | null;

  @Column({ name: 'user_id', type: 'varchar', length: 32, nullable: true })
  userId: string | null;

  @Column({ type: 'varchar', length: 64 })
  action: string;

  @Column({ name: 'target_type', type: 'varchar', length: 32 })
  targetType: string;

  @Column({ name: 'target_id', type: 'varchar', length: 64 })
  targetId: string;

  /** JSON text, or null. */
  @Column({ type: 'text', nullable: true })
  changes: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  ip: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;
}
