/**
 * Bulk exports and reconciliation checksums: how an integrator takes a whole collection from one
 * consistent snapshot, with the change-feed cursor of that snapshot, and later proves its copy
 * still matches.
 */
import { initContract } from '@ts-rest/core';
import { idSchema } from './ids';
import { filter, listQuery, listResponse } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { problemResponse, commonErrorResponses } from './problem';
import {
  notFoundResponse,
  readErrorResponses,
  timestampSchema,
  writeErrorResponses,
} from './resource';
import { listRoute } from './routes';
import { EXPORTED_RESOURCES, type ExportedResource, RESOURCES } from './registry';
import type { Scope } from './scopes';
import { IdPathParams } from './resource';
import { z } from './zod-openapi';

const c = initContract();

/**
 * The collections an export or a checksum can read (the registry's `exported` resources), each
 * gated by its resource's read scope.
 */
export const EXPORT_COLLECTIONS = EXPORTED_RESOURCES as [ExportedResource, ...ExportedResource[]];
export type ExportCollection = ExportedResource;

export const EXPORT_COLLECTION_SCOPES = Object.fromEntries(
  EXPORT_COLLECTIONS.map((name) => [name, `${RESOURCES[name].scope}:read`]),
) as Readonly<Record<ExportCollection, Scope>>;

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
};

export const EXPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** How long a finished export's file is kept unless the server says otherwise (`EXPORT_RETENTION_DAYS`). */
export const EXPORT_DEFAULT_RETENTION_DAYS = 7;

/** List parameters that make no sense for a whole-collection export. */
export const EXPORT_REFUSED_FILTERS = ['page', 'per_page', 'sort', 'q'] as const;

export const ExportSchema = z
  .object({
    id: idSchema('export'),
    object: z.literal('export'),
    collection: z.enum(EXPORT_COLLECTIONS),
    format: z.enum(EXPORT_FORMATS),
    filters: z
      .record(z.string(), z.string())
      .describe('The list filters the export applies, as they were given.'),
    status: z.enum(EXPORT_STATUSES),
    row_count: z
      .number()
      .int()
      .describe('Rows written so far (while running) or in the file (once succeeded).'),
    size_bytes: z.number().int().nullable().describe('The size of the file once succeeded.'),
    cursor: z
      .string()
      .nullable()
      .describe(
        'The change-feed cursor of the snapshot the export read: follow the feed from it (`GET /v1/changes?after=`) and the export plus those events are an exact copy. Null until the export starts.',
      ),
    error: z.string().nullable().describe('Why a failed export failed.'),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
    expires_at: timestampSchema
      .nullable()
      .describe('When the file is deleted (and the export becomes `expired`).'),
  })
  .openapi({ title: 'Export' });
export type Export = z.infer<typeof ExportSchema>;

/** How long a download link works (`POST /v1/exports/{id}/download_links`). */
export const EXPORT_DOWNLOAD_LINK_TTL_SECONDS = 300;

/** The path a download link's URL has, under the server's origin; its token is the last segment. */
export const EXPORT_DOWNLOAD_PATH = '/v1/export_downloads';

export const ExportDownloadLinkSchema = z
  .object({
    object: z.literal('export_download_link'),
    export_id: idSchema('export'),
    url: z
      .string()
      .url()
      .describe(
        'Fetch it with a plain GET and no Authorization header, as often as needed until `expires_at`: it streams the same file, with the same headers, as `GET /v1/exports/{id}/file`. It is a secret shown once; it stops working (404) when it expires, when the credential that made it is revoked or its member removed, and when the export expires.',
      ),
    expires_at: timestampSchema,
  })
  .openapi({ title: 'ExportDownloadLink' });
export type ExportDownloadLink = z.infer<typeof ExportDownloadLinkSchema>;

export const ExportCreateSchema = z
  .object({
    collection: z.enum(EXPORT_COLLECTIONS),
    format: z.enum(EXPORT_FORMATS).default('ndjson'),
    filters: z
      .record(z.string(), z.string().max(2000))
      .default({})
      .describe(
        'The collection\'s list filters, as a list request\'s query would give them: `{ "status": "active,graduated", "created_at[gte]": "2026-01-01T00:00:00Z", "updated_since": "…" }`. `page`, `per_page`, `sort` and `q` are refused.',
      ),
  })
  .strict()
  .openapi({ title: 'ExportCreate' });

/** At most this many exports are started together (one per collection, so every collection). */
export const EXPORT_BATCH_MAX = EXPORT_COLLECTIONS.length;

export const ExportBatchCreateSchema = z
  .object({
    collections: z
      .array(z.enum(EXPORT_COLLECTIONS))
      .min(1)
      .max(EXPORT_BATCH_MAX)
      .refine((names) => new Set(names).size === names.length, 'must not repeat a collection')
      .describe(
        'The collections to export, each into its own file, all read from one snapshot: `["students", "courses", "enrollments"]`. Every export of the batch records the same `cursor`.',
      ),
    format: z.enum(EXPORT_FORMATS).default('ndjson'),
  })
  .strict()
  .openapi({ title: 'ExportBatchCreate' });

export const ExportBatchSchema = z
  .object({
    object: z.literal('export_batch'),
    data: z
      .array(ExportSchema)
      .describe(
        'One export per collection, in the order asked. Once they start, they all have the same `cursor`: follow the feed from it once, for all of them.',
      ),
  })
  .openapi({ title: 'ExportBatch' });
export type ExportBatch = z.infer<typeof ExportBatchSchema>;

export const ExportListQuerySchema = listQuery({
  filters: {
    status: filter.oneOf(EXPORT_STATUSES),
    collection: filter.oneOf(EXPORT_COLLECTIONS),
  },
});

export const ExportListSchema = listResponse(ExportSchema, 'ExportList');

export const CHECKSUM_ALGORITHM = 'sha256-id-updated-at-v1' as const;

export const CollectionChecksumSchema = z
  .object({
    collection: z.enum(EXPORT_COLLECTIONS),
    count: z.number().int(),
    checksum: z
      .string()
      .describe(
        'Lowercase hex SHA-256 over one line per record, `<id>\\t<updated_at>\\n`, sorted by id (byte order), with `updated_at` as the API writes it (`2026-11-22T10:00:00.000Z`).',
      ),
  })
  .openapi({ title: 'CollectionChecksum' });

export const ChecksumsSchema = z
  .object({
    object: z.literal('collection_checksums'),
    algorithm: z.literal(CHECKSUM_ALGORITHM),
    cursor: z
      .string()
      .describe('The change-feed cursor of the snapshot the counts and checksums were read in.'),
    data: z.array(CollectionChecksumSchema),
  })
  .openapi({ title: 'CollectionChecksums' });
export type CollectionChecksums = z.infer<typeof ChecksumsSchema>;

export const ChecksumsQuerySchema = z
  .object({
    collections: z
      .string()
      .max(200)
      .optional()
      .describe(
        `Comma-separated collections (${EXPORT_COLLECTIONS.join(', ')}); default: every one the token may read.`,
      ),
  })
  .strict();

const EXPORT_SCOPE_NOTE =
  "Besides its own scope, an export needs its collection's read scope (`students:read` for students, `exam_results:read` for exams and exam results, …): creating one without it is a 403, and an export of a collection the token cannot read is a 404.";

export const exportsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/v1/exports',
      summary: 'Start an export',
      description: `Starts a background export of one collection, read from one consistent snapshot, as NDJSON (one resource per line, as the API returns it) or CSV (a header row of the resource's fields). Answers 202 with the export: poll \`GET /v1/exports/{id}\` until \`status\` is \`succeeded\`, then download \`GET /v1/exports/{id}/file\`. ${EXPORT_SCOPE_NOTE}`,
      body: ExportCreateSchema,
      responses: {
        202: ExportSchema,
        ...commonErrorResponses,
        413: problemResponse('The request body is larger than 1 MB.'),
        415: problemResponse('The request body is not application/json.'),
        409: problemResponse('An Idempotency-Key reused with another request.'),
      },
      // Reads a whole collection: docs/decisions/0019-rate-limit-costs.md.
      metadata: operation({ scope: 'exports:write', cost: 20 }),
    },
    createBatch: {
      method: 'POST',
      path: '/v1/exports/batch',
      summary: 'Export several collections from one snapshot',
      description: `Starts one export per collection (a whole school: \`["students", "courses", "enrollments", "payments", "exams", "exam_results"]\`), all read from one consistent snapshot: every one of them records the same \`cursor\`, so the files plus the feed after that one cursor are an exact copy of all of them together. Each is an ordinary export (poll, download, links), and none succeeds before all have their files: a batch whose runner dies is read again, whole, from a new snapshot. Answers 202 with the exports, in the order asked. Each collection needs its read scope (403 naming the first missing).`,
      body: ExportBatchCreateSchema,
      responses: {
        202: ExportBatchSchema,
        ...commonErrorResponses,
        413: problemResponse('The request body is larger than 1 MB.'),
        415: problemResponse('The request body is not application/json.'),
        409: problemResponse('An Idempotency-Key reused with another request.'),
      },
      // Reads up to every collection, 20 for each: docs/decisions/0019-rate-limit-costs.md.
      metadata: operation({ scope: 'exports:write', cost: 20 * EXPORT_BATCH_MAX }),
    },
    list: listRoute('/v1/exports', {
      summary: 'List exports',
      description: `The organization's exports of the collections the token may read, newest first. ${EXPORT_SCOPE_NOTE}`,
      query: ExportListQuerySchema,
      response: ExportListSchema,
      scope: 'exports:read',
    }),
    retrieve: {
      method: 'GET',
      path: '/v1/exports/:id',
      pathParams: IdPathParams,
      summary: 'Retrieve an export',
      description: EXPORT_SCOPE_NOTE,
      responses: { 200: ExportSchema, ...readErrorResponses },
      metadata: operation({ scope: 'exports:read' }),
    },
    download: {
      method: 'GET',
      path: '/v1/exports/:id/file',
      pathParams: IdPathParams,
      summary: "Download an export's file",
      description: `The file of a succeeded export, streamed: \`application/x-ndjson\` or \`text/csv\`. A queued, running, failed or expired export is a 409. ${EXPORT_SCOPE_NOTE}`,
      responses: {
        200: z.string().describe('The file (NDJSON or CSV), not JSON.'),
        ...readErrorResponses,
        409: problemResponse('The export has no file: not finished yet, failed, or expired.'),
      },
      metadata: operation({
        scope: 'exports:read',
        file: Object.values(EXPORT_CONTENT_TYPES),
        cost: 10,
      }),
    },
    createDownloadLink: {
      method: 'POST',
      path: '/v1/exports/:id/download_links',
      pathParams: IdPathParams,
      body: c.noBody(),
      summary: 'Make a short-lived download link',
      description: `A URL that downloads the file of a succeeded export without a token, for ${EXPORT_DOWNLOAD_LINK_TTL_SECONDS / 60} minutes: hand it to a browser, \`curl\` or a job that holds no API token. A queued, running, failed or expired export is a 409, as for the file. ${EXPORT_SCOPE_NOTE}`,
      responses: {
        201: ExportDownloadLinkSchema,
        ...writeErrorResponses,
        409: problemResponse(
          'The export has no file (not finished yet, failed, or expired), or an Idempotency-Key was reused.',
        ),
      },
      // The link downloads the file, whose own route costs 10: docs/decisions/0019-rate-limit-costs.md.
      metadata: operation({ scope: 'exports:read', oneTimeSecret: 'url', cost: 10 }),
    },
  },
  ROUTER_OPTIONS,
);

export const checksumsContract = c.router(
  {
    retrieve: {
      method: 'GET',
      path: '/v1/collections/checksums',
      query: ChecksumsQuerySchema,
      summary: 'Count and checksum collections',
      description:
        'For each collection: how many records the organization has and a SHA-256 checksum of their ids and `updated_at` values, all read in one snapshot, with the change-feed cursor of that snapshot. Compute the same checksum over your copy (the SDKs have a helper) to prove it matches. Needs `exports:read`, and each collection its read scope: asking for one the token cannot read is a 403.',
      responses: { 200: ChecksumsSchema, ...commonErrorResponses, ...notFoundResponse },
      // Hashes every record of each collection it names.
      metadata: operation({ scope: 'exports:read', cost: 20 }),
    },
  },
  ROUTER_OPTIONS,
);
