import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  idPattern,
  isScope,
  type ListQuery,
  type OAuthClientCreateSchema,
  type OAuthClientResource,
  type OAuthClientUpdateSchema,
  ROLE_SCOPES,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import { assertAdmin, assertMayActAs, memberOf } from '../auth/acting-as';
import { assertCovers, earlierExpiry, expandScopes } from '../auth/delegation';
import type { Principal } from '../common/principal';
import type { AuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { newId, publicId } from '../common/ids';
import { ListCollection, type ListOptions } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { ProblemException } from '../common/problem.exception';
import { findOwned, findOwnedForUpdate } from '../common/find-owned';
import { invalidField } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { OrganizationsService } from '../organizations/organizations.service';
import { CredentialRevocations } from '../common/credential-revocations';
import { Sql } from '../database/sql';
import { constantTimeEqual, hashToken } from '../security/crypto';
import { revokeClientArtifacts } from './adapter';
import { OAuthArtifactRecord, OAuthClientRecord } from './entities';

export type OAuthClientInput = z.output<typeof OAuthClientCreateSchema>;

/** `ocs_` + 32 random bytes: high entropy, so one SHA-256 (not a slow hash) protects it at rest. */
export function generateClientSecret(): string {
  return `ocs_${randomBytes(32).toString('base64url')}`;
}

export const hashClientSecret = hashToken;

/** Constant-time check of a presented secret against the stored hash. */
export function clientSecretMatches(storedHash: string | null, presented: string): boolean {
  if (!storedHash) return false;
  return constantTimeEqual(storedHash, hashClientSecret(presented));
}

const CLIENT_ID = idPattern('oauth_client');

/** application/x-www-form-urlencoded decoding of one component; throws on a bad escape. */
function decodeFormComponent(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, '%20'));
}

export function toClientResource(record: OAuthClientRecord): OAuthClientResource {
  return {
    id: publicId('oauth_client', record.id),
    object: 'oauth_client',
    name: record.name,
    type: record.type,
    redirect_uris: record.redirectUris,
    // Scopes no longer offered (`events:write`) are ignored wherever stored scopes are read.
    scopes: record.scopes.split(' ').filter(isScope),
    grant_types: record.grantTypes.split(' ') as OAuthClientResource['grant_types'],
    expires_at: record.expiresAt && toIso(record.expiresAt),
    member_id: publicId('user', record.userId),
    created_at: toIso(record.createdAt),
    updated_at: toIso(record.updatedAt),
  };
}

/** What the audit log keeps of a client: how it is set up, never its secret. */
function auditEntry(
  record: OAuthClientRecord,
  action:
    | 'oauth_client.created'
    | 'oauth_client.updated'
    | 'oauth_client.secret_rotated'
    | 'oauth_client.deleted'
    | 'oauth_client.transferred',
) {
  return {
    organizationId: record.organizationId,
    action,
    targetType: 'oauth_client' as const,
    targetId: record.id,
    changes:
      action === 'oauth_client.created'
        ? {
            name: record.name,
            type: record.type,
            redirect_uris: record.redirectUris,
            scopes: record.scopes.split(' '),
            grant_types: record.grantTypes.split(' '),
          }
        : { name: record.name },
  };
}

/** The loopback hosts oidc-provider accepts for native clients' http redirects. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * RFC 9700 §2.1 and RFC 8252: exact URIs, no fragment, https, http only on a loopback address,
 * and private-use (reverse-domain) schemes only for public (native) clients.
 */
export function redirectUriProblem(uri: string, type: 'confidential' | 'public'): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (url.hash || uri.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain credentials';
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol === 'https:') {
    return type === 'public' && loopback
      ? 'for a public (native) client, a loopback redirect uses http (RFC 8252 §7.3); https needs a host of your own'
      : null;
  }
  if (url.protocol === 'http:') {
    return loopback
      ? null
      : 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
  }
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) {
    return type === 'public'
      ? null
      : 'may use a private-use scheme only for a public (native) client';
  }
  return 'must use https, loopback http, or a reverse-domain private-use scheme';
}

/** 400 naming the first redirect URI the client's type and grants do not allow. */
function assertRedirectUris(
  uris: readonly string[],
  type: 'confidential' | 'public',
  grants: readonly string[],
): void {
  if (grants.includes('authorization_code') && uris.length === 0)
    throw invalidField('redirect_uris', 'authorization_code needs at least one redirect URI');
  uris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri, type);
    if (problem) throw invalidField(`redirect_uris.${index}`, problem);
  });
}

@Injectable()
export class OAuthClientsService {
  /** The by-id lookup (see findById) and the properties it reads, built once from the metadata. */
  private readonly byIdSql: string;
  private readonly properties: string[];

  /** How long a `q` search may take (`SEARCH_TIMEOUT`). */
  private readonly listOptions: ListOptions;
  private readonly listed: ListCollection<OAuthClientRecord>;

  constructor(
    @InjectRepository(OAuthClientRecord) private readonly clients: Repository<OAuthClientRecord>,
    @InjectRepository(OAuthArtifactRecord)
    private readonly artifacts: Repository<OAuthArtifactRecord>,
    private readonly organizations: OrganizationsService,
    private readonly transactions: TransactionRunner,
    private readonly audit: AuditService,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly revocations: CredentialRevocations,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
    this.listed = ListCollection.of(this.sql, clients, contract.oauthClients.list.query);
    // Every column, selected under its property name and read back through the metadata.
    this.properties = clients.metadata.columns.map((column) => column.propertyName);
    this.byIdSql =
      `SELECT ${this.properties.map((p) => `${sql.column(OAuthClientRecord, p)} AS "${p}"`).join(', ')} ` +
      `FROM ${sql.table(OAuthClientRecord)} WHERE ${sql.column(OAuthClientRecord, 'id')} = :id`;
  }

  /**
   * One prepared statement hydrated as TypeORM would: it runs for every client-authenticated
   * OAuth call, including each refused one the front door charges (findOneBy's query building
   * cost more than the lookup itself).
   */
  async findById(id: string): Promise<OAuthClientRecord | null> {
    const [row] = await this.sql.query(this.clients.manager, this.byIdSql, { id });
    if (!row) return null;
    const record: Record<string, unknown> = {};
    for (const p of this.properties) record[p] = this.sql.read(OAuthClientRecord, p, row[p]);
    return record as unknown as OAuthClientRecord;
  }

  /** The client as the authorization server sees it: an expired client does not exist there. */
  async findLiveById(id: string, now = this.clock.now()): Promise<OAuthClientRecord | null> {
    const record = await this.findById(id);
    return record && (!record.expiresAt || record.expiresAt.getTime() > now.getTime())
      ? record
      : null;
  }

  /**
   * The confidential client that an `Authorization: Basic` header proves to be (RFC 6749
   * §2.3.1, decoded as oidc-provider decodes it), or null. The front door charges a client's own
   * rate-limit budget only after this check, so nobody can spend another client's budget by
   * naming its (public) client id.
   */
  async authenticateBasic(header: string | undefined): Promise<string | null> {
    const encoded = header && /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header)?.[1];
    if (!encoded) return null;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    let id: string;
    let secret: string;
    try {
      id = decodeFormComponent(decoded.slice(0, colon));
      secret = decodeFormComponent(decoded.slice(colon + 1));
    } catch {
      return null;
    }
    // Only an id of ours is looked up: garbage costs no query.
    if (colon < 1 || !secret || !CLIENT_ID.test(id)) return null;
    const client = await this.findLiveById(id);
    return client?.type === 'confidential' && clientSecretMatches(client.secretHash, secret)
      ? client.id
      : null;
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const { rows, total } = await this.listed.find(
      principal.organizationId,
      query,
      this.listOptions,
    );
    return { data: rows.map(toClientResource), ...pageEnvelope(url, query, total) };
  }

  async retrieve(principal: Principal, id: string): Promise<OAuthClientResource> {
    return toClientResource(await this.owned(principal.organizationId, id));
  }

  async create(
    organizationId: string,
    input: OAuthClientInput,
    actor: AuditActor,
  ): Promise<OAuthClientResource & { client_secret: string | null }> {
    const organization = await this.organizations.findById(organizationId);
    if (!organization) throw new ProblemException('not_found', `No organization ${organizationId}`);
    const grants = input.grant_types;
    if (input.type === 'public' && grants.includes('client_credentials'))
      throw invalidField(
        'grant_types',
        'client_credentials needs a confidential client (a public client has no secret)',
      );
    if (grants.includes('refresh_token') && !grants.includes('authorization_code'))
      throw invalidField('grant_types', 'refresh_token comes only with authorization_code');
    assertRedirectUris(input.redirect_uris, input.type, grants);
    const scopes = expandScopes(input.scopes);
    const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= this.clock.nowMs())
      throw invalidField('expires_at', 'must be in the future');
    const secret = input.type === 'confidential' ? generateClientSecret() : null;
    const now = this.clock.now();
    const record = this.clients.create({
      id: newId('oauth_client', now.getTime()),
      organizationId: organization.id,
      userId: actor.kind === 'operator' ? null : actor.userId,
      name: input.name,
      type: input.type,
      secretHash: secret && hashClientSecret(secret),
      redirectUris: input.redirect_uris,
      scopes: scopes.join(' '),
      grantTypes: grants.join(' '),
      expiresAt,
      createdAt: now,
      updatedAt: now,
    });
    const entry = auditEntry(record, 'oauth_client.created');
    await this.audit.insertAudited(OAuthClientRecord, record, actor, entry);
    return { ...toClientResource(record), client_secret: secret };
  }

  /**
   * A new name or redirect URIs; type, scopes and grants stay as registered. Codes not yet
   * exchanged go with the old URIs (a user mid-sign-in starts again); grants and tokens stay.
   * Like a rotation, a change binds the client to the caller's expiry: nothing changed over
   * the API outlives the credential that changed it (the portal's session has none).
   */
  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof OAuthClientUpdateSchema>,
    actor: AuditActor,
  ): Promise<OAuthClientResource> {
    return this.transactions.run(async (manager) => {
      const record = await findOwnedForUpdate(
        this.sql,
        manager,
        OAuthClientRecord,
        principal.organizationId,
        id,
        'OAuth client',
      );
      assertCovers(principal, record.scopes.split(' '), 'change', 'an OAuth client');
      assertMayActAs(principal, record.userId, `OAuth client ${record.id}`);
      // Each changed field as [before, after], for the audit log.
      const changes: Record<string, unknown> = {};
      if (input.name !== undefined && input.name !== record.name) {
        changes.name = [record.name, input.name];
        record.name = input.name;
      }
      const uris = input.redirect_uris;
      if (uris !== undefined && uris.join(' ') !== record.redirectUris.join(' ')) {
        assertRedirectUris(uris, record.type, record.grantTypes.split(' '));
        changes.redirect_uris = [record.redirectUris, uris];
        record.redirectUris = uris;
        await manager.delete(OAuthArtifactRecord, {
          clientId: record.id,
          kind: 'AuthorizationCode',
        });
      }
      if (Object.keys(changes).length === 0) return toClientResource(record);
      record.expiresAt = earlierExpiry(record.expiresAt, principal.expiresAt);
      record.updatedAt = this.clock.now();
      await manager.update(
        OAuthClientRecord,
        { id: record.id, organizationId: record.organizationId },
        {
          name: record.name,
          redirectUris: record.redirectUris,
          expiresAt: record.expiresAt,
          updatedAt: record.updatedAt,
        },
      );
      await this.audit.record(
        actor,
        { ...auditEntry(record, 'oauth_client.updated'), changes },
        manager,
      );
      return toClientResource(record);
    });
  }

  /**
   * A new secret; the old one stops working at once, and so do the client credentials tokens
   * obtained with it (a rotation usually answers a leak). Users' grants stay: refreshing them
   * needs the new secret anyway. Whoever holds the secret controls the client, so the caller
   * must hold the client's scopes, and the client expires no later than the caller.
   */
  async rotateSecret(principal: Principal, id: string, actor: AuditActor) {
    const record = await this.owned(principal.organizationId, id);
    assertCovers(principal, record.scopes.split(' '), 'rotate the secret of', 'an OAuth client');
    assertMayActAs(principal, record.userId, `OAuth client ${record.id}`);
    if (record.type !== 'confidential')
      throw new ProblemException('conflict', 'A public client has no secret to rotate');
    const secret = generateClientSecret();
    record.secretHash = hashClientSecret(secret);
    record.expiresAt = earlierExpiry(record.expiresAt, principal.expiresAt);
    record.updatedAt = this.clock.now();
    await this.transactions.run(async (manager) => {
      await manager.update(
        OAuthClientRecord,
        { id: record.id, organizationId: record.organizationId },
        { secretHash: record.secretHash, expiresAt: record.expiresAt, updatedAt: record.updatedAt },
      );
      await manager.delete(OAuthArtifactRecord, { clientId: record.id, kind: 'ClientCredentials' });
      await this.audit.record(actor, auditEntry(record, 'oauth_client.secret_rotated'), manager);
    });
    return { ...toClientResource(record), client_secret: secret };
  }

  /**
   * An admin hands the client to another member: its client credentials tokens act for them
   * from now on (those issued act for nobody and go), it ends with their membership, and its
   * scopes are cut to their role's. Users' grants stay.
   */
  async transfer(principal: Principal, id: string, memberId: string, actor: AuditActor) {
    assertAdmin(principal, 'transfer an OAuth client');
    return this.transactions.run(async (manager) => {
      const record = await findOwnedForUpdate(
        this.sql,
        manager,
        OAuthClientRecord,
        principal.organizationId,
        id,
        'OAuth client',
      );
      assertCovers(principal, record.scopes.split(' '), 'transfer', 'an OAuth client');
      const member = await memberOf(manager, principal.organizationId, memberId);
      const before = { member_id: record.userId, scopes: record.scopes };
      const allowed = new Set<string>(ROLE_SCOPES[member.role]);
      record.userId = member.id;
      record.scopes = record.scopes
        .split(' ')
        .filter((scope) => allowed.has(scope))
        .join(' ');
      record.updatedAt = this.clock.now();
      await manager.update(
        OAuthClientRecord,
        { id: record.id },
        { userId: record.userId, scopes: record.scopes, updatedAt: record.updatedAt },
      );
      await manager.delete(OAuthArtifactRecord, { clientId: record.id, kind: 'ClientCredentials' });
      await this.audit.record(
        actor,
        {
          ...auditEntry(record, 'oauth_client.transferred'),
          changes: {
            member_id: [before.member_id, member.id],
            ...(before.scopes !== record.scopes && {
              scopes: [before.scopes.split(' '), record.scopes.split(' ')],
            }),
          },
        },
        manager,
      );
      return toClientResource(record);
    });
  }

  async delete(principal: Principal, id: string, actor: AuditActor) {
    const record = await this.owned(principal.organizationId, id);
    assertCovers(principal, record.scopes.split(' '), 'delete', 'an OAuth client');
    assertMayActAs(principal, record.userId, `OAuth client ${record.id}`);
    await this.transactions.run(async (manager) => {
      await manager.delete(OAuthClientRecord, {
        id: record.id,
        organizationId: record.organizationId,
      });
      await revokeClientArtifacts(manager.getRepository(OAuthArtifactRecord), [record.id]);
      await this.revocations.revoked(
        manager,
        { type: 'oauth_client', id: record.id },
        this.clock.now(),
      );
      await this.audit.record(actor, auditEntry(record, 'oauth_client.deleted'), manager);
    });
    return { id: record.id, object: 'oauth_client' as const, deleted: true as const };
  }

  private owned(organizationId: string, id: string): Promise<OAuthClientRecord> {
    return findOwned(this.clients.manager, OAuthClientRecord, organizationId, id, 'OAuth client');
  }
}
