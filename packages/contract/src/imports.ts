/**
 * SIS imports (`POST /v1/imports`): a whole file of one collection's records, keyed by
 * `external_id`, applied in the background through the collection's batch upsert (its rules,
 * events and per-item errors), in `upsert` mode or in `full` mode, where the file is the whole
 * truth and the collection's records it no longer names are withdrawn. See
 * docs/decisions/0032-sis-imports.md.
 */
import { initContract } from '@ts-rest/core';
import { BATCH_COST } from './batch';
import { CourseBatchSchemas } from './courses';
import { EnrollmentBatchSchemas } from './enrollments';
import { ExamBatchSchemas, ExamResultBatchSchemas } from './exams';
import { idSchema } from './ids';
import { filter, listQuery, listResponse } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { PaymentBatchSchemas } from './payments';
import { commonErrorResponses, problemResponse } from './problem';
import { IdPathParams, readErrorResponses, timestampSchema } from './resource';
import { listRoute } from './routes';
import { StudentBatchSchemas } from './students';
import { z } from './zod-openapi';

const c = initContract();

/** What one row of an import may hold, per collection: the collection's batch item. */
export const IMPORT_ITEM_SCHEMAS = {
  students: StudentBatchSchemas.item,
  courses: CourseBatchSchemas.item,
  enrollments: EnrollmentBatchSchemas.item,
  payments: PaymentBatchSchemas.item,
  exams: ExamBatchSchemas.item,
  exam_results: ExamResultBatchSchemas.item,
} as const;

export type ImportCollection = keyof typeof IMPORT_ITEM_SCHEMAS;
export const IMPORT_COLLECTIONS = Object.keys(IMPORT_ITEM_SCHEMAS) as [
  ImportCollection,
  ...ImportCollection[],
];

/**
 * `full` mode: what becomes of a record the file no longer names, and which records count (the
 * states it withdraws from). A record without an `external_id` is never touched: the SIS does not
 * manage it. Collections absent here take `upsert` imports only (a payment or a result is history).
 */
export const IMPORT_REMOVALS = {
  students: { from: ['active', 'inactive'], to: 'withdrawn' },
  courses: { from: ['draft', 'active'], to: 'archived' },
  enrollments: { from: ['pending', 'active'], to: 'dropped' },
} as const satisfies Partial<Record<ImportCollection, { from: readonly string[]; to: string }>>;
export type FullImportCollection = keyof typeof IMPORT_REMOVALS;

/** An import's body as the SDKs take it: the file (sent as the part `file`) and its name. */
export interface ImportUpload {
  file: Blob | Uint8Array | string;
  filename?: string;
}

export const IMPORT_MODES = ['upsert', 'full'] as const;
export type ImportMode = (typeof IMPORT_MODES)[number];
export const IMPORT_FORMATS = ['ndjson', 'csv', 'oneroster'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
export const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/**
 * A OneRoster 1.1 or 1.2 CSV bundle (a zip with `manifest.csv`): the files it applies, in the
 * order they run, and the collection each becomes. docs/imports.md has the column mapping.
 */
export const ONEROSTER_IMPORTS = [
  { file: 'users.csv', collection: 'students' },
  { file: 'classes.csv', collection: 'courses' },
  { file: 'enrollments.csv', collection: 'enrollments' },
] as const satisfies readonly { file: string; collection: FullImportCollection }[];

/** The largest file an import takes, and the most rows. */
export const IMPORT_MAX_BYTES = 512 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 2_000_000;
/** A `full` import that would withdraw more than this share of the records it manages stops. */
export const IMPORT_DEFAULT_CHANGE_THRESHOLD = 0.1;

/**
 * A query flag, `true` or `false` as the SDKs send a boolean; absent is false. Typed as the
 * boolean a caller gives (what the SDKs and the OpenAPI document see), read from the query's text.
 */
const booleanParam = z
  .preprocess(
    (value) => (value === 'true' ? true : value === 'false' ? false : value),
    z.boolean({ invalid_type_error: 'must be true or false' }),
  )
  .optional() as unknown as z.ZodOptional<z.ZodBoolean>;

const ImportCollectionSchema = z.enum(IMPORT_COLLECTIONS);
const ImportModeSchema = z.enum(IMPORT_MODES);
const ImportFormatSchema = z.enum(IMPORT_FORMATS);

export const ImportCreateQuerySchema = z
  .object({
    collection: ImportCollectionSchema.optional().describe(
      'The collection the file holds. Required, except for a OneRoster bundle (`format=oneroster`), whose manifest names its files.',
    ),
    mode: ImportModeSchema.optional().describe(
      "Default `upsert`: each row creates or updates its record. `full`: the same, then the collection's records that have an `external_id` and are not in the file are withdrawn (students `withdrawn`, courses `archived`, live enrollments `dropped`); only for students, courses and enrollments. Not for a OneRoster bundle: its manifest says `bulk` (full) or `delta` (upsert) for each file.",
    ),
    format: ImportFormatSchema.optional().describe(
      "The file's format; default: from the file part's Content-Type (`text/csv`, `application/x-ndjson`, `application/zip`) or its name's extension. `oneroster`: a OneRoster 1.1 or 1.2 CSV bundle (a zip), applied as one import per file it holds (`users.csv` as students, `classes.csv` as courses, `enrollments.csv` as enrollments), run in that order.",
    ),
    dry_run: booleanParam.describe(
      'Default false. Work out every row and the withdrawals, then write nothing: the result has the counts of what would happen, and the error report.',
    ),
    change_threshold: z.coerce
      .number({ invalid_type_error: 'must be a number from 0 to 1' })
      .min(0)
      .max(1)
      .default(IMPORT_DEFAULT_CHANGE_THRESHOLD)
      .describe(
        'A `full` import that would withdraw more than this share (0 to 1) of the records with an `external_id` it could withdraw fails before it writes anything, unless `confirm=true`.',
      ),
    confirm: booleanParam.describe(
      'Default false. Apply a `full` import past its `change_threshold`.',
    ),
  })
  .strict();

export const ImportCountsSchema = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    failed: z.number().int().describe('Rows refused: each is a line of the error report.'),
    withdrawn: z
      .number()
      .int()
      .describe('Records a `full` import withdrew (or, in a dry run, would withdraw).'),
    skipped: z
      .number()
      .int()
      .describe(
        'Rows with no place here (in a OneRoster bundle, users and enrollments whose role is not student): each is a line of the error report, code `not_mapped`.',
      ),
  })
  .openapi({ title: 'ImportCounts' });

export const ImportSchema = z
  .object({
    id: idSchema('import'),
    object: z.literal('import'),
    collection: ImportCollectionSchema,
    mode: ImportModeSchema,
    format: ImportFormatSchema,
    dry_run: z.boolean(),
    change_threshold: z.number(),
    confirmed: z.boolean(),
    status: z.enum(IMPORT_STATUSES),
    rows: z.number().int().describe('Rows in the file (its header not counted).'),
    rows_processed: z.number().int().describe('Rows worked through so far: the progress.'),
    counts: ImportCountsSchema,
    error: z
      .string()
      .nullable()
      .describe(
        'Why a failed import failed: a threshold passed, a `full` file with unreadable rows, an import before it in its bundle that failed.',
      ),
    bundle: z
      .object({
        file: z.string().describe("The bundle's file this import applies, e.g. `users.csv`."),
        imports: z
          .array(idSchema('import'))
          .describe(
            "The bundle's imports, in the order they run; each starts once the one before it succeeded, and fails unrun if it failed.",
          ),
      })
      .nullable()
      .describe('For an import of a OneRoster bundle (`format` `oneroster`); null for one file.'),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
  })
  .openapi({ title: 'Import' });
export type Import = z.infer<typeof ImportSchema>;

export const ImportListQuerySchema = listQuery({
  filters: {
    status: filter.oneOf(IMPORT_STATUSES),
    collection: filter.oneOf(IMPORT_COLLECTIONS),
  },
});

export const ImportListSchema = listResponse(ImportSchema, 'ImportList');

/** The error report: CSV, with these columns. */
export const IMPORT_ERRORS_CONTENT_TYPE = 'text/csv; charset=utf-8';
export const IMPORT_ERROR_COLUMNS = ['row', 'external_id', 'field', 'code', 'problem'] as const;

const IMPORT_SCOPE_NOTE =
  "Besides `imports:write`, an import needs its collection's write scope (`students:write` for students, `exam_results:write` for exams and exam results, …; a OneRoster bundle, those of the collections it writes): 403 without it.";

export const importsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/v1/imports',
      summary: 'Start an import',
      description: `Uploads one collection's records as a file (\`multipart/form-data\`, one part named \`file\`): NDJSON, one JSON object per line, or CSV with a header row of field names (an empty cell sends nothing; \`true\`/\`false\` and numbers are read as the field's type). Each row is what an item of the collection's batch upsert (\`POST /v1/<collection>/batch\`) holds, \`external_id\` required. The file is streamed into the database before the answer: a 202 means it is kept whole, and the import then runs in the background, 1,000 rows to a transaction with its progress, so a crash resumes where it stopped and applies nothing twice. Poll \`GET /v1/imports/{id}\`; refused rows are in \`GET /v1/imports/{id}/errors\`. A OneRoster bundle (\`format=oneroster\`, a zip with \`manifest.csv\`) becomes one import per file it applies, run in order (students, then courses from classes, then enrollments), each \`full\` or \`upsert\` as the manifest says \`bulk\` or \`delta\`: the answer is the first, and \`bundle.imports\` lists them all. ${IMPORT_SCOPE_NOTE}`,
      query: ImportCreateQuerySchema,
      contentType: 'multipart/form-data',
      body: c.type<ImportUpload>(),
      responses: {
        202: ImportSchema,
        ...commonErrorResponses,
        409: problemResponse('An Idempotency-Key reused with another request.'),
        413: problemResponse(
          `The file is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MB or has more than ${IMPORT_MAX_ROWS.toLocaleString('en')} rows.`,
        ),
        415: problemResponse('The request body is not multipart/form-data.'),
      },
      // Writes as much as a batch per 1,000 rows; charged as one batch at the door.
      metadata: operation({ scope: 'imports:write', cost: BATCH_COST, upload: true }),
    },
    list: listRoute('/v1/imports', {
      summary: 'List imports',
      description: `The organization's imports, newest first.`,
      query: ImportListQuerySchema,
      response: ImportListSchema,
      scope: 'imports:read',
    }),
    retrieve: {
      method: 'GET',
      path: '/v1/imports/:id',
      pathParams: IdPathParams,
      summary: 'Retrieve an import',
      responses: { 200: ImportSchema, ...readErrorResponses },
      metadata: operation({ scope: 'imports:read' }),
    },
    errors: {
      method: 'GET',
      path: '/v1/imports/:id/errors',
      pathParams: IdPathParams,
      summary: "Download an import's error report",
      description: `CSV, one line per problem, in row order: \`${IMPORT_ERROR_COLUMNS.join(',')}\`. \`row\` counts the file's records from 1 (a CSV's header is not a record); \`field\` is empty for a problem with the row as a whole. Complete once the import has finished; while it runs, what it has found so far.`,
      responses: {
        200: z.string().describe('The report (CSV), not JSON.'),
        ...readErrorResponses,
      },
      metadata: operation({ scope: 'imports:read', file: [IMPORT_ERRORS_CONTENT_TYPE] }),
    },
  },
  ROUTER_OPTIONS,
);
