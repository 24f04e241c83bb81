/**
 * The delivery store's SQL (`DeliveryStore`): every statement is fixed text, built once from the
 * entities' metadata, so both drivers cache it. The store holds the control flow; this file, the
 * statements it runs.
 */
import type { Sql } from '../database/sql';
import { EventRecord } from '../events/event.entity';
import { ownerSql } from '../auth/member-owned';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { WebhookMessageRecord } from './webhook-message.entity';

/** Quoted column names of an entity's properties, from its metadata. */
function columnsOf<T extends object, K extends keyof T & string>(
  sql: Sql,
  entity: new () => T,
  properties: readonly K[],
): Record<K, string> {
  return Object.fromEntries(properties.map((p) => [p, sql.column(entity, p)])) as Record<K, string>;
}

/** The tables and quoted columns the statements use, and the owner's join (`ownerSql`). */
function deliveryNames(sql: Sql) {
  return {
    messages: sql.table(WebhookMessageRecord),
    endpoints: sql.table(WebhookEndpointRecord),
    events: sql.table(EventRecord),
    m: columnsOf(sql, WebhookMessageRecord, [
      'id',
      'organizationId',
      'endpointId',
      'eventId',
      'eventType',
      'status',
      'attemptCount',
      'retriesUsed',
      'nextAttemptAt',
      'updatedAt',
      'previousPosition',
    ]),
    e: columnsOf(sql, WebhookEndpointRecord, [
      'id',
      'organizationId',
      'url',
      'events',
      'enabled',
      'disabledReason',
      'ownerType',
      'ownerId',
      'ownerGrantId',
      'ownerUserId',
      'secret',
      'previousSecret',
      'previousSecretExpiresAt',
      'failingSince',
      'updatedAt',
      'chainStart',
    ]),
    ev: columnsOf(sql, EventRecord, [
      'id',
      'organizationId',
      'type',
      'data',
      'previousAttributes',
      'createdAt',
      'position',
    ]),
    owner: ownerSql(sql),
  };
}

type DeliveryNames = ReturnType<typeof deliveryNames>;

/**
 * What fans events out and leases messages: the subscribers of an event, the due messages (with
 * their variants leaving out organizations and endpoints found full), the lease, and a load of
 * queued messages.
 */
function claimStatements(
  sql: Sql,
  { messages, endpoints, events, m, e, ev, owner }: DeliveryNames,
) {
  /** A message with its endpoint, its event and the endpoint's owner: what an attempt needs. */
  const claimFrom = (
    source: string,
  ) => `SELECT m.${m.id} AS id, m.${m.organizationId} AS organization_id,
         m.${m.endpointId} AS endpoint_id, m.${m.eventId} AS event_id, m.${m.eventType} AS event_type,
         m.${m.attemptCount} AS attempt_count, m.${m.previousPosition} AS previous_position,
         e.${e.url} AS url, e.${e.secret} AS secret, e.${e.previousSecret} AS previous_secret,
         e.${e.previousSecretExpiresAt} AS previous_secret_expires_at,
         ev.${ev.data} AS event_data, ev.${ev.previousAttributes} AS event_previous_attributes,
         ev.${ev.createdAt} AS event_created_at,
         ev.${ev.position} AS event_position, ${owner.select}
       FROM ${source} m
       JOIN ${endpoints} e ON e.${e.id} = m.${m.endpointId}
       JOIN ${events} ev ON ev.${ev.id} = m.${m.eventId}
       ${owner.join}`;
  const claimSelect = claimFrom(messages);
  // The window of due messages is picked (and locked) first, and only its rows are joined to
  // their endpoint, event and owner. Joined before the LIMIT, PostgreSQL read every due message's
  // event and owner and sorted them all, whenever its statistics said few were due (as after a
  // burst): 15-21 ms per read of 128 from a backlog of ~700, most of a relay step.
  const due = (except: string) =>
    claimFrom(`(SELECT * FROM ${messages} m
       WHERE m.${m.status} = 'pending' AND m.${m.nextAttemptAt} <= :now${except}
         AND EXISTS (SELECT 1 FROM ${endpoints} e WHERE e.${e.id} = m.${m.endpointId} AND e.${e.enabled} = :enabled)
       ORDER BY m.${m.nextAttemptAt} LIMIT :window${sql.lockRows({ of: 'm', skipLocked: true })})`) +
    `\n       ORDER BY m.${m.nextAttemptAt}`;
  const exceptOrganizations = ` AND m.${m.organizationId} NOT IN (:...fullOrganizations)`;
  const exceptEndpoints = ` AND m.${m.endpointId} NOT IN (:...fullEndpoints)`;
  return {
    subscribers: `SELECT e.${e.id} AS id, e.${e.organizationId} AS organization_id, e.${e.events} AS events,
         e.${e.chainStart} AS chain_start, ${owner.select}
       FROM ${endpoints} e ${owner.join}
       WHERE e.${e.enabled} = :enabled AND e.${e.organizationId} IN (:...organizations)`,
    due: {
      all: due(''),
      exceptOrganizations: due(exceptOrganizations),
      exceptEndpoints: due(exceptEndpoints),
      exceptBoth: due(exceptOrganizations + exceptEndpoints),
    },
    // The index on (organization_id, position) is read backwards from the delivery's position.
    previousChange: `SELECT MAX(${ev.position}) AS position FROM ${events}
       WHERE ${ev.organizationId} = :organizationId AND ${ev.position} < :before
         AND ${ev.position} > :after AND ${ev.type} IN (:...types)`,
    lease: `UPDATE ${messages} SET ${m.nextAttemptAt} = :until WHERE ${m.id} IN (:...ids)`,
    load: `${claimSelect}
       WHERE m.${m.id} IN (:...ids) AND m.${m.status} = 'pending' AND e.${e.enabled} = :enabled`,
  };
}

/** What records attempts: the messages' new state, the endpoints' failure streaks, disabling. */
function recordStatements(sql: Sql, { messages, endpoints, m, e }: DeliveryNames) {
  return {
    // Only if still bound to the same owner: a transfer may have re-bound it meanwhile.
    disableOwnerEnded: `UPDATE ${endpoints}
       SET ${e.enabled} = :disabled, ${e.disabledReason} = :reason, ${e.updatedAt} = :now
       WHERE ${e.id} = :id AND ${e.enabled} = :enabled AND COALESCE(${e.ownerType}, '') = :ownerType
         AND COALESCE(${e.ownerId}, '') = :ownerId AND COALESCE(${e.ownerGrantId}, '') = :ownerGrantId
         AND COALESCE(${e.ownerUserId}, '') = :ownerUserId`,
    // Locks the rows (PostgreSQL), so a concurrent delete of the endpoint waits for us.
    attemptState: `SELECT ${m.id} AS id, ${m.attemptCount} AS attempt_count, ${m.retriesUsed} AS retries_used
       FROM ${messages} WHERE ${m.id} IN (:...ids)${sql.lockRows()}`,
    // Messages ending in the same state are updated together (a batch's successes: one statement).
    updateMessages: `UPDATE ${messages} SET ${m.status} = :status, ${m.attemptCount} = :attempts,
         ${m.retriesUsed} = :retriesUsed, ${m.nextAttemptAt} = :next, ${m.updatedAt} = :now
       WHERE ${m.id} IN (:...ids)`,
    succeeded: `UPDATE ${endpoints} SET ${e.failingSince} = NULL
       WHERE ${e.id} IN (:...ids) AND ${e.failingSince} IS NOT NULL`,
    failing: `UPDATE ${endpoints} SET ${e.failingSince} = :now
       WHERE ${e.id} IN (:...ids) AND ${e.failingSince} IS NULL`,
    failingTooLong: `SELECT ${e.id} AS id FROM ${endpoints}
       WHERE ${e.id} IN (:...ids) AND ${e.enabled} = :enabled AND ${e.failingSince} <= :threshold`,
    disable: `UPDATE ${endpoints} SET ${e.enabled} = :disabled, ${e.disabledReason} = :reason, ${e.updatedAt} = :now
       WHERE ${e.id} = :id AND ${e.enabled} = :enabled`,
  };
}

/**
 * The dispatcher's statements, built once with table and column names from the entities'
 * metadata (the credential owner's join, `ownerSql`, included).
 * Where a statement leaves out organizations or endpoints found full, it has a variant with the
 * `NOT IN` list: an empty list would bind NULL, and `NOT IN (NULL)` matches nothing.
 */
export function deliveryStatements(sql: Sql) {
  const names = deliveryNames(sql);
  return { ...claimStatements(sql, names), ...recordStatements(sql, names) };
}

export type DeliveryStatements = ReturnType<typeof deliveryStatements>;
