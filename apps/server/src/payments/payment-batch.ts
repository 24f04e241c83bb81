import { PaymentCreateSchema, type PaymentStatus } from '@platform/contract';
import type { EntityManager } from 'typeorm';
import { type BatchItem, type BatchRules, createBody } from '../common/batch-upsert';
import { ProblemException } from '../common/problem.exception';
import { invalidField } from '../common/resource-errors';
import type { Payment } from './payment.entity';
import { failPayment, refundPayment, succeedPayment } from './payment-rules';

/** What a batch item may say of a payment's state, besides its create body. */
const STATE_FIELDS = ['status', 'failure_reason', 'amount_refunded'] as const;

/** The create body's plain fields and their columns: on record, an item must match them. */
const RECORDED = {
  amount: 'amount',
  currency: 'currency',
  description: 'description',
  external_reference: 'externalReference',
} as const satisfies Record<string, keyof Payment>;

/** The create body an item carries (its state fields are for `transition`). */
export function paymentCreateBody(item: BatchItem) {
  const body: Record<string, unknown> = { ...item };
  for (const field of STATE_FIELDS) delete body[field];
  return createBody(PaymentCreateSchema, body as BatchItem);
}

/**
 * A payment's batch rules, beside the service's `build` (its create rules): a payment on record
 * never changes its recorded fields, and reaches the item's `status` and `amount_refunded`
 * through the same transitions `succeed`, `fail` and `refund` make.
 */
export function paymentBatchRules(
  create: BatchRules<Payment>['create'],
  references: (payment: Payment, item: BatchItem, manager: EntityManager) => Promise<void>,
): BatchRules<Payment> {
  return {
    create,
    check: () => {},
    fixed: async (payment, item, manager) => {
      for (const [field, property] of Object.entries(RECORDED)) {
        if (item[field] !== undefined && item[field] !== payment[property])
          throw recordedField(field, payment[property]);
      }
      await references(payment, item, manager);
    },
    transition: (payment, item, _manager, at, moved) => {
      const status = item.status as PaymentStatus | undefined;
      const refunded = item.amount_refunded as number | undefined;
      const refunding =
        refunded === undefined
          ? status === 'refunded' && payment.status !== 'refunded'
          : refunded !== payment.amountRefunded;
      if (status === 'failed' && payment.status === 'pending') {
        failPayment(payment, at, (item.failure_reason as string | undefined) ?? null);
        moved('payment.failed');
      }
      if ((status === 'succeeded' || refunding) && payment.status === 'pending') {
        succeedPayment(payment, at);
        moved('payment.succeeded');
      }
      if (refunding) {
        if (refunded !== undefined) checkRefunded(payment, refunded);
        const amount = refunded === undefined ? undefined : refunded - payment.amountRefunded;
        refundPayment(payment, amount, at);
        moved('payment.refunded');
      }
      // The item names the state the payment must end in: no transition leads there otherwise.
      if (status !== undefined && status !== payment.status) {
        throw new ProblemException(
          'invalid_state_transition',
          `Cannot move this payment from '${payment.status}' to '${status}'`,
        );
      }
    },
  };
}

/** A total refunded the payment can reach: not below what is refunded, not above its amount. */
function checkRefunded(payment: Payment, refunded: number): void {
  if (refunded < payment.amountRefunded) {
    throw invalidField(
      'amount_refunded',
      `cannot go below ${payment.amountRefunded}, what is already refunded: a refund cannot be undone`,
    );
  }
  if (refunded > payment.amount)
    throw invalidField(
      'amount_refunded',
      `must be at most ${payment.amount}, the payment's amount`,
    );
}

function recordedField(field: string, value: unknown): ProblemException {
  const message = `cannot change: a payment is a financial record, and this one has ${JSON.stringify(value)}`;
  return new ProblemException('conflict', `${field} ${message}`, {
    errors: [{ path: `body.${field}`, message, code: 'immutable' }],
  });
}
