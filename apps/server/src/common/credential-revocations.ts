import type { WebhookOwnerType } from '@platform/contract';
import type { EntityManager } from 'typeorm';

/** A credential that was just revoked or deleted: a personal access token or an OAuth client. */
export interface RevokedCredential {
  type: WebhookOwnerType;
  id: string;
}

/**
 * What else must end, in the revoking transaction, when a credential ends: the webhook endpoints
 * bound to it are disabled at once (api.md, "Delegation"). A port, provided by auth's
 * MemberOwnedModule, so that the services that revoke (tokens, OAuth clients, members) need not
 * know what a credential owns, nor import the modules that own it.
 */
export abstract class CredentialRevocations {
  abstract revoked(manager: EntityManager, credential: RevokedCredential, at: Date): Promise<void>;
}
