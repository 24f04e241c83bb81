import { initContract } from '@ts-rest/core';
import { batchSchemas } from './batch';
import { EXTERNAL_ID, idSchema, referenceSchema } from './ids';
import { filter, listQuery } from './list';
import { ROUTER_OPTIONS } from './operation';
import { searchErrorResponses } from './problem';
import { externalIdField, externalIdSchema, text, timestampSchema } from './resource';
import { z } from './zod-openapi';
import { resourceRoutes } from './routes';

const c = initContract();

export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** The largest amount in minor units we accept (about 10 billion in a two-decimal currency). */
export const MAX_AMOUNT = 1_000_000_000_000;

const KNOWN_CURRENCIES: ReadonlySet<string> | undefined =
  typeof Intl !== 'undefined' && 'supportedValuesOf' in Intl
    ? new Set(Intl.supportedValuesOf('currency'))
    : undefined;

export const CurrencySchema = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an uppercase ISO 4217 code such as EUR')
  .refine((code) => !KNOWN_CURRENCIES || KNOWN_CURRENCIES.has(code), 'is not an ISO 4217 currency')
  .openapi({ example: 'EUR' });

const amountSchema = z
  .number()
  .int('must be an integer amount in minor units (cents)')
  .positive('must be positive')
  .max(MAX_AMOUNT);

export const PaymentSchema = z
  .object({
    id: idSchema('payment'),
    object: z.literal('payment'),
    external_id: externalIdField('payments'),
    student_id: idSchema('student'),
    enrollment_id: idSchema('enrollment').nullable(),
    amount: z.number().int().describe('In minor units of `currency` (cents for EUR).'),
    currency: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    amount_refunded: z.number().int().describe('Total refunded so far, in minor units.'),
    description: z.string().nullable(),
    external_reference: z
      .string()
      .nullable()
      .describe("Your or your payment processor's reference for this payment."),
    failure_reason: z.string().nullable(),
    succeeded_at: timestampSchema.nullable(),
    failed_at: timestampSchema.nullable(),
    refunded_at: timestampSchema.nullable().describe('When the latest refund was made.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'Payment' });

export type Payment = z.infer<typeof PaymentSchema>;

export const PaymentCreateSchema = z
  .object({
    student_id: referenceSchema('student'),
    enrollment_id: referenceSchema('enrollment').nullable().optional(),
    amount: amountSchema,
    currency: CurrencySchema,
    description: text(500).nullable().optional(),
    external_reference: text(200).nullable().optional(),
    external_id: externalIdSchema
      .optional()
      .describe('Set when the payment is recorded; a payment has no update.'),
  })
  .strict()
  .openapi({ title: 'PaymentCreate' });

export const PaymentFailSchema = z
  .object({ failure_reason: text(500).optional() })
  .strict()
  .openapi({ title: 'PaymentFail' });

export const PaymentRefundSchema = z
  .object({
    amount: amountSchema
      .optional()
      .describe('Minor units to refund; default everything not yet refunded.'),
  })
  .strict()
  .openapi({ title: 'PaymentRefund' });

/**
 * `POST /v1/payments/batch`: payments recorded by `external_id`, and moved to the state a finance
 * system reports. A payment has no update: its create fields, sent for one on record, must be
 * what it has. `status` and `amount_refunded` are where it should be; the batch takes the
 * transitions that lead there (a new payment reported `refunded` succeeds, then is refunded).
 */
export const PaymentBatchSchemas = batchSchemas(
  z.object({}).strict(),
  'Payment',
  {
    external_id: 'INV-2026-0042',
    student_id: 'ext:SIS-0042',
    amount: 45000,
    currency: 'EUR',
    status: 'succeeded',
  },
  {
    ...PaymentCreateSchema.omit({ external_id: true }).shape,
    status: z
      .enum(PAYMENT_STATUSES)
      .describe(
        'The state the payment should be in: a new one is recorded, then moved there; one on record moves along its transitions (409 when none leads there).',
      ),
    failure_reason: PaymentFailSchema.shape.failure_reason.describe('With `status: failed`.'),
    amount_refunded: z
      .number()
      .int('must be an integer amount in minor units (cents)')
      .min(0, 'must be at least 0')
      .max(MAX_AMOUNT)
      .describe(
        'The total refunded so far, as your books have it: a higher figure than ours refunds the difference (a refund cannot be undone: a lower one is 409).',
      ),
  },
);

export const PaymentListQuerySchema = listQuery({
  filters: {
    student_id: filter.reference('student'),
    enrollment_id: filter.reference('enrollment'),
    status: filter.oneOf(PAYMENT_STATUSES),
    currency: filter.string(3),
    external_id: filter.string(EXTERNAL_ID.maxLength),
  },
  ranges: { amount: 'integer', succeeded_at: 'datetime' },
  sort: ['amount', 'succeeded_at'],
  search: ['description', 'external_reference'],
  tally: ['status'],
});

const paymentRoutes = resourceRoutes('/v1/payments', 'payments', PaymentSchema);

export const paymentsContract = c.router(
  {
    list: paymentRoutes.list('List payments', PaymentListQuerySchema, {
      errors: searchErrorResponses,
    }),
    create: paymentRoutes.create({
      summary: 'Record a payment',
      description:
        'Records a pending payment of a student, optionally for one of their enrollments; `external_id`, when given, must be unique in the organization. Payments are financial records: they change only through `succeed`, `fail` and `refund`, and are never deleted.',
      body: PaymentCreateSchema,
    }),
    batchUpsert: paymentRoutes.batch({
      summary: 'Record payments and their outcomes by external id',
      description:
        "Up to 1,000 items, each matched on `external_id`: recorded when no payment has it (with the create body's fields and rules), then moved to the item's `status` and `amount_refunded` through `succeed`, `fail` and `refund`, each sending its event. A payment's recorded fields cannot change: an item may send them for a payment on record only as it has them (409 otherwise). One result per item; an item a rule refuses fails alone.",
      body: PaymentBatchSchemas.body,
      response: PaymentBatchSchemas.result,
    }),
    retrieve: paymentRoutes.retrieve({ summary: 'Retrieve a payment' }),
    succeed: paymentRoutes.action('succeed', {
      summary: 'Mark a payment succeeded',
      description: '`pending → succeeded`. Sends `payment.succeeded`.',
    }),
    fail: paymentRoutes.action('fail', {
      summary: 'Mark a payment failed',
      description: '`pending → failed`. Sends `payment.failed`.',
      body: PaymentFailSchema.optional(),
    }),
    refund: paymentRoutes.action('refund', {
      summary: 'Refund a payment, fully or partly',
      description:
        '`succeeded → refunded`; a refunded payment can be refunded again until `amount_refunded` reaches `amount`. More than what is left is a 400 naming `amount`. Sends `payment.refunded`.',
      body: PaymentRefundSchema.optional(),
    }),
  },
  ROUTER_OPTIONS,
);
