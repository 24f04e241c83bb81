// better-sqlite3 ships no types; the part the export snapshot's reader connection uses.
declare module 'better-sqlite3' {
  namespace Database {
    interface Statement {
      readonly reader: boolean;
      all(...values: unknown[]): unknown[];
      get(...values: unknown[]): unknown;
      run(...values: unknown[]): unknown;
      iterate(...values: unknown[]): IterableIterator<unknown>;
    }
    interface Database {
      prepare(source: string): Statement;
      exec(source: string): this;
      pragma(source: string): unknown;
      close(): void;
    }
  }
  const Database: new (
    path: string,
    options?: { readonly?: boolean; fileMustExist?: boolean },
  ) => Database.Database;
  export default Database;
}
