import type { Role } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/** A one-time link that makes its holder a member with `role`. */
@Entity({ name: 'invitations' })
export class InvitationRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** Lower-cased. */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'varchar', length: 16 })
  role: Role;

  /** SHA-256 of the link's token, hex; the token itself is shown once and never stored. */
  @Column({ name: 'token_hash', type: 'varchar', length: 64, unique: true })
  tokenHash: string;

  @Column({ name: 'invited_by_user_id', type: 'varchar', length: 32, nullable: true })
  invitedByUserId: string | null;

  @Column({ name: 'expires_at', ...timestampColumn })
  expiresAt: Date;

  @Column({ name: 'accepted_at', ...timestampColumn, nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'revoked_at', ...timestampColumn, nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
