export const API_VERSION = 'v1';
/** Every resource is served under both prefixes, by the same handlers. */
export const API_PREFIXES = ['/v1', '/api/v1'] as const;
