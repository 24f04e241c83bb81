import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EVENT_TYPES, eventSchemaName } from './events';
import { OAUTH_PATHS } from './oauth';
import { type CodeSample, DEFAULT_SERVER, generateOpenApiDocument } from './openapi';
import { ALL_SCOPES } from './scopes';

describe('openapi.json', () => {
  it('matches the contract and the code samples (regenerate with: pnpm generate:sdks)', () => {
    const { version } = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'),
    ) as { version: string };
    const committed: unknown = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'openapi.json'), 'utf8'),
    );
    const codeSamples = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'code-samples.json'), 'utf8'),
    ) as Record<string, CodeSample[]>;
    expect(JSON.parse(JSON.stringify(generateOpenApiDocument(version, { codeSamples })))).toEqual(
      committed,
    );
  });

  it('declares every header the server answers with, on the responses that carry it', () => {
    const doc = generateOpenApiDocument('test') as {
      components: { headers: Record<string, unknown> };
      paths: Record<string, Record<string, { responses: Record<string, { headers: object }> }>>;
    };
    // Deprecation and Sunset are declared once an operation is deprecated (see deprecation.spec).
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      [
        'Idempotent-Replayed',
        'Link',
        'Platform-Version',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
        'WWW-Authenticate',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-Request-Id',
      ].sort(),
    );
    const names = (path: string, method: string, status: string) =>
      Object.keys(doc.paths[path]![method]!.responses[status]!.headers);
    expect(names('/v1/students', 'get', '200')).toEqual(
      expect.arrayContaining(['X-Request-Id', 'Platform-Version', 'X-RateLimit-Remaining', 'Link']),
    );
    expect(names('/v1/students', 'get', '429')).toContain('Retry-After');
    expect(names('/v1/students', 'get', '401')).toEqual(
      expect.arrayContaining(['WWW-Authenticate', 'X-Request-Id']),
    );
    expect(names('/v1/students', 'post', '201')).toContain('Idempotent-Replayed');
    expect(names('/v1/students/{id}', 'get', '200')).not.toContain('Link');
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) {
        for (const response of Object.values(operation.responses)) {
          expect(Object.keys(response.headers)).toEqual(
            expect.arrayContaining(['X-Request-Id', 'Platform-Version']),
          );
        }
      }
    }
  });

  it('declares the scope and every error response of each operation', () => {
    const doc = generateOpenApiDocument('test') as {
      paths: Record<
        string,
        Record<string, { security?: unknown; responses: Record<string, unknown> }>
      >;
    };
    const operation = doc.paths['/v1/students']!.get!;
    expect(operation.security).toEqual([
      { bearer: ['students:read'] },
      { oauth2: ['students:read'] },
    ]);
    expect(Object.keys(operation.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '406',
      '429',
      '500',
      '503', // a q search past its time budget
    ]);
  });
});

describe("each operation's rate-limit cost", () => {
  const doc = generateOpenApiDocument('test') as unknown as {
    info: { description: string };
    paths: Record<string, Record<string, { description?: string; 'x-rate-limit-cost'?: number }>>;
  };
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      ...operation,
    })),
  );

  it('is on every operation: 1, or more for the operations that read whole collections or write in bulk', () => {
    expect(operations.length).toBeGreaterThan(30);
    for (const operation of operations) {
      expect(Number.isInteger(operation['x-rate-limit-cost'])).toBe(true);
    }
    const heavy = Object.fromEntries(
      operations
        .filter((operation) => operation['x-rate-limit-cost'] !== 1)
        .map((operation) => [operation.name, operation['x-rate-limit-cost']]),
    );
    expect(heavy).toEqual({
      'POST /v1/exports': 20,
      'POST /v1/exports/batch': 120,
      'POST /v1/imports': 20,
      'GET /v1/exports/{id}/file': 10,
      'POST /v1/exports/{id}/download_links': 10,
      'GET /v1/collections/checksums': 20,
      'POST /v1/students/batch': 20,
      'POST /v1/courses/batch': 20,
      'POST /v1/enrollments/batch': 20,
      'POST /v1/payments/batch': 20,
      'POST /v1/sandboxes': 20,
      'POST /v1/sandboxes/{id}/reset': 20,
      'POST /v1/exams/batch': 20,
      'POST /v1/exam_results/batch': 20,
    });
  });

  it('is said in the description of an operation that costs more, and in the introduction', () => {
    for (const operation of operations) {
      const cost = operation['x-rate-limit-cost']!;
      const note = `**Rate limit:** costs ${cost} units of the organization's budget per request`;
      if (cost > 1) expect(operation.description).toContain(note);
      else expect(operation.description ?? '').not.toContain('**Rate limit:**');
    }
    expect(doc.info.description).toContain('## Rate limits');
    expect(doc.info.description).toContain('`x-rate-limit-cost`');
  });
});

describe('the OpenAPI 3.1 document', () => {
  type Doc = {
    openapi: string;
    servers: { url: string }[];
    webhooks: Record<
      string,
      {
        post: {
          requestBody: { content: Record<string, { schema: { $ref: string } }> };
          parameters: { $ref: string }[];
        };
      }
    >;
    components: {
      schemas: Record<
        string,
        { discriminator?: { mapping: Record<string, string> }; oneOf?: unknown[] }
      >;
      securitySchemes: Record<
        string,
        {
          type: string;
          flows?: Record<string, { tokenUrl: string; scopes: Record<string, string> }>;
        }
      >;
    };
  };
  const doc = generateOpenApiDocument('test') as unknown as Doc;

  it('is 3.1 and describes every event type as a webhook with a named payload schema', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const webhook = doc.webhooks[type]!.post;
      const ref = webhook.requestBody.content['application/json']!.schema.$ref;
      expect(ref).toBe(`#/components/schemas/${eventSchemaName(type)}`);
      expect(doc.components.schemas[eventSchemaName(type)]).toBeDefined();
      expect(webhook.parameters.map((p) => p.$ref.split('/').pop())).toEqual([
        'WebhookId',
        'WebhookTimestamp',
        'WebhookSignature',
        'WebhookPosition',
        'WebhookPreviousPosition',
      ]);
      expect(doc.components.schemas.Event!.discriminator!.mapping[type]).toBe(ref);
    }
  });

  it('offers OAuth 2.0 next to bearer, with every scope and the token endpoint', () => {
    const oauth2 = doc.components.securitySchemes.oauth2!;
    expect(oauth2.type).toBe('oauth2');
    expect(oauth2.flows!.clientCredentials!.tokenUrl).toBe(OAUTH_PATHS.token);
    expect(Object.keys(oauth2.flows!.authorizationCode!.scopes).sort()).toEqual(
      [...ALL_SCOPES].sort(),
    );
    expect(doc.components.securitySchemes.bearer!.type).toBe('http');
  });

  it('names the server it is given, else the local dev server', () => {
    expect(doc.servers).toEqual([DEFAULT_SERVER]);
    const served = generateOpenApiDocument('test', { publicUrl: 'https://api.school.test' });
    expect(served.servers).toEqual([
      { url: 'https://api.school.test', description: 'This server' },
    ]);
  });
});
