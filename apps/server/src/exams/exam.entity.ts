import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

@Entity({ name: 'exams' })
export class Exam {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The record's key in the school's own system; unique per organization where set. */
  @Column({ name: 'external_id', type: 'varchar', length: 128, nullable: true })
  externalId: string | null;

  @Column({ name: 'course_id', type: 'varchar', length: 32 })
  courseId: string;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ name: 'max_score', type: 'double precision' })
  maxScore: number;

  @Column({ name: 'held_on', type: 'varchar', length: 10, nullable: true })
  heldOn: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
