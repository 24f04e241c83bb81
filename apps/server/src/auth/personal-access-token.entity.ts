import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

@Entity({ name: 'personal_access_tokens' })
@Index('idx_pat_org_created', ['organizationId', 'createdAt'])
export class PersonalAccessToken {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** The first characters of the token, safe to show so a user can tell tokens apart. */
  @Column({ name: 'token_prefix', type: 'varchar', length: 16 })
  tokenPrefix: string;

  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  @Column({ name: 'token_hash', type: 'varchar', length: 64, unique: true })
  tokenHash: string;

  /** The member it acts for (made over the API by their token), capped by their role; null: made by an operator. */
  @Column({ name: 'user_id', type: 'varchar', length: 32, nullable: true })
  userId: string | null;

  /** Space-separated scopes. */
  @Column({ type: 'varchar', length: 1000 })
  scopes: string;

  @Column({ name: 'expires_at', ...timestampColumn, nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'last_used_at', ...timestampColumn, nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', ...timestampColumn, nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  /** Created or revoked. */
  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
