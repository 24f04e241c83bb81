'use strict';
/**
 * The baseline for the students-list benchmark: the least a Node.js process can do to answer
 * `GET /v1/students?per_page=25&page=N` from the same database as the real server: the same
 * SQLite file (better-sqlite3) or the same PostgreSQL database (node-postgres, `pg`).
 *
 * Per request it does the same database and serialization work as the server (the same one
 * statement: the deferred-join page carrying the total from the organization's tally row, text
 * and values checked against the server's; rows mapped to the public JSON shape with ISO timestamps,
 * pagination meta and links, a `Link` header) and nothing else: no framework, no auth, no rate
 * limit, no validation library, no logging. The gap between the two is what the server's stack
 * costs.
 *
 * Configured by the benchmark through the environment:
 *   BARE_DATABASE         path of the SQLite file, or
 *   BARE_DATABASE_URL     postgres://… of the server's PostgreSQL database (one of the two)
 *   BARE_ORGANIZATION_ID  whose students to list (required)
 *   PORT, HOST            where to listen (default 3001 on 127.0.0.1)
 */
const http = require('node:http');
const { hash } = require('node:crypto');
const { encodeListCursorPayload, StudentSchema } = require('@platform/contract');
const {
  pageWithTotalText,
  pageWithTotalValues,
  tallyStatement,
  totalOf,
} = require('./lib/bare-list-sql');

const DATABASE_URL = process.env.BARE_DATABASE_URL;
const DATABASE = DATABASE_URL ? undefined : required('BARE_DATABASE');
const ORGANIZATION_ID = required('BARE_ORGANIZATION_ID');
const PORT = Number(process.env.PORT ?? 3001);
const HOST = process.env.HOST ?? '127.0.0.1';

const LIMITS = { page: { min: 1, max: 1_000_000 }, perPage: { min: 1, max: 100 } };

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`bare-students-server: ${name} must be set`);
    process.exit(2);
  }
  return value;
}

const store = DATABASE_URL ? postgresStore(DATABASE_URL) : sqliteStore(DATABASE);

/**
 * SQLite: the server's statement (lib/bare-list-sql.js, checked against the server's before the
 * benchmark measures), prepared once, on the same file with the server's pragmas.
 */
function sqliteStore(file) {
  const Database = require('better-sqlite3');
  // WAL was set when the file was created.
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const pageStatement = db.prepare(pageWithTotalText('sqlite'));
  const tally = tallyStatement('sqlite', ORGANIZATION_ID);
  const tallyRead = db.prepare(tally.text).pluck();
  return {
    page(organizationId, limit, offset) {
      const rows = pageStatement.all(
        ...pageWithTotalValues('sqlite', organizationId, limit, offset),
      );
      return { total: totalOf(rows, offset, () => Number(tallyRead.get(...tally.values))), rows };
    },
    close: () => db.close(),
  };
}

/**
 * PostgreSQL: the server's statement, text as it sends it, on a pool of the server's size (10).
 * A plain parameterized query, as node-postgres is usually used (and as the server sends it): an
 * unnamed statement, which PostgreSQL parses and plans on every request.
 */
function postgresStore(url) {
  const { Pool } = require('pg');
  const pool = new Pool({ connectionString: url, max: 10 });
  const pageText = pageWithTotalText('postgres');
  const tally = tallyStatement('postgres', ORGANIZATION_ID);
  return {
    async page(organizationId, limit, offset) {
      const { rows } = await pool.query(
        pageText,
        pageWithTotalValues('postgres', organizationId, limit, offset),
      );
      // SUM(bigint) is a numeric, which node-postgres returns as a string; timestamptz is a Date.
      const total = await totalOf(rows, offset, async () => {
        const counted = await pool.query(tally.text, tally.values);
        return Number(counted.rows[0].total);
      });
      return { total, rows };
    },
    close: () => pool.end(),
  };
}

const SQLITE_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;
/**
 * SQLite stores `YYYY-MM-DD HH:MM:SS.sss` in UTC and node-postgres gives a Date; the API speaks
 * RFC 3339 (as TypeORM + toIso do).
 */
function iso(value) {
  if (value instanceof Date) return value.toISOString();
  // The stored text is already RFC 3339 but for its separator and zone: rewritten, not parsed
  // (as the server's rowMapper does).
  if (SQLITE_TIMESTAMP.test(value)) return `${value.slice(0, 10)}T${value.slice(11)}Z`;
  return new Date(`${value.replace(' ', 'T')}Z`).toISOString();
}
/**
 * A student row as the API's resource, its fields those the contract declares (`StudentSchema`),
 * in its order. Compiled once into one object literal, as a hand-written mapper would be, so the
 * baseline pays nothing for reading the declaration.
 */
const toStudentResource = new Function(
  'iso',
  `return (row) => ({ ${Object.keys(StudentSchema.shape)
    .map((field) =>
      field === 'object'
        ? `object: 'student'`
        : field.endsWith('_at')
          ? `${field}: iso(row.${field})`
          : `${field}: row.${field}`,
    )
    .join(', ')} });`,
)(iso);

/**
 * The cursor of the page after a full one, as the server's list-cursor.ts builds it: the last
 * row's created_at and id (the default sort), tagged to the organization and collection.
 */
function nextCursor(page, last) {
  const encoded = encodeListCursorPayload({
    page: page + 1,
    sort: '-created_at',
    values: [iso(last.created_at)],
    id: last.id,
  });
  const tag = hash('sha256', `list-cursor\0${ORGANIZATION_ID}\0students\0${encoded}`, 'base64url');
  return `${encoded}.${tag.slice(0, 10)}`;
}

/**
 * Same links as the server's pageEnvelope(): every query parameter kept, `page` replaced, and
 * `next` the cursor of a full page.
 */
function pageEnvelope(base, search, page, perPage, total, totalExact, cursor) {
  const totalPages = Math.ceil(total / perPage);
  const lastPage = Math.max(totalPages, 1);
  const link = (n) => {
    const params = new URLSearchParams(search);
    params.set('page', String(n));
    return `${base}?${params.toString()}`;
  };
  const cursorLink = () => {
    const params = new URLSearchParams(search);
    params.delete('page');
    params.set('cursor', cursor);
    return `${base}?${params.toString()}`;
  };
  return {
    meta: { page, per_page: perPage, total, total_pages: totalPages, total_exact: totalExact },
    links: {
      self: link(page),
      first: link(1),
      prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
      next: page < totalPages ? (cursor ? cursorLink() : link(page + 1)) : null,
      last: link(lastPage),
    },
  };
}

function linkHeader(links) {
  const parts = [`<${links.first}>; rel="first"`];
  if (links.prev) parts.push(`<${links.prev}>; rel="prev"`);
  if (links.next) parts.push(`<${links.next}>; rel="next"`);
  parts.push(`<${links.last}>; rel="last"`);
  return parts.join(', ');
}

function integerParam(params, name, fallback, { min, max }) {
  const raw = params.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,16}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= min && n <= max ? n : undefined;
}

function send(res, status, body, headers = {}) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
    ...headers,
  });
  res.end(json);
}

/** Answers the list; returns a promise on PostgreSQL, nothing on SQLite (no await: no extra tick). */
function listStudents(req, res, path, search) {
  const params = new URLSearchParams(search);
  const page = integerParam(params, 'page', 1, LIMITS.page);
  const perPage = integerParam(params, 'per_page', 25, LIMITS.perPage);
  if (page === undefined || perPage === undefined) {
    send(res, 400, { title: 'page and per_page must be integers in range' });
    return undefined;
  }
  const offset = (page - 1) * perPage;
  const respond = ({ total, rows }) => {
    const envelope = pageEnvelope(
      `http://${req.headers.host ?? 'localhost'}${path}`,
      search,
      page,
      perPage,
      total,
      true,
      rows.length === perPage ? nextCursor(page, rows[rows.length - 1]) : undefined,
    );
    send(
      res,
      200,
      { data: rows.map(toStudentResource), ...envelope },
      { Link: linkHeader(envelope.links) },
    );
  };
  const found = store.page(ORGANIZATION_ID, perPage, offset);
  if (typeof found.then === 'function') return found.then(respond);
  respond(found);
  return undefined;
}

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  const search = q === -1 ? '' : req.url.slice(q + 1);
  const fail = (error) => {
    console.error(error);
    send(res, 500, { title: 'Internal Server Error' });
  };
  try {
    if (req.method === 'GET' && path === '/v1/students')
      listStudents(req, res, path, search)?.catch(fail);
    else if (req.method === 'GET' && path === '/health/ready') send(res, 200, { status: 'ok' });
    else send(res, 404, { title: 'Not Found' });
  } catch (error) {
    fail(error);
  }
});

server.listen(PORT, HOST, () => {
  console.log(`bare students server listening on http://${HOST}:${server.address().port}`);
});

// Exit normally (not by signal) so `--cpu-prof` can write its profile.
function shutdown() {
  server.close();
  server.closeAllConnections();
  Promise.resolve(store.close()).finally(() => process.exit(0));
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
// Started with an IPC channel by the benchmark: never outlive it, even if it is killed hard.
process.on('disconnect', shutdown);
