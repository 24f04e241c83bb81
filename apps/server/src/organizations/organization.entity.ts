import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

export const PLANS = ['standard', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

@Entity({ name: 'organizations' })
export class Organization {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  plan: Plan;

  /** Requests per rolling minute; null means the configured default (600). */
  @Column({ name: 'rate_limit_per_minute', type: 'integer', nullable: true })
  rateLimitPerMinute: number | null;

  /** A sandbox's parent organization (docs/sandboxes.md); null for a live organization. */
  @Column({ name: 'parent_organization_id', type: 'varchar', length: 32, nullable: true })
  parentOrganizationId: string | null;

  /** A sandbox's generated school: its size and generator seed. */
  @Column({ name: 'sandbox_students', type: 'integer', nullable: true })
  sandboxStudents: number | null;

  @Column({ name: 'sandbox_seed', type: 'integer', nullable: true })
  sandboxSeed: number | null;

  @Column({ name: 'sandbox_reset_at', ...timestampColumn, nullable: true })
  sandboxResetAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
