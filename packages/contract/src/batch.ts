/**
 * Batch upserts keyed by `external_id` (`POST /v1/students/batch`): up to BATCH_MAX_ITEMS items,
 * each created, updated or left unchanged, with a result per item. A body that does not parse
 * (a field of the wrong type, two items with one external id) is a 400 naming the item
 * (`body.items.3.email`) and writes nothing; an item a rule refuses (a taken `student_number`,
 * a new record without its required fields) fails alone, and the others still apply. The items
 * that apply commit in one transaction: a 200 means every one reported created or updated is
 * durable, and any other answer that none was.
 */
import { ERROR_CODES, type ErrorCode, ProblemFieldErrorSchema } from './problem';
import { EXTERNAL_ID } from './ids';
import { z } from './zod-openapi';

export const BATCH_MAX_ITEMS = 1000;

/** What became of one item. */
export const BATCH_ITEM_STATUSES = ['created', 'updated', 'unchanged', 'failed'] as const;
export type BatchItemStatus = (typeof BATCH_ITEM_STATUSES)[number];

/** A batch writes as much as 20 pages of a list read: its rate-limit cost (decision 19). */
export const BATCH_COST = 20;

export const BatchItemErrorSchema = z
  .object({
    status: z
      .number()
      .int()
      .describe('The status the item would have had as a request of its own.'),
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
    detail: z.string(),
    errors: z
      .array(ProblemFieldErrorSchema)
      .describe('The fields at fault, with paths into the batch: `body.items.3.student_number`.'),
  })
  .openapi({ title: 'BatchItemError' });

export type BatchItemError = z.infer<typeof BatchItemErrorSchema>;

/** What a batch upsert answers, whatever the resource. */
export const BatchResultSchema = z
  .object({
    object: z.literal('batch_result'),
    counts: z.object({
      created: z.number().int(),
      updated: z.number().int(),
      unchanged: z.number().int(),
      failed: z.number().int(),
    }),
    data: z
      .array(
        z.object({
          index: z.number().int().describe("The item's place in `items`, from 0."),
          external_id: z.string(),
          status: z.enum(BATCH_ITEM_STATUSES),
          id: z
            .string()
            .nullable()
            .describe('The record created, updated or left unchanged; null when the item failed.'),
          error: BatchItemErrorSchema.nullable(),
        }),
      )
      .describe('One result per item, in the order of `items`.'),
  })
  .openapi({ title: 'BatchResult' });

const requiredExternalId = z
  .string()
  .min(1, 'must not be empty')
  .max(EXTERNAL_ID.maxLength, `must be at most ${EXTERNAL_ID.maxLength} characters`)
  .regex(EXTERNAL_ID.pattern, 'may only contain letters, digits and . _ ~ : @ + -')
  .describe(
    'The key the item is matched on: the record with this external id is updated, or one is created with it.',
  );

/**
 * The body, item and result schemas of one resource's batch upsert. An item is the resource's
 * update body with `external_id` required: on an existing record only the fields sent change (as
 * with PATCH); a new record needs what its create body needs, with the same defaults.
 * `createFields`: fields an item takes beyond the update body's, optional. The resource decides
 * what they do to an existing record: a reference it was created with (an exam's `course_id`)
 * must name what it has; an enrollment's `status` moves it along its state machine.
 */
export function batchSchemas<
  S extends z.ZodRawShape,
  F extends z.ZodRawShape = Record<never, never>,
>(
  update: z.ZodObject<S, z.UnknownKeysParam>,
  title: string,
  example: Record<string, unknown>,
  createFields?: F,
) {
  const more = createFields && z.object(createFields).partial().shape;
  const item = update
    .extend({ ...more, external_id: requiredExternalId })
    .strict()
    .openapi({ title: `${title}BatchItem` });
  const body = z
    .object({
      items: z
        .array(item)
        .min(1, 'must hold at least one item')
        .max(BATCH_MAX_ITEMS, `must hold at most ${BATCH_MAX_ITEMS} items`)
        .openapi({ example: [example] }),
    })
    .strict()
    .superRefine(({ items }, ctx) => {
      const seen = new Map<string, number>();
      items.forEach((entry, index) => {
        const key = String(entry.external_id);
        const first = seen.get(key);
        if (first === undefined) seen.set(key, index);
        else
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ['items', index, 'external_id'],
            message: `repeats the external_id of item ${first}`,
          });
      });
    })
    .openapi({ title: `${title}Batch` });
  return { item, body, result: BatchResultSchema };
}
