import type { IdKind } from '@platform/contract';
import type { Enrollment } from '../enrollments/enrollment.entity';
import {
  failPayment,
  NEW_PAYMENT_STATE,
  refundPayment,
  succeedPayment,
} from '../payments/payment-rules';
import type { Payment } from '../payments/payment.entity';
import type { Student } from '../students/student.entity';
import { type CourseInfo, DAY, FAILURE_REASONS, HOUR, OTHER_FEES } from './demo-school-data';
import type { Draw } from './random';

export type PaymentOutcome =
  | { status: 'pending' }
  | { status: 'failed' }
  | { status: 'succeeded'; refund?: { amount: number; notBefore: number } };

/**
 * What the payments take from the school builder. They draw from its generator, so the payments
 * come out the same only when drawn in the same order among its other draws.
 */
export interface SchoolTools {
  readonly draw: Draw;
  readonly organizationId: string;
  readonly now: number;
  id(kind: IdKind, createdAt: Date, fixed?: string): string;
  at(ms: number): Date;
  after(ms: number, min: number, max: number): Date;
}

/** The demo school's payments: tuition for its enrollments and the fees that belong to none. */
export class SchoolPayments {
  readonly payments: Payment[] = [];

  constructor(private readonly tools: SchoolTools) {}

  /** What was paid for an enrollment: mostly one succeeded tuition payment. */
  payForEnrollment(course: CourseInfo, enrollment: Enrollment): void {
    const fee = course.spec.fee;
    const pay = (outcome: PaymentOutcome, after = enrollment.createdAt) =>
      this.tuition(enrollment, course, outcome, undefined, after);
    switch (enrollment.status) {
      case 'active':
      case 'completed': {
        const roll = this.tools.draw.random();
        if (roll < 0.05 && enrollment.status === 'active') {
          pay(
            { status: 'pending' },
            this.tools.at(Math.max(enrollment.createdAt.getTime(), this.tools.now - 10 * DAY)),
          );
        } else if (roll < 0.11) {
          const failed = pay({ status: 'failed' });
          if (this.tools.draw.chance(0.8)) {
            pay(
              { status: 'succeeded' },
              this.tools.after(failed.updatedAt.getTime(), HOUR, 5 * DAY),
            );
          }
        } else if (roll < 0.13) {
          // No tuition: covered by a grant paid outside the platform.
        } else if (roll < 0.16) {
          // A sibling discount, refunded after the fact.
          pay({
            status: 'succeeded',
            refund: {
              amount: Math.round(fee * 0.1),
              notBefore: enrollment.createdAt.getTime() + 14 * DAY,
            },
          });
        } else {
          pay({ status: 'succeeded' });
        }
        break;
      }
      case 'pending':
        if (this.tools.draw.chance(0.5)) pay({ status: 'pending' });
        break;
      case 'dropped':
        if (enrollment.activatedAt) {
          // Refunded in full when dropped early, otherwise half.
          const early =
            enrollment.droppedAt!.getTime() - enrollment.activatedAt.getTime() < 14 * DAY;
          pay({
            status: 'succeeded',
            refund: {
              amount: early ? fee : Math.round(fee / 2),
              notBefore: enrollment.droppedAt!.getTime(),
            },
          });
        }
        break;
      case 'cancelled':
        if (this.tools.draw.chance(0.25)) {
          pay({
            status: 'succeeded',
            refund: { amount: fee, notBefore: enrollment.cancelledAt!.getTime() },
          });
        }
        break;
    }
  }

  /** Fees that belong to no enrollment. */
  otherFees(student: Student): void {
    for (const fee of OTHER_FEES) {
      if (!this.tools.draw.chance(fee.share)) continue;
      const at = this.tools.after(student.createdAt.getTime(), HOUR, 60 * DAY);
      const outcome: PaymentOutcome = this.tools.draw.chance(0.9)
        ? { status: 'succeeded' }
        : { status: 'pending' };
      this.payment(student.id, null, fee.amount, fee.description, at, outcome);
    }
  }

  /** The course's tuition for an enrollment. */
  tuition(
    enrollment: Enrollment,
    course: CourseInfo,
    outcome: PaymentOutcome,
    fixedId?: string,
    after = enrollment.createdAt,
  ): Payment {
    const { code, title, fee } = course.spec;
    const description = `Tuition ${code} ${title}`;
    return this.payment(
      enrollment.studentId,
      enrollment,
      fee,
      description,
      after,
      outcome,
      fixedId,
    );
  }

  /** A payment created a little after `after`, moved through the changes that lead to `outcome`. */
  private payment(
    studentId: string,
    enrollment: Enrollment | null,
    amount: number,
    description: string,
    after: Date,
    outcome: PaymentOutcome,
    fixedId?: string,
  ): Payment {
    const createdAt = this.tools.after(after.getTime(), 10 * 60_000, DAY);
    const settled = this.tools.after(createdAt.getTime(), 60_000, 2 * DAY);
    const refundedAt =
      outcome.status === 'succeeded' && outcome.refund
        ? this.tools.after(Math.max(outcome.refund.notBefore, settled.getTime()), DAY, 10 * DAY)
        : null;
    const payment: Payment = {
      id: this.tools.id('payment', createdAt, fixedId),
      organizationId: this.tools.organizationId,
      externalId: null,
      studentId,
      enrollmentId: enrollment?.id ?? null,
      amount,
      currency: 'EUR',
      description,
      externalReference:
        outcome.status === 'pending'
          ? null
          : `PSP-${String(this.tools.draw.int(0, 999_999_999)).padStart(9, '0')}`,
      ...NEW_PAYMENT_STATE,
      createdAt,
      updatedAt: createdAt,
    };
    if (outcome.status === 'failed') {
      failPayment(payment, settled, this.tools.draw.pick(FAILURE_REASONS));
    } else if (outcome.status === 'succeeded') {
      succeedPayment(payment, settled);
      if (outcome.refund) refundPayment(payment, outcome.refund.amount, refundedAt!);
    }
    this.payments.push(payment);
    return payment;
  }
}
