'use strict';
/**
 * The columns of `students` as the contract declares them, for the benchmarks' bulk seeds: the
 * fields of `StudentSchema` (the API's field names are the table's column names), `object` aside,
 * and `organization_id`, which the API does not show. A seed gives a value (or SQL expression) per
 * column; a declared field it leaves out is NULL when the schema lets it be null, and an error
 * otherwise, so a new required field fails the seed by name instead of being silently skipped.
 */
const path = require('node:path');
const { StudentSchema } = require('@platform/contract');

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The columns in table order: `id`, `organization_id`, then the other declared fields. */
function studentColumns(schema = StudentSchema) {
  const declared = Object.keys(schema.shape).filter((field) => field !== 'object');
  return ['id', 'organization_id', ...declared.filter((field) => field !== 'id')];
}

/** Whether a missing column may be NULL: the schema's field is nullable or optional. */
function nullable(schema, column) {
  const field = schema.shape[column];
  return Boolean(field && (field.isNullable() || field.isOptional()));
}

/**
 * `[column, value]` for every column in studentColumns() order: `values[column]`, or `empty` for
 * a nullable column `values` leaves out. Throws on a required column left out and on a key that
 * is no column, naming `file` (the seed to add the value in).
 */
function studentEntries(values, { file, empty, schema = StudentSchema }) {
  const columns = studentColumns(schema);
  const where = file ? path.relative(REPO_ROOT, file) : 'the seed';
  const unknown = Object.keys(values).filter((key) => !columns.includes(key));
  if (unknown.length > 0)
    throw new Error(
      `${where}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a column of ` +
        `students (the contract's StudentSchema fields and organization_id)`,
    );
  return columns.map((column) => {
    if (Object.hasOwn(values, column)) return [column, values[column]];
    if (nullable(schema, column)) return [column, empty];
    throw new Error(
      `${where}: students.${column} is not nullable in StudentSchema and has no value here: ` +
        `add one for ${column} in ${where}`,
    );
  });
}

/** A row as an object keyed by column, in studentColumns() order; omitted nullable ones null. */
function studentRecord(values, options) {
  return Object.fromEntries(studentEntries(values, { ...options, empty: null }));
}

/**
 * The two halves of an `INSERT INTO students (${columns}) SELECT ${select}` from one SQL
 * expression per column (omitted nullable ones NULL).
 */
function studentInsert(expressions, options) {
  const entries = studentEntries(expressions, { ...options, empty: 'NULL' });
  return {
    columns: entries.map(([column]) => column).join(', '),
    select: entries.map(([, expression]) => expression).join(', '),
  };
}

module.exports = { studentColumns, studentEntries, studentInsert, studentRecord };
