import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  PaymentSchema,
  type Payment as PaymentResource,
  type PaymentCreateSchema,
  type PaymentFailSchema,
  type PaymentRefundSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import { type BatchItem, fixedField, upsertBatch } from '../common/batch-upsert';
import type { Principal } from '../common/principal';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { invalidField } from '../common/resource-errors';
import { EnrollmentsService } from '../enrollments/enrollments.service';
import { StudentsService } from '../students/students.service';
import { failPayment, NEW_PAYMENT_STATE, refundPayment, succeedPayment } from './payment-rules';
import { Payment } from './payment.entity';
import { paymentBatchRules, paymentCreateBody } from './payment-batch';

type PaymentCreate = z.output<typeof PaymentCreateSchema>;
type PaymentFail = z.output<typeof PaymentFailSchema> | undefined;
type PaymentRefund = z.output<typeof PaymentRefundSchema> | undefined;

@Injectable()
export class PaymentsService extends OwnedResourceService<Payment, PaymentResource, 'payment'> {
  constructor(
    @InjectRepository(Payment) payments: Repository<Payment>,
    owned: OwnedRecordsFactory,
    private readonly students: StudentsService,
    private readonly enrollments: EnrollmentsService,
  ) {
    super(
      owned.for(payments, {
        object: 'payment',
        resource: PaymentSchema,
        listQuery: contract.payments.list.query,
      }),
    );
  }

  create(principal: Principal, input: PaymentCreate): Promise<PaymentResource> {
    return this.records.create(principal.organizationId, (manager) =>
      this.build(manager, principal, input),
    );
  }

  /** `POST /v1/payments/batch`: payments recorded by external id, and moved to their outcome. */
  batchUpsert(principal: Principal, items: readonly BatchItem[]) {
    const rules = paymentBatchRules(
      (item, manager) => this.build(manager, principal, paymentCreateBody(item)),
      async (payment, { student_id, enrollment_id }, manager) => {
        if (typeof student_id === 'string') {
          const body = { student_id };
          const student = await this.students.referenced(manager, principal, body, 'student_id');
          if (student.id !== payment.studentId)
            throw fixedField('student_id', 'student', payment.studentId);
        }
        if (enrollment_id !== undefined) {
          const named =
            typeof enrollment_id === 'string'
              ? (
                  await this.enrollments.referenced(
                    manager,
                    principal,
                    { enrollment_id },
                    'enrollment_id',
                  )
                ).id
              : null;
          if (named !== payment.enrollmentId)
            throw fixedField('enrollment_id', 'enrollment', String(payment.enrollmentId));
        }
      },
    );
    return upsertBatch(this.records, principal.organizationId, items, rules);
  }

  private async build(manager: EntityManager, principal: Principal, input: PaymentCreate) {
    const student = await this.students.referenced(manager, principal, input, 'student_id');
    const { enrollment_id } = input;
    let enrollmentId: string | null = null;
    if (enrollment_id) {
      const enrollment = await this.enrollments.referenced(
        manager,
        principal,
        { enrollment_id },
        'enrollment_id',
      );
      if (enrollment.studentId !== student.id) {
        throw invalidField('enrollment_id', `belongs to another student (${enrollment.studentId})`);
      }
      enrollmentId = enrollment.id;
    }
    return {
      studentId: student.id,
      enrollmentId,
      externalId: input.external_id ?? null,
      amount: input.amount,
      currency: input.currency,
      description: input.description ?? null,
      externalReference: input.external_reference ?? null,
      ...NEW_PAYMENT_STATE,
    };
  }

  succeed(principal: Principal, id: string): Promise<PaymentResource> {
    return this.records.change(principal.organizationId, id, 'payment.succeeded', succeedPayment);
  }

  fail(principal: Principal, id: string, input: PaymentFail): Promise<PaymentResource> {
    return this.records.change(principal.organizationId, id, 'payment.failed', (payment, now) =>
      failPayment(payment, now, input?.failure_reason ?? null),
    );
  }

  refund(principal: Principal, id: string, input: PaymentRefund): Promise<PaymentResource> {
    return this.records.change(principal.organizationId, id, 'payment.refunded', (payment, now) =>
      refundPayment(payment, input?.amount, now),
    );
  }
}
