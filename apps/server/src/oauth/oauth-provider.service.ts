import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { OAUTH_PATHS } from '@platform/contract';
import type Provider from 'oidc-provider';
import type { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Clock } from '../common/clock';
import { apiResource, oauthIssuer } from './issuer';
import { clientSecretMatches, OAuthClientsService } from './oauth-clients.service';
import { loadOidcProvider } from './oidc-provider';
import { PORTAL_SIGN_OUT_PATH } from './portal-client';
import { AuditService } from '../audit/audit.service';
import { providerConfiguration } from './provider-configuration';
import {
  auditedRevocationAndSignOut,
  type MetadataRequest,
  portalSignOut,
  publishedMetadata,
  withoutCors,
} from './provider-middleware';
import { toProviderRealm } from './realm';
import { withRequestDevice } from './request-device';
import { UsersService } from './users.service';

export { OAUTH_TTL } from './provider-configuration';

/** Defined by the contract, which publishes them in the OpenAPI document's OAuth 2.0 scheme. */
export { OAUTH_PATHS };

/** oidc-provider serves its metadata here; we publish it at the RFC 8414 path instead. */
const OIDC_DISCOVERY_PATH = '/.well-known/openid-configuration';

/**
 * The authorization server: oidc-provider (OpenID-certified, maintained) configured as a plain
 * OAuth 2.0 server per RFC 9700. Grants: authorization code with PKCE (S256, required for
 * every client), refresh tokens (rotated; reuse revokes the whole grant), client credentials.
 * Tokens are opaque, stored hashed through our TypeORM adapter, and bound to one resource (this
 * API), the client, and its organization.
 */
@Injectable()
export class OAuthProviderService {
  readonly provider: Provider;
  readonly issuer: string;
  /** The resource indicator (RFC 8707) every access token is issued for. */
  readonly resource: string;
  private readonly logger = new Logger('OAuth');

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    private readonly clients: OAuthClientsService,
    users: UsersService,
    clock: Clock,
    audit: AuditService,
  ) {
    this.issuer = oauthIssuer(config);
    this.resource = apiResource(config);
    const oidc = loadOidcProvider();
    const configuration = providerConfiguration({
      config,
      dataSource,
      clients,
      users,
      clock,
      errors: oidc.errors,
      issuer: this.issuer,
      resource: this.resource,
    });

    this.provider = new oidc.Provider(this.issuer, toProviderRealm(configuration));
    this.provider.proxy = config.trustProxy;
    // Koa would print stack traces itself; errors go to our log as kind + message instead.
    (this.provider as unknown as { silent: boolean }).silent = true;
    this.provider.on('server_error', (_ctx: unknown, error: Error) =>
      this.logger.error(`OAuth server error: ${error.name}: ${error.message}`),
    );

    // Hashed client secrets: oidc-provider compares secrets itself, so the comparison is
    // replaced by one against the SHA-256 we store (constant time).
    this.provider.Client.prototype.compareClientSecret = function (
      this: {
        clientSecret?: string;
      },
      presented: string,
    ) {
      return clientSecretMatches(this.clientSecret ?? null, presented);
    };

    this.provider.use(withoutCors);
    this.provider.use(portalSignOut(this.provider, users, audit, this.logger));
    this.provider.use(
      auditedRevocationAndSignOut(this.provider, clients, users, audit, this.logger),
    );
    this.provider.use(publishedMetadata(this.issuer));
  }

  /** Whether the express layer should hand this request to the authorization server. */
  handles(path: string): boolean {
    return (
      path === OAUTH_PATHS.metadata ||
      (path.startsWith('/oauth/') && !path.startsWith(`${OAUTH_PATHS.interaction}/`))
    );
  }

  /** Express middleware: serves the authorization server's endpoints and its metadata. */
  middleware() {
    const callback = this.provider.callback();
    return (req: IncomingMessage & { path?: string }, res: ServerResponse, next: () => void) => {
      const path = req.path ?? new URL(req.url ?? '/', 'http://x').pathname;
      if (!this.handles(path)) return next();
      const pattern = routePatternOf(path);
      if (pattern) (req as IncomingMessage & { routePattern?: string }).routePattern = pattern;
      if (path === OAUTH_PATHS.metadata) {
        (req as MetadataRequest).platformMetadata = true;
        req.url = OIDC_DISCOVERY_PATH;
      }
      void withRequestDevice(req, () => callback(req, res));
    };
  }
}

const KNOWN_PATHS = new Set<string>(Object.values(OAUTH_PATHS));

/** For logs and metrics: the endpoint, with the interaction id of a resumed request elided. */
function routePatternOf(path: string): string | undefined {
  if (KNOWN_PATHS.has(path) || path === PORTAL_SIGN_OUT_PATH) return path;
  if (path.startsWith(`${OAUTH_PATHS.authorization}/`)) return `${OAUTH_PATHS.authorization}/:uid`;
  return undefined;
}
