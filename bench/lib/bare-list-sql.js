'use strict';
const { studentColumns } = require('./student-columns');
/**
 * The statements the list benchmark's bare baseline (bare-students-server.js) sends: written out
 * here as plain text, and checked by students-list.bench.js against what the server's own list
 * code compiles for the same request (`studentListStatements` of @platform/server/testing), text
 * and values, before anything is measured. So the baseline cannot drift from the server's SQL.
 *
 * The unfiltered students list's total comes from the organization's tally row
 * (apps/server/src/database/list-tallies.ts), read in the page's own statement as an uncorrelated
 * subquery (`__total` on each row); a page past the end has no row to carry it, and then the
 * tally is read alone.
 */

// The contract's fields as columns (student-columns.js), so a field the API gains is read here too.
const COLUMNS = studentColumns();

/** SQLite binds `?` in order; PostgreSQL numbers them, a value used twice bound once (as the server's compileSql does). */
function placeholders(dialect) {
  return dialect === 'postgres'
    ? { org: '$1', collection: '$2', field: '$3', value: '$4', limit: '$5', offset: '$6' }
    : { org: '?', collection: '?', field: '?', value: '?', limit: '?', offset: '?' };
}

function tallyText(p) {
  return (
    `SELECT COALESCE(SUM(n), 0) AS total FROM "list_tallies" WHERE organization_id = ${p.org} ` +
    `AND collection = ${p.collection} AND field = ${p.field} AND value IN (${p.value})`
  );
}

const TALLY_VALUES = (organizationId) => [organizationId, 'students', '', ''];

/** The tally read alone: a page past the end. */
function tallyStatement(dialect, organizationId) {
  return { text: tallyText(placeholders(dialect)), values: TALLY_VALUES(organizationId) };
}

/** The text of one page of the organization's students, newest first, carrying the total as `__total`. */
function pageWithTotalText(dialect) {
  const p = placeholders(dialect);
  const column = (name) => `"students"."${name}"`;
  const order = `${column('created_at')} DESC, ${column('id')} DESC`;
  return (
    `SELECT (${tallyText(p)}) AS "__total", ${COLUMNS.map((c) => `"${c}"`).join(', ')} ` +
    `FROM "students" WHERE ${column('id')} IN (SELECT ${column('id')} FROM "students" ` +
    `WHERE ${column('organization_id')} = ${p.org} ORDER BY ${order} LIMIT ${p.limit} OFFSET ${p.offset}) ` +
    `ORDER BY ${order}`
  );
}

/** Its values, per request (the text is prepared once). */
function pageWithTotalValues(dialect, organizationId, limit, offset) {
  return dialect === 'postgres'
    ? [...TALLY_VALUES(organizationId), limit, offset]
    : [...TALLY_VALUES(organizationId), organizationId, limit, offset];
}

function pageWithTotalStatement(dialect, organizationId, limit, offset) {
  return {
    text: pageWithTotalText(dialect),
    values: pageWithTotalValues(dialect, organizationId, limit, offset),
  };
}

/**
 * The list's total from the page's rows, as the server's list takes it: the `__total` the first
 * row carries; an empty first page means an empty list; past the end, `readTally()`.
 */
function totalOf(rows, offset, readTally) {
  if (rows.length > 0) return Number(rows[0].__total);
  return offset === 0 ? 0 : readTally();
}

module.exports = {
  pageWithTotalStatement,
  pageWithTotalText,
  pageWithTotalValues,
  tallyStatement,
  totalOf,
};
