import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import {
  IMPORT_ITEM_SCHEMAS,
  IMPORT_MAX_BYTES,
  IMPORT_MAX_ROWS,
  type FullImportCollection,
  type ImportMode,
  ONEROSTER_IMPORTS,
} from '@platform/contract';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { Hash } from 'node:crypto';
import { ProblemException } from '../common/problem.exception';
import { checkedRow, type ReadRow } from './import-file';

/**
 * OneRoster 1.1 and 1.2 CSV bundles (a zip with `manifest.csv`), read into the imports they
 * become: `users.csv` (its students) as students, `classes.csv` as courses, `enrollments.csv`
 * (its students') as enrollments, each `full` when the manifest says `bulk` and `upsert` when it
 * says `delta`. Rows are mapped by column name, so both versions read; a column the file lacks
 * leaves its field as it is. The mapping is docs/imports.md's table.
 */

export type OneRosterFile = (typeof ONEROSTER_IMPORTS)[number]['file'];

/** A row as a bundle gives it: one to stage, or one with no place here (a teacher). */
export interface BundleRow extends ReadRow {
  skipped?: true;
}

export interface BundlePart {
  file: OneRosterFile;
  collection: FullImportCollection;
  mode: ImportMode;
  rows(): AsyncGenerator<BundleRow>;
}

export interface Bundle {
  parts: BundlePart[];
  /** Files the manifest lists that nothing here takes: a line each in the first report. */
  notes: { file: string; problem: string }[];
}

/** What a bundle's reading may ask of the database: whether a student has this external id. */
export interface BundleLookups {
  studentExists(externalId: string): Promise<boolean>;
}

/** Read as context: `academicSessions.csv` dates classes, `roles.csv` says who is a student. */
const CONTEXT_FILES = new Set(['academicSessions.csv', 'roles.csv']);
const NOT_IMPORTED: Record<string, string> = {
  'orgs.csv': 'the organization is the one importing',
  'courses.csv': 'the course catalog has no record here: each class becomes a course',
};

/** Our field → the OneRoster column it comes from, per file: the error report names the column. */
const COLUMNS: Record<OneRosterFile, Record<string, string>> = {
  'users.csv': {
    external_id: 'sourcedId',
    student_number: 'identifier',
    first_name: 'givenName',
    last_name: 'familyName',
    preferred_name: 'preferredGivenName',
    email: 'email',
    grade_level: 'grades',
    status: 'status',
  },
  'classes.csv': {
    external_id: 'sourcedId',
    code: 'classCode',
    title: 'title',
    status: 'status',
    start_date: 'termSourcedIds',
    end_date: 'termSourcedIds',
  },
  'enrollments.csv': {
    external_id: 'sourcedId',
    student_id: 'userSourcedId',
    course_id: 'classSourcedId',
    status: 'status',
  },
};

/** The OneRoster column a field of `file`'s mapped item came from (the field itself if none). */
export function oneRosterColumn(file: string | null, field: string): string {
  if (file === null || !(file in COLUMNS)) return field;
  const [head, ...rest] = field.split('.');
  const column = COLUMNS[file as OneRosterFile][head!];
  return column === undefined ? field : [column, ...rest].join('.');
}

/**
 * Keeps the uploaded zip in a temporary file while `use` reads it (a zip's directory is at its
 * end, so it cannot be read as it streams in), hashing every byte; the file is removed after.
 */
export async function withBundle<T>(
  stream: Readable,
  hash: Hash,
  lookups: BundleLookups,
  use: (bundle: Bundle) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'platform-oneroster-'));
  const path = join(dir, 'bundle.zip');
  let zip: ZipFile | undefined;
  try {
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(stream, tap, createWriteStream(path));
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false }).catch(() => {
      throw bundleProblem('The file is not a zip archive: a OneRoster bundle is a zip');
    });
    const entries = await entriesOf(zip);
    return await use(await readBundle(zip, entries, lookups));
  } finally {
    zip?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The zip's files by name (a bundle's files may sit in one folder). */
async function entriesOf(zip: ZipFile): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const name = entry.fileName.split('/').pop()!;
    if (entries.has(name)) throw bundleProblem(`The bundle holds two files named ${name}`);
    entries.set(name, entry);
  }
  return entries;
}

type Processing = Map<string, 'bulk' | 'delta'>;

async function readBundle(
  zip: ZipFile,
  entries: Map<string, Entry>,
  lookups: BundleLookups,
): Promise<Bundle> {
  const processing = await readManifest(zip, entries);
  const csv = (file: string) => csvRows(zip, entries.get(file)!, file);
  const sessions = new Map<string, { start: string; end: string }>();
  if (processing.has('academicSessions.csv')) {
    for await (const { record } of csv('academicSessions.csv')) {
      sessions.set(record.sourcedId ?? '', {
        start: record.startDate ?? '',
        end: record.endDate ?? '',
      });
    }
  }
  const students = await studentIds(processing, csv);
  const parts: BundlePart[] = [];
  for (const { file, collection } of ONEROSTER_IMPORTS) {
    const how = processing.get(file);
    if (how === undefined) continue;
    const mapped =
      file === 'users.csv'
        ? userRows(csv(file), students, lookups)
        : file === 'classes.csv'
          ? classRows(csv(file), sessions)
          : enrollmentRows(csv(file));
    parts.push({
      file,
      collection,
      mode: how === 'bulk' ? 'full' : 'upsert',
      rows: () => checkedRows(mapped, collection),
    });
  }
  if (parts.length === 0) {
    throw bundleProblem(
      `The manifest applies none of ${ONEROSTER_IMPORTS.map((p) => p.file).join(', ')}: nothing to import`,
    );
  }
  const notes = [...processing.keys()]
    .filter((file) => !parts.some((p) => p.file === file) && !CONTEXT_FILES.has(file))
    .map((file) => ({
      file,
      problem: `not imported: ${NOT_IMPORTED[file] ?? 'nothing here holds what it describes'}`,
    }));
  return { parts, notes };
}

/**
 * `manifest.csv`: its version, and each file's processing (`bulk`, `delta` or `absent`); a file
 * the manifest lists must be in the zip.
 */
async function readManifest(zip: ZipFile, entries: Map<string, Entry>): Promise<Processing> {
  const entry = entries.get('manifest.csv');
  if (!entry) throw bundleProblem('The bundle has no manifest.csv');
  const properties = new Map<string, string>();
  for await (const { record } of csvRows(zip, entry, 'manifest.csv')) {
    properties.set(record.propertyName ?? '', (record.value ?? '').trim());
  }
  const version = properties.get('oneroster.version');
  if (version !== '1.1' && version !== '1.2') {
    throw bundleProblem(
      `manifest.csv gives oneroster.version '${version ?? ''}': this reads OneRoster 1.1 and 1.2`,
    );
  }
  const processing: Processing = new Map();
  for (const [property, value] of properties) {
    if (!property.startsWith('file.') || value === 'absent') continue;
    const file = `${property.slice('file.'.length)}.csv`;
    if (value !== 'bulk' && value !== 'delta') {
      throw bundleProblem(`manifest.csv gives ${property} '${value}': one of bulk, delta, absent`);
    }
    if (!entries.has(file)) {
      throw bundleProblem(`manifest.csv says ${file} is ${value}, but the bundle has no ${file}`);
    }
    processing.set(file, value);
  }
  return processing;
}

/**
 * Who is a student: a `student` role in `roles.csv` (1.2), the `role` column of `users.csv`
 * (1.1, judged row by row) or a student enrollment in `enrollments.csv`.
 */
async function studentIds(
  processing: Processing,
  csv: (file: string) => AsyncGenerator<CsvRow>,
): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const [file, column] of [
    ['roles.csv', 'userSourcedId'],
    ['enrollments.csv', 'userSourcedId'],
  ] as const) {
    if (!processing.has(file)) continue;
    for await (const { record } of csv(file)) {
      if (record.role === 'student' && record[column]) ids.add(record[column]);
    }
  }
  return ids;
}

interface CsvRow {
  row: number;
  record: Record<string, string | undefined>;
}

interface MappedRow {
  row: number;
  value: Record<string, unknown>;
  skipped?: { field: string; problem: string };
}

async function* csvRows(zip: ZipFile, entry: Entry, file: string): AsyncGenerator<CsvRow> {
  if (entry.uncompressedSize > IMPORT_MAX_BYTES) {
    throw new ProblemException(
      'payload_too_large',
      `${file} is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MB once unpacked; split the bundle`,
    );
  }
  const stream = await zip.openReadStreamPromise(entry);
  const parser = stream.pipe(
    parse({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: true }),
  );
  stream.once('error', (error) => parser.destroy(error));
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      row += 1;
      if (row > IMPORT_MAX_ROWS) {
        throw new ProblemException(
          'payload_too_large',
          `${file} has more than ${IMPORT_MAX_ROWS.toLocaleString('en')} rows; split the bundle`,
        );
      }
      yield { row, record };
    }
  } catch (error) {
    if (error instanceof ProblemException) throw error;
    const line = (error as { lines?: number }).lines;
    throw bundleProblem(
      `${file} cannot be read${line ? ` (at line ${line})` : ''}: ${(error as Error).message.replace(/^Invalid [^:]*: /, '')}`,
    );
  } finally {
    stream.destroy();
  }
}

/** `users.csv`: a student's row as a student; anyone else's as a row with no place here. */
async function* userRows(
  rows: AsyncGenerator<CsvRow>,
  students: Set<string>,
  lookups: BundleLookups,
): AsyncGenerator<MappedRow> {
  for await (const { row, record: r } of rows) {
    const id = r.sourcedId ?? '';
    const role = r.role;
    const student = role === undefined ? students.has(id) : role === 'student';
    if (!student) {
      // A user deleted with no role left in the bundle may be a student here: withdrawn if so.
      if (r.status === 'tobedeleted' && role === undefined && (await lookups.studentExists(id))) {
        yield { row, value: { external_id: id, status: 'withdrawn' } };
        continue;
      }
      const who = role === undefined ? 'no student role in the bundle' : `the role ${role}`;
      yield {
        row,
        value: { external_id: id },
        skipped: { field: 'role', problem: `has ${who}: only students are imported` },
      };
      continue;
    }
    const value: Record<string, unknown> = {
      external_id: id,
      student_number: r.identifier || id,
      first_name: r.givenName,
      last_name: r.familyName,
      status:
        r.status === 'tobedeleted'
          ? 'withdrawn'
          : r.enabledUser === 'false'
            ? 'inactive'
            : 'active',
    };
    if (r.preferredGivenName !== undefined) value.preferred_name = r.preferredGivenName || null;
    if (r.email !== undefined) value.email = r.email || null;
    if (r.grades !== undefined) value.grade_level = gradeLevel(r.grades);
    yield { row, value: defined(value) };
  }
}

/** The first of a user's grades (CEDS codes): `KG` is 0, `01`–`12` are 1–12, others none. */
function gradeLevel(grades: string): number | null {
  const first = grades.split(',')[0]!.trim();
  if (first === 'KG') return 0;
  const n = /^\d{1,2}$/.test(first) ? Number(first) : NaN;
  return n >= 1 && n <= 12 ? n : null;
}

/** `classes.csv`: each class a course, dated by its terms. */
async function* classRows(
  rows: AsyncGenerator<CsvRow>,
  sessions: Map<string, { start: string; end: string }>,
): AsyncGenerator<MappedRow> {
  for await (const { row, record: r } of rows) {
    const id = r.sourcedId ?? '';
    const value: Record<string, unknown> = {
      external_id: id,
      code: r.classCode || id,
      title: r.title,
      status: r.status === 'tobedeleted' ? 'archived' : 'active',
    };
    if (r.termSourcedIds !== undefined) {
      const terms = r.termSourcedIds
        .split(',')
        .map((term) => sessions.get(term.trim()))
        .filter((term) => term !== undefined);
      const starts = terms
        .map((t) => t.start)
        .filter(Boolean)
        .sort();
      const ends = terms
        .map((t) => t.end)
        .filter(Boolean)
        .sort();
      value.start_date = starts[0] ?? null;
      value.end_date = ends[ends.length - 1] ?? null;
    }
    yield { row, value: defined(value) };
  }
}

/** `enrollments.csv`: a student's enrollment in a class; other roles' have no place here. */
async function* enrollmentRows(rows: AsyncGenerator<CsvRow>): AsyncGenerator<MappedRow> {
  for await (const { row, record: r } of rows) {
    const id = r.sourcedId ?? '';
    if (r.role !== 'student') {
      const problem = `has the role ${r.role ?? '(none)'}: only students' enrollments are imported`;
      yield { row, value: { external_id: id }, skipped: { field: 'role', problem } };
      continue;
    }
    yield {
      row,
      value: defined({
        external_id: id,
        student_id: r.userSourcedId ? `ext:${r.userSourcedId}` : undefined,
        course_id: r.classSourcedId ? `ext:${r.classSourcedId}` : undefined,
        status: r.status === 'tobedeleted' ? 'dropped' : 'active',
      }),
    };
  }
}

/** Each mapped row checked as the collection's batch item, its problems named by column. */
async function* checkedRows(
  rows: AsyncGenerator<MappedRow>,
  collection: FullImportCollection,
): AsyncGenerator<BundleRow> {
  const file = ONEROSTER_IMPORTS.find((p) => p.collection === collection)!.file;
  const schema = IMPORT_ITEM_SCHEMAS[collection] as unknown as Parameters<typeof checkedRow>[2];
  for await (const mapped of rows) {
    const externalId =
      typeof mapped.value.external_id === 'string' ? mapped.value.external_id : null;
    if (mapped.skipped) {
      const problem = { ...mapped.skipped, code: 'not_mapped' };
      yield { row: mapped.row, externalId, item: null, problems: [problem], skipped: true };
      continue;
    }
    const read = checkedRow(mapped.row, mapped.value, schema);
    yield {
      ...read,
      problems: read.problems.map((p) => ({ ...p, field: oneRosterColumn(file, p.field) })),
    };
  }
}

/** The object without its undefined fields: an empty required cell is then reported missing. */
function defined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== ''));
}

function bundleProblem(detail: string): ProblemException {
  return new ProblemException('validation_error', detail, {
    errors: [{ path: 'body.file', message: detail, code: 'invalid_bundle' }],
  });
}
