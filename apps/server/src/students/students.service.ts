import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Student as StudentResource,
  type StudentCreateSchema,
  type StudentUpdateSchema,
} from '@platform/contract';
import { type EntityManager, Not, type Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { newId, publicId } from '../common/ids';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { pick, type UpdatableFields } from '../common/patch';
import { alreadyExists } from '../common/resource-errors';
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
      }),
    );
  }

  create(
    principal: Principal,
    input: z.output<typeof StudentCreateSchema>,
  ): Promise<StudentResource> {
    const organizationId = principal.organizationId;
    return this.records.create(
      organizationId,
      async (manager, now) => {
        await assertNumberFree(manager, organizationId, input.student_number);
        return {
          id: newId('student', now.getTime()),
          organizationId,
          studentNumber: input.student_number,
          firstName: input.first_name,
          lastName: input.last_name,
          preferredName: input.preferred_name ?? null,
          email: input.email ?? null,
          dateOfBirth: input.date_of_birth ?? null,
          status: input.status,
          gradeLevel: input.grade_level ?? null,
          createdAt: now,
          updatedAt: now,
        };
      },
      { conflict: () => numberTaken(input.student_number) },
    );
  }

  update(
    principal: Principal,
    id: string,
    input: z.output<typeof StudentUpdateSchema>,
  ): Promise<StudentResource> {
    const organizationId = principal.organizationId;
    const number = input.student_number;
    return this.records.update(organizationId, id, pick(input, STUDENT_UPDATABLE), {
      check: async (student, manager) => {
        if (number !== undefined)
          await assertNumberFree(manager, organizationId, number, student.id);
      },
      conflict: number === undefined ? undefined : () => numberTaken(number),
    });
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

/** Refuses a number another student of the organization holds (`self`: the one being changed). */
async function assertNumberFree(
  manager: EntityManager,
  organizationId: string,
  studentNumber: string,
  self?: string,
): Promise<void> {
  const where = { organizationId, studentNumber, ...(self === undefined ? {} : { id: Not(self) }) };
  if (await manager.existsBy(Student, where)) throw numberTaken(studentNumber);
}

function numberTaken(studentNumber: string) {
  return alreadyExists(
    'student_number',
    `A student with student_number '${studentNumber}' already exists`,
  );
}
