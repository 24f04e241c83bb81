#!/usr/bin/env node
/**
 * The token cache in isolation: CPU and wall time of one request's authentication (the bearer
 * strategy's `authenticate`, in process, no HTTP), with the cache on (TOKEN_CACHE_SIZE=10000)
 * and off (0), interleaved in one process so both see the same machine. A personal access token
 * with every scope; after a warm-up each round authenticates it N times per server.
 *
 *   pnpm --filter @platform/server build && pnpm exec node bench/token-cache.bench.js
 *   BENCH_DATABASE=postgres BENCH_POSTGRES_URL=postgres://… pnpm exec node bench/token-cache.bench.js
 *
 * Knobs: BENCH_REQUESTS (per round and server, default 3000), BENCH_ROUNDS (default 3).
 * Not part of `pnpm bench`: the students list benchmark measures the whole request.
 */
require('@platform/hermetic').enforceForRun();
const path = require('node:path');

const DIST = path.join(__dirname, '..', 'apps', 'server', 'dist');
require(require.resolve('reflect-metadata', { paths: [path.join(DIST, '..')] }));
const { startTestServer } = require(path.join(DIST, 'testing'));
const { BearerStrategy } = require(path.join(DIST, 'auth', 'bearer.strategy'));

const postgres = process.env.BENCH_DATABASE === 'postgres';
const adminUrl = process.env.BENCH_POSTGRES_URL || process.env.TEST_DATABASE_URL;
const requests = Number(process.env.BENCH_REQUESTS || 3000);
const rounds = Number(process.env.BENCH_ROUNDS || 3);

async function start(size) {
  const server = await startTestServer({
    ...(postgres && { postgresAdminUrl: adminUrl }),
    env: { TOKEN_CACHE_SIZE: String(size), WEBHOOK_DISPATCHER: 'false' },
  });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  return { server, bearer: server.app.get(BearerStrategy), header: `Bearer ${token}` };
}

async function measure({ bearer, header }, n) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) {
    const result = await bearer.authenticate({ headers: { authorization: header } });
    if (!result.ok) throw new Error(`refused: ${result.reason}`);
  }
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / n, wallUs: (wallMs * 1000) / n };
}

(async () => {
  if (postgres && !adminUrl) throw new Error('BENCH_DATABASE=postgres needs BENCH_POSTGRES_URL');
  const on = await start(10_000);
  const off = await start(0);
  try {
    await measure(on, requests);
    await measure(off, requests);
    console.log(
      `${postgres ? 'PostgreSQL' : 'SQLite'}: µs per authentication (${requests} a round)`,
    );
    console.log('round   cache on CPU / wall   cache off CPU / wall');
    for (let round = 1; round <= rounds; round += 1) {
      const a = await measure(on, requests);
      const b = await measure(off, requests);
      const f = (m) => `${m.cpuUs.toFixed(0).padStart(6)} / ${m.wallUs.toFixed(0).padStart(5)}`;
      console.log(`${String(round).padStart(5)}   ${f(a)}        ${f(b)}`);
    }
  } finally {
    await on.server.close();
    await off.server.close();
  }
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
