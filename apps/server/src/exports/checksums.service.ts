import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  CHECKSUM_ALGORITHM,
  type CollectionChecksums,
  EXPORT_COLLECTION_SCOPES,
  EXPORT_COLLECTIONS,
  type ExportCollection,
} from '@platform/contract';
import type { DataSource } from 'typeorm';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { Sql } from '../database/sql';
import { FeedPositions } from '../events/feed-position';
import { COLLECTION_SOURCES } from './collections';
import { SnapshotOpener } from './snapshot';
import { encodeFeedCursor } from '../events/feed-cursor';

/**
 * The checksum of a collection: SHA-256 over `<id>\t<updated_at>\n`, one line per record in id
 * order (byte order), `updated_at` as the API writes it. Public so tests and the SDKs agree.
 */
export function checksumOf(records: Iterable<{ id: string; updated_at: string }>): string {
  const hash = createHash('sha256');
  for (const r of [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    hash.update(`${r.id}\t${r.updated_at}\n`);
  return hash.digest('hex');
}

/** Counts and checksums of collections, read in one snapshot with its feed cursor. */
@Injectable()
export class ChecksumsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
    private readonly snapshots: SnapshotOpener,
    private readonly feed: FeedPositions,
  ) {}

  async retrieve(
    principal: Principal,
    query: { collections?: string },
  ): Promise<CollectionChecksums> {
    const collections = this.collectionsOf(principal, query.collections);
    return this.snapshots.run(async (snapshot) => {
      const cursor = await this.feed.head(snapshot.manager, principal.organizationId);
      const data: CollectionChecksums['data'] = [];
      for (const collection of collections) {
        const metadata = this.dataSource.getMetadata(COLLECTION_SOURCES[collection].entity);
        const updatedAt = metadata.findColumnWithPropertyName('updatedAt');
        if (!updatedAt) throw new Error(`${collection} has no updated_at`);
        const driver = this.dataSource.driver;
        const order = this.sql.dialect === 'postgres' ? 'id COLLATE "C"' : 'id';
        const hash = createHash('sha256');
        let count = 0;
        const text = `SELECT id, ${updatedAt.databaseName} AS updated_at FROM ${this.sql.table(metadata.target)}
           WHERE organization_id = :organizationId ORDER BY ${order}`;
        for await (const batch of snapshot.batches(text, {
          organizationId: principal.organizationId,
        })) {
          for (const row of batch) {
            const at = driver.prepareHydratedValue(row.updated_at, updatedAt) as Date;
            hash.update(`${String(row.id)}\t${at.toISOString()}\n`);
            count += 1;
          }
        }
        data.push({ collection, count, checksum: hash.digest('hex') });
      }
      return {
        object: 'collection_checksums',
        algorithm: CHECKSUM_ALGORITHM,
        cursor: encodeFeedCursor(principal.organizationId, cursor),
        data,
      };
    });
  }

  private collectionsOf(principal: Principal, asked: string | undefined): ExportCollection[] {
    if (asked === undefined) {
      return EXPORT_COLLECTIONS.filter((c) => principal.scopes.has(EXPORT_COLLECTION_SCOPES[c]));
    }
    const names = asked.split(',');
    const unknown = names.filter((n) => !(EXPORT_COLLECTIONS as readonly string[]).includes(n));
    if (unknown.length) {
      throw new ProblemException(
        'validation_error',
        `collections: unknown collection ${unknown.map((n) => `'${n}'`).join(', ')}; one of ${EXPORT_COLLECTIONS.join(', ')}`,
        {
          errors: [
            {
              path: 'query.collections',
              message: `unknown: ${unknown.join(', ')}`,
              code: 'invalid_enum_value',
            },
          ],
        },
      );
    }
    const collections = [...new Set(names)] as ExportCollection[];
    for (const c of collections) {
      const scope = EXPORT_COLLECTION_SCOPES[c];
      if (!principal.scopes.has(scope)) {
        throw new ProblemException(
          'insufficient_scope',
          `Checksums of ${c} require the '${scope}' scope`,
          {
            headers: {
              'WWW-Authenticate': `Bearer realm="platform", error="insufficient_scope", scope="${scope}"`,
            },
          },
        );
      }
    }
    return collections;
  }
}
