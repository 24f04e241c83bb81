import { type EntityManager, In } from 'typeorm';
import type { Sql } from '../database/sql';
import { OAuthArtifactRecord } from './entities';

/** What is read of an oidc-provider artifact's payload (grants, sessions, tokens, codes). */
export interface ArtifactPayload {
  accountId?: string;
  clientId?: string;
  /** A token's grant. */
  grantId?: string;
  exp?: number;
  /** A session's grants, by client. */
  authorizations?: Record<string, { grantId?: string }>;
}

export interface MemberArtifact {
  kind: string;
  idHash: string;
  payload: ArtifactPayload;
}

/**
 * Every oidc-provider artifact whose account is the member: what their removal deletes, a
 * password change partly ends, and `GET /v1/members/{id}/credentials` counts. The LIKE narrows,
 * the parsed payload decides (an id could appear in another field).
 */
export async function memberArtifacts(
  sql: Sql,
  manager: EntityManager,
  userId: string,
): Promise<MemberArtifact[]> {
  const column = (property: string) => sql.column(OAuthArtifactRecord, property);
  const rows = await sql.query<{ kind: string; idHash: string; payload: string }>(
    manager,
    `SELECT ${column('kind')} AS kind, ${column('idHash')} AS "idHash", ${column('payload')} AS payload
     FROM ${sql.table(OAuthArtifactRecord)} WHERE ${column('payload')} LIKE :pattern`,
    { pattern: `%${userId}%` },
  );
  return rows.flatMap((row) => {
    try {
      const payload = JSON.parse(row.payload) as ArtifactPayload;
      return payload.accountId === userId ? [{ ...row, payload }] : [];
    } catch {
      return [];
    }
  });
}

/** Deletes the given artifacts, one statement per kind. */
export async function deleteArtifacts(
  manager: EntityManager,
  artifacts: readonly MemberArtifact[],
): Promise<void> {
  for (const kind of new Set(artifacts.map((a) => a.kind))) {
    const hashes = artifacts.filter((a) => a.kind === kind).map((a) => a.idHash);
    await manager.delete(OAuthArtifactRecord, { kind, idHash: In(hashes) });
  }
}
