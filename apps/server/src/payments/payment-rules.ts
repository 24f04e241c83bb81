import type { PaymentStatus } from '@platform/contract';
import { invalidField, invalidTransition } from '../common/resource-errors';
import type { Payment } from './payment.entity';

/**
 * A payment's state changes, each checked against its current state, shared by the service
 * (the API's operations) and the demo seed (which replays a payment's history).
 */
const FROM: Record<Exclude<PaymentStatus, 'pending'>, readonly PaymentStatus[]> = {
  succeeded: ['pending'],
  failed: ['pending'],
  refunded: ['succeeded', 'refunded'],
};

/** Where every payment starts, whoever creates it: pending, nothing refunded, no outcome yet. */
export const NEW_PAYMENT_STATE = {
  status: 'pending',
  amountRefunded: 0,
  failureReason: null,
  succeededAt: null,
  failedAt: null,
  refundedAt: null,
} as const satisfies Partial<Payment>;

function enter(payment: Payment, to: Exclude<PaymentStatus, 'pending'>, at: Date): void {
  if (!FROM[to].includes(payment.status)) {
    throw invalidTransition('payment', payment.status, to, FROM[to]);
  }
  payment.status = to;
  payment.updatedAt = at;
}

export function succeedPayment(payment: Payment, at: Date): void {
  enter(payment, 'succeeded', at);
  payment.succeededAt = at;
}

export function failPayment(payment: Payment, at: Date, reason: string | null): void {
  enter(payment, 'failed', at);
  payment.failedAt = at;
  payment.failureReason = reason;
}

/** Full (no `amount`) or partial; refunds add up and never exceed the amount. */
export function refundPayment(payment: Payment, amount: number | undefined, at: Date): void {
  if (!FROM.refunded.includes(payment.status)) {
    throw invalidTransition('payment', payment.status, 'refunded', FROM.refunded);
  }
  const refundable = payment.amount - payment.amountRefunded;
  if (refundable === 0) throw invalidField('amount', 'nothing is left to refund on this payment');
  const refund = amount ?? refundable;
  if (refund > refundable) {
    throw invalidField(
      'amount',
      `must be at most ${refundable}, what is left to refund of ${payment.amount}`,
    );
  }
  enter(payment, 'refunded', at);
  payment.amountRefunded += refund;
  payment.refundedAt = at;
}
