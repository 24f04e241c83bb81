/**
 * The one place that lists what each module brings to the database (its entities and the
 * migrations it owns); `dataSourceOptions(db, APP_SCHEMA)` turns it into the connection. The
 * migrations run in timestamp order whatever the order here.
 */
import { AUDIT_SCHEMA } from './audit/audit.schema';
import { AUTH_SCHEMA } from './auth/auth.schema';
import type { ModuleSchema } from './database/module-schema';
import { EVENTS_SCHEMA } from './events/events.schema';
import { EXPORTS_SCHEMA } from './exports/exports.schema';
import { IMPORTS_SCHEMA } from './imports/imports.schema';
import { IDEMPOTENCY_SCHEMA } from './idempotency/idempotency.schema';
import { MAIL_SCHEMA } from './mail/mail.schema';
import { MEMBERS_SCHEMA } from './members/members.schema';
import { bulkLoadTalliesMigration } from './migrations/1769400000000-bulk-load-tallies';
import { credentialSearchMigration } from './migrations/1767047400000-credential-search';
import { domainMigration } from './migrations/1763900000000-domain';
import { initialMigration } from './migrations/1763800000000-initial';
import { listTalliesMigration } from './migrations/1766500000000-list-tallies';
import { searchIndexMigration } from './migrations/1766000000000-search-index';
import { OAUTH_SCHEMA } from './oauth/oauth.schema';
import { ORGANIZATIONS_SCHEMA } from './organizations/organizations.schema';
import { REQUEST_LOGS_SCHEMA } from './request-logs/request-logs.schema';
import { SANDBOXES_SCHEMA } from './sandboxes/sandboxes.schema';
import { RESOURCE_SCHEMAS } from './resources';
import { WEBHOOKS_SCHEMA } from './webhooks/webhooks.schema';

/**
 * The first migrations made the tables of several modules at once (and the search index spans
 * four); they stay whole here, under the names already recorded in existing databases. The list
 * totals' tallies span the domain's collections too, and the credentials' search index spans the
 * auth, members, OAuth and webhooks modules.
 */
const SHARED_HISTORY: ModuleSchema = {
  entities: [],
  migrations: [
    initialMigration,
    domainMigration,
    searchIndexMigration,
    listTalliesMigration,
    credentialSearchMigration,
    bulkLoadTalliesMigration,
  ],
};

export const APP_SCHEMA: readonly ModuleSchema[] = [
  SHARED_HISTORY,
  ORGANIZATIONS_SCHEMA,
  AUTH_SCHEMA,
  // The resources' (resources.ts).
  ...RESOURCE_SCHEMAS,
  EVENTS_SCHEMA,
  IDEMPOTENCY_SCHEMA,
  WEBHOOKS_SCHEMA,
  OAUTH_SCHEMA,
  AUDIT_SCHEMA,
  MEMBERS_SCHEMA,
  EXPORTS_SCHEMA,
  IMPORTS_SCHEMA,
  REQUEST_LOGS_SCHEMA,
  MAIL_SCHEMA,
  SANDBOXES_SCHEMA,
];
