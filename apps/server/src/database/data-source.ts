import { closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import {
  PostgresAudit1766200000000 as PostgresAudit,
  SqliteAudit1766200000000 as SqliteAudit,
} from '../audit/migrations/1766200000000-audit';
import { AuditEventRecord } from '../audit/audit-event.entity';
import { PersonalAccessToken } from '../auth/personal-access-token.entity';
import type { DatabaseConfig } from '../config/env';
import { Course } from '../courses/course.entity';
import { Enrollment } from '../enrollments/enrollment.entity';
import { EventRecord } from '../events/event.entity';
import { ExamResult } from '../exams/exam-result.entity';
import { Exam } from '../exams/exam.entity';
import { IdempotencyKey } from '../idempotency/idempotency-key.entity';
import { IdempotencyKeys1763900000001 as PostgresIdempotencyKeys } from '../idempotency/migrations/postgres/1763900000001-idempotency-keys';
import { IdempotencyKeys1763900000001 as SqliteIdempotencyKeys } from '../idempotency/migrations/sqlite/1763900000001-idempotency-keys';
import {
  PostgresOAuth1765000000000 as PostgresOAuth,
  SqliteOAuth1765000000000 as SqliteOAuth,
} from '../oauth/migrations/1765000000000-oauth';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from '../oauth/entities';
import { InvitationRecord } from '../members/invitation.entity';
import {
  PostgresMembers1766200000001 as PostgresMembers,
  SqliteMembers1766200000001 as SqliteMembers,
} from '../members/migrations/1766200000001-members';
import { Organization } from '../organizations/organization.entity';
import { Payment } from '../payments/payment.entity';
import { Student } from '../students/student.entity';
import {
  PostgresWebhooks1764000000000 as PostgresWebhooks,
  SqliteWebhooks1764000000000 as SqliteWebhooks,
} from '../webhooks/migrations/1764000000000-webhooks';
import {
  PostgresDelegation1766100000000 as PostgresDelegation,
  SqliteDelegation1766100000000 as SqliteDelegation,
} from '../webhooks/migrations/1766100000000-delegation';
import { WebhookAttemptRecord } from '../webhooks/webhook-attempt.entity';
import { WebhookEndpointRecord } from '../webhooks/webhook-endpoint.entity';
import { WebhookMessageRecord } from '../webhooks/webhook-message.entity';
import {
  SEARCH_DEADLINE_FUNCTION,
  SEARCH_FOLD_FUNCTION,
  searchDeadline,
  searchFold,
} from '../common/list/search-budget';
import {
  PostgresSearchIndex1766000000000 as PostgresSearchIndex,
  SqliteSearchIndex1766000000000 as SqliteSearchIndex,
} from './migrations/1766000000000-search-index';
import { Initial1763800000000 as PostgresInitial } from './migrations/postgres/1763800000000-initial';
import { Domain1763900000000 as PostgresDomain } from './migrations/postgres/1763900000000-domain';
import { Initial1763800000000 as SqliteInitial } from './migrations/sqlite/1763800000000-initial';
import { Domain1763900000000 as SqliteDomain } from './migrations/sqlite/1763900000000-domain';

export const ENTITIES = [
  Organization,
  PersonalAccessToken,
  Student,
  Course,
  Enrollment,
  Payment,
  Exam,
  ExamResult,
  EventRecord,
  IdempotencyKey,
  WebhookEndpointRecord,
  WebhookMessageRecord,
  WebhookAttemptRecord,
  UserRecord,
  OAuthClientRecord,
  OAuthArtifactRecord,
  AuditEventRecord,
  InvitationRecord,
];

/** The part of better-sqlite3's Database that `prepareDatabase` uses. */
interface SqliteConnection {
  pragma(source: string): unknown;
  function(
    name: string,
    options: { deterministic: boolean },
    fn: (...args: never[]) => unknown,
  ): unknown;
}

/** One definition for the app, the CLI and the tests. The schema comes from migrations only. */
export function dataSourceOptions(db: DatabaseConfig): DataSourceOptions {
  const common = {
    entities: ENTITIES,
    synchronize: false,
    migrationsRun: false,
    migrationsTableName: 'migrations',
    logging: false,
  } as const;
  switch (db.type) {
    case 'sqlite':
      createPrivateFile(db.path);
      return {
        ...common,
        type: 'better-sqlite3',
        database: db.path,
        migrations: [
          SqliteInitial,
          SqliteDomain,
          SqliteIdempotencyKeys,
          SqliteWebhooks,
          SqliteOAuth,
          SqliteSearchIndex,
          SqliteDelegation,
          SqliteAudit,
          SqliteMembers,
        ],
        enableWAL: true,
        statementCacheSize: 200,
        prepareDatabase: (connection: SqliteConnection) => {
          // NORMAL is durable across application crashes in WAL mode; only an OS crash can
          // lose the last transactions. A busy timeout lets the CLI and server share the file.
          connection.pragma('synchronous = NORMAL');
          connection.pragma('busy_timeout = 5000');
          // Searches call it once per candidate row (see search-budget.ts); not deterministic,
          // so SQLite cannot hoist it out of the loop.
          connection.function(SEARCH_DEADLINE_FUNCTION, { deterministic: false }, searchDeadline);
          connection.function(SEARCH_FOLD_FUNCTION, { deterministic: true }, searchFold);
        },
      };
    case 'postgres':
      return {
        ...common,
        type: 'postgres',
        url: db.url,
        migrations: [
          PostgresInitial,
          PostgresDomain,
          PostgresIdempotencyKeys,
          PostgresWebhooks,
          PostgresOAuth,
          PostgresSearchIndex,
          PostgresDelegation,
          PostgresAudit,
          PostgresMembers,
        ],
        extra: { max: 10 },
      };
  }
}

/**
 * A new SQLite database file is made here with mode 0600 before SQLite opens it (SQLite would
 * make it 0644 less the umask), like the webhook key file beside it: it holds every record and
 * token hash. SQLite gives its -wal and -shm files the database file's mode. An existing file
 * keeps the mode its operator gave it.
 */
function createPrivateFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    // Exactly 0600 whatever the umask (which may only take bits away, or all of them).
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}
