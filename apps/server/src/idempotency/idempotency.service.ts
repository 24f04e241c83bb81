import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IDEMPOTENCY_KEY_HEADER } from '@platform/contract';
import { type EntityManager, LessThan, type FindOptionsWhere, type Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { ProblemException } from '../common/problem.exception';
import { TransactionRunner } from '../common/transactions';
import { Sql } from '../database/sql';
import { IdempotencyKey } from './idempotency-key.entity';

export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long a key is remembered after its first use (Stripe's window). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a committed in-progress claim counts as running. Claims are not committed before
 * their request's work (see `IdempotencyService`); only an earlier release left such rows.
 */
export const IDEMPOTENCY_LEASE_MS = 60 * 1000;
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** Proof of holding a key while the request runs; only its holder can complete or release it. */
export interface IdempotencyClaim {
  organizationId: string;
  key: string;
  token: string;
}

export interface Replay {
  kind: 'replay';
  status: number;
  body: unknown;
}

export type IdempotencyBegin = { kind: 'claimed'; claim: IdempotencyClaim } | Replay;

const HEADER_PATH = `header.${IDEMPOTENCY_KEY_HEADER}`;

/**
 * The key from the request headers: undefined when absent (the request is not idempotent), a
 * 400 naming the header when empty or longer than 255 characters.
 */
export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  // Node joins repeated headers with ", "; an array only comes from a hand-made request.
  const key = Array.isArray(value) ? value.join(', ') : value;
  const problem = (message: string, code: string) =>
    new ProblemException('validation_error', `${IDEMPOTENCY_KEY_HEADER}: ${message}`, {
      errors: [{ path: HEADER_PATH, message, code }],
    });
  if (key.trim() === '') throw problem('must not be empty', 'too_small');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw problem(`must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, 'too_big');
  }
  return key;
}

/**
 * Remembers the outcome of POSTs sent with an `Idempotency-Key`, per organization, for 24 h.
 *
 * The key is claimed, the request's work done and its response stored in ONE transaction
 * (`TransactionRunner.atomic`, see the interceptor): a crash anywhere before the commit leaves
 * no trace of the key or of the work, and after it the key holds the response. So a retry
 * either runs the request for the first time or replays it, never runs it twice. Two requests
 * with one key at once: the second's claim waits for the first's transaction (PostgreSQL's
 * unique index, SQLite's one writer), then replays its response.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  private purgeTimer: NodeJS.Timeout | undefined;
  constructor(
    @InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>,
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.purgeTimer = setInterval(() => void this.purgeQuietly(), IDEMPOTENCY_PURGE_INTERVAL_MS);
    // The purge is housekeeping: it must never keep a process (a test, the CLI) alive.
    this.purgeTimer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
    this.purgeTimer = undefined;
  }

  /**
   * The stored response of an earlier request with this key, read without a transaction (the
   * common retry after a lost response); undefined when there is none to replay yet. A key used
   * with another request within 24 h is a 409.
   */
  async stored(
    organizationId: string,
    key: string,
    fingerprint: string,
  ): Promise<Replay | undefined> {
    // On SQLite a read outside the write queue would run on the one connection inside whichever
    // request transaction is open, and could replay a response that is then rolled back.
    const existing =
      this.sql.dialect === 'sqlite'
        ? await this.transactions.run((manager) =>
            manager.findOneBy(IdempotencyKey, { organizationId, key }),
          )
        : await this.keys.findOneBy({ organizationId, key });
    if (!existing || this.expired(existing, this.clock.now())) return undefined;
    if (existing.fingerprint !== fingerprint) throw differentRequest(key);
    return replayOf(existing);
  }

  /**
   * Inside the request's transaction: claims the key for this request, or says what to answer
   * instead (the stored response of the same request; a 409 for another request's key).
   */
  async begin(
    manager: EntityManager,
    organizationId: string,
    key: string,
    fingerprint: string,
  ): Promise<IdempotencyBegin> {
    const now = this.clock.now();
    const claim: IdempotencyClaim = { organizationId, key, token: randomUUID() };
    if (await this.insertClaim(manager, claim, fingerprint, now)) return { kind: 'claimed', claim };

    // The row is committed (an insert that waited on another transaction's sees it once that
    // transaction has committed), so this read finds it unless it was purged meanwhile.
    const existing = await manager.findOneBy(IdempotencyKey, { organizationId, key });
    if (!existing) throw stillInProgress(key);
    if (this.expired(existing, now)) {
      // Expired: the key is new again, whatever it was used for before.
      const expired = { createdAt: LessThan(this.cutoff(now)) };
      if (await this.takeOver(manager, claim, fingerprint, now, expired))
        return { kind: 'claimed', claim };
      throw stillInProgress(key);
    }
    if (existing.fingerprint !== fingerprint) throw differentRequest(key);
    const replay = replayOf(existing);
    if (replay) return replay;
    // Committed while in progress: only a release that claimed keys in a transaction of their
    // own (before the request's work) did that. While its lease runs the request may still be
    // running there; after that it was interrupted, and whether its work committed is unknown,
    // so it is never run again under this key.
    if (existing.lockedUntil && existing.lockedUntil >= now) throw stillInProgress(key);
    throw interrupted(key);
  }

  /** Inside the request's transaction: stores the response that repeats get back. */
  async complete(
    manager: EntityManager,
    claim: IdempotencyClaim,
    status: number,
    body: unknown,
  ): Promise<void> {
    const result = await manager.update(IdempotencyKey, this.held(claim), {
      state: 'completed',
      responseStatus: status,
      responseBody: body === undefined ? null : JSON.stringify(body),
      completedAt: this.clock.now(),
      lockToken: null,
      lockedUntil: null,
    });
    // Only a claim taken over under us (see `begin`) is gone; the transaction must then undo
    // this request's work, since the other request's counts.
    if (result.affected !== 1) throw stillInProgress(claim.key);
  }

  /**
   * Inside the request's transaction: forgets the claim of a request that answered without a
   * 2xx, so a corrected retry with the same key can run.
   */
  async release(manager: EntityManager, claim: IdempotencyClaim): Promise<void> {
    await manager.delete(IdempotencyKey, this.held(claim));
  }

  /** Deletes keys older than 24 h; returns how many. Expired keys are already ignored by `begin`. */
  async purgeExpired(): Promise<number> {
    const cutoff = this.cutoff(this.clock.now());
    const result = await this.transactions.run((manager) =>
      manager.delete(IdempotencyKey, { createdAt: LessThan(cutoff) }),
    );
    return result.affected ?? 0;
  }

  private async purgeQuietly(): Promise<void> {
    try {
      const purged = await this.purgeExpired();
      if (purged > 0) this.logger.log({ purged }, 'purged expired idempotency keys');
    } catch (err) {
      this.logger.warn({ err }, 'purging expired idempotency keys failed; retrying in an hour');
    }
  }

  private cutoff(now: Date): Date {
    return new Date(now.getTime() - IDEMPOTENCY_KEY_TTL_MS);
  }

  private expired(row: IdempotencyKey, now: Date): boolean {
    return row.createdAt < this.cutoff(now);
  }

  /**
   * Inserts the in-progress row; false when the key already has one. `ON CONFLICT DO NOTHING`
   * (both databases) rather than catching the unique violation, which would abort the whole
   * transaction on PostgreSQL.
   */
  private async insertClaim(
    manager: EntityManager,
    claim: IdempotencyClaim,
    fingerprint: string,
    now: Date,
  ): Promise<boolean> {
    const row: IdempotencyKey = { ...this.freshClaim(claim, fingerprint, now), key: claim.key };
    const properties = Object.keys(row) as (keyof IdempotencyKey)[];
    const table = this.sql.table(IdempotencyKey);
    const columns = properties.map((p) => this.sql.column(IdempotencyKey, p));
    const params = Object.fromEntries(
      properties.map((p) => [p, this.sql.bind(IdempotencyKey, p, row[p])]),
    );
    const inserted = await this.sql.query(
      manager,
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${properties.map((p) => `:${p}`).join(', ')})
       ON CONFLICT (${this.sql.column(IdempotencyKey, 'organizationId')}, ${this.sql.column(IdempotencyKey, 'key')}) DO NOTHING
       RETURNING ${this.sql.column(IdempotencyKey, 'key')}`,
      params,
    );
    return inserted.length === 1;
  }

  /**
   * Rewrites an existing row as a fresh claim if it still matches `condition`, which the
   * database re-checks in the same statement.
   */
  private async takeOver(
    manager: EntityManager,
    claim: IdempotencyClaim,
    fingerprint: string,
    now: Date,
    condition: FindOptionsWhere<IdempotencyKey>,
  ): Promise<boolean> {
    const result = await manager.update(
      IdempotencyKey,
      { organizationId: claim.organizationId, key: claim.key, ...condition },
      this.freshClaim(claim, fingerprint, now),
    );
    return result.affected === 1;
  }

  private freshClaim(claim: IdempotencyClaim, fingerprint: string, now: Date) {
    return {
      organizationId: claim.organizationId,
      fingerprint,
      state: 'in_progress' as const,
      lockToken: claim.token,
      lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
      responseStatus: null,
      responseBody: null,
      createdAt: now,
      completedAt: null,
    };
  }

  private held(claim: IdempotencyClaim): FindOptionsWhere<IdempotencyKey> {
    return { organizationId: claim.organizationId, key: claim.key, lockToken: claim.token };
  }
}

/** The response a completed key replays; undefined while it is in progress. */
function replayOf(row: IdempotencyKey): Replay | undefined {
  if (row.state !== 'completed' || row.responseStatus === null) return undefined;
  return {
    kind: 'replay',
    status: row.responseStatus,
    body: row.responseBody === null ? undefined : (JSON.parse(row.responseBody) as unknown),
  };
}

function differentRequest(key: string): ProblemException {
  const message = `was already used with a different request (another path or body) in the last 24 hours; send a new key for a new request`;
  return new ProblemException('conflict', `Idempotency-Key '${key}' ${message}`, {
    errors: [{ path: HEADER_PATH, message, code: 'idempotency_key_reused' }],
  });
}

function interrupted(key: string): ProblemException {
  const message =
    'the first request with this key was interrupted and whether it took effect is unknown; check for its result before sending it again with a new key';
  return new ProblemException('conflict', `Idempotency-Key '${key}': ${message}`, {
    errors: [{ path: HEADER_PATH, message, code: 'idempotency_key_interrupted' }],
  });
}

function stillInProgress(key: string): ProblemException {
  const message = 'the first request with this key is still being processed; retry shortly';
  return new ProblemException('conflict', `Idempotency-Key '${key}': ${message}`, {
    errors: [{ path: HEADER_PATH, message, code: 'idempotency_key_in_progress' }],
    headers: { 'Retry-After': '1' },
  });
}
