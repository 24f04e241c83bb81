import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { UserSession } from '@platform/contract';
import { type EntityManager, In, Like } from 'typeorm';
import type { ApiAuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { publicId } from '../common/ids';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { artifactKey } from '../oauth/adapter';
import { OAuthArtifactRecord, OAuthClientRecord } from '../oauth/entities';
import { isPortalClient, PORTAL_CLIENT_ID } from '../oauth/portal-client';

/** The artifacts an approved app holds for a member (client credentials act for no one). */
const APP_KINDS = new Set(['Grant', 'AccessToken', 'RefreshToken', 'AuthorizationCode']);

/** Crockford's base 32, as in ULIDs: a session's id looks like every other id. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** One session: a browser's sign-in with its portal tokens, or an app with what it holds. */
interface Holding {
  id: string;
  type: 'browser' | 'app';
  clientId: string | null;
  signedInAt: Date | null;
  current: boolean;
  /** The artifacts signing it out deletes. */
  rows: OAuthArtifactRecord[];
}

interface Payload {
  accountId?: string;
  loginTs?: number;
  authorizations?: Record<string, { grantId?: string }>;
}

/**
 * "My sessions" (`/v1/user/sessions`): the member's browsers and approved apps, read from
 * oidc-provider's artifacts, and signing any of them out by deleting what it holds. Nothing is
 * kept of a session beyond its artifacts: when they expire it is gone from the list.
 */
@Injectable()
export class UserSessionsService {
  constructor(
    private readonly tx: TransactionRunner,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal): Promise<UserSession[]> {
    return this.describe(this.tx.manager, await this.holdings(this.tx.manager, principal));
  }

  /** Signs out the session `id` (404 when the member has none by that id). */
  async revoke(principal: Principal, id: string, actor: ApiAuditActor): Promise<void> {
    await this.tx.run(async (manager) => {
      const holding = (await this.holdings(manager, principal)).find((h) => h.id === id);
      if (!holding) throw new ProblemException('not_found', `No session ${id} of yours`);
      await this.end(manager, [holding], actor);
    });
  }

  /** Signs out every browser but the caller's own; the sessions that remain. */
  async signOutOthers(principal: Principal, actor: ApiAuditActor): Promise<UserSession[]> {
    return this.tx.run(async (manager) => {
      const holdings = await this.holdings(manager, principal);
      const ending = holdings.filter((h) => h.type === 'browser' && !h.current);
      await this.end(manager, ending, actor);
      return this.describe(
        manager,
        holdings.filter((h) => !ending.includes(h)),
      );
    });
  }

  private async end(
    manager: EntityManager,
    holdings: readonly Holding[],
    actor: ApiAuditActor,
  ): Promise<void> {
    for (const holding of holdings) {
      for (const kind of new Set(holding.rows.map((row) => row.kind))) {
        const hashes = holding.rows.filter((row) => row.kind === kind).map((row) => row.idHash);
        await manager.delete(OAuthArtifactRecord, { kind, idHash: In(hashes) });
      }
      await this.audit.record(
        actor,
        {
          action: 'user.session_revoked',
          targetType: 'user',
          targetId: actor.userId ?? '',
          changes: {
            session: [holding.id, null],
            type: holding.type,
            ...(holding.clientId && { app: publicId('oauth_client', holding.clientId) }),
          },
        },
        manager,
      );
    }
  }

  /** The member's live sessions: each browser's sign-in, and each app they approved. */
  private async holdings(manager: EntityManager, principal: Principal): Promise<Holding[]> {
    const userId = principal.userId ?? '';
    const currentGrant = principal.kind === 'oauth_access_token' ? principal.grantId : null;
    const now = this.clock.nowMs();
    // The LIKE narrows (a user id is a ULID: no wildcard in it), the parsed account decides.
    const rows = (
      await manager.find(OAuthArtifactRecord, { where: { payload: Like(`%${userId}%`) } })
    ).filter((row) => {
      if (row.expiresAt && row.expiresAt.getTime() <= now) return false;
      return parse(row).accountId === userId;
    });
    const ofGrant = (grantId: string | null | undefined) => (row: OAuthArtifactRecord) =>
      !!grantId &&
      (row.grantId === grantId || (row.kind === 'Grant' && row.idHash === artifactKey(grantId)));

    const browsers = rows
      .filter((row) => row.kind === 'Session')
      .map((session): Holding => {
        const payload = parse(session);
        const grantId = payload.authorizations?.[PORTAL_CLIENT_ID]?.grantId;
        return {
          id: sessionId(`browser:${session.idHash}`),
          type: 'browser',
          clientId: null,
          signedInAt: payload.loginTs ? new Date(payload.loginTs * 1000) : null,
          current: !!grantId && grantId === currentGrant,
          rows: [
            session,
            ...rows.filter((row) => isPortalClient(row.clientId) && ofGrant(grantId)(row)),
          ],
        };
      });
    const appRows = rows.filter(
      (row) => row.clientId && !isPortalClient(row.clientId) && APP_KINDS.has(row.kind),
    );
    const apps = [...new Set(appRows.map((row) => row.clientId!))].map((clientId): Holding => {
      const held = appRows.filter((row) => row.clientId === clientId);
      return {
        id: sessionId(`app:${userId}:${clientId}`),
        type: 'app',
        clientId,
        signedInAt: null,
        current: held.some(ofGrant(currentGrant)),
        rows: held,
      };
    });
    return [...browsers, ...apps];
  }

  private async describe(
    manager: EntityManager,
    holdings: readonly Holding[],
  ): Promise<UserSession[]> {
    const clientIds = holdings.flatMap((h) => (h.clientId ? [h.clientId] : []));
    const clients = clientIds.length
      ? await manager.find(OAuthClientRecord, { where: { id: In(clientIds) } })
      : [];
    const sessions = holdings.map((holding) => {
      const last = holding.rows
        .filter((row) => row.lastUsedAt)
        .sort((a, b) => b.lastUsedAt!.getTime() - a.lastUsedAt!.getTime())[0];
      const client = clients.find((c) => c.id === holding.clientId);
      return {
        id: holding.id as UserSession['id'],
        object: 'session' as const,
        type: holding.type,
        app: holding.clientId
          ? {
              id: publicId('oauth_client', holding.clientId),
              name: client?.name ?? holding.clientId,
            }
          : null,
        device: last?.userAgent ?? null,
        ip: last?.ip ?? null,
        signed_in_at: holding.signedInAt ? toIso(holding.signedInAt) : null,
        last_active_at: last?.lastUsedAt ? toIso(last.lastUsedAt) : null,
        current: holding.current,
      };
    });
    const order = (s: UserSession) => (s.type === 'browser' ? 0 : 1);
    return sessions.sort(
      (a, b) =>
        order(a) - order(b) || (b.last_active_at ?? '').localeCompare(a.last_active_at ?? ''),
    );
  }
}

function parse(row: OAuthArtifactRecord): Payload {
  try {
    return JSON.parse(row.payload) as Payload;
  } catch {
    return {};
  }
}

/**
 * A session's public id: `ses_` and 26 characters of a SHA-256 of what it is (a browser's
 * session row, or the member and the app), so it stays the same across requests with nothing
 * stored, and names no secret (the session row is itself keyed by a hash of its cookie).
 */
function sessionId(key: string): string {
  let bits = BigInt(`0x${createHash('sha256').update(key).digest('hex').slice(0, 33)}`);
  let id = '';
  for (let i = 0; i < 26; i++) {
    id = CROCKFORD[Number(bits & 31n)]! + id;
    bits >>= 5n;
  }
  return `ses_${id}`;
}
