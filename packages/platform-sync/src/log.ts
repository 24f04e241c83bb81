/** Progress lines on stderr: `platform-sync: students: 20,000 rows loaded (41,230 rows/s)`. */
export interface Logger {
  info(message: string): void;
  error(message: string): void;
}

export function stderrLogger(): Logger {
  return {
    info: (message) => process.stderr.write(`platform-sync: ${message}\n`),
    error: (message) => process.stderr.write(`platform-sync: error: ${message}\n`),
  };
}

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatCount(count: number): string {
  return number.format(count);
}

/**
 * Counts something over time and says so at most once per `everyMs` (and when flushed, unless that total was just said):
 * the total and the rate since the meter started.
 */
export class Meter {
  readonly #started = performance.now();
  #lastLine = 0;
  #lastTotal = -1;
  total = 0;

  constructor(
    private readonly log: Logger,
    private readonly describe: (total: number, perSecond: number) => string,
    private readonly everyMs = 1000,
  ) {}

  add(count: number, flush = false): void {
    this.total += count;
    const now = performance.now();
    if (flush ? this.total === this.#lastTotal : now - this.#lastLine < this.everyMs) return;
    this.#lastLine = now;
    this.#lastTotal = this.total;
    this.log.info(this.describe(this.total, this.rate()));
  }

  rate(): number {
    const seconds = (performance.now() - this.#started) / 1000;
    return seconds > 0 ? this.total / seconds : 0;
  }
}
