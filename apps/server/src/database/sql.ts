import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type DataSource,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
  QueryFailedError,
} from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { ambientTransaction } from './ambient-transaction';
import { type DialectName, SQLITE_STATEMENT_CACHE } from './dialect';

export type { DialectName } from './dialect';

export function dialectOfDataSource(dataSource: DataSource): DialectName {
  return dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
}

/** SQL text with the driver's placeholders, and the values they bind, in order. */
export interface CompiledSql {
  text: string;
  values: unknown[];
}

/** Named parameters: `:name` binds one value, `:...name` a list (for `IN (:...ids)`). */
export type SqlParams = Readonly<Record<string, unknown>>;

type Segment = string | { name: string; spread: boolean };

/** A value a plan binds: a named one, or a list's item (`index` -1: an empty list's NULL). */
type Bind = string | { list: string; index: number };

/**
 * What a text compiles to for one dialect and one length of each of its lists: the text with the
 * driver's placeholders and what each binds, in order. Made once; a call then only gathers values.
 */
interface Plan {
  text: string;
  binds: readonly Bind[];
  /** The distinct names the text uses: `params` must have exactly these. */
  names: ReadonlySet<string>;
}

interface Parsed {
  segments: Segment[];
  /** The text's `:...list` names, in order, once each. */
  lists: readonly string[];
  /** Plans by dialect and list lengths (`sqlite`, `postgres:3`); a few per text. */
  plans: Map<string, Plan>;
}

/**
 * Parsed statements by text. Statements are written as constants (values never go into the
 * text), so the set is small; the bound only guards against a caller that builds text per call.
 */
const parsed = new Map<string, Parsed>();
const PARSED_LIMIT = 2000;
/** Plans kept per text: one per list length seen, so a text of id lists keeps only some. */
const PLANS_PER_TEXT = 32;

/**
 * Splits statement text into literal runs and named parameters. Quoted strings, quoted
 * identifiers and `--` comments are copied as they are; PostgreSQL's `::type` cast is not a
 * parameter. Written here rather than taken from TypeORM: its `escapeQueryWithParameters` is
 * per-driver, re-parses on every call and has no quoting awareness for `:` inside literals.
 */
function parse(text: string): Parsed {
  const cached = parsed.get(text);
  if (cached) return cached;
  const segments: Segment[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const end = closingQuote(text, i, c);
      literal += text.slice(i, end);
      i = end;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      literal += text.slice(i, stop);
      i = stop;
    } else if (c === ':' && text[i + 1] === ':') {
      literal += '::';
      i += 2;
    } else if (c === ':') {
      const match = /^:(\.\.\.)?([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i));
      if (!match) {
        literal += c;
        i += 1;
        continue;
      }
      if (literal) segments.push(literal);
      literal = '';
      segments.push({ name: match[2]!, spread: match[1] !== undefined });
      i += match[0].length;
    } else {
      literal += c;
      i += 1;
    }
  }
  if (literal) segments.push(literal);
  if (parsed.size >= PARSED_LIMIT) parsed.clear();
  const lists = [
    ...new Set(segments.flatMap((s) => (typeof s !== 'string' && s.spread ? [s.name] : []))),
  ];
  const entry: Parsed = { segments, lists, plans: new Map() };
  parsed.set(text, entry);
  return entry;
}

function planOf(
  dialect: DialectName,
  segments: readonly Segment[],
  lengths: ReadonlyMap<string, number>,
): Plan {
  const binds: Bind[] = [];
  const names = new Set<string>();
  // PostgreSQL binds a name (or a list of one length) once, however often the text uses it.
  const positions = new Map<string, number>();
  const placeholder = (key: string, bind: Bind): string => {
    if (dialect !== 'postgres') {
      binds.push(bind);
      return '?';
    }
    let position = positions.get(key);
    if (position === undefined) {
      binds.push(bind);
      position = binds.length;
      positions.set(key, position);
    }
    return `$${position}`;
  };
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'string') {
      text += segment;
      continue;
    }
    const { name } = segment;
    names.add(name);
    if (!segment.spread) {
      text += placeholder(name, name);
      continue;
    }
    const length = lengths.get(name)!;
    text +=
      length === 0
        ? placeholder(`${name}[]`, { list: name, index: -1 })
        : Array.from({ length }, (_, index) =>
            placeholder(`${name}[${length}][${index}]`, { list: name, index }),
          ).join(', ');
  }
  return { text, binds, names };
}

/** The first thing wrong with `params` for `segments`, in the text's order, thrown. */
function refuse(segments: readonly Segment[], params: SqlParams): never {
  for (const segment of segments) {
    if (typeof segment === 'string') continue;
    if (!Object.prototype.hasOwnProperty.call(params, segment.name)) {
      throw new Error(`SQL parameter :${segment.name} has no value`);
    }
    if (segment.spread && !Array.isArray(params[segment.name])) {
      throw new Error(`SQL parameter :...${segment.name} must be an array`);
    }
  }
  const names = new Set(segments.flatMap((s) => (typeof s === 'string' ? [] : [s.name])));
  const unused = Object.keys(params).find((name) => !names.has(name));
  throw new Error(`SQL parameter :${unused} is not used by the statement`);
}

function closingQuote(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote)
        i += 2; // a doubled quote is an escaped one
      else return i + 1;
    } else i += 1;
  }
  throw new Error(`Unterminated ${quote} in SQL: ${text.slice(start, start + 40)}`);
}

/**
 * Turns named parameters into the dialect's placeholders (`$1`… on PostgreSQL, `?` on SQLite).
 * A parameter the text uses but `params` lacks, or one `params` has but the text never uses,
 * is a programming error and throws. An empty list binds a single NULL, so `IN (:...ids)` with
 * no ids matches nothing rather than being a syntax error. A text is planned once per dialect and
 * list lengths, and returns the same text string each time: a list request's statements then cost
 * a lookup and their values (they took ~30 µs of its CPU when each call rebuilt its text), and
 * the SQLite statement cache finds its prepared statement by that string at once.
 */
export function compileSql(
  dialect: DialectName,
  text: string,
  params: SqlParams = {},
): CompiledSql {
  const entry = parse(text);
  let key: string = dialect;
  let lengths: Map<string, number> | undefined;
  if (entry.lists.length > 0) {
    lengths = new Map();
    for (const name of entry.lists) {
      const list = params[name];
      if (!Array.isArray(list)) return refuse(entry.segments, params);
      lengths.set(name, list.length);
      key += `:${list.length}`;
    }
  }
  let plan = entry.plans.get(key);
  if (!plan) {
    if (entry.plans.size >= PLANS_PER_TEXT) entry.plans.clear();
    plan = planOf(dialect, entry.segments, lengths ?? new Map());
    entry.plans.set(key, plan);
  }
  if (Object.keys(params).length !== plan.names.size) return refuse(entry.segments, params);
  const values: unknown[] = new Array(plan.binds.length);
  for (let i = 0; i < plan.binds.length; i++) {
    const bind = plan.binds[i]!;
    if (typeof bind === 'string') {
      if (!Object.prototype.hasOwnProperty.call(params, bind))
        return refuse(entry.segments, params);
      values[i] = params[bind];
    } else {
      values[i] = bind.index < 0 ? null : (params[bind.list] as unknown[])[bind.index];
    }
  }
  return { text: plan.text, values };
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The parts of node-postgres's Pool read past TypeORM (it holds the pool): `Sql.select`, and the
 * token cache's named statement.
 */
export interface PostgresPool {
  query(
    query: string | { name: string; text: string },
    values?: unknown[],
  ): Promise<{ rows: unknown[] }>;
}

/** The parts of better-sqlite3 read past TypeORM (it holds the one connection). */
export interface SqliteStatement {
  all(...values: unknown[]): unknown[];
  pluck(): { get(): unknown };
}
export interface SqliteDatabase {
  readonly inTransaction: boolean;
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
}

/** TypeORM's one query runner on SQLite: what it believes of the connection's transaction. */
export interface SqliteQueryRunnerState {
  isTransactionActive: boolean;
  transactionDepth: number;
}

/**
 * The database as the server's code sees it: which dialect it speaks, statements with named
 * parameters, and table and column names from the entities' metadata. Injected everywhere SQL
 * is written, so the dialect is decided in exactly one place.
 */
@Injectable()
export class Sql {
  readonly dialect: DialectName;
  /** `select`'s prepared statements by text (SQLite). */
  private readonly sqliteStatements = new Map<string, SqliteStatement>();
  /**
   * How far past a list's page its count reads (`LIST_TOTAL_COUNT_AHEAD`; unset, the list's own
   * default). Carried here because every list is built from the `Sql` its service is given.
   */
  readonly listTotalCountAhead?: number;
  /** The same for a list's `q` search (`LIST_SEARCH_COUNT_AHEAD`; never past the above). */
  readonly listSearchCountAhead?: number;
  /** The organizations whose SQLite search scans their rows (`LIST_SEARCH_SCAN_ROWS`). */
  readonly listSearchScanRows?: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    options: {
      listTotalCountAhead?: number;
      listSearchCountAhead?: number;
      listSearchScanRows?: number;
    } = {},
  ) {
    this.dialect = dialectOfDataSource(dataSource);
    if (options.listTotalCountAhead !== undefined)
      this.listTotalCountAhead = options.listTotalCountAhead;
    if (options.listSearchCountAhead !== undefined)
      this.listSearchCountAhead = options.listSearchCountAhead;
    if (options.listSearchScanRows !== undefined)
      this.listSearchScanRows = options.listSearchScanRows;
  }

  compile(text: string, params?: SqlParams): CompiledSql {
    return compileSql(this.dialect, text, params);
  }

  /** Runs one statement on `manager` (a transaction's, or the data source's for a plain read). */
  query<T = Record<string, unknown>>(
    manager: EntityManager,
    text: string,
    params?: SqlParams,
  ): Promise<T[]> {
    const compiled = this.compile(text, params);
    return manager.query<T[]>(compiled.text, compiled.values);
  }

  /**
   * A SELECT outside any transaction, sent straight to the driver: node-postgres's pool, or
   * better-sqlite3's one connection (a statement prepared once per text), the connection TypeORM
   * would use. For the statements every list request runs: TypeORM's query runner around each
   * (a pool checkout, subscriber broadcasts, four awaits) cost more of the request than the
   * statement's own work on SQLite. Same rows as `query`, and a failure is the same
   * QueryFailedError. Not for writes (TypeORM shapes their results), nor inside a transaction.
   */
  async select<T = Record<string, unknown>>(text: string, params?: SqlParams): Promise<T[]> {
    // Inside a request's transaction on PostgreSQL, on its connection (it may read its own rows).
    const ambient = this.dialect === 'postgres' ? ambientTransaction() : undefined;
    if (ambient) return this.query<T>(ambient.manager, text, params);
    const { text: compiled, values } = this.compile(text, params);
    // As TypeORM's better-sqlite3 runner binds them: better-sqlite3 cannot bind a boolean.
    const bound =
      this.dialect === 'postgres'
        ? values
        : values.map((v) => (typeof v === 'boolean' ? Number(v) : v));
    try {
      if (this.dialect === 'postgres') {
        return (await this.postgresPool().query(compiled, bound)).rows as T[];
      }
      return this.sqliteStatement(compiled).all(...bound) as T[];
    } catch (error) {
      // Also a failed pool checkout, which TypeORM would have thrown as it was.
      throw new QueryFailedError(compiled, bound, error as Error);
    }
  }

  /**
   * The driver's own handles, for the few reads on every request's path that skip TypeORM's
   * query runner: node-postgres's pool (PostgreSQL) and better-sqlite3's connection (SQLite).
   * TypeORM keeps them in `driver.master` and `driver.databaseConnection`; this is the one place
   * that reads them.
   */
  postgresPool(): PostgresPool {
    return (this.dataSource.driver as unknown as { master: PostgresPool }).master;
  }

  sqliteDatabase(): SqliteDatabase {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteDatabase })
      .databaseConnection;
  }

  /** The better-sqlite3 driver's single query runner (`driver.createQueryRunner()` returns it). */
  sqliteQueryRunner(): SqliteQueryRunnerState {
    return this.dataSource.driver.createQueryRunner('master') as unknown as SqliteQueryRunnerState;
  }

  private sqliteStatement(text: string): SqliteStatement {
    let statement = this.sqliteStatements.get(text);
    if (!statement) {
      statement = this.sqliteDatabase().prepare(text);
      // One text per list shape (filters, sort, the length of an `in` list): the oldest goes
      // first past SQLITE_STATEMENT_CACHE.
      if (this.sqliteStatements.size >= SQLITE_STATEMENT_CACHE) {
        const oldest = this.sqliteStatements.keys().next().value;
        if (oldest !== undefined) this.sqliteStatements.delete(oldest);
      }
      this.sqliteStatements.set(text, statement);
    }
    return statement;
  }

  /**
   * The row-locking suffix of a SELECT that picks work: `FOR UPDATE [OF alias] [SKIP LOCKED]` on
   * PostgreSQL; nothing on SQLite, whose writers are serialised by the transaction runner.
   */
  lockRows(options: { of?: string; skipLocked?: boolean } = {}): string {
    if (this.dialect !== 'postgres') return '';
    return ` FOR UPDATE${options.of ? ` OF ${options.of}` : ''}${options.skipLocked ? ' SKIP LOCKED' : ''}`;
  }

  /** The quoted table name of an entity. */
  table(entity: EntityTarget<ObjectLiteral>): string {
    return quoteIdentifier(this.dataSource.getMetadata(entity).tableName);
  }

  /** The quoted column name of an entity's property; throws on a typo (a programming error). */
  column(entity: EntityTarget<ObjectLiteral>, property: string): string {
    return quoteIdentifier(this.columnOf(entity, property).databaseName);
  }

  /** A value as the driver binds it for an entity's column (e.g. a Date as UTC text on SQLite). */
  bind(entity: EntityTarget<ObjectLiteral>, property: string, value: unknown): unknown {
    return this.dataSource.driver.preparePersistentValue(
      value,
      this.columnOf(entity, property),
    ) as unknown;
  }

  /** A raw column value from a hand-written SELECT as the entity holds it (e.g. a `Date`). */
  read(entity: EntityTarget<ObjectLiteral>, property: string, value: unknown): unknown {
    return this.dataSource.driver.prepareHydratedValue(
      value,
      this.columnOf(entity, property),
    ) as unknown;
  }

  /**
   * Column metadata by entity and property, looked up once: `bind` and `read` run on every
   * request (the token lookup reads each of its columns through `read`).
   */
  private readonly columns = new Map<EntityTarget<ObjectLiteral>, Map<string, ColumnMetadata>>();

  private columnOf(entity: EntityTarget<ObjectLiteral>, property: string): ColumnMetadata {
    let ofEntity = this.columns.get(entity);
    if (!ofEntity) this.columns.set(entity, (ofEntity = new Map<string, ColumnMetadata>()));
    let column = ofEntity.get(property);
    if (!column) {
      const metadata = this.dataSource.getMetadata(entity);
      const found = metadata.findColumnWithPropertyName(property);
      if (!found) throw new Error(`${metadata.name} has no property '${property}'`);
      ofEntity.set(property, (column = found));
    }
    return column;
  }
}
