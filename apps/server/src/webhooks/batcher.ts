/**
 * Collects items added while a write is running and writes them together in the next one.
 * `add` resolves once its item was written (or rejects with the write's error), so callers keep
 * their "done means durable" semantics while the writes are batched.
 */
export class Batcher<T> {
  private pending: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private draining: Promise<void> | undefined;

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  /** Settles once everything added so far was written (or failed). */
  async idle(): Promise<void> {
    await this.draining;
  }

  private async drain(): Promise<void> {
    // Let the other attempts finishing in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, 500);
      try {
        await this.write(batch.map((entry) => entry.item));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.draining = undefined;
  }
}
