import type { AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { contract } from './contract';
import {
  DEPRECATION_EXTENSION,
  DEPRECATIONS_PAGE_PATH,
  deprecationAnchor,
  deprecationNote,
} from './deprecation';
import { EVENT_READ_SCOPES, EVENT_TYPES, eventSchemaName } from './events';
import { OAUTH_PATHS } from './oauth';
import { DEFAULT_OPERATION_COST, operationCost, operationMetadata } from './operation';
import { IDEMPOTENCY_KEY_HEADER } from './resource';
import { ERROR_CODES, ERROR_TITLES, type ErrorCode, PROBLEM_TYPE_PATH } from './problem';
import { ALL_SCOPES } from './scopes';
import { toOpenApi31, type JsonObject } from './openapi-31';

/** Every POST accepts it; the server replays the first response for 24 h (see docs/api-guide.md). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header' as const,
  required: false,
  description:
    'Makes a POST safe to retry: the same key with the same body within 24 h returns the first response again (with `Idempotent-Replayed: true`) without doing the work twice; the same key with another body is 409. The SDK sends one on every POST.',
  schema: { type: 'string' as const, minLength: 1, maxLength: 255 },
};

/** Each operation's rate-limit cost, in units of the organization's budget. */
export const RATE_LIMIT_COST_EXTENSION = 'x-rate-limit-cost';

function costNote(cost: number): string {
  return `**Rate limit:** costs ${cost} units of the organization's budget per request (\`${RATE_LIMIT_COST_EXTENSION}\`), where most operations cost 1.`;
}

/** The document's introduction, with the error codes (reference UIs show it before the operations). */
const DESCRIPTION = [
  "The education platform's public API. Every path is also served under `/api/v1`. Errors are RFC 9457 problem details; lists share one pagination, filtering and sorting convention. Official clients: TypeScript (`@platform/client`), PHP (`platform/platform-api`) and Python (`platform-api`): each operation shows the call in all three.",
  '',
  '## Errors',
  '',
  `Every 4xx and 5xx is an \`application/problem+json\` document (the \`Problem\` schema) whose \`code\` is one of these; its \`type\` links to the code's entry on the server's errors page (\`${PROBLEM_TYPE_PATH}\`), which says what to do. Each SDK raises the error class of the status, carrying the \`code\`.`,
  '',
  '| code | status | title |',
  '| --- | --- | --- |',
  ...Object.entries(ERROR_CODES).map(
    ([code, status]) => `| \`${code}\` | ${status} | ${ERROR_TITLES[code as ErrorCode]} |`,
  ),
  '',
  '## Rate limits',
  '',
  `Each organization has a budget of units per rolling 60 s (600 unless its plan says more), shared by all its tokens. A request spends its operation's cost, given on every operation as \`${RATE_LIMIT_COST_EXTENSION}\`: 1 for most, more for operations that read a whole collection (an export, its download, the checksums). A request is accepted only if its whole cost fits in the window; otherwise it is a 429 whose \`Retry-After\` says when it will, and a cheaper request may still pass. A cost above the organization's whole budget is charged as the budget. \`X-RateLimit-Remaining\` counts units.`,
].join('\n');

/** What `servers` says when nobody told the document where the API lives. */
export const DEFAULT_SERVER = { url: 'http://127.0.0.1:3000', description: 'pnpm dev' } as const;

/** Both schemes carry the operation's scope: a PAT is a bearer token, an OAuth token is both. */
const SECURITY_SCHEMES = ['bearer', 'oauth2'] as const;

const SCOPE_DESCRIPTIONS: Record<string, string> = Object.fromEntries(
  ALL_SCOPES.map((scope) => {
    const [resource, access] = scope.split(':') as [string, string];
    const what = resource.replace(/_/g, ' ');
    return [scope, access === 'read' ? `Read ${what}.` : `Create, change and delete ${what}.`];
  }),
);

/** The Standard Webhooks headers every delivery carries (https://www.standardwebhooks.com). */
const WEBHOOK_HEADERS: JsonObject = {
  WebhookId: {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'The message id, the same on every attempt of one delivery: use it to drop duplicates.',
    schema: { type: 'string', examples: ['msg_2b7fKq0a9vXv1Yh3Qe3Yy2Rk8Lz'] },
  },
  WebhookTimestamp: {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, in Unix seconds. Refuse a message more than 5 minutes from your clock.',
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['1767225600'] },
  },
  WebhookSignature: {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      "Space-separated `v1,<base64 HMAC-SHA256>` signatures of `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint's secret (two while a secret rotation overlaps). The SDKs verify it: `verifyWebhook` (TypeScript), `client.webhooks.unwrap` (Python), `$client->webhooks->unwrap` (PHP).",
    schema: { type: 'string', examples: ['v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='] },
  },
  WebhookPosition: {
    name: 'webhook-position',
    in: 'header',
    required: false,
    description:
      "The change's `position` in its organization's change feed; not sent with a `ping`.",
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['42'] },
  },
  WebhookPreviousPosition: {
    name: 'webhook-previous-position',
    in: 'header',
    required: false,
    description:
      "The body's `previous_position`: the position of the change delivered to this endpoint before this one. Not sent for the first change of the endpoint's chain, nor with a `ping`.",
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['41'] },
  },
};

/**
 * Every header the server sends on a response, declared once and referenced by each response
 * that carries it (see `responseHeaders`).
 */
const RESPONSE_HEADERS: JsonObject = {
  'X-Request-Id': {
    description:
      "The request id (`req_…`, or the valid `X-Request-Id` the request carried): quote it to support. Also the problem's `request_id`.",
    schema: { type: 'string' },
  },
  'Platform-Version': {
    description: 'The version of the server that answered (the SDKs of the same version match it).',
    schema: { type: 'string', examples: ['0.1.0'] },
  },
  'X-RateLimit-Limit': {
    description: `The organization's units per rolling minute (600 unless its plan says more); a request spends its operation's \`${RATE_LIMIT_COST_EXTENSION}\`.`,
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description:
      "Units left in the current window, after this request's cost (on a 429, before it: a cheaper request may still fit).",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Unix epoch seconds when a request is next certain to pass.',
    schema: { type: 'integer' },
  },
  'RateLimit-Policy': {
    description: 'The limit as the IETF RateLimit fields draft writes it: `"default";q=600;w=60`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'What is left, IETF draft form: `"default";r=<remaining>;t=<seconds to reset>`.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description:
      "Seconds to wait before trying again (429 over the rate limit: until the operation's whole cost fits; 503 while a dependency is down; 409 while a request with the same Idempotency-Key is still running). The SDKs wait for it, up to 60 s.",
    schema: { type: 'integer', minimum: 0 },
  },
  Link: {
    description:
      'RFC 8288 links: a page\'s `first`, `prev`, `next` and `last` (the same URLs as `links`, every filter kept); on a deprecated operation also `rel="deprecation"`.',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored response of an earlier request with the same Idempotency-Key, replayed without doing the work again.',
    schema: { type: 'string', enum: ['true'] },
  },
  'WWW-Authenticate': {
    description:
      'RFC 6750: why the token was refused (`error="invalid_token"`), or the scope it lacks (`error="insufficient_scope", scope="…"`).',
    schema: { type: 'string' },
  },
  Deprecation: {
    description: 'RFC 9745: this operation is deprecated, since `@<epoch seconds>`.',
    schema: { type: 'string' },
  },
  Sunset: {
    description: 'RFC 8594: the HTTP date after which the deprecated operation may stop working.',
    schema: { type: 'string' },
  },
};

/** An `x-codeSamples` entry: one call of the operation in one SDK. */
export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

export interface OpenApiDocumentOptions {
  /** The API's public origin (`PUBLIC_URL`), named in `servers`; default `DEFAULT_SERVER`. */
  publicUrl?: string;
  /**
   * `x-codeSamples` by operation id: the API reference's calls in each SDK, generated by
   * `pnpm generate:sdks` into `packages/contract/code-samples.json`.
   */
  codeSamples?: Readonly<Record<string, readonly CodeSample[]>>;
  /**
   * The router to describe; default the whole contract. Tests pass the contract plus a test
   * resource to see how the document shows what the real API does not use yet (deprecations).
   */
  router?: AppRouter;
}

/** ts-rest's hook that rewrites each operation of the generated document. */
type OperationMapper = NonNullable<
  NonNullable<Parameters<typeof generateOpenApi>[2]>['operationMapper']
>;

/** An upload's body (`upload` in the metadata): one file part, named `file`. */
const UPLOAD_REQUEST_BODY = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object' as const,
        required: ['file'],
        properties: {
          file: {
            type: 'string' as const,
            format: 'binary',
            description: 'The file: CSV (`text/csv`) or NDJSON (`application/x-ndjson`).',
          },
        },
      },
    },
  },
};

/**
 * An operation with what the contract's metadata adds: its scope and security, file responses,
 * rate-limit cost, deprecation, the Idempotency-Key of a POST, and the `x-` extensions.
 */
const mapOperation: OperationMapper = (op, route) => {
  const metadata = operationMetadata(route);
  const scope = metadata?.scope;
  const scopes = scope ? [scope] : [];
  const deprecation = metadata?.deprecated;
  const fileTypes = metadata?.file;
  if (fileTypes) {
    const success = op.responses['200'] as { description?: string } | undefined;
    op = {
      ...op,
      responses: {
        ...op.responses,
        200: {
          description: success?.description ?? 'The file.',
          content: Object.fromEntries(
            fileTypes.map((type) => [type, { schema: { type: 'string' } }]),
          ),
        },
      },
    };
  }
  if (metadata?.upload) op = { ...op, requestBody: UPLOAD_REQUEST_BODY };
  const cost = metadata ? operationCost(metadata) : undefined;
  if (cost !== undefined && cost > DEFAULT_OPERATION_COST) {
    op = {
      ...op,
      description: [op.description, costNote(cost)].filter(Boolean).join('\n\n'),
    };
  }
  return {
    ...op,
    ...(deprecation && {
      deprecated: true,
      [DEPRECATION_EXTENSION]: deprecation,
      description: [
        op.description,
        deprecationNote({
          ...deprecation,
          link:
            deprecation.link ??
            `${DEPRECATIONS_PAGE_PATH}#${deprecationAnchor(route, 'operation')}`,
        }),
      ]
        .filter(Boolean)
        .join('\n\n'),
    }),
    ...(route.method === 'POST' && {
      parameters: [...(op.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER],
    }),
    ...(metadata && {
      security: SECURITY_SCHEMES.map((scheme) => ({ [scheme]: scopes })),
    }),
    ...(scope && { 'x-required-scope': scope }),
    ...(cost !== undefined && { [RATE_LIMIT_COST_EXTENSION]: cost }),
    ...(metadata?.list && { 'x-list': true }),
    ...(metadata?.feed && { 'x-feed': true }),
    ...(metadata?.sdkName && { 'x-sdk-name': metadata.sdkName }),
    ...(metadata?.delegation && { 'x-delegation': metadata.delegation }),
  };
};

/**
 * The OpenAPI 3.1 document of the contract; `pnpm --filter @platform/contract openapi` writes it,
 * and the server serves it with `servers` set to its own `PUBLIC_URL`.
 */
export function generateOpenApiDocument(version: string, options: OpenApiDocumentOptions = {}) {
  const generated = generateOpenApi(
    options.router ?? contract,
    {
      info: {
        title: 'Platform API',
        version,
        license: { name: 'MIT', identifier: 'MIT' },
        description: DESCRIPTION,
      },
      servers: [DEFAULT_SERVER],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A personal access token (`pat_…`) or an OAuth 2.0 access token. Each operation names the one scope it needs.',
          },
          oauth2: {
            type: 'oauth2',
            description:
              'OAuth 2.0 (RFC 6749, RFC 9700). Confidential clients authenticate with HTTP Basic; PKCE (S256) is required for the authorization code grant; refresh tokens rotate on every use. Metadata: `/.well-known/oauth-authorization-server`.',
            flows: {
              clientCredentials: { tokenUrl: OAUTH_PATHS.token, scopes: SCOPE_DESCRIPTIONS },
              authorizationCode: {
                authorizationUrl: OAUTH_PATHS.authorization,
                tokenUrl: OAUTH_PATHS.token,
                refreshUrl: OAUTH_PATHS.token,
                scopes: SCOPE_DESCRIPTIONS,
              },
            },
          },
        },
      },
    },
    {
      setOperationId: 'concatenated-path',
      operationMapper: mapOperation,
    },
  ) as unknown as JsonObject;

  const document = toOpenApi31(generated);
  document.servers = [
    options.publicUrl ? { url: options.publicUrl, description: 'This server' } : DEFAULT_SERVER,
  ];
  addEventsAndWebhooks(document);
  problemMediaType(document);
  responseHeaders(document);
  if (options.codeSamples) addCodeSamples(document, options.codeSamples);
  requiredBodies(document);
  deprecatedParameters(document);
  return document;
}

/**
 * A parameter's deprecation is written on its schema (`deprecated(schema, …)`); OpenAPI reads
 * it on the parameter itself, so it moves there.
 */
function deprecatedParameters(document: JsonObject): void {
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject)) {
      const parameters = ((operation as JsonObject).parameters ?? []) as JsonObject[];
      for (const parameter of parameters) {
        const schema = parameter.schema as JsonObject | undefined;
        if (schema?.deprecated !== true) continue;
        const { deprecated, [DEPRECATION_EXTENSION]: deprecation, ...rest } = schema;
        parameter.schema = rest;
        parameter.deprecated = deprecated;
        if (deprecation) parameter[DEPRECATION_EXTENSION] = deprecation;
      }
    }
  }
}

/** Each operation's calls in the three SDKs, where reference UIs show them. */
function addCodeSamples(
  document: JsonObject,
  samples: Readonly<Record<string, readonly CodeSample[]>>,
): void {
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject) as JsonObject[]) {
      const found = samples[operation.operationId as string];
      if (found) operation['x-codeSamples'] = found.map((sample) => ({ ...sample }));
    }
  }
}

/**
 * Declares on each response the headers the server sends with it: the request id and version
 * on all; the rate-limit fields on every answer to a token; `Retry-After` on 409, 429 and 503;
 * `Link` on pages; `Idempotent-Replayed` on a POST's; `WWW-Authenticate` on 401 and 403;
 * `Deprecation`, `Sunset` and `Link` on a deprecated operation's.
 */
function responseHeaders(document: JsonObject): void {
  const used = new Set<string>();
  const ref = (name: string) => {
    used.add(name);
    return { $ref: `#/components/headers/${name}` };
  };
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const [method, value] of Object.entries(item as JsonObject)) {
      const operation = value as JsonObject;
      const authenticated = Array.isArray(operation.security) && operation.security.length > 0;
      for (const [status, response] of Object.entries(
        operation.responses as Record<string, JsonObject>,
      )) {
        const code = Number(status);
        const names = ['X-Request-Id', 'Platform-Version'];
        if (authenticated && code !== 401)
          names.push(
            'X-RateLimit-Limit',
            'X-RateLimit-Remaining',
            'X-RateLimit-Reset',
            'RateLimit-Policy',
            'RateLimit',
          );
        if (code === 409 || code === 429 || code === 503) names.push('Retry-After');
        if (code === 401 || code === 403) names.push('WWW-Authenticate');
        if (method === 'post') names.push('Idempotent-Replayed');
        if ((operation['x-list'] === true && code < 300) || operation.deprecated === true)
          names.push('Link');
        if (operation.deprecated === true) names.push('Deprecation', 'Sunset');
        response.headers = Object.fromEntries(names.map((name) => [name, ref(name)]));
      }
    }
  }
  (document.components as JsonObject).headers = Object.fromEntries(
    Object.entries(RESPONSE_HEADERS).filter(([name]) => used.has(name)),
  );
}

/** A body with required fields must be sent; ts-rest never says so. */
function requiredBodies(document: JsonObject): void {
  const schemas = (document.components as JsonObject).schemas as Record<string, JsonObject>;
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject)) {
      const body = (operation as JsonObject).requestBody as JsonObject | undefined;
      const media = (body?.content as JsonObject | undefined)?.['application/json'] as
        { schema?: { $ref?: string } } | undefined;
      const ref = media?.schema?.$ref;
      const schema = ref ? schemas[ref.split('/').pop()!] : undefined;
      if (body && Array.isArray(schema?.required) && schema.required.length > 0) {
        body.required = true;
      }
    }
  }
}

/** Errors are sent as `application/problem+json` (RFC 9457); ts-rest can only say JSON. */
function problemMediaType(document: JsonObject): void {
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject)) {
      const responses = (operation as JsonObject).responses as Record<string, JsonObject>;
      for (const [status, response] of Object.entries(responses)) {
        const content = response.content as JsonObject | undefined;
        if (Number(status) >= 400 && content?.['application/json']) {
          response.content = { 'application/problem+json': content['application/json'] };
        }
      }
    }
  }
}

/**
 * Names each event type's schema, makes `Event` a discriminated union of references, and lists
 * every event under 3.1 `webhooks`, with the signature headers a delivery carries.
 */
function addEventsAndWebhooks(document: JsonObject): void {
  const components = document.components as JsonObject;
  const schemas = components.schemas as JsonObject;
  const mapping = Object.fromEntries(
    EVENT_TYPES.map((type) => [type, `#/components/schemas/${eventSchemaName(type)}`]),
  );
  const event = schemas.Event as JsonObject;
  event.discriminator = { propertyName: 'type', mapping };
  components.parameters = WEBHOOK_HEADERS;
  document.webhooks = Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const scope = EVENT_READ_SCOPES[type];
      return [
        type,
        {
          post: {
            operationId: `webhooks.${type}`,
            summary: type === 'ping' ? 'A test event' : `The ${type} event`,
            description: `Sent to every enabled webhook endpoint subscribed to \`${type}\` (or \`*\`).${
              scope ? ` Subscribing needs \`${scope}\`.` : ''
            } Answer 2xx within the delivery timeout (15 s unless the server's \`WEBHOOK_TIMEOUT\` says otherwise); anything else is retried with backoff. Verify the signature over the raw body before trusting it.`,
            tags: ['webhooks'],
            ...(scope && { 'x-required-scope': scope }),
            // Deliveries are authenticated by their signature, not by a token.
            security: [],
            parameters: Object.keys(WEBHOOK_HEADERS).map((name) => ({
              $ref: `#/components/parameters/${name}`,
            })),
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: mapping[type] } } },
            },
            responses: { '2XX': { description: 'Received. Any 2xx ends the retries.' } },
          },
        },
      ];
    }),
  );
}
