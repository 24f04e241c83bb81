import type { StudentStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

// Indexes live in the migrations: (organization_id, <sort field>, id) for every sortable field,
// so a page is an index range scan and deep pages skip over index entries, not rows.
@Entity({ name: 'students' })
export class Student {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The record's key in the school's own system; unique per organization where set. */
  @Column({ name: 'external_id', type: 'varchar', length: 128, nullable: true })
  externalId: string | null;

  @Column({ name: 'student_number', type: 'varchar', length: 64 })
  studentNumber: string;

  @Column({ name: 'first_name', type: 'varchar', length: 100 })
  firstName: string;

  @Column({ name: 'last_name', type: 'varchar', length: 100 })
  lastName: string;

  @Column({ name: 'preferred_name', type: 'varchar', length: 100, nullable: true })
  preferredName: string | null;

  @Column({ type: 'varchar', length: 254, nullable: true })
  email: string | null;

  /** YYYY-MM-DD. */
  @Column({ name: 'date_of_birth', type: 'varchar', length: 10, nullable: true })
  dateOfBirth: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: StudentStatus;

  @Column({ name: 'grade_level', type: 'integer', nullable: true })
  gradeLevel: number | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}
