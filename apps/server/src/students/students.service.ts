import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { ListQuery, Student as StudentResource } from '@platform/contract';
import type { Repository } from 'typeorm';
import type { Principal } from '../auth/principal';
import { findPage, type ListFields } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { toIso } from '../common/timestamp';
import { Student } from './student.entity';

export const STUDENT_LIST_FIELDS: ListFields = {
  columns: {
    status: 'status',
    grade_level: 'gradeLevel',
    first_name: 'firstName',
    last_name: 'lastName',
    created_at: 'createdAt',
    updated_at: 'updatedAt',
  },
  search: ['firstName', 'lastName', 'email', 'studentNumber'],
};

export function toStudentResource(student: Student): StudentResource {
  return {
    id: student.id,
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
  constructor(@InjectRepository(Student) private readonly students: Repository<Student>) {}

  /** Bulk insert in one transaction (seeding, imports); returns how many rows were written. */
  async insertMany(rows: Student[]): Promise<number> {
    const chunk = 500;
    await this.students.manager.transaction(async (manager) => {
      for (let i = 0; i < rows.length; i += chunk) {
        await manager.insert(Student, rows.slice(i, i + chunk));
      }
    });
    return rows.length;
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const { rows, total } = await findPage(
      this.students,
      principal.organizationId,
      query,
      STUDENT_LIST_FIELDS,
    );
    return { data: rows.map(toStudentResource), ...pageEnvelope(url, query, total) };
  }
}
