import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  ALL_SCOPES,
  contract,
  isScope,
  type ListQuery,
  type PersonalAccessTokenResource,
  type PersonalAccessTokenStatus,
  type Scope,
} from '@platform/contract';
import { type EntityManager, IsNull, LessThan, Or, type Repository } from 'typeorm';
import type { AuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { newId, publicId } from '../common/ids';
import { type ComputedFilter, ListCollection, type ListOptions } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { ProblemException } from '../common/problem.exception';
import { findOwned } from '../common/find-owned';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { CredentialRevocations } from '../common/credential-revocations';
import { Sql } from '../database/sql';
import { Organization } from '../organizations/organization.entity';
import { OrganizationsService } from '../organizations/organizations.service';
import { constantTimeEqual } from '../security/crypto';
import { PersonalAccessToken } from './personal-access-token.entity';
import type { PersonalAccessTokenPrincipal } from '../common/principal';
import { effectiveScopes, roleOf } from './effective-scopes';
import type { ResolvedToken } from './token-resolver';
import {
  displayPrefix,
  generatePersonalAccessToken,
  hashToken,
  isWellFormedPersonalAccessToken,
} from './token-format';

export interface CreateTokenInput {
  organizationId: string;
  name: string;
  scopes: readonly string[];
  expiresAt?: Date | null;
  /** The member the token acts for (whose role caps it); omit for an operator's token. */
  userId?: string | null;
}

export type PersonalAccessTokenResult = ResolvedToken<PersonalAccessTokenPrincipal>;

/** What the per-request lookup reads of a token (selected under these names, read through metadata). */
const LOOKUP_PROPERTIES = [
  'id',
  'organizationId',
  'tokenHash',
  'scopes',
  'userId',
  'expiresAt',
  'lastUsedAt',
  'revokedAt',
] as const;
type LookedUpToken = Pick<PersonalAccessToken, (typeof LOOKUP_PROPERTIES)[number]>;

/**
 * `status=…` as SQL, the states as the token lookup tells them apart: revoked once `revoked_at` is
 * set (expired or not); else expired once `expires_at` is at or before now; else active.
 */
function tokenStatusPredicate(
  values: readonly (string | number)[],
  sql: Parameters<ComputedFilter>[1],
  now: Date,
): string {
  const revoked = sql.column('revokedAt');
  const expires = sql.column('expiresAt');
  let nowParam: string | undefined;
  const at = () => (nowParam ??= sql.bind('expiresAt', now));
  const states: Record<PersonalAccessTokenStatus, () => string> = {
    revoked: () => `${revoked} IS NOT NULL`,
    expired: () => `(${revoked} IS NULL AND ${expires} <= ${at()})`,
    active: () => `(${revoked} IS NULL AND (${expires} IS NULL OR ${expires} > ${at()}))`,
  };
  return values.map((value) => states[value as PersonalAccessTokenStatus]()).join(' OR ');
}

/** `last_used_at` is written at most this often per token, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class TokensService {
  /** How long a `q` search may take (`SEARCH_TIMEOUT`). */
  private readonly listOptions: ListOptions;
  private readonly listed: ListCollection<PersonalAccessToken>;

  constructor(
    @InjectRepository(PersonalAccessToken) private readonly tokens: Repository<PersonalAccessToken>,
    private readonly organizations: OrganizationsService,
    private readonly transactions: TransactionRunner,
    private readonly audit: AuditService,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly revocations: CredentialRevocations,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
    // `status` has no column: it is derived from revoked_at and expires_at against this clock.
    this.listed = ListCollection.of(
      this.sql,
      tokens,
      contract.personalAccessTokens.list.query,
      {},
      { status: (values, sql) => tokenStatusPredicate(values, sql, this.clock.now()) },
    );
    this.lookupSql = this.buildLookupSql();
  }

  /**
   * Returns the token in clear text exactly once; only its hash is kept. The audit entry is
   * written in the same transaction, and holds the token's name, scopes and expiry, never it.
   */
  async create(
    input: CreateTokenInput,
    actor: AuditActor,
  ): Promise<{ token: string; record: PersonalAccessToken }> {
    const organization = await this.organizations.findById(input.organizationId);
    if (!organization)
      throw new ProblemException('not_found', `No organization ${input.organizationId}`);
    const name = input.name.trim();
    if (!name) throw new ProblemException('validation_error', 'name must not be empty');
    const scopes = parseScopes(input.scopes);
    if (input.expiresAt && input.expiresAt.getTime() <= this.clock.nowMs()) {
      throw new ProblemException('validation_error', 'expiry must be in the future');
    }
    const token = generatePersonalAccessToken(Boolean(organization.parentOrganizationId));
    const now = this.clock.now();
    const record = this.tokens.create({
      id: newId('personal_access_token'),
      organizationId: organization.id,
      name,
      tokenPrefix: displayPrefix(token),
      tokenHash: hashToken(token),
      scopes: scopes.join(' '),
      userId: input.userId ?? null,
      expiresAt: input.expiresAt ?? null,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    await this.audit.insertAudited(PersonalAccessToken, record, actor, {
      organizationId: record.organizationId,
      action: 'token.created',
      targetType: 'personal_access_token',
      targetId: record.id,
      changes: {
        name: record.name,
        scopes: scopes,
        expires_at: record.expiresAt && toIso(record.expiresAt),
      },
    });
    return { token, record };
  }

  list(organizationId: string): Promise<PersonalAccessToken[]> {
    return this.tokens.find({
      where: { organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /** Revokes a token; with `organizationId`, only one of that organization (else 404). */
  async revoke(
    id: string,
    actor: AuditActor,
    organizationId?: string,
  ): Promise<PersonalAccessToken> {
    const record = await this.tokens.findOneBy(organizationId ? { id, organizationId } : { id });
    if (!record) throw notFound('personal access token', id);
    if (!record.revokedAt) {
      const revokedAt = this.clock.now();
      await this.transactions.run(async (manager) => {
        await manager.update(PersonalAccessToken, { id }, { revokedAt, updatedAt: revokedAt });
        // Its webhook endpoints stop now, visibly; delivery would refuse them anyway.
        await this.revocations.revoked(manager, { type: 'personal_access_token', id }, revokedAt);
        // Only the first revocation is recorded: revoking twice changes nothing.
        await this.audit.record(
          actor,
          {
            organizationId: record.organizationId,
            action: 'token.revoked',
            targetType: 'personal_access_token',
            targetId: record.id,
            changes: { name: record.name },
          },
          manager,
        );
      });
      record.revokedAt = revokedAt;
      record.updatedAt = revokedAt;
    }
    return record;
  }

  async listPage(organizationId: string, query: ListQuery, url: PageUrl) {
    const { rows, total } = await this.listed.find(organizationId, query, this.listOptions);
    return { data: rows.map(toTokenResource), ...pageEnvelope(url, query, total) };
  }

  retrieve(organizationId: string, id: string): Promise<PersonalAccessToken> {
    const { manager } = this.tokens;
    return findOwned(manager, PersonalAccessToken, organizationId, id, 'personal access token');
  }

  /**
   * The token + organization + owner lookup, built once: it runs on every request the token
   * cache cannot answer. A column it starts to read must also bump `auth_version` when written
   * (migrations/1766400000000-auth-version.ts), or the cache would keep the old answer.
   */
  private readonly lookupSql: string;

  private buildLookupSql(): string {
    const { sql } = this;
    const token = (p: string) => `t.${sql.column(PersonalAccessToken, p)}`;
    const organization = (p: string) => `o.${sql.column(Organization, p)}`;
    // The users table by entity name: it is the OAuth module's, and auth does not import oauth
    // (the dependency runs oauth → auth). The name is checked against the metadata here.
    const user = (p: string) => `u.${sql.column('UserRecord', p)}`;
    const tokenColumns = LOOKUP_PROPERTIES.map((p) => `${token(p)} AS "${p}"`).join(', ');
    return (
      `SELECT ${tokenColumns}, ${organization('rateLimitPerMinute')} AS organization_rate_limit, ` +
      `${organization('parentOrganizationId')} AS organization_parent, ` +
      `${user('role')} AS owner_role, ${user('organizationId')} AS owner_organization_id ` +
      `FROM ${sql.table(PersonalAccessToken)} t ` +
      `JOIN ${sql.table(Organization)} o ON ${organization('id')} = ${token('organizationId')} ` +
      `LEFT JOIN ${sql.table('UserRecord')} u ON ${user('id')} = ${token('userId')} ` +
      `WHERE ${token('tokenHash')} = :tokenHash`
    );
  }

  private readLookedUp(row: Record<string, unknown>): LookedUpToken {
    const record: Record<string, unknown> = {};
    for (const p of LOOKUP_PROPERTIES) record[p] = this.sql.read(PersonalAccessToken, p, row[p]);
    return record as LookedUpToken;
  }

  /** Revokes every live token of an organization with this name (used by `pnpm dev`). */
  async revokeByName(organizationId: string, name: string): Promise<void> {
    await this.tokens.update(
      { organizationId, name, revokedAt: IsNull() },
      { revokedAt: this.clock.now() },
    );
  }

  /**
   * Resolves a bearer token. The lookup is by SHA-256 digest, so response time does not depend
   * on how much of a guessed token matches a real one; the digests are compared again in
   * constant time as a second line of defence.
   */
  async authenticate(token: string, now = this.clock.now()): Promise<PersonalAccessTokenResult> {
    if (!isWellFormedPersonalAccessToken(token)) return { ok: false, reason: 'malformed' };
    const digest = hashToken(token);
    // One statement for token and organization: this runs on every request.
    const [row] = await this.sql.query(this.tokens.manager, this.lookupSql, { tokenHash: digest });
    const record = row && this.readLookedUp(row);
    if (!record || !constantTimeEqual(record.tokenHash, digest)) {
      return { ok: false, reason: 'unknown' };
    }
    if (record.revokedAt) return { ok: false, reason: 'revoked' };
    if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) {
      return { ok: false, reason: 'expired' };
    }
    const organizationRateLimit = row.organization_rate_limit;
    // The owner's role as of now; a token whose owner is no longer a member is dead. A
    // sandbox's tokens belong to members of its parent.
    const role = record.userId ? roleOf(row.owner_role) : null;
    const memberOf = row.organization_parent ?? record.organizationId;
    if (record.userId && (!role || row.owner_organization_id !== memberOf)) {
      return { ok: false, reason: 'revoked' };
    }

    const lastUsedAtMs = await this.touch(record.id, record.lastUsedAt?.getTime() ?? null, now);
    return {
      ok: true,
      endsAtMs: record.expiresAt?.getTime() ?? null,
      lastUsedAtMs,
      principal: {
        kind: 'personal_access_token',
        tokenId: record.id,
        organizationId: record.organizationId,
        rateLimitPerMinute: this.organizations.rateLimitOf({
          rateLimitPerMinute: organizationRateLimit == null ? null : Number(organizationRateLimit),
        }),
        scopes: effectiveScopes(record.scopes.split(' ').filter(isScope), role),
        expiresAt: record.expiresAt,
        userId: record.userId,
        role,
      },
    };
  }

  /**
   * Records that the token was used at `now`, at most once a minute (`lastUsedAtMs`: when it was
   * last recorded, as the caller saw it). The update is conditional, so instances that each saw
   * the same old stamp write a new one once between them. Returns the stamp as it now stands.
   */
  async touch(id: string, lastUsedAtMs: number | null, now: Date): Promise<number> {
    if (lastUsedAtMs !== null && now.getTime() - lastUsedAtMs < LAST_USED_RESOLUTION_MS) {
      return lastUsedAtMs;
    }
    await this.tokens.update(
      {
        id,
        lastUsedAt: Or(IsNull(), LessThan(new Date(now.getTime() - LAST_USED_RESOLUTION_MS))),
      },
      { lastUsedAt: now },
    );
    return now.getTime();
  }
}

export function toTokenResource(record: PersonalAccessToken): PersonalAccessTokenResource {
  return {
    id: publicId('personal_access_token', record.id),
    object: 'personal_access_token',
    name: record.name,
    prefix: record.tokenPrefix,
    scopes: record.scopes.split(' ').filter(isScope),
    created_at: toIso(record.createdAt),
    last_used_at: record.lastUsedAt && toIso(record.lastUsedAt),
    expires_at: record.expiresAt && toIso(record.expiresAt),
    revoked_at: record.revokedAt && toIso(record.revokedAt),
    member_id: publicId('user', record.userId),
  };
}

/** Revokes every live token a member owns (the member is being removed). */
export async function revokeTokensOf(
  revocations: CredentialRevocations,
  manager: EntityManager,
  userId: string,
  at: Date,
): Promise<string[]> {
  const live = await manager.find(PersonalAccessToken, {
    where: { userId, revokedAt: IsNull() },
    select: { id: true },
  });
  for (const { id } of live) {
    await manager.update(PersonalAccessToken, { id }, { revokedAt: at, updatedAt: at });
    await revocations.revoked(manager, { type: 'personal_access_token', id }, at);
  }
  return live.map((t) => t.id);
}

/** `all` expands to every scope; anything unknown is refused with the list of valid ones. */
export function parseScopes(input: readonly string[]): Scope[] {
  const requested = input.flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
  if (requested.length === 0)
    throw new ProblemException('validation_error', 'at least one scope is required');
  if (requested.includes('all')) return [...ALL_SCOPES];
  const unknown = requested.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new ProblemException(
      'validation_error',
      `unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; valid scopes are ${ALL_SCOPES.join(', ')} or all`,
    );
  }
  return [...new Set(requested as Scope[])];
}
