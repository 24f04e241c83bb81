import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { AuthVersionRecord } from './auth-version.entity';
import type { Principal } from '../common/principal';

/** A successful lookup, kept for the requests after it. */
export interface CachedAuthentication {
  principal: Principal;
  /** When the clock alone refuses the token (ms since the epoch); null: never. */
  endsAtMs: number | null;
  /** A personal access token's `last_used_at` as this instance last saw or wrote it (ms). */
  lastUsedAtMs: number | null;
}

interface Entry extends CachedAuthentication {
  /** `auth_version` as read before the lookup that made this entry. */
  version: string;
}

/**
 * Successful token lookups, kept in memory so that most requests skip the token join.
 *
 * Invalidation, not expiry: `auth_version` is one counter that triggers in the database bump on
 * every write that can change a lookup's answer (migrations/1766400000000-auth-version.ts), from
 * any writer: this instance, another one, the CLI, raw SQL. Each request reads it first; an entry
 * stored under another version is never used, and seeing a new version drops every entry (auth
 * changes are rare). An entry is tagged with the version read *before* its lookup, so a change
 * committed in between is never cached as current. A revoked token is therefore refused on the
 * next request on every instance. Only successful lookups are kept (a token created later is not
 * a change to invalidate), keyed by the token's SHA-256, never the token; an entry past its
 * token's expiry is not used.
 *
 * Bounded: an LRU of `TOKEN_CACHE_SIZE` entries (0 turns the cache off), from `lru-cache`, the
 * maintained LRU most of npm already depends on.
 */
@Injectable()
export class TokenCache {
  private readonly entries: LRUCache<string, Entry> | null;
  private lastVersion: string | null = null;
  private readSqliteVersion?: () => string | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sql: Sql,
  ) {
    this.entries = config.tokenCacheSize > 0 ? new LRUCache({ max: config.tokenCacheSize }) : null;
  }

  get enabled(): boolean {
    return this.entries !== null;
  }

  /**
   * The current `auth_version`, or null when this request must neither use nor fill the cache:
   * the cache is off, or (SQLite) the one connection is inside a transaction, whose uncommitted
   * writes, bump included, this read would see and a rollback would take back.
   */
  async version(): Promise<string | null> {
    if (!this.entries) return null;
    const version =
      this.sql.dialect === 'postgres' ? await this.postgresVersion() : this.sqliteVersion();
    if (version !== null && version !== this.lastVersion) {
      this.entries.clear();
      this.lastVersion = version;
    }
    return version;
  }

  /** The entry for `key` if it was stored under `version` and its token has not expired. */
  get(key: string, version: string, nowMs: number): CachedAuthentication | undefined {
    const entry = this.entries?.get(key);
    if (!entry || entry.version !== version) return undefined;
    if (entry.endsAtMs !== null && entry.endsAtMs <= nowMs) {
      this.entries?.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Keeps a successful lookup made after reading `version`. */
  set(key: string, version: string, value: CachedAuthentication): void {
    // A newer version was seen while this lookup ran: what it read may already be outdated.
    if (version !== this.lastVersion) return;
    this.entries?.set(key, { ...value, version });
  }

  private table(): string {
    return this.sql.table(AuthVersionRecord);
  }

  private async postgresVersion(): Promise<string | null> {
    // A named statement: parsed and planned once per pooled connection.
    const { rows } = (await this.sql.postgresPool().query({
      name: 'platform_auth_version',
      text: `SELECT version FROM ${this.table()} WHERE id = 1`,
    })) as { rows: { version: string }[] };
    return rows[0] ? String(rows[0].version) : null;
  }

  private sqliteVersion(): string | null {
    if (!this.readSqliteVersion) {
      const db = this.sql.sqliteDatabase();
      const statement = db.prepare(`SELECT version FROM ${this.table()} WHERE id = 1`).pluck();
      this.readSqliteVersion = () => {
        if (db.inTransaction) return null;
        const version = statement.get() as number | bigint | undefined;
        return version === undefined ? null : String(version);
      };
    }
    return this.readSqliteVersion();
  }
}
