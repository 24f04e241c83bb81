import type { EnrollmentStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

@Entity({ name: 'enrollments' })
export class Enrollment {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The record's key in the school's own system; unique per organization where set. */
  @Column({ name: 'external_id', type: 'varchar', length: 128, nullable: true })
  externalId: string | null;

  @Column({ name: 'student_id', type: 'varchar', length: 32 })
  studentId: string;

  @Column({ name: 'course_id', type: 'varchar', length: 32 })
  courseId: string;

  @Column({ type: 'varchar', length: 16 })
  status: EnrollmentStatus;

  @Column({ type: 'text', nullable: true })
  notes: string | null;

  @Column({ name: 'activated_at', ...timestampColumn, nullable: true })
  activatedAt: Date | null;

  @Column({ name: 'completed_at', ...timestampColumn, nullable: true })
  completedAt: Date | null;

  @Column({ name: 'dropped_at', ...timestampColumn, nullable: true })
  droppedAt: Date | null;

  @Column({ name: 'cancelled_at', ...timestampColumn, nullable: true })
  cancelledAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
