import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ListQuery,
  type Student as StudentResource,
  type StudentCreateSchema,
  type StudentUpdateSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { deleteOwned } from '../common/delete-owned';
import { newId, publicId } from '../common/ids';
import type { PageUrl } from '../common/list/page-envelope';
import { OwnedRecords } from '../common/owned-records';
import { applyPatch, pick, type UpdatableFields } from '../common/patch';
import { alreadyExists, isUniqueViolation, notFound } from '../common/resource-errors';
import { insertRows } from '../database/sql';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
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
export class StudentsService {
  private readonly records: OwnedRecords<Student, StudentResource>;

  constructor(
    @InjectRepository(Student) private readonly students: Repository<Student>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly events: EventsService,
    sql: Sql,
  ) {
    this.records = new OwnedRecords(
      sql,
      students,
      'student',
      toStudentResource,
      contract.students.list.query,
    );
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    return this.records.list(principal.organizationId, query, url, this.config);
  }

  async retrieve(principal: Principal, id: string): Promise<StudentResource> {
    return toStudentResource(await this.find(this.students.manager, principal.organizationId, id));
  }

  /** A student of the organization inside a transaction, or undefined (for references in bodies). */
  findInOrganization(
    manager: EntityManager,
    organizationId: string,
    id: string,
  ): Promise<Student | null> {
    return manager.findOneBy(Student, { id, organizationId });
  }

  async create(
    principal: Principal,
    input: z.output<typeof StudentCreateSchema>,
  ): Promise<StudentResource> {
    const organizationId = principal.organizationId;
    return this.write(input.student_number, () =>
      this.transactions.run(async (manager) => {
        await this.assertNumberFree(manager, organizationId, input.student_number);
        const now = new Date();
        const student: Student = {
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
        await manager.insert(Student, student);
        const resource = toStudentResource(student);
        await this.events.record(manager, organizationId, 'student.created', resource, now);
        return resource;
      }),
    );
  }

  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof StudentUpdateSchema>,
  ): Promise<StudentResource> {
    const organizationId = principal.organizationId;
    return this.write(input.student_number, () =>
      this.transactions.run(async (manager) => {
        const student = await this.find(manager, organizationId, id);
        if (input.student_number !== undefined && input.student_number !== student.studentNumber) {
          await this.assertNumberFree(manager, organizationId, input.student_number);
        }
        if (!applyPatch(student, pick(input, STUDENT_UPDATABLE))) return toStudentResource(student);
        student.updatedAt = new Date();
        await manager.save(Student, student);
        const resource = toStudentResource(student);
        await this.events.record(
          manager,
          organizationId,
          'student.updated',
          resource,
          student.updatedAt,
        );
        return resource;
      }),
    );
  }

  delete(principal: Principal, id: string) {
    return deleteOwned(this.transactions, this.events, {
      entity: Student,
      object: 'student',
      organizationId: principal.organizationId,
      id,
      referencedBy: 'enrollments, payments or exam results',
      instead: "set its status to 'withdrawn' instead",
    });
  }

  /** Bulk insert in one transaction (seeding, imports); returns how many rows were written. */
  async insertMany(rows: Student[]): Promise<number> {
    await this.transactions.run((manager) => insertRows(manager, Student, rows));
    return rows.length;
  }

  private async find(manager: EntityManager, organizationId: string, id: string): Promise<Student> {
    const student = await manager.findOneBy(Student, { id, organizationId });
    if (!student) throw notFound('student', id);
    return student;
  }

  private async assertNumberFree(
    manager: EntityManager,
    organizationId: string,
    studentNumber: string,
  ): Promise<void> {
    if (await manager.existsBy(Student, { organizationId, studentNumber })) {
      throw numberTaken(studentNumber);
    }
  }

  /** The unique index still guards a race between the check above and the insert (PostgreSQL). */
  private async write<T>(studentNumber: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (studentNumber !== undefined && isUniqueViolation(error)) throw numberTaken(studentNumber);
      throw error;
    }
  }
}

function numberTaken(studentNumber: string) {
  return alreadyExists(
    'student_number',
    `A student with student_number '${studentNumber}' already exists`,
  );
}
