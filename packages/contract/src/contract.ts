import { auditEventsContract } from './audit';
import { coursesContract } from './courses';
import { enrollmentsContract } from './enrollments';
import { eventsContract } from './events';
import { examResultsContract, examsContract } from './exams';
import { checksumsContract, exportsContract } from './exports';
import { importsContract } from './imports';
import { organizationContract } from './organization';
import { invitationsContract, membersContract, userContract } from './members';
import { paymentsContract } from './payments';
import { requestLogsContract } from './request-logs';
import { sandboxesContract, sandboxTriggerContract } from './sandboxes';
import { usageContract } from './usage';
import { studentsContract } from './students';
import { oauthClientsContract, personalAccessTokensContract, tokenContract } from './tokens';
import { webhookDeliveriesContract, webhookEndpointsContract } from './webhooks';

/**
 * The whole public API. Server handlers, the SDK and the OpenAPI document all derive from it.
 * Spelled out as a type of `typeof` references because the inferred type of the whole router is
 * too large for TypeScript to write into a declaration file (TS7056).
 */
export type Contract = {
  students: typeof studentsContract;
  courses: typeof coursesContract;
  enrollments: typeof enrollmentsContract;
  payments: typeof paymentsContract;
  exams: typeof examsContract;
  examResults: typeof examResultsContract;
  events: typeof eventsContract;
  webhookEndpoints: typeof webhookEndpointsContract;
  webhookDeliveries: typeof webhookDeliveriesContract;
  personalAccessTokens: typeof personalAccessTokensContract;
  token: typeof tokenContract;
  oauthClients: typeof oauthClientsContract;
  organization: typeof organizationContract;
  auditEvents: typeof auditEventsContract;
  requestLogs: typeof requestLogsContract;
  usage: typeof usageContract;
  members: typeof membersContract;
  invitations: typeof invitationsContract;
  user: typeof userContract;
  exports: typeof exportsContract;
  checksums: typeof checksumsContract;
  imports: typeof importsContract;
  sandboxes: typeof sandboxesContract;
  sandbox: typeof sandboxTriggerContract;
};

export const contract: Contract = {
  students: studentsContract,
  courses: coursesContract,
  enrollments: enrollmentsContract,
  payments: paymentsContract,
  exams: examsContract,
  examResults: examResultsContract,
  events: eventsContract,
  webhookEndpoints: webhookEndpointsContract,
  webhookDeliveries: webhookDeliveriesContract,
  personalAccessTokens: personalAccessTokensContract,
  token: tokenContract,
  oauthClients: oauthClientsContract,
  organization: organizationContract,
  auditEvents: auditEventsContract,
  requestLogs: requestLogsContract,
  usage: usageContract,
  members: membersContract,
  invitations: invitationsContract,
  user: userContract,
  exports: exportsContract,
  checksums: checksumsContract,
  imports: importsContract,
  sandboxes: sandboxesContract,
  sandbox: sandboxTriggerContract,
};
