'use strict';
/**
 * The students-list benchmark's checks before any load (students-list.bench.js): every target
 * answers a full page, and the bare baseline answers the server's bodies with the server's SQL.
 */
const { isDeepStrictEqual } = require('node:util');
const { BenchError } = require('./bench-error');
const { pageWithTotalStatement, tallyStatement } = require('./bare-list-sql');
const { STUDENTS, PER_PAGE, PAGES, pageUrl } = require('./list-config');

/** One request before the load: must be a 200 with a full page of the seeded organization. */
async function sample(target, page) {
  const url = pageUrl(target.base, page);
  const res = await fetch(url, { headers: target.headers });
  const text = await res.text();
  if (res.status !== 200) {
    throw new BenchError(
      `${target.name} page ${page}: expected 200, got ${res.status}: ${text.slice(0, 500)}`,
    );
  }
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BenchError(
      `${target.name} page ${page}: response is not JSON: ${text.slice(0, 200)}`,
    );
  }
  if (!Array.isArray(body.data) || body.data.length !== PER_PAGE) {
    throw new BenchError(
      `${target.name} page ${page}: expected ${PER_PAGE} items, got ${body.data?.length}`,
    );
  }
  if (body.meta?.page !== page || body.meta?.total !== STUDENTS) {
    throw new BenchError(
      `${target.name} page ${page}: unexpected meta ${JSON.stringify(body.meta)}`,
    );
  }
  return { body, bytes: Buffer.byteLength(text) };
}

/** The baseline must answer exactly what the server answers, or it is not a baseline. */
function assertSameBody(server, bare, page) {
  const strip = (body) => ({
    ...body,
    links: Object.fromEntries(
      Object.entries(body.links).map(([k, v]) => [k, v && v.replace(/^https?:\/\/[^/]+/, '')]),
    ),
  });
  const a = JSON.stringify(strip(server));
  const b = JSON.stringify(strip(bare));
  if (a !== b) {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    throw new BenchError(
      `page ${page}: the baseline's body differs from the server's at character ${i}:\n` +
        `  server: …${a.slice(Math.max(0, i - 80), i + 80)}…\n  bare:   …${b.slice(Math.max(0, i - 80), i + 80)}…`,
    );
  }
}

/**
 * The baseline must send the server's SQL, or it is not measuring the same work: for each page,
 * its statements (lib/bare-list-sql.js) must be, text and values, what the server's own list code
 * compiles for that request on this database (`studentListStatements`). The page past the end's
 * tally read is compared too, though these pages never need it.
 */
async function assertSameSql(database, organizationId) {
  const { studentListStatements } = require('@platform/server/testing');
  const dialect = database.url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const same = (a, b) => a && a.text === b.text && isDeepStrictEqual(a.values, b.values);
  for (const page of PAGES) {
    const server = await studentListStatements(database.url, organizationId, {
      per_page: String(PER_PAGE),
      page: String(page),
    });
    const offset = (page - 1) * PER_PAGE;
    const pairs = [
      [
        'page',
        server.pageWithTotal,
        pageWithTotalStatement(dialect, organizationId, PER_PAGE, offset),
      ],
      ['tally', server.count, tallyStatement(dialect, organizationId)],
    ];
    for (const [what, ours, bare] of pairs) {
      if (!same(ours, bare)) {
        throw new BenchError(
          `page ${page}: the baseline's ${what} statement is not the server's:\n` +
            `  server: ${JSON.stringify(ours)}\n  bare:   ${JSON.stringify(bare)}`,
        );
      }
    }
  }
}

/** The baseline's bodies and statements are the server's; the response sizes, per page. */
async function checkSamples(log, targets, database, organizationId) {
  const bytes = {};
  for (const page of PAGES) {
    const s = await sample(targets.server, page);
    const b = await sample(targets.bare, page);
    assertSameBody(s.body, b.body, page);
    bytes[page] = { server: s.bytes, bare: b.bytes };
  }
  await assertSameSql(database, organizationId);
  log(
    `Sample responses: 200 with ${PER_PAGE} items on pages ${PAGES.join(' and ')}; the baseline's bodies equal the server's, and so do its statements.`,
  );
  log();
  return bytes;
}

module.exports = { checkSamples };
