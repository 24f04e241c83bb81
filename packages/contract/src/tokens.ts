/**
 * Credentials: personal access tokens (managed over the API as well as the CLI), the OAuth
 * clients an organization registers with the authorization server, and `GET /v1/token`, which
 * tells any caller what its own token can do.
 */
import { initContract } from '@ts-rest/core';
import { dateTimeInput } from './date-time';
import { idSchema } from './ids';
import { filter, listQuery } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses, searchErrorResponses } from './problem';
import {
  deletedSchema,
  MEMBER_ID_DESCRIPTION,
  text,
  timestampSchema,
  TransferSchema,
} from './resource';
import { ALL_SCOPES, type Scope } from './scopes';
import { z } from './zod-openapi';
import { resourceRoutes } from './routes';

const c = initContract();

const scopeEnum = z.enum(ALL_SCOPES as [Scope, ...Scope[]]);

const scopesField = z
  .array(z.union([scopeEnum, z.literal('all')]))
  .min(1, 'must name at least one scope')
  .max(ALL_SCOPES.length + 1)
  .describe('Scopes the credential may use; `all` stands for every scope.');

// ---------------------------------------------------------------- personal access tokens

export const PersonalAccessTokenSchema = z
  .object({
    id: idSchema('personal_access_token'),
    object: z.literal('personal_access_token'),
    name: z.string(),
    prefix: z.string().describe('The first characters of the token, to tell tokens apart.'),
    scopes: z.array(scopeEnum),
    created_at: timestampSchema,
    last_used_at: timestampSchema
      .nullable()
      .describe('When the token last authenticated a request (to the minute).'),
    expires_at: timestampSchema.nullable().describe('Null: the token does not expire.'),
    revoked_at: timestampSchema.nullable(),
    member_id: idSchema('user').nullable().describe(MEMBER_ID_DESCRIPTION),
  })
  .openapi({ title: 'PersonalAccessToken' });

export type PersonalAccessTokenResource = z.infer<typeof PersonalAccessTokenSchema>;

export const PersonalAccessTokenWithSecretSchema = PersonalAccessTokenSchema.extend({
  token: z
    .string()
    .regex(/^pat_(test_)?[0-9A-Za-z]{36}$/)
    .describe("The token itself (a sandbox's start `pat_test_`). Shown only here: store it now."),
}).openapi({ title: 'PersonalAccessTokenWithSecret' });

export const PersonalAccessTokenCreateSchema = z
  .object({
    name: text(200),
    scopes: scopesField,
    expires_at: dateTimeInput()
      .nullable()
      .optional()
      .describe('When the token stops working; must be in the future. Omit or null: never.'),
  })
  .strict()
  .openapi({ title: 'PersonalAccessTokenCreate' });

/**
 * A token's state, derived from `revoked_at` and `expires_at` at the time of the request:
 * `revoked` once revoked (whether or not it has also expired), else `expired` once `expires_at`
 * has passed, else `active`.
 */
export const PERSONAL_ACCESS_TOKEN_STATUSES = ['active', 'expired', 'revoked'] as const;
export type PersonalAccessTokenStatus = (typeof PERSONAL_ACCESS_TOKEN_STATUSES)[number];

export const PersonalAccessTokenListQuerySchema = listQuery({
  filters: {
    status: filter.oneOf(
      PERSONAL_ACCESS_TOKEN_STATUSES,
      "The token's state when the request is served: `revoked` once `revoked_at` is set; else `expired` once `expires_at` has passed; else `active`.",
    ),
  },
  search: ['name'],
});

const tokenRoutes = resourceRoutes(
  '/v1/personal_access_tokens',
  'tokens',
  PersonalAccessTokenSchema,
);

export const personalAccessTokensContract = c.router(
  {
    list: tokenRoutes.list('List personal access tokens', PersonalAccessTokenListQuerySchema, {
      errors: searchErrorResponses,
      lead: "The organization's tokens, revoked and expired ones included (see `revoked_at`, `expires_at`; `status` narrows to active, expired or revoked ones). Never the token itself.",
    }),
    create: tokenRoutes.create({
      summary: 'Create a personal access token',
      description:
        "Returns the `token`, which is not shown again; only its hash is kept. The new token's scopes must be among the calling token's (403 otherwise), and when the calling token expires, the new one must expire no later.",
      body: PersonalAccessTokenCreateSchema,
      response: PersonalAccessTokenWithSecretSchema,
      oneTimeSecret: 'token',
      delegation: 'credential',
    }),
    retrieve: tokenRoutes.retrieve({ summary: 'Retrieve a personal access token' }),
    delete: tokenRoutes.delete({
      summary: 'Revoke a personal access token',
      description:
        "The token is refused from the next request on, and webhook endpoints it owns are disabled (`credential_revoked`). It stays listed, with `revoked_at`, for the audit trail. Revoking twice is harmless. The token's scopes must be among the calling token's (403 otherwise).",

      delegation: 'credential',
    }),
  },
  ROUTER_OPTIONS,
);

// ---------------------------------------------------------------- the caller's own token

export const TOKEN_TYPES = ['personal_access_token', 'oauth_access_token'] as const;

export const TokenInfoSchema = z
  .object({
    object: z.literal('token'),
    type: z.enum(TOKEN_TYPES),
    organization_id: idSchema('organization'),
    scopes: z.array(scopeEnum),
    expires_at: timestampSchema.nullable().describe('Null: the token does not expire.'),
    personal_access_token_id: idSchema('personal_access_token')
      .nullable()
      .describe('For a personal access token: its id.'),
    client_id: idSchema('oauth_client')
      .nullable()
      .describe('For an OAuth access token: the client it was issued to.'),
    user_id: idSchema('user')
      .nullable()
      .describe(
        'The member the token acts for (whose role caps its scopes): the user who approved an OAuth client, or the member who made a personal access token over the API. Null for client credentials and tokens an operator made.',
      ),
  })
  .openapi({ title: 'TokenInfo' });

export type TokenInfo = z.infer<typeof TokenInfoSchema>;

export const tokenContract = c.router(
  {
    retrieve: {
      method: 'GET',
      path: '/v1/token',
      summary: 'Inspect the calling token',
      query: z.object({}).strict(),
      description:
        'Which organization, scopes and expiry the bearer token has: the first thing to check when a call answers 403. Any valid token may call it.',
      responses: { 200: TokenInfoSchema, ...commonErrorResponses },
      metadata: operation({ scope: null }),
    },
  },
  ROUTER_OPTIONS,
);

// ---------------------------------------------------------------- OAuth clients

export const OAUTH_CLIENT_TYPES = ['confidential', 'public'] as const;
export const OAUTH_GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
] as const;
export type OAuthGrantType = (typeof OAUTH_GRANT_TYPES)[number];

/** How many redirect URIs one client may register. */
export const MAX_REDIRECT_URIS = 10;

export const OAuthClientSchema = z
  .object({
    id: idSchema('oauth_client').describe('The `client_id`.'),
    object: z.literal('oauth_client'),
    name: z.string().describe('Shown to users on the consent page.'),
    type: z
      .enum(OAUTH_CLIENT_TYPES)
      .describe(
        '`confidential`: a server that keeps a `client_secret`. `public`: a native or browser app that cannot; it uses PKCE alone.',
      ),
    redirect_uris: z.array(z.string()),
    scopes: z.array(scopeEnum).describe('The most the client may ask for.'),
    grant_types: z.array(z.enum(OAUTH_GRANT_TYPES)),
    expires_at: timestampSchema
      .nullable()
      .describe(
        'When the client stops working: it gets no more tokens, and the tokens it has are refused. Null: it does not expire. A client registered or rotated by an expiring token expires with it.',
      ),
    created_at: timestampSchema,
    updated_at: timestampSchema,
    // Last: added later, and the PHP client's model constructors take fields in order.
    member_id: idSchema('user').nullable().describe(MEMBER_ID_DESCRIPTION),
  })
  .openapi({ title: 'OAuthClient' });

export type OAuthClientResource = z.infer<typeof OAuthClientSchema>;

export const OAuthClientWithSecretSchema = OAuthClientSchema.extend({
  client_secret: z
    .string()
    .nullable()
    .describe('Shown only here (null for a public client); only its hash is kept.'),
}).openapi({ title: 'OAuthClientWithSecret' });

const redirectUriField = z
  .string()
  .min(1)
  .max(2048, 'must be at most 2048 characters')
  .describe(
    'Compared exactly. `https://…`; `http://` only on a loopback address (127.0.0.1, [::1], localhost); or, for public clients, a private-use scheme such as `com.example.app:/callback`. No fragment.',
  );

const redirectUrisField = z
  .array(redirectUriField)
  .max(MAX_REDIRECT_URIS)
  .refine((uris) => new Set(uris).size === uris.length, 'must not repeat a URI');

export const OAuthClientCreateSchema = z
  .object({
    name: text(100),
    type: z.enum(OAUTH_CLIENT_TYPES),
    redirect_uris: redirectUrisField.default([]),
    scopes: scopesField,
    grant_types: z
      .array(z.enum(OAUTH_GRANT_TYPES))
      .min(1)
      .refine((grants) => new Set(grants).size === grants.length, 'must not repeat a grant')
      .default(['authorization_code', 'refresh_token'])
      .describe(
        '`client_credentials` needs a confidential client; `authorization_code` needs at least one redirect URI. Implicit and password grants are not offered (RFC 9700).',
      ),
    expires_at: timestampSchema
      .nullable()
      .optional()
      .describe(
        "When the client stops working; must be in the future, and no later than the calling token's expiry. Omit or null: never, or, when the calling token expires, with it.",
      ),
  })
  .strict()
  .openapi({ title: 'OAuthClientCreate' });

export const OAuthClientUpdateSchema = z
  .object({
    name: text(100),
    redirect_uris: redirectUrisField.describe(
      'The whole new list. A client with the `authorization_code` grant keeps at least one.',
    ),
  })
  .partial()
  .strict()
  .openapi({ title: 'OAuthClientUpdate' });

export const OAuthClientListQuerySchema = listQuery({
  filters: { type: filter.oneOf(OAUTH_CLIENT_TYPES) },
  search: ['name'],
});

const oauthClientRoutes = resourceRoutes('/v1/oauth_clients', 'oauth_clients', OAuthClientSchema);

export const oauthClientsContract = c.router(
  {
    list: oauthClientRoutes.list('List OAuth clients', OAuthClientListQuerySchema, {
      errors: searchErrorResponses,
    }),
    create: oauthClientRoutes.create({
      summary: 'Register an OAuth client',
      description:
        "A confidential client gets its `client_secret` here, and never again. Its scopes must be among the calling token's (403 otherwise), and it expires no later than the calling token (`expires_at`).",
      body: OAuthClientCreateSchema,
      response: OAuthClientWithSecretSchema,
      oneTimeSecret: 'client_secret',
      delegation: 'credential',
    }),
    retrieve: oauthClientRoutes.retrieve({ summary: 'Retrieve an OAuth client' }),
    update: oauthClientRoutes.update({
      summary: "Change an OAuth client's name or redirect URIs",
      description:
        "Only the fields sent change; its type, scopes and grants are fixed at registration. New redirect URIs apply to the next authorization request, and authorization codes not yet exchanged are refused (the user signs in again); users' grants and issued tokens stay. The client's scopes must be among the calling token's, and the caller must be the member it belongs to or an admin (403 otherwise); when the calling token expires, the client's `expires_at` becomes no later. Recorded in the audit log (`oauth_client.updated`).",
      body: OAuthClientUpdateSchema,
      delegation: 'credential',
    }),
    rotateSecret: oauthClientRoutes.action('rotate_secret', {
      summary: "Replace a confidential client's secret",
      description:
        "Returns the new `client_secret`; the old one stops working at once, and so do access tokens from the client credentials grant. Users' grants stay (refreshing needs the new secret). 409 for a public client. Whoever holds the secret controls the client, so the client's scopes must be among the calling token's, and the caller must be the member it belongs to or an admin (403 otherwise); when the calling token expires, the client's `expires_at` becomes no later.",
      response: OAuthClientWithSecretSchema,
      oneTimeSecret: 'client_secret',
      delegation: 'credential',
    }),
    transfer: oauthClientRoutes.action('transfer', {
      summary: 'Transfer an OAuth client to another member',
      description:
        "Admins only (403 otherwise). The client then belongs to `member_id`: its client credentials tokens act for that member, it stops when they are removed, and its scopes are cut to their role's. Users' grants stay. Recorded in the audit log.",
      body: TransferSchema,
      delegation: 'transfer',
    }),
    delete: oauthClientRoutes.delete({
      summary: 'Delete an OAuth client',
      description:
        "Every token issued to it is refused from the next request on, and webhook endpoints it owns are disabled (`credential_revoked`). The client's scopes must be among the calling token's, and the caller must be the member it belongs to or an admin (403 otherwise).",
      response: deletedSchema('oauth_client', 'DeletedOAuthClient'),
      delegation: 'credential',
    }),
  },
  ROUTER_OPTIONS,
);
