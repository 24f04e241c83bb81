import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  STUDENT_DELETE_REFUSAL,
  StudentSchema,
  type Student as StudentResource,
  StudentCreateSchema,
  StudentUpdateSchema,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../common/principal';
import { OwnedRecordsFactory, PatchableResourceService } from '../common/owned-records';
import { TransactionRunner } from '../common/transactions';
import { insertRows } from '../database/write-rows';
import { type BatchItem, createBody, upsertBatch } from '../common/batch-upsert';
import { Student } from './student.entity';

type StudentCreate = z.output<typeof StudentCreateSchema>;

@Injectable()
export class StudentsService extends PatchableResourceService<Student, StudentResource, 'student'> {
  constructor(
    @InjectRepository(Student) students: Repository<Student>,
    owned: OwnedRecordsFactory,
    private readonly transactions: TransactionRunner,
  ) {
    super(
      owned.for(students, {
        object: 'student',
        resource: StudentSchema,
        update: StudentUpdateSchema,
        listQuery: contract.students.list.query,
        uniqueKey: 'student_number',
      }),
    );
  }

  create(principal: Principal, input: StudentCreate): Promise<StudentResource> {
    return this.records.create(principal.organizationId, () =>
      this.records.fromBody(input, StudentCreateSchema),
    );
  }

  /** `POST /v1/students/batch`: each item created or updated by its external id. */
  batchUpsert(principal: Principal, items: readonly BatchItem[]) {
    return upsertBatch(this.records, principal.organizationId, items, {
      create: (item) =>
        this.records.fromBody(createBody(StudentCreateSchema, item), StudentCreateSchema),
      check: () => {},
    });
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, STUDENT_DELETE_REFUSAL);
  }

  /** Bulk insert in one transaction (seeding, imports); returns how many rows were written. */
  async insertMany(rows: Student[]): Promise<number> {
    await this.transactions.run((manager) => insertRows(manager, Student, rows));
    return rows.length;
  }
}
