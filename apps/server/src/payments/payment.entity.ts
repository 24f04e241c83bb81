import type { PaymentStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from '../common/columns';
import { timestampColumn } from '../common/timestamp';

@Entity({ name: 'payments' })
export class Payment {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The record's key in the school's own system; unique per organization where set. */
  @Column({ name: 'external_id', type: 'varchar', length: 128, nullable: true })
  externalId: string | null;

  @Column({ name: 'student_id', type: 'varchar', length: 32 })
  studentId: string;

  @Column({ name: 'enrollment_id', type: 'varchar', length: 32, nullable: true })
  enrollmentId: string | null;

  /** Minor units of `currency`. */
  @Column({ type: 'bigint', transformer: bigintAsNumber })
  amount: number;

  @Column({ type: 'varchar', length: 3 })
  currency: string;

  @Column({ type: 'varchar', length: 16 })
  status: PaymentStatus;

  @Column({ name: 'amount_refunded', type: 'bigint', transformer: bigintAsNumber })
  amountRefunded: number;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  @Column({ name: 'external_reference', type: 'varchar', length: 200, nullable: true })
  externalReference: string | null;

  @Column({ name: 'failure_reason', type: 'varchar', length: 500, nullable: true })
  failureReason: string | null;

  @Column({ name: 'succeeded_at', ...timestampColumn, nullable: true })
  succeededAt: Date | null;

  @Column({ name: 'failed_at', ...timestampColumn, nullable: true })
  failedAt: Date | null;

  @Column({ name: 'refunded_at', ...timestampColumn, nullable: true })
  refundedAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
