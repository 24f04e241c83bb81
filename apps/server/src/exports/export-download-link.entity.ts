import type { WebhookOwnerType } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/**
 * A short-lived download link of an export's file. Only the SHA-256 of its token is kept (the
 * link is looked up by it), and the credential that made it (`owner_*`, as every member-owned
 * thing records its owner: auth/member-owned.ts), so it works no longer than that credential and
 * its member do.
 */
@Entity({ name: 'export_download_links' })
export class ExportDownloadLinkRecord {
  /** Lowercase hex SHA-256 of the token in the URL. */
  @PrimaryColumn({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  @Column({ name: 'export_id', type: 'varchar', length: 32 })
  exportId: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ name: 'owner_type', type: 'varchar', length: 32, nullable: true })
  ownerType: WebhookOwnerType | null;

  @Column({ name: 'owner_id', type: 'varchar', length: 32, nullable: true })
  ownerId: string | null;

  @Column({ name: 'owner_user_id', type: 'varchar', length: 32, nullable: true })
  ownerUserId: string | null;

  @Column({ name: 'owner_grant_id', type: 'varchar', length: 64, nullable: true })
  ownerGrantId: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'expires_at', ...timestampColumn })
  expiresAt: Date;
}
