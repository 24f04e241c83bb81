import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Courses, enrollments, payments, exams and results, and the events outbox. */
export class Domain1763900000000 implements MigrationInterface {
  name = 'Domain1763900000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE courses (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        code varchar(32) NOT NULL,
        title varchar(200) NOT NULL,
        description text,
        status varchar(16) NOT NULL CHECK (status IN ('draft', 'active', 'archived')),
        start_date varchar(10),
        end_date varchar(10),
        capacity integer CHECK (capacity > 0),
        created_at datetime NOT NULL,
        updated_at datetime NOT NULL,
        CHECK (end_date IS NULL OR start_date IS NULL OR end_date >= start_date)
      )`);
    await db.query(`CREATE UNIQUE INDEX uq_courses_org_code ON courses (organization_id, code)`);
    await db.query(
      `CREATE INDEX idx_courses_org_created ON courses (organization_id, created_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_courses_org_updated ON courses (organization_id, updated_at, id)`,
    );
    await db.query(`CREATE INDEX idx_courses_org_title ON courses (organization_id, title, id)`);
    await db.query(
      `CREATE INDEX idx_courses_org_start ON courses (organization_id, start_date, id)`,
    );
    await db.query(`
      CREATE TABLE enrollments (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        student_id varchar(32) NOT NULL REFERENCES students (id),
        course_id varchar(32) NOT NULL REFERENCES courses (id),
        status varchar(16) NOT NULL CHECK (status IN ('pending', 'active', 'completed', 'dropped', 'cancelled')),
        notes text,
        activated_at datetime,
        completed_at datetime,
        dropped_at datetime,
        cancelled_at datetime,
        created_at datetime NOT NULL,
        updated_at datetime NOT NULL
      )`);
    await db.query(
      `CREATE UNIQUE INDEX uq_enrollments_live ON enrollments (student_id, course_id) WHERE status IN ('pending', 'active')`,
    );
    await db.query(
      `CREATE INDEX idx_enrollments_org_created ON enrollments (organization_id, created_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_enrollments_org_updated ON enrollments (organization_id, updated_at, id)`,
    );
    await db.query(`CREATE INDEX idx_enrollments_student ON enrollments (student_id, created_at)`);
    await db.query(`CREATE INDEX idx_enrollments_course_status ON enrollments (course_id, status)`);
    await db.query(`
      CREATE TABLE payments (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        student_id varchar(32) NOT NULL REFERENCES students (id),
        enrollment_id varchar(32) REFERENCES enrollments (id),
        amount integer NOT NULL CHECK (amount > 0),
        currency varchar(3) NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'refunded')),
        amount_refunded integer NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
        description varchar(500),
        external_reference varchar(200),
        failure_reason varchar(500),
        succeeded_at datetime,
        failed_at datetime,
        refunded_at datetime,
        created_at datetime NOT NULL,
        updated_at datetime NOT NULL
      )`);
    await db.query(
      `CREATE INDEX idx_payments_org_created ON payments (organization_id, created_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_payments_org_updated ON payments (organization_id, updated_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_payments_org_amount ON payments (organization_id, amount, id)`,
    );
    await db.query(
      `CREATE INDEX idx_payments_org_succeeded ON payments (organization_id, succeeded_at, id)`,
    );
    await db.query(`CREATE INDEX idx_payments_student ON payments (student_id, created_at)`);
    await db.query(`CREATE INDEX idx_payments_enrollment ON payments (enrollment_id)`);
    await db.query(`
      CREATE TABLE exams (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        course_id varchar(32) NOT NULL REFERENCES courses (id),
        title varchar(200) NOT NULL,
        max_score real NOT NULL CHECK (max_score > 0),
        held_on varchar(10),
        created_at datetime NOT NULL,
        updated_at datetime NOT NULL
      )`);
    await db.query(`CREATE INDEX idx_exams_org_created ON exams (organization_id, created_at, id)`);
    await db.query(`CREATE INDEX idx_exams_org_updated ON exams (organization_id, updated_at, id)`);
    await db.query(`CREATE INDEX idx_exams_org_title ON exams (organization_id, title, id)`);
    await db.query(`CREATE INDEX idx_exams_org_held ON exams (organization_id, held_on, id)`);
    await db.query(`CREATE INDEX idx_exams_course ON exams (course_id, created_at)`);
    await db.query(`
      CREATE TABLE exam_results (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        exam_id varchar(32) NOT NULL REFERENCES exams (id),
        student_id varchar(32) NOT NULL REFERENCES students (id),
        score real NOT NULL CHECK (score >= 0),
        grade varchar(16),
        status varchar(16) NOT NULL CHECK (status IN ('draft', 'published')),
        published_at datetime,
        created_at datetime NOT NULL,
        updated_at datetime NOT NULL
      )`);
    await db.query(
      `CREATE UNIQUE INDEX uq_exam_results_exam_student ON exam_results (exam_id, student_id)`,
    );
    await db.query(
      `CREATE INDEX idx_exam_results_org_created ON exam_results (organization_id, created_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_exam_results_org_updated ON exam_results (organization_id, updated_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_exam_results_org_score ON exam_results (organization_id, score, id)`,
    );
    await db.query(
      `CREATE INDEX idx_exam_results_org_published ON exam_results (organization_id, published_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_exam_results_student ON exam_results (student_id, created_at)`,
    );
    await db.query(`
      CREATE TABLE events (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        type varchar(64) NOT NULL,
        api_version varchar(8) NOT NULL,
        data text NOT NULL,
        created_at datetime NOT NULL
      )`);
    await db.query(
      `CREATE INDEX idx_events_org_created ON events (organization_id, created_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_events_org_type ON events (organization_id, type, created_at)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE events`);
    await db.query(`DROP TABLE exam_results`);
    await db.query(`DROP TABLE exams`);
    await db.query(`DROP TABLE payments`);
    await db.query(`DROP TABLE enrollments`);
    await db.query(`DROP TABLE courses`);
  }
}
