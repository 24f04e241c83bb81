import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Sql } from '../database/sql';
import { EventRecord, FeedHead } from './event.entity';

/**
 * Allocates feed positions and reads an organization's head. Positions come from one counter
 * row per organization (`feed_heads`), incremented in the writer's transaction just before it
 * commits: the row lock is held until COMMIT, so positions become visible strictly in order and a
 * reader that has seen position n never later finds a committed n-1 it skipped.
 */
@Injectable()
export class FeedPositions {
  private statements: ReturnType<typeof feedStatements> | undefined;

  constructor(private readonly sql: Sql) {}

  /**
   * The organization's head as `manager` sees it: the position of its newest change, '0' for
   * none. Read inside a snapshot transaction, it is exactly the last change the snapshot holds.
   */
  async head(manager: EntityManager, organizationId: string): Promise<string> {
    const rows = await this.sql.query<{ position: string | number }>(manager, this.sqlText().head, {
      organizationId,
    });
    return String(rows[0]?.position ?? 0);
  }

  /**
   * Gives the events `ids` (in the order they were recorded) of one organization the next
   * positions. Ids whose rows are gone (written in a savepoint that rolled back) get none, so the
   * feed has no holes.
   */
  async allocate(manager: EntityManager, organizationId: string, ids: readonly string[]) {
    const statements = this.sqlText();
    const present =
      ids.length === 0
        ? []
        : await this.sql.query<{ id: string }>(manager, statements.present, { ids: [...ids] });
    if (present.length === 0) return;
    const have = new Set(present.map((row) => row.id));
    const ordered = ids.filter((id) => have.has(id));
    const first = await this.take(manager, organizationId, ordered.length);
    // One statement for the whole transaction's events (a batch upsert records a thousand).
    await this.sql.query(manager, statements.place, { ids: JSON.stringify(ordered), first });
  }

  /**
   * Moves the organization's counter on by `count` (`count` > 0) and returns the first of the
   * positions it passed: the caller numbers its changes from there, in its transaction.
   */
  async take(manager: EntityManager, organizationId: string, count: number): Promise<number> {
    const [row] = await this.sql.query<{ position: string | number }>(
      manager,
      this.sqlText().bump,
      { organizationId, count },
    );
    return Number(row!.position) - count + 1;
  }

  private sqlText() {
    return (this.statements ??= feedStatements(this.sql));
  }
}

function feedStatements(sql: Sql) {
  const heads = sql.table(FeedHead);
  const headOrg = sql.column(FeedHead, 'organizationId');
  const headPosition = sql.column(FeedHead, 'position');
  const events = sql.table(EventRecord);
  const id = sql.column(EventRecord, 'id');
  const position = sql.column(EventRecord, 'position');
  // `place` numbers the events in the order of the JSON array `ids`, from `first`.
  const place =
    sql.dialect === 'postgres'
      ? `UPDATE ${events} SET ${position} = CAST(:first AS bigint) + j.n - 1
          FROM jsonb_array_elements_text(CAST(:ids AS jsonb)) WITH ORDINALITY AS j (id, n)
          WHERE ${events}.${id} = j.id`
      : `UPDATE ${events} SET ${position} = :first + j.key
          FROM json_each(:ids) AS j WHERE ${events}.${id} = j.value`;
  return {
    place,
    head: `SELECT ${headPosition} AS position FROM ${heads} WHERE ${headOrg} = :organizationId`,
    present: `SELECT ${id} AS id FROM ${events} WHERE ${id} IN (:...ids) AND ${position} IS NULL`,
    // The upsert takes the row lock that orders commits; it is held until this transaction ends.
    bump: `INSERT INTO ${heads} (${headOrg}, ${headPosition}) VALUES (:organizationId, :count)
      ON CONFLICT (${headOrg}) DO UPDATE SET ${headPosition} = ${heads}.${headPosition} + excluded.${headPosition}
      RETURNING ${headPosition} AS position`,
  };
}
