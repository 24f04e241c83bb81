import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row whose `version` the database's own triggers bump whenever a write could change what a
 * token lookup returns (see migrations/1766400000000-auth-version.ts). The token cache reads it
 * before each request and drops every entry stored under another version.
 */
@Entity({ name: 'auth_version' })
export class AuthVersionRecord {
  @PrimaryColumn({ type: 'integer' })
  id: number;

  /** A counter; only compared for equality (PostgreSQL's driver reads a bigint as a string). */
  @Column({ type: 'bigint' })
  version: string;
}
