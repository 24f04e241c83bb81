import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EVENT_TYPES, eventSchemaName } from './events';
import { OAUTH_PATHS } from './oauth';
import { DEFAULT_SERVER, generateOpenApiDocument } from './openapi';
import { ALL_SCOPES } from './scopes';

describe('openapi.json', () => {
  it('matches the contract (regenerate with: pnpm --filter @platform/contract build && pnpm --filter @platform/contract openapi)', () => {
    const { version } = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'),
    ) as { version: string };
    const committed: unknown = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'openapi.json'), 'utf8'),
    );
    expect(JSON.parse(JSON.stringify(generateOpenApiDocument(version)))).toEqual(committed);
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
