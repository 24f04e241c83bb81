// better-sqlite3 ships no types; the part the mirror uses.
declare module 'better-sqlite3' {
  namespace Database {
    interface Statement {
      readonly reader: boolean;
      all(...values: unknown[]): unknown[];
      run(...values: unknown[]): unknown;
    }
    interface Database {
      readonly inTransaction: boolean;
      prepare(source: string): Statement;
      exec(source: string): this;
      pragma(source: string): unknown;
      close(): void;
    }
  }
  const Database: new (path: string) => Database.Database;
  export default Database;
}
