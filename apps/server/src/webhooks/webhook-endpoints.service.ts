import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ListQuery,
  MAX_WEBHOOK_ENDPOINTS,
  WEBHOOK_SECRET_OVERLAP_HOURS,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointCreateSchema,
  type WebhookEndpointUpdateSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import { assertAdmin, assertMayActAs, assertRoleCanRead, memberOf } from '../auth/acting-as';
import { assertCanSubscribe } from '../auth/delegation';
import { isPortalClient } from '../oauth/portal-client';
import type { Principal } from '../common/principal';
import type { AuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { findOwned, lockOwned } from '../common/find-owned';
import { newId, publicId } from '../common/ids';
import { ListCollection, type ListOptions } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { ProblemException } from '../common/problem.exception';
import { invalidField } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
import { FeedPositions } from '../events/feed-position';
import { Organization } from '../organizations/organization.entity';
import { newMessage } from './delivery-store';
import { NO_OWNER, type OwnerColumns, ownerOf, toOwnerResource } from '../auth/member-owned';
import { SecretBox } from './secret-box';
import { newSigningSecret } from './signing';
import { checkWebhookUrl, type UrlPolicy, WebhookUrlError } from './url-guard';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { endpointDisabled } from './webhook-errors';
import { WebhookMessageRecord } from './webhook-message.entity';

/** `disableAfterMs`: how long failing lasts before the endpoint is disabled (`disables_at`). */
export function toEndpointResource(
  record: WebhookEndpointRecord,
  disableAfterMs: number,
): WebhookEndpoint {
  const failingSince = record.failingSince;
  return {
    id: publicId('webhook_endpoint', record.id),
    object: 'webhook_endpoint',
    url: record.url,
    description: record.description,
    events: record.events as WebhookEndpoint['events'],
    enabled: record.enabled,
    disabled_reason: record.enabled ? null : (record.disabledReason ?? 'requested'),
    owner: toOwnerResource(record),
    member_id: publicId('user', record.ownerUserId),
    created_at: toIso(record.createdAt),
    updated_at: toIso(record.updatedAt),
    failing_since: failingSince ? toIso(failingSince) : null,
    disables_at:
      failingSince && record.enabled
        ? toIso(new Date(failingSince.getTime() + disableAfterMs))
        : null,
  };
}

@Injectable()
export class WebhookEndpointsService {
  private readonly urlPolicy: UrlPolicy;

  private readonly listed: ListCollection<WebhookEndpointRecord>;
  /** How long a `q` search may take (`SEARCH_TIMEOUT`). */
  private readonly listOptions: ListOptions;
  private readonly disableAfterMs: number;

  constructor(
    @InjectRepository(WebhookEndpointRecord)
    private readonly endpoints: Repository<WebhookEndpointRecord>,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
    private readonly events: EventsService,
    private readonly positions: FeedPositions,
    private readonly secrets: SecretBox,
    private readonly deliveries: WebhookDeliveriesService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {
    this.listed = ListCollection.of(this.sql, endpoints, contract.webhookEndpoints.list.query);
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
    this.urlPolicy = { allowPrivate: config.webhooks.allowPrivateUrls };
    this.disableAfterMs = config.webhooks.disableAfterMs;
  }

  private resource(record: WebhookEndpointRecord): WebhookEndpoint {
    return toEndpointResource(record, this.disableAfterMs);
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    // `enabled=true|false` arrives as text; the column holds a boolean (1/0 on SQLite).
    const conditions = query.conditions.map((c) =>
      c.field === 'enabled' && c.op === 'in'
        ? { ...c, values: c.values.map((v) => (v === 'true' ? 1 : 0)) }
        : c,
    );
    const { rows, total } = await this.listed.find(
      principal.organizationId,
      { ...query, conditions },
      this.listOptions,
    );
    return { data: rows.map((row) => this.resource(row)), ...pageEnvelope(url, query, total) };
  }

  async retrieve(principal: Principal, id: string): Promise<WebhookEndpoint> {
    return this.resource(await this.find(this.endpoints.manager, principal, id));
  }

  /**
   * The endpoint delivers its events' data, so the caller must be able to read them; it is bound
   * to the caller's credential (`owner`), and delivery stops when that credential ends.
   */
  async create(
    principal: Principal,
    input: z.output<typeof WebhookEndpointCreateSchema>,
    actor: AuditActor,
  ) {
    assertCanSubscribe(principal, input.events);
    return this.createFor(principal.organizationId, ownerOf(principal), input, actor);
  }

  /** `actor` null: the `pnpm dev` inspector endpoint, made by no one in particular. */
  private async createFor(
    organizationId: string,
    owner: OwnerColumns,
    input: z.output<typeof WebhookEndpointCreateSchema>,
    actor: AuditActor | null,
  ) {
    const url = await this.checkUrl(input.url);
    const secret = newSigningSecret();
    return this.transactions.run(async (manager) => {
      // Serialises creations per organization, so the limit cannot be raced (a row lock on
      // PostgreSQL; SQLite's writers are serialised already).
      await this.sql.query(
        manager,
        `SELECT 1 FROM ${this.sql.table(Organization)} WHERE ${this.sql.column(Organization, 'id')} = :organizationId${this.sql.lockRows()}`,
        { organizationId },
      );
      const count = await manager.countBy(WebhookEndpointRecord, { organizationId });
      if (count >= MAX_WEBHOOK_ENDPOINTS) {
        throw new ProblemException(
          'conflict',
          `Your organization already has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints, the most allowed; delete one first`,
        );
      }
      const now = this.clock.now();
      const id = newId('webhook_endpoint', now.getTime());
      const record: WebhookEndpointRecord = {
        id,
        organizationId,
        url,
        description: input.description ?? null,
        events: input.events,
        enabled: input.enabled,
        disabledReason: input.enabled ? null : 'requested',
        secret: this.secrets.seal(secret, id),
        previousSecret: null,
        previousSecretExpiresAt: null,
        failingSince: null,
        // Its chain of deliveries starts with the changes after this one (`previous_position`).
        chainStart: Number(await this.positions.head(manager, organizationId)),
        ...owner,
        createdAt: now,
        updatedAt: now,
      };
      await manager.insert(WebhookEndpointRecord, record);
      if (actor) {
        await this.audit.record(
          actor,
          endpointEntry(record, 'webhook_endpoint.created', {
            url: record.url,
            events: record.events,
            description: record.description,
            enabled: record.enabled,
          }),
          manager,
        );
      }
      return { ...this.resource(record), secret };
    });
  }

  /**
   * Only the endpoint's member or an admin may change it, and must be able to read every event
   * type it will then deliver. A change over the API binds it to the caller's credential and
   * member from now on (nothing changed outlives the credential that changed it); a change in
   * the portal, the member acting in person, keeps its binding.
   */
  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof WebhookEndpointUpdateSchema>,
    actor: AuditActor,
  ): Promise<WebhookEndpoint> {
    const url = input.url === undefined ? undefined : await this.checkUrl(input.url);
    return this.transactions.run(async (manager) => {
      const record = await this.findLocked(manager, principal, id);
      assertMayActAs(principal, record.ownerUserId, `Webhook endpoint ${record.id}`);
      assertCanSubscribe(principal, input.events ?? record.events);
      const now = this.clock.now();
      let changed = false;
      // Each changed field as [before, after], for the audit log.
      const changes: Record<string, unknown> = {};
      if (url !== undefined && url !== record.url) {
        changes.url = [record.url, url];
        record.url = url;
        changed = true;
      }
      if (input.events !== undefined && !sameList(input.events, record.events)) {
        changes.events = [record.events, input.events];
        record.events = input.events;
        // A new subscription starts a new chain: `previous_position` names no change before it.
        record.chainStart = Number(await this.positions.head(manager, record.organizationId));
        changed = true;
      }
      if (input.description !== undefined && input.description !== record.description) {
        changes.description = [record.description, input.description];
        record.description = input.description;
        changed = true;
      }
      if (input.enabled !== undefined && input.enabled !== record.enabled) {
        changes.enabled = [record.enabled, input.enabled];
        record.enabled = input.enabled;
        record.disabledReason = input.enabled ? null : 'requested';
        record.failingSince = null;
        changed = true;
        // Re-enabled: what is still pending is due now rather than at its old retry time.
        if (input.enabled) await this.deliveries.resumePending(manager, record.id, now);
      }
      if (!changed) return this.resource(record);
      Object.assign(record, takeOver(principal) ?? {});
      record.updatedAt = now;
      await manager.save(WebhookEndpointRecord, record);
      await this.audit.record(
        actor,
        endpointEntry(record, 'webhook_endpoint.updated', changes),
        manager,
      );
      return this.resource(record);
    });
  }

  async delete(principal: Principal, id: string, actor: AuditActor) {
    return this.transactions.run(async (manager) => {
      const record = await this.find(manager, principal, id);
      assertMayActAs(principal, record.ownerUserId, `Webhook endpoint ${record.id}`);
      // Messages and attempts go with it (ON DELETE CASCADE).
      await manager.delete(WebhookEndpointRecord, { id, organizationId: principal.organizationId });
      await this.audit.record(
        actor,
        endpointEntry(record, 'webhook_endpoint.deleted', { url: record.url }),
        manager,
      );
      return { id, object: 'webhook_endpoint' as const, deleted: true as const };
    });
  }

  /**
   * Whoever holds the secret can forge deliveries: only the endpoint's member or an admin may
   * rotate it, and must be able to read what it delivers; it is then bound as by a change.
   */
  async rotateSecret(principal: Principal, id: string, actor: AuditActor) {
    return this.rotateSecretFor(
      principal,
      id,
      (record) => {
        assertMayActAs(principal, record.ownerUserId, `Webhook endpoint ${record.id}`);
        assertCanSubscribe(principal, record.events);
        return takeOver(principal);
      },
      actor,
    );
  }

  /**
   * An admin hands the endpoint to another member: it belongs to them from now on, bound to no
   * credential (it lives as long as their membership), and they must be able to read its events.
   */
  async transfer(principal: Principal, id: string, memberId: string, actor: AuditActor) {
    assertAdmin(principal, 'transfer a webhook endpoint');
    return this.transactions.run(async (manager) => {
      const record = await this.findLocked(manager, principal, id);
      // Handing it over is acting on it: the caller must be able to read what it delivers.
      assertCanSubscribe(principal, record.events);
      const member = await memberOf(manager, principal.organizationId, memberId);
      assertRoleCanRead(member.role, record.events, member.email);
      const before = record.ownerUserId;
      Object.assign(record, { ...NO_OWNER, ownerUserId: member.id });
      record.updatedAt = this.clock.now();
      await manager.save(WebhookEndpointRecord, record);
      await this.audit.record(
        actor,
        endpointEntry(record, 'webhook_endpoint.transferred', {
          member_id: [publicId('user', before), publicId('user', member.id)],
        }),
        manager,
      );
      return this.resource(record);
    });
  }

  private async rotateSecretFor(
    principal: Principal,
    id: string,
    takeOver: (record: WebhookEndpointRecord) => OwnerColumns | null,
    actor: AuditActor | null,
  ) {
    const secret = newSigningSecret();
    return this.transactions.run(async (manager) => {
      const record = await this.findLocked(manager, principal, id);
      const owner = takeOver(record);
      if (owner) Object.assign(record, owner);
      const now = this.clock.now();
      record.previousSecret = record.secret;
      record.previousSecretExpiresAt = new Date(
        now.getTime() + WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000,
      );
      record.secret = this.secrets.seal(secret, record.id);
      record.updatedAt = now;
      await manager.save(WebhookEndpointRecord, record);
      if (actor) {
        await this.audit.record(
          actor,
          endpointEntry(record, 'webhook_endpoint.secret_rotated', {
            previous_secret_expires_at:
              record.previousSecretExpiresAt && toIso(record.previousSecretExpiresAt),
          }),
          manager,
        );
      }
      return { ...this.resource(record), secret };
    });
  }

  /** Queues a `ping` to this endpoint alone: an event (so it can be looked up) and its message. */
  async test(principal: Principal, id: string): Promise<WebhookDelivery> {
    return this.transactions.run(async (manager) => {
      const record = await this.find(manager, principal, id);
      assertMayActAs(principal, record.ownerUserId, `Webhook endpoint ${record.id}`);
      if (!record.enabled) throw endpointDisabled(record.id);
      const now = this.clock.now();
      const event = await this.events.record(
        manager,
        record.organizationId,
        'ping',
        { message: `Test event for webhook endpoint ${record.id}` },
        now,
        // Delivered to this endpoint alone (the message below), never fanned out.
        { fanOut: false },
      );
      const message = newMessage(record.organizationId, record.id, event.id, 'ping', now);
      await manager.insert(WebhookMessageRecord, message);
      return this.deliveries.toResource(message, []);
    });
  }

  /**
   * `pnpm dev`: makes sure the organization has an endpoint at `url` for every event, and that
   * `secretFile` holds its secret for the webhook inspector (rotating it if the file was lost).
   */
  async ensureDevEndpoint(
    organizationId: string,
    url: string,
    secretFile: string,
  ): Promise<{ id: string; created: boolean }> {
    const principal = { organizationId } as Principal;
    const existing = await this.endpoints.findOneBy({ organizationId, url });
    if (existing && existsSync(secretFile)) return { id: existing.id, created: false };
    // Made without a credential, so bound to none (and not held to a token's scopes).
    const { id, secret } = existing
      ? await this.rotateSecretFor(principal, existing.id, () => null, null)
      : await this.createFor(
          organizationId,
          NO_OWNER,
          {
            url,
            events: ['*'],
            description: 'Webhook inspector (pnpm dev)',
            enabled: true,
          },
          null,
        );
    mkdirSync(path.dirname(secretFile), { recursive: true });
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    return { id, created: !existing };
  }

  /** The endpoint, row-locked until the transaction ends (PostgreSQL). */
  private async findLocked(manager: EntityManager, principal: Principal, id: string) {
    await lockOwned(this.sql, manager, WebhookEndpointRecord, principal.organizationId, id);
    return this.find(manager, principal, id);
  }

  private find(manager: EntityManager, principal: Principal, id: string) {
    return findOwned(
      manager,
      WebhookEndpointRecord,
      principal.organizationId,
      id,
      'webhook endpoint',
    );
  }

  private async checkUrl(raw: string): Promise<string> {
    try {
      return (await checkWebhookUrl(raw, this.urlPolicy)).href;
    } catch (error) {
      if (error instanceof WebhookUrlError) throw invalidField('url', error.message);
      throw error;
    }
  }
}

/**
 * What a change binds the endpoint to: the caller's credential and member, except in the portal
 * (a member acting in person, not a credential the endpoint should end with): there, nothing.
 */
function takeOver(principal: Principal): OwnerColumns | null {
  if (principal.kind === 'oauth_access_token' && isPortalClient(principal.clientId)) return null;
  return ownerOf(principal);
}

/** An endpoint's audit entry: its URL, events and state, never its signing secret. */
function endpointEntry(
  record: WebhookEndpointRecord,
  action:
    | 'webhook_endpoint.created'
    | 'webhook_endpoint.updated'
    | 'webhook_endpoint.deleted'
    | 'webhook_endpoint.secret_rotated'
    | 'webhook_endpoint.transferred',
  changes: Record<string, unknown>,
) {
  return {
    organizationId: record.organizationId,
    action,
    targetType: 'webhook_endpoint' as const,
    targetId: record.id,
    changes,
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
