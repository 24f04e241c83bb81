import type { Adapter, AdapterPayload } from 'oidc-provider';
import { In, IsNull, LessThan, type DataSource, type Repository } from 'typeorm';
import type { Clock } from '../common/clock';
import { hashToken } from '../security/crypto';
import { OAuthArtifactRecord, type OAuthClientRecord } from './entities';
import { parseForProvider, toProviderRealm } from './realm';
import { requestDevice } from './request-device';

/** Expired artifacts are swept at most this often, by whichever instance writes next. */
const SWEEP_INTERVAL_MS = 60_000;

/** Artifacts are keyed by SHA-256 of their id (as personal tokens are): tokens and codes are bearer secrets. */
export const artifactKey = hashToken;

/**
 * oidc-provider's persistence adapter on our TypeORM DataSource, so codes, tokens, grants and
 * sessions live in the same SQLite or PostgreSQL database as everything else and every instance
 * of a scaled-out deployment sees them. One table for every model; `Client` is read from
 * `oauth_clients`, the clients registered through the API or the CLI.
 */
export function typeormAdapter(
  dataSource: DataSource,
  describeClient: (record: OAuthClientRecord) => AdapterPayload | undefined,
  findClient: (id: string) => Promise<OAuthClientRecord | null>,
  /** A client built into the server (the portal's), which is not a row of `oauth_clients`. */
  builtInClient: (id: string) => AdapterPayload | undefined,
  /** oidc-provider's `invalid_grant`, thrown when a code or refresh token is used twice at once. */
  alreadyUsed: () => Error,
  /** The injected clock: artifact expiry and sweeps follow it, as the tokens' own do. */
  clock: Clock,
) {
  const artifacts = dataSource.getRepository(OAuthArtifactRecord);
  let lastSweep = 0;

  const sweep = async (): Promise<void> => {
    const now = clock.nowMs();
    if (now - lastSweep < SWEEP_INTERVAL_MS) return;
    lastSweep = now;
    await artifacts.delete({ expiresAt: LessThan(new Date(now)) });
  };

  const context: AdapterContext = {
    artifacts,
    sweep,
    describeClient,
    findClient,
    builtInClient,
    alreadyUsed,
    clock,
  };
  // A factory rather than the class: oidc-provider's constructor check does not recognise a
  // class from Jest's realm (see realm.ts), and a factory means the same thing to it.
  return (kind: string): Adapter => new TypeOrmAdapter(kind, context);
}

/** What the adapters of every model share: typeormAdapter's arguments, the table and its sweep. */
interface AdapterContext {
  artifacts: Repository<OAuthArtifactRecord>;
  /** Deletes expired artifacts, at most once a SWEEP_INTERVAL_MS. */
  sweep: () => Promise<void>;
  describeClient: (record: OAuthClientRecord) => AdapterPayload | undefined;
  findClient: (id: string) => Promise<OAuthClientRecord | null>;
  builtInClient: (id: string) => AdapterPayload | undefined;
  alreadyUsed: () => Error;
  clock: Clock;
}

/** The adapter of one oidc-provider model (`kind`), built by typeormAdapter's factory. */
class TypeOrmAdapter implements Adapter {
  constructor(
    private readonly kind: string,
    private readonly context: AdapterContext,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    if (this.kind === 'Client') throw new Error('clients are registered through the API');
    const { artifacts, sweep, clock } = this.context;
    await sweep();
    // The payload's `jti` is the id itself (for tokens and codes: the bearer value), so it is
    // left out and put back from the id on `find`. `consumed_at` is not touched here, so
    // saving an artifact again never clears its used mark.
    const { jti: _id, ...stored } = payload;
    // Saved by a request (a sign-in, an approval, a token issued): where and when, for "my
    // sessions". Left as they were when saved outside one.
    const device = requestDevice();
    await artifacts.upsert(
      {
        kind: this.kind,
        idHash: artifactKey(id),
        payload: JSON.stringify(stored),
        grantId: payload.grantId ?? null,
        uid: payload.uid ?? null,
        clientId: payload.clientId ?? null,
        expiresAt: expiresIn ? new Date(clock.nowMs() + expiresIn * 1000) : null,
        ...(device && { userAgent: device.userAgent, ip: device.ip, lastUsedAt: clock.now() }),
      },
      ['kind', 'idHash'],
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.kind === 'Client') {
      const builtIn = this.context.builtInClient(id);
      if (builtIn) return toProviderRealm(builtIn);
      const record = await this.context.findClient(id);
      return record ? toProviderRealm(this.context.describeClient(record)) : undefined;
    }
    const payload = this.load(
      await this.context.artifacts.findOneBy({ kind: this.kind, idHash: artifactKey(id) }),
    );
    if (payload) payload.jti = id;
    return payload;
  }

  /** Sessions by uid, to compare their account; the session id itself is not stored. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.load(await this.context.artifacts.findOneBy({ kind: this.kind, uid }));
  }

  findByUserCode(): Promise<undefined> {
    // The device flow is not enabled, so there are no user codes.
    return Promise.resolve(undefined);
  }

  /**
   * Marks a code or refresh token used, once: oidc-provider checks `consumed` before calling
   * this, so two requests racing with the same value would both pass that check. The
   * conditional update lets only one of them through; the other is treated as reuse.
   */
  async consume(id: string): Promise<void> {
    const { artifacts, clock, alreadyUsed } = this.context;
    const result = await artifacts.update(
      { kind: this.kind, idHash: artifactKey(id), consumedAt: IsNull() },
      { consumedAt: clock.now() },
    );
    if (result.affected === 0) {
      const record = await artifacts.findOneBy({ kind: this.kind, idHash: artifactKey(id) });
      if (record?.grantId) await artifacts.delete({ grantId: record.grantId });
      throw alreadyUsed();
    }
  }

  async destroy(id: string): Promise<void> {
    await this.context.artifacts.delete({ kind: this.kind, idHash: artifactKey(id) });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // Every model that carries the grant: a reused refresh token or code revokes the chain.
    await this.context.artifacts.delete({ grantId });
  }

  private load(record: OAuthArtifactRecord | null): AdapterPayload | undefined {
    if (!record) return undefined;
    if (record.expiresAt && record.expiresAt.getTime() <= this.context.clock.nowMs()) {
      return undefined;
    }
    const payload = parseForProvider<AdapterPayload>(record.payload);
    if (record.consumedAt) payload.consumed = Math.floor(record.consumedAt.getTime() / 1000);
    return payload;
  }
}

/** Deletes every artifact issued to these clients (their tokens, codes and grants). */
export async function revokeClientArtifacts(
  repo: Repository<OAuthArtifactRecord>,
  clientIds: string[],
): Promise<void> {
  if (clientIds.length) await repo.delete({ clientId: In(clientIds) });
}
