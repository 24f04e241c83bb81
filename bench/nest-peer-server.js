'use strict';
/**
 * A second baseline for the students-list benchmark: the list a NestJS + TypeORM team writes by
 * following the frameworks' own docs, on the same database as the real server. An entity per
 * table (TypeORM's `EntitySchema`, the decorator-free form of `@Entity`), `TypeOrmModule`,
 * a repository's `findAndCount` with `skip`/`take`, and a bearer guard that looks the token's
 * SHA-256 up through the tokens repository. No rate limit, request log, problem details,
 * idempotency, tallies or deferred join: the server should beat it by doing less SQL, and the
 * ratio shows whether its extra guarantees cost more than that saves.
 *
 * Plain JavaScript, so decorators are applied as the functions they are. Nest, TypeORM and the
 * drivers come from the server's own dependencies (the same versions it runs on).
 *
 * Configured by the benchmark through the environment:
 *   PEER_DATABASE       path of the SQLite file, or
 *   PEER_DATABASE_URL   postgres://… of the server's PostgreSQL database (one of the two)
 *   PORT, HOST          where to listen (default 3002 on 127.0.0.1)
 */
const { createHash } = require('node:crypto');
const { createRequire } = require('node:module');
const path = require('node:path');

const serverRequire = createRequire(path.join(__dirname, '..', 'apps', 'server', 'package.json'));
serverRequire('reflect-metadata');
const {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  Query,
  Req,
  UnauthorizedException,
  UseGuards,
} = serverRequire('@nestjs/common');
const { NestFactory } = serverRequire('@nestjs/core');
const { TypeOrmModule, getRepositoryToken } = serverRequire('@nestjs/typeorm');
const { EntitySchema, IsNull } = serverRequire('typeorm');

const DATABASE_URL = process.env.PEER_DATABASE_URL;
const DATABASE = process.env.PEER_DATABASE;
if (!DATABASE_URL && !DATABASE) {
  console.error('nest-peer-server: PEER_DATABASE or PEER_DATABASE_URL must be set');
  process.exit(2);
}

const column = (type, options = {}) => ({ type, ...options });
const Student = new EntitySchema({
  name: 'Student',
  tableName: 'students',
  columns: {
    id: column('varchar', { primary: true }),
    organizationId: column('varchar', { name: 'organization_id' }),
    studentNumber: column('varchar', { name: 'student_number' }),
    firstName: column('varchar', { name: 'first_name' }),
    lastName: column('varchar', { name: 'last_name' }),
    preferredName: column('varchar', { name: 'preferred_name', nullable: true }),
    email: column('varchar', { nullable: true }),
    dateOfBirth: column('varchar', { name: 'date_of_birth', nullable: true }),
    status: column('varchar'),
    gradeLevel: column('int', { name: 'grade_level', nullable: true }),
    createdAt: column(DATABASE_URL ? 'timestamptz' : 'datetime', { name: 'created_at' }),
    updatedAt: column(DATABASE_URL ? 'timestamptz' : 'datetime', { name: 'updated_at' }),
  },
});
const Token = new EntitySchema({
  name: 'Token',
  tableName: 'personal_access_tokens',
  columns: {
    id: column('varchar', { primary: true }),
    organizationId: column('varchar', { name: 'organization_id' }),
    tokenHash: column('varchar', { name: 'token_hash' }),
    revokedAt: column(DATABASE_URL ? 'timestamptz' : 'datetime', {
      name: 'revoked_at',
      nullable: true,
    }),
  },
});

/** The guard the docs' "authentication" chapter writes: the bearer token's hash, looked up. */
class BearerGuard {
  constructor(tokens) {
    this.tokens = tokens;
  }
  async canActivate(context) {
    const request = context.switchToHttp().getRequest();
    const [scheme, token] = (request.headers.authorization ?? '').split(' ');
    if (scheme !== 'Bearer' || !token) throw new UnauthorizedException();
    const tokenHash = createHash('sha256').update(token).digest('hex');
    const found = await this.tokens.findOne({ where: { tokenHash, revokedAt: IsNull() } });
    if (!found) throw new UnauthorizedException();
    request.organizationId = found.organizationId;
    return true;
  }
}
Injectable()(BearerGuard);
Inject(getRepositoryToken(Token))(BearerGuard, undefined, 0);

const toResource = (s) => ({
  object: 'student',
  id: s.id,
  student_number: s.studentNumber,
  first_name: s.firstName,
  last_name: s.lastName,
  preferred_name: s.preferredName,
  email: s.email,
  date_of_birth: s.dateOfBirth,
  status: s.status,
  grade_level: s.gradeLevel,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

class StudentsController {
  constructor(students) {
    this.students = students;
  }
  async list(pageParam, perPageParam, request) {
    const page = Math.max(1, Number(pageParam ?? 1) || 1);
    const perPage = Math.min(100, Math.max(1, Number(perPageParam ?? 25) || 25));
    const [rows, total] = await this.students.findAndCount({
      where: { organizationId: request.organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: (page - 1) * perPage,
      take: perPage,
    });
    return {
      data: rows.map(toResource),
      meta: { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
    };
  }
}
Controller('v1/students')(StudentsController);
Inject(getRepositoryToken(Student))(StudentsController, undefined, 0);
UseGuards(BearerGuard)(StudentsController);
const list = Object.getOwnPropertyDescriptor(StudentsController.prototype, 'list');
Query('page')(StudentsController.prototype, 'list', 0);
Query('per_page')(StudentsController.prototype, 'list', 1);
Req()(StudentsController.prototype, 'list', 2);
Get()(StudentsController.prototype, 'list', list);
Reflect.defineMetadata(
  'design:paramtypes',
  [Object, Object, Object],
  StudentsController.prototype,
  'list',
);

class HealthController {
  ready() {
    return { status: 'ok' };
  }
}
Controller('health')(HealthController);
const ready = Object.getOwnPropertyDescriptor(HealthController.prototype, 'ready');
Get('ready')(HealthController.prototype, 'ready', ready);

class AppModule {}
Module({
  imports: [
    TypeOrmModule.forRoot(
      DATABASE_URL
        ? { type: 'postgres', url: DATABASE_URL, entities: [Student, Token] }
        : { type: 'better-sqlite3', database: DATABASE, entities: [Student, Token] },
    ),
    TypeOrmModule.forFeature([Student, Token]),
  ],
  controllers: [StudentsController, HealthController],
  providers: [BearerGuard],
})(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(Number(process.env.PORT ?? 3002), process.env.HOST ?? '127.0.0.1');
  const shutdown = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
