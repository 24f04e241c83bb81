// pg-cursor ships no types; the part the export snapshot uses.
declare module 'pg-cursor' {
  export default class Cursor<Row = Record<string, unknown>> {
    constructor(text: string, values?: readonly unknown[]);
    read(rows: number): Promise<Row[]>;
    close(): Promise<void>;
  }
}
