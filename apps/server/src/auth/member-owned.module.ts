import { Global, Injectable, Module } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CredentialRevocations, type RevokedCredential } from '../common/credential-revocations';
import { Sql } from '../database/sql';
import { disableOwnedEndpoints } from './member-owned';

/** A revoked credential's endpoints are disabled in the revoking transaction. */
@Injectable()
class DisableOwnedEndpoints extends CredentialRevocations {
  constructor(private readonly sql: Sql) {
    super();
  }

  revoked(manager: EntityManager, credential: RevokedCredential, at: Date): Promise<void> {
    return disableOwnedEndpoints(this.sql, manager, credential, at);
  }
}

/**
 * The answer to common's CredentialRevocations port for what members own (member-owned.ts): a
 * module of its own, apart from AuthModule and WebhooksModule, so that the CLI (which revokes
 * tokens but runs no dispatcher) has it too. Download links need nothing here: each use checks
 * their owner again.
 */
@Global()
@Module({
  providers: [{ provide: CredentialRevocations, useClass: DisableOwnedEndpoints }],
  exports: [CredentialRevocations],
})
export class MemberOwnedModule {}
