import { Global, Injectable, Module } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CredentialRevocations, type RevokedCredential } from '../common/credential-revocations';
import { Sql } from '../database/sql';
import { disableOwnedEndpoints } from './endpoint-owner';

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
 * The webhooks module's answer to common's CredentialRevocations port, on its own so that the
 * CLI (which revokes tokens but runs no dispatcher) has it without the rest of WebhooksModule.
 */
@Global()
@Module({
  providers: [{ provide: CredentialRevocations, useClass: DisableOwnedEndpoints }],
  exports: [CredentialRevocations],
})
export class EndpointOwnersModule {}
