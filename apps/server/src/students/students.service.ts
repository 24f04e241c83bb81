import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Student as StudentResource,
  type StudentCreateSchema,
  type StudentUpdateSchema,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { publicId } from '../common/ids';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { fromBody, pick, type UpdatableFields } from '../common/patch';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { insertRows } from '../database/sql';
import { Student } from './student.entity';

export const STUDENT_UPDATABLE = {
  student_number: 'studentNumber',
  first_name: 'firstName',
  last_name: 'lastName',
  preferred_name: 'preferredName',
  email: 'email',
  date_of_birth: 'dateOfBirth',
  status: 'status',
  grade_level: 'gradeLevel',
} as const satisfies UpdatableFields<z.output<typeof StudentUpdateSchema>, Student>;

export function toStudentResource(student: Student): StudentResource {
  return {
    id: publicId('student', student.id),
    object: 'student',
    student_number: student.studentNumber,
    first_name: student.firstName,
    last_name: student.lastName,
    preferred_name: student.preferredName,
    email: student.email,
    date_of_birth: student.dateOfBirth,
    status: student.status,
    grade_level: student.gradeLevel,
    created_at: toIso(student.createdAt),
    updated_at: toIso(student.updatedAt),
  };
}

@Injectable()
export class StudentsService extends OwnedResourceService<Student, StudentResource, 'student'> {
  constructor(
    @InjectRepository(Student) students: Repository<Student>,
    owned: OwnedRecordsFactory,
    private readonly transactions: TransactionRunner,
  ) {
    super(
      owned.for(students, {
        object: 'student',
        toResource: toStudentResource,
        listQuery: contract.students.list.query,
        uniqueKey: { field: 'student_number', property: 'studentNumber' },
      }),
    );
  }

  create(
    principal: Principal,
    input: z.output<typeof StudentCreateSchema>,
  ): Promise<StudentResource> {
    return this.records.create(principal.organizationId, () =>
      fromBody<typeof input, Student, typeof STUDENT_UPDATABLE>(input, STUDENT_UPDATABLE),
    );
  }

  update(
    principal: Principal,
    id: string,
    input: z.output<typeof StudentUpdateSchema>,
  ): Promise<StudentResource> {
    return this.records.update(principal.organizationId, id, pick(input, STUDENT_UPDATABLE));
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, {
      referencedBy: 'enrollments, payments or exam results',
      instead: "set its status to 'withdrawn' instead",
    });
  }

  /** Bulk insert in one transaction (seeding, imports); returns how many rows were written. */
  async insertMany(rows: Student[]): Promise<number> {
    await this.transactions.run((manager) => insertRows(manager, Student, rows));
    return rows.length;
  }
}
