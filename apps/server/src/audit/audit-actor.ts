import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Principal } from '../common/principal';
import { asPlatformRequest, type PlatformRequest } from '../common/http-context';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';

/** Who made a change over the API: the credential, the user it acts for, and the client IP. */
export interface ApiAuditActor {
  kind: 'personal_access_token' | 'oauth_access_token';
  organizationId: string;
  /** The personal access token id, or the OAuth client id. */
  credentialId: string;
  userId: string | null;
  ip: string | null;
}

/** An operator with shell access (`pnpm platform …`): no credential, no IP. */
export interface OperatorAuditActor {
  kind: 'operator';
}

/** Someone accepting an invitation through its one-time link: the link is the credential. */
export interface InvitationAuditActor {
  kind: 'invitation';
  organizationId: string;
  /** The invitation's id. */
  credentialId: string;
  /** The member the invitation made. */
  userId: string;
  ip: string | null;
}

/** A member at the sign-in pages (approving an app, signing out): no credential of theirs yet. */
export interface SignInAuditActor {
  kind: 'sign_in';
  organizationId: string;
  /** The OAuth client the pages act for (the app being approved, or the portal). */
  credentialId: string;
  userId: string;
  ip: string | null;
}

/** An OAuth client calling the authorization server (revoking a token, RFC 7009). */
export interface OAuthClientAuditActor {
  kind: 'oauth_client';
  organizationId: string;
  credentialId: string;
  /** The member the revoked token acted for, if any. */
  userId: string | null;
  ip: string | null;
}

export type AuditActor =
  | ApiAuditActor
  | OperatorAuditActor
  | InvitationAuditActor
  | SignInAuditActor
  | OAuthClientAuditActor;

export const OPERATOR: OperatorAuditActor = { kind: 'operator' };

export function auditActorOfPrincipal(principal: Principal, ip: string | undefined): ApiAuditActor {
  // A personal access token may act for a user too (its owner) once members exist.
  const userId = (principal as { userId?: string | null }).userId ?? null;
  return {
    kind: principal.kind,
    organizationId: principal.organizationId,
    credentialId:
      principal.kind === 'personal_access_token' ? principal.tokenId : principal.clientId,
    userId,
    // `req.ip` follows Express's `trust proxy` (TRUST_PROXY): the forwarded client only behind
    // a trusted proxy, so a caller cannot write another IP into the log with a header.
    ip: ip ? normalizeIp(ip) : null,
  };
}

/** The actor of an authenticated API request. */
export function auditActorOf(req: PlatformRequest): ApiAuditActor {
  if (!req.principal) throw new Error('auditActorOf used on a request without a principal');
  return auditActorOfPrincipal(req.principal, req.ip);
}

/** The authenticated caller as an audit actor. Only on contract routes (the guards ensure one). */
export const CurrentAuditActor = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiAuditActor =>
    auditActorOf(asPlatformRequest(context.switchToHttp().getRequest())),
);
