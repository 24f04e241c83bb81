import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ListQuery,
  type Payment as PaymentResource,
  type PaymentCreateSchema,
  type PaymentFailSchema,
  type PaymentRefundSchema,
  type PaymentStatus,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { newId, publicId } from '../common/ids';
import type { PageUrl } from '../common/list/page-envelope';
import { OwnedRecords } from '../common/owned-records';
import { invalidField, unknownReference } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { EnrollmentsService } from '../enrollments/enrollments.service';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
import { StudentsService } from '../students/students.service';
import { failPayment, refundPayment, succeedPayment } from './payment-rules';
import { Payment } from './payment.entity';

export function toPaymentResource(payment: Payment): PaymentResource {
  const iso = (d: Date | null) => (d ? toIso(d) : null);
  return {
    id: publicId('payment', payment.id),
    object: 'payment',
    student_id: publicId('student', payment.studentId),
    enrollment_id: publicId('enrollment', payment.enrollmentId),
    amount: payment.amount,
    currency: payment.currency,
    status: payment.status,
    amount_refunded: payment.amountRefunded,
    description: payment.description,
    external_reference: payment.externalReference,
    failure_reason: payment.failureReason,
    succeeded_at: iso(payment.succeededAt),
    failed_at: iso(payment.failedAt),
    refunded_at: iso(payment.refundedAt),
    created_at: toIso(payment.createdAt),
    updated_at: toIso(payment.updatedAt),
  };
}

@Injectable()
export class PaymentsService {
  private readonly records: OwnedRecords<Payment, PaymentResource>;

  constructor(
    @InjectRepository(Payment) private readonly payments: Repository<Payment>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly events: EventsService,
    private readonly students: StudentsService,
    private readonly enrollments: EnrollmentsService,
    sql: Sql,
  ) {
    this.records = new OwnedRecords(
      sql,
      payments,
      'payment',
      toPaymentResource,
      contract.payments.list.query,
    );
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    return this.records.list(principal.organizationId, query, url, this.config);
  }

  async retrieve(principal: Principal, id: string): Promise<PaymentResource> {
    return this.records.retrieve(principal.organizationId, id);
  }

  async create(
    principal: Principal,
    input: z.output<typeof PaymentCreateSchema>,
  ): Promise<PaymentResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const student = await this.students.findInOrganization(
        manager,
        organizationId,
        input.student_id,
      );
      if (!student) throw unknownReference('student_id', 'student', input.student_id);
      if (input.enrollment_id) {
        const enrollment = await this.enrollments.findInOrganization(
          manager,
          organizationId,
          input.enrollment_id,
        );
        if (!enrollment) throw unknownReference('enrollment_id', 'enrollment', input.enrollment_id);
        if (enrollment.studentId !== student.id) {
          throw invalidField(
            'enrollment_id',
            `belongs to another student (${enrollment.studentId})`,
          );
        }
      }
      const now = new Date();
      const payment: Payment = {
        id: newId('payment', now.getTime()),
        organizationId,
        studentId: student.id,
        enrollmentId: input.enrollment_id ?? null,
        amount: input.amount,
        currency: input.currency,
        status: 'pending',
        amountRefunded: 0,
        description: input.description ?? null,
        externalReference: input.external_reference ?? null,
        failureReason: null,
        succeededAt: null,
        failedAt: null,
        refundedAt: null,
        createdAt: now,
        updatedAt: now,
      };
      await manager.insert(Payment, payment);
      const resource = toPaymentResource(payment);
      await this.events.record(manager, organizationId, 'payment.created', resource, now);
      return resource;
    });
  }

  succeed(principal: Principal, id: string): Promise<PaymentResource> {
    return this.change(principal, id, 'succeeded', (payment, now) => succeedPayment(payment, now));
  }

  fail(
    principal: Principal,
    id: string,
    input: z.output<typeof PaymentFailSchema> | undefined,
  ): Promise<PaymentResource> {
    return this.change(principal, id, 'failed', (payment, now) =>
      failPayment(payment, now, input?.failure_reason ?? null),
    );
  }

  refund(
    principal: Principal,
    id: string,
    input: z.output<typeof PaymentRefundSchema> | undefined,
  ): Promise<PaymentResource> {
    return this.change(principal, id, 'refunded', (payment, now) =>
      refundPayment(payment, input?.amount, now),
    );
  }

  /** One state change: lock, apply (which checks the current state), save, record its event. */
  private change(
    principal: Principal,
    id: string,
    to: Exclude<PaymentStatus, 'pending'>,
    apply: (payment: Payment, now: Date) => void,
  ): Promise<PaymentResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager: EntityManager) => {
      const payment = await this.records.findForUpdate(manager, organizationId, id);
      const now = new Date();
      apply(payment, now);
      await manager.save(Payment, payment);
      const resource = toPaymentResource(payment);
      await this.events.record(manager, organizationId, `payment.${to}`, resource, now);
      return resource;
    });
  }
}
