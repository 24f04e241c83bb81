import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Placeholder until the change feed lands: the cursor format and the head of the feed. */
export function encodeFeedCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

export function decodeFeedCursor(cursor: string): string {
  return Buffer.from(cursor, 'base64url').toString('utf8');
}

@Injectable()
export class FeedPositions {
  async head(manager: EntityManager, organizationId: string): Promise<string> {
    const placeholder = manager.connection.options.type === 'postgres' ? '$1' : '?';
    const rows = await manager.query<{ n: number | string }[]>(
      `SELECT COUNT(*) AS n FROM events WHERE organization_id = ${placeholder}`,
      [organizationId],
    );
    return encodeFeedCursor(String(rows[0]?.n ?? 0));
  }
}
