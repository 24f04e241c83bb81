import type { Role } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/**
 * A person (decision 34): the address they sign in with, unique platform-wide, their password,
 * and the links mailed about them. Their memberships are `users` rows.
 */
@Entity({ name: 'accounts' })
export class AccountRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  /** Lower-cased. */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  /** argon2id, in PHC string form (parameters and salt included). */
  @Column({ name: 'password_hash', type: 'varchar', length: 200 })
  passwordHash: string;

  /** SHA-256 of the pending password reset link's token (hex), if one was asked for. */
  @Column({ name: 'password_reset_hash', type: 'varchar', length: 64, nullable: true })
  passwordResetHash?: string | null;

  @Column({ name: 'password_reset_expires_at', ...timestampColumn, nullable: true })
  passwordResetExpiresAt?: Date | null;

  /** An email change waiting for the new address to confirm it, and its link's token hash. */
  @Column({ name: 'pending_email', type: 'varchar', length: 320, nullable: true })
  pendingEmail?: string | null;

  @Column({ name: 'email_change_hash', type: 'varchar', length: 64, nullable: true })
  emailChangeHash?: string | null;

  @Column({ name: 'email_change_expires_at', ...timestampColumn, nullable: true })
  emailChangeExpiresAt?: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}

/**
 * One person's membership of one organization (decision 34): the member every token acting for
 * them names, whose role caps it. Signing in proves the account; a session is one user's.
 */
@Entity({ name: 'users' })
export class UserRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ name: 'account_id', type: 'varchar', length: 32 })
  accountId: string;

  /** The account's, lower-cased, kept equal to it (unique per organization). */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  /** Caps what every token acting for the user may do (`ROLE_SCOPES`). */
  @Column({ type: 'varchar', length: 16 })
  role: Role;

  @Column({ type: 'varchar', length: 200, nullable: true })
  name: string | null;

  /**
   * A copy of the account's, written with it and never read (the migration explains why the
   * column stays); the account's is the one checked.
   */
  @Column({ name: 'password_hash', type: 'varchar', length: 200, select: false })
  passwordHash?: string;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}

@Entity({ name: 'oauth_clients' })
export class OAuthClientRecord {
  /** The `client_id`. */
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  type: 'confidential' | 'public';

  /** SHA-256 of the secret, hex; null for public clients. */
  /** The member who registered it (null: an operator); their role caps its client credentials tokens. */
  @Column({ name: 'user_id', type: 'varchar', length: 32, nullable: true })
  userId: string | null;

  @Column({ name: 'secret_hash', type: 'varchar', length: 64, nullable: true })
  secretHash: string | null;

  @Column({ name: 'redirect_uris', type: 'simple-json' })
  redirectUris: string[];

  /** Space-separated. */
  @Column({ type: 'varchar', length: 1000 })
  scopes: string;

  /** Space-separated. */
  @Column({ name: 'grant_types', type: 'varchar', length: 200 })
  grantTypes: string;

  /** After this the client gets no tokens and its tokens are refused; null: never. */
  @Column({ name: 'expires_at', ...timestampColumn, nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}

/** One oidc-provider model instance (see `adapter.ts`). */
@Entity({ name: 'oauth_artifacts' })
export class OAuthArtifactRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  kind: string;

  @PrimaryColumn({ name: 'id_hash', type: 'varchar', length: 64 })
  idHash: string;

  @Column({ type: 'text' })
  payload: string;

  @Column({ name: 'grant_id', type: 'varchar', length: 64, nullable: true })
  grantId: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  uid: string | null;

  @Column({ name: 'client_id', type: 'varchar', length: 64, nullable: true })
  clientId: string | null;

  @Column({ name: 'expires_at', ...timestampColumn, nullable: true })
  expiresAt: Date | null;

  /** Set when a code or rotated refresh token is used; a second use is then detectable. */
  @Column({ name: 'consumed_at', ...timestampColumn, nullable: true })
  consumedAt: Date | null;

  /** The User-Agent of the request that last saved it ("my sessions" shows it), truncated. */
  @Column({ name: 'user_agent', type: 'varchar', length: 300, nullable: true })
  userAgent: string | null;

  /** The client IP of the request that last saved it. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  ip: string | null;

  /** When a request last saved it: a sign-in, an approval, a token issued or refreshed. */
  @Column({ name: 'last_used_at', ...timestampColumn, nullable: true })
  lastUsedAt: Date | null;
}
