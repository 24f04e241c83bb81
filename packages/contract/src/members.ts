/**
 * The people of an organization: members with a role (`admin`, `developer`, `viewer`; see
 * `ROLE_SCOPES`), the invitations that bring new ones in, and `/v1/user`, the member a token
 * acts for.
 */
import { initContract } from '@ts-rest/core';
import { dateTimeInput } from './date-time';
import { idSchema } from './ids';
import { filter, listQuery } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses, problemResponse, searchErrorResponses } from './problem';
import { deletedSchema, IdPathParams, readErrorResponses, timestampSchema } from './resource';
import { ROLES } from './scopes';
import { DeletedSessionSchema, UserSessionListSchema } from './user-sessions';
import { z } from './zod-openapi';
import { resourceRoutes } from './routes';

const c = initContract();

/** Current-password checks a member's tokens may make per minute (as sign-in attempts). */
export const PASSWORD_CHECKS_PER_MINUTE = 10;

/** How long an invitation's link works. */
export const INVITATION_TTL_DAYS = 7;

const roleField = z
  .enum(ROLES)
  .describe(
    '`admin`: everything, including members, the organization and the audit log. `developer`: every other scope. `viewer`: read scopes only (not the audit log). A token acting for a member never does more than the role allows.',
  );

const emailField = z
  .string()
  .min(3)
  .max(320, 'must be at most 320 characters')
  .email('must be an email address');

// ---------------------------------------------------------------- members

export const MemberSchema = z
  .object({
    id: idSchema('user'),
    object: z.literal('member'),
    email: z.string(),
    name: z.string().nullable(),
    role: roleField,
    organization_id: idSchema('organization'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'Member' });

export type MemberResource = z.infer<typeof MemberSchema>;

/** One organization of the caller's account, as `GET /v1/user` lists them. */
export const MembershipSchema = z
  .object({
    organization_id: idSchema('organization'),
    organization_name: z.string(),
    role: roleField,
    member_id: idSchema('user').describe('The account as a member of that organization.'),
  })
  .openapi({ title: 'Membership' });

/** The calling member, with the account they are one membership of (decision 34). */
export const UserSchema = MemberSchema.extend({
  account_id: idSchema('account').describe(
    'The person: the same in every organization they belong to, while `id` is this membership.',
  ),
  memberships: z
    .array(MembershipSchema)
    .describe(
      "Every organization of the account, this one included, oldest membership first, to the person's own portal session; any other token (a personal access token, an app's) is one membership's and lists only it.",
    ),
}).openapi({ title: 'User' });

export type UserResource = z.infer<typeof UserSchema>;

export const MemberUpdateSchema = z
  .object({
    role: roleField.optional(),
    name: z
      .string()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .nullable()
      .optional()
      .describe('Null clears it.'),
  })
  .strict()
  .openapi({ title: 'MemberUpdate' });

export const MemberListQuerySchema = listQuery({
  filters: { role: filter.oneOf(ROLES) },
  sort: ['email'],
  search: ['name', 'email'],
});

const LAST_ADMIN =
  'An organization always keeps at least one admin: removing or demoting the last one is a 409.';

const memberRoutes = resourceRoutes('/v1/members', 'members', MemberSchema);

const named = <T extends z.ZodRawShape>(shape: T) => z.array(z.object(shape));

/**
 * Everything that acts for a member: what removing them stops and demoting them narrows
 * (api.md, "Membership"), unless an admin transfers it first.
 */
export const MemberCredentialsSchema = z
  .object({
    object: z.literal('member_credentials'),
    member_id: idSchema('user'),
    personal_access_tokens: named({
      id: idSchema('personal_access_token'),
      name: z.string(),
    }).describe(
      "Their live personal access tokens, the organization's sandboxes' included: revoked on removal, cut to the new role on demotion.",
    ),
    oauth_clients: named({ id: idSchema('oauth_client'), name: z.string() }).describe(
      'OAuth apps they registered: deleted on removal (every token of theirs with them), their scopes cut to the new role on demotion.',
    ),
    authorized_apps: named({ client_id: idSchema('oauth_client'), name: z.string() }).describe(
      'Apps they approved (their grants): deleted on removal, cut to the new role on demotion.',
    ),
    webhook_endpoints: named({ id: idSchema('webhook_endpoint'), url: z.string() }).describe(
      'Endpoints that belong to them: disabled on removal (`member_removed`), delivering only what the new role may read on demotion.',
    ),
    invitations: named({ id: idSchema('invitation'), email: z.string(), role: roleField }).describe(
      'Pending invitations they sent: revoked on removal, and on demotion those for a role they can no longer give.',
    ),
    sessions: z.number().int().describe('Browsers signed in as them: signed out on removal.'),
  })
  .openapi({ title: 'MemberCredentials' });

export type MemberCredentialsResource = z.infer<typeof MemberCredentialsSchema>;

export const membersContract = c.router(
  {
    list: memberRoutes.list('List members', MemberListQuerySchema, {
      errors: searchErrorResponses,
      lead: "The organization's members and their roles.",
    }),
    retrieve: memberRoutes.retrieve({ summary: 'Retrieve a member' }),
    update: memberRoutes.update({
      summary: "Change a member's role or name",
      description: `A new role applies from the member's next request: their tokens never do more than it allows, the OAuth apps they registered are cut to it, their webhook endpoints deliver only what it may read, and their pending invitations for a role it cannot give are revoked. Giving a role needs a calling token that holds every scope of that role (403 otherwise). ${LAST_ADMIN}`,
      body: MemberUpdateSchema,
    }),
    delete: memberRoutes.delete({
      summary: 'Remove a member',
      description: `The member can no longer sign in, and nothing they made or approved acts for them any more (see \`GET /v1/members/{id}/credentials\`): their personal access tokens are revoked, the OAuth apps they registered and their grants and sessions deleted, their webhook endpoints disabled (\`member_removed\`) and their pending invitations revoked, from the next request or delivery on. Transfer an endpoint or an app first to keep it. ${LAST_ADMIN}`,
      response: deletedSchema('member', 'DeletedMember'),
    }),
    credentials: {
      method: 'GET',
      path: '/v1/members/:id/credentials',
      pathParams: IdPathParams,
      summary: 'List what acts for a member',
      description:
        'The tokens, apps, approvals, webhook endpoints, invitations and sign-in sessions that removing the member would stop, and demoting them would narrow: what the portal lists before you confirm.',
      responses: { 200: MemberCredentialsSchema, ...readErrorResponses },
      metadata: operation({ scope: 'members:read' }),
    },
  },
  ROUTER_OPTIONS,
);

// ---------------------------------------------------------------- invitations

export const InvitationSchema = z
  .object({
    id: idSchema('invitation'),
    object: z.literal('invitation'),
    email: z.string(),
    role: roleField,
    expires_at: timestampSchema.describe('After this the link no longer works.'),
    created_at: timestampSchema,
  })
  .openapi({ title: 'Invitation' });

export type InvitationResource = z.infer<typeof InvitationSchema>;

export const INVITATION_DELIVERIES = ['email', 'link'] as const;

export const InvitationWithSecretSchema = InvitationSchema.extend({
  accept_url: z
    .string()
    .url()
    .nullable()
    .describe(
      'The one-time link the invitee opens to set a password: null when the server mailed it to the invitee (`delivery: email`), so only the owner of the address can accept. Otherwise shown only here, for you to pass on; only a hash of its token is kept.',
    ),
  delivery: z
    .enum(INVITATION_DELIVERIES)
    .describe(
      '`email`: the server sent the link to the invitee (it has `SMTP_URL`). `link`: a server without mail (development) returns it in `accept_url` instead.',
    ),
}).openapi({ title: 'InvitationWithSecret' });

export const InvitationCreateSchema = z
  .object({
    email: emailField,
    role: roleField,
    expires_at: dateTimeInput()
      .nullable()
      .optional()
      .describe(
        `When the link stops working; in the future and at most ${INVITATION_TTL_DAYS} days away. Omit or null: in ${INVITATION_TTL_DAYS} days (or when the calling token expires, if sooner).`,
      ),
  })
  .strict()
  .openapi({ title: 'InvitationCreate' });

export const InvitationListQuerySchema = listQuery({
  filters: { role: filter.oneOf(ROLES) },
  search: ['email'],
});

const invitationRoutes = resourceRoutes('/v1/invitations', 'members', InvitationSchema);

export const invitationsContract = c.router(
  {
    list: invitationRoutes.list('List pending invitations', InvitationListQuerySchema, {
      errors: searchErrorResponses,
      lead: 'Invitations not yet accepted, revoked or expired. Never the link itself.',
    }),
    create: invitationRoutes.create({
      summary: 'Invite a member',
      description: `Mails the invitee a one-time link (\`delivery: email\`; a server without mail returns it as \`accept_url\` instead, not shown again), which works for ${INVITATION_TTL_DAYS} days (no longer than the calling token). The invitee opens it, sets a password and becomes a member with \`role\`. Inviting with a role needs a calling token that holds every scope of that role (403 otherwise). An email that is already a member is a 409, as is a sandbox's token: a sandbox has no members of its own (invite to its parent).`,
      body: InvitationCreateSchema,
      response: InvitationWithSecretSchema,
      oneTimeSecret: 'accept_url',
      delegation: 'credential',
    }),
    retrieve: invitationRoutes.retrieve({ summary: 'Retrieve an invitation' }),
    resend: invitationRoutes.action('resend', {
      summary: 'Send an invitation again',
      description: `A pending invitation gets a new one-time link, valid for ${INVITATION_TTL_DAYS} days again (no longer than the calling token); the old link stops working at once. Mailed to the invitee (\`delivery: email\`), or answered as \`accept_url\` by a server without mail. An invitation accepted, revoked or expired is a 409: invite again (in a sandbox, a 409 too: invite to its parent). Needs a calling token that holds every scope of the invitation's role (403 otherwise).`,
      response: InvitationWithSecretSchema,
      oneTimeSecret: 'accept_url',
      delegation: 'credential',
    }),
    delete: invitationRoutes.delete({
      summary: 'Revoke an invitation',
      description: 'Its link stops working at once. Revoking twice is harmless.',
      response: deletedSchema('invitation', 'DeletedInvitation'),
    }),
  },
  ROUTER_OPTIONS,
);

// ---------------------------------------------------------------- the calling member

export const PasswordChangeSchema = z
  .object({
    current_password: z.string().min(1).max(1024),
    new_password: z
      .string()
      .min(12, 'must be at least 12 characters')
      .max(1024, 'must be at most 1024 characters'),
  })
  .strict()
  .openapi({ title: 'PasswordChange' });

export const EmailChangeSchema = z
  .object({
    email: z
      .string()
      .min(3)
      .max(320, 'must be at most 320 characters')
      .email('must be an email address')
      .describe('The new address. It takes effect once the link mailed to it is opened.'),
    current_password: z.string().min(1).max(1024),
  })
  .strict()
  .openapi({ title: 'EmailChange' });

/** How long the link confirming a new email works. */
export const EMAIL_CHANGE_TTL_HOURS = 24;

/** Confirmation links (or notices) mailed to one address per minute, whoever asks. */
export const EMAIL_CHANGE_MAILS_PER_ADDRESS = 3;

export const PendingEmailChangeSchema = z
  .object({
    object: z.literal('email_change'),
    email: z.string().describe('The address to confirm.'),
    delivery: z
      .enum(['email', 'link'])
      .describe(
        '`email`: the confirmation link went to the new address. `link`: this server sends no mail (development), so the link is `confirm_url`, and nothing proves the address.',
      ),
    confirm_url: z
      .string()
      .nullable()
      .describe(
        'The confirmation link, only from a server without mail (`delivery: link`); shown once. Null when it was mailed.',
      ),
    expires_at: timestampSchema.describe('When the link stops working.'),
  })
  .openapi({ title: 'PendingEmailChange' });

const USER_ONLY =
  'Any valid token acting for a member will do, whatever its scopes: an OAuth access token a member approved, or a personal access token a member made over the API. Other tokens (client credentials, tokens made by an operator) act for no member: 403.';

export const userContract = c.router(
  {
    retrieve: {
      method: 'GET',
      path: '/v1/user',
      summary: 'Retrieve the calling member',
      description: `The member the calling token acts for, with their role, and every organization their account belongs to. ${USER_ONLY}`,
      query: z.object({}).strict(),
      responses: { 200: UserSchema, ...commonErrorResponses },
      metadata: operation({ scope: null, requiresUser: true }),
    },
    changePassword: {
      method: 'POST',
      path: '/v1/user/password',
      summary: "Change the calling member's password",
      description: `Needs the current password (400 when it is wrong; each wrong one is recorded in the audit log, and at most ${PASSWORD_CHECKS_PER_MINUTE} checks a minute are made, 429 after). The new one must be at least 12 characters, not only spaces, and not a common, leaked or easily guessed password (400 \`weak_password\`). Every other sign-in session of the member ends and their portal tokens are revoked, except the caller's; their personal access tokens and approved apps keep working. A pending email change or password reset link stops working. ${USER_ONLY}`,
      body: PasswordChangeSchema,
      responses: {
        204: c.noBody(),
        ...commonErrorResponses,
        413: problemResponse('The request body is larger than 1 MB.'),
        415: problemResponse('The request body is not application/json.'),
      },
      metadata: operation({ scope: null, requiresUser: true }),
    },
    changeEmail: {
      method: 'POST',
      path: '/v1/user/email',
      summary: "Change the calling member's email",
      description: `Mails a confirmation link to the new address; the email changes only when the button on the link's page is pressed (within ${EMAIL_CHANGE_TTL_HOURS} hours), which proves the member holds it, and the old address is told. A new request replaces the pending one; a new password (changed or reset) voids it. The answer is the same whether or not the new address already has an account (its holder is told by mail instead); at most ${EMAIL_CHANGE_MAILS_PER_ADDRESS} mails a minute go to one address (429 after). Needs the current password, checked and limited as for a password change (400, 429). A server that sends no mail (development) answers the link as \`confirm_url\` instead (\`delivery: link\`): nothing then proves the address, and confirming one that has an account says so (409), as accepting an invitation does. ${USER_ONLY}`,
      body: EmailChangeSchema,
      responses: {
        202: PendingEmailChangeSchema,
        ...commonErrorResponses,
        413: problemResponse('The request body is larger than 1 MB.'),
        415: problemResponse('The request body is not application/json.'),
      },
      metadata: operation({ scope: null, requiresUser: true, oneTimeSecret: 'confirm_url' }),
    },
    listSessions: {
      method: 'GET',
      path: '/v1/user/sessions',
      summary: "List the calling member's sessions",
      description: `Where the member is signed in (browsers) and the OAuth apps they approved, each with the device and IP address it last signed in or fetched a token from: what the portal's account page lists. Personal access tokens are listed by \`GET /v1/tokens\`. ${USER_ONLY}`,
      query: z.object({}).strict(),
      responses: { 200: UserSessionListSchema, ...commonErrorResponses },
      metadata: operation({ scope: null, requiresUser: true }),
    },
    revokeSession: {
      method: 'DELETE',
      path: '/v1/user/sessions/:id',
      pathParams: IdPathParams,
      summary: 'Sign out one session',
      description: `A browser: its sign-in ends and its portal tokens stop working (the calling one too, when it is the caller's own browser); the apps approved in it stay approved. An app: its approval is withdrawn and every token it holds for the member stops working, from the next request on; the app must ask again. Recorded in the audit log (\`user.session_revoked\`). ${USER_ONLY}`,
      body: c.noBody(),
      responses: {
        200: DeletedSessionSchema,
        ...readErrorResponses,
      },
      metadata: operation({ scope: null, requiresUser: true }),
    },
    signOutOtherSessions: {
      method: 'POST',
      path: '/v1/user/sessions/sign_out_others',
      summary: 'Sign out every other browser',
      description: `Ends every browser session of the member except the caller's own (with a personal access token, every one) and revokes their portal tokens; approved apps and personal access tokens keep working (revoke those one by one). Answers the sessions that remain. Recorded in the audit log (\`user.session_revoked\`). ${USER_ONLY}`,
      body: c.noBody(),
      responses: { 200: UserSessionListSchema, ...commonErrorResponses },
      metadata: operation({ scope: null, requiresUser: true }),
    },
  },
  ROUTER_OPTIONS,
);
