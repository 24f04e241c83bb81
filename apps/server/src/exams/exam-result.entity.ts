import type { ExamResultStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

@Entity({ name: 'exam_results' })
export class ExamResult {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The record's key in the school's own system; unique per organization where set. */
  @Column({ name: 'external_id', type: 'varchar', length: 128, nullable: true })
  externalId: string | null;

  @Column({ name: 'exam_id', type: 'varchar', length: 32 })
  examId: string;

  @Column({ name: 'student_id', type: 'varchar', length: 32 })
  studentId: string;

  @Column({ type: 'double precision' })
  score: number;

  @Column({ type: 'varchar', length: 16, nullable: true })
  grade: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: ExamResultStatus;

  @Column({ name: 'published_at', ...timestampColumn, nullable: true })
  publishedAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
