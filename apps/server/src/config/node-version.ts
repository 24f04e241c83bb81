import { ConfigError } from './env';

/** The Node major the server is built, tested and shipped on (.nvmrc, the Dockerfile). */
export const REQUIRED_NODE_MAJOR = 24;

/**
 * Refuses an older Node before anything loads. Started directly by an older `node` (not through
 * pnpm, whose scripts run the workspace's Node 24), the server would otherwise fail later on
 * better-sqlite3, compiled for Node 24, with an ABI error that names neither cause nor fix.
 */
export function assertSupportedNode(version: string = process.versions.node): void {
  const major = Number(version.split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return;
  throw new ConfigError(
    `The Platform API server needs Node ${REQUIRED_NODE_MAJOR}+, and this is Node ${version}. ` +
      'Start it through pnpm (`pnpm start`, `pnpm platform …`), which runs the Node 24 that ' +
      '`pnpm install` provides, or install Node 24 (`nvm install` reads .nvmrc).',
  );
}
