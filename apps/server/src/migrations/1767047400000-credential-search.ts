import { dropSearchIndexStatements, searchIndexStatements } from '../database/collection-indexes';
import { statementsMigration } from '../database/migration';

/**
 * Trigram indexes behind `q` on the lists of the organization's credentials and people (tokens,
 * members, OAuth clients, webhook endpoints, invitations), as the search-index migration built
 * them for the domain's collections. The columns are the `search` fields the contract declared
 * when this was released, frozen here (a later change needs a migration of its own).
 */
export const CREDENTIAL_SEARCHABLE: Record<string, readonly string[]> = {
  personal_access_tokens: ['name'],
  users: ['name', 'email'],
  oauth_clients: ['name'],
  webhook_endpoints: ['url', 'description'],
  invitations: ['email'],
};

const tables = Object.entries(CREDENTIAL_SEARCHABLE);

export const credentialSearchMigration = statementsMigration(
  'CredentialSearch1767047400000',
  (_types, dialect) => [
    ...(dialect === 'postgres' ? ['CREATE EXTENSION IF NOT EXISTS pg_trgm'] : []),
    ...tables.flatMap(([t, columns]) => searchIndexStatements(dialect, t, columns)),
  ],
  (_types, dialect) =>
    tables.flatMap(([t, columns]) => dropSearchIndexStatements(dialect, t, columns)),
);
