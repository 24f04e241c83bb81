/**
 * The audit log: who changed an organization's credentials, webhook endpoints, plan or limit,
 * with which credential, from which IP and when. Written by the server in the same transaction
 * as the change; read-only over the API.
 */
import { initContract } from '@ts-rest/core';
import { idSchema } from './ids';
import { filter, listQuery } from './list';
import { ROUTER_OPTIONS } from './operation';
import { timestampSchema } from './resource';
import { z } from './zod-openapi';
import { readRoutes } from './routes';

const c = initContract();

/** Every action the log records; a new audited change adds its action here. */
export const AUDIT_ACTIONS = [
  'token.created',
  'token.revoked',
  'oauth_client.created',
  'oauth_client.updated',
  'oauth_client.secret_rotated',
  'oauth_client.deleted',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.transferred',
  'oauth_client.transferred',
  'oauth_client.approved',
  'oauth_token.revoked',
  'organization.updated',
  'organization.plan_changed',
  'organization.rate_limit_changed',
  'member.added',
  'member.role_changed',
  'member.updated',
  'member.removed',
  'invitation.created',
  'invitation.resent',
  'invitation.revoked',
  'invitation.accepted',
  'user.password_changed',
  'user.password_reset',
  'user.email_changed',
  'user.password_check_failed',
  'user.signed_out',
  'user.session_revoked',
  'export.created',
  'import.created',
  'export.download_link_created',
  'sandbox.created',
  'sandbox.reset',
  'sandbox.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who made a change: a token of either kind over the API, or an operator with the CLI. */
export const AUDIT_ACTOR_TYPES = [
  'personal_access_token',
  'oauth_access_token',
  'operator',
  // The invitee, accepting through the one-time link: credential is the invitation's id.
  'invitation',
  // A member on the sign-in pages (approving an app, signing out): no credential yet.
  'sign_in',
  // An OAuth client calling the authorization server (revoking a token): credential its id.
  'oauth_client',
] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

export const AUDIT_TARGET_TYPES = [
  'personal_access_token',
  'oauth_client',
  'webhook_endpoint',
  'organization',
  'user',
  'invitation',
  'export',
  'import',
  'sandbox',
] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

/** The shortest retention an operator may configure (`AUDIT_RETENTION_DAYS`); the default is 365. */
export const AUDIT_MIN_RETENTION_DAYS = 90;
export const AUDIT_DEFAULT_RETENTION_DAYS = 365;

export const AuditEventSchema = z
  .object({
    id: idSchema('audit_event'),
    object: z.literal('audit_event'),
    action: z.enum(AUDIT_ACTIONS),
    actor: z
      .object({
        type: z.enum(AUDIT_ACTOR_TYPES),
        credential_id: z
          .string()
          .nullable()
          .describe(
            'The personal access token (`tok_…`) or OAuth client (`oac_…`) the change was made with; null for an operator.',
          ),
        user_id: idSchema('user').nullable().describe('The user the credential acted for, if any.'),
        ip: z
          .string()
          .nullable()
          .describe(
            'The client IP (behind a trusted proxy, the forwarded one); null for an operator.',
          ),
      })
      .openapi({ title: 'AuditActor' }),
    target: z
      .object({
        type: z.enum(AUDIT_TARGET_TYPES),
        id: z.string(),
      })
      .openapi({ title: 'AuditTarget' }),
    changes: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('What changed (new values, or `{ field: [old, new] }`); never a secret.'),
    created_at: timestampSchema,
  })
  .openapi({ title: 'AuditEvent' });

export type AuditEventResource = z.infer<typeof AuditEventSchema>;

export const AuditEventListQuerySchema = listQuery({
  filters: {
    action: filter.oneOf(AUDIT_ACTIONS),
    actor_type: filter.oneOf(AUDIT_ACTOR_TYPES),
    target_type: filter.oneOf(AUDIT_TARGET_TYPES),
    target_id: filter.string(64),
    user_id: filter.id('user'),
  },
});

const auditEventRoutes = readRoutes('/v1/audit_events', 'audit_log', AuditEventSchema);

export const auditEventsContract = c.router(
  {
    list: auditEventRoutes.list('List audit events', AuditEventListQuerySchema, {
      description: `Changes to the organization's tokens, OAuth clients, webhook endpoints, name, plan and rate limit: who (credential, user, IP), what and when. Newest first; kept at least ${AUDIT_MIN_RETENTION_DAYS} days (${AUDIT_DEFAULT_RETENTION_DAYS} by default). Filter by \`action\`, \`actor_type\`, \`target_type\`, \`target_id\`, \`user_id\` (comma-separate several) and \`created_at\` range.`,
    }),
    retrieve: auditEventRoutes.retrieve({ summary: 'Retrieve an audit event' }),
  },
  ROUTER_OPTIONS,
);
