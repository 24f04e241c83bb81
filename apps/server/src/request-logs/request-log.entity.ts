import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/** One API request of an organization; inserted in batches after the response, never updated. */
@Entity({ name: 'request_logs' })
export class RequestLogRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'varchar', length: 8 })
  method: string;

  /** The route template (`/v1/students/:id`). */
  @Column({ type: 'varchar', length: 200 })
  route: string;

  /** The path with its ids, never the query string; null on entries made before it was kept. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  path: string | null;

  @Column({ type: 'integer' })
  status: number;

  /** `2xx`, `4xx`…: stored so the class filter and the usage figures use an index. */
  @Column({ name: 'status_class', type: 'varchar', length: 3 })
  statusClass: string;

  @Column({ name: 'latency_ms', type: 'double precision' })
  latencyMs: number;

  @Column({ name: 'credential_type', type: 'varchar', length: 32 })
  credentialType: 'personal_access_token' | 'oauth_access_token';

  /** The personal access token id or the OAuth client id (never a secret). */
  @Column({ name: 'credential_id', type: 'varchar', length: 64 })
  credentialId: string;

  @Column({ name: 'request_id', type: 'varchar', length: 128 })
  requestId: string;

  @Column({ name: 'error_code', type: 'varchar', length: 64, nullable: true })
  errorCode: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;
}
