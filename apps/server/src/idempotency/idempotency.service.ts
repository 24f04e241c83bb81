import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IDEMPOTENCY_KEY_HEADER } from '@platform/contract';
import { LessThan, type FindOptionsWhere, type Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { ProblemException } from '../common/problem.exception';
import { isUniqueViolation } from '../common/resource-errors';
import { TransactionRunner } from '../common/transactions';
import { Sql } from '../database/sql';
import { IdempotencyKey } from './idempotency-key.entity';

export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long a key is remembered after its first use (Stripe's window). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long an in-progress claim blocks other requests with the same key. Long enough for any
 * normal write; a claim older than this belongs to a request whose process most likely died,
 * and is taken over so the key does not stay unusable until it expires.
 */
export const IDEMPOTENCY_LEASE_MS = 60 * 1000;
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 60 * 60 * 1000;
/** Rounds of insert-or-inspect before giving up under contention (each round is a few ms). */
const MAX_CLAIM_ROUNDS = 3;

/** Proof of holding a key while the request runs; only its holder can complete or release it. */
export interface IdempotencyClaim {
  organizationId: string;
  key: string;
  token: string;
}

export type IdempotencyBegin =
  { kind: 'claimed'; claim: IdempotencyClaim } | { kind: 'replay'; status: number; body: unknown };

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
 * Every step is a single conditional statement on the (organization_id, key) row, so it stays
 * correct with several server instances on one database, on SQLite and on PostgreSQL alike.
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
   * Claims the key for this request, or says what to answer instead: the stored response of
   * the same request (replay), or a 409 when the key belongs to another request or the first
   * request with it is still running.
   */
  async begin(organizationId: string, key: string, fingerprint: string): Promise<IdempotencyBegin> {
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      const now = this.clock.now();
      const claim: IdempotencyClaim = { organizationId, key, token: randomUUID() };
      if (await this.insertClaim(claim, fingerprint, now)) return { kind: 'claimed', claim };

      const existing = await this.keys.findOneBy({ organizationId, key });
      // Released (the first request failed) or purged between our insert and this read.
      if (!existing) continue;

      const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_KEY_TTL_MS);
      if (existing.createdAt < expiredBefore) {
        // Expired: the key is new again, whatever it was used for before.
        const expired = { createdAt: LessThan(expiredBefore) };
        if (await this.takeOver(claim, fingerprint, now, expired))
          return { kind: 'claimed', claim };
        continue;
      }
      if (existing.fingerprint !== fingerprint) throw differentRequest(key);
      if (existing.state === 'completed' && existing.responseStatus !== null) {
        return {
          kind: 'replay',
          status: existing.responseStatus,
          body:
            existing.responseBody === null
              ? undefined
              : (JSON.parse(existing.responseBody) as unknown),
        };
      }
      if (existing.lockedUntil && existing.lockedUntil >= now) throw stillInProgress(key);
      // The first request's lease ran out without it finishing: its process most likely died
      // (had it failed, it would have released the key). Run the request again under a new lease.
      const abandoned = {
        state: 'in_progress' as const,
        fingerprint,
        lockedUntil: LessThan(now),
      };
      if (await this.takeOver(claim, fingerprint, now, abandoned))
        return { kind: 'claimed', claim };
    }
    // Another request won every round (keys released and re-claimed in a tight loop).
    throw stillInProgress(key);
  }

  /**
   * Stores the response so that repeats get it back. False when the claim was lost (the lease
   * ran out and another request took the key over), in which case that request's result counts.
   */
  async complete(claim: IdempotencyClaim, status: number, body: unknown): Promise<boolean> {
    const result = await this.write((keys) =>
      keys.update(this.held(claim), {
        state: 'completed',
        responseStatus: status,
        responseBody: body === undefined ? null : JSON.stringify(body),
        completedAt: this.clock.now(),
        lockToken: null,
        lockedUntil: null,
      }),
    );
    return result.affected === 1;
  }

  /** Forgets the claim of a request that failed, so a corrected retry with the same key can run. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.write((keys) => keys.delete(this.held(claim)));
  }

  /** Deletes keys older than 24 h; returns how many. Expired keys are already ignored by `begin`. */
  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - IDEMPOTENCY_KEY_TTL_MS);
    // An in-progress row this old has an expired lease too, so nothing live is deleted.
    const result = await this.write((keys) => keys.delete({ createdAt: LessThan(cutoff) }));
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

  /** Inserts an in-progress row; false when the key already has one (the primary key decides). */
  private async insertClaim(
    claim: IdempotencyClaim,
    fingerprint: string,
    now: Date,
  ): Promise<boolean> {
    return this.write(async (keys) => {
      try {
        await keys.insert({ ...this.freshClaim(claim, fingerprint, now), key: claim.key });
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    });
  }

  /**
   * Rewrites an existing row as a fresh claim if it still matches `condition`. The condition is
   * re-checked by the database in the same statement, so of two requests taking over one row,
   * only the first matches (the second sees the new created_at / locked_until).
   */
  private async takeOver(
    claim: IdempotencyClaim,
    fingerprint: string,
    now: Date,
    condition: FindOptionsWhere<IdempotencyKey>,
  ): Promise<boolean> {
    const result = await this.write((keys) =>
      keys.update(
        { organizationId: claim.organizationId, key: claim.key, ...condition },
        this.freshClaim(claim, fingerprint, now),
      ),
    );
    return result.affected === 1;
  }

  /**
   * Runs one write. SQLite has a single connection in this process: a statement issued while
   * another request's transaction is open runs inside that transaction and would be undone by
   * its rollback (a lost claim lets a retry do the work twice). So on SQLite every write takes
   * its turn in the transaction queue. PostgreSQL gives each statement its own pooled
   * connection, and a single statement is atomic on its own.
   */
  private write<T>(work: (keys: Repository<IdempotencyKey>) => Promise<T>): Promise<T> {
    if (this.sql.dialect === 'postgres') return work(this.keys);
    return this.transactions.run((manager) => work(manager.getRepository(IdempotencyKey)));
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

function differentRequest(key: string): ProblemException {
  const message = `was already used with a different request (another path or body) in the last 24 hours; send a new key for a new request`;
  return new ProblemException('conflict', `Idempotency-Key '${key}' ${message}`, {
    errors: [{ path: HEADER_PATH, message, code: 'idempotency_key_reused' }],
  });
}

function stillInProgress(key: string): ProblemException {
  const message = 'the first request with this key is still being processed; retry shortly';
  return new ProblemException('conflict', `Idempotency-Key '${key}': ${message}`, {
    errors: [{ path: HEADER_PATH, message, code: 'idempotency_key_in_progress' }],
    headers: { 'Retry-After': '1' },
  });
}
